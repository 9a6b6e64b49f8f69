// Statistics: block partials (double), finished in one block per quantity. Included by
// particles.cu, after the records and the vector helpers.

#include "common/reduce.cuh"

// Whether a vector's components are all finite (glam's `is_finite`).
__device__ __forceinline__ bool finite3(vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

// The quantities of `reduce_nodes`, per block: the body's non-finite nodes (a sum), then the
// box around its finite nodes as six largest values (frame.rs `non_finite_nodes`, body.rs
// `bounds`): −x, −y, −z (the lowest corner, negated), x, y, z (the highest); NO_LARGEST
// where no node of the block is finite. The box is where the wind arrow stands (grab.rs `arrow_base`).
#define NODES_BAD 0
#define NODES_BOX 1
#define NODES_QUANTITIES 7
#define NODES_MAX_MASK 0x7eu

// Below any value a maximum meets (no INFINITY under NVRTC): where a maximum starts.
#define NO_LARGEST -1.0e308

// Per block: `reduce_nodes`' quantities into partials[NODES_QUANTITIES·block + quantity]. A
// body's energies are `body_stats`' (on demand, for the panel); every frame needs only these.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_nodes(unsigned nodes, const float* __restrict__ position, double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned k = thread_index();
    double bad = 0.0, box[6];
    for (int q = 0; q < 6; ++q) box[q] = NO_LARGEST;
    if (k < nodes) {
        vec3 x = load3(position, k);
        if (finite3(x)) {
            box[0] = -(double)x.x, box[1] = -(double)x.y, box[2] = -(double)x.z;
            box[3] = x.x, box[4] = x.y, box[5] = x.z;
        } else {
            bad = 1.0;
        }
    }
    bad = block_reduce<PARTICLES_BLOCK>(bad, false, shared);
    for (int q = 0; q < 6; ++q) box[q] = block_reduce<PARTICLES_BLOCK>(box[q], true, shared);
    if (threadIdx.x == 0) {
        double* out = partials + NODES_QUANTITIES * blockIdx.x;
        out[NODES_BAD] = bad;
        for (int q = 0; q < 6; ++q) out[NODES_BOX + q] = box[q];
    }
}

// Per block, the fountain's end of frame (the CPU's figures, frame.rs `non_finite_heights`,
// `basin_highest`, `non_finite_particles`), into partials[3·block + quantity]: over basin node
// m, its non-finite nodes (0) and largest |height| (1: a NaN node has no size, f32::max passes
// it over; an infinite one is the largest); over particle m, the particles alive whose
// position or velocity is not finite (2). The alive are the first stats[STAT_ALIVE] (collide's
// count; the slots past it hold the other buffer's stale particles). Launched over the nodes
// or the particles before `collide`, whichever are more.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_fountain(BasinStep s, const unsigned* __restrict__ stats, const float* __restrict__ height,
                const float* __restrict__ position, const float* __restrict__ velocity,
                double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned m = thread_index();
    double bad = 0.0, highest = 0.0, particles = 0.0;
    if (m < (unsigned)(s.n * s.n)) {
        float u = height[m];
        bad = isfinite(u) ? 0.0 : 1.0;
        highest = isnan(u) ? 0.0 : fabs((double)u);
    }
    if (m < stats[STAT_ALIVE]) {
        particles = finite3(load3(position, m)) && finite3(load3(velocity, m)) ? 0.0 : 1.0;
    }
    bad = block_reduce<PARTICLES_BLOCK>(bad, false, shared);
    highest = block_reduce<PARTICLES_BLOCK>(highest, true, shared);
    particles = block_reduce<PARTICLES_BLOCK>(particles, false, shared);
    if (threadIdx.x == 0) {
        partials[3 * blockIdx.x] = bad;
        partials[3 * blockIdx.x + 1] = highest;
        partials[3 * blockIdx.x + 2] = particles;
    }
}

// Quantity blockIdx.x of `blocks` partials (`quantities` per block, partials[quantities·block
// + quantity]) into stats[first + blockIdx.x]: a sum, or the largest (from NO_LARGEST,
// which stays for no value; the other maxima's partials are ≥ 0) where bit blockIdx.x of `max_mask` is set. One
// block per quantity.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_finish(const double* __restrict__ partials, unsigned blocks, unsigned quantities, unsigned max_mask,
              double* __restrict__ stats, unsigned first) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned q = blockIdx.x;
    bool largest = (max_mask >> q) & 1u;
    double value = largest ? NO_LARGEST : 0.0;
    for (unsigned k = threadIdx.x; k < blocks; k += PARTICLES_BLOCK) {
        double v = partials[quantities * k + q];
        value = largest ? fmax(value, v) : value + v;
    }
    value = block_reduce<PARTICLES_BLOCK>(value, largest, shared);
    if (threadIdx.x == 0) stats[first + q] = value;
}

