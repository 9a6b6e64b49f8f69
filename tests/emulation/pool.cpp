// One stage (or one whole frame, the statistics, the texels) of the pool CUDA solver's launch
// sequence (src/sims/pool/cuda/stages.rs) with every kernel of kernels/pool.cu run on the CPU:
// kernels without barriers thread by thread, the block reductions block by block with real
// barriers (blocks.h). src/sims/pool/cuda/emulation.rs writes the input from the CPU solver's
// state and compares the output with what the CPU solver made of the same state.
//
// usage: pool INPUT OUTPUT
// INPUT: PoolGrid; u32 [work (enum Work; the frame without statistics: the emulation's frames
// before the last), drop count, has centre, substeps]; f32 [centre x, z];
// per drop: PoolDrop, u32 target (0 height, 1 velocity), u32 weight count, its f32 weights;
// then height, velocity, accel (N² f32), offset, velocity_h, accel_h (2·N² f32), flags (N² u8).
// OUTPUT: height, velocity, accel, offset, velocity_h, accel_h, the statistics (6 f64), then
// for the texels work the texels (N² RGBA32F).
#include "pool_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim, gridDim;
std::vector<float> texels;
int texel_width = 0;
#include "pool.cu"
#include "blocks.h"

#include <cstdio>
#include <cstdlib>

enum Work { DISTURB, FORCES, INTEGRATE, EDGES, STATS, FRAME, TEXELS, SETTLE, FRAME_WITHOUT_STATS };

template <class Kernel> void launch(unsigned n, Kernel kernel) {
    unsigned grid = std::max((n + POOL_BLOCK - 1) / POOL_BLOCK, 1u);
    blockDim = {POOL_BLOCK, 1, 1};
    gridDim = {grid, 1, 1};
    for (unsigned t = 0; t < grid * POOL_BLOCK; ++t) {
        blockIdx = {t / POOL_BLOCK, 0, 0};
        threadIdx = {t % POOL_BLOCK, 0, 0};
        kernel();
    }
}

