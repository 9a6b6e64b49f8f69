// One stage of the particles CUDA solver's launch sequence (src/sims/particles/cuda/mod.rs)
// with every kernel of kernels/particles.cu run on the CPU: kernels without barriers thread by
// thread, those with __syncthreads block by block with real barriers (blocks.h).
// src/sims/particles/cuda/emulation.rs writes the input from the CPU solver's state and
// compares the output with what the CPU stage made of the same state.
//
// usage: particles INPUT OUTPUT
// INPUT: u32 stage; FountainStep; BasinStep; BodyStep; u32 [n, emit count, emitted lo,
// emitted hi, substeps, iterations, landings, the frame end's threads (the host's
// reduce_fountain_threads, as end_frame launches)]; then arrays, each a u32 byte count and the
// bytes: position, velocity, age, hits, drops, height, basin velocity, basin flags, inner
// stencil, outer stencil (the fountain), previous, force, pinned, node_start, link_other,
// link_rest, link_stiffness, triangles, node_triangle_start, node_triangles, coloured,
// colour_start, spring_a, spring_b, spring_rest, spring_stiffness, cell_rest (a body), tag (the
// fountain), skin_node, skin_uv, skin_indices, vertex_start, vertex_triangles, scales (the
// drawing stages' constants: body_points' node mass, red energy and decades; or the water's
// h, basin, level, gain;
// or body_stats' node mass, gravity's x, y, z and the volume term's modulus; its lattice's side
// in the header's second slot).
// OUTPUT: arrays the same way: position, velocity, age, hits, drops, height, basin velocity,
// order, tally (alive, landed), previous, force, stats (f64, −1 where the stage writes none:
// 4 of them, the basin's end of frame, reduce_fountain's, in 0, 1 and 2 (non-finite nodes,
// largest |height|, non-finite particles of the first n; the arrays may hold dead slots past
// them); 2 + NODES_QUANTITIES = 9 after collide_nodes, reduce_nodes' non-finite count in 2 and
// its box in 3–8 (−lowest corner, highest); BODY_QUANTITIES = 4 from body_stats, its figures),
// tag, vertices (8 floats each: `surface`; 6 each: `water`), points, lines (6 floats each:
// `body_points`).
#include "cuda_shim.h"
#include <vector>
thread_local Dim blockIdx, threadIdx;
Dim blockDim, gridDim;
using std::fmax;
using std::fabs;
#include "particles.cu"
#include "blocks.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <utility>

enum Stage { EMIT, ADVANCE, COLLIDE, BASIN, SORT, SPRINGS = 10, WIND, INTEGRATE, XPBD, COLLIDE_NODES, BODY_STATS, VOLUME,
             SELF_COLLIDE, SURFACE = 20, BODY_POINTS, WATER };

// Threads last to first (the scatter's atomics then fill each bucket backwards, which
// self_collide_order must undo).
template <class Kernel> void launch_reversed(unsigned n, Kernel kernel) {
    unsigned grid = std::max((n + PARTICLES_BLOCK - 1) / PARTICLES_BLOCK, 1u);
    blockDim = {PARTICLES_BLOCK, 1, 1};
    gridDim = {grid, 1, 1};
    for (unsigned t = grid * PARTICLES_BLOCK; t-- > 0;) {
        blockIdx = {t / PARTICLES_BLOCK, 0, 0};
        threadIdx = {t % PARTICLES_BLOCK, 0, 0};
        kernel();
    }
}

template <class Kernel> void launch(unsigned n, Kernel kernel) {
    unsigned grid = std::max((n + PARTICLES_BLOCK - 1) / PARTICLES_BLOCK, 1u);
    blockDim = {PARTICLES_BLOCK, 1, 1};
    gridDim = {grid, 1, 1};
    for (unsigned t = 0; t < grid * PARTICLES_BLOCK; ++t) {
        blockIdx = {t / PARTICLES_BLOCK, 0, 0};
        threadIdx = {t % PARTICLES_BLOCK, 0, 0};
        kernel();
    }
}

unsigned blocks_of(unsigned n, unsigned per) { return std::max((n + per - 1) / per, 1u); }

