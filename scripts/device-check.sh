#!/usr/bin/env bash
# CUDA backend check on the GPU machine (the device tool's H100 or H200: the doctor's GPU line names which), in one call of a few minutes.
# Steps run cheapest and most informative first, each under its own timeout, and the whole
# script within BUDGET seconds, so a slow step costs only the steps after it. They run in this
# order: 1 (every kind's doctor lines), then PBF's 1b–8, ink's 4i–4m, the pool's 4p–4r and the
# particles' 4s–4u (PARTS picks kinds; the doctor always runs):
#
#   step                                              est. s  timeout  why this place
#   1. doctor, FLUIDLAB_CUDA_SYNC_CHECK=1                 30      120  driver, GPU, kernels (sm_90
#      (parity one frame + 200 frames, 20 restarts,                    cubin: no JIT), restart leak,
#      parity: foam, EGL devices, CUDA–GL interop;                     parity, interop; every launch
#      ink: its kernels, every stage × 4 configs                       synchronised, so a fault
#      and 20 frames against the CPU; multigrid:                       names its kernel
#      stages + 20 frames × open/closed box × tail
#      in one block or not; painting obstacles;
#      a disc moved (closed, mirrored, masks);
#      pool: its kernels, 4 stages and the
#      statistics × 7 configurations, 30 frames,
#      a same-size restart (30 + 30 frames × 7),
#      a whole pool's held_bytes (48², 130²);
#      particles: every stage, the bodies' panel
#      statistics: body_stats, the frame's end
#      (reduce_fountain on planted NaN/∞ states),
#      live edits (basin nodes, max particles,
#      a cloth, its shear springs off and
#      on, a held node through spring-kind
#      toggles and let go (the grabber's
#      download_positions at the press and
#      upload_node per move and at the
#      release, against the CPU's target),
#      a hover that reads
#      nothing back, springs growing in: the
#      GPU's rest lengths bit for bit the
#      host's) stepped on CUDA, self-collision:
#      a folded cloth 24 substeps vs the CPU, < 2 s)
#   2. validate --quick on cuda (10/30-layer pools,        25       90  the physics of every kernel:
#      dam break vs Martin & Moyce, sloshing period)                   boundary density, coarse
#                                                                      correction (MGPCG), the
#                                                                      checks the CPU passes
#   2. compute-sanitizer memcheck, 20k particles, 2 steps  25       90  memory errors in every kernel
#      (slabs meeting head-on: obstacles, 6 substeps,                  (the foam kernels on a full
#      foam on)                                                        pool)
#   3. compute-sanitizer racecheck, same                   40       90  shared-memory races (scan)
#   4. render 1920×1080, ~1M particles, 20 frames          15       60  interop path + per-pass times
#   4a. the same with --spheres                          15       60  the anisotropy kernel's cost
#   4b. render dam-break --foam on cuda, 3 frames × 40    30       60  the foam kernels after the
#       steps, 960×540                                                 impact, the foam buffer by
#                                                                      interop (first GPU run)
#   4i. ink: render ink-painting side by side, 1920×1080   10       45  the picture kernel into a GL
#       through the texture interop, 20 frames                         texture (first run on a GPU)
#   4j. ink: compute-sanitizer memcheck, racecheck,        30       90  every ink kernel incl. the
#       256², 3 frames each (bench)                                    block reductions' barriers
#   4k. ink: bench cuda 2048², 4096² (stage events, then   30       90  the targets: 2048² ≤ 1 ms and
#       JSON without), 20 Jacobi sweeps, MacCormack                    4096² ≤ 4 ms per frame
#   4m. ink multigrid: compute-sanitizer memcheck,         30       90  the pressure_mg_* kernels, the
#       racecheck, dye 256² (3 frames each); bench cuda                one-block V-cycle's barriers;
#       dye 2048² (4 V-cycles), stage events then JSON  10       30  multigrid's cost per frame;
#       (CUDA graphs), then JSON FLUIDLAB_CUDA_GRAPHS=0                what the ink's graphs save
#       (doctor's "ink parity: multigrid" line: step 1);
#       simulate karman 8 frames, stir 20 frames,      10       78  graphed steps' bits on a GPU
#       dye_paint (dye with a forced brush drag) 20                    (painting on u, v and the
#       frames, graphs on and off, exported fields                     ink, a moving disc)
#       compared ("graphs bit-equal")
#   4n. ink: render stir (a disc moved through the      3       30  the moving wall's faces
#       ink: the moving wall), 960×480, 2 frames × 60                  (set_walls, wall_rows,
#       steps, cuda; compute-sanitizer memcheck, bench    10       30  close_walls) on a GPU, and
#       stir 256² 25 steps (the disc moves from 0.2 s);                their memory errors; the
#       bench stir 1414×707 (multigrid around the          3       30  V-cycle converges on an
#       moving disc), 10 steps                                         odd grid
#   4p. pool: render open-sea (4096² on cuda) 1920×1080,  20       45  surface_texels into the GL
#       texture interop, 20 frames, pass times                         texture (first run on a GPU)
#   4q. pool: compute-sanitizer memcheck (open sea: wave,  30       40  every pool kernel incl. the
#       open edges; pond: springs, shore), racecheck,                  reductions' barriers, Mur's
#       128², 3 frames each (bench)                                    two-kernel edge update
#   4r. pool: bench cuda 1024², 4096² (stage events, then  40       60  the targets: 1024² well under
#       JSON without), the pool preset (wave, walls)                   1 ms per frame; 4096² with
#                                                                      the render ≥ 120 fps
#       pond simulated 1 step on cuda and cpu           3       20  the springs' energy at rest
#                                                                      exactly 0 on the GPU
#   4s. particles: compute-sanitizer memcheck, racecheck,  51   2×45+2×30  every particles kernel incl.
#       fountain 110 frames, cloth 64² XPBD 2 frames,       +6×20      the scans', sort's barriers,
#       jelly Verlet and XPBD 2 frames, cloth-fold 2                   the jelly's volume kernels,
#       frames                                                         self_collide's scans,
#                                                                      reductions and bucket atomics
#   4t. particles: bench cuda fountain 1M alive, cloth     20     3×40  the targets: 1M particles
#       1024² × 8 substeps (Verlet; XPBD × 4 iterations)              and 1024² × 8 ≥ 60 fps;
#       cloth-fold (self_collide's kernels)              3       20  self_collide's cost
#       cloth-fold, cloth 1024² XPBD without stage     35   2×20+2×40  what a body frame's CUDA
#       events, graphs on and off (JSON); graphs on:                   graph saves
#       FAIL on a refused capture or > 10 launch calls
#   4u. particles: render fountain-1m 1920×1080 (~1M       18       45  the 1M draw target: sort and
#       droplets), 2 frames 240 steps apart, cuda +                    draw of a million droplets
#       interop (the renderer's shared path); cloth      6     2×25  (their tags' colours), the
#       and jelly 960×540 --view both, 20 frames each                  water, the skins and node
#                                                                      colours built into GL
#                                                                      by kernels
#   5. bench cuda 30k, 100k, 1M: 50 steps, stage events    15       90  per-stage times
#   6. bench cuda 30k, 100k, 1M: JSON, no stage events     12       90  top speed (frames as CUDA
#                                                                      graphs)
#   6a. bench cuda 30k, JSON, FLUIDLAB_CUDA_GRAPHS=0         4       30  what graphs save: launch
#                                                                      overhead ≤ 0.2 ms a frame
#   6b. bench cuda 1M, density-error rule 0.1 %            10       60  iterations the rule needs,
#                                                                      its readback every 4
#   8. bench cuda 10M, 5 steps after 1 warm-up, once       30       90  memory per particle, launch
#                                                                      size; a 10M dam break needs
#                                                                      ~24 CFL substeps a frame once
#                                                                      the front accelerates, so it
#                                                                      runs only the first frames
#   7. bench cpu 100k, 5 steps (for scale), run last:     10       60  CPU reference speed; the
#      the first step the budget cuts                                  GPU's figures come first
#   total (estimate)                                     ~604  BUDGET=300 a call (device call: 330):
#                                                                  two calls, see "2." below; 604
#                                                                  is over 2 × 300, so the budget
#                                                                  cuts the last step (7, bench
#                                                                  cpu) as designed, unless the
#                                                                  steps run under their estimates
#
# The estimates are on paper (no session has had the GPU yet): doctor steps 25 small solvers
# (a 4 500-particle dam break) whose code loads from the embedded cubin, runs two 200-frame
# parity runs (the CPU reference on 16 cores takes most of it) and a few thousand per-launch
# synchronisations; compute-sanitizer slows kernels 10–100× but the run is 2 steps of 20k
# particles; 1M-particle frames take tens of milliseconds; seeding 10M particles on the CPU
# takes seconds. Replace them with the measured times (summary.txt) after the first run.
#
# Logs go to $OUT, in the 8 files the device call brings back (its limit): summary.txt,
# doctor.log (doctor and validate), sanitizer.log, render.log, bench.log (every kind's) and the
# pictures render-1m-1080p.png, ink-render.png, pool-render.png (the particles' render leaves
# its per-pass times in render.log, no picture: a ninth file would not come back).
#
# The device machine has no cargo: build here, then carry the binary.
#
#   1. Here, in the repository root of the checkout the device call sends (the session's own
#      checkout):
#        scripts/setup.sh && cargo build --release
#        mkdir -p out/device && objcopy --strip-debug target/release/fluidlab out/device/fluidlab
#      (`out/` is git-ignored, so it travels only when carried. The release binary carries
#      line tables, ~66 MB: unstripped it does not fit the device call's 64 MiB, stripped of
#      debug information it is ~9 MB and keeps its symbols for backtraces.)
#      And the GL loader packages (as the device README says; `.gl` is git-ignored), without
#      which doctor's "EGL devices" and "CUDA–GL interop" lines and the render step SKIP/FAIL:
#        mkdir -p .gl /tmp/amd64/partial; o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#        apt-get $o update; (cd .gl && apt-get $o download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
#   2. A session has 15 minutes of device time, each machine start (a minute or two) included,
#      and a machine idle for 30 s goes back: so two calls of ~5 minutes, not one of 10, leave
#      room to fix what the first finds and run again. The first call:
#        run(command="bash scripts/device-check.sh", carry=["out/device", ".gl"], timeout_s=330)
#      Its summary ends, where a step was cut by BUDGET (300 s) or failed, with
#        next call: PARTS="ink pool particles" DOCTOR=0
#      (DOCTOR=0 where the doctor passed). Fix here what failed, rebuild and strip, then the
#      second call with that line's variables and BUDGET = what status's budget_left_s leaves
#      after a start (~120 s) and 30 s to spare:
#        run(command='PARTS="…" DOCTOR=0 BUDGET=… bash scripts/device-check.sh', carry=[…], timeout_s=BUDGET+30)
#      (a rebuilt binary: leave DOCTOR out, so the doctor checks it again).
#   3. Read $OUT/summary.txt first: each step's PASS/FAIL with its measured seconds; doctor.log
#      and bench-*.log hold the figures. docs/cuda-verification.md ("The first GPU run") says what
#      to expect.
#
# Optional: FLUIDLAB_BIN (default out/device/fluidlab), OUT (default out/device-check), BUDGET
# (default 300 s), PARTS (the kinds' steps to run, e.g. PARTS="ink pool" for a second call: see
# part() below), DOCTOR=0 (the doctor not run: a second call with the binary it passed).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/device-check}
BIN=${FLUIDLAB_BIN:-out/device/fluidlab}
mkdir -p "$OUT"
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }
: >"$OUT/summary.txt"

