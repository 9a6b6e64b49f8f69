// Particles (docs/particles.md): the fountain and the spring-mass bodies, one kernel (or a few)
// per stage of the CPU solver (`src/sims/particles/`: fountain.rs, dynamics.rs, sort.rs; the
// basin's wave step is the pool's `cpu.rs`, written again here) with the same operations in the
// same order; host side in `src/sims/particles/cuda/kernels.rs`. Kernel names are plain
// `extern "C"` and start with their stage's name:
//   fountain, once per frame: emit, advance, collide (+ collide_scan, collide_compact: the
//     stable compaction of the survivors and of the landings), basin (basin_splash, then
//     basin_forces + basin_integrate per substep), sort (sort_keys, then four passes of
//     sort_histogram, sort_scan, sort_scatter: an LSD radix sort of 8-bit digits)
//   bodies, once per substep: springs, wind (+ wind_gather), integrate (or xpbd_predict,
//     xpbd_solve once per colour and iteration, xpbd_velocity), collide_nodes
//   statistics: reduce_nodes, reduce_basin, reduce_finish (block partials in double, finished
//     in one block: deterministic, no atomics on floats).
//   drawing (render/, written straight into the renderer's GL buffers): surface (a body's
//     skin: positions, smooth normals, texture coordinates), body_points (nodes coloured by
//     speed, springs by strain), water (the basin's vertices and normals).
//
// Layout: vectors are interleaved x, y, z floats (glam's Vec3), one thread per particle, node,
// triangle or basin node. The particle count after `collide` lives on the GPU (stats[0]); the
// kernels after it read it there, launched over the count before (an upper bound).

#define PARTICLES_BLOCK 256
#define SCAN_THREADS 1024
#define SORT_ITEMS 8
#define SORT_TILE (PARTICLES_BLOCK * SORT_ITEMS)
#define RADIX 256

// A particle's fate in `collide` (flags): it stays alive, it fell into the basin.
#define KEEP 1u
#define LANDED 2u
// The pool's FIXED flag (src/sims/pool/surface.rs).
#define BASIN_FIXED 1u

// Slots of the statistics array.
#define STAT_ALIVE 0
#define STAT_LANDED 1

// Mirrored field for field by `FountainStep` in src/sims/particles/cuda/kernels.rs.
struct FountainStep {
    float dt;
    float gx, gy, gz;           // gravity, m/s²
    float wx, wy, wz;           // wind, m/s
    float drag;                 // 1/s
    float half, top;            // the cube's half side and top, m
    float cut, boost, bounce;
    float basin, level, push;   // the basin's half width, its level, the landing push
    float lifetime, kill_height;
    float upx, upy, upz;        // the jet
    float sidex, sidey, sidez;  // across it
    float otherx, othery, otherz;
    float nozzlex, nozzley, nozzlez;
    float spread, speed_min, speed_max, horizontal;
    unsigned int key;           // random::key(seed)
    float eyex, eyey, eyez;     // the sort's view
    float forwardx, forwardy, forwardz;
};

// The basin's wave step and splashes, mirrored by `BasinStep`.
struct BasinStep {
    int n;              // nodes per side
    float h;            // spacing, m
    float dt;           // substep, s
    float wave_k;       // c²/h²
    float decay;        // e^(−damping·dt)
    int inner_reach;    // the landing's stencil half-width, nodes
    int outer_reach;    // the ring's
    float inner_sum;    // Σ of the landing's stencil weights
    float outer_sum;    // Σ of the ring's
    float radius;       // the landing's radius, m (unused by the kernels; the record's)
};

// A spring-mass body's substep, mirrored by `BodyStep`.
struct BodyStep {
    unsigned int nodes, triangles;
    unsigned int euler;         // integrate: 1 symplectic Euler, 0 time-corrected Verlet
    unsigned int with_springs;  // springs: 0 under XPBD (its springs are constraints)
    unsigned int relative;      // wind relative to the triangle's velocity
    unsigned int has_sphere;
    float dt, inverse_mass;
    float weightx, weighty, weightz;  // m·g, N
    float windx, windy, windz;
    float drag;                 // wind drag, N·s/m³
    float decay, carry, reach;  // e^(−damping·dt), dt/dt₋·decay, dt·(dt + dt₋)/2
    float ground;
    float cx, cy, cz, radius;   // the sphere
    float keep;                 // 1 − friction
};

