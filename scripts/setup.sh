#!/usr/bin/env bash
# Installs what fluidlab's build, tests and headless rendering need on a fresh Debian/Ubuntu
# machine. Idempotent: a second run only checks. Used by the README's two commands and CI.
#
#   - Mesa EGL + GL drivers (headless rendering through EGL on llvmpipe) and Xvfb (windowed
#     smoke test): Debian packages, installed with apt-get when missing (root or sudo).
#   - nvcc from PyPI (pinned CUDA 13.0 wheels) into .tools/cuda, so build.rs compiles the CUDA
#     kernels to PTX and the tests can run ptxas, with no CUDA toolkit installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# libxkbcommon-x11-0, libxcursor1, libxi6, libxrandr2: what winit loads at run time on X11.
packages=(libegl1 libegl-mesa0 libgl1-mesa-dri libgles2 xvfb xauth libxkbcommon-x11-0 libxcursor1 libxi6 libxrandr2)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else sudo="none"; fi
    if [[ $sudo == none ]]; then
        echo "setup: please install these Debian packages (needed for rendering tests): ${missing[*]}" >&2
    else
        echo "setup: installing ${missing[*]}" >&2
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

# nvcc 13.0 from PyPI. Newer wheels make PTX the device machine's driver (CUDA 13.0) refuses,
# and unpinned companions mismatch; these four are known to work together.
# nvidia-nvtx brings the header-only NVTX 3, which build.rs compiles in for Nsight ranges.
tools=.tools/cuda
if [[ ! -x $tools/nvidia/cu13/bin/nvcc || ! -f $tools/nvidia/cu13/include/nvtx3/nvToolsExt.h ]]; then
    echo "setup: installing nvcc 13.0 and NVTX from PyPI into $tools" >&2
    python3 -m pip install -q --disable-pip-version-check --upgrade --target "$tools" \
        nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 \
        nvidia-nvtx==13.0.85
fi