# GL loader packages carried in .gl (see above): unpacked into / as the device README says.
# (FLUIDLAB_SKIP_GL=1: not unpacked; tests/device_check.rs walks the script that way.)
if [[ -z ${FLUIDLAB_SKIP_GL:-} ]] && compgen -G ".gl/*.deb" >/dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    vendor=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    [[ -f $vendor && -z ${__EGL_VENDOR_LIBRARY_FILENAMES:-} ]] && export __EGL_VENDOR_LIBRARY_FILENAMES=$vendor
fi

if [[ ! -x $BIN ]]; then
    summary "FAIL no fluidlab binary at $BIN (build it here and carry out/device, see the top of this script)"
    exit 1
fi
summary "device-check $(date -u +%FT%TZ) on $(hostname): $("$BIN" --version)"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader \
        2>&1 | sed 's/^/gpu: /' | tee -a "$OUT/summary.txt"
else
    summary "gpu: no nvidia-smi on this machine"
fi

# Everything ends within BUDGET seconds (the device call's timeout_s is BUDGET + 30), even if a step hangs.
BUDGET=${BUDGET:-300}
failed=0
step() { # name, timeout seconds, log file, command...
    local name=$1 limit=$2 log=$3
    shift 3
    local start=$SECONDS left=$((BUDGET - SECONDS))
    if ((left < 15)); then
        summary "SKIP $name (the script's time budget is spent)"
        failed=1
        again "$current"
        return
    fi
    ((limit > left)) && limit=$left
    timeout "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    if [[ $rc -eq 0 ]]; then summary "PASS $name ($((SECONDS - start)) s)"; else
        summary "FAIL $name (exit $rc after $((SECONDS - start)) s, see $(basename "$log"))"
        failed=1
        again "$current"
    fi
}

