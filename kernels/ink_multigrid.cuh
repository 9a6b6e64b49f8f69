// Ink's multigrid pressure solver (`src/sims/ink/multigrid.rs`), the `pressure` stage with
// `pressure_solver = "multigrid"`: the same operations in the same order as the CPU's V-cycle —
// red-black Gauss–Seidel sweeps (colour 0: i + j even, then colour 1), the residual, restriction
// (the fluid children's residuals summed over four, the coarse p zeroed), the mean removed in a
// closed box, bilinear prolongation (the coarse cell's own value beyond walls and solids, its mirror
// image beyond outflow sides) — one thread per cell. Host side in src/sims/ink/cuda/multigrid.rs.
//
// The levels' arrays are pooled: cell c of a level is element `offset + c` of p, b, r (f32) and
// of the stencil bytes (boundary.rs `Poisson`) and solid bytes (1: not fluid). Level 0 is the
// flow's grid; its p and b are loaded from the flow's pressure and divergence and p stored back.
// Levels of many cells run kernel by kernel; the small ones (from `first`) in one block,
// `pressure_mg_tail`, phases separated by barriers. Included by ink.cu after its helpers.
#pragma once

#define INK_MG_SWEEPS 2
#define INK_MG_COARSEST_SWEEPS 40
// Threads of `pressure_mg_tail`.
#define INK_MG_TAIL_THREADS 1024

// One level (mirrored by `InkLevel` in src/sims/ink/cuda/multigrid.rs).
struct InkLevel {
    int nx, ny;
    unsigned int offset;   // the level's first cell in the pooled arrays
    unsigned int fluid;    // fluid cells (the count the mean is taken over): read only from the
                           // records on the device (levels[l]); the records passed by value hold 0
                           // (a CUDA graph would freeze a count a moving disc changes)
    float h2;              // h², m²
    float weight;          // 1 / h²
    unsigned int outflow;  // bit per side (left, right, bottom, top): zero pressure beyond it; none: a closed box
    unsigned int spare;
};

// boundary.rs INVERSE_DIAGONAL.
__device__ __forceinline__ float inverse_diagonal(unsigned int diagonal) {
    return diagonal == 4u ? 0.25f : diagonal == 3u ? 1.0f / 3.0f : diagonal == 2u ? 0.5f : diagonal == 1u ? 1.0f : 0.0f;
}

// b − Σₙ(pₙ − p)/h² at solved cell k of a grid nx wide (Poisson::laplacian's operations; p = 0
// beyond outflow sides).
__device__ __forceinline__ float residual_at(unsigned int cell, const float* __restrict__ p, const float* __restrict__ b,
                                             unsigned int k, int nx, float weight) {
    unsigned int diagonal = cell >> DIAGONAL_SHIFT;
    float here = p[k], sum = 0.0f;
    unsigned int fluid = 0;
    if (cell & LEFT_BIT) { sum += p[k - 1] - here; ++fluid; }
    if (cell & RIGHT_BIT) { sum += p[k + 1] - here; ++fluid; }
    if (cell & BELOW_BIT) { sum += p[k - (unsigned int)nx] - here; ++fluid; }
    if (cell & ABOVE_BIT) { sum += p[k + (unsigned int)nx] - here; ++fluid; }
    float laplacian = sum - (float)(diagonal - fluid) * here;
    return b[k] - laplacian * weight;
}

// Cells of one colour of a level: (nx + 1) / 2 slots per row.
__device__ __forceinline__ unsigned int colour_slots(const InkLevel& l) { return (unsigned int)((l.nx + 1) / 2) * (unsigned int)l.ny; }