struct vec3 { float x, y, z; };
__device__ __forceinline__ vec3 v3(float x, float y, float z) { vec3 r; r.x = x; r.y = y; r.z = z; return r; }
__device__ __forceinline__ vec3 load3(const float* a, unsigned i) { return v3(a[3 * i], a[3 * i + 1], a[3 * i + 2]); }
__device__ __forceinline__ void store3(float* a, unsigned i, vec3 v) { a[3 * i] = v.x; a[3 * i + 1] = v.y; a[3 * i + 2] = v.z; }
__device__ __forceinline__ vec3 add(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ vec3 sub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ vec3 mul(vec3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
__device__ __forceinline__ vec3 divide(vec3 a, float s) { return v3(a.x / s, a.y / s, a.z / s); }
// glam's order: (x·x' + y·y') + z·z'.
__device__ __forceinline__ float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ float length(vec3 a) { return sqrtf(dot(a, a)); }
// glam's cross.
__device__ __forceinline__ vec3 cross(vec3 a, vec3 b) {
    return v3(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
}

__device__ __forceinline__ unsigned thread_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// ---------------------------------------------------------------------------------------------
// The emitter's random numbers (src/sims/particles/random.rs, the same integer operations).

__device__ __forceinline__ unsigned particles_hash(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__device__ __forceinline__ float particles_unit(unsigned key, unsigned lo, unsigned hi, unsigned draw) {
    unsigned h = particles_hash(particles_hash(key ^ (draw * 0x9e3779b9u)) ^ lo);
    h = particles_hash(h ^ hi);
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

// ---------------------------------------------------------------------------------------------
// The fountain.

// `emit`: particles first .. first + count, numbers emitted .. emitted + count (as fountain.rs
// `Emission::particle`); each keeps its number's low 32 bits as its tag (the renderer's colour
// and sprite, fountain.rs `tag`).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
emit(FountainStep p, unsigned first, unsigned count, unsigned emitted_lo, unsigned emitted_hi,
     float* __restrict__ position, float* __restrict__ velocity, float* __restrict__ age,
     unsigned char* __restrict__ hits, unsigned* __restrict__ tag) {
    unsigned t = thread_index();
    if (t >= count) return;
    unsigned lo = emitted_lo + t;
    unsigned hi = emitted_hi + (lo < emitted_lo ? 1u : 0u);
    const float tau = 6.28318530717958647692f;
    vec3 side = v3(p.sidex, p.sidey, p.sidez), other = v3(p.otherx, p.othery, p.otherz);
    float a = tau * particles_unit(p.key, lo, hi, 0);
    vec3 at = add(mul(side, cosf(a)), mul(other, sinf(a)));
    float radius = p.spread * sqrtf(particles_unit(p.key, lo, hi, 1));
    float speed = p.speed_min + (p.speed_max - p.speed_min) * particles_unit(p.key, lo, hi, 2);
    float b = tau * particles_unit(p.key, lo, hi, 3);
    vec3 sideways = add(mul(side, cosf(b)), mul(other, sinf(b)));
    float lateral = p.horizontal * particles_unit(p.key, lo, hi, 4);
    unsigned k = first + t;
    store3(position, k, add(v3(p.nozzlex, p.nozzley, p.nozzlez), mul(at, radius)));
    store3(velocity, k, add(mul(v3(p.upx, p.upy, p.upz), speed), mul(sideways, lateral)));
    age[k] = 0.0f;
    hits[k] = 0;
    tag[k] = lo;
}

// `advance`: symplectic Euler, v ← v + (g + drag·(w − v))·dt, x ← x + v·dt; ageing.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
advance(FountainStep p, unsigned n, float* __restrict__ position, float* __restrict__ velocity,
        float* __restrict__ age) {
    unsigned k = thread_index();
    if (k >= n) return;
    vec3 x = load3(position, k), v = load3(velocity, k);
    vec3 pull = add(v3(p.gx, p.gy, p.gz), mul(sub(v3(p.wx, p.wy, p.wz), v), p.drag));
    v = add(v, mul(pull, p.dt));
    x = add(x, mul(v, p.dt));
    store3(position, k, x);
    store3(velocity, k, v);
    age[k] += p.dt;
}

__device__ __forceinline__ bool over_cube(const FountainStep& p, vec3 q) {
    return fabsf(q.x) < p.half && fabsf(q.z) < p.half;
}

__device__ __forceinline__ float signum(float v) { return copysignf(1.0f, v); }

// Sums `value` over the block (PARTICLES_BLOCK threads; every thread must call it).
__device__ unsigned block_sum(unsigned value, unsigned* shared) {
    unsigned t = threadIdx.x;
    shared[t] = value;
    __syncthreads();
    for (unsigned half = PARTICLES_BLOCK / 2; half > 0; half /= 2) {
        if (t < half) shared[t] += shared[t + half];
        __syncthreads();
    }
    unsigned total = shared[0];
    __syncthreads();
    return total;
}

// `collide`: the cube's top and sides, then each particle's fate (KEEP, LANDED) into `flags`
// and each block's counts of both into `counts` (keep, landed per block), for the compaction.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
collide(FountainStep p, unsigned n, float* __restrict__ position, float* __restrict__ velocity,
        const float* __restrict__ age, unsigned char* __restrict__ hits,
        unsigned* __restrict__ flags, unsigned* __restrict__ counts) {
    __shared__ unsigned sums[PARTICLES_BLOCK];
    unsigned k = thread_index();
    unsigned fate = 0;
    if (k < n) {
        vec3 x = load3(position, k), v = load3(velocity, k);
        vec3 before = sub(x, mul(v, p.dt));
        if (over_cube(p, x) && x.y < p.top && x.y > 0.0f) {
            if (before.y >= p.top) {
                x.y = p.top;
                if (hits[k] == 0) {
                    v.y = -v.y * p.cut;
                    v.x *= p.boost;
                    v.z *= p.boost;
                } else {
                    v.y = -v.y * p.bounce;
                }
                if (hits[k] < 255) hits[k] += 1;
            } else if (!over_cube(p, before)) {
                if (fabsf(before.x) >= p.half) {
                    x.x = p.half * signum(before.x);
                    v.x = -v.x * p.bounce;
                } else {
                    x.z = p.half * signum(before.z);
                    v.z = -v.z * p.bounce;
                }
            }
        }
        bool in_basin = fabsf(x.x) <= p.basin && fabsf(x.z) <= p.basin && !over_cube(p, x);
        bool landed = in_basin && x.y <= p.level && v.y < 0.0f;
        bool dies = landed || age[k] >= p.lifetime || x.y < p.kill_height;
        fate = (dies ? 0u : KEEP) | (landed ? LANDED : 0u);
        store3(position, k, x);
        store3(velocity, k, v);
        flags[k] = fate;
    }
    unsigned kept = block_sum(fate & KEEP, sums);
    unsigned landed = block_sum((fate & LANDED) >> 1, sums);
    if (threadIdx.x == 0) {
        counts[2 * blockIdx.x] = kept;
        counts[2 * blockIdx.x + 1] = landed;
    }
}

// An exclusive scan of data[0], data[stride], … (count values) in one block of SCAN_THREADS
// threads; the total into *total when given. Every thread must call it.
__device__ void scan_exclusive(unsigned* data, unsigned count, unsigned stride, unsigned* total) {
    __shared__ unsigned sums[SCAN_THREADS];
    unsigned t = threadIdx.x;
    unsigned per = (count + SCAN_THREADS - 1) / SCAN_THREADS;
    unsigned begin = min(t * per, count), end = min(begin + per, count);
    unsigned s = 0;
    for (unsigned k = begin; k < end; ++k) s += data[k * stride];
    sums[t] = s;
    __syncthreads();
    for (unsigned offset = 1; offset < SCAN_THREADS; offset *= 2) {
        unsigned before = t >= offset ? sums[t - offset] : 0u;
        __syncthreads();
        sums[t] += before;
        __syncthreads();
    }
    unsigned running = t > 0 ? sums[t - 1] : 0u;
    for (unsigned k = begin; k < end; ++k) {
        unsigned value = data[k * stride];
        data[k * stride] = running;
        running += value;
    }
    if (t == SCAN_THREADS - 1 && total) *total = sums[t];
    __syncthreads();
}

// The blocks' counts of `collide` into their offsets; the particles alive and the landings
// into stats (one block).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
collide_scan(unsigned blocks, unsigned* __restrict__ counts, unsigned* __restrict__ stats) {
    scan_exclusive(counts, blocks, 2, stats + STAT_ALIVE);
    scan_exclusive(counts + 1, blocks, 2, stats + STAT_LANDED);
}

// The survivors (and their tags), in order, into the `out` arrays; the landings, in order,
// into `drops` (x + basin, z + basin, push·(−v_y): the splash's centre on the basin's lattice
// and its amplitude).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
collide_compact(FountainStep p, unsigned n, const unsigned* __restrict__ flags,
                const unsigned* __restrict__ counts, const float* __restrict__ position,
                const float* __restrict__ velocity, const float* __restrict__ age,
                const unsigned char* __restrict__ hits, const unsigned* __restrict__ tag,
                float* __restrict__ out_position, float* __restrict__ out_velocity,
                float* __restrict__ out_age, unsigned char* __restrict__ out_hits,
                unsigned* __restrict__ out_tag, float* __restrict__ drops) {
    __shared__ unsigned keep_rank[PARTICLES_BLOCK];
    __shared__ unsigned land_rank[PARTICLES_BLOCK];
    unsigned k = thread_index(), t = threadIdx.x;
    unsigned fate = k < n ? flags[k] : 0u;
    keep_rank[t] = fate & KEEP;
    land_rank[t] = (fate & LANDED) >> 1;
    __syncthreads();
    // Inclusive Hillis–Steele scans of both.
    for (unsigned offset = 1; offset < PARTICLES_BLOCK; offset *= 2) {
        unsigned a = t >= offset ? keep_rank[t - offset] : 0u;
        unsigned b = t >= offset ? land_rank[t - offset] : 0u;
        __syncthreads();
        keep_rank[t] += a;
        land_rank[t] += b;
        __syncthreads();
    }
    if (fate & KEEP) {
        unsigned to = counts[2 * blockIdx.x] + keep_rank[t] - 1;
        store3(out_position, to, load3(position, k));
        store3(out_velocity, to, load3(velocity, k));
        out_age[to] = age[k];
        out_hits[to] = hits[k];
        out_tag[to] = tag[k];
    }
    if (fate & LANDED) {
        unsigned to = counts[2 * blockIdx.x + 1] + land_rank[t] - 1;
        vec3 x = load3(position, k), v = load3(velocity, k);
        drops[3 * to] = x.x + p.basin;
        drops[3 * to + 1] = x.z + p.basin;
        drops[3 * to + 2] = p.push * -v.y;
    }
}

// The pool's footprint (drops.rs): the node nearest `v` (m from the basin's corner), clamped.
__device__ __forceinline__ int nearest_node(float v, float h, int n) {
    float node = fmaxf(roundf(v / h), 0.0f);
    return min((int)node, n - 1);
}

// `basin`, first: every landing's splash — its Gaussian down where it lands, then the ring of
// twice its radius up around it, scaled by the stencils' sums (fountain.rs `basin`) — added to
// the vertical velocity of each node, landings in order (as the CPU adds them one by one): one
// thread per node gathering the landings, no atomics. `inner`, `outer`: the stencils' weights
// (drops.rs `Stencil`, computed on the host).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
basin_splash(BasinStep s, const unsigned* __restrict__ stats, const float* __restrict__ drops,
             const float* __restrict__ inner, const float* __restrict__ outer,
             const unsigned char* __restrict__ flags, float* __restrict__ velocity) {
    unsigned m = thread_index();
    if (m >= (unsigned)(s.n * s.n) || (flags[m] & BASIN_FIXED)) return;
    int i = (int)(m % (unsigned)s.n), j = (int)(m / (unsigned)s.n);
    unsigned landings = stats[STAT_LANDED];
    float v = velocity[m];
    int inner_side = 2 * s.inner_reach + 1, outer_side = 2 * s.outer_reach + 1;
    for (unsigned d = 0; d < landings; ++d) {
        int ci = nearest_node(drops[3 * d], s.h, s.n), cj = nearest_node(drops[3 * d + 1], s.h, s.n);
        float amplitude = drops[3 * d + 2];
        int a = i - ci, b = j - cj;
        if (abs(a) <= s.inner_reach && abs(b) <= s.inner_reach)
            v += amplitude * inner[(b + s.inner_reach) * inner_side + a + s.inner_reach];
        if (abs(a) <= s.outer_reach && abs(b) <= s.outer_reach) {
            float ring = -amplitude * s.inner_sum / s.outer_sum;
            v += ring * outer[(b + s.outer_reach) * outer_side + a + s.outer_reach];
        }
    }
    velocity[m] = v;
}

// `basin`, per substep: the wave equation's acceleration c²/h²·Σ(u_nb − u), a missing
// neighbour mirroring the node (the pool's `forces`, wave model).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
basin_forces(BasinStep s, const float* __restrict__ height, float* __restrict__ accel) {
    unsigned m = thread_index();
    int n = s.n;
    if (m >= (unsigned)(n * n)) return;
    int i = (int)(m % (unsigned)n), j = (int)(m / (unsigned)n);
    float here = height[m];
    float left = i > 0 ? height[m - 1] : here;
    float right = i + 1 < n ? height[m + 1] : here;
    float below = j > 0 ? height[m - n] : here;
    float above = j + 1 < n ? height[m + n] : here;
    accel[m] = s.wave_k * ((left - here) + (right - here) + (below - here) + (above - here));
}

// `basin`, per substep: symplectic Euler, v ← (v + a·dt)·decay (0 at fixed nodes), u ← u + v·dt
// (the pool's `integrate`).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
basin_integrate(BasinStep s, float* __restrict__ height, float* __restrict__ velocity,
                const float* __restrict__ accel, const unsigned char* __restrict__ flags) {
    unsigned m = thread_index();
    if (m >= (unsigned)(s.n * s.n)) return;
    float free = (flags[m] & BASIN_FIXED) ? 0.0f : 1.0f;
    float v = (velocity[m] + accel[m] * s.dt) * s.decay * free;
    velocity[m] = v;
    height[m] += v * s.dt;
}

// sort.rs `order_key`: an f32 as a u32 that orders as the floats do.
__device__ __forceinline__ unsigned order_key(float value) {
    unsigned bits = __float_as_uint(value);
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// `sort`, first: each particle's key, its negated view depth (farthest first), and its index.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
sort_keys(FountainStep p, const unsigned* __restrict__ stats, const float* __restrict__ position,
          unsigned* __restrict__ keys, unsigned* __restrict__ order) {
    unsigned k = thread_index();
    if (k >= stats[STAT_ALIVE]) return;
    vec3 d = sub(load3(position, k), v3(p.eyex, p.eyey, p.eyez));
    keys[k] = order_key(-dot(d, v3(p.forwardx, p.forwardy, p.forwardz)));
    order[k] = k;
}

// `sort`, per pass: each tile's count of each digit of the keys (at `shift`), digit-major:
// hist[digit · tiles + tile].
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
sort_histogram(const unsigned* __restrict__ stats, unsigned shift, unsigned tiles,
               const unsigned* __restrict__ keys, unsigned* __restrict__ hist) {
    __shared__ unsigned counts[RADIX];
    unsigned t = threadIdx.x, tile = blockIdx.x, n = stats[STAT_ALIVE];
    counts[t] = 0;
    __syncthreads();
    for (unsigned c = 0; c < SORT_ITEMS; ++c) {
        unsigned i = tile * SORT_TILE + c * PARTICLES_BLOCK + t;
        if (i < n) atomicAdd(&counts[(keys[i] >> shift) & (RADIX - 1)], 1u);
    }
    __syncthreads();
    hist[t * tiles + tile] = counts[t];
}

// `sort`, per pass: the histogram into each (digit, tile)'s first place (one block).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
sort_scan(unsigned entries, unsigned* __restrict__ hist) {
    scan_exclusive(hist, entries, 1, 0);
}

// `sort`, per pass: each key (and its particle) to its place, stably: a tile is taken in chunks
// of one key per thread, in order; a key's rank among its chunk's keys of the same digit is the
// count of those before it.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
sort_scatter(const unsigned* __restrict__ stats, unsigned shift, unsigned tiles,
             const unsigned* __restrict__ keys, const unsigned* __restrict__ order,
             const unsigned* __restrict__ hist, unsigned* __restrict__ out_keys,
             unsigned* __restrict__ out_order) {
    __shared__ unsigned place[RADIX];
    __shared__ unsigned digits[PARTICLES_BLOCK];
    unsigned t = threadIdx.x, tile = blockIdx.x, n = stats[STAT_ALIVE];
    place[t] = hist[t * tiles + tile];
    __syncthreads();
    for (unsigned c = 0; c < SORT_ITEMS; ++c) {
        unsigned i = tile * SORT_TILE + c * PARTICLES_BLOCK + t;
        unsigned key = i < n ? keys[i] : 0u;
        unsigned digit = i < n ? (key >> shift) & (RADIX - 1) : RADIX;
        digits[t] = digit;
        __syncthreads();
        if (i < n) {
            unsigned rank = 0;
            for (unsigned u = 0; u < t; ++u) rank += digits[u] == digit ? 1u : 0u;
            unsigned to = place[digit] + rank;
            out_keys[to] = key;
            out_order[to] = order[i];
        }
        __syncthreads();
        unsigned seen = 0;
        for (unsigned u = 0; u < PARTICLES_BLOCK; ++u) seen += digits[u] == t ? 1u : 0u;
        place[t] += seen;
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------
// Spring-mass bodies (dynamics.rs).

// `springs`: each node's weight plus (with_springs) the pull k·(l − l₀)/l·d of each of its
// links, gathered in the links' order.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
springs(BodyStep b, const float* __restrict__ position, const unsigned* __restrict__ node_start,
        const unsigned* __restrict__ link_other, const float* __restrict__ link_rest,
        const float* __restrict__ link_stiffness, float* __restrict__ force) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 sum = v3(b.weightx, b.weighty, b.weightz);
    if (b.with_springs) {
        vec3 here = load3(position, k);
        for (unsigned l = node_start[k]; l < node_start[k + 1]; ++l) {
            vec3 d = sub(load3(position, link_other[l]), here);
            float len = length(d);
            if (len > 0.0f) sum = add(sum, mul(d, link_stiffness[l] * (len - link_rest[l]) / len));
        }
    }
    store3(force, k, sum);
}

// `wind`, per triangle: drag·area·(n̂·w)·n̂ (w less the triangle's mean velocity when
// relative), a third of it, the push on each corner.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
wind(BodyStep b, const unsigned* __restrict__ triangles, const float* __restrict__ position,
     const float* __restrict__ velocity, float* __restrict__ push) {
    unsigned t = thread_index();
    if (t >= b.triangles) return;
    unsigned ia = triangles[3 * t], ib = triangles[3 * t + 1], ic = triangles[3 * t + 2];
    vec3 pa = load3(position, ia);
    vec3 c = cross(sub(load3(position, ib), pa), sub(load3(position, ic), pa));
    float twice_area = length(c);
    vec3 f = v3(0.0f, 0.0f, 0.0f);
    if (twice_area > 0.0f) {
        vec3 normal = divide(c, twice_area);
        vec3 w = v3(b.windx, b.windy, b.windz);
        if (b.relative) {
            vec3 mean = divide(add(add(load3(velocity, ia), load3(velocity, ib)), load3(velocity, ic)), 3.0f);
            w = sub(w, mean);
        }
        f = mul(normal, b.drag * 0.5f * twice_area * dot(normal, w) / 3.0f);
    }
    store3(push, t, f);
}

// `wind`, per node: its triangles' pushes added to its force, in its triangles' order.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
wind_gather(BodyStep b, const unsigned* __restrict__ start, const unsigned* __restrict__ list,
            const float* __restrict__ push, float* __restrict__ force) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 f = load3(force, k);
    for (unsigned t = start[k]; t < start[k + 1]; ++t) f = add(f, load3(push, list[t]));
    store3(force, k, f);
}

// `integrate`: time-corrected Verlet or symplectic Euler; pinned nodes stay (at rest).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
integrate(BodyStep b, float* __restrict__ position, float* __restrict__ previous,
          float* __restrict__ velocity, const float* __restrict__ force,
          const unsigned char* __restrict__ pinned) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 x = load3(position, k);
    if (pinned[k]) {
        store3(previous, k, x);
        store3(velocity, k, v3(0.0f, 0.0f, 0.0f));
        return;
    }
    vec3 a = mul(load3(force, k), b.inverse_mass);
    vec3 last = load3(previous, k);
    store3(previous, k, x);
    if (!b.euler) {
        vec3 moved = add(x, add(mul(sub(x, last), b.carry), mul(a, b.reach)));
        store3(position, k, moved);
        store3(velocity, k, divide(sub(moved, x), b.dt));
    } else {
        vec3 v = mul(add(load3(velocity, k), mul(a, b.dt)), b.decay);
        store3(velocity, k, v);
        store3(position, k, add(x, mul(v, b.dt)));
    }
}

// XPBD's prediction: v ← v + f/m·dt, x ← x + v·dt; `previous` ← x before.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_predict(BodyStep b, float* __restrict__ position, float* __restrict__ previous,
             float* __restrict__ velocity, const float* __restrict__ force,
             const unsigned char* __restrict__ pinned) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 x = load3(position, k);
    store3(previous, k, x);
    if (pinned[k]) {
        store3(velocity, k, v3(0.0f, 0.0f, 0.0f));
        return;
    }
    vec3 v = add(load3(velocity, k), mul(load3(force, k), b.inverse_mass * b.dt));
    store3(velocity, k, v);
    store3(position, k, add(x, mul(v, b.dt)));
}

// XPBD, one colour of one iteration: each spring of the colour (they share no node) projected
// as a distance constraint of compliance 1/k, its λ accumulated.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_solve(BodyStep b, unsigned first, unsigned count, const unsigned* __restrict__ coloured,
           const unsigned* __restrict__ spring_a, const unsigned* __restrict__ spring_b,
           const float* __restrict__ spring_rest, const float* __restrict__ spring_stiffness,
           const unsigned char* __restrict__ pinned, float* __restrict__ lambda,
           float* __restrict__ position) {
    unsigned t = thread_index();
    if (t >= count) return;
    unsigned s = coloured[first + t];
    unsigned a = spring_a[s], c = spring_b[s];
    float wa = pinned[a] ? 0.0f : b.inverse_mass, wb = pinned[c] ? 0.0f : b.inverse_mass;
    vec3 pa = load3(position, a), pb = load3(position, c);
    vec3 d = sub(pa, pb);
    float len = length(d);
    if (len == 0.0f || wa + wb == 0.0f) return;
    float compliance = 1.0f / (spring_stiffness[s] * b.dt * b.dt);
    float l = lambda[s];
    float delta = (spring_rest[s] - len - compliance * l) / (wa + wb + compliance);
    lambda[s] = l + delta;
    vec3 n = divide(d, len);
    store3(position, a, add(pa, mul(n, wa * delta)));
    store3(position, c, sub(pb, mul(n, wb * delta)));
}

// XPBD's velocities: the substep's motion over dt, damped.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_velocity(BodyStep b, const float* __restrict__ position, const float* __restrict__ previous,
              float* __restrict__ velocity) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    store3(velocity, k, mul(divide(sub(load3(position, k), load3(previous, k)), b.dt), b.decay));
}

