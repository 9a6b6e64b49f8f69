// What kernels/pool.cu needs beyond cuda_shim.h to compile as plain C++ (tests/emulation/pool.cpp,
// src/sims/pool/cuda/emulation.rs): float2, int2, __constant__, gridDim, double hypot, and the
// surface texels written into host memory instead of a surface object.
#pragma once
#define POOL_EMULATION 1
#include "cuda_shim.h"
#include <vector>

#define __constant__
struct float2 { float x, y; };
struct int2 { int x, y; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
using std::fmax;
using std::hypot;
extern Dim gridDim;

// The texture: RGBA32F rows, `texel_width` texels each.
extern std::vector<float> texels;
extern int texel_width;
inline void put_texel(unsigned long long, int x, int y, float4 c) {
    size_t at = ((size_t)y * texel_width + x) * 4;
    texels[at] = c.x; texels[at + 1] = c.y; texels[at + 2] = c.z; texels[at + 3] = c.w;
}