// Level::smooth for slot t of `colour`: p = (Σ fluid neighbours' p − h²b) / diagonal.
__device__ __forceinline__ void smooth_at(const InkLevel& l, const unsigned char* __restrict__ stencil, float* p,
                                          const float* __restrict__ b, unsigned int t, int colour) {
    unsigned int half = (unsigned int)((l.nx + 1) / 2);
    int j = (int)(t / half);
    int i = 2 * (int)(t % half) + ((j + colour) & 1);
    if (j >= l.ny || i >= l.nx) return;
    unsigned int k = l.offset + (unsigned int)(j * l.nx + i);
    unsigned int cell = stencil[k];
    unsigned int diagonal = cell >> DIAGONAL_SHIFT;
    if (diagonal == 0u) return;
    float sum = 0.0f;
    if (cell & LEFT_BIT) sum += p[k - 1];
    if (cell & RIGHT_BIT) sum += p[k + 1];
    if (cell & BELOW_BIT) sum += p[k - (unsigned int)l.nx];
    if (cell & ABOVE_BIT) sum += p[k + (unsigned int)l.nx];
    p[k] = (sum - l.h2 * b[k]) * inverse_diagonal(diagonal);
}

// Level::residual at cell c: r = b − Laplacian(p)/h² on solved cells, 0 elsewhere.
__device__ __forceinline__ void residual_cell(const InkLevel& l, const unsigned char* __restrict__ stencil,
                                              const float* __restrict__ p, const float* __restrict__ b,
                                              float* __restrict__ r, unsigned int c) {
    unsigned int k = l.offset + c;
    unsigned int cell = stencil[k];
    r[k] = (cell >> DIAGONAL_SHIFT) != 0u ? residual_at(cell, p, b, k, l.nx, l.weight) : 0.0f;
}

// Multigrid::restrict at coarse cell c: b = the sum of the fluid children's r over four (0
// without any), p = 0.
__device__ __forceinline__ void restrict_cell(const InkLevel& fine, const InkLevel& coarse, const unsigned char* __restrict__ solid,
                                              const float* __restrict__ r, float* __restrict__ b, float* p, unsigned int c) {
    int ci = (int)(c % (unsigned int)coarse.nx), cj = (int)(c / (unsigned int)coarse.nx);
    float sum = 0.0f, count = 0.0f;
    for (int j = 2 * cj; j < min(2 * cj + 2, fine.ny); ++j) {
        for (int i = 2 * ci; i < min(2 * ci + 2, fine.nx); ++i) {
            unsigned int k = fine.offset + (unsigned int)(j * fine.nx + i);
            if (!solid[k]) {
                sum += r[k];
                count += 1.0f;
            }
        }
    }
    b[coarse.offset + c] = count > 0.0f ? sum * 0.25f : 0.0f;
    p[coarse.offset + c] = 0.0f;
}

// The coarse value (ci, cj) the prolongation reads: beyond a side the parent's own value, or its
// mirror image −own beyond an outflow side (the sides tested in the CPU's order); a cell not
// solved for: own.
__device__ __forceinline__ float coarse_value(const InkLevel& coarse, const unsigned char* __restrict__ stencil, const float* p,
                                              int ci, int cj, float own) {
    unsigned int o = coarse.outflow;
    if (ci < 0) return (o & 1u) ? -own : own;
    if (ci >= coarse.nx) return (o & 2u) ? -own : own;
    if (cj < 0) return (o & 4u) ? -own : own;
    if (cj >= coarse.ny) return (o & 8u) ? -own : own;
    unsigned int k = coarse.offset + (unsigned int)(cj * coarse.nx + ci);
    return (stencil[k] >> DIAGONAL_SHIFT) != 0u ? p[k] : own;
}