// `collide` of a body: the ground, then the sphere; a node that touched either loses its
// velocity into it and `friction` of the tangential part, and `previous` follows.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
collide_nodes(BodyStep b, float* __restrict__ position, float* __restrict__ previous,
              float* __restrict__ velocity, const unsigned char* __restrict__ pinned) {
    unsigned k = thread_index();
    if (k >= b.nodes || pinned[k]) return;
    vec3 x = load3(position, k);
    vec3 normal = v3(0.0f, 0.0f, 0.0f);
    bool touched = false;
    if (x.y < b.ground) {
        x.y = b.ground;
        normal = v3(0.0f, 1.0f, 0.0f);
        touched = true;
    }
    if (b.has_sphere) {
        vec3 centre = v3(b.cx, b.cy, b.cz);
        vec3 d = sub(x, centre);
        float distance = length(d);
        if (distance < b.radius && distance > 0.0f) {
            normal = divide(d, distance);
            x = add(centre, mul(normal, b.radius));
            touched = true;
        }
    }
    if (!touched) return;
    vec3 v = load3(velocity, k);
    float along = dot(v, normal);
    vec3 tangential = sub(v, mul(normal, along));
    v = add(mul(tangential, b.keep), mul(normal, fmaxf(along, 0.0f)));
    store3(position, k, x);
    store3(velocity, k, v);
    store3(previous, k, sub(x, mul(v, b.dt)));
}

