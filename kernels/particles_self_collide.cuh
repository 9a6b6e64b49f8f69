// `self_collide` (src/sims/particles/self_collide.rs, whose module docs say what and why): a
// body's nodes sharing no spring kept a thickness h apart, from per-node contact lists kept
// while no node drifted more than half the skin. Included by particles.cu, after
// particles_fountain.cuh (its scan_exclusive). Per substep, all launched every substep, the
// rebuild decided on the GPU (no host read):
//   self_collide_drift, reduce_finish (particles_stats.cuh), self_collide_widest,
//     self_collide_decide: the rebuild decision, grid-wide (each block's partial sums of the
//     drift in double, summed over the blocks by reduce_finish; each block's widest squared
//     drift from their mean, the widest of those in one block), which sets state[SC_REBUILD]
//     (or a forced rebuild: the first, another h, an upload, the last build's lists
//     overflowing); self_collide_clear zeroes a rebuild's bucket counts;
//   self_collide_cells, the scan (self_collide_chunk_sums, self_collide_scan,
//     self_collide_chunk_scan), self_collide_scatter, self_collide_order: the
//     counting sort into hashed cells of side 2r (sort_cells; each bucket's nodes in node
//     order, as the CPU's);
//   self_collide_count, the scan again, self_collide_lists: the candidate lists (CSR; count,
//     scan, fill: `build`), into room for SelfStep.capacity candidates (more: state[SC_OVERFLOW]
//     says how many were needed, no list is written, touching and gather walk the sorted cells
//     instead, every substep rebuilds, state[SC_LARGEST] keeps the frame's largest need, and
//     the host grows the room at the frame's end);
//   self_collide_touching, self_collide_gather, self_collide_apply: each node's contacts, the
//     Jacobi gather (one thread per node, writes only its own), and the result written back with
//     `previous` moved along.
// The build kernels return at once when state[SC_REBUILD] is 0.

#include "common/reduce.cuh"

// Slots of the state array (`SC_STATE` of them).
#define SC_REBUILD 0   // this substep rebuilds the lists
#define SC_BUILDS 1    // builds so far
#define SC_NEEDED 2    // candidates the last build found
#define SC_OVERFLOW 3  // nonzero: the last build's lists did not fit (then its need)
#define SC_LARGEST 4   // the largest need of a build that did not fit since the host last read
                       // it (the frame's end; it zeroes it): an overflow that cleared within
                       // the frame is reported too
#define SC_STATE 5

// self_collide.rs CELL_LIMIT.
#define SC_CELL_LIMIT 16777216.0f

// A substep's constants, mirrored by `SelfStep` in src/sims/particles/cuda/kernels.rs.
struct SelfStep {
    unsigned nodes;
    unsigned buckets;   // a power of two ≥ 2·nodes (`buckets`)
    unsigned capacity;  // room for candidates
    unsigned force;     // rebuild whatever the drift
    float h;            // the thickness, m
    float radius;       // the lists' radius h + s, m
    float limit;        // the drift that rebuilds, s/2, m
    float friction;
    float dt;
};
static_assert(sizeof(SelfStep) == 9 * 4, "SelfStep mirrors kernels.rs's (9 four-byte fields)");


// self_collide.rs `cell_of`: NaN to −CELL_LIMIT, the rest clamped to ±CELL_LIMIT.
__device__ __forceinline__ int self_collide_cell1(float v, float inverse) {
    if (isnan(v)) return -(int)SC_CELL_LIMIT;
    return (int)fminf(fmaxf(floorf(v * inverse), -SC_CELL_LIMIT), SC_CELL_LIMIT);
}
__device__ __forceinline__ int3 self_collide_cell(vec3 x, float inverse) {
    int3 c;
    c.x = self_collide_cell1(x.x, inverse);
    c.y = self_collide_cell1(x.y, inverse);
    c.z = self_collide_cell1(x.z, inverse);
    return c;
}
// self_collide.rs `bucket_of`.
__device__ __forceinline__ unsigned self_collide_bucket(int3 c, unsigned buckets) {
    return (((unsigned)c.x * 92837111u) ^ ((unsigned)c.y * 689287499u) ^ ((unsigned)c.z * 283923481u)) &
           (buckets - 1u);
}

// Whether nodes k and j share a spring.
__device__ __forceinline__ bool self_collide_linked(const unsigned* node_start, const unsigned* link_other,
                                                    unsigned k, unsigned j) {
    for (unsigned l = node_start[k]; l < node_start[k + 1]; ++l)
        if (link_other[l] == j) return true;
    return false;
}

