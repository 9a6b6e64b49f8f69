#!/usr/bin/env bash
# The README's test command: installs what the tests need, then checks formatting, the docs'
# links, lints and runs every test (release profile: the physics tests simulate thousands of
# particles), and ends with one line totalling the tests of every test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
python3 scripts/check-doc-links.py
cargo clippy --release --all-targets -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Every test binary runs and the totals come also after a failure, which they count; the
# script then fails as cargo did.
status=0
cargo test --release --no-fail-fast 2>&1 | tee "$log" || status=$?
# A test this machine cannot run (no GPU, no libnvrtc, no nvcc, no C++20 compiler) is marked
# ignored by build.rs with the reason, and counted as skipped (docs/testing.md): list them.
sed -nE 's/^test (.*) \.\.\. ignored(, (.*))?$/skipped: \1: \3/p' "$log"
awk '/^test result:/ { passed += $4; failed += $6; ignored += $8 }
     END { printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, ignored }' "$log"
exit "$status"