// ---------------------------------------------------------------------------------------------
// Drawing: the renderer's CPU builders (render/surface.rs, render/nodes.rs) with the same
// operations in the same order, writing the GL buffers' layouts (mapped through interop).

// `surface` (surface.rs `Surface::update`): vertex v of the skin follows node skin_node[v]; its
// normal is the sum of the unnormalised normals (b − a) × (c − a) of its triangles
// (vertex_triangles[vertex_start[v] .. vertex_start[v + 1]], ascending: the order the CPU adds
// them in), normalised (+y where that fails, glam's normalize_or). One thread per vertex
// gathering its triangles, no atomics. Out: the mesh's Vertex, 8 floats (position, normal,
// texture coordinates).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
surface(unsigned vertices, const float* __restrict__ position, const unsigned* __restrict__ skin_node,
        const float* __restrict__ skin_uv, const unsigned* __restrict__ skin_indices,
        const unsigned* __restrict__ vertex_start, const unsigned* __restrict__ vertex_triangles,
        float* __restrict__ out) {
    unsigned v = thread_index();
    if (v >= vertices) return;
    vec3 sum = v3(0.0f, 0.0f, 0.0f);
    for (unsigned l = vertex_start[v]; l < vertex_start[v + 1]; ++l) {
        unsigned t = vertex_triangles[l];
        vec3 a = load3(position, skin_node[skin_indices[3 * t]]);
        vec3 b = load3(position, skin_node[skin_indices[3 * t + 1]]);
        vec3 c = load3(position, skin_node[skin_indices[3 * t + 2]]);
        sum = add(sum, cross(sub(b, a), sub(c, a)));
    }
    float rcp = 1.0f / length(sum);
    vec3 normal = (isfinite(rcp) && rcp > 0.0f) ? mul(sum, rcp) : v3(0.0f, 1.0f, 0.0f);
    vec3 x = load3(position, skin_node[v]);
    float* o = out + 8 * v;
    o[0] = x.x; o[1] = x.y; o[2] = x.z;
    o[3] = normal.x; o[4] = normal.y; o[5] = normal.z;
    o[6] = skin_uv[2 * v]; o[7] = skin_uv[2 * v + 1];
}