// self_collide.rs `near`: `each(j)` for each node j sharing no spring with node k closer than
// r, walking the 2 × 2 × 2 cells of side 2r nearest it, in the CPU's order.
template <class Each>
__device__ __forceinline__ void self_collide_walk(SelfStep c, const float* position, const unsigned* node_start,
                                                  const unsigned* link_other, const unsigned* start,
                                                  const unsigned* nodes, unsigned k, Each each) {
    float r = c.radius;
    vec3 x = load3(position, k);
    float inverse = 0.5f / r;
    int3 home = self_collide_cell(x, inverse);
    int fx = home.x - (x.x * inverse - (float)home.x < 0.5f ? 1 : 0);
    int fy = home.y - (x.y * inverse - (float)home.y < 0.5f ? 1 : 0);
    int fz = home.z - (x.z * inverse - (float)home.z < 0.5f ? 1 : 0);
    for (int dz = 0; dz < 2; ++dz)
        for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) {
                int3 cell;
                cell.x = fx + dx;
                cell.y = fy + dy;
                cell.z = fz + dz;
                unsigned b = self_collide_bucket(cell, c.buckets);
                for (unsigned i = start[b]; i < start[b + 1]; ++i) {
                    unsigned j = nodes[i];
                    vec3 y = load3(position, j);
                    vec3 d = sub(x, y);
                    if (j == k || !(dot(d, d) < r * r)) continue;
                    // A node in another cell of the same bucket is met there, once.
                    int3 other = self_collide_cell(y, inverse);
                    if (other.x != cell.x || other.y != cell.y || other.z != cell.z) continue;
                    if (self_collide_linked(node_start, link_other, k, j)) continue;
                    each(j);
                }
            }
}

// The walk's candidates of node k counted; `list` null: only counted, else at most `room`
// written (the count pass's figure: a fill finding more writes no further).
__device__ __forceinline__ unsigned self_collide_near(SelfStep c, const float* position, const unsigned* node_start,
                                      const unsigned* link_other, const unsigned* start,
                                      const unsigned* nodes, unsigned k, unsigned* list,
                                      unsigned room) {
    unsigned found = 0;
    self_collide_walk(c, position, node_start, link_other, start, nodes, k, [&](unsigned j) {
        if (list && found < room) list[found] = j;
        ++found;
    });
    return found;
}

// `each(j)` for node k's candidates: its list, or, while the lists overflowed their room, the
// same walk over the cells the build sorted (an overflow rebuilds every substep, so the cells
// are this substep's: the same candidates in the same order, only slower).
template <class Each>
__device__ __forceinline__ void self_collide_candidates(SelfStep c, const unsigned* state, const float* position,
                                                        const unsigned* node_start, const unsigned* link_other,
                                                        const unsigned* start, const unsigned* nodes,
                                                        const unsigned* first, const unsigned* candidates,
                                                        unsigned k, Each each) {
    if (state[SC_OVERFLOW] != 0u) {
        self_collide_walk(c, position, node_start, link_other, start, nodes, k, each);
        return;
    }
    for (unsigned i = first[k]; i < first[k + 1]; ++i) each(candidates[i]);
}

// The drift's mean from reduce_finish's sums of the drift (double), as f32 (the CPU's
// mean is an f32 sum divided by the nodes as f32).
__device__ __forceinline__ vec3 self_collide_mean(const double* sums, unsigned n) {
    float count = (float)max(n, 1u);
    return v3((float)sums[0] / count, (float)sums[1] / count, (float)sums[2] / count);
}

// The rebuild decision (self_collide.rs `current`), grid-wide, first pass (one thread a
// node): each block's sums of the drift x − anchor (in double, block_reduce's fixed tree)
// into partials[3·block + axis]; reduce_finish sums them over the blocks.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_drift(const SelfStep* __restrict__ record, const float* __restrict__ position, const float* __restrict__ anchor,
                   double* __restrict__ partials) {
    const SelfStep c = *record;
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned k = thread_index();
    vec3 d = v3(0.0f, 0.0f, 0.0f);
    if (k < c.nodes) d = sub(load3(position, k), load3(anchor, k));
    double sx = block_reduce<PARTICLES_BLOCK>((double)d.x, false, shared);
    double sy = block_reduce<PARTICLES_BLOCK>((double)d.y, false, shared);
    double sz = block_reduce<PARTICLES_BLOCK>((double)d.z, false, shared);
    if (threadIdx.x == 0) {
        partials[3 * blockIdx.x] = sx;
        partials[3 * blockIdx.x + 1] = sy;
        partials[3 * blockIdx.x + 2] = sz;
    }
}

