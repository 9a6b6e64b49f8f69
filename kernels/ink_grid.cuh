// Ink's grid on the GPU, shared by every stage of ink.cu and ink_multigrid.cuh: the fields'
// layout constants, the records the host passes by value (InkGrid, InkSplat), and the velocity
// sampler with the trace and the MacCormack correction the advection runs (the CPU's
// fields_sampler.rs and advect/mod.rs, the same operations in the same order).
#pragma once

#define INK_BLOCK 256

// Bits of InkGrid::sticks: the tangential velocity falls to zero at this side (no-slip wall).
#define STICK_LEFT 1u
#define STICK_RIGHT 2u
#define STICK_BOTTOM 4u
#define STICK_TOP 8u
#define STICK_SIDES 15u
// Bit of InkGrid::sticks: obstacles are no-slip (their ghost faces mirror the fluid's
// tangential velocity to the wall's; close_walls).
#define STICK_OBSTACLES 16u
// Bits of a cell's stencil byte (boundary.rs): fluid neighbours; the diagonal above bit 4.
#define LEFT_BIT 1u
#define RIGHT_BIT 2u
#define BELOW_BIT 4u
#define ABOVE_BIT 8u
#define DIAGONAL_SHIFT 4u

// Mirrored field for field by `InkGrid` in src/sims/ink/cuda/kernels.rs.
struct InkGrid {
    int nx, ny;            // velocity cells
    int ink_nx, ink_ny;    // ink cells
    int ink_scale;         // ink cells per velocity cell per axis
    float dx;              // cell size, m
    float inverse_dx;      // 1 / dx (the flow lattices' inverse spacing)
    float ink_h;           // ink cell size dx / s
    float ink_inverse_h;   // 1 / ink_h
    float half_cell;       // ½ dx
    float width, height;   // nx·dx, ny·dx
    unsigned int sticks;   // STICK_* bits
    float fixed_left, fixed_right, fixed_bottom, fixed_top;  // closed boundary faces' velocity
    unsigned int outflow;  // outflow sides (zero pressure beyond), bits as STICK_LEFT..STICK_TOP
};

// One brush stamp on one lattice: the box of points it reaches (three radii, as the CPU's
// add_gaussian computes it on the host), what it adds to up to three fields there, and how the
// brush stamp's texture is turned over it.
// Mirrored by `InkSplat` in src/sims/ink/cuda/kernels/splat.rs.
struct InkSplat {
    int nx;                // the lattice's points per row
    int i0, j0;            // the box's first point
    int width, rows;       // the box's size in points
    float ox, oy, h;       // the lattice's offset (spacings) and spacing
    float px, py, radius;  // the stamp
    float amount0, amount1, amount2;
    float dir_x, dir_y;    // the brush's direction of motion (unit)
    int masked;            // whether the amounts are × the brush stamp's alpha (stamp.rs)
};

// The brush stamp's texels per side (stamp.rs STAMP_TEXELS).
#define STAMP_TEXELS 64

struct Stencil {
    int k;
    float tx, ty;
    float w;  // what the interpolated value is multiplied by (the no-slip factor; 1 elsewhere)
};

