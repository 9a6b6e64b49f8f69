// The coarse-grid correction (`src/sims/pbf/coarse.rs`) and its multigrid-preconditioned conjugate
// gradient (`src/sims/pbf/multigrid.rs`), one thread per cell, face or particle; host side in
// `src/sims/pbf/cuda/coarse.rs`. Same formulas and operation order as the CPU; red-black
// Gauss–Seidel makes every sweep independent of the order cells are visited in, so the two
// agree up to the order of the CG's dot-product sums.
//
// The levels' arrays are pooled: a level's cell c is element `offset + c` of `kinds`, `x`
// (unknowns), `b` (right-hand side) and `r` (residual). Level 0 is the coarse grid itself,
// with the neighbour grid's cell counts over the container.
#pragma once

#define COARSE_AIR 0u
#define COARSE_FLUID 1u
#define COARSE_SOLID 2u
// A cell is fluid when the particles' volume in it is at least this fraction of the cell.
#define COARSE_FLUID_FRACTION 0.5f
#define MG_SMOOTHING_SWEEPS 2
#define MG_COARSEST_SWEEPS 40
// The nearest the free surface may lie to a fluid cell's centre (`MIN_INTERFACE`).
#define MG_MIN_INTERFACE 0.1f
// Threads of `mg_tail`, the one-block kernel that runs the small levels of a V-cycle.
#define MG_TAIL_THREADS 1024

// One level of the hierarchy (mirrored by `CoarseLevel` in src/sims/pbf/cuda/coarse.rs).
struct CoarseLevel {
    int dims_x, dims_y, dims_z;
    // 1 / h² per axis: the weight of a face in the Laplacian.
    float weight_x, weight_y, weight_z;
    unsigned int offset;
    unsigned int cells;
};

__device__ __forceinline__ unsigned int level_index(const CoarseLevel& l, int i, int j, int k) {
    return (unsigned int)i + (unsigned int)l.dims_x * ((unsigned int)j + (unsigned int)l.dims_y * (unsigned int)k);
}

// Trilinear weight along one axis of a point g cells from the centre of cell `index` of
// `count`, folded back into the border cells (`axis_weight`).
__device__ __forceinline__ float coarse_axis_weight(float g, int index, int count) {
    if ((index == 0 && g < 0.0f) || (index + 1 == count && g > 0.0f)) return 1.0f;
    return fmaxf(1.0f - fabsf(g), 0.0f);
}

// Each cell's particle volume and weighted mean of ρ/ρ₀ − 1, from the particles in the 27
// neighbour-grid cells around the cell holding its centre (`CoarseCorrection::gather`).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
coarse_gather(const PbfParams p, const float4* __restrict__ predicted, const float* __restrict__ densities,
              const unsigned int* __restrict__ cell_start, float* __restrict__ volume,
              float* __restrict__ mean_constraint) {
    unsigned int c = thread_index();
    unsigned int cells = (unsigned int)p.grid_dims_x * (unsigned int)p.grid_dims_y * (unsigned int)p.grid_dims_z;
    if (c >= cells) return;
    int i = (int)(c % (unsigned int)p.grid_dims_x);
    int j = (int)((c / (unsigned int)p.grid_dims_x) % (unsigned int)p.grid_dims_y);
    int k = (int)(c / ((unsigned int)p.grid_dims_x * (unsigned int)p.grid_dims_y));
    float3 centre = make_float3(p.grid_origin_x + ((float)i + 0.5f) * p.coarse_cell_x,
                                p.grid_origin_y + ((float)j + 0.5f) * p.coarse_cell_y,
                                p.grid_origin_z + ((float)k + 0.5f) * p.coarse_cell_z);
    float3 inverse_cell = make_float3(1.0f / p.coarse_cell_x, 1.0f / p.coarse_cell_y, 1.0f / p.coarse_cell_z);
    int3 home = cell_coords(p, centre);
    float v = 0.0f, compression = 0.0f;
    int x0 = max(home.x - 1, 0), x1 = min(home.x + 1, p.grid_dims_x - 1);
    for (int z = max(home.z - 1, 0); z <= min(home.z + 1, p.grid_dims_z - 1); ++z) {
        for (int y = max(home.y - 1, 0); y <= min(home.y + 1, p.grid_dims_y - 1); ++y) {
            unsigned int end = cell_start[cell_index(p, x1, y, z) + 1];
            for (unsigned int q = cell_start[cell_index(p, x0, y, z)]; q < end; ++q) {
                float3 d = make3(predicted[q]) - centre;
                float w = coarse_axis_weight(d.x * inverse_cell.x, i, p.grid_dims_x) *
                          coarse_axis_weight(d.y * inverse_cell.y, j, p.grid_dims_y) *
                          coarse_axis_weight(d.z * inverse_cell.z, k, p.grid_dims_z);
                v += w;
                compression += w * (densities[q] * p.inverse_rest_density - 1.0f);
            }
        }
    }
    volume[c] = v * p.volume;
    mean_constraint[c] = v > 0.0f ? compression / v : 0.0f;
}