# PARTS (default "pbf ink pool particles"): the kinds whose steps after the doctor, validation,
# sanitizer and PBF render steps run, so a second call can repeat only what failed.
# `current` is the part whose steps run (the doctor's first), so that a step the budget cuts or
# that fails names its part in the "next call" line at the end.
part() {
    current=$1
    [[ " ${PARTS:-pbf ink pool particles} " == *" $1 "* ]]
}
summary "parts: ${PARTS:-pbf ink pool particles}"

# The parts to run again (cut by the budget or failed), in order, once each.
rerun=""
again() { [[ " $rerun " == *" $1 "* ]] || rerun="${rerun:+$rerun }$1"; }

# 1. Doctor, with every kernel launch synchronised and checked: a fault names its kernel.
# DOCTOR=0 (a second call with the same binary, its doctor passed): not run.
current=doctor
if [[ ${DOCTOR:-1} == 0 ]]; then
    summary "doctor: not run (DOCTOR=0)"
else
    step "doctor (FLUIDLAB_CUDA_SYNC_CHECK=1)" 120 "$OUT/doctor.log" env FLUIDLAB_CUDA_SYNC_CHECK=1 "$BIN" doctor
    grep -E '^(PASS|FAIL|SKIP)' "$OUT/doctor.log" | sed 's/^/  doctor: /' >>"$OUT/summary.txt"
fi

if part pbf; then
# 1b. The validation cases on the GPU (docs/validation.md): the same checks the CPU passes in
# `cargo test`, so the boundary density and the coarse correction's kernels are checked against
# physics, not only against the CPU. Charts stay on the device; the checks come back.
step "validate --quick on cuda" 90 /tmp/validate.log "$BIN" validate --quick --backend cuda --out /tmp/validate-cuda
cat /tmp/validate.log >>"$OUT/doctor.log"
grep -E '^(PASS|FAIL)' /tmp/validate.log | sed 's/^/  validate: /' >>"$OUT/summary.txt"