// The panel's figures of a body (frame.rs `BodyFigures`: body.rs `energy` and `max_strain`),
// the quantities of `body_stats`, in the order of `BODY_FIGURES` in cuda/stats.rs.
#define BODY_KINETIC 0    // Σ ½m|v|², J
#define BODY_POTENTIAL 1  // Σ −m·g·x (gravity's potential, 0 at the origin), J
#define BODY_ELASTIC 2    // Σ ½k(l − l₀)² over the springs, J
#define BODY_STRAIN 3     // max |l − l₀|/l₀ over the springs (a maximum; the rest are sums)
#define BODY_QUANTITIES 4

// glam's dot, (x·x' + y·y') + z·z', each operation rounded on its own: the _rn intrinsics are
// never contracted into fused multiply-adds (nvcc contracts plain ones), so the figures'
// terms are the CPU's to the bit.
__device__ __forceinline__ float dot_rn(vec3 a, vec3 b) {
    return __fadd_rn(__fadd_rn(__fmul_rn(a.x, b.x), __fmul_rn(a.y, b.y)), __fmul_rn(a.z, b.z));
}

// glam's cross, each product rounded on its own (as dot_rn; a difference of two intrinsics'
// results has nothing to contract).
__device__ __forceinline__ vec3 cross_rn(vec3 a, vec3 b) {
    return v3(__fmul_rn(a.y, b.z) - __fmul_rn(b.y, a.z), __fmul_rn(a.z, b.x) - __fmul_rn(b.z, a.x),
              __fmul_rn(a.x, b.y) - __fmul_rn(b.x, a.y));
}

// A cell's volume as volume.rs `volume` computes it, each operation rounded on its own.
__device__ __forceinline__ float cell_volume_rn(const vec3* q) {
    float sum = 0.0f;
    for (unsigned c = 0; c < 8; ++c) {
        vec3 p = q[c];
        float term = dot_rn(sub(q[c ^ 1u], p), cross_rn(sub(q[c ^ 2u], p), sub(q[c ^ 4u], p)));
        sum = __fadd_rn(sum, odd_corner(c) ? -term : term);
    }
    return __fmul_rn(sum, 0.125f);
}

// `body_stats`, per block: the body's figures over its nodes (one thread each) into
// partials[BODY_QUANTITIES·block + quantity], in the fixed tree order of `block_reduce`. The
// springs' are gathered from the nodes' links (compressed rows, as `springs`): a spring is a
// link at both of its ends and is counted at its lower-index end only, so once. Each term is
// the CPU's operations on the same floats in the same order (the f32 part through dot_rn,
// sqrtf and the division IEEE-rounded as nvcc compiles them without fast math; the double
// products through __dmul_rn), so the maximum is the CPU's to the bit and the sums differ from
// the CPU's only in their order (cuda/stats.rs derives the bound). Finished by `reduce_finish`.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
body_stats(unsigned nodes, float mass, float gx, float gy, float gz, const float* __restrict__ position,
           const float* __restrict__ velocity, const unsigned* __restrict__ node_start,
           const unsigned* __restrict__ link_other, const float* __restrict__ link_rest,
           const float* __restrict__ link_stiffness, unsigned side, float modulus,
           const float* __restrict__ cell_rest, double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned k = thread_index();
    double kinetic = 0.0, potential = 0.0, elastic = 0.0, strain = 0.0;
    if (k < nodes) {
        double m = (double)mass;
        vec3 x = load3(position, k), v = load3(velocity, k);
        kinetic = __dmul_rn(0.5 * m, (double)dot_rn(v, v));
        potential = __dmul_rn(-m, (double)dot_rn(v3(gx, gy, gz), x));
        for (unsigned l = node_start[k]; l < node_start[k + 1]; ++l) {
            unsigned other = link_other[l];
            if (other <= k) continue;
            vec3 d = sub(load3(position, other), x);
            float stretch = sqrtf(dot_rn(d, d)) - link_rest[l];
            double s = (double)stretch;
            elastic = __dadd_rn(elastic, __dmul_rn(0.5 * (double)link_stiffness[l], __dmul_rn(s, s)));
            strain = fmax(strain, (double)(fabsf(stretch) / link_rest[l]));
        }
        unsigned n = side, cm = side - 1;
        if (side > 1 && modulus > 0.0f && k % n < cm && (k / n) % n < cm && k / (n * n) < cm) {
            unsigned cell = ((k / (n * n)) * cm + (k / n) % n) * cm + k % n;
            vec3 q[8];
            cell_corners(position, n, cell, q);
            double rest = (double)cell_rest[cell];
            double change = (double)cell_volume_rn(q) - rest;
            double e = __dmul_rn(__dmul_rn(0.5 * (double)modulus / rest, change), change);
            elastic = __dadd_rn(elastic, e);
        }
    }
    kinetic = block_reduce<PARTICLES_BLOCK>(kinetic, false, shared);
    potential = block_reduce<PARTICLES_BLOCK>(potential, false, shared);
    elastic = block_reduce<PARTICLES_BLOCK>(elastic, false, shared);
    strain = block_reduce<PARTICLES_BLOCK>(strain, true, shared);
    if (threadIdx.x == 0) {
        double* out = partials + BODY_QUANTITIES * blockIdx.x;
        out[BODY_KINETIC] = kinetic;
        out[BODY_POTENTIAL] = potential;
        out[BODY_ELASTIC] = elastic;
        out[BODY_STRAIN] = strain;
    }
}