// Multigrid::prolong at fine cell c: a fluid cell's p += 9/16 of its coarse cell, 3/16 of the two
// nearest along x and y, 1/16 of the diagonal one.
__device__ __forceinline__ void prolong_cell(const InkLevel& coarse, const InkLevel& fine, const unsigned char* __restrict__ stencil,
                                             const unsigned char* __restrict__ solid, float* p, unsigned int c) {
    unsigned int k = fine.offset + c;
    if (solid[k]) return;
    int i = (int)(c % (unsigned int)fine.nx), j = (int)(c / (unsigned int)fine.nx);
    int ci = i / 2, cj = j / 2;
    int di = i % 2 == 0 ? -1 : 1, dj = j % 2 == 0 ? -1 : 1;
    float own = p[coarse.offset + (unsigned int)(cj * coarse.nx + ci)];
    p[k] += 0.5625f * own + 0.1875f * (coarse_value(coarse, stencil, p, ci + di, cj, own) + coarse_value(coarse, stencil, p, ci, cj + dj, own)) +
            0.0625f * coarse_value(coarse, stencil, p, ci + di, cj + dj, own);
}

// remove_mean's mean: Σ over the fluid cells / their count (1 when none), rounded to f32.
__device__ __forceinline__ float level_mean(double sum, unsigned int fluid) {
    return (float)(sum / (double)(fluid > 1u ? fluid : 1u));
}

// ---- the levels of many cells, one kernel per operation --------------------------------------

// Level 0's start (Multigrid::solve): b = the divergence, p = the last pressure × the carry-over.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_load(const InkLevel l, const float* __restrict__ divergence, const float* __restrict__ pressure, float carry,
                 float* __restrict__ b, float* __restrict__ p) {
    unsigned int c = ink_index();
    if (c >= (unsigned int)(l.nx * l.ny)) return;
    b[c] = divergence[c];
    p[c] = pressure[c] * carry;
}

// One colour of a red-black Gauss–Seidel sweep on level l: one thread per cell of the colour.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_smooth(const InkLevel l, const unsigned char* __restrict__ stencil, float* __restrict__ p,
                   const float* __restrict__ b, int colour) {
    unsigned int t = ink_index();
    if (t < colour_slots(l)) smooth_at(l, stencil, p, b, t, colour);
}

// r = b − Laplacian(p)/h² on level l.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_residual(const InkLevel l, const unsigned char* __restrict__ stencil, const float* __restrict__ p,
                     const float* __restrict__ b, float* __restrict__ r) {
    unsigned int c = ink_index();
    if (c < (unsigned int)(l.nx * l.ny)) residual_cell(l, stencil, p, b, r, c);
}

// The coarse level's b from the fine level's r, its p zeroed.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_restrict(const InkLevel fine, const InkLevel coarse, const unsigned char* __restrict__ solid,
                     const float* __restrict__ r, float* __restrict__ b, float* __restrict__ p) {
    unsigned int c = ink_index();
    if (c < (unsigned int)(coarse.nx * coarse.ny)) restrict_cell(fine, coarse, solid, r, b, p, c);
}

// The fine level's p plus the coarse level's correction, interpolated.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_prolong(const InkLevel coarse, const InkLevel fine, const unsigned char* __restrict__ stencil,
                    const unsigned char* __restrict__ solid, float* p) {
    unsigned int c = ink_index();
    if (c < (unsigned int)(fine.nx * fine.ny)) prolong_cell(coarse, fine, stencil, solid, p, c);
}

