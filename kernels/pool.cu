// Pool: the height-field / spring-lattice water surface (docs/pool.md), one kernel per stage of
// the CPU solver (`src/sims/pool/cpu.rs`, `drops.rs`) with the same operations in the same
// order; host side in `src/sims/pool/cuda/kernels.rs`. Kernel names are plain `extern "C"` and
// start with their stage's name (disturb, forces, integrate, edges*); stats_*, reduce_finish,
// settle_flags and surface_texels serve the statistics, edits and the renderer's texture.
//
// Layout: N × N nodes, node (i, j) at index j·N + i, resting at (i·h, 0, j·h); one thread per
// node, f32 fields (height, velocity, accel: N²; offset, velocity_h, accel_h: N² float2 of
// (x, z)), flags one byte per node (FIXED, LOCK_H, OPEN as surface.rs).
//
// Reductions (statistics) are block sums (or maxima) in double, one partial per block and
// quantity, finished by reduce_finish in one block per quantity: deterministic, no atomics.

#define POOL_BLOCK 256

// surface.rs: the node never moves; it moves only vertically; it is on an open edge.
#define FIXED 1u
#define LOCK_H 2u
#define OPEN 4u

// params.rs `Model`.
#define MODEL_WAVE 0
#define MODEL_SPRINGS 1

// drops.rs `Target`.
#define TARGET_HEIGHT 0
#define TARGET_VELOCITY 1

// Statistics slots (cuda/mod.rs `slot`).
#define SLOT_KINETIC 0
#define SLOT_POTENTIAL 1
#define SLOT_VOLUME 2
#define SLOT_MAX_HEIGHT 3
#define SLOT_NON_FINITE 4
#define SLOT_FRONT 5

// A substep's constants (cpu.rs `StepConstants`), mirrored field for field by `PoolGrid` in
// src/sims/pool/cuda/kernels.rs.
struct PoolGrid {
    int n;                // nodes per side
    int model;            // MODEL_*
    int shear;            // springs: diagonal springs exist
    float h;              // spacing, m
    float dt;             // substep, s
    float wave_k;         // c²/h², 1/s²
    float spring_k;       // k/m, 1/s²
    float rest;           // structural rest length h/τ, m
    float diagonal_rest;  // √2·h, m (f32, as cpu.rs)
    float decay;          // e^(−damping·dt)
    float mur;            // (c·dt − h)/(c·dt + h)
    float sponge;         // the horizontal sponge's σ_max·dt at open edges (0: none)
    float sponge_width;   // 1 / the sponge's width in nodes
};

// One drop on the grid (drops.rs `disturb`): the stencil's clipped box, computed on the host
// by `footprint`. Mirrored by `PoolDrop` in kernels.rs.
struct PoolDrop {
    int n;             // nodes per side
    int ci, cj;        // the node nearest the centre
    int i0, j0;        // the box's first node
    int width, rows;   // the box's size in nodes
    int reach;         // the stencil's half-width, nodes
    float amplitude;   // m or m/s
};

__device__ __forceinline__ unsigned int pool_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// ---- disturb --------------------------------------------------------------------------------

// One drop: field[m] += amplitude · weight over the box, fixed nodes skipped; `weights` is the
// precomputed Gaussian stencil of (2·reach + 1)² values, `field` the heights or the velocities.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
disturb(const PoolDrop d, const float* __restrict__ weights, const unsigned char* __restrict__ flags,
        float* __restrict__ field) {
    unsigned int t = pool_index();
    if (t >= (unsigned int)(d.width * d.rows)) return;
    int i = d.i0 + (int)(t % (unsigned int)d.width), j = d.j0 + (int)(t / (unsigned int)d.width);
    int m = j * d.n + i;
    if (flags[m] & FIXED) return;
    int a = i + d.reach - d.ci, b = j + d.reach - d.cj, side = 2 * d.reach + 1;
    field[m] += d.amplitude * weights[b * side + a];
}

// ---- forces ---------------------------------------------------------------------------------

