// The fountain (fountain.rs; the basin's wave step is the pool's `cpu.rs`, written again here):
// emit, advance, collide (+ its scan and compaction), basin, sort. Included by particles.cu,
// after the records and the vector helpers.

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

// The particles after `emit`: those alive before it and those it adds (its record's).
__device__ __forceinline__ unsigned emitted_end(const EmitStep* emission) {
    return emission->first + emission->count;
}

// `emit`: particles e.first .. e.first + e.count, numbers emitted .. emitted + count (as
// fountain.rs `Emission::particle`); each keeps its number's low 32 bits as its tag (the
// renderer's colour and sprite, fountain.rs `tag`). Launched over at least e.count threads.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
emit(const FountainStep* __restrict__ step, const EmitStep* __restrict__ emission,
     float* __restrict__ position, float* __restrict__ velocity, float* __restrict__ age,
     unsigned char* __restrict__ hits, unsigned* __restrict__ tag) {
    unsigned t = thread_index();
    const EmitStep e = *emission;
    if (t >= e.count) return;
    const FountainStep p = *step;
    unsigned first = e.first;
    unsigned lo = e.emitted_lo + t;
    unsigned hi = e.emitted_hi + (lo < e.emitted_lo ? 1u : 0u);
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

// `advance`: symplectic Euler, v ← v + (g + drag·(w − v))·dt, x ← x + v·dt; ageing. Over the
// particles after `emit` (e.first + e.count; launched over at least as many threads).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
advance(const FountainStep* __restrict__ step, const EmitStep* __restrict__ emission,
        float* __restrict__ position, float* __restrict__ velocity, float* __restrict__ age) {
    unsigned k = thread_index();
    if (k >= emitted_end(emission)) return;
    const FountainStep p = *step;
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
// and each block's counts of both into `counts` (keep, landed per block; 0 for a block past
// the particles), for the compaction. Over the particles after `emit`, as `advance`.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
collide(const FountainStep* __restrict__ step, const EmitStep* __restrict__ emission,
        float* __restrict__ position, float* __restrict__ velocity,
        const float* __restrict__ age, unsigned char* __restrict__ hits,
        unsigned* __restrict__ flags, unsigned* __restrict__ counts) {
    __shared__ unsigned sums[PARTICLES_BLOCK];
    unsigned k = thread_index();
    unsigned n = emitted_end(emission);
    unsigned fate = 0;
    if (k < n) {
        const FountainStep p = *step;
        vec3 x = load3(position, k), v = load3(velocity, k);
        vec3 before = sub(x, mul(v, p.dt));
        if (over_cube(p, x) && x.y < p.top && x.y > 0.0f) {
            if (before.y >= p.top) {
                x.y = p.top;
                if (hits[k] == 0) {
                    float fall = -v.y;
                    float r = sqrtf(v.x * v.x + v.z * v.z);
                    float out = r > 0.0f ? p.sheet * fall / r : 0.0f;
                    v.y = fall * p.cut;
                    v.x *= p.boost + out;
                    v.z *= p.boost + out;
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
collide_compact(const FountainStep* __restrict__ step, const EmitStep* __restrict__ emission,
                const unsigned* __restrict__ flags,
                const unsigned* __restrict__ counts, const float* __restrict__ position,
                const float* __restrict__ velocity, const float* __restrict__ age,
                const unsigned char* __restrict__ hits, const unsigned* __restrict__ tag,
                float* __restrict__ out_position, float* __restrict__ out_velocity,
                float* __restrict__ out_age, unsigned char* __restrict__ out_hits,
                unsigned* __restrict__ out_tag, float* __restrict__ drops) {
    __shared__ unsigned keep_rank[PARTICLES_BLOCK];
    __shared__ unsigned land_rank[PARTICLES_BLOCK];
    unsigned k = thread_index(), t = threadIdx.x;
    unsigned fate = k < emitted_end(emission) ? flags[k] : 0u;
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
        drops[3 * to] = x.x + step->basin;
        drops[3 * to + 1] = x.z + step->basin;
        drops[3 * to + 2] = step->push * -v.y;
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
basin_splash(const BasinStep* __restrict__ record, const unsigned* __restrict__ stats,
             const float* __restrict__ drops, const float* __restrict__ inner,
             const float* __restrict__ outer,
             const unsigned char* __restrict__ flags, float* __restrict__ velocity) {
    unsigned m = thread_index();
    const BasinStep s = *record;
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
basin_forces(const BasinStep* __restrict__ record, const float* __restrict__ height,
             float* __restrict__ accel) {
    unsigned m = thread_index();
    const BasinStep s = *record;
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
basin_integrate(const BasinStep* __restrict__ record, float* __restrict__ height,
                float* __restrict__ velocity, const float* __restrict__ accel,
                const unsigned char* __restrict__ flags) {
    unsigned m = thread_index();
    const BasinStep s = *record;
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
sort_keys(const FountainStep* __restrict__ step, const unsigned* __restrict__ stats,
          const float* __restrict__ position, unsigned* __restrict__ keys,
          unsigned* __restrict__ order) {
    unsigned k = thread_index();
    if (k >= stats[STAT_ALIVE]) return;
    const FountainStep p = *step;
    vec3 d = sub(load3(position, k), v3(p.eyex, p.eyey, p.eyez));
    keys[k] = order_key(-dot(d, v3(p.forwardx, p.forwardy, p.forwardz)));
    order[k] = k;
}

// `sort`, per pass: each tile's count of each digit of the keys (at `shift`), digit-major:
// hist[digit · tiles + tile]; zeros for a tile past the keys (a graph's grid), at once.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
sort_histogram(const unsigned* __restrict__ stats, unsigned shift, unsigned tiles,
               const unsigned* __restrict__ keys, unsigned* __restrict__ hist) {
    __shared__ unsigned counts[RADIX];
    unsigned t = threadIdx.x, tile = blockIdx.x, n = stats[STAT_ALIVE];
    if (tile * SORT_TILE >= n) {
        hist[t * tiles + tile] = 0;
        return;
    }
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
    // A tile past the keys (a graph's grid) has none to place: the whole block returns.
    if (tile * SORT_TILE >= n) return;
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