template <class T> void read(FILE* f, T* data, size_t count) {
    if (fread(data, sizeof(T), count, f) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}

struct DropWork { PoolDrop d; unsigned target; std::vector<float> weights; };

struct State {
    PoolGrid g;
    unsigned work, drop_count, has_centre, substeps;
    float cx, cz;
    std::vector<DropWork> drops;
    std::vector<float> height, velocity, accel, next;
    std::vector<float2> offset, velocity_h, accel_h;
    std::vector<unsigned char> flags;
    std::vector<double> partials, stats = std::vector<double>(6, 0.0);

    unsigned nodes() const { return (unsigned)(g.n * g.n); }
    unsigned blocks(unsigned n) const { return std::max((n + POOL_BLOCK - 1) / POOL_BLOCK, 1u); }

    void finish(unsigned n, unsigned quantities, unsigned max_mask, unsigned first) {
        unsigned b = blocks(n);
        launch_blocks(quantities, POOL_BLOCK, [&] { reduce_finish(partials.data(), b, max_mask, stats.data(), first); });
    }

    void run_disturb() {
        for (const DropWork& w : drops) {
            float* field = w.target == TARGET_HEIGHT ? height.data() : velocity.data();
            if (w.d.width * w.d.rows == 0) continue;
            launch((unsigned)(w.d.width * w.d.rows), [&] { disturb(w.d, w.weights.data(), flags.data(), field); });
        }
    }
    void run_forces() { launch(nodes(), [&] { forces(g, height.data(), offset.data(), accel.data(), accel_h.data()); }); }
    void run_integrate() {
        launch(nodes(), [&] {
            integrate(g, flags.data(), accel.data(), accel_h.data(), height.data(), velocity.data(), offset.data(), velocity_h.data());
        });
    }
    void run_edges() {
        if (!(flags[0] & OPEN) && !(flags[g.n / 2] & OPEN)) return;
        unsigned e = (unsigned)(4 * (g.n - 1));
        launch(e, [&] { edges(g, flags.data(), height.data(), velocity.data(), next.data()); });
        launch(e, [&] { edges_apply(g, flags.data(), next.data(), height.data(), velocity.data()); });
    }
    void run_stats() {
        launch_blocks(blocks(nodes()), POOL_BLOCK, [&] {
            stats_partials(g, height.data(), velocity.data(), offset.data(), velocity_h.data(), partials.data());
        });
        finish(nodes(), 5, 1u << SLOT_MAX_HEIGHT, 0);
        if (has_centre) {
            launch_blocks(blocks(nodes()), POOL_BLOCK, [&] { stats_front(g, height.data(), stats.data(), cx, cz, partials.data()); });
            finish(nodes(), 1, 1u, SLOT_FRONT);
        }
    }
    void run_texels() {
        texel_width = g.n;
        texels.assign((size_t)nodes() * 4, 0.0f);
        launch(nodes(), [&] { surface_texels(g, height.data(), offset.data(), flags.data(), 0); });
    }
    void run_settle() {
        launch(nodes(), [&] { settle_flags(g, flags.data(), height.data(), velocity.data(), offset.data(), velocity_h.data()); });
    }
};

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: pool INPUT OUTPUT\n"); return 2; }
    FILE* in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 2; }
    State s;
    read(in, &s.g, 1);
    unsigned header[4];
    read(in, header, 4);
    s.work = header[0]; s.drop_count = header[1]; s.has_centre = header[2]; s.substeps = header[3];
    float centre[2];
    read(in, centre, 2);
    s.cx = centre[0]; s.cz = centre[1];
    s.drops.resize(s.drop_count);
    for (auto& w : s.drops) {
        read(in, &w.d, 1);
        read(in, &w.target, 1);
        unsigned count;
        read(in, &count, 1);
        w.weights.resize(count);
        read(in, w.weights.data(), count);
    }
    size_t n = s.nodes();
    s.height.resize(n); s.velocity.resize(n); s.accel.resize(n);
    s.offset.resize(n); s.velocity_h.resize(n); s.accel_h.resize(n); s.flags.resize(n);
    read(in, s.height.data(), n); read(in, s.velocity.data(), n); read(in, s.accel.data(), n);
    read(in, s.offset.data(), n); read(in, s.velocity_h.data(), n); read(in, s.accel_h.data(), n);
    read(in, s.flags.data(), n);
    fclose(in);
    s.next.assign(4 * (size_t)(s.g.n - 1), 0.0f);
    s.partials.assign(5 * (size_t)s.blocks(s.nodes()), 0.0);

    switch (s.work) {
        case DISTURB: s.run_disturb(); break;
        case FORCES: s.run_forces(); break;
        case INTEGRATE: s.run_integrate(); break;
        case EDGES: s.run_edges(); break;
        case STATS: s.run_stats(); break;
        case FRAME:
        case FRAME_WITHOUT_STATS:
            s.run_disturb();
            for (unsigned k = 0; k < s.substeps; ++k) { s.run_forces(); s.run_integrate(); s.run_edges(); }
            if (s.work == FRAME) s.run_stats();
            break;
        case TEXELS: s.run_texels(); break;
        case SETTLE: s.run_settle(); break;
        default: fprintf(stderr, "unknown work %u\n", s.work); return 2;
    }

    FILE* out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 2; }
    fwrite(s.height.data(), 4, n, out); fwrite(s.velocity.data(), 4, n, out); fwrite(s.accel.data(), 4, n, out);
    fwrite(s.offset.data(), 8, n, out); fwrite(s.velocity_h.data(), 8, n, out); fwrite(s.accel_h.data(), 8, n, out);
    fwrite(s.stats.data(), 8, 6, out);
    if (s.work == TEXELS) fwrite(texels.data(), 4, texels.size(), out);
    fclose(out);
    return 0;
}
