// Statistics: block partials (double), finished in one block per quantity. Included by
// particles.cu, after the records and the vector helpers.

#include "common/reduce.cuh"

// Per block: the body's non-finite nodes and Σ ½m|v|² (partials[2·block], [2·block + 1]).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_nodes(BodyStep b, const float* __restrict__ position, const float* __restrict__ velocity,
             double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned k = thread_index();
    double bad = 0.0, kinetic = 0.0;
    if (k < b.nodes) {
        vec3 x = load3(position, k), v = load3(velocity, k);
        bad = (isfinite(x.x) && isfinite(x.y) && isfinite(x.z)) ? 0.0 : 1.0;
        kinetic = 0.5 / (double)b.inverse_mass * (double)dot(v, v);
    }
    bad = block_reduce<PARTICLES_BLOCK>(bad, false, shared);
    kinetic = block_reduce<PARTICLES_BLOCK>(kinetic, false, shared);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = bad;
        partials[2 * blockIdx.x + 1] = kinetic;
    }
}

// Per block: the basin's non-finite nodes and its largest |height| (partials[2·block], …).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_basin(BasinStep s, const float* __restrict__ height, double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned m = thread_index();
    double bad = 0.0, highest = 0.0;
    if (m < (unsigned)(s.n * s.n)) {
        bad = isfinite(height[m]) ? 0.0 : 1.0;
        highest = fabs((double)height[m]);
        if (!isfinite(height[m])) highest = 0.0;
    }
    bad = block_reduce<PARTICLES_BLOCK>(bad, false, shared);
    highest = block_reduce<PARTICLES_BLOCK>(highest, true, shared);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = bad;
        partials[2 * blockIdx.x + 1] = highest;
    }
}

// Quantity blockIdx.x of `blocks` partials (two per block) into stats[first + blockIdx.x]: a
// sum, or the largest where bit blockIdx.x of `max_mask` is set. One block per quantity.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_finish(const double* __restrict__ partials, unsigned blocks, unsigned max_mask,
              double* __restrict__ stats, unsigned first) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned q = blockIdx.x;
    bool largest = (max_mask >> q) & 1u;
    double value = 0.0;
    for (unsigned k = threadIdx.x; k < blocks; k += PARTICLES_BLOCK) {
        double v = partials[2 * k + q];
        value = largest ? fmax(value, v) : value + v;
    }
    value = block_reduce<PARTICLES_BLOCK>(value, largest, shared);
    if (threadIdx.x == 0) stats[first + q] = value;
}