// nodes.rs `energy_color`: 0 a cool blue-grey, 0.5 yellow, 1 red (glam's lerp, a·(1 − s) + b·s).
__device__ __forceinline__ vec3 energy_color(float t) {
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    vec3 cool = v3(0.55f, 0.65f, 0.85f), warm = v3(1.0f, 0.85f, 0.2f), hot = v3(0.95f, 0.1f, 0.05f);
    if (t < 0.5f) {
        float s = 2.0f * t;
        return add(mul(cool, 1.0f - s), mul(warm, s));
    }
    float s = 2.0f * t - 1.0f;
    return add(mul(warm, 1.0f - s), mul(hot, s));
}

__device__ __forceinline__ void store_point(float* out, unsigned i, vec3 x, vec3 color) {
    float* o = out + 6 * i;
    o[0] = x.x; o[1] = x.y; o[2] = x.z;
    o[3] = color.x; o[4] = color.y; o[5] = color.z;
}

// `body_points` (nodes.rs): threads 0 .. nodes: node k as a point coloured by its speed over
// `speed_scale`; then one per spring s: its two ends as a line coloured by its strain
// |l − l₀|/l₀ over `strain_scale`. Out: the Point layout, 6 floats (position, colour).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
body_points(unsigned nodes, unsigned springs, float speed_scale, float strain_scale,
            const float* __restrict__ position, const float* __restrict__ velocity,
            const unsigned* __restrict__ spring_a, const unsigned* __restrict__ spring_b,
            const float* __restrict__ spring_rest, float* __restrict__ points,
            float* __restrict__ lines) {
    unsigned t = thread_index();
    if (t < nodes) {
        store_point(points, t, load3(position, t), energy_color(length(load3(velocity, t)) / speed_scale));
        return;
    }
    unsigned s = t - nodes;
    if (s >= springs) return;
    vec3 a = load3(position, spring_a[s]), b = load3(position, spring_b[s]);
    float rest = spring_rest[s];
    float strain = fabsf(length(sub(a, b)) - rest) / rest;
    vec3 color = energy_color(strain / strain_scale);
    store_point(lines, 2 * s, a, color);
    store_point(lines, 2 * s + 1, b, color);
}