// The springs from a node in the order their pulls are summed (cpu.rs SPRINGS): four
// structural, then four diagonal.
__device__ __constant__ int SPRING_DI[8] = {-1, 1, 0, 0, -1, 1, -1, 1};
__device__ __constant__ int SPRING_DJ[8] = {0, 0, -1, 1, -1, -1, 1, 1};

// The lattice's exact step from node (i, j) to node (a, b), m (surface.rs `Surface::step`):
// a spring's vector at rest.
__device__ __forceinline__ float3 lattice_step(const PoolGrid& g, int i, int j, int a, int b) {
    return make_float3(__fmul_rn((float)(a - i), g.h), 0.0f, __fmul_rn((float)(b - j), g.h));
}

// The vector of the spring from node (i, j) to node (a, b), m (surface.rs `Surface::spring`):
// the difference of its ends' offsets and heights plus the lattice's exact step, never of
// absolute positions, whose rounding stirs the lattice (`stats_partials` sums the same in
// double: `spring_energy`).
__device__ __forceinline__ float3 spring_vector(const PoolGrid& g, const float* __restrict__ height,
                                                const float2* __restrict__ offset, int i, int j, int a,
                                                int b) {
    int p = j * g.n + i, q = b * g.n + a;
    float2 op = offset[p], oq = offset[q];
    float3 step = lattice_step(g, i, j, a, b);
    return make_float3(__fadd_rn(oq.x - op.x, step.x), height[q] - height[p], __fadd_rn(oq.y - op.y, step.z));
}

// Every node's acceleration. Wave: c²/h²·Σ(u_nb − u) over the four neighbours, a missing one
// mirroring the node (cpu.rs `wave_forces`). Springs: the pull k·(l − l₀)/l·d of each spring
// that exists, summed in SPRINGS order from zero (`spring_forces`); vertical into accel,
// horizontal into accel_h.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
forces(const PoolGrid g, const float* __restrict__ height, const float2* __restrict__ offset,
       float* __restrict__ accel, float2* __restrict__ accel_h) {
    unsigned int k = pool_index();
    int n = g.n;
    if (k >= (unsigned int)(n * n)) return;
    int i = (int)(k % (unsigned int)n), j = (int)(k / (unsigned int)n);
    if (g.model == MODEL_WAVE) {
        const float* here = height + j * n;
        const float* below = j > 0 ? here - n : here;
        const float* above = j + 1 < n ? here + n : here;
        float c = here[i];
        float left = here[i > 0 ? i - 1 : 0];
        float right = here[i + 1 < n ? i + 1 : n - 1];
        accel[k] = g.wave_k * ((left - c) + (right - c) + (below[i] - c) + (above[i] - c));
        return;
    }
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    int springs = g.shear ? 8 : 4;
    for (int s = 0; s < springs; ++s) {
        int a = i + SPRING_DI[s], b = j + SPRING_DJ[s];
        if (a < 0 || a >= n || b < 0 || b >= n) continue;
        float rest = s >= 4 ? g.diagonal_rest : g.rest;
        float3 d = spring_vector(g, height, offset, i, j, a, b);
        float dx = d.x, dy = d.y, dz = d.z;
        float length = sqrtf(dx * dx + dy * dy + dz * dz);
        float f = length == 0.0f ? 0.0f : g.spring_k * (length - rest) / length;
        fx += f * dx;
        fy += f * dy;
        fz += f * dz;
    }
    accel[k] = fy;
    accel_h[k] = make_float2(fx, fz);
}

// ---- integrate ------------------------------------------------------------------------------

