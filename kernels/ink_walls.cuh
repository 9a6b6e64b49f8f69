// Ink's moving walls on the GPU: after obstacles changed in some rows (a disc moved, cells
// painted; the host sent only those rows' solid bytes, CudaInk::set_walls), `wall_rows` sets what
// follows from them (open masks, stencil bytes, closed faces' fixed velocities) and `close_walls`
// the ghost faces and the solid cells' pressure, as the CPU's Flow::wall_rows and close_rows
// (fields_walls.rs, boundary.rs) do on the host. Host side in src/sims/ink/cuda/walls.rs.
// Included by ink.cu after its helpers.

// ---- wall_rows -------------------------------------------------------------------------------

// A solid cell's velocity (the CPU's fixed_faces_rows, boundary.rs): the first of the `n`
// moving discs (records of centre x, y, radius, velocity x, y) whose disc covers its centre,
// else zero; the same operations as the CPU's, none contracted.
__device__ __forceinline__ float2 solid_velocity(const InkGrid& g, int i, int j, const float* discs, int n) {
    float x = __fmul_rn((float)i + 0.5f, g.dx), y = __fmul_rn((float)j + 0.5f, g.dx);
    for (int d = 0; d < n; ++d) {
        const float* disc = discs + 5 * d;
        float ex = x - disc[0], ey = y - disc[1];
        if (__fadd_rn(__fmul_rn(ex, ex), __fmul_rn(ey, ey)) <= __fmul_rn(disc[2], disc[2]))
            return make_float2(disc[3], disc[4]);
    }
    return make_float2(0.0f, 0.0f);
}

// The fixed velocity of a face between cells a and b (either may be fluid: none, one or two
// solid), the `axis` component of their velocities' mean (fixed_faces_rows' `mean`).
__device__ __forceinline__ float face_fixed(bool solid_a, float2 a, bool solid_b, float2 b, int axis) {
    float va = axis == 0 ? a.x : a.y, vb = axis == 0 ? b.x : b.y;
    if (solid_a && solid_b) return 0.5f * (va + vb);
    if (solid_a) return va;
    if (solid_b) return vb;
    return 0.0f;
}

// After the cells of rows j0..j1 changed (a disc moved, cells painted; the host sent only those
// rows' solid bytes, CudaInk::set_walls), what follows from them on the GPU, as the CPU's
// Flow::wall_rows (fields_walls.rs) sets it on the host: the open masks of the u faces of rows
// j0..j1 and the v faces of rows j0..=j1, the stencil of their cells (boundary.rs
// Poisson::update_rows), and the closed faces' fixed velocities (boundary.rs
// fixed_faces_rows: a side's on the box's sides, the mean of the solid cells' beside the face
// inside, a solid cell's that of the first of the `n` moving `discs` covering its centre) of
// the u faces of rows f0..f1 and the v faces of rows f0..=f1 (the rows the host set them in).
// One thread per point of (nx + 1) × (j1 − j0 + 1), as close_walls (launched after it).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
wall_rows(const InkGrid g, int j0, int j1, int f0, int f1, const unsigned char* __restrict__ solid,
          const float* __restrict__ discs, int n, unsigned char* __restrict__ u_open,
          unsigned char* __restrict__ v_open, unsigned char* __restrict__ stencil,
          float* __restrict__ u_fixed, float* __restrict__ v_fixed) {
    unsigned int k = ink_index();
    int w = g.nx + 1;
    if (k >= (unsigned int)(w * (j1 - j0 + 1))) return;
    int i = (int)(k % (unsigned int)w), j = j0 + (int)(k / (unsigned int)w);
    int nx = g.nx, ny = g.ny;
    unsigned int out = g.outflow;
    auto fluid = [&](int ci, int cj) { return !solid[cj * nx + ci]; };
    auto velocity = [&](int ci, int cj) {
        return n > 0 && !fluid(ci, cj) ? solid_velocity(g, ci, cj, discs, n) : make_float2(0.0f, 0.0f);
    };
    if (j < j1) {
        bool left = i > 0 && fluid(i - 1, j), right = i < nx && fluid(i, j);
        u_open[j * w + i] = (left && right) || (i == 0 && right && (out & STICK_LEFT)) ||
                            (i == nx && left && (out & STICK_RIGHT));
        if (j >= f0 && j < f1) {
            float fixed = i == 0    ? g.fixed_left
                          : i == nx ? g.fixed_right
                          : n == 0  ? 0.0f
                                    : face_fixed(!fluid(i - 1, j), velocity(i - 1, j), !fluid(i, j),
                                                 velocity(i, j), 0);
            u_fixed[j * w + i] = fixed;
        }
    }
    if (i < nx && j <= ny) {
        bool below = j > 0 && fluid(i, j - 1), above = j < ny && fluid(i, j);
        v_open[j * nx + i] = (below && above) || (j == 0 && above && (out & STICK_BOTTOM)) ||
                             (j == ny && below && (out & STICK_TOP));
        if (j >= f0 && j <= f1) {
            float fixed = j == 0    ? g.fixed_bottom
                          : j == ny ? g.fixed_top
                          : n == 0  ? 0.0f
                                    : face_fixed(!fluid(i, j - 1), velocity(i, j - 1), !fluid(i, j),
                                                 velocity(i, j), 1);
            v_fixed[j * nx + i] = fixed;
        }
    }
    if (i < nx && j < j1) {
        unsigned int cell = 0u;
        if (fluid(i, j)) {
            unsigned int bits = 0u, diagonal = 0u;
            auto side = [&](bool inside, int ni, int nj, unsigned int bit, unsigned int outflow) {
                if (inside) {
                    if (fluid(ni, nj)) { bits |= bit; ++diagonal; }
                } else if (out & outflow) {
                    ++diagonal;
                }
            };
            side(i > 0, i - 1, j, LEFT_BIT, STICK_LEFT);
            side(i + 1 < nx, i + 1, j, RIGHT_BIT, STICK_RIGHT);
            side(j > 0, i, j - 1, BELOW_BIT, STICK_BOTTOM);
            side(j + 1 < ny, i, j + 1, ABOVE_BIT, STICK_TOP);
            cell = bits | diagonal << DIAGONAL_SHIFT;
        }
        stencil[j * nx + i] = (unsigned char)cell;
    }
}

