#!/usr/bin/env bash
# Runs fluidlab on the emulated CUDA driver (docs/cuda-verification.md, "The emulated driver"):
# its CUDA host code for real, the kernels on the CPU. Builds the driver and fluidlab first
# (through the test that builds it), so a change to kernels/ or tests/emulation/driver/ is picked
# up.
#
#   scripts/emulated-gpu.sh [--memcheck] [--interop] FLUIDLAB-ARGUMENTS...
#
#   --memcheck   the AddressSanitizer build: a kernel's access outside its buffer stops the
#                process with the access and the source line (needs gcc's libasan)
#   --interop    CUDA–GL interop emulated on the current EGL context (render, view)
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=plain test=the_emulated_driver_runs_barriers_shuffles_and_surfaces_and_refuses_bad_calls
while [[ ${1:-} == --* ]]; do
    case $1 in
        --memcheck) flavour=memcheck test=the_memcheck_driver_runs_barriers_shuffles_and_surfaces_and_refuses_bad_calls ;;
        --interop) export FLUIDLAB_EMULATED_INTEROP=1 ;;
        *) echo "emulated-gpu.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
if ! cargo test -q --release --test emulated_driver "$test" -- --exact >&2; then
    echo "emulated-gpu.sh: building the emulated driver failed (see above)" >&2
    exit 1
fi
# The test marks the folder it used as the newest.
dir=$(ls -dt "${CARGO_TARGET_DIR:-target}"/tmp/emulated-driver/*-"$flavour" 2>/dev/null | head -1)
if [[ -z $dir ]]; then
    echo "emulated-gpu.sh: no $flavour driver was built: the test was skipped (it needs a C++20 compiler and cuda.h from scripts/setup.sh; memcheck also gcc's libasan)" >&2
    exit 1
fi
dir=$(cd "$dir" && pwd)
export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [[ $flavour == memcheck ]]; then
    LD_PRELOAD=$(${CXX:-c++} -print-file-name=libasan.so)
    export LD_PRELOAD ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0:halt_on_error=1
fi
exec "${CARGO_TARGET_DIR:-target}"/release/fluidlab "$@"
