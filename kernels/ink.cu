// Ink: 2D stable fluids on a MAC grid carrying ink (docs/ink-cuda.md), one kernel per stage of the CPU
// solver (`src/sims/ink/cpu.rs`; fields in `fields.rs`, masks in `boundary.rs`, advection in
// `advect/`) with the same operations in the same order; host side in
// `src/sims/ink/cuda/kernels.rs` and `kernels/` (the typed launches, by stage). Kernel names are
// plain `extern "C"` and start with their stage's name (advect_*, splat, curl, vorticity,
// divergence, pressure*, subtract_gradient; the multigrid pressure solver's pressure_mg_* in
// ink_multigrid.cuh); reduce_* and picture* serve the statistics and the picture. The grid's
// records and the velocity sampler the stages share are in ink_grid.cuh; the moving walls'
// wall_rows and close_walls in ink_walls.cuh.
//
// Layout (row-major, x fastest, one thread per lattice point, f32):
//   u: (nx + 1) × ny vertical faces, point (i, j) at (i·dx, (j + ½)·dx)
//   v: nx × (ny + 1) horizontal faces, at ((i + ½)·dx, j·dx)
//   p, divergence, curl, solid, stencil: nx × ny cells, at ((i + ½)·dx, (j + ½)·dx)
//   ink: three planes of ink_nx × ink_ny cells (ink_nx = s·nx), at ((i + ½)·h, (j + ½)·h), h = dx/s
// Faces that are not open (walls, solids, inflow sides) hold their fixed velocity: every kernel
// that changes the velocity writes only open faces, and the advection writes the fixed value
// into closed ones (the CPU solver's close_faces, folded in): the side's on the box's sides,
// inside the value the face held (zero, or a moving disc's velocity, set by the host).
//
// Reductions (statistics) are block sums in double, one partial per block, finished by
// reduce_finish in one block per quantity: deterministic, no atomics.

#include "ink_grid.cuh"

// ---- advect ---------------------------------------------------------------------------------

// The velocity carried for dt: one thread per point of (nx + 1) × (ny + 1), the u face (i, j)
// when j < ny and the v face (i, j) when i < nx. `hat` (MacCormack's first pass): the
// semi-Lagrangian values φ̂ into out_u/out_v as they are; otherwise the final values: × decay,
// flushed, closed faces fixed.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
advect_velocity(const InkGrid g, int hat, const float* __restrict__ u, const float* __restrict__ v,
                const unsigned char* __restrict__ u_open, const unsigned char* __restrict__ v_open,
                float* __restrict__ out_u, float* __restrict__ out_v, float dt, float decay) {
    unsigned int k = ink_index();
    int w = g.nx + 1;
    if (k >= (unsigned int)(w * (g.ny + 1))) return;
    int i = (int)(k % (unsigned int)w), j = (int)(k / (unsigned int)w);
    if (j < g.ny) {
        float2 vel = at_u_face(g, u, v, i, j);
        float x = ((float)i + 0.0f) * g.dx, y = ((float)j + 0.5f) * g.dx;
        Stencil s = trace(g, u, v, ON_U_FACES, w, g.ny, 0.0f, 0.5f, g.inverse_dx, x, y, vel, dt);
        float value = bilinear(u, w, s);
        int ku = j * w + i;
        out_u[ku] = hat ? value * s.w : (u_open[ku] ? flush(value * (s.w * decay)) : fixed_u(g, i, u[ku]));
    }
    if (i < g.nx) {
        float2 vel = at_v_face(g, u, v, i, j);
        float x = ((float)i + 0.5f) * g.dx, y = ((float)j + 0.0f) * g.dx;
        Stencil s = trace(g, u, v, ON_V_FACES, g.nx, g.ny + 1, 0.5f, 0.0f, g.inverse_dx, x, y, vel, dt);
        float value = bilinear(v, g.nx, s);
        int kv = j * g.nx + i;
        out_v[kv] = hat ? value * s.w : (v_open[kv] ? flush(value * (s.w * decay)) : fixed_v(g, j, v[kv]));
    }
}

