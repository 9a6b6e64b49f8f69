#!/usr/bin/env bash
# CPU scaling of the dam break: ms per solver step and cost per particle at several sizes,
# median of RUNS runs (each itself the median of its timed steps). Prints a markdown table.
#
#   benchmarks/cpu-scaling.sh [SIZES] [RUNS]      e.g. benchmarks/cpu-scaling.sh 10000,40000,160000 3
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-10000,40000,160000}
runs=${2:-3}
cargo build --release --quiet
log=$(mktemp)
for run in $(seq "$runs"); do
    target/release/fluidlab bench dam-break --backend cpu --particles "$sizes" --steps 10 --warmup 3 --json >>"$log"
done
python3 - "$log" <<'PY'
import json, statistics, sys, os
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows.setdefault(r["particles"], []).append(r)
print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f} (the benchmark itself keeps {next(iter(rows.values()))[0]['threads']} threads busy)")
print("| particles | ms per solver step | µs per 1000 particle-steps | particle-steps/s | slowest stage |")
print("|---:|---:|---:|---:|---|")
for n in sorted(rows):
    runs = rows[n]
    ms = statistics.median(r["ms_per_substep"] for r in runs)
    rate = statistics.median(r["particle_steps_per_second"] for r in runs)
    stages = runs[0]["stages"]
    slowest = max(stages, key=lambda s: s["ms"])
    print(f"| {n} | {ms:.2f} | {1e6 * ms / n:.1f} | {rate:.3g} | {slowest['stage']} |")
PY
rm -f "$log"
