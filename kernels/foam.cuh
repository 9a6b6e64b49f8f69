// The `foam` stage (Ihmsen et al. 2012 diffuse particles; the CPU reference, whose header
// defines the method, and its constants are `src/sims/pbf/foam.rs`), run after a frame's last
// solver step on the sorted particles and the step's grid. Host side: `src/sims/pbf/cuda/foam.rs`.
// Included by pbf.cu.
//
// One stage = foam_normals → foam_potentials → foam_advect → scan(keep) → foam_compact →
// scan(emission counts) → foam_emit → foam_finish → foam_count, all on the solver's stream with
// no host synchronisation; the host then copies `state` (a few words: alive, born, the three
// counts). Nothing depends on the order threads run in, nor on the order of the particles
// within a cell (which follows the counting sort's atomics): the random numbers are drawn by
// particle id (`ids`, the solver's sorted ids), emission and compaction find their slots by
// exclusive scans (stable, the CPU's order: survivors first in their old order, then the
// newborn by parent id and number; the emission counts are scanned in id order), and the
// counts are integer atomics.
//
// The pool holds two float4 per diffuse particle k: pool[2k] = [x, y, z, life],
// pool[2k + 1] = [vx, vy, vz, kind] (kind 0 spray, 1 foam, 2 bubble, as `DiffuseKind`).
//
// Every formula is the CPU's in the same operation order (glam's: `normalize` divides by the
// length, `normalize_or` multiplies by its reciprocal), so without FMA contraction the kernels
// reproduce the CPU stage bit for bit when the fluid particles sit where the grid was built
// (the emulation check); the sums run in the grid's cell order, as the CPU's.

#define FOAM_TRAPPED_AIR_MIN 8.0f
#define FOAM_TRAPPED_AIR_MAX 14.0f
#define FOAM_WAVE_CREST_MIN 5.0f
#define FOAM_WAVE_CREST_MAX 10.0f
#define FOAM_KINETIC_MIN 0.5f
#define FOAM_KINETIC_MAX 5.0f
#define FOAM_SURFACE_OFFSET 0.1f
#define FOAM_CREST_ALIGNMENT 0.6f
#define FOAM_SPRAY_BELOW 6u
#define FOAM_BUBBLE_ABOVE 20u
#define FOAM_BUOYANCY 2.0f
#define FOAM_DRAG 0.5f
#define FOAM_SPREAD 0.1f
#define FOAM_FADE 0.5f
#define FOAM_TAU 6.28318530717958647692f

// state[] words (the host copies FOAM_STATE_WORDS of them once per frame).
#define FOAM_ALIVE 0
#define FOAM_DISPLACEMENT 1
#define FOAM_BORN 2
#define FOAM_SPRAY 3
#define FOAM_FOAM 4
#define FOAM_BUBBLES 5
#define FOAM_STATE_WORDS 6

// One stage's settings (mirrored by `GpuFoamParams` in src/sims/pbf/cuda/foam.rs).
struct FoamParams {
    // The frame's time step (the stage runs once per frame), s.
    float dt;
    float trapped_air_rate;
    float wave_crest_rate;
    float lifetime;
    float particle_radius;
    unsigned int capacity;
    unsigned int seed_lo, seed_hi;
    unsigned int step_lo, step_hi;
    float container_lo_x, container_lo_y, container_lo_z;
    float container_hi_x, container_hi_y, container_hi_z;
};

// Most diffuse particles one fluid particle emits in a step (`emission_limit`): 2^24, and at
// most (2^32 - 1) / n so the step's total fits the u32 scan.
__device__ __forceinline__ unsigned int foam_emission_limit(unsigned int n) {
    return min(16777216u, 0xFFFFFFFFu / max(n, 1u));
}

// Φ(I, τ_min, τ_max) (`clamp_potential`).
__device__ __forceinline__ float foam_clamp(float value, float low, float high) {
    return (fminf(value, high) - fminf(value, low)) / (high - low);
}