// MacCormack's second pass over the velocity: the same points and traces as advect_velocity
// (the velocity at each point is recomputed: the same numbers the first pass used), φ̂ traced
// forward, the corrected value × decay, flushed; closed faces fixed.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
advect_velocity_correct(const InkGrid g, const float* __restrict__ u, const float* __restrict__ v,
                        const float* __restrict__ u_hat, const float* __restrict__ v_hat,
                        const unsigned char* __restrict__ u_open, const unsigned char* __restrict__ v_open,
                        float* __restrict__ out_u, float* __restrict__ out_v, float dt, float decay) {
    unsigned int k = ink_index();
    int w = g.nx + 1;
    if (k >= (unsigned int)(w * (g.ny + 1))) return;
    int i = (int)(k % (unsigned int)w), j = (int)(k / (unsigned int)w);
    float back_dt = -dt;
    if (j < g.ny) {
        int ku = j * w + i;
        if (u_open[ku]) {
            float2 vel = at_u_face(g, u, v, i, j);
            float x = ((float)i + 0.0f) * g.dx, y = ((float)j + 0.5f) * g.dx;
            Stencil back = trace(g, u, v, ON_U_FACES, w, g.ny, 0.0f, 0.5f, g.inverse_dx, x, y, vel, dt);
            Stencil ahead = trace(g, u, v, ON_U_FACES, w, g.ny, 0.0f, 0.5f, g.inverse_dx, x, y, vel, back_dt);
            out_u[ku] = flush(corrected(u, u_hat, w, ku, back, ahead) * decay);
        } else {
            out_u[ku] = fixed_u(g, i, u[ku]);
        }
    }
    if (i < g.nx) {
        int kv = j * g.nx + i;
        if (v_open[kv]) {
            float2 vel = at_v_face(g, u, v, i, j);
            float x = ((float)i + 0.5f) * g.dx, y = ((float)j + 0.0f) * g.dx;
            Stencil back = trace(g, u, v, ON_V_FACES, g.nx, g.ny + 1, 0.5f, 0.0f, g.inverse_dx, x, y, vel, dt);
            Stencil ahead = trace(g, u, v, ON_V_FACES, g.nx, g.ny + 1, 0.5f, 0.0f, g.inverse_dx, x, y, vel, back_dt);
            out_v[kv] = flush(corrected(v, v_hat, g.nx, kv, back, ahead) * decay);
        } else {
            out_v[kv] = fixed_v(g, j, v[kv]);
        }
    }
}

// The velocity at ink cell (i, j): exact at the flow's centres when the grids coincide,
// sampled otherwise (advect/mod.rs Points::Centres / Points::Sampled).
__device__ __forceinline__ float2 ink_velocity(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, int i, int j,
                                               float x, float y) {
    return g.ink_scale == 1 ? at_centre(g, u, v, i, j) : velocity_at(g, u, v, x, y);
}

// The ink's three channels (planes of ink_nx × ink_ny) carried for dt, one thread per ink cell:
// φ̂ (`hat`) or the semi-Lagrangian result × decay, flushed.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
advect_ink(const InkGrid g, int hat, const float* __restrict__ u, const float* __restrict__ v,
           const float* __restrict__ ink, float* __restrict__ out, float dt, float decay) {
    unsigned int k = ink_index();
    unsigned int n = (unsigned int)(g.ink_nx * g.ink_ny);
    if (k >= n) return;
    int i = (int)(k % (unsigned int)g.ink_nx), j = (int)(k / (unsigned int)g.ink_nx);
    float x = ((float)i + 0.5f) * g.ink_h, y = ((float)j + 0.5f) * g.ink_h;
    float2 vel = ink_velocity(g, u, v, i, j, x, y);
    Stencil s = trace(g, u, v, ON_INK, g.ink_nx, g.ink_ny, 0.5f, 0.5f, g.ink_inverse_h, x, y, vel, dt);
    for (int c = 0; c < 3; ++c) {
        float value = bilinear(ink + c * n, g.ink_nx, s);
        out[c * n + k] = hat ? value * s.w : flush(value * (s.w * decay));
    }
}