// ---- close_walls ----------------------------------------------------------------------------

// A ghost face's value from its wall's fixed velocity and the sum of its `n` sources (no-slip:
// twice the wall's minus the fluid's, the tangential velocity at the face the wall's; else the
// fluid's: it slides).
__device__ __forceinline__ float mirrored(bool stick, float fixed, float sum, int n) {
    float fluid = sum / (float)n;
    return stick ? 2.0f * fixed - fluid : fluid;
}

// After obstacles changed in the rows of cells j0..j1 (a disc moved, cells painted; the host
// sent those rows' masks and fixed velocities, CudaInk::set_walls): every closed face of those
// rows — the u faces of rows j0..j1, the v faces of rows j0..=j1 — takes its fixed velocity (a
// moving disc's, zero, a side's), and the solid cells' pressure becomes zero (the CPU's
// Flow::close_rows and zero_solid_pressure); a ghost face — closed, between two solid cells —
// takes the mirror image of its sources' tangential velocity (Flow::mirror_rows: the faces
// beside it across the obstacle's face, not between two solid cells; a closed source with its
// fixed velocity). Launched for every row after subtract_gradient when there are obstacles.
// One thread per point of (nx + 1) × (j1 − j0 + 1).
extern "C" __global__ void __launch_bounds__(INK_BLOCK)
close_walls(const InkGrid g, int j0, int j1, float* __restrict__ u, float* __restrict__ v, float* __restrict__ p,
            const unsigned char* __restrict__ u_open, const unsigned char* __restrict__ v_open,
            const unsigned char* __restrict__ solid, const float* __restrict__ u_fixed,
            const float* __restrict__ v_fixed) {
    unsigned int k = ink_index();
    int w = g.nx + 1;
    if (k >= (unsigned int)(w * (j1 - j0 + 1))) return;
    int i = (int)(k % (unsigned int)w), j = j0 + (int)(k / (unsigned int)w);
    int nx = g.nx;
    bool stick = (g.sticks & STICK_OBSTACLES) != 0u;
    if (j < j1) {
        int ku = j * w + i;
        if (!u_open[ku]) {
            float value = u_fixed[ku];
            if (i > 0 && i < nx && solid[j * nx + i - 1] && solid[j * nx + i]) {
                float sum = 0.0f;
                int n = 0;
                for (int s = j - 1; s <= j + 1; s += 2) {
                    if (s >= 0 && s < g.ny && !(solid[s * nx + i - 1] && solid[s * nx + i])) {
                        int ks = s * w + i;
                        sum += u_open[ks] ? u[ks] : u_fixed[ks];
                        n++;
                    }
                }
                if (n > 0) value = mirrored(stick, value, sum, n);
            }
            u[ku] = value;
        }
    }
    if (i < nx && j <= g.ny) {
        int kv = j * nx + i;
        if (!v_open[kv]) {
            float value = v_fixed[kv];
            if (j > 0 && j < g.ny && solid[(j - 1) * nx + i] && solid[j * nx + i]) {
                float sum = 0.0f;
                int n = 0;
                for (int s = i - 1; s <= i + 1; s += 2) {
                    if (s >= 0 && s < nx && !(solid[(j - 1) * nx + s] && solid[j * nx + s])) {
                        int ks = j * nx + s;
                        sum += v_open[ks] ? v[ks] : v_fixed[ks];
                        n++;
                    }
                }
                if (n > 0) value = mirrored(stick, value, sum, n);
            }
            v[kv] = value;
        }
    }
    if (i < g.nx && j < j1) {
        int kc = j * g.nx + i;
        if (solid[kc]) p[kc] = 0.0f;
    }
}