# 2–3. Memory errors and shared-memory races in every kernel, on a short run: two slabs meeting
# head-on at 3 m/s under a sphere and a box (scripts/foam-sanitizer.toml), so the obstacles'
# boundary terms run, the CFL rule takes 6 substeps, and the foam stage has a full pool from
# the first step (on the CPU 2 248 born, then 1 237: tests/foam.rs), every foam kernel, the
# obstacle rule included, working on diffuse particles (the dam break at rest left it empty).
# memcheck runs the frames as CUDA graphs (no stage events: captured, then launched),
# racecheck launch by launch, so both ways of queueing the same kernels are checked.
if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        timing=()
        [[ $tool == memcheck ]] && timing=(--no-stage-timing)
        step "compute-sanitizer $tool" 90 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench scripts/foam-sanitizer.toml --backend cuda --particles 20000 --steps 2 --warmup 0 ${timing[@]+"${timing[@]}"}
    done
else
    summary "SKIP compute-sanitizer (not on this machine)"
fi

# 4. Headless render through the interop path: ~1M particles (the dam break at spacing 6.2 mm),
# 1920×1080, per-pass and simulation timings (every pass, the light passes, edges and post of
# issue 14 included: target all passes together <= 4 ms); one frame comes back as a PNG.
scene=/tmp/dam-break-1m.toml
sed 's/^spacing = .*/spacing = 0.0062/' scenes/pbf/dam-break.toml >"$scene"
step "render 1920x1080, ~1M particles, cuda + interop" 60 "$OUT/render.log" "$BIN" render "$scene" --backend cuda \
    --frames 20 --size 1920x1080 --out /tmp/render --overwrite --timings
grep -iE 'interop|pass|total|simulation|kernels from|^(anisotropy|light_|caustics|scene|sphere_depth|thickness|smooth_depth|normals|composite|edges|post)' \
    "$OUT/render.log" | sed 's/^/  render: /' >>"$OUT/summary.txt"
# 4a. The same with spheres (--spheres: no anisotropy kernel): what the ellipsoids cost. The
# anisotropy kernel (kernels/anisotropy.cuh) runs on a GPU here for the first time: its
# emulation matched the CPU stage; the picture should match docs/fluid-rendering.md's.
step "render 1920x1080, ~1M particles, cuda, spheres" 60 /tmp/render-spheres.log "$BIN" render "$scene" --backend cuda \
    --frames 20 --size 1920x1080 --out /tmp/render-spheres --overwrite --timings --spheres