// MacCormack's second pass over the ink.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
advect_ink_correct(const InkGrid g, const float* __restrict__ u, const float* __restrict__ v,
                   const float* __restrict__ ink, const float* __restrict__ hat, float* __restrict__ out,
                   float dt, float decay) {
    unsigned int k = ink_index();
    unsigned int n = (unsigned int)(g.ink_nx * g.ink_ny);
    if (k >= n) return;
    int i = (int)(k % (unsigned int)g.ink_nx), j = (int)(k / (unsigned int)g.ink_nx);
    float x = ((float)i + 0.5f) * g.ink_h, y = ((float)j + 0.5f) * g.ink_h;
    float2 vel = ink_velocity(g, u, v, i, j, x, y);
    float back_dt = -dt;
    Stencil back = trace(g, u, v, ON_INK, g.ink_nx, g.ink_ny, 0.5f, 0.5f, g.ink_inverse_h, x, y, vel, dt);
    Stencil ahead = trace(g, u, v, ON_INK, g.ink_nx, g.ink_ny, 0.5f, 0.5f, g.ink_inverse_h, x, y, vel, back_dt);
    for (int c = 0; c < 3; ++c) {
        out[c * n + k] = flush(corrected(ink + c * n, hat + c * n, g.ink_nx, (int)k, back, ahead) * decay);
    }
}

// ---- splat ----------------------------------------------------------------------------------

// The brush stamp's alpha at offset (ex, ey) from the stamp's centre (stamp.rs `alpha`): the
// STAMP_TEXELS² texture spans six radii, its columns along the direction of motion, sampled
// bilinearly at texel centres, clamped to the edge.
__device__ __forceinline__ float stamp_alpha(const float* __restrict__ texture, const InkSplat& s, float ex, float ey) {
    float n = (float)STAMP_TEXELS;
    float scale = n / (6.0f * s.radius);
    float along = (ex * s.dir_x + ey * s.dir_y) * scale + 0.5f * n - 0.5f;
    float across = (ey * s.dir_x - ex * s.dir_y) * scale + 0.5f * n - 0.5f;
    float fx = fminf(fmaxf(along, 0.0f), n - 1.0f);
    float fy = fminf(fmaxf(across, 0.0f), n - 1.0f);
    int i = min((int)fx, STAMP_TEXELS - 2), j = min((int)fy, STAMP_TEXELS - 2);
    float tx = fx - (float)i, ty = fy - (float)j;
    int k = j * STAMP_TEXELS + i;
    float a = texture[k], b = texture[k + 1], c = texture[k + STAMP_TEXELS], d = texture[k + STAMP_TEXELS + 1];
    return (a + (b - a) * tx) * (1.0f - ty) + (c + (d - c) * tx) * ty;
}

