// The frame's statistics reduced on the GPU (the viewer's statistics panel, twice a second):
// per particle the terms of `FrameStats::measure` (src/sims/pbf/stats.rs) — |ρ/ρ₀ − 1|, the
// compression max(ρ/ρ₀ − 1, 0) and ρ/ρ₀ − 1 itself, |v|², the position, the neighbour count —
// summed or maximised in double, block by block (`frame_stats`: one partial per block and
// quantity, in the fixed tree order of `block_reduce`), then finished in one block per quantity
// (`frame_stats_finish`). No atomics: the same bits every run. 16 doubles come back instead of
// the particles (44 bytes each). Included by pbf.cu.
#include "common/reduce.cuh"

// The quantities, in the order of `STATS_SLOTS` in src/sims/pbf/cuda/stats.rs.
#define STATS_ERROR_SUM 0
#define STATS_ERROR_MAX 1
#define STATS_COMPRESSION_SUM 2
#define STATS_RELATIVE_MAX 3
#define STATS_SPEED_SQUARED 4
#define STATS_POSITION_SUM 5     // x, y, z: 5, 6, 7
#define STATS_LOWEST_NEGATED 8   // −min x, −min y, −min z: 8, 9, 10 (maxima)
#define STATS_HIGHEST 11         // max x, y, z: 11, 12, 13
#define STATS_NEIGHBOURS_SUM 14
#define STATS_NEIGHBOURS_MAX 15
#define STATS_QUANTITIES 16

// Below any value a maximum meets (no HUGE_VAL under NVRTC); an empty reduction's maxima stay
// here, and the host reports zeros for no particles.
#define STATS_LOWEST -1.0e308

// Whether quantity k is a maximum (else a sum).
__device__ __forceinline__ int stats_is_max(int k) {
    return k == STATS_ERROR_MAX || k == STATS_RELATIVE_MAX || (k >= STATS_LOWEST_NEGATED && k < STATS_NEIGHBOURS_SUM) ||
           k == STATS_NEIGHBOURS_MAX;
}

// One thread per particle of `count` (sorted order: sums do not care), one block partial per
// quantity into partials[k · blocks + blockIdx.x].
extern "C" __global__ void __launch_bounds__(PBF_BLOCK)
frame_stats(unsigned int count, float rest_density, const float4* __restrict__ positions,
            const float4* __restrict__ velocities, const float* __restrict__ densities,
            const unsigned int* __restrict__ neighbor_counts, double* __restrict__ partials) {
    __shared__ double shared[PBF_BLOCK];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    double q[STATS_QUANTITIES];
    for (int k = 0; k < STATS_QUANTITIES; ++k) q[k] = stats_is_max(k) ? STATS_LOWEST : 0.0;
    if (i < count) {
        double relative = (double)densities[i] / (double)rest_density - 1.0;
        float4 x = positions[i], v = velocities[i];
        float speed_squared = v.x * v.x + v.y * v.y + v.z * v.z;
        q[STATS_ERROR_SUM] = fabs(relative);
        q[STATS_ERROR_MAX] = fabs(relative);
        q[STATS_COMPRESSION_SUM] = fmax(relative, 0.0);
        q[STATS_RELATIVE_MAX] = relative;
        q[STATS_SPEED_SQUARED] = (double)speed_squared;
        q[STATS_POSITION_SUM] = (double)x.x;
        q[STATS_POSITION_SUM + 1] = (double)x.y;
        q[STATS_POSITION_SUM + 2] = (double)x.z;
        q[STATS_LOWEST_NEGATED] = -(double)x.x;
        q[STATS_LOWEST_NEGATED + 1] = -(double)x.y;
        q[STATS_LOWEST_NEGATED + 2] = -(double)x.z;
        q[STATS_HIGHEST] = (double)x.x;
        q[STATS_HIGHEST + 1] = (double)x.y;
        q[STATS_HIGHEST + 2] = (double)x.z;
        q[STATS_NEIGHBOURS_SUM] = (double)neighbor_counts[i];
        q[STATS_NEIGHBOURS_MAX] = (double)neighbor_counts[i];
    }
    // The launch's blocks (the host launches ceil(count / PBF_BLOCK), at least one).
    unsigned int blocks = count == 0u ? 1u : (count + PBF_BLOCK - 1u) / PBF_BLOCK;
    for (int k = 0; k < STATS_QUANTITIES; ++k) {
        double r = block_reduce<PBF_BLOCK>(q[k], stats_is_max(k), shared);
        if (threadIdx.x == 0) partials[(size_t)k * blocks + blockIdx.x] = r;
    }
}

// Block k finishes quantity k over the `blocks` partials of `frame_stats` into out[k]: each
// thread folds a strided run of partials, then the block's tree.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK)
frame_stats_finish(unsigned int blocks, const double* __restrict__ partials, double* __restrict__ out) {
    __shared__ double shared[PBF_BLOCK];
    int k = (int)blockIdx.x;
    int take_max = stats_is_max(k);
    double value = take_max ? STATS_LOWEST : 0.0;
    for (unsigned int b = threadIdx.x; b < blocks; b += blockDim.x) {
        double p = partials[(size_t)k * blocks + b];
        value = take_max ? fmax(value, p) : value + p;
    }
    value = block_reduce<PBF_BLOCK>(value, take_max, shared);
    if (threadIdx.x == 0) out[k] = value;
}
