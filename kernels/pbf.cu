// Position Based Fluids (Macklin & Müller 2013), one kernel per stage of the CPU reference
// solver (`src/sims/pbf/cpu/mod.rs`); host side in `src/sims/pbf/cuda/pbf.rs`. Kernel names are plain
// `extern "C"` so Nsight shows them as written here.
//
// Particle arrays are sorted by grid cell every step (counting sort: count with atomics, an
// exclusive scan, a scatter). Neighbour loops walk the 27 cells around a particle as 9
// contiguous x-row ranges of the sorted arrays: no neighbour lists, no caps. A neighbour is a
// particle within h at the positions the grid was built from, as in the CPU solver's lists.
#include "pbf_common.cuh"

#define PBF_BLOCK 256
// At least 4 blocks resident per multiprocessor: gives ptxas a 64-register budget. With the block
// size alone, ptxas 13.0 aims at 40 registers and spills in apply_delta and
// vorticity_confinement; with this bound they use at most 43 and spill nothing (sm_90).
#define PBF_MIN_BLOCKS 4
// The scan: 512 threads × 4 cells per block.
#define SCAN_THREADS 512
#define SCAN_ITEMS_PER_THREAD 4
#define SCAN_ITEMS_PER_BLOCK (SCAN_THREADS * SCAN_ITEMS_PER_THREAD)

__device__ __forceinline__ unsigned int thread_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// v += dt·g; x* = x + dt·v, projected out of obstacles and into the container.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
predict_positions(const PbfParams p, const PbfObstacle* __restrict__ obstacles,
                  const float4* __restrict__ positions, float4* __restrict__ velocities,
                  float4* __restrict__ predicted) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    float3 v = make3(velocities[i]);
    v += make_float3(p.gravity_x, p.gravity_y, p.gravity_z) * p.dt;
    velocities[i] = make4(v);
    predicted[i] = make4(project(p, obstacles, make3(positions[i]) + v * p.dt));
}

// Cell of each particle's x*, and its rank among the particles of that cell (the old count).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
compute_cell_ids(const PbfParams p, const float4* __restrict__ predicted, unsigned int* __restrict__ cell_of,
                 unsigned int* __restrict__ rank, unsigned int* __restrict__ cell_counts) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    int3 c = cell_coords(p, make3(predicted[i]));
    unsigned int cell = cell_index(p, c.x, c.y, c.z);
    cell_of[i] = cell;
    rank[i] = atomicAdd(&cell_counts[cell], 1u);
}

// Exclusive scan of `n` values within blocks of SCAN_ITEMS_PER_BLOCK; each block's total goes to
// `block_sums` (when not null) for the next level. May run in place (input == output: each
// thread reads its items before the barrier and writes them after). With `clear_input` the input (the cell
// counts) is zeroed as it is read, ready for the next step's counting without a memset.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
scan_blocks(unsigned int* input, unsigned int* output,
            unsigned int* __restrict__ block_sums, unsigned int n, int clear_input) {
    __shared__ unsigned int warp_totals[SCAN_THREADS / 32];
    unsigned int base = blockIdx.x * SCAN_ITEMS_PER_BLOCK + threadIdx.x * SCAN_ITEMS_PER_THREAD;
    unsigned int items[SCAN_ITEMS_PER_THREAD];
    unsigned int total = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS_PER_THREAD; ++k) {
        unsigned int index = base + k;
        unsigned int value = 0;
        if (index < n) {
            value = input[index];
            if (clear_input) input[index] = 0;
        }
        items[k] = total;
        total += value;
    }
    // Inclusive scan of the thread totals within the warp, then across the block's warps.
    unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    unsigned int inclusive = total;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        unsigned int other = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= (unsigned int)offset) inclusive += other;
    }
    if (lane == 31u) warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        unsigned int warp_total = lane < SCAN_THREADS / 32 ? warp_totals[lane] : 0u;
        unsigned int warp_inclusive = warp_total;
#pragma unroll
        for (int offset = 1; offset < SCAN_THREADS / 32; offset <<= 1) {
            unsigned int other = __shfl_up_sync(0xffffffffu, warp_inclusive, offset);
            if (lane >= (unsigned int)offset) warp_inclusive += other;
        }
        if (lane < SCAN_THREADS / 32) warp_totals[lane] = warp_inclusive - warp_total;
        if (lane == SCAN_THREADS / 32 - 1 && block_sums != nullptr) block_sums[blockIdx.x] = warp_inclusive;
    }
    __syncthreads();
    unsigned int exclusive = warp_totals[warp] + inclusive - total;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS_PER_THREAD; ++k) {
        unsigned int index = base + k;
        if (index < n) output[index] = exclusive + items[k];
    }
}