// One stamp's Gaussians added to the fields over its boxes: amount × e^(−d²/r²) (cpu.rs
// add_gaussian), × the brush stamp's alpha when `s.masked` (the ink of a brush stroke). The
// stamp is slot `slot` of the records (read from device memory: the host sends the step's
// records before it, so a CUDA graph replays the launch with the records of the step it runs):
// three records, one per lattice (0 u, 1 v, 2 the ink's three planes, `ink_planes` values
// apart), each over `capacity` threads of the launch (at least its box's points, the same for
// the three: stages.rs `upload_splats`); threads beyond a record's box return, so a record of
// an empty box (a lattice the stamp leaves alone, a padding slot) does nothing. Fields whose
// amount is zero are left alone; on the velocity lattices closed faces are skipped (they keep
// their fixed value, as close_faces restores on the CPU). The lattices are different arrays:
// a launch adds to each point at most once, and the stamps' launches run in order, so each
// point gets the stamps' amounts in the CPU's order.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
splat(const InkSplat* __restrict__ splats, unsigned int slot, unsigned int capacity, float* __restrict__ u,
      float* __restrict__ v, float* __restrict__ ink, unsigned int ink_planes, const unsigned char* __restrict__ u_open,
      const unsigned char* __restrict__ v_open, const float* __restrict__ stamp) {
    unsigned int k = ink_index();
    unsigned int lattice = k / capacity;
    if (lattice >= 3u) return;
    k -= lattice * capacity;
    const InkSplat s = splats[3u * slot + lattice];
    if (k >= (unsigned int)(s.width * s.rows)) return;
    int i = s.i0 + (int)(k % (unsigned int)s.width), j = s.j0 + (int)(k / (unsigned int)s.width);
    int index = j * s.nx + i;
    float *f0, *f1, *f2;
    const unsigned char* open;
    if (lattice == 0u) { f0 = f1 = f2 = u; open = u_open; }
    else if (lattice == 1u) { f0 = f1 = f2 = v; open = v_open; }
    else { f0 = ink; f1 = ink + ink_planes; f2 = ink + 2u * ink_planes; open = nullptr; }
    if (open != nullptr && !open[index]) return;
    float x = ((float)i + s.ox) * s.h, y = ((float)j + s.oy) * s.h;
    float ex = x - s.px, ey = y - s.py;
    float weight = expf(-(ex * ex + ey * ey) / (s.radius * s.radius));
    if (s.masked) weight = weight * stamp_alpha(stamp, s, ex, ey);
    if (s.amount0 != 0.0f) f0[index] += s.amount0 * weight;
    if (s.amount1 != 0.0f) f1[index] += s.amount1 * weight;
    if (s.amount2 != 0.0f) f2[index] += s.amount2 * weight;
}

// The ink's buoyancy: every open v face gains lift × the ink (all channels) there.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
splat_buoyancy(const InkGrid g, const float* __restrict__ ink, const unsigned char* __restrict__ v_open,
               float* __restrict__ v, float lift) {
    unsigned int k = ink_index();
    if (k >= (unsigned int)(g.nx * (g.ny + 1))) return;
    if (!v_open[k]) return;
    int i = (int)(k % (unsigned int)g.nx), j = (int)(k / (unsigned int)g.nx);
    unsigned int n = (unsigned int)(g.ink_nx * g.ink_ny);
    Stencil s = locate(g.ink_nx, g.ink_ny, 0.5f, 0.5f, g.ink_inverse_h, ((float)i + 0.5f) * g.dx, (float)j * g.dx);
    float amount = bilinear(ink, g.ink_nx, s) + bilinear(ink + n, g.ink_nx, s) + bilinear(ink + 2 * n, g.ink_nx, s);
    v[k] += lift * amount;
}

// ---- curl, vorticity ------------------------------------------------------------------------

// Flow::curl's derivative across a cell from its neighbours' values (each with whether it
// exists): central, or one-sided where a free-slip wall leaves only one.
__device__ __forceinline__ float difference(float lo, bool has_lo, float here, float hi, bool has_hi, float dx) {
    if (has_lo && has_hi) return (hi - lo) / (2.0f * dx);
    if (has_hi) return (hi - here) / dx;
    if (has_lo) return (here - lo) / dx;
    return 0.0f;
}

// ω = ∂v/∂x − ∂u/∂y at the cell centres from the centre velocities (Flow::curl): central
// differences; one-sided at a free-slip wall; at a no-slip wall against the mirror image beyond.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
curl(const InkGrid g, const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ out) {
    unsigned int k = ink_index();
    if (k >= (unsigned int)(g.nx * g.ny)) return;
    int i = (int)(k % (unsigned int)g.nx), j = (int)(k / (unsigned int)g.nx);
    float2 c = at_centre(g, u, v, i, j);
    bool stick_l = (g.sticks & STICK_LEFT) != 0u, stick_r = (g.sticks & STICK_RIGHT) != 0u;
    bool stick_b = (g.sticks & STICK_BOTTOM) != 0u, stick_t = (g.sticks & STICK_TOP) != 0u;
    float left = i > 0 ? at_centre(g, u, v, i - 1, j).y : stick_l ? -c.y : c.y;
    float right = i + 1 < g.nx ? at_centre(g, u, v, i + 1, j).y : stick_r ? -c.y : c.y;
    float below = j > 0 ? at_centre(g, u, v, i, j - 1).x : stick_b ? -c.x : c.x;
    float above = j + 1 < g.ny ? at_centre(g, u, v, i, j + 1).x : stick_t ? -c.x : c.x;
    out[k] = difference(left, i > 0 || stick_l, c.y, right, i + 1 < g.nx || stick_r, g.dx) -
             difference(below, j > 0 || stick_b, c.x, above, j + 1 < g.ny || stick_t, g.dx);
}

