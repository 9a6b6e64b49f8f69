#!/usr/bin/env bash
# Side-by-side CPU comparison: SPlisHSPlasH's PBF (via pysplishsplash) vs fluidlab's CPU solver
# on the same dam break.  Usage:
#
#   benchmarks/peers/compare.sh [N ...]          # default N: 40000
#
# Environment knobs (defaults in brackets):
#   RUNS [3]           runs of each program per N (the table shows medians over runs)
#   STEPS [100]        timed steps per run, both programs
#   WARMUP [10]        untimed warm-up steps, both programs
#   THREADS [nproc]    OMP_NUM_THREADS for SPlisHSPlasH, RAYON_NUM_THREADS for fluidlab
#   SPLISH_DT [0.0083] SPlisHSPlasH's fixed dt.  The unit compared is one PBF solve (4 iterations):
#                      one SPlisHSPlasH step = one fluidlab substep (fluidlab splits its dt=0.0166
#                      step into >= 2 substeps, more when its CFL limit asks; the count comes from
#                      its JSON).  0.0083 = 0.0166/2, and at it SPlisHSPlasH's soft walls mostly
#                      hold (~0.6% of particles escape by 0.9 s at N=40000; at 0.0166 ~70% do)
#   SPLISH_ARGS []     extra arguments for splishsplash_pbf.py (e.g. "--boundary akinci", or
#                      "--max-error 0.1 --iterations 2" for its density-error rule)
#   FLUIDLAB [target/release/fluidlab]
#   FLUIDLAB_SCENE [dam-break]  the scene fluidlab benches (a preset or a file: e.g. the dam break
#                      with `max_density_error`, `min_iterations`, `cfl = 0` to match SPlisHSPlasH's
#                      error rule at its dt; benchmarks/README.md has the files)
#   WAIT_IDLE [180]    before each run, wait up to this many seconds for the CPUs to be >= 85% idle
#                      (0: don't wait); the table also reports how many cores OTHER processes kept
#                      busy during the runs, since a shared machine skews OpenMP code badly
#   RUN_TIMEOUT [900]  seconds after which one run of either program is killed and counted as failed
#
# Raw JSON lines and stderr logs go to benchmarks/peers/results/<timestamp>-XXXX/ (git-ignored).
# Only one compare.sh runs at a time per machine (flock on $TMPDIR/fluidlab-peers-compare.lock).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
RUNS="${RUNS:-3}"
STEPS="${STEPS:-100}"
WARMUP="${WARMUP:-10}"
THREADS="${THREADS:-$(nproc)}"
SPLISH_DT="${SPLISH_DT:-0.0083}"
SPLISH_ARGS="${SPLISH_ARGS:-}"
FLUIDLAB="${FLUIDLAB:-$ROOT/target/release/fluidlab}"
FLUIDLAB_SCENE="${FLUIDLAB_SCENE:-dam-break}"
RUN_TIMEOUT="${RUN_TIMEOUT:-900}"
WAIT_IDLE="${WAIT_IDLE:-180}"
SIZES=("$@")
[ "${#SIZES[@]}" -eq 0 ] && SIZES=(40000)

"$HERE/setup.sh" >&2
# shellcheck source=peer_env.sh
source "$HERE/peer_env.sh"   # LD_PRELOAD of the system libGLdispatch (pysplishsplash segfaults without it)
PY="$HERE/.venv/bin/python"

# One comparison at a time on this machine: two at once would each count as the other's load.
LOCK="${TMPDIR:-/tmp}/fluidlab-peers-compare.lock"
exec 9>"$LOCK"
if ! flock -n 9; then
    echo "compare.sh: another compare.sh is running on this machine; waiting for it ($LOCK)" >&2
    flock 9
fi

mkdir -p "$HERE/results"
OUTDIR="$(mktemp -d "$HERE/results/$(date +%Y%m%d-%H%M%S)-XXXX")"
THEIRS="$OUTDIR/splishsplash.jsonl"
OURS="$OUTDIR/fluidlab.jsonl"
: >"$THEIRS"
: >"$OURS"

have_ours=1
if [ ! -x "$FLUIDLAB" ]; then
    echo "compare.sh: $FLUIDLAB not found (build it with: cargo build --release); skipping fluidlab" >&2
    have_ours=0
