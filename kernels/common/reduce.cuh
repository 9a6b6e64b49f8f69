// Block-wide reductions shared by the kinds' statistics kernels (ink, pool, particles).
#pragma once

// Sums (or, with `take_max`, the largest of) `value` over a block of BLOCK threads; every thread
// gets the result. Every thread of the block must call it; `shared` holds BLOCK doubles. The
// tree's order is fixed (stride BLOCK/2, then halving), so the CPU emulation sums as the GPU.
template <unsigned int BLOCK>
__device__ __forceinline__ double block_reduce(double value, int take_max, double* shared) {
    unsigned int t = threadIdx.x;
    shared[t] = value;
    __syncthreads();
    for (unsigned int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) {
            double other = shared[t + stride];
            shared[t] = take_max ? fmax(shared[t], other) : shared[t] + other;
        }
        __syncthreads();
    }
    double result = shared[0];
    __syncthreads();
    return result;
}