// Adds the scanned block totals of the next level to every value of a block.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
add_block_offsets(unsigned int* __restrict__ data, const unsigned int* __restrict__ block_offsets, unsigned int n) {
    unsigned int i = thread_index();
    if (i >= n) return;
    data[i] += block_offsets[i / SCAN_ITEMS_PER_BLOCK];
}

// Scatters every particle array to its sorted slot cell_start[cell] + rank; x* also goes to
// `grid_positions`, the positions the step's neighbour sets are defined by.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
reorder_particles(const PbfParams p, const unsigned int* __restrict__ cell_of, const unsigned int* __restrict__ rank,
                  const unsigned int* __restrict__ cell_start, const float4* __restrict__ positions,
                  const float4* __restrict__ predicted, const float4* __restrict__ velocities,
                  const unsigned int* __restrict__ ids, float4* __restrict__ sorted_positions,
                  float4* __restrict__ sorted_predicted, float4* __restrict__ sorted_velocities,
                  unsigned int* __restrict__ sorted_ids, float4* __restrict__ grid_positions) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    unsigned int slot = cell_start[cell_of[i]] + rank[i];
    sorted_positions[slot] = positions[i];
    float4 x = predicted[i];
    sorted_predicted[slot] = x;
    grid_positions[slot] = x;
    sorted_velocities[slot] = velocities[i];
    sorted_ids[slot] = ids[i];
}

// Adds `value` over the block to *total (one double atomic per block). Every thread of the block
// must call it.
__device__ __forceinline__ void block_sum(float value, double* total) {
#ifdef PBF_EMULATION
    // Threads run one at a time on the CPU (tests/emulation): add directly.
    atomicAdd(total, (double)value);
#else
    __shared__ float warp_sums[PBF_BLOCK / 32];
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
    unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < PBF_BLOCK / 32 ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
        if (lane == 0) atomicAdd(total, (double)value);
    }
#endif
}

// The walls' and obstacles' Σ_b ∇W (xyz) and Σ_b W (w) at every particle's x*
// (`boundary_sums`, the virtual boundary layers), for compute_lambda and apply_delta. A kernel of
// its own so the layer loops do not crowd compute_lambda's registers; particles farther than h
// from every solid leave after a few comparisons. Under the density-error rule it does nothing
// once the iterations have converged (`solve_state[0]`).
// Two blocks per multiprocessor: the layer loops want more than the 64 registers the neighbour
// loops are held to (at 4 blocks ptxas spills here), and most threads finish at once anyway.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, 2)
boundary_density(const PbfParams p, const PbfObstacle* __restrict__ obstacles, const float4* __restrict__ predicted,
                 float4* __restrict__ boundary, const unsigned int* __restrict__ solve_state) {
    if (solve_state != nullptr && solve_state[0] != 0u) return;
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    BoundarySums walls = boundary_sums(p, obstacles, make3(predicted[i]));
    boundary[i] = make_float4(walls.gradient.x, walls.gradient.y, walls.gradient.z, walls.density);
}

// ρᵢ = Σ m W + m Σ_b W (walls and obstacles, from boundary_density); Cᵢ = max(ρᵢ/ρ₀ − 1, 0);
// λᵢ = −ω Cᵢ / (|Σⱼ V∇W + V Σ_b ∇W|² + Σⱼ |V∇W|² + ε) (eq. 11, clamped and relaxed). `neighbor_counts` (may be
// null) receives the neighbours within h, the particle excluded; `compression` (may be null)
// accumulates Σ Cᵢ. Under the density-error rule, `solve_state[0]` set means the iterations have
// converged: the kernel then does nothing.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
compute_lambda(const PbfParams p, const float4* __restrict__ predicted, const unsigned int* __restrict__ ids,
               const unsigned int* __restrict__ cell_start, const float4* __restrict__ grid_positions,
               const float4* __restrict__ boundary, float* __restrict__ lambdas, float* __restrict__ densities,
               unsigned int* __restrict__ neighbor_counts, double* __restrict__ compression,
               const unsigned int* __restrict__ solve_state) {
    if (solve_state != nullptr && solve_state[0] != 0u) return;
    unsigned int i = thread_index();
    float constraint = 0.0f;
    if (i < p.particle_count) {
        float3 x = make3(predicted[i]);
        unsigned int id = ids[i];
        float density = 0.0f;
        float3 gradient_i = make_float3(0.0f, 0.0f, 0.0f);
        float sum_squares = 0.0f;
        unsigned int count = 0;
        for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
            float3 offset = x - make3(predicted[j]);
            float r2 = dot3(offset, offset);
            density += kernel_density(p, r2);
            float3 gradient_j = pair_gradient(p, offset, r2, id, ids[j]);
            gradient_i += gradient_j;
            sum_squares += dot3(gradient_j, gradient_j);
            ++count;
        });
        float4 walls = boundary[i];
        density = p.self_density + p.mass * (density + walls.w);
        gradient_i = (gradient_i + make3(walls)) * p.volume;
        sum_squares = sum_squares * p.volume * p.volume;
        constraint = fmaxf(density * p.inverse_rest_density - 1.0f, 0.0f);
        lambdas[i] = -p.jacobi_relaxation * constraint / (dot3(gradient_i, gradient_i) + sum_squares + p.relaxation);
        densities[i] = density;
        if (neighbor_counts != nullptr) neighbor_counts[i] = count;
    }
    if (compression != nullptr) block_sum(constraint, compression);
}

