// Shared header of the PBF kernels: the parameter block (mirrored field for field by
// `src/sim/cuda/params.rs`), the SPH kernel math and the wall/obstacle projection.
//
// Every formula here is the CPU reference's (`src/sim/kernel.rs`, `src/sim/world.rs`,
// `src/sim/grid.rs`), in the same operation order, so the two solvers differ only by float
// reassociation in neighbour sums (and FMA contraction). No system headers: NVRTC compiles this
// file at run time when the binary carries no prebuilt PTX.
#pragma once

// One step's constants, derived on the host from `Params` (see `GpuParams::new`).
struct PbfParams {
    // Grid: origin = container.min, cell size h, cells numbered x fastest.
    float grid_origin_x, grid_origin_y, grid_origin_z;
    float inverse_cell_size;
    int grid_dims_x, grid_dims_y, grid_dims_z;
    unsigned int particle_count;
    // Time step of one solver step (substep) and its inverse.
    float dt;
    float inverse_dt;
    float gravity_x, gravity_y, gravity_z;
    // SPH kernels (Müller et al. 2003): support h, h², Poly6 and Spiky-gradient coefficients,
    // and the squared distance under which two particles count as coincident.
    float kernel_radius;
    float kernel_radius_squared;
    float poly6_coefficient;
    float spiky_gradient_coefficient;
    float coincident_squared;
    // PBF constants (Macklin & Müller 2013).
    float mass;
    float volume;
    float inverse_rest_density;
    float self_density;
    float relaxation;
    float scorr_scale;
    float inverse_scorr_reference;
    int scorr_n;
    // Walls and obstacles keep particle centres `margin` (the particle radius) away.
    float margin;
    float container_lo_x, container_lo_y, container_lo_z;
    float container_hi_x, container_hi_y, container_hi_z;
    unsigned int obstacle_count;
    // ε_vort · dt and c_xsph · V.
    float vorticity_scale;
    float xsph_scale;
};

// A static obstacle: a sphere (kind 0: a = centre, radius) or a box (kind 1: a = min, b = max).
struct PbfObstacle {
    float a_x, a_y, a_z;
    float radius;
    float b_x, b_y, b_z;
    unsigned int kind;
};

#define PBF_OBSTACLE_SPHERE 0u
#define PBF_OBSTACLE_BOX 1u