// A uniform number in [0, 1) from the seed, the step, the particle and k (`uniform`: SplitMix64).
__device__ __forceinline__ float foam_uniform(const FoamParams& f, unsigned int index, unsigned int k) {
    unsigned long long seed = ((unsigned long long)f.seed_hi << 32) | f.seed_lo;
    unsigned long long step = ((unsigned long long)f.step_hi << 32) | f.step_lo;
    unsigned long long z = seed * 0x9E3779B97F4A7C15ull + step * 0xD1B54A32D192ED03ull +
                           (unsigned long long)index * 0xABC98388FB8BAC03ull +
                           (unsigned long long)k * 0x8CB92BA72F3D8DD7ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) / 16777216.0f;
}

// One axis of `stop_at_walls`: x back onto [lo, hi], its velocity v into the wall lost; whether
// x now lies on a wall.
__device__ __forceinline__ bool foam_stop_at_wall(float& x, float& v, float lo, float hi) {
    if (x < lo) {
        x = lo;
        if (v < 0.0f) v = 0.0f;
    }
    if (x > hi) {
        x = hi;
        if (v > 0.0f) v = 0.0f;
    }
    return x == lo || x == hi;
}

// `stop_at_obstacles`: a diffuse particle inside one of the p.obstacle_count obstacles put on its
// surface (push_out_obstacle with no margin, in order, a box left only through a face inside
// the container, as `project`), its velocity v into the surface lost; whether any stopped it.
__device__ __forceinline__ bool foam_stop_at_obstacles(const PbfParams& p, const FoamParams& f,
                                                       const PbfObstacle* obstacles, float3& x, float3& v) {
    const float lo[3] = {f.container_lo_x, f.container_lo_y, f.container_lo_z};
    const float hi[3] = {f.container_hi_x, f.container_hi_y, f.container_hi_z};
    bool on_obstacle = false;
    for (unsigned int k = 0; k < p.obstacle_count; ++k) {
        float3 normal;
        if (push_out_obstacle(obstacles[k], x, normal, 0.0f, lo, hi)) {
            float into = dot3(v, normal);
            if (into < 0.0f) v = v - normal * into;
            on_obstacle = true;
        }
    }
    return on_obstacle;
}

// The potentials' weight 1 − r/h, at least 0.
__device__ __forceinline__ float foam_weight(const PbfParams& p, float r) {
    return fmaxf(1.0f - r / p.kernel_radius, 0.0f);
}

// The surface normal of every fluid particle (w = 1 where it has one, 0 inside), and the
// largest distance of a particle from where the grid saw it (float bits, atomicMax into
// state[FOAM_DISPLACEMENT]), which widens foam_advect's search. No lane returns early: the
// warp's maximum is taken with shuffles (as find_non_finite).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_normals(const PbfParams p, const float4* __restrict__ positions, const unsigned int* __restrict__ cell_start,
             const float4* __restrict__ grid_positions, float4* __restrict__ normals,
             unsigned int* __restrict__ state) {
    unsigned int i = thread_index();
    unsigned int displacement = 0;
    if (i < p.particle_count) {
        float3 x = make3(positions[i]);
        float3 sum = make_float3(0.0f, 0.0f, 0.0f);
        float total = 1.0f;
        for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
            float3 d = make3(positions[j]) - x;
            float w = foam_weight(p, sqrtf(dot3(d, d)));
            sum += d * w;
            total += w;
        });
        float3 offset = make_float3(sum.x / total, sum.y / total, sum.z / total);
        float length = sqrtf(dot3(offset, offset));
        float4 n = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (length > FOAM_SURFACE_OFFSET * p.kernel_radius)
            n = make_float4(-(offset.x / length), -(offset.y / length), -(offset.z / length), 1.0f);
        normals[i] = n;
        float3 moved = x - make3(grid_positions[i]);
        displacement = __float_as_uint(sqrtf(dot3(moved, moved)));
    }
    for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1)
        displacement = max(displacement, __shfl_xor_sync(0xffffffffu, displacement, lane_mask));
    if ((threadIdx.x & 31) == 0 && displacement > 0u) atomicMax(&state[FOAM_DISPLACEMENT], displacement);
}

