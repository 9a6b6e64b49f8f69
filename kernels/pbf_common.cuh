// Shared header of the PBF kernels: the parameter block (mirrored field for field by
// `src/sims/pbf/cuda/params.rs`), the SPH kernel math, the wall/obstacle projection and the walls'
// and obstacles' density (the virtual boundary layers).
//
// Every formula here is the CPU reference's (`src/sims/pbf/kernel.rs`, `src/sims/pbf/world.rs`,
// `src/sims/pbf/grid.rs`, `src/sims/pbf/boundary.rs`), in the same operation order, so the two solvers
// differ only by float reassociation in neighbour sums (and FMA contraction). No system headers:
// NVRTC compiles this file at run time when the binary carries no prebuilt PTX.
#pragma once

#include "common/vec.cuh"

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
    // The Wendland C2 kernel: support h, h², 1/h, the density and gradient coefficients, the
    // largest gradient magnitude, and the squared distance under which two particles count as
    // coincident.
    float kernel_radius;
    float kernel_radius_squared;
    float inverse_kernel_radius;
    float density_coefficient;
    float gradient_coefficient;
    float gradient_peak;
    float coincident_squared;
    // PBF constants (Macklin & Müller 2013).
    float mass;
    float volume;
    float inverse_rest_density;
    float self_density;
    float relaxation;
    // ω: every λ is scaled by it (relaxed Jacobi, `Params::jacobi_relaxation`).
    float jacobi_relaxation;
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
    // The virtual boundary layers (`boundary.rs`): the lattice spacing, the lattice steps within
    // h, and the container's walls (not shrunk by the margin).
    float spacing;
    int boundary_steps;
    float wall_lo_x, wall_lo_y, wall_lo_z;
    float wall_hi_x, wall_hi_y, wall_hi_z;
    // The coarse grid (`coarse.rs`): the neighbour grid's cell counts over the container, cells
    // of container size / count per axis (origin = grid_origin = the container's lower corner).
    float coarse_cell_x, coarse_cell_y, coarse_cell_z;
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

// Wendland C2: W(r) = 21 / (2π h³) · (1 − q)⁴ (1 + 4q), q = r/h < 1, else 0; takes r²
// (`SphKernel::density`).
__device__ __forceinline__ float kernel_density(const PbfParams& p, float r2) {
    if (r2 >= p.kernel_radius_squared) return 0.0f;
    float q = sqrtf(r2) * p.inverse_kernel_radius;
    float a = 1.0f - q;
    float a2 = a * a;
    return p.density_coefficient * a2 * a2 * (1.0f + 4.0f * q);
}