grep -iE 'total|^(light_|sphere_depth|thickness)' /tmp/render-spheres.log | sed 's/^/  render --spheres: /' >>"$OUT/summary.txt"
last=$(ls /tmp/render/*.png 2>/dev/null | tail -1)
[[ -n $last ]] && cp "$last" "$OUT/render-1m-1080p.png"
# 4b. The foam stage on the CUDA solver (kernels/foam.cuh, first run on a GPU: the emulation
# matched the CPU stage bit for bit, doctor's "parity: foam" compares the pools one to one, on a
# dam break with two obstacles and spray thrown at them: the obstacle rule's GPU check),
# the 30k dam break after its impact, its diffuse particles drawn from the GPU through the foam
# buffer's interop: the picture would show foam at the far wall as docs/foam.md's does (no picture
# comes back: the 8 files); the `foam` line of --timings is the stage's time.
step "render dam-break 960x540, cuda, --foam" 60 /tmp/render-foam.log "$BIN" render dam-break --backend cuda \
    --frames 3 --steps-per-frame 40 --size 960x540 --out /tmp/render-foam --overwrite --timings --foam
grep -iE 'total|simulation|^foam' /tmp/render-foam.log | sed 's/^/  render --foam: /' >>"$OUT/summary.txt"
cat /tmp/render-foam.log >>"$OUT/render.log"

# 5–6. Benchmarks at 30k (launch overhead), 100k and 1M: per-stage CUDA events (table), then
# JSON without events for the top speed.
sizes=30000,100000,1000000
log="$OUT/bench.log"
step "bench cuda $sizes" 90 "$log" "$BIN" bench dam-break --backend cuda --particles "$sizes" --steps 50 --warmup 10
step "bench cuda $sizes, no stage events (json)" 90 "$log" "$BIN" bench dam-break --backend cuda --particles "$sizes" --steps 50 --warmup 10 --json --no-stage-timing
# 6a. The same 30k frames launch by launch: against 6's 30k line (one graph a frame, JSON
# launch_calls_per_step ~2), the launch overhead CUDA graphs remove.
step "bench cuda 30000, no stage events, FLUIDLAB_CUDA_GRAPHS=0 (json)" 30 /tmp/bench-no-graphs.log env FLUIDLAB_CUDA_GRAPHS=0 "$BIN" bench dam-break --backend cuda --particles 30000 --steps 50 --warmup 10 --json --no-stage-timing
cat /tmp/bench-no-graphs.log >>"$log"
grep -E '^\{' "$log" | sed 's/^/  bench json: /' >>"$OUT/summary.txt"
# 6b. The density-error rule (0.1 %, 2–100 iterations) at 1M: the iterations it needs and the
# cost of its device-side reduction, read every 4 iterations.
rule=/tmp/dam-break-rule.toml
printf '%s\nmax_density_error = 0.001\nmin_iterations = 2\nmax_iterations = 100\n' "$(cat scenes/pbf/dam-break.toml)" >"$rule"
step "bench cuda 1000000, density-error rule 0.1 %" 60 /tmp/bench-rule.log "$BIN" bench "$rule" --backend cuda --particles 1000000 --steps 30 --warmup 5
cat /tmp/bench-rule.log >>"$log"
grep -E 'step:|on cuda|compression reached' /tmp/bench-rule.log | sed 's/^ */  /' >>"$OUT/summary.txt"

# 8. 10M particles once, first frames only (the front has not accelerated yet: few substeps).
step "bench cuda 10000000 (5 steps)" 90 /tmp/bench-cuda-10m.log "$BIN" bench dam-break --backend cuda --particles 10000000 --steps 5 --warmup 1
cat /tmp/bench-cuda-10m.log >>"$OUT/bench.log"
grep -E 'step:|on cuda|skipped|GPU memory' /tmp/bench-cuda-10m.log | sed 's/^ */  10M: /' >>"$OUT/summary.txt"
fi

if part ink; then
# 4i–4k. Ink (docs/ink-cuda.md). The picture through the texture interop: render.log must say
# "reaches GL by CUDA–GL interop" (a refusal says "filled through host memory instead").
ink=ink-painting
step "ink: render $ink 1920x1080 side by side, cuda + texture interop" 45 /tmp/ink-render.log "$BIN" render "$ink" \
    --backend cuda --view side-by-side --frames 20 --steps-per-frame 5 --size 1920x1080 --out /tmp/render-ink --overwrite --timings
cat /tmp/ink-render.log >>"$OUT/render.log"
grep -iE 'interop|host memory|backend|total|simulation' /tmp/ink-render.log | sed 's/^/  ink render: /' >>"$OUT/summary.txt"
last=$(ls /tmp/render-ink/*.png 2>/dev/null | tail -1)
[[ -n $last ]] && cp "$last" "$OUT/ink-render.png"
# Memory errors and races (the reductions' shared memory and barriers) in every ink kernel but
# the picture's, on 256² (MacCormack, vorticity, 20 Jacobi sweeps: every stage runs).
if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        step "ink: compute-sanitizer $tool" 45 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench "$ink" --backend cuda --particles 65536 --steps 3 --warmup 0
    done
fi
# The targets: 2048² with 20 Jacobi sweeps ≤ 1 ms per frame, 4096² ≤ 4 ms (--particles rescales
# the 512² preset to about N cells, keeping its parameters).
sizes=4194304,16777216
step "ink: bench cuda 2048², 4096²" 50 /tmp/ink-bench.log "$BIN" bench "$ink" --backend cuda --particles "$sizes" --steps 50 --warmup 10
step "ink: bench cuda 2048², 4096², no stage events (json)" 40 /tmp/ink-bench.log "$BIN" bench "$ink" --backend cuda --particles "$sizes" --steps 50 --warmup 10 --json --no-stage-timing
cat /tmp/ink-bench.log >>"$OUT/bench.log"
grep -E 'step:|on cuda|^\{' /tmp/ink-bench.log | sed 's/^ */  ink bench: /' >>"$OUT/summary.txt"

# 4m. Ink's multigrid pressure (dye: a closed box, 4 V-cycles): memory errors and races in the
# pressure_mg_* kernels (the one-block V-cycle's barriers), then the cost at 2048² (ink 4096²).
# memcheck runs the steps as CUDA graphs (no stage events: frame 1 launch by launch, 2-3
# captured, 4-5 replayed), racecheck launch by launch.
if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        timing=()
        [[ $tool == memcheck ]] && timing=(--no-stage-timing)
        step "ink multigrid: compute-sanitizer $tool" 45 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench dye --backend cuda --particles 65536 --steps 5 --warmup 0 ${timing[@]+"${timing[@]}"}
    done
fi
step "ink multigrid: bench cuda dye 2048²" 45 /tmp/ink-mg.log "$BIN" bench dye --backend cuda --particles 4194304 --steps 30 --warmup 5
# Without stage events the steps run as CUDA graphs; FLUIDLAB_CUDA_GRAPHS=0 gives the same run
# launch by launch (docs/ink-cuda.md "CUDA graphs": what the ~140 launches a frame cost).
step "ink multigrid: bench cuda dye 2048², no stage events (json)" 30 /tmp/ink-mg.log "$BIN" bench dye --backend cuda --particles 4194304 --steps 30 --warmup 5 --json --no-stage-timing
step "ink multigrid: bench cuda dye 2048², no stage events, FLUIDLAB_CUDA_GRAPHS=0 (json)" 30 /tmp/ink-mg.log env FLUIDLAB_CUDA_GRAPHS=0 "$BIN" bench dye --backend cuda --particles 4194304 --steps 30 --warmup 5 --json --no-stage-timing
cat /tmp/ink-mg.log >>"$OUT/bench.log"
grep -E 'step:|on cuda|pressure|^\{' /tmp/ink-mg.log | sed 's/^ */  ink multigrid bench: /' >>"$OUT/summary.txt"
# The graphed steps' numbers on real CUDA: karman (multigrid, an outflow: the graph holds a
# device-to-device copy) 8 frames, stir 20 frames (its stripes painted, its disc moving from
# frame 12: the levels' fluid counts the kernels read from device memory) and dye_paint 20
# frames (dye with a brush dragged across with force, 5 stamps a step: the splat records the
# kernels read from device memory, on u, v and the ink; stir's and karman's strokes have no
# force) with graphs and with FLUIDLAB_CUDA_GRAPHS=0, fields compared bit for bit (simulate
# runs without stage events, so its steps are graphed).
sed 's/^\[display\]$/[[stroke]]\nduration = 0.4\npath = [[0.1, 0.2], [0.9, 0.8]]\nradius = 0.02\nink = [20.0, 10.0, 5.0]\nforce = 30.0\n\n[display]/' \
    scenes/ink/dye.toml >/tmp/dye_paint.toml
for run in "karman 8" "stir 20" "/tmp/dye_paint.toml 20"; do
    read -r scene frames <<<"$run"
    rm -rf /tmp/ink-graphs-on /tmp/ink-graphs-off
    step "ink: simulate $scene $frames frames, CUDA graphs" 13 /tmp/ink-graphs.log "$BIN" simulate "$scene" \
        --backend cuda --steps "$frames" --every "$frames" --format npy --export /tmp/ink-graphs-on
    step "ink: simulate $scene $frames frames, FLUIDLAB_CUDA_GRAPHS=0" 13 /tmp/ink-graphs.log env \
        FLUIDLAB_CUDA_GRAPHS=0 "$BIN" simulate "$scene" --backend cuda --steps "$frames" --every "$frames" \
        --format npy --export /tmp/ink-graphs-off
    # Both exports must exist and be equal file for file: a difference (or a missing run) is a FAIL.
    step "ink: $scene's exports with graphs bit-equal to launches" 5 /tmp/ink-graphs.log \
        bash -c '[[ -n $(ls /tmp/ink-graphs-on) ]] && diff -rq /tmp/ink-graphs-on /tmp/ink-graphs-off'
done

# 4n. A scripted disc moved through the ink (docs/ink.md "A moving disc is a moving wall"): the
# wall velocities reach the kernels through CudaInk::set_walls (the doctor's ink parity run moves
# its disc too, against the CPU). No picture comes back: the device returns at most 8 files.
step "ink: render stir (moving wall) 960x480, cuda" 30 /tmp/ink-stir.log "$BIN" render stir \
    --backend cuda --frames 2 --steps-per-frame 60 --size 960x480 --out /tmp/render-ink-stir --overwrite
cat /tmp/ink-stir.log >>"$OUT/render.log"
grep -iE 'backend|wrote|error' /tmp/ink-stir.log | tail -2 | sed 's/^/  ink stir: /' >>"$OUT/summary.txt"
# Memory errors in wall_rows and close_walls as the disc moves (it starts at 0.2 s: step 12).
if command -v compute-sanitizer >/dev/null; then
    step "ink: compute-sanitizer memcheck, stir (moving wall)" 30 "$OUT/sanitizer.log" compute-sanitizer --tool memcheck \
        --error-exitcode 1 "$BIN" bench stir --backend cuda --particles 65536 --steps 25 --warmup 0
fi
# The multigrid's restriction around the disc and along an odd grid's last column (sum of the
# fluid children over four): on the CPU this grid's divergence after projection is 2.2e-3 1/s
# (6.9 before); a value above ~1e-2 in the summary means the kernels' V-cycle does not converge.
step "ink: bench stir 1414x707 (moving wall, multigrid), cuda" 30 /tmp/ink-stir-big.log "$BIN" bench stir \
    --backend cuda --particles 1000000 --warmup 14 --steps 10
cat /tmp/ink-stir-big.log >>"$OUT/bench.log"
grep -E 'step:|divergence' /tmp/ink-stir-big.log | tail -3 | sed 's/^ */  ink stir 1414x707: /' >>"$OUT/summary.txt"
fi

if part pool; then
# 4p–4r. Pool (docs/pool-cuda.md). The surface texture through the interop: the log must say
# "reaches GL by CUDA–GL interop"; open-sea runs its pool.cuda_nodes = 4096² on CUDA.
step "pool: render open-sea (4096²) 1920x1080, cuda + texture interop" 45 /tmp/pool-render.log "$BIN" render open-sea \
    --backend cuda --frames 20 --size 1920x1080 --out /tmp/render-pool --overwrite --timings
cat /tmp/pool-render.log >>"$OUT/render.log"
grep -iE 'interop|host memory|backend|total|simulation|pass' /tmp/pool-render.log | sed 's/^/  pool render: /' >>"$OUT/summary.txt"
last=$(ls /tmp/render-pool/*.png 2>/dev/null | tail -1)
[[ -n $last ]] && cp "$last" "$OUT/pool-render.png"
# Memory errors in every pool kernel on 128² (open sea: the wave model, Mur's edges, drops at
# the start; pond: the spring lattice, a fixed shore), races in the reductions' shared memory.
if command -v compute-sanitizer >/dev/null; then
    for run in "memcheck open-sea" "memcheck pond" "racecheck open-sea"; do
        set -- $run
        step "pool: compute-sanitizer $1 $2" 40 "$OUT/sanitizer.log" compute-sanitizer --tool "$1" --error-exitcode 1 \
            "$BIN" bench "$2" --backend cuda --particles 16384 --steps 3 --warmup 0
    done
fi
# The targets: 1024² well under 1 ms per frame; 4096² (with the render above) at ≥ 120 fps
# (--particles rescales the pool preset to N nodes, keeping its parameters).
sizes=1048576,16777216
step "pool: bench cuda 1024², 4096²" 60 /tmp/pool-bench.log "$BIN" bench pool --backend cuda --particles "$sizes" --steps 30 --warmup 5
step "pool: bench cuda 1024², 4096², no stage events (json)" 60 /tmp/pool-bench.log "$BIN" bench pool --backend cuda --particles "$sizes" --steps 30 --warmup 5 --json --no-stage-timing
cat /tmp/pool-bench.log >>"$OUT/bench.log"
grep -E 'step:|on cuda|^\{' /tmp/pool-bench.log | sed 's/^ */  pool bench: /' >>"$OUT/summary.txt"
# The springs' energy on the GPU (stats_partials less each spring's energy at the f32 rest
# positions): exactly 0 at rest, as on the CPU, then the CPU's figure after a drop's step.
pond=$(mktemp -d) # this run's own files: an earlier run's lines must not pass this one
step "pool: springs' energy at rest on cuda is 0" 20 /tmp/pool-energy.log bash -c \
    "'$BIN' simulate pond --backend cuda --steps 1 --stats $pond/cuda.jsonl --quiet &&
     '$BIN' simulate pond --backend cpu --steps 1 --stats $pond/cpu.jsonl --quiet &&
     head -1 $pond/cuda.jsonl | grep -q '\"energy\":0.0,'"
grep -h '"step":1,' "$pond/cuda.jsonl" "$pond/cpu.jsonl" 2>/dev/null | cut -c1-120 | sed 's/^/  pool energy (cuda, cpu): /' >>"$OUT/summary.txt"
fi

if part particles; then
# 4s–4u. Particles (docs/particles/cuda.md; its parity is doctor's "particles parity" line,
# its bodies' panel statistics, body_stats, doctor's "particles statistics": bench never asks
# for the panel's lines, so body_stats runs in step 1 only, not under the sanitizer below).
# Memory errors and races (the compaction's and the sort's shared memory and barriers) on small
# scenes: the fountain at 1000 particles/s for 110 frames (landings start after ~95: every
# fountain kernel, the splashes included) and a 64² cloth under XPBD.
xpbd=/tmp/cloth-xpbd.toml
sed -e 's/^integrator = .*/integrator = "xpbd"/' -e 's/^substeps = .*/substeps = 8\niterations = 4/' scenes/particles/cloth.toml >"$xpbd"
# The jelly's volume term: volume + volume_gather (Verlet, the preset), xpbd_volume (XPBD).
sed -e 's/^integrator = .*/integrator = "xpbd"/' scenes/particles/jelly.toml >/tmp/jelly-xpbd.toml
# memcheck runs the frames as CUDA graphs (no stage events: captured, then replayed, as PBF's
# above; the fountain's over its reach, a power of two), racecheck launch by launch.
if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        timing=()
        [[ $tool == memcheck ]] && timing=(--no-stage-timing)
        step "particles: compute-sanitizer $tool, fountain" 45 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench fountain --backend cuda --particles 4000 --steps 110 --warmup 0 ${timing[@]+"${timing[@]}"}
        step "particles: compute-sanitizer $tool, cloth 64² xpbd" 30 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench "$xpbd" --backend cuda --particles 4096 --steps 2 --warmup 0 ${timing[@]+"${timing[@]}"}
        for jelly in jelly /tmp/jelly-xpbd.toml; do
            step "particles: compute-sanitizer $tool, $jelly (volume)" 20 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
                "$BIN" bench "$jelly" --backend cuda --steps 2 --warmup 0 ${timing[@]+"${timing[@]}"}
        done
        # self_collide's kernels (docs/cuda-verification.md, "Real concurrency: the review"):
        # the 40² cloth-fold preset, its lists built at the first substep.
        step "particles: compute-sanitizer $tool, cloth-fold (self_collide)" 20 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench cloth-fold --backend cuda --steps 2 --warmup 0 ${timing[@]+"${timing[@]}"}
    done
fi
# The targets: 1M fountain particles alive (300 warm-up frames fill it: lifetime 4 s), and a
# 1024² cloth at 8 substeps — Verlet with the mass that 8 substeps keep stable (4000 kg over
# 1024², 200 N/m), and XPBD × 4 iterations (one launch per colour per iteration).
cloth=/tmp/cloth-1024.toml
sed -e 's/^n = .*/n = 1024/' -e 's/^mass = .*/mass = 4000.0/' -e 's/^substeps = .*/substeps = 8/' scenes/particles/cloth.toml >"$cloth"
sed -e 's/^n = .*/n = 1024/' -e 's/^integrator = .*/integrator = "xpbd"/' -e 's/^substeps = .*/substeps = 8\niterations = 4/' \
    scenes/particles/cloth.toml >/tmp/cloth-1024-xpbd.toml
step "particles: bench cuda fountain 1M" 40 /tmp/particles-bench.log "$BIN" bench fountain --backend cuda --particles 1000000 --steps 60 --warmup 300
step "particles: bench cuda cloth 1024² × 8 verlet" 40 /tmp/particles-bench.log "$BIN" bench "$cloth" --backend cuda --steps 30 --warmup 5
step "particles: bench cuda cloth 1024² × 8 xpbd × 4" 40 /tmp/particles-bench.log "$BIN" bench /tmp/cloth-1024-xpbd.toml --backend cuda --steps 30 --warmup 5
# self_collide's 11 kernels a substep (the 40² cloth-fold preset, 30 substeps; its stage line).
step "particles: bench cuda cloth-fold (self_collide)" 20 /tmp/particles-bench.log "$BIN" bench cloth-fold --backend cuda --steps 30 --warmup 5
# A frame as one CUDA graph (docs/particles/cuda.md): the fountain and the bodies without stage events,
# with graphs and without (FLUIDLAB_CUDA_GRAPHS=0): what graphs save, launch calls and ms a step.
# With graphs on, a refused capture (its note) or more than 10 launch calls a step (a graphed
# frame is 3: the graph and the frame's end; 722 and ~470 launch by launch) is a FAIL.
graphed() { # bench arguments...: runs FLUIDLAB_CUDA_GRAPHS=1 bench, fails unless it graphed
    local out
    out=$(FLUIDLAB_CUDA_GRAPHS=1 "$@" 2>&1)
    local rc=$?
    echo "$out"
    ((rc == 0)) || return "$rc"
    if grep -q 'CUDA graph capture failed' <<<"$out"; then
        echo "device-check: a CUDA graph capture was refused" && return 1
    fi
    local calls
    calls=$(grep -o '"launch_calls_per_step": *[0-9.eE+-]*' <<<"$out" | tail -1 | sed 's/.*: *//')
    if [[ -z $calls ]] || ! awk -v c="$calls" 'BEGIN { exit !(c <= 10) }'; then
        echo "device-check: launch_calls_per_step '$calls' with graphs on (a graphed frame: 3)" && return 1
    fi
}
export -f graphed
for graphs in 1 0; do
    run=(env FLUIDLAB_CUDA_GRAPHS=0)
    ((graphs)) && run=(bash -c 'graphed "$@"' graphed)
    step "particles: bench cuda fountain 100k, no stage events, FLUIDLAB_CUDA_GRAPHS=$graphs (json)" 20 /tmp/particles-bench.log \
        "${run[@]}" "$BIN" bench fountain --backend cuda --particles 100000 --steps 30 --warmup 60 --json --no-stage-timing
    step "particles: bench cuda cloth-fold, no stage events, FLUIDLAB_CUDA_GRAPHS=$graphs (json)" 20 /tmp/particles-bench.log \
        "${run[@]}" "$BIN" bench cloth-fold --backend cuda --steps 30 --warmup 5 --json --no-stage-timing
    step "particles: bench cuda cloth 1024² × 8 xpbd × 4, no stage events, FLUIDLAB_CUDA_GRAPHS=$graphs (json)" 40 /tmp/particles-bench.log \
        "${run[@]}" "$BIN" bench /tmp/cloth-1024-xpbd.toml --backend cuda --steps 10 --warmup 2 --json --no-stage-timing
done
# 4u. The issue's draw target: about a million droplets (scenes/particles/fountain-1m.toml, the
# fountain preset at 527 700 particles/s) drawn from the CUDA solver's buffers through GL interop
# (the renderer's shared path: points through the order, quads by a geometry shader); a refused
# interop says "interop is not available" and draws from a read-back instead. Frame 0 (empty,
# shaders compiling) is left out of the per-pass means; frame 1 comes a lifetime (240 steps)
# later, with ~1M droplets alive ("simulation" in the log is 240 steps' time).
step "particles: render fountain-1m 1920x1080, cuda + interop" 45 /tmp/particles-render.log "$BIN" render fountain-1m \
    --backend cuda --frames 2 --steps-per-frame 240 --size 1920x1080 --out /tmp/particles-render --overwrite --timings
# The bodies' skins (the surface kernel: positions, smooth normals) and their nodes' and
# springs' colours (body_points) built straight into the renderer's GL buffers; a refused
# interop reads the body back and says so.
for body in cloth jelly; do
    step "particles: render $body 960x540 --view both, cuda + interop" 25 /tmp/particles-render.log "$BIN" render "$body" \
        --backend cuda --view both --frames 20 --size 960x540 --out "/tmp/particles-render-$body" --overwrite --timings
done
cat /tmp/particles-bench.log >>"$OUT/bench.log"
cat /tmp/particles-render.log >>"$OUT/render.log"
cat /tmp/particles-bench.log /tmp/particles-render.log | grep -E 'step:|on cuda|backend|steps/s|interop|total render|^particles ' |
    sed 's/^ */  particles: /' >>"$OUT/summary.txt"
fi

# 7. The CPU solver for scale: last, the first step the budget cuts (it says nothing about the
# GPU), and only with the PBF part.
if part pbf; then
step "bench cpu 100000 particles (for scale)" 60 /tmp/bench-cpu.log "$BIN" bench dam-break --backend cpu --particles 100000 --steps 5 --warmup 1
cat /tmp/bench-cpu.log >>"$OUT/bench.log"
grep -E 'step:' /tmp/bench-cpu.log | sed 's/^ */  cpu 100000: /' >>"$OUT/summary.txt"
fi

# What the next call runs: the parts of every step cut or failed (the doctor's own line says
# whether it runs again: DOCTOR=0 where it passed).
if [[ -n $rerun ]]; then
    parts=${rerun//doctor/}
    parts=$(echo $parts)
    doctor=" DOCTOR=0"
    [[ " $rerun " == *" doctor "* ]] && doctor=""
    summary "next call: PARTS=\"${parts:-none}\"$doctor (the parts of the steps above cut by the budget or failed)"
fi
summary "device-check: $([[ $failed -eq 0 ]] && echo 'all PASS' || echo 'some checks FAILED')"
exit $failed