elif ! "$FLUIDLAB" bench --help >/dev/null 2>&1; then
    echo "compare.sh: $FLUIDLAB has no 'bench' command yet; skipping fluidlab" >&2
    have_ours=0
fi

load1() { cut -d' ' -f1 /proc/loadavg; }
CLK_TCK="$(getconf CLK_TCK)"
# busy and total jiffies of all CPUs
cpu_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
wait_idle() {
    [ "$WAIT_IDLE" -gt 0 ] || return 0
    local waited=0 b1 t1 b2 t2
    while [ "$waited" -lt "$WAIT_IDLE" ]; do
        read -r b1 t1 < <(cpu_jiffies); sleep 3; read -r b2 t2 < <(cpu_jiffies)
        if [ $((t2 - t1)) -gt 0 ] && [ $((100 * (b2 - b1) / (t2 - t1))) -le 15 ]; then return 0; fi
        waited=$((waited + 3))
    done
    echo "compare.sh: CPUs still busy after ${WAIT_IDLE}s of waiting; measuring anyway" >&2
}
# run_measured OUTVAR CMD...: runs CMD, stores its stdout in OUTVAR, and sets OTHERS to the average
# number of cores that other processes kept busy meanwhile (system busy time minus CMD's own CPU time)
run_measured() {
    local __var=$1; shift
    local b1 t1 b2 t2 start end own rc=0 tf __out
    tf=$(mktemp)
    read -r b1 t1 < <(cpu_jiffies); start=$(date +%s.%N)
    __out=$(/usr/bin/time -f '%U %S' -o "$tf" "$@") || rc=$?
    printf -v "$__var" '%s' "$__out"
    end=$(date +%s.%N); read -r b2 t2 < <(cpu_jiffies)
    own=$(awk '{print $1 + $2}' "$tf" 2>/dev/null | tail -n 1); rm -f "$tf"
    OTHERS=$(awk -v b="$((b2 - b1))" -v hz="$CLK_TCK" -v own="${own:-0}" -v s="$start" -v e="$end" \
        'BEGIN { w = e - s; o = (b / hz - own) / w; if (o < 0) o = 0; printf "%.2f", o }')
    return $rc
}

echo "compare.sh: N=${SIZES[*]} runs=$RUNS steps=$STEPS warmup=$WARMUP threads=$THREADS splish_dt=$SPLISH_DT" >&2
echo "compare.sh: results in $OUTDIR" >&2
for n in "${SIZES[@]}"; do
    for run in $(seq 1 "$RUNS"); do
        wait_idle
        echo "compare.sh: N=$n run $run/$RUNS: SPlisHSPlasH (load $(load1))" >&2
        # shellcheck disable=SC2086
        if OMP_NUM_THREADS="$THREADS" run_measured line timeout "$RUN_TIMEOUT" "$PY" "$HERE/splishsplash_pbf.py" \
                --particles "$n" --steps "$STEPS" --warmup "$WARMUP" --dt "$SPLISH_DT" --iterations 4 $SPLISH_ARGS \
                2>>"$OUTDIR/splishsplash.stderr.log"; then
            echo "$line" | tail -n 1 | sed "s/^{/{\"requested\": $n, \"others_cores\": $OTHERS, /" >>"$THEIRS"
        else
            echo "compare.sh: SPlisHSPlasH run failed or timed out after ${RUN_TIMEOUT}s (see $OUTDIR/splishsplash.stderr.log)" >&2
        fi
        if [ "$have_ours" = 1 ]; then
            wait_idle
            echo "compare.sh: N=$n run $run/$RUNS: fluidlab (load $(load1))" >&2
            if RAYON_NUM_THREADS="$THREADS" run_measured out timeout "$RUN_TIMEOUT" "$FLUIDLAB" bench "$FLUIDLAB_SCENE" \
                    --particles "$n" --steps "$STEPS" --warmup "$WARMUP" --backend cpu --json \
                    2>>"$OUTDIR/fluidlab.stderr.log"; then
                line=$(printf '%s\n' "$out" | grep '^{' | tail -n 1 || true)
                if [ -n "$line" ]; then
                    echo "$line" | sed "s/^{/{\"requested\": $n, \"others_cores\": $OTHERS, /" >>"$OURS"
                else
                    echo "compare.sh: fluidlab printed no JSON object; skipping it" >&2
                    have_ours=0
                fi
            else
                echo "compare.sh: 'fluidlab bench dam-break ... --json' failed or timed out after ${RUN_TIMEOUT}s" \
                     "(see $OUTDIR/fluidlab.stderr.log); no fluidlab figure for this run" >&2
            fi
        fi
    done