// Solid (centre inside an obstacle, `solid`), fluid (volume at least COARSE_FLUID_FRACTION of
// the cell) or air, and the fluid fraction (for `interface_position`); any air cell sets
// *any_air (the host zeroes it first).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
coarse_classify(const PbfParams p, const unsigned char* __restrict__ solid, const float* __restrict__ volume,
                unsigned char* __restrict__ kinds, float* __restrict__ fractions, unsigned int* __restrict__ any_air) {
    unsigned int c = thread_index();
    unsigned int cells = (unsigned int)p.grid_dims_x * (unsigned int)p.grid_dims_y * (unsigned int)p.grid_dims_z;
    if (c >= cells) return;
    float cell_volume = p.coarse_cell_x * p.coarse_cell_y * p.coarse_cell_z;
    float fraction = volume[c] / cell_volume;
    fractions[c] = fraction;
    unsigned char kind;
    if (solid[c]) kind = (unsigned char)COARSE_SOLID;
    else if (fraction >= COARSE_FLUID_FRACTION) kind = (unsigned char)COARSE_FLUID;
    else {
        kind = (unsigned char)COARSE_AIR;
        *any_air = 1u;
    }
    kinds[c] = kind;
}

// b = C̄ · min(V_c / cell volume, 1) for fluid cells, expansion (C̄ < 0) only where no air is
// among the 26 neighbour cells; φ scaled by the warm start's (dt / last dt)² (0 before the
// first solve: `*last_dt` is 0 until coarse_apply records the step's dt; on the device, so a
// CUDA graph of the frame does not depend on the previous frame's substeps) and zeroed outside
// fluid. With no air cell at all, b = φ = 0: the stage does nothing (`CoarseCorrection::solve`).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
coarse_prepare(const PbfParams p, const unsigned char* __restrict__ kinds, const float* __restrict__ volume,
               const float* __restrict__ mean_constraint, const unsigned int* __restrict__ any_air,
               const float* __restrict__ last_dt, float* __restrict__ rhs, float* __restrict__ phi) {
    unsigned int c = thread_index();
    int dx = p.grid_dims_x, dy = p.grid_dims_y, dz = p.grid_dims_z;
    unsigned int cells = (unsigned int)dx * (unsigned int)dy * (unsigned int)dz;
    if (c >= cells) return;
    if (*any_air == 0u || kinds[c] != COARSE_FLUID) {
        rhs[c] = 0.0f;
        phi[c] = 0.0f;
        return;
    }
    float last = *last_dt;
    float ratio = last > 0.0f ? p.dt / last : 0.0f;
    phi[c] *= ratio * ratio;
    int i = (int)(c % (unsigned int)dx), j = (int)((c / (unsigned int)dx) % (unsigned int)dy);
    int k = (int)(c / ((unsigned int)dx * (unsigned int)dy));
    float mean = mean_constraint[c];
    bool touches_air = false;
    if (mean < 0.0f) {
        for (int z = max(k - 1, 0); z < min(k + 2, dz); ++z)
            for (int y = max(j - 1, 0); y < min(j + 2, dy); ++y)
                for (int x = max(i - 1, 0); x < min(i + 2, dx); ++x)
                    if (kinds[(unsigned int)x + (unsigned int)dx * ((unsigned int)y + (unsigned int)dy * (unsigned int)z)] ==
                        COARSE_AIR)
                        touches_air = true;
    }
    float cell_volume = p.coarse_cell_x * p.coarse_cell_y * p.coarse_cell_z;
    rhs[c] = (mean >= 0.0f || !touches_air) ? mean * fminf(volume[c] / cell_volume, 1.0f) : 0.0f;
}