FILE* in;
template <class T> void read(T* data, size_t count) {
    if (fread(data, sizeof(T), count, in) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}
template <class T> std::vector<T> array() {
    unsigned bytes;
    read(&bytes, 1);
    std::vector<T> v(bytes / sizeof(T));
    if (bytes) read(v.data(), v.size());
    return v;
}
FILE* out;
template <class T> void write(const std::vector<T>& v) {
    unsigned bytes = (unsigned)(v.size() * sizeof(T));
    fwrite(&bytes, 4, 1, out);
    fwrite(v.data(), sizeof(T), v.size(), out);
}

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: particles INPUT OUTPUT\n"); return 2; }
    in = fopen(argv[1], "rb");
    if (!in) return 2;
    unsigned stage;
    FountainStep p;
    BasinStep s;
    BodyStep b;
    unsigned header[8];
    read(&stage, 1);
    read(&p, 1);
    read(&s, 1);
    read(&b, 1);
    read(header, 8);
    unsigned n = header[0], emit_count = header[1], substeps = header[4], iterations = header[5];
    auto position = array<float>(), velocity = array<float>(), age = array<float>();
    auto hits = array<unsigned char>();
    auto drops = array<float>(), height = array<float>(), basin_velocity = array<float>();
    auto flags = array<unsigned char>();
    auto inner = array<float>(), outer = array<float>();
    auto previous = array<float>(), force = array<float>();
    auto pinned = array<unsigned char>();
    auto node_start = array<unsigned>(), link_other = array<unsigned>();
    auto link_rest = array<float>(), link_stiffness = array<float>();
    auto triangles = array<unsigned>(), tri_start = array<unsigned>(), tri_list = array<unsigned>();
    auto coloured = array<unsigned>(), colour_start = array<unsigned>();
    auto spring_a = array<unsigned>(), spring_b = array<unsigned>();
    auto spring_rest = array<float>(), spring_stiffness = array<float>();
    auto cell_rest = array<float>();
    auto tag = array<unsigned>();
    auto skin_node = array<unsigned>();
    auto skin_uv = array<float>();
    auto skin_indices = array<unsigned>(), vertex_start = array<unsigned>(), vertex_triangles = array<unsigned>();
    auto scales = array<float>();
    fclose(in);
    std::vector<float> vertices, points, lines;

    std::vector<unsigned> tally = {n, header[6]};
    std::vector<unsigned> order;
    std::vector<double> stats(4, -1.0);
    unsigned nodes = (unsigned)(s.n * s.n);
    // The frame's emission as the kernels read it (stages.rs `fountain_stage`): emit's first
    // index and count; the other stages run over n (no emission).
    EmitStep e = {n, stage == EMIT ? emit_count : 0u, header[2], header[3]};
    switch (stage) {
    case EMIT: {
        unsigned total = n + emit_count;
        position.resize(3 * total); velocity.resize(3 * total); age.resize(total); hits.resize(total); tag.resize(total);
        launch(emit_count, [&] { emit(&p, &e, position.data(), velocity.data(), age.data(), hits.data(), tag.data()); });
        tally[0] = total;
        break;
    }
    case ADVANCE:
        launch(n, [&] { advance(&p, &e, position.data(), velocity.data(), age.data()); });
        break;
    case COLLIDE: {
        unsigned blocks = blocks_of(n, PARTICLES_BLOCK);
        std::vector<unsigned> fate(n), counts(2 * blocks);
        launch_blocks(blocks, PARTICLES_BLOCK, [&] { collide(&p, &e, position.data(), velocity.data(), age.data(), hits.data(), fate.data(), counts.data()); });
        launch_blocks(1, SCAN_THREADS, [&] { collide_scan(blocks, counts.data(), tally.data()); });
        std::vector<float> p2(3 * tally[0]), v2(3 * tally[0]), a2(tally[0]);
        std::vector<unsigned char> h2(tally[0]);
        std::vector<unsigned> t2(tally[0]);
        drops.assign(3 * tally[1], 0.0f);
        launch_blocks(blocks, PARTICLES_BLOCK, [&] { collide_compact(&p, &e, fate.data(), counts.data(), position.data(), velocity.data(), age.data(), hits.data(), tag.data(), p2.data(), v2.data(), a2.data(), h2.data(), t2.data(), drops.data()); });
        position = p2; velocity = v2; age = a2; hits = h2; tag = t2;
        break;
    }
    case BASIN: {
        std::vector<float> accel(nodes);
        tally[1] = (unsigned)(drops.size() / 3);
        launch(nodes, [&] { basin_splash(&s, tally.data(), drops.data(), inner.data(), outer.data(), flags.data(), basin_velocity.data()); });
        for (unsigned k = 0; k < substeps; ++k) {
            launch(nodes, [&] { basin_forces(&s, height.data(), accel.data()); });
            launch(nodes, [&] { basin_integrate(&s, height.data(), basin_velocity.data(), accel.data(), flags.data()); });
        }
        // The frame's end, as end_frame: over the threads the host says (header[7], its
        // reduce_fountain_threads of the nodes and the particle slots: n alive, the slots past
        // them dead); the particles' arrays padded to the threads with finite slots, as the
        // GPU's buffers are the capacity's (only a mutant reads past the alive).
        unsigned threads = header[7], blocks = blocks_of(threads, PARTICLES_BLOCK);
        std::vector<double> partials(3 * blocks);
        std::vector<float> xs(position), vs(velocity);
        xs.resize(3 * blocks * PARTICLES_BLOCK, 0.0f);
        vs.resize(3 * blocks * PARTICLES_BLOCK, 0.0f);
        launch_blocks(blocks, PARTICLES_BLOCK, [&] { reduce_fountain(s, tally.data(), height.data(), xs.data(), vs.data(), partials.data()); });
        launch_blocks(3, PARTICLES_BLOCK, [&] { reduce_finish(partials.data(), blocks, 3u, 2u, stats.data(), 0); });
        break;
    }
    case SORT: {
        // Two tiles past the keys, as a graph's grid over its reach: their histogram entries
        // must be zeros (filled with a sentinel first), and their scatter places nothing.
        unsigned tiles = blocks_of(n, SORT_TILE) + 2;
        std::vector<unsigned> keys(n), keys2(n), order2(n), hist(RADIX * tiles);
        order.resize(n);
        launch(n, [&] { sort_keys(&p, tally.data(), position.data(), keys.data(), order.data()); });
        for (unsigned shift = 0; shift < 32; shift += 8) {
            std::fill(hist.begin(), hist.end(), 0xdeadbeefu);
            launch_blocks(tiles, PARTICLES_BLOCK, [&] { sort_histogram(tally.data(), shift, tiles, keys.data(), hist.data()); });
            launch_blocks(1, SCAN_THREADS, [&] { sort_scan(RADIX * tiles, hist.data()); });
            // A live tile's place past the keys (an idle tile's entry not zero) would scatter
            // out of the arrays: the order all zeros instead, which the CPU's is not.
            bool wild = false;
            for (unsigned d = 0; d < RADIX; ++d)
                for (unsigned t = 0; t < blocks_of(n, SORT_TILE); ++t) wild |= hist[d * tiles + t] > n;
            if (wild) {
                order.assign(n, 0u);
                break;
            }
            launch_blocks(tiles, PARTICLES_BLOCK, [&] { sort_scatter(tally.data(), shift, tiles, keys.data(), order.data(), hist.data(), keys2.data(), order2.data()); });
            std::swap(keys, keys2);
            std::swap(order, order2);
        }
        break;
    }
    case SPRINGS:
        launch(b.nodes, [&] { springs(&b, position.data(), node_start.data(), link_other.data(), link_rest.data(), link_stiffness.data(), force.data()); });
        break;
    case VOLUME: {
        // As body_stage: nothing under XPBD, without cells or at K = 0.
        if (!b.with_springs || b.cells == 0 || !(b.volume_modulus > 0.0f)) break;
        std::vector<float> pressure(b.cells);
        launch(b.cells, [&] { volume(&b, position.data(), cell_rest.data(), pressure.data()); });
        launch(b.nodes, [&] { volume_gather(&b, position.data(), pressure.data(), force.data()); });
        break;
    }
    case WIND: {
        std::vector<float> push(3 * b.triangles);
        launch(b.triangles, [&] { wind(&b, triangles.data(), position.data(), velocity.data(), push.data()); });
        launch(b.nodes, [&] { wind_gather(&b, tri_start.data(), tri_list.data(), push.data(), force.data()); });
        break;
    }
    case INTEGRATE:
        launch(b.nodes, [&] { integrate(&b, position.data(), previous.data(), velocity.data(), force.data(), pinned.data()); });
        break;
    case XPBD: {
        std::vector<float> lambda(spring_a.size(), 0.0f), displacement(3 * b.nodes, 0.0f);
        std::vector<float> cell_lambda(b.cells, 0.0f);
        bool with_volume = b.cells > 0 && b.volume_modulus > 0.0f;
        launch(b.nodes, [&] { xpbd_predict(&b, position.data(), previous.data(), velocity.data(), force.data(), pinned.data(), displacement.data()); });
        for (unsigned it = 0; it < iterations; ++it) {
            for (size_t c = 0; c + 1 < colour_start.size(); ++c) {
                unsigned first = colour_start[c], count = colour_start[c + 1] - first;
                launch(count, [&] { xpbd_solve(&b, first, count, coloured.data(), spring_a.data(), spring_b.data(), spring_rest.data(), spring_stiffness.data(), pinned.data(), lambda.data(), previous.data(), displacement.data()); });
            }
            if (with_volume)
                for (unsigned colour = 0; colour < 8; ++colour)
                    launch(b.cells, [&] { xpbd_volume(&b, colour, cell_rest.data(), pinned.data(), cell_lambda.data(), previous.data(), displacement.data()); });
        }
        launch(b.nodes, [&] { xpbd_velocity(&b, previous.data(), displacement.data(), velocity.data(), position.data()); });
        break;
    }
    case COLLIDE_NODES: {
        launch(b.nodes, [&] { collide_nodes(&b, position.data(), previous.data(), velocity.data(), pinned.data()); });
        unsigned blocks = blocks_of(b.nodes, PARTICLES_BLOCK);
        std::vector<double> partials(NODES_QUANTITIES * blocks);
        stats.assign(2 + NODES_QUANTITIES, -1.0);
        launch_blocks(blocks, PARTICLES_BLOCK, [&] { reduce_nodes(b.nodes, position.data(), partials.data()); });
        launch_blocks(NODES_QUANTITIES, PARTICLES_BLOCK, [&] { reduce_finish(partials.data(), blocks, NODES_QUANTITIES, NODES_MAX_MASK, stats.data(), 2); });
        break;
    }
    case SELF_COLLIDE: {
        // `substeps` substeps of springs, integrate (Verlet), collide_nodes, then self_collide's
        // sequence as src/sims/particles/cuda/self_collide.rs launches it (thickness, friction,
        // the lists' radius and the drift that rebuilds: scales[0..4], the host's SelfStep's;
        // room for header[1] candidates, 32 a node if 0). Out: the lists (first
        // in `tag`, candidates in `order`), the state (SC_*) then each substep's rebuild flag
        // in `tally`.
        unsigned count = b.nodes, buckets = 1;
        while (buckets < 2 * std::max(count, 1u)) buckets *= 2;
        unsigned capacity = header[1] ? header[1] : 32 * count;
        SelfStep c = {count, buckets, capacity, 1u, scales[0], scales[2], scales[3], scales[1], b.dt};
        std::vector<unsigned> bucket(count), start(buckets + 1), fill(buckets), sorted(count), first(count + 1);
        std::vector<unsigned> candidates(std::max(capacity, 1u)), touching(count), state(SC_STATE, 0u);
        std::vector<float> anchor(3 * count), moved(3 * count), changed(3 * count);
        unsigned blocks = blocks_of(count, PARTICLES_BLOCK);
        std::vector<double> partials(3 * blocks), sums(3);
        // The build's scans, as self_collide.rs `scan_chunks`: chunk sums, their scan, the chunks.
        std::vector<unsigned> chunk_sums(blocks_of(buckets + 1, SCAN_THREADS) + 1);
        auto scan = [&](unsigned* data, unsigned values) {
            unsigned chunks = blocks_of(values, SCAN_THREADS);
            launch_blocks(chunks, SCAN_THREADS, [&] { self_collide_chunk_sums(state.data(), values, data, chunk_sums.data()); });
            launch_blocks(1, SCAN_THREADS, [&] { self_collide_scan(state.data(), chunks, chunk_sums.data()); });
            launch_blocks(chunks, SCAN_THREADS, [&] { self_collide_chunk_scan(state.data(), values, data, chunk_sums.data()); });
        };
        std::vector<unsigned> flags;
        for (unsigned step = 0; step < substeps; ++step) {
            launch(b.nodes, [&] { springs(&b, position.data(), node_start.data(), link_other.data(), link_rest.data(), link_stiffness.data(), force.data()); });
            launch(b.nodes, [&] { integrate(&b, position.data(), previous.data(), velocity.data(), force.data(), pinned.data()); });
            launch(b.nodes, [&] { collide_nodes(&b, position.data(), previous.data(), velocity.data(), pinned.data()); });
            c.force = step == 0 ? 1u : 0u;
            launch_blocks(blocks, PARTICLES_BLOCK, [&] { self_collide_drift(&c, position.data(), anchor.data(), partials.data()); });
            launch_blocks(3, PARTICLES_BLOCK, [&] { reduce_finish(partials.data(), blocks, 3u, 0u, sums.data(), 0u); });
            launch_blocks(blocks, PARTICLES_BLOCK, [&] { self_collide_widest(&c, position.data(), anchor.data(), sums.data(), partials.data()); });
            launch_blocks(1, PARTICLES_BLOCK, [&] { self_collide_decide(&c, sums.data(), partials.data(), state.data()); });
            launch(buckets + 1, [&] { self_collide_clear(&c, state.data(), start.data(), fill.data()); });
            launch(count, [&] { self_collide_cells(&c, state.data(), position.data(), bucket.data(), start.data(), anchor.data()); });
            scan(start.data(), buckets + 1);
            launch_reversed(count, [&] { self_collide_scatter(&c, state.data(), bucket.data(), start.data(), fill.data(), sorted.data()); });
            launch(buckets, [&] { self_collide_order(&c, state.data(), start.data(), sorted.data()); });
            launch(count, [&] { self_collide_count(&c, state.data(), position.data(), node_start.data(), link_other.data(), start.data(), sorted.data(), first.data()); });
            scan(first.data(), count + 1);
            launch(count, [&] { self_collide_lists(&c, state.data(), position.data(), node_start.data(), link_other.data(), start.data(), sorted.data(), first.data(), candidates.data()); });
            launch(count, [&] { self_collide_touching(&c, state.data(), position.data(), node_start.data(), link_other.data(), start.data(), sorted.data(), first.data(), candidates.data(), touching.data()); });
            launch(count, [&] { self_collide_gather(&c, state.data(), position.data(), previous.data(), velocity.data(), pinned.data(), node_start.data(), link_other.data(), start.data(), sorted.data(), first.data(), candidates.data(), touching.data(), moved.data(), changed.data()); });
            launch(count, [&] { self_collide_apply(&c, moved.data(), changed.data(), position.data(), previous.data(), velocity.data()); });
            flags.push_back(state[SC_REBUILD]);
        }
        candidates.resize(std::min(first[count], capacity));
        tag = first;
        order = candidates;
        tally = state;
        tally.insert(tally.end(), flags.begin(), flags.end());
        break;
    }
    case BODY_STATS: {
        unsigned count = (unsigned)(position.size() / 3), blocks = blocks_of(count, PARTICLES_BLOCK);
        std::vector<double> partials(BODY_QUANTITIES * blocks);
        launch_blocks(blocks, PARTICLES_BLOCK, [&] { body_stats(count, scales[0], scales[1], scales[2], scales[3], position.data(), velocity.data(), node_start.data(), link_other.data(), link_rest.data(), link_stiffness.data(), header[1], scales.size() > 4 ? scales[4] : 0.0f, cell_rest.data(), partials.data()); });
        stats.assign(BODY_QUANTITIES, 0.0);
        launch_blocks(BODY_QUANTITIES, PARTICLES_BLOCK, [&] { reduce_finish(partials.data(), blocks, BODY_QUANTITIES, 1u << BODY_STRAIN, stats.data(), 0); });
        break;
    }
    case SURFACE: {
        unsigned count = (unsigned)skin_node.size();
        vertices.assign(8 * count, 0.0f);
        launch(count, [&] { surface(count, position.data(), skin_node.data(), skin_uv.data(), skin_indices.data(), vertex_start.data(), vertex_triangles.data(), vertices.data()); });
        break;
    }
    case BODY_POINTS: {
        unsigned springs_count = (unsigned)spring_a.size();
        points.assign(6 * b.nodes, 0.0f);
        lines.assign(12 * springs_count, 0.0f);
        launch(b.nodes + springs_count, [&] { body_points(b.nodes, springs_count, scales[0], scales[1], scales[2], position.data(), velocity.data(), spring_a.data(), spring_b.data(), spring_rest.data(), spring_stiffness.data(), points.data(), lines.data()); });
        break;
    }
    case WATER: {
        unsigned count = (unsigned)height.size(), side = 0;
        while (side * side < count) ++side;
        vertices.assign(6 * count, 0.0f);
        launch(count, [&] { water(side, scales[0], scales[1], scales[2], scales[3], height.data(), vertices.data()); });
        break;
    }
    default:
        fprintf(stderr, "unknown stage %u\n", stage);
        return 2;
    }
    out = fopen(argv[2], "wb");
    if (!out) return 2;
    write(position); write(velocity); write(age); write(hits); write(drops); write(height);
    write(basin_velocity); write(order); write(tally); write(previous); write(force); write(stats);
    write(tag); write(vertices); write(points); write(lines);
    fclose(out);
    return 0;
}