done

"$PY" - "$THEIRS" "$OURS" "$THREADS" "$STEPS" "$WARMUP" "$SPLISH_DT" <<'PY'
import json, statistics, sys

theirs_path, ours_path, threads, steps, warmup, splish_dt = sys.argv[1:]

def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows.setdefault(r["requested"], []).append(r)
    return rows

theirs, ours = load(theirs_path), load(ours_path)
med = statistics.median

def fmt(x, digits=1):
    return "—" if x is None else f"{x:,.{digits}f}"

print()
print(f"SPlisHSPlasH 2.19.0 PBF vs fluidlab CPU, dam break, {threads} threads, {steps} timed steps after {warmup} warm-up, "
      f"medians over runs (each run: median step time).  One *solve* = one PBF step (4 iterations, or as many as "
      f"the density-error rule takes): one SPlisHSPlasH step (dt {splish_dt}) = one fluidlab substep.")
print()
print("| N asked | SPlisHSPlasH particles | SPlisHSPlasH iterations/solve | SPlisHSPlasH ms/solve | "
      "SPlisHSPlasH particle-solves/s | escaped | fluidlab particles | fluidlab iterations/solve | "
      "fluidlab ms/step (substeps) | fluidlab ms/solve | fluidlab particle-solves/s | ratio ours/theirs |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in sorted(set(theirs) | set(ours)):
    t = theirs.get(n, [])
    o = ours.get(n, [])
    t_n = t[0]["particles"] if t else None
    t_ms = med([r["ms_per_step"] for r in t]) if t else None
    t_ps = med([r["particles"] / (r["ms_per_step"] / 1e3) for r in t]) if t else None
    t_esc = max(r.get("escaped_particles", 0) for r in t) if t else None
    t_it = med([float(r.get("iterations_mean", r["iterations"])) for r in t]) if t else None
    o_it = med([float(r.get("iterations", 4)) for r in o]) if o else None
    o_n = o[0]["particles"] if o else None
    if o:
        # fluidlab may substep adaptively: "substeps" is then the mean number of solves per step
        subs = [max(1.0, float(r.get("substeps", 1))) for r in o]
        o_step = med([r["ms_per_step"] for r in o])
        o_solve = med([r.get("ms_per_substep", r["ms_per_step"] / s) for r, s in zip(o, subs)])
        o_ps = med([r["particles"] / (r.get("ms_per_substep", r["ms_per_step"] / s) / 1e3) for r, s in zip(o, subs)])
        o_sub = subs[0]
    else:
        o_step = o_solve = o_ps = o_sub = None
    ratio = (o_ps / t_ps) if (o_ps and t_ps) else None
    print(f"| {n:,} | {fmt(t_n, 0)} | {fmt(t_it)} | {fmt(t_ms)} | {fmt(t_ps, 0)} | {fmt(t_esc, 0)} | {fmt(o_n, 0)} | "
          f"{fmt(o_it)} | {fmt(o_step)}{f' ({o_sub:g})' if o_sub else ''} | {fmt(o_solve)} | {fmt(o_ps, 0)} | "
          f"{'—' if ratio is None else f'{ratio:.2f}×'} |")
print()
others = [r.get("others_cores") for rs in list(theirs.values()) + list(ours.values()) for r in rs]
others = [x for x in others if x is not None]
if others:
    print(f"Cores kept busy by OTHER processes during the runs: {min(others):.2f}–{max(others):.2f} on average "
          f"(anything above ~0.1 means the figures are skewed; OpenMP's static schedule suffers most).")
if any(r.get("escaped_particles", 0) > 0 for rs in theirs.values() for r in rs):
    print("Note: 'escaped' counts SPlisHSPlasH particles that ended outside the container (its walls are soft; "
          "a large dt lets fast particles through).  Many escaped particles mean its step times are not "
          "those of a dam break; lower SPLISH_DT.")
if not ours:
    print("fluidlab: not run (binary or 'bench' command missing).")
PY