// ---------------------------------------------------------------------------------------------
// Multigrid (`multigrid.rs`).

// Where the free surface lies between fluid cell `fluid` and air cell `air`, as a fraction θ of
// the way between their centres: (f_fluid − ½) + f_air, from level 0's fluid fractions read as
// fill levels (`Level::interface`); 1 on coarser levels (fractions null).
__device__ __forceinline__ float interface_position(const float* fractions, unsigned int fluid, unsigned int air) {
    if (fractions == nullptr) return 1.0f;
    return fminf(fmaxf(fractions[fluid] - 0.5f + fractions[air], MG_MIN_INTERFACE), 1.0f);
}

// Σ w φ over fluid face neighbours and Σ w over fluid and air ones, an air face weighted w/θ
// (`Level::stencil`). `fractions` is level 0's, or null.
__device__ __forceinline__ void level_stencil(const CoarseLevel& l, const unsigned char* kinds, const float* fractions,
                                              const float* x, int i, int j, int k, float& sum, float& diagonal) {
    sum = 0.0f;
    diagonal = 0.0f;
    const int c[3] = {i, j, k};
    const int dims[3] = {l.dims_x, l.dims_y, l.dims_z};
    const float weights[3] = {l.weight_x, l.weight_y, l.weight_z};
    unsigned int self = l.offset + level_index(l, i, j, k);
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
#pragma unroll
        for (int up = 0; up < 2; ++up) {
            int q = up ? c[axis] + 1 : c[axis] - 1;
            if (q < 0 || q >= dims[axis]) continue;
            int n[3] = {c[0], c[1], c[2]};
            n[axis] = q;
            unsigned int neighbour = l.offset + level_index(l, n[0], n[1], n[2]);
            float w = weights[axis];
            unsigned char kind = kinds[neighbour];
            if (kind == COARSE_FLUID) {
                sum += w * x[neighbour];
                diagonal += w;
            } else if (kind == COARSE_AIR) {
                diagonal += w / interface_position(fractions, self, neighbour);
            }
        }
    }
}

__device__ __forceinline__ void level_cell(const CoarseLevel& l, unsigned int c, int& i, int& j, int& k) {
    i = (int)(c % (unsigned int)l.dims_x);
    j = (int)((c / (unsigned int)l.dims_x) % (unsigned int)l.dims_y);
    k = (int)(c / ((unsigned int)l.dims_x * (unsigned int)l.dims_y));
}

// One Gauss–Seidel update of cell c of the level if it has `colour` ((i + j + k) mod 2).
__device__ __forceinline__ void smooth_cell(const CoarseLevel& l, const unsigned char* kinds, const float* fractions,
                                            float* x, const float* b, unsigned int c, int colour) {
    int i, j, k;
    level_cell(l, c, i, j, k);
    if (((i + j + k) & 1) != colour) return;
    unsigned int g = l.offset + c;
    if (kinds[g] != COARSE_FLUID) return;
    float sum, diagonal;
    level_stencil(l, kinds, fractions, x, i, j, k, sum, diagonal);
    if (diagonal > 0.0f) x[g] = (sum + b[g]) / diagonal;
}

__device__ __forceinline__ float residual_cell(const CoarseLevel& l, const unsigned char* kinds, const float* fractions,
                                               const float* x, const float* b, unsigned int c) {
    unsigned int g = l.offset + c;
    if (kinds[g] != COARSE_FLUID) return 0.0f;
    int i, j, k;
    level_cell(l, c, i, j, k);
    float sum, diagonal;
    level_stencil(l, kinds, fractions, x, i, j, k, sum, diagonal);
    return b[g] - (diagonal * x[g] - sum);
}

// The kind of coarse cell c from its (up to 8) children (`Multigrid::coarsen_kinds`).
__device__ __forceinline__ void coarsen_cell(const CoarseLevel& fine, const CoarseLevel& coarse, unsigned char* kinds,
                                             unsigned int c) {
    int i, j, k;
    level_cell(coarse, c, i, j, k);
    bool air = false, fluid = false;
    for (int n = 0; n < 8; ++n) {
        int x = 2 * i + (n & 1), y = 2 * j + ((n >> 1) & 1), z = 2 * k + (n >> 2);
        if (x >= fine.dims_x || y >= fine.dims_y || z >= fine.dims_z) continue;
        unsigned char kind = kinds[fine.offset + level_index(fine, x, y, z)];
        if (kind == COARSE_AIR) air = true;
        else if (kind == COARSE_FLUID) fluid = true;
    }
    kinds[coarse.offset + c] = (unsigned char)(air ? COARSE_AIR : fluid ? COARSE_FLUID : COARSE_SOLID);
}