// `water` (water.rs `vertices`): basin node (i, j) at (−basin + i·h, level + u, −basin + j·h),
// its normal (−gain·∂x, 2h, −gain·∂z) by central differences of the heights (the edges' node
// standing in for a missing neighbour), normalised (glam's normalize: × 1/|n|). One thread
// per node. Out: WaterVertex, 6 floats (position, normal).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
water(unsigned n, float h, float basin, float level, float gain, const float* __restrict__ height,
      float* __restrict__ out) {
    unsigned m = thread_index();
    if (m >= n * n) return;
    unsigned i = m % n, j = m / n;
    unsigned right = min(i + 1, n - 1), left = i > 0 ? i - 1 : 0;
    unsigned up = min(j + 1, n - 1), down = j > 0 ? j - 1 : 0;
    float dx = height[j * n + right] - height[j * n + left];
    float dz = height[up * n + i] - height[down * n + i];
    vec3 normal = v3(-gain * dx, 2.0f * h, -gain * dz);
    normal = mul(normal, 1.0f / length(normal));
    store_point(out, m, v3(-basin + (float)i * h, level + height[m], -basin + (float)j * h), normal);
}

// ---------------------------------------------------------------------------------------------
// Statistics: block partials (double), finished in one block per quantity.

#include "common/reduce.cuh"

