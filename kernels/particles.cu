// Particles (docs/particles.md): the fountain and the spring-mass bodies, one kernel (or a few)
// per stage of the CPU solver (`src/sims/particles/`: fountain.rs, dynamics.rs, sort.rs; the
// basin's wave step is the pool's `cpu.rs`, written again here) with the same operations in the
// same order; host side in `src/sims/particles/cuda/kernels.rs`. Kernel names are plain
// `extern "C"` and start with their stage's name; one header per idea, included at the end of
// this file (which holds the records and the vector helpers they share):
//   particles_fountain.cuh, once per frame: emit, advance, collide (+ collide_scan,
//     collide_compact: the stable compaction of the survivors and of the landings), basin
//     (basin_splash, then basin_forces + basin_integrate per substep), sort (sort_keys, then
//     four passes of sort_histogram, sort_scan, sort_scatter: an LSD radix sort of 8-bit digits)
//   particles_bodies.cuh, once per substep: springs, volume (+ volume_gather; the jelly),
//     wind (+ wind_gather), integrate (or xpbd_predict, xpbd_solve once per colour and
//     iteration, then xpbd_volume once per cell colour, xpbd_velocity), collide_nodes
//   particles_self_collide.cuh, once per substep with self-collision: self_collide (drift,
//     then cells, scan, scatter, order, count, scan, lists, each a no-op unless the drift
//     asks for a rebuild; touching, gather, apply)
//   particles_drawing.cuh (render/, written straight into the renderer's GL buffers): surface
//     (a body's skin: positions, smooth normals, texture coordinates), body_points (nodes
//     coloured by speed, springs by strain), water (the basin's vertices and normals)
//   particles_stats.cuh: reduce_nodes, reduce_fountain (every frame's end: the non-finite
//     nodes, particles, the basin's largest |height|), body_stats (the statistics panel's
//     figures of a body, on demand), each finished by reduce_finish (block partials in double,
//     finished in one block: deterministic, no atomics on floats).
//
// Records: every stage kernel reads its record through a pointer into device memory — the
// fountain's FountainStep, BasinStep and EmitStep (one each a frame), a body's BodyStep and
// particles_self_collide.cuh's SelfStep (one each a substep) — uploaded before the frame, so that
// a CUDA graph of the frame replays with new values (src/sims/particles/cuda/frame_graph.rs).
// The frame's end (particles_stats.cuh) takes its constants by value.
//
// Layout: vectors are interleaved x, y, z floats (glam's Vec3), one thread per particle, node,
// triangle or basin node. The fountain's counts live on the GPU: the particles after `emit` in
// its EmitStep, those after `collide` in stats[0]; every fountain kernel reads its count there
// and returns past it, so a launch may cover more threads (a graph's cover its reach: a power of
// two up to the buffers' capacity) and compute the same.

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
    float cut, boost, sheet, bounce;
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

// A frame's emission, mirrored by `EmitStep`: the particles alive before `emit` (its first
// index), how many it adds, and the particles emitted before (the numbers' low and high words).
struct EmitStep {
    unsigned int first, count;
    unsigned int emitted_lo, emitted_hi;
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

// A spring-mass body's substep, mirrored by `BodyStep`. The body's kernels read their substep's
// record from device memory (one a substep, uploaded before the frame: src/sims/particles/cuda/
// frame_graph.rs), not by value, so that a CUDA graph of the frame replays with new constants.
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
    float friction;             // Coulomb's μ (`coulomb`)
    unsigned int side, cells;   // the jelly's lattice: nodes per side (0: none), (side − 1)³ cells
    float volume_modulus;       // the volume term's bulk modulus K, Pa (0: off)
};
static_assert(sizeof(BodyStep) == 27 * 4, "BodyStep mirrors kernels.rs's (27 four-byte fields)");

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

#include "particles_fountain.cuh"
#include "particles_bodies.cuh"
#include "particles_self_collide.cuh"
#include "particles_drawing.cuh"
#include "particles_stats.cuh"