__device__ __forceinline__ unsigned int ink_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Rust's f32::clamp: NaN stays NaN.
__device__ __forceinline__ float clamp_to(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Lattice::bilinear: where (x, y) m falls on a lattice of nx × ny points, offset (ox, oy)
// spacings, clamped to it (max then min, as Rust's f32::max/min: NaN becomes 0).
__device__ __forceinline__ Stencil locate(int nx, int ny, float ox, float oy, float inverse_h, float x, float y) {
    float fx = fminf(fmaxf(x * inverse_h - ox, 0.0f), (float)(nx - 1));
    float fy = fminf(fmaxf(y * inverse_h - oy, 0.0f), (float)(ny - 1));
    int i = min((int)fx, nx - 2);
    int j = min((int)fy, ny - 2);
    Stencil s;
    s.k = j * nx + i;
    s.tx = fx - (float)i;
    s.ty = fy - (float)j;
    s.w = 1.0f;
    return s;
}

// fields.rs `bilinear`.
__device__ __forceinline__ float bilinear(const float* __restrict__ q, int nx, Stencil s) {
    float a = q[s.k], b = q[s.k + 1], c = q[s.k + nx], d = q[s.k + nx + 1];
    return (a + (b - a) * s.tx) * (1.0f - s.ty) + (c + (d - c) * s.tx) * s.ty;
}

// advect/mod.rs `flush`: tails below 1e-30 become zero.
__device__ __forceinline__ float flush(float value) { return fabsf(value) < 1e-30f ? 0.0f : value; }

// VelocitySampler::at_u_face.
__device__ __forceinline__ float2 at_u_face(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, int i, int j) {
    int nx = g.nx;
    int il = i > 0 ? i - 1 : 0, ir = min(i, nx - 1);
    const float* below = v + j * nx;
    const float* above = v + (j + 1) * nx;
    float mean = 0.25f * (below[il] + below[ir] + above[il] + above[ir]);
    if ((i == 0 && (g.sticks & STICK_LEFT)) || (i == nx && (g.sticks & STICK_RIGHT))) mean = 0.0f;
    return make_float2(u[j * (nx + 1) + i], mean);
}

// VelocitySampler::at_v_face.
__device__ __forceinline__ float2 at_v_face(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, int i, int j) {
    int w = g.nx + 1, ny = g.ny;
    int jb = j > 0 ? j - 1 : 0, jt = min(j, ny - 1);
    const float* lo = u + jb * w + i;
    const float* hi = u + jt * w + i;
    float mean = 0.25f * (lo[0] + lo[1] + hi[0] + hi[1]);
    if ((j == 0 && (g.sticks & STICK_BOTTOM)) || (j == ny && (g.sticks & STICK_TOP))) mean = 0.0f;
    return make_float2(mean, v[j * g.nx + i]);
}

// VelocitySampler::at_centre (and Flow::center_velocity).
__device__ __forceinline__ float2 at_centre(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, int i, int j) {
    const float* uu = u + j * (g.nx + 1) + i;
    return make_float2(0.5f * (uu[0] + uu[1]), 0.5f * (v[j * g.nx + i] + v[(j + 1) * g.nx + i]));
}

// VelocitySampler::u_factor: what a horizontal velocity sampled at height y is multiplied by —
// falling linearly to zero over the half cell next to a no-slip bottom or top wall, 1 elsewhere.
__device__ __forceinline__ float u_factor(const InkGrid& g, float y) {
    float h = g.half_cell;
    if ((g.sticks & STICK_BOTTOM) && y < h) return fmaxf(y / h, 0.0f);
    if ((g.sticks & STICK_TOP) && y > g.height - h) return fmaxf((g.height - y) / h, 0.0f);
    return 1.0f;
}

// VelocitySampler::v_factor: the same for a vertical velocity at x (left and right walls).
__device__ __forceinline__ float v_factor(const InkGrid& g, float x) {
    float h = g.half_cell;
    if ((g.sticks & STICK_LEFT) && x < h) return fmaxf(x / h, 0.0f);
    if ((g.sticks & STICK_RIGHT) && x > g.width - h) return fmaxf((g.width - x) / h, 0.0f);
    return 1.0f;
}

// VelocitySampler::velocity: bilinear on each face lattice, the tangential velocity × the
// no-slip factors.
__device__ __forceinline__ float2 velocity_at(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, float x, float y) {
    float uu = bilinear(u, g.nx + 1, locate(g.nx + 1, g.ny, 0.0f, 0.5f, g.inverse_dx, x, y));
    float vv = bilinear(v, g.nx, locate(g.nx, g.ny + 1, 0.5f, 0.0f, g.inverse_dx, x, y));
    if ((g.sticks & STICK_SIDES) != 0u) return make_float2(uu * u_factor(g, y), vv * v_factor(g, x));
    return make_float2(uu, vv);
}

// Which lattice a trace runs on (advect/mod.rs Points): its wall factor.
#define ON_U_FACES 0
#define ON_V_FACES 1
#define ON_INK 2

// advect/mod.rs `trace`: where the point (x, y), moving at `vel` there, comes from dt earlier — a
// midpoint (second-order Runge–Kutta) trace through the sampled velocity half a step back — as
// a stencil of the lattice (nx × ny points, offset (ox, oy), 1/h), with the wall factor of the
// foot for the flow's own tangential components.
__device__ __forceinline__ Stencil trace(const InkGrid& g, const float* __restrict__ u, const float* __restrict__ v, int on,
                                         int nx, int ny, float ox, float oy, float inverse_h, float x, float y, float2 vel,
                                         float dt) {
    float2 mid = velocity_at(g, u, v, x - 0.5f * dt * vel.x, y - 0.5f * dt * vel.y);
    float fx = x - dt * mid.x, fy = y - dt * mid.y;
    Stencil s = locate(nx, ny, ox, oy, inverse_h, fx, fy);
    if ((g.sticks & STICK_SIDES) != 0u) s.w = on == ON_U_FACES ? u_factor(g, fy) : on == ON_V_FACES ? v_factor(g, fx) : 1.0f;
    return s;
}

// The fixed velocity of a closed vertical face in column i / horizontal face in row j: the
// side's on the box's sides; inside, `wall`, the value the face holds (the host wrote it,
// fields.rs close_faces: zero for a resting solid, a moving disc's velocity on its cells' faces,
// boundary.rs fixed_faces; every kernel leaves closed faces as they are).
__device__ __forceinline__ float fixed_u(const InkGrid& g, int i, float wall) { return i == 0 ? g.fixed_left : (i == g.nx ? g.fixed_right : wall); }
__device__ __forceinline__ float fixed_v(const InkGrid& g, int j, float wall) { return j == 0 ? g.fixed_bottom : (j == g.ny ? g.fixed_top : wall); }

// The MacCormack correction of one value (advect/mod.rs): φ̂ + ½(φ − φ̂ traced forward), clamped to
// the four values φ̂ was read from (each side × its trace's wall factor).
__device__ __forceinline__ float corrected(const float* __restrict__ field, const float* __restrict__ hat, int nx, int k,
                                           Stencil back, Stencil ahead) {
    float a = field[back.k], b = field[back.k + 1], c = field[back.k + nx], d = field[back.k + nx + 1];
    float low = fminf(fminf(a, b), fminf(c, d)) * back.w;
    float high = fmaxf(fmaxf(a, b), fmaxf(c, d)) * back.w;
    float round_trip = bilinear(hat, nx, ahead) * ahead.w;
    float value = hat[k] + 0.5f * (field[k] - round_trip);
    return clamp_to(value, low, high);
}
