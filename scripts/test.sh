#!/usr/bin/env bash
# The README's test command: installs what the tests need, then checks formatting, lints and
# runs every test (release profile: the physics tests simulate thousands of particles), and
# ends with one line totalling the tests of every test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --release --all-targets -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --release 2>&1 | tee "$log"
awk '/^test result:/ { passed += $4; failed += $6; ignored += $8 }
     END { printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, ignored }' "$log"