// Per fluid particle: the raw potentials (I_ta, the crest's curvature, I_k), clamped, and the
// number of diffuse particles it emits (`emit`'s count) into counts[ids[i]] (by id: the scan
// then orders the newborn by parent id); counts[n] = 0 (the scan's last element becomes the
// total). `raw` (may be null) receives [I_ta, κ, I_k, count] at the sorted index i.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_potentials(const PbfParams p, const FoamParams f, const float4* __restrict__ positions,
                const float4* __restrict__ velocities, const unsigned int* __restrict__ ids,
                const unsigned int* __restrict__ cell_start, const float4* __restrict__ grid_positions,
                const float4* __restrict__ normals, unsigned int* __restrict__ counts, float4* __restrict__ raw) {
    unsigned int i = thread_index();
    if (i == 0) counts[p.particle_count] = 0u;
    if (i >= p.particle_count) return;
    float3 x = make3(positions[i]);
    float3 v = make3(velocities[i]);
    float4 n4 = normals[i];
    float3 n = make3(n4);
    bool has_normal = n4.w != 0.0f;
    float trapped = 0.0f, curvature = 0.0f;
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 xij = x - make3(positions[j]);
        float r = sqrtf(dot3(xij, xij));
        float w = foam_weight(p, r);
        float3 vij = v - make3(velocities[j]);
        float speed = sqrtf(dot3(vij, vij));
        if (speed > 1e-6f && r > 1e-9f) trapped += speed * (1.0f - dot3(vij, xij) / (speed * r)) * w;
        float3 xji = make_float3(-xij.x, -xij.y, -xij.z);
        if (has_normal && r > 1e-9f && dot3(xji, n) < 0.0f)
            curvature += (1.0f - dot3(n, make3(normals[j]))) * w;
    });
    float speed = sqrtf(dot3(v, v));
    bool crest = has_normal && speed > 1e-6f && dot3(v, n) >= FOAM_CREST_ALIGNMENT * speed;
    float crest_curvature = crest ? curvature : 0.0f;
    float kinetic = 0.5f * speed * speed;
    float ta = foam_clamp(trapped, FOAM_TRAPPED_AIR_MIN, FOAM_TRAPPED_AIR_MAX);
    float wc = foam_clamp(crest_curvature, FOAM_WAVE_CREST_MIN, FOAM_WAVE_CREST_MAX);
    float k = foam_clamp(kinetic, FOAM_KINETIC_MIN, FOAM_KINETIC_MAX);
    float rate = f.dt * (f.trapped_air_rate * ta + f.wave_crest_rate * wc) * k;
    float whole = floorf(rate);
    unsigned int id = ids[i];
    unsigned int limit = foam_emission_limit(p.particle_count);
    unsigned int count = limit;
    if (whole < (float)limit)
        count = min((unsigned int)whole + (foam_uniform(f, id, 0u) < rate - whole ? 1u : 0u), limit);
    counts[id] = count;
    if (raw != nullptr) raw[i] = make_float4(trapped, crest_curvature, kinetic, (float)count);
}