// Per block: the body's non-finite nodes and Σ ½m|v|² (partials[2·block], [2·block + 1]).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_nodes(BodyStep b, const float* __restrict__ position, const float* __restrict__ velocity,
             double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned k = thread_index();
    double bad = 0.0, kinetic = 0.0;
    if (k < b.nodes) {
        vec3 x = load3(position, k), v = load3(velocity, k);
        bad = (isfinite(x.x) && isfinite(x.y) && isfinite(x.z)) ? 0.0 : 1.0;
        kinetic = 0.5 / (double)b.inverse_mass * (double)dot(v, v);
    }
    bad = block_reduce<PARTICLES_BLOCK>(bad, false, shared);
    kinetic = block_reduce<PARTICLES_BLOCK>(kinetic, false, shared);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = bad;
        partials[2 * blockIdx.x + 1] = kinetic;
    }
}

// Per block: the basin's non-finite nodes and its largest |height| (partials[2·block], …).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_basin(BasinStep s, const float* __restrict__ height, double* __restrict__ partials) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned m = thread_index();
    double bad = 0.0, highest = 0.0;
    if (m < (unsigned)(s.n * s.n)) {
        bad = isfinite(height[m]) ? 0.0 : 1.0;
        highest = fabs((double)height[m]);
        if (!isfinite(height[m])) highest = 0.0;
    }
    bad = block_reduce<PARTICLES_BLOCK>(bad, false, shared);
    highest = block_reduce<PARTICLES_BLOCK>(highest, true, shared);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = bad;
        partials[2 * blockIdx.x + 1] = highest;
    }
}

// Quantity blockIdx.x of `blocks` partials (two per block) into stats[first + blockIdx.x]: a
// sum, or the largest where bit blockIdx.x of `max_mask` is set. One block per quantity.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
reduce_finish(const double* __restrict__ partials, unsigned blocks, unsigned max_mask,
              double* __restrict__ stats, unsigned first) {
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned q = blockIdx.x;
    bool largest = (max_mask >> q) & 1u;
    double value = 0.0;
    for (unsigned k = threadIdx.x; k < blocks; k += PARTICLES_BLOCK) {
        double v = partials[2 * k + q];
        value = largest ? fmax(value, v) : value + v;
    }
    value = block_reduce<PARTICLES_BLOCK>(value, largest, shared);
    if (threadIdx.x == 0) stats[first + q] = value;
}
