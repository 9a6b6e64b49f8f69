// Vector math on CUDA's built-in float3/float4, shared by every kind's kernels: the operators
// and products the C++ CUDA headers do not define. No system headers (NVRTC compiles this at
// run time when the binary carries no prebuilt PTX).
#pragma once

__device__ __forceinline__ float3 make3(float4 v) { return make_float3(v.x, v.y, v.z); }
__device__ __forceinline__ float4 make4(float3 v) { return make_float4(v.x, v.y, v.z, 0.0f); }
__device__ __forceinline__ float3 operator+(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ float3 operator-(float3 a, float3 b) { return make_float3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ float3 operator*(float3 a, float s) { return make_float3(a.x * s, a.y * s, a.z * s); }
__device__ __forceinline__ void operator+=(float3& a, float3 b) { a.x += b.x; a.y += b.y; a.z += b.z; }
__device__ __forceinline__ float dot3(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ float3 cross3(float3 a, float3 b) {
    return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
__device__ __forceinline__ bool finite3(float3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
