#!/usr/bin/env bash
# CUDA backend check on the GPU machine (the device tool's H200), in one call of a few minutes:
# doctor (driver, GPU, kernels, restart leak check, CPU-vs-CUDA parity, EGL devices, CUDA–GL
# interop round trip), benchmarks at 30k, 100k, 1M and 10M particles with and without per-stage events,
# a CPU benchmark for scale, compute-sanitizer (memcheck, racecheck) on a short run, and a
# headless 1920×1080 render of ~1M particles through interop. Logs go to $OUT (at most 8 files:
# summary.txt, doctor.log, bench-cuda.log, bench-cpu-100000.log, sanitizer.log, render.log and
# render-1m-1080p.png).
#
# The device machine has no cargo: build here, then carry the binary.
#
#   1. Here, in the repository root of the checkout the device call sends (the session's own
#      checkout):
#        scripts/setup.sh && cargo build --release
#        mkdir -p out/device && cp target/release/fluidlab out/device/
#      (`out/` is git-ignored, so it travels only when carried.)
#      And the GL loader packages (as the device README says; `.gl` is git-ignored), without
#      which doctor's "EGL devices" and "CUDA–GL interop" lines SKIP:
#        mkdir -p .gl /tmp/amd64/partial; o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#        apt-get $o update; (cd .gl && apt-get $o download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
#   2. One device call:
#        run(command="bash scripts/device-check.sh", carry=["out/device", ".gl"], timeout_s=420)
#   3. Read $OUT/summary.txt first; doctor.log and bench-*.log hold the figures.
#
# Optional: FLUIDLAB_BIN (default out/device/fluidlab), OUT (default out/device-check).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/device-check}
BIN=${FLUIDLAB_BIN:-out/device/fluidlab}
mkdir -p "$OUT"
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }
: >"$OUT/summary.txt"

# GL loader packages carried in .gl (see above): unpacked into / as the device README says.
if compgen -G ".gl/*.deb" >/dev/null; then
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

# Everything ends within BUDGET seconds (the device call's timeout_s is 420), even if a step hangs.
BUDGET=${BUDGET:-380}
failed=0
step() { # name, timeout seconds, log file, command...
    local name=$1 limit=$2 log=$3
    shift 3
    local start=$SECONDS left=$((BUDGET - SECONDS))
    if ((left < 15)); then
        summary "SKIP $name (the script's time budget is spent)"
        failed=1
        return
    fi
    ((limit > left)) && limit=$left
    timeout "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    if [[ $rc -eq 0 ]]; then summary "PASS $name ($((SECONDS - start)) s)"; else
        summary "FAIL $name (exit $rc after $((SECONDS - start)) s, see $(basename "$log"))"
        failed=1
    fi
}

# Doctor: driver, GPU, PTX origin, restart leak check, parity (one frame, 200 frames).
step "doctor" 150 "$OUT/doctor.log" "$BIN" doctor
grep -E '^(PASS|FAIL|SKIP)' "$OUT/doctor.log" | sed 's/^/  doctor: /' >>"$OUT/summary.txt"

# Benchmarks at the issue's sizes (30k: launch overhead; 10M: memory per particle): per-stage
# CUDA events (table, then JSON), then JSON without events for the top speed.
sizes=30000,100000,1000000,10000000
log="$OUT/bench-cuda.log"
step "bench cuda $sizes" 100 "$log" "$BIN" bench dam-break --backend cuda --particles "$sizes" --steps 50 --warmup 10
step "bench cuda $sizes (json)" 100 "$log" "$BIN" bench dam-break --backend cuda --particles "$sizes" --steps 50 --warmup 10 --json
step "bench cuda $sizes, no stage events (json)" 100 "$log" "$BIN" bench dam-break --backend cuda --particles "$sizes" --steps 50 --warmup 10 --json --no-stage-timing
grep -E 'step:|on cuda' "$log" | sed 's/^ */  /' >>"$OUT/summary.txt"
step "bench cpu 100000 particles (for scale)" 90 "$OUT/bench-cpu-100000.log" "$BIN" bench dam-break --backend cpu --particles 100000 --steps 5 --warmup 1
grep -E 'step:' "$OUT/bench-cpu-100000.log" | sed 's/^ */  cpu 100000: /' >>"$OUT/summary.txt"

# Memory errors and shared-memory races in every kernel, on a short run.
if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        step "compute-sanitizer $tool" 90 "$OUT/sanitizer.log" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$BIN" bench dam-break --backend cuda --particles 20000 --steps 2 --warmup 0
    done
else
    summary "SKIP compute-sanitizer (not on this machine)"
fi

# Headless render through the interop path: ~1M particles (the dam break at spacing 6.2 mm),
# 1920×1080, per-pass and simulation timings; one frame comes back as a PNG.
scene=/tmp/dam-break-1m.toml
sed 's/^spacing = .*/spacing = 0.0062/' scenes/dam-break.toml >"$scene"
step "render 1920x1080, ~1M particles, cuda + interop" 60 "$OUT/render.log" "$BIN" render "$scene" --backend cuda \
    --frames 20 --size 1920x1080 --out /tmp/render --timings
grep -iE 'interop|pass|total|simulation' "$OUT/render.log" | sed 's/^/  render: /' >>"$OUT/summary.txt"
last=$(ls /tmp/render/*.png 2>/dev/null | tail -1)
[[ -n $last ]] && cp "$last" "$OUT/render-1m-1080p.png"
summary "device-check: $([[ $failed -eq 0 ]] && echo 'all PASS' || echo 'some checks FAILED')"
exit $failed