// The confinement force of cell (i, j): ε·dx·(N × ω), N the unit gradient of |ω|.
__device__ __forceinline__ float2 confinement(const InkGrid& g, const float* __restrict__ w, int i, int j, float epsilon) {
    int nx = g.nx;
    int il = i > 0 ? i - 1 : 0, ir = min(i + 1, nx - 1);
    int jb = j > 0 ? j - 1 : 0, jt = min(j + 1, g.ny - 1);
    float gx = fabsf(w[j * nx + ir]) - fabsf(w[j * nx + il]);
    float gy = fabsf(w[jt * nx + i]) - fabsf(w[jb * nx + i]);
    float length = sqrtf(gx * gx + gy * gy) + 1e-20f;
    float here = w[j * nx + i];
    return make_float2(epsilon * gy / length * here, -epsilon * gx / length * here);
}

// Vorticity confinement: every open inner face gains dt × the mean of the forces of the two
// cells beside it (computed here for each face: the CPU's per-cell values, recomputed).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
vorticity(const InkGrid g, const float* __restrict__ w, const unsigned char* __restrict__ u_open,
          const unsigned char* __restrict__ v_open, float* __restrict__ u, float* __restrict__ v,
          float dt, float epsilon) {
    unsigned int k = ink_index();
    int width = g.nx + 1;
    if (k >= (unsigned int)(width * (g.ny + 1))) return;
    int i = (int)(k % (unsigned int)width), j = (int)(k / (unsigned int)width);
    if (j < g.ny && i >= 1 && i < g.nx && u_open[j * width + i]) {
        float f = confinement(g, w, i - 1, j, epsilon).x + confinement(g, w, i, j, epsilon).x;
        u[j * width + i] += dt * 0.5f * f;
    }
    if (i < g.nx && j >= 1 && j < g.ny && v_open[j * g.nx + i]) {
        float f = confinement(g, w, i, j - 1, epsilon).y + confinement(g, w, i, j, epsilon).y;
        v[j * g.nx + i] += dt * 0.5f * f;
    }
}

// ---- reductions -----------------------------------------------------------------------------

#include "common/reduce.cuh"

// The multigrid pressure solver's kernels (pressure_mg_*), and residual_at / inverse_diagonal.
#include "ink_multigrid.cuh"

// ---- divergence -----------------------------------------------------------------------------