// Coarse b = the mean of the children's residuals over all 8 slots, coarse x = 0 (`restrict`).
__device__ __forceinline__ void restrict_cell(const CoarseLevel& fine, const CoarseLevel& coarse,
                                              const unsigned char* kinds, const float* r, float* b, float* x,
                                              unsigned int c) {
    int i, j, k;
    level_cell(coarse, c, i, j, k);
    unsigned int g = coarse.offset + c;
    x[g] = 0.0f;
    if (kinds[g] != COARSE_FLUID) {
        b[g] = 0.0f;
        return;
    }
    float sum = 0.0f;
    for (int n = 0; n < 8; ++n) {
        int cx = 2 * i + (n & 1), cy = 2 * j + ((n >> 1) & 1), cz = 2 * k + (n >> 2);
        if (cx >= fine.dims_x || cy >= fine.dims_y || cz >= fine.dims_z) continue;
        sum += r[fine.offset + level_index(fine, cx, cy, cz)];
    }
    b[g] = sum * 0.125f;
}

// Fine x += the coarse correction, trilinear between coarse cell centres (`prolongate`).
__device__ __forceinline__ void prolongate_cell(const CoarseLevel& coarse, const CoarseLevel& fine,
                                                const unsigned char* kinds, float* x, unsigned int c) {
    unsigned int g = fine.offset + c;
    if (kinds[g] != COARSE_FLUID) return;
    int child[3];
    level_cell(fine, c, child[0], child[1], child[2]);
    const int parent[3] = {child[0] / 2, child[1] / 2, child[2] / 2};
    const int dims[3] = {coarse.dims_x, coarse.dims_y, coarse.dims_z};
    float own = x[coarse.offset + level_index(coarse, parent[0], parent[1], parent[2])];
    float value = 0.0f;
    for (int n = 0; n < 8; ++n) {
        float weight = 1.0f;
        int q[3] = {parent[0], parent[1], parent[2]};
        bool beyond = false;
        for (int axis = 0; axis < 3; ++axis) {
            if ((n >> axis) & 1) {
                weight *= 0.25f;
                int step = (child[axis] % 2 == 0) ? q[axis] - 1 : q[axis] + 1;
                if (step < 0 || step >= dims[axis]) beyond = true;
                else q[axis] = step;
            } else {
                weight *= 0.75f;
            }
        }
        float v;
        if (beyond) {
            v = own;
        } else {
            unsigned int neighbour = coarse.offset + level_index(coarse, q[0], q[1], q[2]);
            unsigned char kind = kinds[neighbour];
            v = kind == COARSE_FLUID ? x[neighbour] : kind == COARSE_AIR ? 0.0f : own;
        }
        value += weight * v;
    }
    x[g] += value;
}

extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
mg_coarsen(const CoarseLevel fine, const CoarseLevel coarse, unsigned char* __restrict__ kinds) {
    unsigned int c = thread_index();
    if (c < coarse.cells) coarsen_cell(fine, coarse, kinds, c);
}

// `fractions` below is level 0's fluid fractions: used only on level 0 (offset 0).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
mg_smooth(const CoarseLevel level, const unsigned char* __restrict__ kinds, const float* __restrict__ fractions,
          float* x, const float* __restrict__ b, int colour) {
    unsigned int c = thread_index();
    if (c < level.cells) smooth_cell(level, kinds, level.offset == 0u ? fractions : nullptr, x, b, c, colour);
}

// r = b − A x on the level (0 outside fluid cells).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
mg_residual(const CoarseLevel level, const unsigned char* __restrict__ kinds, const float* __restrict__ fractions,
            const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ r) {
    unsigned int c = thread_index();
    if (c < level.cells)
        r[level.offset + c] = residual_cell(level, kinds, level.offset == 0u ? fractions : nullptr, x, b, c);
}

extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
mg_restrict(const CoarseLevel fine, const CoarseLevel coarse, const unsigned char* __restrict__ kinds,
            const float* __restrict__ r, float* __restrict__ b, float* __restrict__ x) {
    unsigned int c = thread_index();
    if (c < coarse.cells) restrict_cell(fine, coarse, kinds, r, b, x, c);
}

extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
mg_prolongate(const CoarseLevel coarse, const CoarseLevel fine, const unsigned char* __restrict__ kinds,
              float* __restrict__ x) {
    unsigned int c = thread_index();
    if (c < fine.cells) prolongate_cell(coarse, fine, kinds, x, c);
}

// The V-cycle from level `first` down, for levels small enough for one block: the same steps
// as the per-level kernels, phases separated by barriers. `levels` holds every level. With
// blockDim 1 (the CPU emulation) it is a plain sequential loop. One block per SM is all it runs:
// without the `1`, ptxas budgets registers for two and spills (32 registers; 48 with it).
extern "C" __global__ void __launch_bounds__(MG_TAIL_THREADS, 1)
mg_tail(const CoarseLevel* __restrict__ levels, int first, int count, const unsigned char* __restrict__ kinds,
        const float* __restrict__ fractions, float* x, float* b, float* r) {
    unsigned int t = threadIdx.x, stride = blockDim.x;
    // Down: smooth, residual, restrict.
    for (int l = first; l + 1 < count; ++l) {
        CoarseLevel fine = levels[l], coarse = levels[l + 1];
        const float* f = l == 0 ? fractions : nullptr;
        for (int sweep = 0; sweep < MG_SMOOTHING_SWEEPS; ++sweep) {
            for (int colour = 0; colour < 2; ++colour) {
                for (unsigned int c = t; c < fine.cells; c += stride) smooth_cell(fine, kinds, f, x, b, c, colour);
                __syncthreads();
            }
        }
        for (unsigned int c = t; c < fine.cells; c += stride) r[fine.offset + c] = residual_cell(fine, kinds, f, x, b, c);
        __syncthreads();
        for (unsigned int c = t; c < coarse.cells; c += stride) restrict_cell(fine, coarse, kinds, r, b, x, c);
        __syncthreads();
    }
    // The coarsest level.
    CoarseLevel last = levels[count - 1];
    const float* last_fractions = count == 1 ? fractions : nullptr;
    for (int sweep = 0; sweep < MG_COARSEST_SWEEPS; ++sweep) {
        for (int colour = 0; colour < 2; ++colour) {
            for (unsigned int c = t; c < last.cells; c += stride) smooth_cell(last, kinds, last_fractions, x, b, c, colour);
            __syncthreads();
        }
    }
    // Up: prolongate, smooth.
    for (int l = count - 2; l >= first; --l) {
        CoarseLevel fine = levels[l], coarse = levels[l + 1];
        for (unsigned int c = t; c < fine.cells; c += stride) prolongate_cell(coarse, fine, kinds, x, c);
        __syncthreads();
        const float* f = l == 0 ? fractions : nullptr;
        for (int sweep = 0; sweep < MG_SMOOTHING_SWEEPS; ++sweep) {
            for (int colour = 0; colour < 2; ++colour) {
                for (unsigned int c = t; c < fine.cells; c += stride) smooth_cell(fine, kinds, f, x, b, c, colour);
                __syncthreads();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The conjugate gradient on level 0 (`Multigrid::solve`). Its scalars live on the GPU, in
// `scalars`: [0] r·z, [1] p·q, [2] z·(r − r_previous), [3] the next r·z, [4] α, [5] β.

#define PCG_RZ 0
#define PCG_PQ 1
#define PCG_ZDR 2
#define PCG_RZ_NEXT 3
#define PCG_ALPHA 4
#define PCG_BETA 5

// out = A x (b null) or b − A x on level 0, 0 outside fluid cells.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
pcg_operator(const CoarseLevel level, const unsigned char* __restrict__ kinds, const float* __restrict__ fractions,
             const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ out) {
    unsigned int c = thread_index();
    if (c >= level.cells) return;
    if (kinds[c] != COARSE_FLUID) {
        out[c] = 0.0f;
        return;
    }
    int i, j, k;
    level_cell(level, c, i, j, k);
    float sum, diagonal;
    level_stencil(level, kinds, fractions, x, i, j, k, sum, diagonal);
    float ax = diagonal * x[c] - sum;
    out[c] = b != nullptr ? b[c] - ax : ax;
}

// scalars[slot] += Σ a·b, or Σ a·(b − c) when c is not null.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
pcg_dot(unsigned int n, const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
        double* scalars, int slot) {
    unsigned int i = thread_index();
    float value = 0.0f;
    if (i < n) value = a[i] * (c != nullptr ? b[i] - c[i] : b[i]);
    block_sum(value, scalars + slot);  // pbf.cu, which includes this file after it
}

// One thread. mode 0: α = r·z / p·q (0 when either is not positive: the CPU stops there), p·q
// cleared. mode 1: β = max(z·Δr / r·z, 0), r·z = the next r·z, the sums cleared. mode 2 (the
// start): r·z = the next r·z, β = 0.
extern "C" __global__ void
pcg_scalars(double* scalars, int mode) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    if (mode == 0) {
        double rz = scalars[PCG_RZ], pq = scalars[PCG_PQ];
        scalars[PCG_ALPHA] = (pq > 0.0 && rz > 0.0) ? rz / pq : 0.0;
        scalars[PCG_PQ] = 0.0;
    } else if (mode == 1) {
        double rz = scalars[PCG_RZ];
        double beta = rz > 0.0 ? scalars[PCG_ZDR] / rz : 0.0;
        scalars[PCG_BETA] = beta > 0.0 ? beta : 0.0;
        scalars[PCG_RZ] = scalars[PCG_RZ_NEXT];
        scalars[PCG_ZDR] = 0.0;
        scalars[PCG_RZ_NEXT] = 0.0;
    } else {
        scalars[PCG_RZ] = scalars[PCG_RZ_NEXT];
        scalars[PCG_RZ_NEXT] = 0.0;
        scalars[PCG_BETA] = 0.0;
    }
}

// r_previous = r; x += α p; r −= α q.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
pcg_step(unsigned int n, const double* __restrict__ scalars, const float* __restrict__ p, const float* __restrict__ q,
         float* __restrict__ x, float* __restrict__ r, float* __restrict__ r_previous) {
    unsigned int i = thread_index();
    if (i >= n) return;
    float alpha = (float)scalars[PCG_ALPHA];
    r_previous[i] = r[i];
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
}

// p = z + β p (p = z when β = 0, whatever p held).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
pcg_direction(unsigned int n, const double* __restrict__ scalars, const float* __restrict__ z, float* __restrict__ p) {
    unsigned int i = thread_index();
    if (i >= n) return;
    float beta = (float)scalars[PCG_BETA];
    p[i] = beta == 0.0f ? z[i] : z[i] + beta * p[i];
}

// The V-cycle's input on level 0: b = r, x = 0.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
mg_load(unsigned int n, const float* __restrict__ r, float* __restrict__ b, float* __restrict__ x) {
    unsigned int i = thread_index();
    if (i >= n) return;
    b[i] = r[i];
    x[i] = 0.0f;
}

// ---------------------------------------------------------------------------------------------
// From φ to the particles.

// u = −∇φ on every face between two cells that are not solid (to the free surface, θ of the way,
// between fluid and air), 0 on the grid's outer faces and on faces of solid cells
// (`CoarseCorrection::face_displacements`). Faces of the x, y, z axes
// are numbered one after the other; face f of an axis lies between cells f − 1 and f.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
coarse_faces(const PbfParams p, const unsigned char* __restrict__ kinds, const float* __restrict__ fractions,
             const float* __restrict__ phi, float* __restrict__ faces_x, float* __restrict__ faces_y,
             float* __restrict__ faces_z) {
    unsigned int f = thread_index();
    unsigned int dx = (unsigned int)p.grid_dims_x, dy = (unsigned int)p.grid_dims_y, dz = (unsigned int)p.grid_dims_z;
    unsigned int count_x = (dx + 1u) * dy * dz, count_y = dx * (dy + 1u) * dz, count_z = dx * dy * (dz + 1u);
    int axis;
    if (f < count_x) {
        axis = 0;
    } else if (f < count_x + count_y) {
        axis = 1;
        f -= count_x;
    } else if (f < count_x + count_y + count_z) {
        axis = 2;
        f -= count_x + count_y;
    } else {
        return;
    }
    // The face grid has one more face than cells along `axis`.
    unsigned int fx = dx + (axis == 0 ? 1u : 0u), fy = dy + (axis == 1 ? 1u : 0u);
    unsigned int i = f % fx, j = (f / fx) % fy, k = f / (fx * fy);
    unsigned int along = axis == 0 ? i : axis == 1 ? j : k;
    unsigned int cells = axis == 0 ? dx : axis == 1 ? dy : dz;
    float u = 0.0f;
    if (along != 0u && along != cells) {
        unsigned int b = i + dx * (j + dy * k);
        unsigned int a = b - (axis == 0 ? 1u : axis == 1 ? dx : dx * dy);
        unsigned char kind_a = kinds[a], kind_b = kinds[b];
        if (kind_a != COARSE_SOLID && kind_b != COARSE_SOLID) {
            float cell = axis == 0 ? p.coarse_cell_x : axis == 1 ? p.coarse_cell_y : p.coarse_cell_z;
            float inverse_cell = 1.0f / cell;
            // Between a fluid and an air cell: the gradient to the free surface.
            float theta = 1.0f;
            if (kind_a == COARSE_FLUID && kind_b == COARSE_AIR) theta = interface_position(fractions, a, b);
            if (kind_a == COARSE_AIR && kind_b == COARSE_FLUID) theta = interface_position(fractions, b, a);
            u = -(phi[b] - phi[a]) * inverse_cell / theta;
        }
    }
    float* out = axis == 0 ? faces_x : axis == 1 ? faces_y : faces_z;
    out[f] = u;
}

// The displacement at x: each component trilinear from its faces (`CoarseCorrection::displacement`).
__device__ __forceinline__ float3 coarse_displacement(const PbfParams& p, const float* faces_x, const float* faces_y,
                                                      const float* faces_z, float3 x) {
    const float g[3] = {(x.x - p.grid_origin_x) / p.coarse_cell_x, (x.y - p.grid_origin_y) / p.coarse_cell_y,
                        (x.z - p.grid_origin_z) / p.coarse_cell_z};
    const int dims[3] = {p.grid_dims_x, p.grid_dims_y, p.grid_dims_z};
    const float* faces[3] = {faces_x, faces_y, faces_z};
    float u[3];
    for (int axis = 0; axis < 3; ++axis) {
        int face_dims[3] = {dims[0], dims[1], dims[2]};
        face_dims[axis] += 1;
        int base[3];
        float fraction[3];
        for (int a = 0; a < 3; ++a) {
            float coordinate = a == axis ? g[a] : g[a] - 0.5f;
            float top = (float)(face_dims[a] - 1);
            float clamped = fminf(fmaxf(coordinate, 0.0f), top);
            float lowest = floorf(clamped);
            float limit = (float)(max(face_dims[a], 2) - 2);
            float floor_value = fminf(lowest, limit);
            base[a] = (int)floor_value;
            fraction[a] = face_dims[a] == 1 ? 0.0f : clamped - floor_value;
        }
        float value = 0.0f;
        for (int n = 0; n < 8; ++n) {
            int index[3] = {base[0], base[1], base[2]};
            float weight = 1.0f;
            for (int a = 0; a < 3; ++a) {
                if ((n >> a) & 1) {
                    index[a] = min(index[a] + 1, face_dims[a] - 1);
                    weight *= fraction[a];
                } else {
                    weight *= 1.0f - fraction[a];
                }
            }
            if (weight > 0.0f)
                value += weight * faces[axis][(unsigned int)index[0] +
                                              (unsigned int)face_dims[0] * ((unsigned int)index[1] + (unsigned int)face_dims[1] * (unsigned int)index[2])];
        }
        u[axis] = value;
    }
    return make_float3(u[0], u[1], u[2]);
}

// x* += u(x*), projected out of walls and obstacles (`CpuSolver::coarse_correction`); the
// step's dt recorded for the next coarse_prepare's warm start (coarse_prepare has finished
// reading it: an earlier launch on the stream).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
coarse_apply(const PbfParams p, const PbfObstacle* __restrict__ obstacles, const float* __restrict__ faces_x,
             const float* __restrict__ faces_y, const float* __restrict__ faces_z, float4* __restrict__ predicted,
             float* __restrict__ last_dt) {
    unsigned int i = thread_index();
    if (i == 0) *last_dt = p.dt;
    if (i >= p.particle_count) return;
    float3 x = make3(predicted[i]);
    predicted[i] = make4(project(p, obstacles, x + coarse_displacement(p, faces_x, faces_y, faces_z, x)));
}
