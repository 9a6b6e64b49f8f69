#!/usr/bin/env bash
# The README's test command: installs what the tests need, then checks formatting, lints and
# runs every test (release profile: the physics tests simulate thousands of particles).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --release --all-targets -- -D warnings
cargo test --release
