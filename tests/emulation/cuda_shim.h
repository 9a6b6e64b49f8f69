// Just enough of CUDA for kernels/pbf.cu to compile as plain C++ and run on the CPU, one
// thread at a time (src/sims/pbf/cuda/emulation.rs): the built-ins (cuda_builtins.h) and the
// warp and block primitives each emulation defines as it needs (scan_test.cpp adds real
// barriers and shuffles). PBF_EMULATION selects pbf.cu's one-thread-at-a-time sums.
#pragma once
#define PBF_EMULATION 1
#include "cuda_builtins.h"

unsigned __shfl_up_sync(unsigned mask, unsigned value, int offset);
unsigned __shfl_xor_sync(unsigned mask, unsigned value, int lane_mask);
void __syncthreads();