__device__ __forceinline__ float3 make3(float4 v) { return make_float3(v.x, v.y, v.z); }
__device__ __forceinline__ float4 make4(float3 v) { return make_float4(v.x, v.y, v.z, 0.0f); }
__device__ __forceinline__ float3 operator+(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ float3 operator-(float3 a, float3 b) { return make_float3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ float3 operator*(float3 a, float s) { return make_float3(a.x * s, a.y * s, a.z * s); }
__device__ __forceinline__ void operator+=(float3& a, float3 b) { a.x += b.x; a.y += b.y; a.z += b.z; }
__device__ __forceinline__ float dot3(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ float3 cross3(float3 a, float3 b) {
    return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
__device__ __forceinline__ bool finite3(float3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

// Poly6 W(r) = 315 / (64 π h⁹) · (h² − r²)³ for r < h, else 0; takes r².
__device__ __forceinline__ float poly6(const PbfParams& p, float r2) {
    if (r2 >= p.kernel_radius_squared) return 0.0f;
    float d = p.kernel_radius_squared - r2;
    return p.poly6_coefficient * d * d * d;
}

// Spiky gradient ∇ᵢW = −45 / (π h⁶) · (h − r)² · r̂ for 0 < r < h, else 0; offset = xᵢ − xⱼ.
__device__ __forceinline__ float3 spiky_gradient(const PbfParams& p, float3 offset, float r2) {
    if (r2 >= p.kernel_radius_squared || r2 <= 0.0f) return make_float3(0.0f, 0.0f, 0.0f);
    float r = sqrtf(r2);
    float d = p.kernel_radius - r;
    return offset * (p.spiky_gradient_coefficient * d * d / r);
}

// A unit vector that depends only on the ordered id pair (`pair_direction` in kernel.rs).
__device__ __forceinline__ float3 pair_direction(unsigned int low, unsigned int high) {
    unsigned int x = (low * 0x9E3779B9u) ^ (high * 0x85EBCA6Bu);
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    float3 v = make_float3((float)(x & 0x3FFu) / 511.5f - 1.0f,
                           (float)((x >> 10) & 0x3FFu) / 511.5f - 1.0f,
                           (float)((x >> 20) & 0x3FFu) / 511.5f - 1.0f);
    float length_squared = dot3(v, v);
    if (length_squared < 1e-6f) return make_float3(0.0f, 1.0f, 0.0f);
    return v * (1.0f / sqrtf(length_squared));
}

// The Spiky gradient, or for (nearly) coincident particles a fixed direction from the two ids,
// antisymmetric in i and j (`SphKernel::pair_gradient`).
__device__ __forceinline__ float3 pair_gradient(const PbfParams& p, float3 offset, float r2,
                                                unsigned int id_i, unsigned int id_j) {
    if (r2 > p.coincident_squared) return spiky_gradient(p, offset, r2);
    bool ordered = id_i < id_j;
    float3 direction = pair_direction(ordered ? id_i : id_j, ordered ? id_j : id_i);
    return direction * ((ordered ? 1.0f : -1.0f) * p.spiky_gradient_coefficient * p.kernel_radius_squared);
}

// xⁿ by binary powering, as Rust's `f32::powi` (compiler-rt `__powisf2`) computes it.
__device__ __forceinline__ float powi(float x, int n) {
    bool reciprocal = n < 0;
    unsigned int b = reciprocal ? (unsigned int)(-n) : (unsigned int)n;
    float r = 1.0f;
    while (true) {
        if (b & 1u) r *= x;
        b >>= 1;
        if (b == 0u) break;
        x *= x;
    }
    return reciprocal ? 1.0f / r : r;
}

// Pushes a point out of one obstacle grown by `margin` (`Obstacle::project`).
// `Obstacle::project_within`: a box is left through the nearest face whose exit point lies in
// the admissible part of the container (lo..hi), else through the nearest face.
__device__ __forceinline__ float3 project_obstacle(const PbfObstacle& o, float3 point, float margin,
                                                   const float* admissible_lo, const float* admissible_hi) {
    if (o.kind == PBF_OBSTACLE_SPHERE) {
        float3 center = make_float3(o.a_x, o.a_y, o.a_z);
        float3 offset = point - center;
        float distance_squared = dot3(offset, offset);
        float reach = o.radius + margin;
        if (distance_squared >= reach * reach) return point;
        float distance = sqrtf(distance_squared);
        float3 direction = distance > 0.0f
            ? make_float3(offset.x / distance, offset.y / distance, offset.z / distance)
            : make_float3(0.0f, 1.0f, 0.0f);
        return center + direction * reach;
    }
    float lo[3] = {o.a_x - margin, o.a_y - margin, o.a_z - margin};
    float hi[3] = {o.b_x + margin, o.b_y + margin, o.b_z + margin};
    float q[3] = {point.x, point.y, point.z};
    if (q[0] <= lo[0] || q[1] <= lo[1] || q[2] <= lo[2] || q[0] >= hi[0] || q[1] >= hi[1] || q[2] >= hi[2])
        return point;
    // Ties go to the first face in x-min, x-max, y-min... order, as on the CPU.
    const float infinity = __int_as_float(0x7f800000);
    float nearest = infinity, admissible = infinity;
    int nearest_axis = 0, admissible_axis = 0;
    float nearest_value = q[0], admissible_value = q[0];
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            float exit = side == 0 ? lo[axis] : hi[axis];
            float distance = side == 0 ? q[axis] - lo[axis] : hi[axis] - q[axis];
            if (distance < nearest) { nearest = distance; nearest_axis = axis; nearest_value = exit; }
            if (distance < admissible && exit >= admissible_lo[axis] && exit <= admissible_hi[axis]) {
                admissible = distance; admissible_axis = axis; admissible_value = exit;
            }
        }
    }
    int axis = admissible < infinity ? admissible_axis : nearest_axis;
    float value = admissible < infinity ? admissible_value : nearest_value;
    q[0] = axis == 0 ? value : q[0];
    q[1] = axis == 1 ? value : q[1];
    q[2] = axis == 2 ? value : q[2];
    return make_float3(q[0], q[1], q[2]);
}

// Obstacles in order, then the container clamp (`World::project`).
__device__ __forceinline__ float3 project(const PbfParams& p, const PbfObstacle* obstacles, float3 point) {
    const float lo[3] = {p.container_lo_x, p.container_lo_y, p.container_lo_z};
    const float hi[3] = {p.container_hi_x, p.container_hi_y, p.container_hi_z};
    for (unsigned int k = 0; k < p.obstacle_count; ++k) point = project_obstacle(obstacles[k], point, p.margin, lo, hi);
    return make_float3(fminf(fmaxf(point.x, p.container_lo_x), p.container_hi_x),
                       fminf(fmaxf(point.y, p.container_lo_y), p.container_hi_y),
                       fminf(fmaxf(point.z, p.container_lo_z), p.container_hi_z));
}

// Integer cell coordinates of a point, clamped into the grid (`UniformGrid::cell_coords`).
__device__ __forceinline__ int3 cell_coords(const PbfParams& p, float3 point) {
    int x = (int)floorf((point.x - p.grid_origin_x) * p.inverse_cell_size);
    int y = (int)floorf((point.y - p.grid_origin_y) * p.inverse_cell_size);
    int z = (int)floorf((point.z - p.grid_origin_z) * p.inverse_cell_size);
    return make_int3(min(max(x, 0), p.grid_dims_x - 1), min(max(y, 0), p.grid_dims_y - 1),
                     min(max(z, 0), p.grid_dims_z - 1));
}

__device__ __forceinline__ unsigned int cell_index(const PbfParams& p, int x, int y, int z) {
    return (unsigned int)x + (unsigned int)p.grid_dims_x * ((unsigned int)y + (unsigned int)p.grid_dims_y * (unsigned int)z);
}

// Visits every neighbour j ≠ i of sorted particle i: the particles within h of it at the
// positions the grid was built from (`grid_positions`), found in the 27 cells around it as 9
// contiguous x-row ranges (cells are numbered x fastest). These are exactly the CPU solver's
// neighbour lists (`find_neighbors`), fixed for the whole step while the particles move through
// the constraint iterations (Macklin & Müller 2013, Algorithm 1).
template <typename Visit>
__device__ __forceinline__ void for_each_neighbor(const PbfParams& p, const unsigned int* __restrict__ cell_start,
                                                  const float4* __restrict__ grid_positions, unsigned int i,
                                                  Visit visit) {
    float3 home = make3(grid_positions[i]);
    int3 c = cell_coords(p, home);
    int x0 = max(c.x - 1, 0);
    int x1 = min(c.x + 1, p.grid_dims_x - 1);
    int z1 = min(c.z + 1, p.grid_dims_z - 1);
    int y1 = min(c.y + 1, p.grid_dims_y - 1);
    for (int z = max(c.z - 1, 0); z <= z1; ++z) {
        for (int y = max(c.y - 1, 0); y <= y1; ++y) {
            unsigned int end = cell_start[cell_index(p, x1, y, z) + 1];
            for (unsigned int j = cell_start[cell_index(p, x0, y, z)]; j < end; ++j) {
                float3 offset = make3(grid_positions[j]) - home;
                if (j != i && dot3(offset, offset) < p.kernel_radius_squared) visit(j);
            }
        }
    }
}