// Symplectic Euler (cpu.rs `integrate`): v ← (v + a·dt)·decay·free, then x ← x + v·dt, with
// free 0 for fixed nodes (vertical) and for locked ones (horizontal, springs only), else 1;
// the horizontal velocity's decay is the sponge's near open edges (cpu.rs `sponge`).
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
integrate(const PoolGrid g, const unsigned char* __restrict__ flags, const float* __restrict__ accel,
          const float2* __restrict__ accel_h, float* __restrict__ height, float* __restrict__ velocity,
          float2* __restrict__ offset, float2* __restrict__ velocity_h) {
    unsigned int k = pool_index();
    if (k >= (unsigned int)(g.n * g.n)) return;
    unsigned int f = flags[k];
    float free = (f & FIXED) ? 0.0f : 1.0f;
    float v = (velocity[k] + accel[k] * g.dt) * g.decay * free;
    velocity[k] = v;
    height[k] += v * g.dt;
    if (g.model == MODEL_SPRINGS) {
        float keep = (f & LOCK_H) ? 0.0f : 1.0f;
        int n = g.n, i = (int)(k % (unsigned int)n), j = (int)(k / (unsigned int)n);
        int d = min(min(i, n - 1 - i), min(j, n - 1 - j));
        float r = fmaxf(1.0f - (float)max(d - 1, 0) * g.sponge_width, 0.0f);
        float damp = g.decay * (1.0f - g.sponge * r * r);
        float2 w = velocity_h[k], b = accel_h[k], x = offset[k];
        w.x = (w.x + b.x * g.dt) * damp * keep;
        x.x += w.x * g.dt;
        w.y = (w.y + b.y * g.dt) * damp * keep;
        x.y += w.y * g.dt;
        velocity_h[k] = w;
        offset[k] = x;
    }
}

// ---- edges ----------------------------------------------------------------------------------

// Edge node q of the 4·(N − 1) (cpu.rs `edge_node`): the bottom row left to right, the right
// column upwards, the top row right to left, the left column downwards, each corner once.
__device__ __forceinline__ int2 edge_node(int n, int q) {
    int side = n - 1;
    if (q < side) return make_int2(q, 0);
    if (q < 2 * side) return make_int2(side, q - side);
    if (q < 3 * side) return make_int2(side - (q - 2 * side), side);
    return make_int2(0, side - (q - 3 * side));
}

// The height before this substep, u − v·dt (cpu.rs `edges`' `before`).
__device__ __forceinline__ float before(const PoolGrid& g, const float* __restrict__ height,
                                        const float* __restrict__ velocity, int m) {
    return height[m] - velocity[m] * g.dt;
}

// Mur's condition on each open, free edge node, from the state after `integrate` (all nodes
// read before any is written: the new heights go to `next`, one per edge node): the mean over
// the node's edges of u_a⁰ + m·(u_a − u_b⁰), a the inner neighbour across that edge.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
edges(const PoolGrid g, const unsigned char* __restrict__ flags, const float* __restrict__ height,
      const float* __restrict__ velocity, float* __restrict__ next) {
    unsigned int q = pool_index();
    int n = g.n;
    if (q >= (unsigned int)(4 * (n - 1))) return;
    int2 node = edge_node(n, (int)q);
    int i = node.x, j = node.y, m = j * n + i;
    if (!(flags[m] & OPEN) || (flags[m] & FIXED)) return;
    float sum = 0.0f, count = 0.0f;
    int inner[4] = {j * n + 1, j * n + n - 2, n + i, (n - 2) * n + i};
    bool on[4] = {i == 0, i == n - 1, j == 0, j == n - 1};
    float old = before(g, height, velocity, m);
    for (int e = 0; e < 4; ++e) {
        if (!on[e]) continue;
        int a = inner[e];
        sum += before(g, height, velocity, a) + g.mur * (height[a] - old);
        count += 1.0f;
    }
    next[q] = sum / count;
}

// The new heights of `edges` applied: u ← next, v ← (next − u⁰)/dt.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
edges_apply(const PoolGrid g, const unsigned char* __restrict__ flags, const float* __restrict__ next,
            float* __restrict__ height, float* __restrict__ velocity) {
    unsigned int q = pool_index();
    int n = g.n;
    if (q >= (unsigned int)(4 * (n - 1))) return;
    int2 node = edge_node(n, (int)q);
    int m = node.y * n + node.x;
    if (!(flags[m] & OPEN) || (flags[m] & FIXED)) return;
    float old = before(g, height, velocity, m);
    float u = next[q];
    height[m] = u;
    velocity[m] = (u - old) / g.dt;
}

// ---- edits ----------------------------------------------------------------------------------