// Classifies, moves and ages diffuse particle k (k < state[FOAM_ALIVE]) by the fluid particles
// within h of it at their positions now (found in the step's grid, searched out to h plus how
// far any particle moved from where the grid saw it), stops it at the obstacles
// (`stop_at_obstacles`: on the surface, the velocity into it lost) and the container's walls
// (`stop_at_walls`: back on the wall, the velocity into it lost; on either every kind ages),
// and sets keep[k] (1: alive and finite). Launched over capacity + 1 threads: keep[capacity] =
// 0 ends the scan.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_advect(const PbfParams p, const FoamParams f, const PbfObstacle* __restrict__ obstacles,
            const float4* __restrict__ positions,
            const float4* __restrict__ velocities, const unsigned int* __restrict__ cell_start,
            const unsigned int* __restrict__ state, float4* __restrict__ pool, unsigned int* __restrict__ keep) {
    unsigned int k = thread_index();
    if (k > f.capacity) return;
    if (k >= state[FOAM_ALIVE]) {
        keep[k] = 0u;
        return;
    }
    float4 xl = pool[2 * k];
    float4 vk = pool[2 * k + 1];
    float3 d = make3(xl);
    float3 dv = make3(vk);
    float life = xl.w;
    // h, a few ulps more (rounding of the cell bounds), plus the largest displacement.
    float reach = p.kernel_radius * 1.000001f + __uint_as_float(state[FOAM_DISPLACEMENT]) * 1.001f;
    int3 lo = cell_coords(p, make_float3(d.x - reach, d.y - reach, d.z - reach));
    int3 hi = cell_coords(p, make_float3(d.x + reach, d.y + reach, d.z + reach));
    unsigned int count = 0;
    float weights = 0.0f;
    float3 velocity = make_float3(0.0f, 0.0f, 0.0f);
    for (int z = lo.z; z <= hi.z; ++z) {
        for (int y = lo.y; y <= hi.y; ++y) {
            unsigned int end = cell_start[cell_index(p, hi.x, y, z) + 1];
            for (unsigned int j = cell_start[cell_index(p, lo.x, y, z)]; j < end; ++j) {
                float3 offset = make3(positions[j]) - d;
                float r2 = dot3(offset, offset);
                if (r2 < p.kernel_radius_squared) {
                    float w = 1.0f - sqrtf(r2) / p.kernel_radius;
                    ++count;
                    weights += w;
                    velocity += make3(velocities[j]) * w;
                }
            }
        }
    }
    float3 fluid_velocity =
        weights > 0.0f ? make_float3(velocity.x / weights, velocity.y / weights, velocity.z / weights) : dv;
    float3 g = make_float3(p.gravity_x, p.gravity_y, p.gravity_z);
    float kind;
    if (count < FOAM_SPRAY_BELOW) {
        kind = 0.0f;
        dv += g * f.dt;
        d += dv * f.dt;
    } else if (count > FOAM_BUBBLE_ABOVE) {
        kind = 2.0f;
        float3 pull = g * (-FOAM_BUOYANCY * f.dt) + (fluid_velocity - dv) * FOAM_DRAG;
        dv += pull;
        d += dv * f.dt;
    } else {
        kind = 1.0f;
        dv = fluid_velocity;
        d += fluid_velocity * f.dt;
        life -= f.dt;
    }
    bool on_obstacle = foam_stop_at_obstacles(p, f, obstacles, d, dv);
    bool on_wall = foam_stop_at_wall(d.x, dv.x, f.container_lo_x, f.container_hi_x);
    on_wall |= foam_stop_at_wall(d.y, dv.y, f.container_lo_y, f.container_hi_y);
    on_wall |= foam_stop_at_wall(d.z, dv.z, f.container_lo_z, f.container_hi_z);
    if ((on_obstacle || on_wall) && kind != 1.0f) life -= f.dt;
    pool[2 * k] = make_float4(d.x, d.y, d.z, life);
    pool[2 * k + 1] = make_float4(dv.x, dv.y, dv.z, kind);
    // Inside after the walls unless not finite.
    bool inside = d.x >= f.container_lo_x && d.y >= f.container_lo_y && d.z >= f.container_lo_z &&
                  d.x <= f.container_hi_x && d.y <= f.container_hi_y && d.z <= f.container_hi_z;
    keep[k] = life > 0.0f && inside ? 1u : 0u;
}

// The survivors, in their order, to the front of `next`: slot slots[k] (the exclusive scan of
// foam_advect's keep, capacity + 1 values).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_compact(const FoamParams f, const unsigned int* __restrict__ slots, const float4* __restrict__ pool,
             float4* __restrict__ next) {
    unsigned int k = thread_index();
    if (k >= f.capacity) return;
    unsigned int slot = slots[k];
    if (slots[k + 1] == slot) return;
    next[2 * slot] = pool[2 * k];
    next[2 * slot + 1] = pool[2 * k + 1];
}

