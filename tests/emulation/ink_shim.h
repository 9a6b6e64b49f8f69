// What kernels/ink.cu needs beyond cuda_shim.h to compile as plain C++ (tests/emulation/ink.cpp,
// src/sims/ink/cuda/emulation.rs): the picture's texel writes into host memory instead of a
// surface.
#pragma once
#define INK_EMULATION 1
#include "cuda_shim.h"
#include <vector>

// The picture: RGBA8 rows from the bottom, `texel_width` texels each.
extern std::vector<unsigned char> texels;
extern int texel_width;
inline void put_texel(unsigned long long, int x, int y, uchar4 c) {
    size_t at = ((size_t)y * texel_width + x) * 4;
    texels[at] = c.x; texels[at + 1] = c.y; texels[at + 2] = c.z; texels[at + 3] = c.w;
}