// After new flags (surface.rs `set_flags`, `set_island_node`): fixed nodes at rest, locked
// ones without horizontal offset or motion.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
settle_flags(const PoolGrid g, const unsigned char* __restrict__ flags, float* __restrict__ height,
             float* __restrict__ velocity, float2* __restrict__ offset, float2* __restrict__ velocity_h) {
    unsigned int k = pool_index();
    if (k >= (unsigned int)(g.n * g.n)) return;
    unsigned int f = flags[k];
    if (f & FIXED) {
        height[k] = 0.0f;
        velocity[k] = 0.0f;
    }
    if (f & LOCK_H) {
        offset[k] = make_float2(0.0f, 0.0f);
        velocity_h[k] = make_float2(0.0f, 0.0f);
    }
}

// ---- statistics -----------------------------------------------------------------------------

#include "common/reduce.cuh"

// ½(k/m)(l − l₀)² of the spring from node (i, j) to node (a, b) less its value at rest, lengths
// in f64 (cpu.rs `spring_energy`): the vector is `spring_vector`'s summed in double (surface.rs
// `Surface::spring_f64`), the rest one `lattice_step`, and the difference is taken as
// (l − l_r)·(l + l_r − 2l₀): the lattice at rest, or moved rigidly, has none to the bit.
__device__ __forceinline__ double spring_energy(const PoolGrid& g, const float* __restrict__ height,
                                                const float2* __restrict__ offset, int i, int j, int a,
                                                int b, float rest) {
    int p = j * g.n + i, q = b * g.n + a;
    float2 op = offset[p], oq = offset[q];
    float3 r = lattice_step(g, i, j, a, b);
    double dx = ((double)oq.x - (double)op.x) + (double)r.x;
    double dy = (double)height[q] - (double)height[p];
    double dz = ((double)oq.y - (double)op.y) + (double)r.z;
    double l = hypot(hypot(dx, dy), dz);
    double l_rest = hypot(hypot((double)r.x, (double)r.y), (double)r.z);
    return 0.5 * (double)g.spring_k * ((l - l_rest) * (l + l_rest - 2.0 * (double)rest));
}