// Fluid particle i's newborn (`emit`): starts[id + 1] − starts[id] of them (id = ids[i]; the
// exclusive scan of foam_potentials' counts by id), after the survivors (slots[capacity]) and
// those of the particles of smaller id, as far as the capacity allows.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_emit(const PbfParams p, const FoamParams f, const float4* __restrict__ positions,
          const float4* __restrict__ velocities, const unsigned int* __restrict__ ids,
          const unsigned int* __restrict__ starts, const unsigned int* __restrict__ slots,
          float4* __restrict__ next) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    unsigned int id = ids[i];
    unsigned int first = starts[id], count = starts[id + 1] - first;
    if (count == 0u) return;
    // Slots from the survivors' count on; a start past the room left is cut whole here, so the
    // sum below cannot wrap (survivors + a start near 2³² would come back under the capacity).
    unsigned int survivors = slots[f.capacity];
    if (first >= f.capacity - survivors) return;
    unsigned int base = survivors + first;
    float3 x = make3(positions[i]);
    float3 v = make3(velocities[i]);
    // normalize_or(Y): v times the reciprocal of its length, where that is finite and positive.
    float reciprocal = 1.0f / sqrtf(dot3(v, v));
    float3 along = isfinite(reciprocal) && reciprocal > 0.0f ? v * reciprocal : make_float3(0.0f, 1.0f, 0.0f);
    // any_orthonormal_vector (Duff et al. 2017), then along × e1.
    float sign = copysignf(1.0f, along.z);
    float a = -1.0f / (sign + along.z);
    float b = along.x * along.y * a;
    float3 e1 = make_float3(b, sign + along.y * along.y * a, -along.y);
    float3 e2 = cross3(along, e1);
    float rp = f.particle_radius;
    float spread = FOAM_SPREAD * sqrtf(dot3(v, v)) / rp;
    for (unsigned int m = 0; m < count; ++m) {
        unsigned int slot = base + m;
        if (slot >= f.capacity) return;
        float r = rp * sqrtf(foam_uniform(f, id, 1u + 3u * m));
        float theta = FOAM_TAU * foam_uniform(f, id, 2u + 3u * m);
        float c = cosf(theta), s = sinf(theta);
        float3 across = (e1 * c + e2 * s) * r;
        float3 at = x + across + v * (foam_uniform(f, id, 3u + 3u * m) * f.dt);
        float3 speed = v + across * spread;
        next[2 * slot] = make_float4(at.x, at.y, at.z, f.lifetime);
        next[2 * slot + 1] = make_float4(speed.x, speed.y, speed.z, 0.0f);
    }
}

// One thread: the pool's new size (survivors + newborn, at most the capacity), the newborn kept,
// the counts cleared for foam_count and the displacement for the next stage's foam_normals.
extern "C" __global__ void
foam_finish(const FoamParams f, unsigned int particle_count, const unsigned int* __restrict__ slots,
            const unsigned int* __restrict__ starts, unsigned int* __restrict__ state) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned int survivors = slots[f.capacity];
    unsigned int room = f.capacity - survivors;
    unsigned int born = min(starts[particle_count], room);
    state[FOAM_ALIVE] = survivors + born;
    state[FOAM_BORN] = born;
    state[FOAM_DISPLACEMENT] = 0u;
    state[FOAM_SPRAY] = 0u;
    state[FOAM_FOAM] = 0u;
    state[FOAM_BUBBLES] = 0u;
}

// How many of each kind are alive (`counts`): one integer atomic per kind and warp. Every lane
// takes part in the shuffles (no early return).
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_count(const FoamParams f, const float4* __restrict__ pool, unsigned int* __restrict__ state) {
    unsigned int k = thread_index();
    unsigned int alive = state[FOAM_ALIVE];
    unsigned int kind = 3u;
    if (k < alive && k < f.capacity) kind = (unsigned int)pool[2 * k + 1].w;
#pragma unroll
    for (unsigned int c = 0; c < 3u; ++c) {
        unsigned int mine = kind == c ? 1u : 0u;
#ifdef PBF_EMULATION
        // One thread at a time (tests/emulation): each adds its own.
        if (mine != 0u) atomicAdd(&state[FOAM_SPRAY + c], mine);
#else
        for (int offset = 16; offset > 0; offset >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, offset);
        if ((threadIdx.x & 31) == 0 && mine != 0u) atomicAdd(&state[FOAM_SPRAY + c], mine);
#endif
    }
}

// The renderer's records [x, y, z, kind + 0.499 fade] (`records`), for the state[FOAM_ALIVE]
// diffuse particles, into the (mapped GL) foam buffer. Launched over `count` threads: the alive
// count the host read after the stage.
extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
foam_records(unsigned int count, const float4* __restrict__ pool, float4* __restrict__ out) {
    unsigned int k = thread_index();
    if (k >= count) return;
    float4 x = pool[2 * k];
    float fade = fminf(fmaxf(x.w / FOAM_FADE, 0.0f), 1.0f);
    out[k] = make_float4(x.x, x.y, x.z, pool[2 * k + 1].w + 0.499f * fade);
}