// Under the density-error rule, after compute_lambda of iteration `iteration`: the mean
// compression Σ C / N is stored (float bits) in solve_state[2] and the sum reset; from
// `fewest` iterations on, a mean at most `tolerance` sets solve_state[0] (converged). One thread.
extern "C" __global__ void
check_density_error(const PbfParams p, double* compression, unsigned int* solve_state, float tolerance,
                    unsigned int iteration, unsigned int fewest) {
    if (threadIdx.x != 0 || blockIdx.x != 0 || solve_state[0] != 0u) return;
    float mean = (float)(*compression / (double)(p.particle_count > 0u ? p.particle_count : 1u));
    *compression = 0.0;
    solve_state[2] = __float_as_uint(mean);
    if (iteration >= fewest && mean <= tolerance) solve_state[0] = 1u;
}

// Δpᵢ = V Σⱼ (λᵢ + λⱼ + s_corr) ∇W + V λᵢ Σ_b ∇W (boundary_density's xyz), s_corr = −k (W/W(Δq))ⁿ / Σ|∇C|²₀
// (eq. 12–14); then x* += Δp, projected onto walls and obstacles. Writes a second buffer:
// neighbours read x*. Once the density-error rule has converged (solve_state[0]) it copies x*
// unchanged; otherwise it counts the iteration in solve_state[1] (thread 0).
//
// The pair terms are evaluated at `evaluated_at`: the positions compute_lambda saw. They are
// the current x* except after the coarse correction (iteration 0), which moved the particles
// in between; then the host passes the positions the grid was built from, as the CPU reuses
// the gradients compute_lambda cached (the two corrections form one additive two-level step).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
apply_delta(const PbfParams p, const PbfObstacle* __restrict__ obstacles, const float4* __restrict__ predicted,
            const float4* __restrict__ evaluated_at, const unsigned int* __restrict__ ids,
            const float* __restrict__ lambdas, const float4* __restrict__ boundary,
            const unsigned int* __restrict__ cell_start, const float4* __restrict__ grid_positions,
            float4* __restrict__ corrected, unsigned int* __restrict__ solve_state) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    float4 x4 = predicted[i];
    if (solve_state != nullptr && solve_state[0] != 0u) {
        corrected[i] = x4;
        return;
    }
    if (solve_state != nullptr && i == 0u) solve_state[1] += 1u;
    float3 x = make3(x4);
    float3 at = make3(evaluated_at[i]);
    unsigned int id = ids[i];
    float lambda_i = lambdas[i];
    float3 delta = make3(boundary[i]) * lambda_i;
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 offset = at - make3(evaluated_at[j]);
        float r2 = dot3(offset, offset);
        float ratio = kernel_density(p, r2) * p.inverse_scorr_reference;
        float scorr = -p.scorr_scale * powi(ratio, p.scorr_n);
        delta += pair_gradient(p, offset, r2, id, ids[j]) * (lambda_i + lambdas[j] + scorr);
    });
    corrected[i] = make4(project(p, obstacles, x + delta * p.volume));
}

// v = (x* − x) / dt.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
update_velocity(const PbfParams p, const float4* __restrict__ positions, const float4* __restrict__ predicted,
                float4* __restrict__ velocities) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    velocities[i] = make4((make3(predicted[i]) - make3(positions[i])) * p.inverse_dt);
}

// ωᵢ = V Σⱼ (vᵢ − vⱼ) × ∇ᵢW (the SPH curl, eq. 15); |ωᵢ| goes to the 4th lane for the next pass.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
vorticity_curl(const PbfParams p, const float4* __restrict__ predicted, const float4* __restrict__ velocities,
               const unsigned int* __restrict__ cell_start, const float4* __restrict__ grid_positions,
               float4* __restrict__ omegas) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    float3 x = make3(predicted[i]);
    float3 v = make3(velocities[i]);
    float3 omega = make_float3(0.0f, 0.0f, 0.0f);
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 offset = x - make3(predicted[j]);
        float r2 = dot3(offset, offset);
        omega += cross3(v - make3(velocities[j]), kernel_gradient(p, offset, r2));
    });
    omega = omega * p.volume;
    omegas[i] = make_float4(omega.x, omega.y, omega.z, sqrtf(dot3(omega, omega)));
}