// Per block, into partials[q · blocks + block] (cpu.rs `energy`, surface.rs `volume` and
// `max_height`): q = 0 Σ ½(v² + w²) (kinetic), 1 the potential of the pairs and springs that
// start at a node (to its right and above; both diagonals of the cell above-right; each spring
// less its value at the rest positions), 2 Σ u, 3 the largest |u| (NaN ignored, as Rust's
// f32::max), 4 the nodes whose height or velocity is not finite.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
stats_partials(const PoolGrid g, const float* __restrict__ height, const float* __restrict__ velocity,
               const float2* __restrict__ offset, const float2* __restrict__ velocity_h,
               double* __restrict__ partials) {
    __shared__ double shared[POOL_BLOCK];
    unsigned int k = pool_index();
    int n = g.n;
    double kinetic = 0.0, potential = 0.0, volume = 0.0, largest = 0.0, bad = 0.0;
    if (k < (unsigned int)(n * n)) {
        int i = (int)(k % (unsigned int)n), j = (int)(k / (unsigned int)n);
        float v = velocity[k], u = height[k];
        float2 w = velocity_h[k];
        kinetic = 0.5 * (double)(v * v + w.x * w.x + w.y * w.y);
        if (g.model == MODEL_WAVE) {
            if (i + 1 < n) {
                double d = (double)(u - height[k + 1]);
                potential += 0.5 * (double)g.wave_k * d * d;
            }
            if (j + 1 < n) {
                double d = (double)(u - height[k + n]);
                potential += 0.5 * (double)g.wave_k * d * d;
            }
        } else {
            if (i + 1 < n) potential += spring_energy(g, height, offset, i, j, i + 1, j, g.rest);
            if (j + 1 < n) potential += spring_energy(g, height, offset, i, j, i, j + 1, g.rest);
            if (g.shear && i + 1 < n && j + 1 < n) {
                potential += spring_energy(g, height, offset, i, j, i + 1, j + 1, g.diagonal_rest);
                potential += spring_energy(g, height, offset, i + 1, j, i, j + 1, g.diagonal_rest);
            }
        }
        volume = (double)u;
        largest = (double)fmaxf(0.0f, fabsf(u));
        bad = (double)(!isfinite(u) || !isfinite(v));
    }
    unsigned int blocks = gridDim.x;
    double s = block_reduce<POOL_BLOCK>(kinetic, 0, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
    s = block_reduce<POOL_BLOCK>(potential, 0, shared);
    if (threadIdx.x == 0) partials[blocks + blockIdx.x] = s;
    s = block_reduce<POOL_BLOCK>(volume, 0, shared);
    if (threadIdx.x == 0) partials[2 * blocks + blockIdx.x] = s;
    s = block_reduce<POOL_BLOCK>(largest, 1, shared);
    if (threadIdx.x == 0) partials[3 * blocks + blockIdx.x] = s;
    s = block_reduce<POOL_BLOCK>(bad, 0, shared);
    if (threadIdx.x == 0) partials[4 * blocks + blockIdx.x] = s;
}

// Per block the largest distance from (x, z) of a node whose |height| is at least a tenth of
// the largest (stats[SLOT_MAX_HEIGHT], reduced before): frame.rs `front_radius`; 0 when the
// surface is flat.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
stats_front(const PoolGrid g, const float* __restrict__ height, const double* __restrict__ stats, float x,
            float z, double* __restrict__ partials) {
    __shared__ double shared[POOL_BLOCK];
    unsigned int k = pool_index();
    int n = g.n;
    float threshold = 0.1f * (float)stats[SLOT_MAX_HEIGHT];
    double radius = 0.0;
    if (k < (unsigned int)(n * n) && threshold != 0.0f && fabsf(height[k]) >= threshold) {
        int i = (int)(k % (unsigned int)n), j = (int)(k / (unsigned int)n);
        float dx = (float)i * g.h - x, dz = (float)j * g.h - z;
        radius = (double)sqrtf(dx * dx + dz * dz);
    }
    double s = block_reduce<POOL_BLOCK>(radius, 1, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// Block q reduces partials[q · blocks ..][..blocks] (a sum, or the largest where bit q of
// max_mask is set) into out[first + q].
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
reduce_finish(const double* __restrict__ partials, unsigned int blocks, unsigned int max_mask,
              double* __restrict__ out, unsigned int first) {
    __shared__ double shared[POOL_BLOCK];
    unsigned int q = blockIdx.x;
    int take_max = (int)((max_mask >> q) & 1u);
    double value = 0.0;
    for (unsigned int b = threadIdx.x; b < blocks; b += blockDim.x) {
        double x = partials[q * blocks + b];
        value = take_max ? fmax(value, x) : value + x;
    }
    double result = block_reduce<POOL_BLOCK>(value, take_max, shared);
    if (threadIdx.x == 0) out[first + q] = result;
}

// ---- the renderer's texture -----------------------------------------------------------------

#ifndef POOL_EMULATION
// Texel (x, y) of the mapped RGBA32F GL texture (a surface of its level-0 array).
__device__ __forceinline__ void put_texel(unsigned long long surface, int x, int y, float4 c) {
    surf2Dwrite(c, (cudaSurfaceObject_t)surface, x * 16, y);
}
#endif

// One texel per node (surface.rs `texels`): (offset x, height, offset z, 1 if fixed), row j of
// the texture holding the nodes with z = j·h.
extern "C" __global__ void __launch_bounds__(POOL_BLOCK)
surface_texels(const PoolGrid g, const float* __restrict__ height, const float2* __restrict__ offset,
               const unsigned char* __restrict__ flags, unsigned long long surface) {
    unsigned int k = pool_index();
    int n = g.n;
    if (k >= (unsigned int)(n * n)) return;
    float2 o = offset[k];
    float fixed = (flags[k] & FIXED) ? 1.0f : 0.0f;
    put_texel(surface, (int)(k % (unsigned int)n), (int)(k / (unsigned int)n), make_float4(o.x, height[k], o.y, fixed));
}