// ∇ᵢW = −210 / (π h⁵) · (1 − q)³ · (xᵢ − xⱼ) for r < h, else 0; offset = xᵢ − xⱼ
// (`SphKernel::gradient`).
__device__ __forceinline__ float3 kernel_gradient(const PbfParams& p, float3 offset, float r2) {
    if (r2 >= p.kernel_radius_squared) return make_float3(0.0f, 0.0f, 0.0f);
    float a = 1.0f - sqrtf(r2) * p.inverse_kernel_radius;
    return offset * (p.gradient_coefficient * a * a * a);
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

// ∇W, or for (nearly) coincident particles a fixed direction from the two ids of the kernel's
// largest gradient magnitude, antisymmetric in i and j (`SphKernel::pair_gradient`).
__device__ __forceinline__ float3 pair_gradient(const PbfParams& p, float3 offset, float r2,
                                                unsigned int id_i, unsigned int id_j) {
    if (r2 > p.coincident_squared) return kernel_gradient(p, offset, r2);
    bool ordered = id_i < id_j;
    float3 direction = pair_direction(ordered ? id_i : id_j, ordered ? id_j : id_i);
    return direction * ((ordered ? 1.0f : -1.0f) * p.gradient_peak);
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

// `Obstacle::push_out`: a point inside one obstacle grown by `margin` put on its surface (a box
// left through the nearest face whose exit point lies in the admissible part of the container,
// lo..hi, else through the nearest face; a face at or beyond a side of lo..hi reaches through
// that wall), `normal` the surface's outward unit normal there; false (point and normal
// untouched) for a point outside, on the surface or not finite.
__device__ __forceinline__ bool push_out_obstacle(const PbfObstacle& o, float3& point, float3& normal, float margin,
                                                  const float* admissible_lo, const float* admissible_hi) {
    if (o.kind == PBF_OBSTACLE_SPHERE) {
        float3 center = make_float3(o.a_x, o.a_y, o.a_z);
        float3 offset = point - center;
        float distance_squared = dot3(offset, offset);
        float reach = o.radius + margin;
        if (!(distance_squared < reach * reach)) return false;  // NaN too: it stays NaN, to be found
        float distance = sqrtf(distance_squared);
        float3 direction = distance > 0.0f
            ? make_float3(offset.x / distance, offset.y / distance, offset.z / distance)
            : make_float3(0.0f, 1.0f, 0.0f);
        point = center + direction * reach;
        normal = direction;
        return true;
    }
    const float infinity = __int_as_float(0x7f800000);
    float lo[3] = {o.a_x - margin, o.a_y - margin, o.a_z - margin};
    float hi[3] = {o.b_x + margin, o.b_y + margin, o.b_z + margin};
    // A face at or beyond a wall reaches through it (foam lies exactly on the floor, margin 0).
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
        if (lo[axis] <= admissible_lo[axis]) lo[axis] = -infinity;
        if (hi[axis] >= admissible_hi[axis]) hi[axis] = infinity;
    }
    float q[3] = {point.x, point.y, point.z};
    if (q[0] <= lo[0] || q[1] <= lo[1] || q[2] <= lo[2] || q[0] >= hi[0] || q[1] >= hi[1] || q[2] >= hi[2])
        return false;
    // Ties go to the first face in x-min, x-max, y-min... order, as on the CPU.
    float nearest = infinity, admissible = infinity;
    int nearest_axis = 0, admissible_axis = 0;
    float nearest_value = q[0], admissible_value = q[0];
    float nearest_side = -1.0f, admissible_side = -1.0f;
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            float exit = side == 0 ? lo[axis] : hi[axis];
            float distance = side == 0 ? q[axis] - lo[axis] : hi[axis] - q[axis];
            float sign = side == 0 ? -1.0f : 1.0f;
            if (distance < nearest) { nearest = distance; nearest_axis = axis; nearest_value = exit; nearest_side = sign; }
            if (distance < admissible && exit >= admissible_lo[axis] && exit <= admissible_hi[axis]) {
                admissible = distance; admissible_axis = axis; admissible_value = exit; admissible_side = sign;
            }
        }
    }
    if (!(nearest < infinity)) return false;  // a NaN coordinate
    int axis = admissible < infinity ? admissible_axis : nearest_axis;
    float value = admissible < infinity ? admissible_value : nearest_value;
    float sign = admissible < infinity ? admissible_side : nearest_side;
    point = make_float3(axis == 0 ? value : q[0], axis == 1 ? value : q[1], axis == 2 ? value : q[2]);
    normal = make_float3(axis == 0 ? sign : 0.0f, axis == 1 ? sign : 0.0f, axis == 2 ? sign : 0.0f);
    return true;
}