// ηᵢ = Σⱼ (|ωⱼ| − |ωᵢ|) ∇ᵢW; vᵢ += dt · ε (η̂ × ωᵢ) (eq. 16).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
vorticity_confinement(const PbfParams p, const float4* __restrict__ predicted, const float4* __restrict__ omegas,
                      const unsigned int* __restrict__ cell_start, const float4* __restrict__ grid_positions,
                      float4* __restrict__ velocities) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    float3 x = make3(predicted[i]);
    float4 omega_i = omegas[i];
    float3 eta = make_float3(0.0f, 0.0f, 0.0f);
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 offset = x - make3(predicted[j]);
        float r2 = dot3(offset, offset);
        eta += kernel_gradient(p, offset, r2) * (omegas[j].w - omega_i.w);
    });
    float length = sqrtf(dot3(eta, eta));
    if (length <= 1e-12f) return;
    float3 n = make_float3(eta.x / length, eta.y / length, eta.z / length);
    float3 v = make3(velocities[i]);
    v += cross3(n, make3(omega_i)) * p.vorticity_scale;
    velocities[i] = make4(v);
}

// vᵢ += c V Σⱼ (vⱼ − vᵢ) W (eq. 17). Writes a second buffer: neighbours read v.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
xsph(const PbfParams p, const float4* __restrict__ predicted, const float4* __restrict__ velocities,
     const unsigned int* __restrict__ cell_start, const float4* __restrict__ grid_positions,
     float4* __restrict__ smoothed) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    float3 x = make3(predicted[i]);
    float3 v = make3(velocities[i]);
    float3 sum = make_float3(0.0f, 0.0f, 0.0f);
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 offset = x - make3(predicted[j]);
        float r2 = dot3(offset, offset);
        sum += (make3(velocities[j]) - v) * kernel_density(p, r2);
    });
    smoothed[i] = make4(v + sum * p.xsph_scale);
}

// Render records [x, y, z, scalar], in sorted order, into the (mapped GL) vertex buffer; the
// scalar is |v| (scalar_kind 0) or ρ (1), as `RenderScalar::code`.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
write_render_buffer(unsigned int n, const float4* __restrict__ positions, const float4* __restrict__ velocities,
                    const float* __restrict__ densities, unsigned int scalar_kind, float4* __restrict__ out) {
    unsigned int i = thread_index();
    if (i >= n) return;
    float4 x = positions[i];
    float value;
    if (scalar_kind == 1) {
        value = densities[i];
    } else {
        float3 v = make3(velocities[i]);
        value = sqrtf(dot3(v, v));
    }
    out[i] = make_float4(x.x, x.y, x.z, value);
}

// Once per frame: the smallest id whose position or velocity is not finite, stored as its
// bitwise complement by atomicMax into frame_check[0] (0 = all finite), and the largest speed,
// as float bits (non-negative floats order like their bits) in frame_check[1], from which the
// host picks the next frame's CFL substeps. The host zeroes both words first. Each warp first
// takes the maximum of both over its lanes with shuffles, so one lane per warp does the atomics
// (and the plain read before the speed's skips it for warps slower than the maximum so far).
// No lane returns early: every lane of the block (a multiple of 32) takes part in the shuffles.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
find_non_finite(unsigned int n, const float4* __restrict__ positions, const float4* __restrict__ velocities,
                const unsigned int* __restrict__ ids, unsigned int* __restrict__ frame_check) {
    unsigned int i = thread_index();
    unsigned int bad = 0, speed = 0;
    if (i < n) {
        float3 v = make3(velocities[i]);
        if (!finite3(make3(positions[i])) || !finite3(v)) {
            bad = ~ids[i];
        } else {
            speed = __float_as_uint(sqrtf(dot3(v, v)));
        }
    }
    for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) {
        bad = max(bad, __shfl_xor_sync(0xffffffffu, bad, lane_mask));
        speed = max(speed, __shfl_xor_sync(0xffffffffu, speed, lane_mask));
    }
    if ((threadIdx.x & 31) != 0) return;
    if (bad != 0) atomicMax(&frame_check[0], bad);
    if (speed > frame_check[1]) atomicMax(&frame_check[1], speed);
}

#include "coarse.cuh"
#include "anisotropy.cuh"
#include "pbf_stats.cuh"
#include "foam.cuh"
