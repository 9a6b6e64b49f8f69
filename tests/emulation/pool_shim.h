// What kernels/pool.cu needs beyond cuda_shim.h to compile as plain C++ (tests/emulation/pool.cpp,
// src/sims/pool/cuda/emulation.rs): the surface texels written into host memory instead of a
// surface object.
#pragma once
#define POOL_EMULATION 1
#include "cuda_shim.h"
#include <vector>

// The texture: RGBA32F rows, `texel_width` texels each.
extern std::vector<float> texels;
extern int texel_width;
inline void put_texel(unsigned long long, int x, int y, float4 c) {
    size_t at = ((size_t)y * texel_width + x) * 4;
    texels[at] = c.x; texels[at + 1] = c.y; texels[at + 2] = c.z; texels[at + 3] = c.w;
}