// Pushes a point out of one obstacle grown by `margin` (`Obstacle::project_within`).
__device__ __forceinline__ float3 project_obstacle(const PbfObstacle& o, float3 point, float margin,
                                                   const float* admissible_lo, const float* admissible_hi) {
    float3 normal;
    push_out_obstacle(o, point, normal, margin, admissible_lo, admissible_hi);
    return point;
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

// ---------------------------------------------------------------------------------------------
// Walls and obstacles in the density (`src/sims/pbf/boundary.rs`): layers of virtual particles that
// continue the seeding lattice into the solid, summed on the fly.

// Σ_b W and Σ_b ∇W over the virtual boundary particles within h of a point.
struct BoundarySums {
    float density;
    float3 gradient;
};

// The layers along one axis: solid layers before (offset −(before_distance + (k + ½) s)),
// lattice sites k s for first ≤ k ≤ last, solid layers after (after_distance + (k + ½) s).
struct AxisLayers {
    int before;
    float before_distance;
    int first, last;
    int after;
    float after_distance;
};

#define LAYERS_SOLID 0
#define LAYERS_SITES 1
#define LAYERS_ALL 2

__device__ __forceinline__ AxisLayers empty_layers() {
    AxisLayers a;
    a.before = 0; a.before_distance = 0.0f; a.first = 1; a.last = 0; a.after = 0; a.after_distance = 0.0f;
    return a;
}

// Layers k < count of offset distance + (k + ½) s below h and `limit` (`AxisLayers::layer_count`).
__device__ __forceinline__ int layer_count(float distance, float spacing, float radius, float limit) {
    int count = 0;
    while (true) {
        float offset = distance + ((float)count + 0.5f) * spacing;
        if (offset >= radius || offset >= limit || count >= 64) return count;
        ++count;
    }
}

// Lattice sites k s (|k s| < h) strictly between lo and hi (`AxisLayers::sites`).
__device__ __forceinline__ void lattice_sites(float lo, float hi, float spacing, float radius, int steps,
                                              int& first, int& last) {
    first = -steps;
    last = steps;
    while (first <= last) {
        float o = (float)first * spacing;
        if (o > lo && o > -radius) break;
        ++first;
    }
    while (last >= first) {
        float o = (float)last * spacing;
        if (o < hi && o < radius) break;
        --last;
    }
}

__device__ __forceinline__ bool has_solid(const AxisLayers& a) { return a.before > 0 || a.after > 0; }

// Calls visit(offset) for the axis's layers of `part`: before, sites, after (`for_each_layer`).
template <typename Visit>
__device__ __forceinline__ void for_each_layer(const AxisLayers& a, int part, float spacing, Visit visit) {
    if (part != LAYERS_SITES)
        for (int k = 0; k < a.before; ++k) visit(-(a.before_distance + ((float)k + 0.5f) * spacing));
    if (part != LAYERS_SOLID)
        for (int k = a.first; k <= a.last; ++k) visit((float)k * spacing);
    if (part != LAYERS_SITES)
        for (int k = 0; k < a.after; ++k) visit(a.after_distance + ((float)k + 0.5f) * spacing);
}

// Adds W and ∇W of the virtual particle at `offset` from the point (`BoundaryLattice::add`).
__device__ __forceinline__ void add_virtual(const PbfParams& p, float3 offset, BoundarySums& sums) {
    float r2 = dot3(offset, offset);
    if (r2 >= p.kernel_radius_squared) return;
    sums.density += kernel_density(p, r2);
    sums.gradient += kernel_gradient(p, make_float3(-offset.x, -offset.y, -offset.z), r2);
}

// Whether x + offset lies strictly inside the container (`container_test`).
__device__ __forceinline__ bool inside_container(const PbfParams& p, float3 x, float3 offset) {
    return offset.x > p.wall_lo_x - x.x && offset.y > p.wall_lo_y - x.y && offset.z > p.wall_lo_z - x.z &&
           offset.x < p.wall_hi_x - x.x && offset.y < p.wall_hi_y - x.y && offset.z < p.wall_hi_z - x.z;
}

// Every combination of the three axes' layers of `parts` that keep(offset) accepts (`add_product`).
template <typename Keep>
__device__ __forceinline__ void add_product(const PbfParams& p, const AxisLayers* axes, int part_x, int part_y,
                                            int part_z, Keep keep, BoundarySums& sums) {
    float s = p.spacing;
    float h2 = p.kernel_radius_squared;
    for_each_layer(axes[0], part_x, s, [&](float ox) {
        for_each_layer(axes[1], part_y, s, [&](float oy) {
            if (ox * ox + oy * oy >= h2) return;
            for_each_layer(axes[2], part_z, s, [&](float oz) {
                float3 offset = make_float3(ox, oy, oz);
                if (keep(offset)) add_virtual(p, offset, sums);
            });
        });
    });
}

// Two unit vectors completing n to an orthonormal basis (Duff et al. 2017; `orthonormal_basis`).
__device__ __forceinline__ void orthonormal_basis(float3 n, float3& t, float3& b) {
    float sign = copysignf(1.0f, n.z);
    float a = -1.0f / (sign + n.z);
    float c = n.x * n.y * a;
    t = make_float3(1.0f + sign * n.x * n.x * a, sign * c, -sign * n.x);
    b = make_float3(c, sign + n.y * n.y * a, -n.y);
}

__device__ __forceinline__ void add_container_layers(const PbfParams& p, float3 x, BoundarySums& sums) {
    float s = p.spacing, h = p.kernel_radius;
    const float lo[3] = {p.wall_lo_x, p.wall_lo_y, p.wall_lo_z};
    const float hi[3] = {p.wall_hi_x, p.wall_hi_y, p.wall_hi_z};
    const float xs[3] = {x.x, x.y, x.z};
    // Most particles are more than h − s/2 from every wall: no layer reaches them.
    bool far = true;
    for (int a = 0; a < 3; ++a) far = far && fminf(xs[a] - lo[a], hi[a] - xs[a]) + 0.5f * s >= h;
    if (far) return;
    AxisLayers axes[3];
    bool any = false;
    for (int a = 0; a < 3; ++a) {
        float before_distance = fmaxf(xs[a] - lo[a], 0.0f);
        float after_distance = fmaxf(hi[a] - xs[a], 0.0f);
        AxisLayers layers;
        lattice_sites(lo[a] - xs[a], hi[a] - xs[a], s, h, p.boundary_steps, layers.first, layers.last);
        layers.before = layer_count(before_distance, s, h, __int_as_float(0x7f800000));
        layers.before_distance = before_distance;
        layers.after = layer_count(after_distance, s, h, __int_as_float(0x7f800000));
        layers.after_distance = after_distance;
        axes[a] = layers;
        any = any || has_solid(layers);
    }
    if (!any) return;
    auto always = [](float3) { return true; };
    if (has_solid(axes[0])) add_product(p, axes, LAYERS_SOLID, LAYERS_ALL, LAYERS_ALL, always, sums);
    if (has_solid(axes[1])) add_product(p, axes, LAYERS_SITES, LAYERS_SOLID, LAYERS_ALL, always, sums);
    if (has_solid(axes[2])) add_product(p, axes, LAYERS_SITES, LAYERS_SITES, LAYERS_SOLID, always, sums);
}

__device__ __forceinline__ void add_box_layers(const PbfParams& p, const PbfObstacle& o, float3 x, BoundarySums& sums) {
    float s = p.spacing, h = p.kernel_radius;
    const float mins[3] = {o.a_x, o.a_y, o.a_z};
    const float maxs[3] = {o.b_x, o.b_y, o.b_z};
    const float xs[3] = {x.x, x.y, x.z};
    AxisLayers axes[3];
    for (int a = 0; a < 3; ++a) {
        float lo = mins[a] - xs[a], hi = maxs[a] - xs[a];
        AxisLayers layers = empty_layers();
        if (lo >= 0.0f) {
            layers.after = layer_count(lo, s, h, hi);
            layers.after_distance = lo;
        } else if (hi <= 0.0f) {
            layers.before = layer_count(-hi, s, h, -lo);
            layers.before_distance = -hi;
        } else {
            lattice_sites(lo, hi, s, h, p.boundary_steps, layers.first, layers.last);
        }
        if (layers.before == 0 && layers.after == 0 && layers.first > layers.last) return;
        axes[a] = layers;
    }
    add_product(p, axes, LAYERS_ALL, LAYERS_ALL, LAYERS_ALL,
                [&](float3 offset) { return inside_container(p, x, offset); }, sums);
}

__device__ __forceinline__ void add_sphere_layers(const PbfParams& p, const PbfObstacle& o, float3 x, BoundarySums& sums) {
    float s = p.spacing, h = p.kernel_radius;
    float radius = o.radius;
    float3 from_center = x - make_float3(o.a_x, o.a_y, o.a_z);
    float distance = sqrtf(dot3(from_center, from_center));
    if (distance >= radius + h) return;
    float3 normal = distance > 0.0f ? from_center * (1.0f / distance) : make_float3(0.0f, 1.0f, 0.0f);
    float3 tangent, bitangent;
    orthonormal_basis(normal, tangent, bitangent);
    float depth = distance - radius;
    int layers = layer_count(depth, s, h, __int_as_float(0x7f800000));
    float radius_squared = radius * radius;
    for (int k = 0; k < layers; ++k) {
        float along = -(depth + ((float)k + 0.5f) * s);
        for (int i = -p.boundary_steps; i <= p.boundary_steps; ++i) {
            for (int j = -p.boundary_steps; j <= p.boundary_steps; ++j) {
                float3 offset = normal * along + tangent * ((float)i * s) + bitangent * ((float)j * s);
                float3 point = from_center + offset;
                if (dot3(point, point) < radius_squared && inside_container(p, x, offset))
                    add_virtual(p, offset, sums);
            }
        }
    }
}

// Σ W and Σ ∇W over the virtual particles of the walls and every obstacle within h of x
// (`BoundaryLattice::sums`).
__device__ __forceinline__ BoundarySums boundary_sums(const PbfParams& p, const PbfObstacle* obstacles, float3 x) {
    BoundarySums sums;
    sums.density = 0.0f;
    sums.gradient = make_float3(0.0f, 0.0f, 0.0f);
    add_container_layers(p, x, sums);
    for (unsigned int k = 0; k < p.obstacle_count; ++k) {
        if (obstacles[k].kind == PBF_OBSTACLE_BOX) add_box_layers(p, obstacles[k], x, sums);
        else add_sphere_layers(p, obstacles[k], x, sums);
    }
    return sums;
}