// Its third pass (one thread a node): each block's widest squared drift from the mean into
// partials[block] (a NaN one passed over, as the CPU's f32::max: a NaN node makes the mean
// non-finite, which rebuilds).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_widest(const SelfStep* __restrict__ record, const float* __restrict__ position, const float* __restrict__ anchor,
                    const double* __restrict__ sums, double* __restrict__ partials) {
    const SelfStep c = *record;
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned k = thread_index();
    double w = 0.0;
    if (k < c.nodes) {
        vec3 e = sub(sub(load3(position, k), load3(anchor, k)), self_collide_mean(sums, c.nodes));
        float e2 = dot(e, e);
        if (!isnan(e2)) w = (double)e2;
    }
    w = block_reduce<PARTICLES_BLOCK>(w, true, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = w;
}

// Its last pass (one block): the widest over the blocks' partials; sets state[SC_REBUILD] (a
// non-finite mean, a NaN or infinite node, rebuilds too, as the CPU's `current`; so do
// `force` and the last build's lists overflowing).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_decide(const SelfStep* __restrict__ record, const double* __restrict__ sums, const double* __restrict__ partials,
                    unsigned* __restrict__ state) {
    const SelfStep c = *record;
    __shared__ double shared[PARTICLES_BLOCK];
    unsigned blocks = (c.nodes + PARTICLES_BLOCK - 1) / PARTICLES_BLOCK;
    double w = 0.0;
    for (unsigned b = threadIdx.x; b < blocks; b += PARTICLES_BLOCK) w = fmax(w, partials[b]);
    w = block_reduce<PARTICLES_BLOCK>(w, true, shared);
    if (threadIdx.x != 0) return;
    vec3 mean = self_collide_mean(sums, c.nodes);
    float widest = (float)w;
    bool finite = isfinite(mean.x) && isfinite(mean.y) && isfinite(mean.z);
    bool rebuild = c.force != 0u || state[SC_OVERFLOW] != 0u || !finite || !(widest <= c.limit * c.limit);
    state[SC_REBUILD] = rebuild ? 1u : 0u;
    if (rebuild) {
        state[SC_BUILDS] += 1u;
        state[SC_OVERFLOW] = 0u;
    }
}

// A rebuild's bucket counts and fills zeroed for the sort (one thread a bucket, and one for
// start[buckets]).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_clear(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, unsigned* __restrict__ start,
                   unsigned* __restrict__ fill) {
    const SelfStep c = *record;
    unsigned b = thread_index();
    if (b > c.buckets || state[SC_REBUILD] == 0u) return;
    start[b] = 0u;
    if (b < c.buckets) fill[b] = 0u;
}

// The sort's first pass: each node's bucket, counted into start[bucket]; the anchors.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_cells(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, const float* __restrict__ position,
                   unsigned* __restrict__ bucket, unsigned* __restrict__ start, float* __restrict__ anchor) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes || state[SC_REBUILD] == 0u) return;
    vec3 x = load3(position, k);
    unsigned b = self_collide_bucket(self_collide_cell(x, 0.5f / c.radius), c.buckets);
    bucket[k] = b;
    atomicAdd(&start[b], 1u);
    store3(anchor, k, x);
}

// The build's two scans (the bucket counts into their starts, the candidate counts into the
// nodes' first candidates): an exclusive scan of data[0..values) (values = count + 1: the
// output there is the total, whatever the slot held; it is zeroed all the same, so that no
// uninitialised value is read, as compute-sanitizer's initcheck would report), grid-wide in chunks of SCAN_THREADS values: each chunk's sum
// (self_collide_chunk_sums), the sums scanned in one block (self_collide_scan), each chunk
// scanned and offset by its sum's scan (self_collide_chunk_scan).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
self_collide_chunk_sums(const unsigned* __restrict__ state, unsigned values, const unsigned* __restrict__ data,
                        unsigned* __restrict__ sums) {
    __shared__ double shared[SCAN_THREADS];
    if (state[SC_REBUILD] == 0u) return;
    unsigned i = thread_index();
    double v = block_reduce<SCAN_THREADS>(i < values ? (double)data[i] : 0.0, false, shared);
    if (threadIdx.x == 0) sums[blockIdx.x] = (unsigned)v;
}

// An exclusive scan of data[0..count) in one block, the total into data[count] (the chunks'
// sums).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
self_collide_scan(const unsigned* __restrict__ state, unsigned count, unsigned* __restrict__ data) {
    if (state[SC_REBUILD] == 0u) return;
    scan_exclusive(data, count, 1, data + count);
}

