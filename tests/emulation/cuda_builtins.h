// The CUDA built-ins every emulation of the kernels needs to compile them as plain C++: vector
// types, qualifiers, the block and thread indices, the bit casts and explicitly rounded
// operations. Atomics are plain read-modify-writes: exact wherever threads run one at a time
// on one OS thread (every emulation here, the emulated driver included).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>

struct float2 { float x, y; };
struct float3 { float x, y, z; };
struct float4 { float x, y, z, w; };
struct int2 { int x, y; };
struct int3 { int x, y, z; };
struct uchar4 { unsigned char x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) { return {x, y, z, w}; }

#define __global__
#define __device__
#define __constant__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __restrict__
#define __shared__ static

struct Dim { unsigned x, y, z; };
extern thread_local Dim blockIdx, threadIdx;
extern Dim blockDim, gridDim;

inline unsigned atomicAdd(unsigned* a, unsigned v) { unsigned old = *a; *a += v; return old; }
inline double atomicAdd(double* a, double v) { double old = *a; *a += v; return old; }
inline unsigned atomicMax(unsigned* a, unsigned v) { unsigned old = *a; if (v > old) *a = v; return old; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
// CUDA's explicitly rounded operations, never contracted into a fused multiply-add (nvcc
// leaves them alone; the volatile result keeps -ffp-contract=fast off them here too).
inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
using std::fabs;
using std::fmax;
using std::hypot;
using std::isfinite;
using std::isnan;
using std::max;
using std::min;
using std::sqrt;