// Σ over each block's fluid cells of level l's `values`, in f64, into partials[block]
// (reduce_finish then adds them into the mean's slot).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_sum(const InkLevel l, const unsigned char* __restrict__ solid, const float* __restrict__ values,
                double* __restrict__ partials) {
    __shared__ double shared[INK_BLOCK];
    unsigned int c = ink_index();
    double term = 0.0;
    if (c < (unsigned int)(l.nx * l.ny) && !solid[l.offset + c]) term = (double)values[l.offset + c];
    double sum = block_reduce<INK_BLOCK>(term, 0, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// remove_mean on level `level` of `levels`: the mean (stats[slot] / the fluid cells) subtracted
// from the fluid cells of `values`, in place, or into out[c] (other cells copied) when `out` is
// not null. The record is read from device memory, where the host keeps the fluid counts
// current as walls move (a CUDA graph replays the launch with the counts of the step it runs).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_mg_remove_mean(const InkLevel* __restrict__ levels, int level, const unsigned char* __restrict__ solid,
                        float* values, const double* __restrict__ stats, unsigned int slot, float* out) {
    unsigned int c = ink_index();
    const InkLevel l = levels[level];
    if (c >= (unsigned int)(l.nx * l.ny)) return;
    unsigned int k = l.offset + c;
    float value = values[k];
    if (!solid[k]) value -= level_mean(stats[slot], l.fluid);
    if (out != nullptr) out[c] = value;
    else values[k] = value;
}

// ---- the small levels, in one block ---------------------------------------------------------

// Σ of every thread's `value` over the block (any power-of-two size), every thread's return.
__device__ __forceinline__ double tail_sum(double value, double* shared) {
    unsigned int t = threadIdx.x;
    shared[t] = value;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) shared[t] += shared[t + stride];
        __syncthreads();
    }
    double result = shared[0];
    __syncthreads();
    return result;
}

// `sweeps` red-black sweeps of level l by the block.
__device__ __forceinline__ void tail_smooth(const InkLevel& l, const unsigned char* __restrict__ stencil, float* p,
                                            const float* b, int sweeps) {
    unsigned int slots = colour_slots(l);
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        for (int colour = 0; colour < 2; ++colour) {
            for (unsigned int t = threadIdx.x; t < slots; t += blockDim.x) smooth_at(l, stencil, p, b, t, colour);
            __syncthreads();
        }
    }
}

// The V-cycle (Multigrid::v_cycle) from level `first` (its b and p set) to the coarsest of
// `count` levels and back, by one block. With one thread the mean's sum runs in the CPU's order.
extern "C" __global__ void __launch_bounds__(INK_MG_TAIL_THREADS, 1)
pressure_mg_tail(const InkLevel* __restrict__ levels, int first, int count, const unsigned char* __restrict__ stencil,
                 const unsigned char* __restrict__ solid, float* p, float* b, float* r) {
    __shared__ double shared[INK_MG_TAIL_THREADS];
    unsigned int t0 = threadIdx.x, stride = blockDim.x;
    for (int l = first; l + 1 < count; ++l) {
        InkLevel fine = levels[l], coarse = levels[l + 1];
        tail_smooth(fine, stencil, p, b, INK_MG_SWEEPS);
        unsigned int fine_cells = (unsigned int)(fine.nx * fine.ny), coarse_cells = (unsigned int)(coarse.nx * coarse.ny);
        for (unsigned int c = t0; c < fine_cells; c += stride) residual_cell(fine, stencil, p, b, r, c);
        __syncthreads();
        for (unsigned int c = t0; c < coarse_cells; c += stride) restrict_cell(fine, coarse, solid, r, b, p, c);
        __syncthreads();
        if (coarse.outflow == 0u) {
            double sum = 0.0;
            for (unsigned int c = t0; c < coarse_cells; c += stride)
                if (!solid[coarse.offset + c]) sum += (double)b[coarse.offset + c];
            float mean = level_mean(tail_sum(sum, shared), coarse.fluid);
            for (unsigned int c = t0; c < coarse_cells; c += stride)
                if (!solid[coarse.offset + c]) b[coarse.offset + c] -= mean;
            __syncthreads();
        }
    }
    tail_smooth(levels[count - 1], stencil, p, b, INK_MG_COARSEST_SWEEPS);
    for (int l = count - 2; l >= first; --l) {
        InkLevel fine = levels[l], coarse = levels[l + 1];
        unsigned int fine_cells = (unsigned int)(fine.nx * fine.ny);
        for (unsigned int c = t0; c < fine_cells; c += stride) prolong_cell(coarse, fine, stencil, solid, p, c);
        __syncthreads();
        tail_smooth(fine, stencil, p, b, INK_MG_SWEEPS);
    }
}