// Each chunk of data[0..values) scanned (scan_exclusive, one value a thread) and offset by the
// scanned sum of the chunks before it.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
self_collide_chunk_scan(const unsigned* __restrict__ state, unsigned values, unsigned* __restrict__ data,
                        const unsigned* __restrict__ sums) {
    if (state[SC_REBUILD] == 0u) return;
    unsigned begin = blockIdx.x * SCAN_THREADS, i = begin + threadIdx.x;
    scan_exclusive(data + begin, min(values - begin, (unsigned)SCAN_THREADS), 1, 0);
    if (i < values) data[i] += sums[blockIdx.x];
}

// Each node into its bucket's range (in any order: self_collide_order puts it in node order).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_scatter(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, const unsigned* __restrict__ bucket,
                     const unsigned* __restrict__ start, unsigned* __restrict__ fill, unsigned* __restrict__ nodes) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes || state[SC_REBUILD] == 0u) return;
    unsigned b = bucket[k];
    nodes[start[b] + atomicAdd(&fill[b], 1u)] = k;
}

// Each bucket's nodes sorted by index (insertion sort: a few a bucket), as the CPU's.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_order(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, const unsigned* __restrict__ start,
                   unsigned* __restrict__ nodes) {
    const SelfStep c = *record;
    unsigned b = thread_index();
    if (b >= c.buckets || state[SC_REBUILD] == 0u) return;
    unsigned begin = start[b], end = start[b + 1];
    for (unsigned i = begin + 1; i < end; ++i) {
        unsigned v = nodes[i], at = i;
        while (at > begin && nodes[at - 1] > v) {
            nodes[at] = nodes[at - 1];
            --at;
        }
        nodes[at] = v;
    }
}

// Each node's candidates, counted into first[k].
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_count(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, const float* __restrict__ position,
                   const unsigned* __restrict__ node_start, const unsigned* __restrict__ link_other,
                   const unsigned* __restrict__ start, const unsigned* __restrict__ nodes,
                   unsigned* __restrict__ first) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes || state[SC_REBUILD] == 0u) return;
    if (k == 0) first[c.nodes] = 0u;  // the scan's last value: read, never used (the total lands there)
    first[k] = self_collide_near(c, position, node_start, link_other, start, nodes, k, nullptr, 0u);
}

// Each node's candidates written at first[k] (first scanned); none where they do not all fit
// (the need into state[SC_OVERFLOW]).
// (Min. 1 block a multiprocessor: without it ptxas keeps this kernel to 32 registers and spills.)
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK, 1)
self_collide_lists(const SelfStep* __restrict__ record, unsigned* __restrict__ state, const float* __restrict__ position,
                   const unsigned* __restrict__ node_start, const unsigned* __restrict__ link_other,
                   const unsigned* __restrict__ start, const unsigned* __restrict__ nodes,
                   const unsigned* __restrict__ first, unsigned* __restrict__ candidates) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes || state[SC_REBUILD] == 0u) return;
    unsigned total = first[c.nodes];
    if (k == 0) {
        state[SC_NEEDED] = total;
        if (total > c.capacity) {
            state[SC_OVERFLOW] = total;
            state[SC_LARGEST] = max(state[SC_LARGEST], total);
        }
    }
    if (total > c.capacity) return;
    self_collide_near(c, position, node_start, link_other, start, nodes, k, candidates + first[k],
                      first[k + 1] - first[k]);
}

// self_collide.rs `touches`: within h (NaN never; coincident nodes are).
__device__ __forceinline__ bool self_collide_touches(vec3 d, float h) { return dot(d, d) < h * h; }

// Node k's contacts this substep.
// (Min. 1 block a multiprocessor: the cells walked while the lists overflowed need the
// registers; without it ptxas keeps this kernel to 32 and spills.)
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK, 1)
self_collide_touching(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, const float* __restrict__ position,
                      const unsigned* __restrict__ node_start, const unsigned* __restrict__ link_other,
                      const unsigned* __restrict__ start, const unsigned* __restrict__ nodes,
                      const unsigned* __restrict__ first, const unsigned* __restrict__ candidates,
                      unsigned* __restrict__ touching) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes) return;
    unsigned found = 0;
    vec3 x = load3(position, k);
    self_collide_candidates(c, state, position, node_start, link_other, start, nodes, first, candidates, k,
                            [&](unsigned j) {
                                if (self_collide_touches(sub(x, load3(position, j)), c.h)) ++found;
                            });
    touching[k] = found;
}