// ∇·u per cell (0 in solids) into `out` (when not null), and Σ d² over the fluid cells of each
// block into partials[block] (the RMS before or after the projection).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
divergence(const InkGrid g, const float* __restrict__ u, const float* __restrict__ v,
           const unsigned char* __restrict__ solid, float* __restrict__ out, double* __restrict__ partials) {
    __shared__ double shared[INK_BLOCK];
    unsigned int k = ink_index();
    double term = 0.0;
    if (k < (unsigned int)(g.nx * g.ny)) {
        int i = (int)(k % (unsigned int)g.nx), j = (int)(k / (unsigned int)g.nx);
        float d = 0.0f;
        if (!solid[k]) {
            int w = g.nx + 1;
            d = (u[j * w + i + 1] - u[j * w + i] + v[(j + 1) * g.nx + i] - v[j * g.nx + i]) / g.dx;
            term = (double)d * (double)d;
        }
        if (out != nullptr) out[k] = d;
    }
    double sum = block_reduce<INK_BLOCK>(term, 0, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// ---- pressure -------------------------------------------------------------------------------

// One Jacobi sweep of Σₙ(pₙ − p) = dx²·∇·u over the cells the stencil bytes describe:
// (Σ fluid neighbours' scale·p − dx²·b) / diagonal. `scale` is the carry-over on the step's
// first sweep (the warm start p × carry, folded in) and 1 after.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure(const InkGrid g, const unsigned char* __restrict__ stencil, const float* __restrict__ b,
         const float* __restrict__ p, float* __restrict__ out, float scale, float dx2) {
    unsigned int k = ink_index();
    if (k >= (unsigned int)(g.nx * g.ny)) return;
    unsigned int cell = stencil[k];
    float sum = 0.0f;
    if (cell & LEFT_BIT) sum += scale * p[k - 1];
    if (cell & RIGHT_BIT) sum += scale * p[k + 1];
    if (cell & BELOW_BIT) sum += scale * p[k - g.nx];
    if (cell & ABOVE_BIT) sum += scale * p[k + g.nx];
    out[k] = (sum - dx2 * b[k]) * inverse_diagonal(cell >> DIAGONAL_SHIFT);
}

// Σ over the solved cells of each block of (b − Σₙ(pₙ − p)/h²)² into partials[block]
// (Poisson::residual_rms; p = 0 beyond outflow sides).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
pressure_residual(const InkGrid g, const unsigned char* __restrict__ stencil, const float* __restrict__ b,
                  const float* __restrict__ p, float weight, double* __restrict__ partials) {
    __shared__ double shared[INK_BLOCK];
    unsigned int k = ink_index();
    double term = 0.0;
    if (k < (unsigned int)(g.nx * g.ny)) {
        unsigned int cell = stencil[k];
        if ((cell >> DIAGONAL_SHIFT) != 0u) {
            float r = residual_at(cell, p, b, k, g.nx, weight);
            term = (double)r * (double)r;
        }
    }
    double sum = block_reduce<INK_BLOCK>(term, 0, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// ---- wall_rows, close_walls --------------------------------------------------------------

#include "ink_walls.cuh"

// ---- subtract_gradient ----------------------------------------------------------------------

// u −= ∇p on every open face (p = 0 beyond the box: outflow sides), one thread per point of
// (nx + 1) × (ny + 1) as in advect_velocity.
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
subtract_gradient(const InkGrid g, const float* __restrict__ p, const unsigned char* __restrict__ u_open,
                  const unsigned char* __restrict__ v_open, float* __restrict__ u, float* __restrict__ v) {
    unsigned int k = ink_index();
    int w = g.nx + 1;
    if (k >= (unsigned int)(w * (g.ny + 1))) return;
    int i = (int)(k % (unsigned int)w), j = (int)(k / (unsigned int)w);
    int nx = g.nx, ny = g.ny;
    if (j < ny && u_open[j * w + i]) {
        float here = i < nx ? p[j * nx + i] : 0.0f;
        float left = i > 0 ? p[j * nx + i - 1] : 0.0f;
        u[j * w + i] -= (here - left) / g.dx;
    }
    if (i < nx && v_open[j * nx + i]) {
        float here = j < ny ? p[j * nx + i] : 0.0f;
        float below = j > 0 ? p[(j - 1) * nx + i] : 0.0f;
        v[j * nx + i] -= (here - below) / g.dx;
    }
}

// ---- statistics -----------------------------------------------------------------------------

// Per block, into partials[q · blocks + block]: q = 0 Σ ink (every channel of every ink cell),
// 1 Σ ½|u|² at the centres, 2 the largest |u|² at a centre, 3 the count of non-finite faces.
// One thread per ink cell (there are at least as many as velocity cells).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
reduce_totals(const InkGrid g, const float* __restrict__ u, const float* __restrict__ v,
              const unsigned char* __restrict__ solid, const float* __restrict__ ink,
              double* __restrict__ partials) {
    __shared__ double shared[INK_BLOCK];
    unsigned int k = ink_index();
    unsigned int n = (unsigned int)(g.ink_nx * g.ink_ny);
    double amount = 0.0, energy = 0.0, fastest = 0.0, bad = 0.0;
    if (k < n) amount = (double)ink[k] + (double)ink[n + k] + (double)ink[2 * n + k];
    if (k < (unsigned int)(g.nx * g.ny)) {
        int i = (int)(k % (unsigned int)g.nx), j = (int)(k / (unsigned int)g.nx), w = g.nx + 1;
        // The fluid's: a solid cell's centre sits between ghost faces (their mirror images).
        if (!solid[k]) {
            float2 c = at_centre(g, u, v, i, j);
            double speed2 = (double)(c.x * c.x + c.y * c.y);
            energy = 0.5 * speed2;
            fastest = speed2;
        }
        bad = (double)(!isfinite(u[j * w + i]) + !isfinite(v[j * g.nx + i]));
        if (i == g.nx - 1) bad += (double)!isfinite(u[j * w + g.nx]);
        if (j == g.ny - 1) bad += (double)!isfinite(v[g.ny * g.nx + i]);
    }
    unsigned int blocks = gridDim.x;
    double s = block_reduce<INK_BLOCK>(amount, 0, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
    s = block_reduce<INK_BLOCK>(energy, 0, shared);
    if (threadIdx.x == 0) partials[blocks + blockIdx.x] = s;
    s = block_reduce<INK_BLOCK>(fastest, 1, shared);
    if (threadIdx.x == 0) partials[2 * blocks + blockIdx.x] = s;
    s = block_reduce<INK_BLOCK>(bad, 0, shared);
    if (threadIdx.x == 0) partials[3 * blocks + blockIdx.x] = s;
}

// Block q reduces partials[q · blocks ..][..blocks] (a sum, or the largest where bit q of
// max_mask is set) into out[first + q].
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
reduce_finish(const double* __restrict__ partials, unsigned int blocks, unsigned int max_mask,
              double* __restrict__ out, unsigned int first) {
    __shared__ double shared[INK_BLOCK];
    unsigned int q = blockIdx.x;
    int take_max = (int)((max_mask >> q) & 1u);
    double value = 0.0;
    for (unsigned int b = threadIdx.x; b < blocks; b += blockDim.x) {
        double x = partials[q * blocks + b];
        value = take_max ? fmax(value, x) : value + x;
    }
    double result = block_reduce<INK_BLOCK>(value, take_max, shared);
    if (threadIdx.x == 0) out[first + q] = result;
}

// ---- picture --------------------------------------------------------------------------------

// Views, as sim.rs `picture` draws them.
#define VIEW_INK 0
#define VIEW_FLOW 1
#define VIEW_SIGNED 2
#define VIEW_SIDE_BY_SIDE 3

#ifndef INK_EMULATION
// One RGBA8 texel of the mapped GL texture (a surface of its level-0 array).
__device__ __forceinline__ void put_texel(unsigned long long surface, int x, int y, uchar4 c) {
    surf2Dwrite(c, (cudaSurfaceObject_t)surface, x * 4, y);
}
#endif

// Whether texel (x, y) of a w × h picture of the domain falls in a solid cell.
__device__ __forceinline__ bool solid_at(const InkGrid& g, const unsigned char* __restrict__ solid, int x, int y, int w, int h) {
    return solid[(y * g.ny / h) * g.nx + x * g.nx / w] != 0;
}

// The obstacles' grey.
__device__ __forceinline__ uchar4 grey() { return make_uchar4(115, 115, 115, 255); }

// sim.rs `to_byte`.
__device__ __forceinline__ unsigned char to_byte(float v) {
    float x = clamp_to(v, 0.0f, 1.0f) * 255.0f + 0.5f;
    return x > 0.0f ? (unsigned char)x : (unsigned char)0;
}

// Per block the largest |scalar| over the cells (q = 0; NaN ignored, as Rust's max) and the
// largest |u|² at a centre (q = 1), into partials[q · blocks + block].
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
picture_scale(const InkGrid g, const float* __restrict__ u, const float* __restrict__ v,
              const float* __restrict__ scalar, double* __restrict__ partials) {
    __shared__ double shared[INK_BLOCK];
    unsigned int k = ink_index();
    double largest = 0.0, fastest = 0.0;
    if (k < (unsigned int)(g.nx * g.ny)) {
        if (scalar != nullptr) largest = (double)fmaxf(0.0f, fabsf(scalar[k]));
        float2 c = at_centre(g, u, v, (int)(k % (unsigned int)g.nx), (int)(k / (unsigned int)g.nx));
        fastest = (double)(c.x * c.x + c.y * c.y);
    }
    double s = block_reduce<INK_BLOCK>(largest, 1, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
    s = block_reduce<INK_BLOCK>(fastest, 1, shared);
    if (threadIdx.x == 0) partials[gridDim.x + blockIdx.x] = s;
}

__device__ __forceinline__ uchar4 flow_colour(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, int i, int j,
                                              float scale) {
    float2 c = at_centre(g, u, v, i, j);
    float speed = sqrtf(c.x * c.x + c.y * c.y);
    return make_uchar4(to_byte(0.5f + c.x * scale), to_byte(0.5f + c.y * scale), to_byte(1.0f - 2.0f * speed * scale), 255);
}

__device__ __forceinline__ uchar4 ink_colour(const float* __restrict__ ink, unsigned int n, unsigned int k, int paper) {
    float rgb[3];
    for (int c = 0; c < 3; ++c) {
        float value = ink[c * n + k];
        rgb[c] = paper ? 1.0f - clamp_to(value, 0.0f, 1.0f) : value;
    }
    return make_uchar4(to_byte(rgb[0]), to_byte(rgb[1]), to_byte(rgb[2]), 255);
}

// The view's RGBA8 picture (rows from the bottom) into the surface, one thread per texel of
// width × height: the ink on its background (VIEW_INK), the flow map (velocity as red/green
// around ½, speed darkening blue, scaled to the fastest centre, stats[fastest_slot] = its |u|²),
// a signed field (blue below zero, red above, scaled to stats[largest_slot]), or the flow map at
// the ink's resolution (nearest) beside the ink; texels in solid cells grey (sim.rs
// `shade_solids`, per picture: the flow map's own texel in the side-by-side view).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
picture(const InkGrid g, int view, int paper, const float* __restrict__ u, const float* __restrict__ v,
        const float* __restrict__ ink, const unsigned char* __restrict__ solid,
        const float* __restrict__ scalar, const double* __restrict__ stats,
        unsigned int largest_slot, unsigned int fastest_slot, unsigned long long surface, int width, int height) {
    unsigned int k = ink_index();
    if (k >= (unsigned int)(width * height)) return;
    int x = (int)(k % (unsigned int)width), y = (int)(k / (unsigned int)width);
    unsigned int n = (unsigned int)(g.ink_nx * g.ink_ny);
    float scale = 0.5f / fmaxf((float)sqrt(stats[fastest_slot]), 1e-6f);
    uchar4 colour;
    if (view == VIEW_INK) {
        colour = ink_colour(ink, n, k, paper);
    } else if (view == VIEW_FLOW) {
        colour = flow_colour(g, u, v, x, y, scale);
    } else if (view == VIEW_SIGNED) {
        float largest = fmaxf(1e-20f, (float)stats[largest_slot]);
        float s = scalar[k] / largest;
        colour = s >= 0.0f ? make_uchar4(255, to_byte(1.0f - s), to_byte(1.0f - s), 255)
                           : make_uchar4(to_byte(1.0f + s), to_byte(1.0f + s), 255, 255);
    } else {
        int iw = g.ink_nx, ih = g.ink_ny;
        if (x < iw) {
            int sx = x * g.nx / iw, sy = y * g.ny / ih;
            colour = solid_at(g, solid, sx, sy, g.nx, g.ny) ? grey() : flow_colour(g, u, v, sx, sy, scale);
        } else {
            colour = ink_colour(ink, n, (unsigned int)(y * iw + x - iw), paper);
            if (solid_at(g, solid, x - iw, y, iw, ih)) colour = grey();
        }
        put_texel(surface, x, y, colour);
        return;
    }
    if (solid_at(g, solid, x, y, width, height)) colour = grey();
    put_texel(surface, x, y, colour);
}