// self_collide.rs `direction`: the unit direction from node j to node k, their distance and
// whether they are stacked; coincident nodes along x_k₋ − x_j₋ (`previous`), then (stacked) ŷ
// for the node that rises (k where j is pinned, else the higher index), −ŷ for the other.
__device__ __forceinline__ vec3 self_collide_direction(const float* previous, const unsigned char* pinned,
                                                       unsigned k, unsigned j, vec3 d, float* distance,
                                                       bool* stacked) {
    float len = length(d);
    *distance = len;
    *stacked = false;
    if (len > 0.0f) return divide(d, len);
    vec3 before = sub(load3(previous, k), load3(previous, j));
    float apart = length(before);
    if (apart > 0.0f) return divide(before, apart);
    *stacked = true;
    return v3(0.0f, pinned[j] || k > j ? 1.0f : -1.0f, 0.0f);
}

// self_collide.rs `push`: share·(h − d)·n; stacked nodes: the rising one the pair's whole
// separation weight·h up, the other none (neither sent under what it lies on).
__device__ __forceinline__ vec3 self_collide_push(vec3 n, float distance, bool stacked, float share, float weight,
                                                  float h) {
    if (!stacked) return mul(n, share * (h - distance));
    if (n.y > 0.0f) return mul(n, weight * h);
    return v3(0.0f, 0.0f, 0.0f);
}

// self_collide.rs `gather`: node k's position and velocity after the stage into `moved`,
// `changed` (Jacobi: reads the positions and velocities before, writes only node k's).
// (Min. 1 block a multiprocessor: the cells walked while the lists overflowed need the
// registers; without it ptxas keeps this kernel to 32 and spills.)
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK, 1)
self_collide_gather(const SelfStep* __restrict__ record, const unsigned* __restrict__ state, const float* __restrict__ position,
                    const float* __restrict__ previous, const float* __restrict__ velocity,
                    const unsigned char* __restrict__ pinned, const unsigned* __restrict__ node_start,
                    const unsigned* __restrict__ link_other, const unsigned* __restrict__ start,
                    const unsigned* __restrict__ nodes, const unsigned* __restrict__ first,
                    const unsigned* __restrict__ candidates, const unsigned* __restrict__ touching,
                    float* __restrict__ moved, float* __restrict__ changed) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes) return;
    vec3 x = load3(position, k), v = load3(velocity, k);
    vec3 push = v3(0.0f, 0.0f, 0.0f), stop = v3(0.0f, 0.0f, 0.0f), slip = v3(0.0f, 0.0f, 0.0f);
    if (!pinned[k]) {
        self_collide_candidates(c, state, position, node_start, link_other, start, nodes, first, candidates, k,
                                [&](unsigned j) {
            vec3 d = sub(x, load3(position, j));
            if (!self_collide_touches(d, c.h)) return;
            float weight = 1.0f / (float)max(touching[k], touching[j]);
            float share = weight * (pinned[j] ? 1.0f : 0.5f);
            float distance;
            bool stacked;
            vec3 n = self_collide_direction(previous, pinned, k, j, d, &distance, &stacked);
            push = add(push, self_collide_push(n, distance, stacked, share, weight, c.h));
            vec3 relative = sub(v, load3(velocity, j));
            float along = dot(relative, n);
            vec3 removed = coulomb(sub(relative, mul(n, along)), fmaxf(-along, 0.0f), c.friction);
            stop = add(stop, mul(n, share * fminf(along, 0.0f)));
            slip = add(slip, mul(removed, share));
        });
        x = sub(add(x, push), mul(slip, c.dt));
        v = sub(sub(v, stop), slip);
    }
    store3(moved, k, x);
    store3(changed, k, v);
}

// The gather's result written back; `previous` = x − v·dt where it changed (a node without
// contacts keeps its values bit for bit).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
self_collide_apply(const SelfStep* __restrict__ record, const float* __restrict__ moved, const float* __restrict__ changed,
                   float* __restrict__ position, float* __restrict__ previous, float* __restrict__ velocity) {
    const SelfStep c = *record;
    unsigned k = thread_index();
    if (k >= c.nodes) return;
    vec3 x = load3(position, k), v = load3(velocity, k);
    vec3 nx = load3(moved, k), nv = load3(changed, k);
    bool same = nx.x == x.x && nx.y == x.y && nx.z == x.z && nv.x == v.x && nv.y == v.y && nv.z == v.z;
    if (same) return;
    store3(position, k, nx);
    store3(velocity, k, nv);
    store3(previous, k, sub(nx, mul(nv, c.dt)));
}
