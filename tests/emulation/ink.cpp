// One stage (or one whole step) of the ink CUDA solver's launch sequence
// (src/sims/ink/cuda/stages.rs) with every kernel of kernels/ink.cu run on the CPU: kernels
// without barriers thread by thread, the block reductions block by block with real barriers
// (blocks.h). src/sims/ink/cuda/emulation.rs writes the input from the CPU solver's state and
// compares the output with what the CPU solver's stage made of the same state.
//
// usage: ink INPUT OUTPUT
// INPUT: InkGrid; u32 [stage, maccormack, iterations, splat count, view, paper, report,
// the picture's signed field (0 p, 1 divergence, 2 curl)];
// f32 [dt, velocity decay, ink decay, lift, epsilon, carry-over, dx², residual weight];
// per splat: u32 lattice (0 u, 1 v, 2 ink) and an InkSplat; the brush stamp's texture
// (STAMP_TEXELS² f32); then u, v, p, the ink's three
// planes, curl, divergence (f32), u_open, v_open, solid, stencil (u8), u_fixed, v_fixed (f32);
// then the multigrid's:
// u32 [multigrid, levels, tail (the first level pressure_mg_tail runs), the tail's threads,
// operation, level, spare, spare], the InkLevel records, the pooled stencil and solid bytes
// (u8) and the pooled p, b, r (f32).
// A step reduces the statistics (the residual, the divergence after, the totals) only with
// `report` (the host: on a frame's last step, and the totals at the frame's end).
// OUTPUT: u, v, p, ink, curl, divergence (f32), the statistics (10 f64: Σ d² before, after,
// Σ r², Σ ink, Σ ½|u|², largest |u|², non-finite faces, largest |scalar|, largest |u|², the
// multigrid's Σ), the pooled p, b, r (f32), then for the picture stage the texels (RGBA8 rows
// from the bottom).
// The multigrid stage (MULTIGRID) runs one operation on the pooled arrays as given: 0 one
// red-black sweep of `level`, 1 its residual, 2 the restriction to level + 1 (its mean removed in
// a closed box), 3 the prolongation from level + 1, 4 pressure_mg_tail from `level`, 5 one
// V-cycle from level 0 (the host's launches down to `tail`, then pressure_mg_tail).
// The walls stage (WALLS) clears the open masks, the stencil and the fixed velocities, runs
// wall_rows over every row from the solid bytes alone (no moving discs), and writes them after
// the pooled arrays: u_open, v_open, stencil (u8), u_fixed, v_fixed (f32).
#include "ink_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim, gridDim;
std::vector<unsigned char> texels;
int texel_width = 0;
#include "ink.cu"
#include "blocks.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <utility>

enum Stage { ADVECT, SPLAT, CURL, VORTICITY, DIVERGENCE, PRESSURE, SUBTRACT_GRADIENT, TOTALS, PICTURE, STEP, MULTIGRID, WALLS };

#define STATS 10
#define MEAN_SLOT 9u

template <class Kernel> void launch(unsigned n, Kernel kernel) {
    unsigned grid = std::max((n + INK_BLOCK - 1) / INK_BLOCK, 1u);
    blockDim = {INK_BLOCK, 1, 1};
    gridDim = {grid, 1, 1};
    for (unsigned t = 0; t < grid * INK_BLOCK; ++t) {
        blockIdx = {t / INK_BLOCK, 0, 0};
        threadIdx = {t % INK_BLOCK, 0, 0};
        kernel();
    }
}

template <class T> void read(FILE* f, T* data, size_t count) {
    if (fread(data, sizeof(T), count, f) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}

struct Lattice { unsigned which; InkSplat s; };

struct State {
    InkGrid g;
    unsigned stage, maccormack, iterations, splats, view, paper, report, scalar_field;
    float dt, velocity_decay, ink_decay, lift, epsilon, carry, dx2, weight;
    std::vector<Lattice> stamps;
    std::vector<float> stamp_texture = std::vector<float>(STAMP_TEXELS * STAMP_TEXELS);
    std::vector<float> u, v, p, ink, curl, divergence, u_next, v_next, p_next, ink_next, u_hat, v_hat, ink_hat;
    std::vector<unsigned char> u_open, v_open, solid, stencil;
    std::vector<float> u_fixed, v_fixed;
    std::vector<double> partials, stats = std::vector<double>(STATS, 0.0);
    // The multigrid (src/sims/ink/cuda/multigrid.rs).
    unsigned multigrid = 0, tail = 0, tail_threads = 1, mg_op = 0, mg_level = 0;
    std::vector<InkLevel> levels;
    std::vector<unsigned char> mg_stencil, mg_solid;
    std::vector<float> mg_p, mg_b, mg_r;

    unsigned cells() const { return (unsigned)(g.nx * g.ny); }
    unsigned ink_cells() const { return (unsigned)(g.ink_nx * g.ink_ny); }
    unsigned faces() const { return (unsigned)((g.nx + 1) * (g.ny + 1)); }
    unsigned blocks(unsigned n) const { return std::max((n + INK_BLOCK - 1) / INK_BLOCK, 1u); }

    void finish(unsigned n, unsigned quantities, unsigned max_mask, unsigned first) {
        unsigned b = blocks(n);
        launch_blocks(quantities, INK_BLOCK, [&] { reduce_finish(partials.data(), b, max_mask, stats.data(), first); });
    }

    void advect() {
        const float *uu = u.data(), *vv = v.data();
        if (!maccormack) {
            launch(faces(), [&] { advect_velocity(g, 0, uu, vv, u_open.data(), v_open.data(), u_next.data(), v_next.data(), dt, velocity_decay); });
            launch(ink_cells(), [&] { advect_ink(g, 0, uu, vv, ink.data(), ink_next.data(), dt, ink_decay); });
        } else {
            launch(faces(), [&] { advect_velocity(g, 1, uu, vv, u_open.data(), v_open.data(), u_hat.data(), v_hat.data(), dt, velocity_decay); });
            launch(ink_cells(), [&] { advect_ink(g, 1, uu, vv, ink.data(), ink_hat.data(), dt, ink_decay); });
            launch(faces(), [&] { advect_velocity_correct(g, uu, vv, u_hat.data(), v_hat.data(), u_open.data(), v_open.data(), u_next.data(), v_next.data(), dt, velocity_decay); });
            launch(ink_cells(), [&] { advect_ink_correct(g, uu, vv, ink.data(), ink_hat.data(), ink_next.data(), dt, ink_decay); });
        }
        std::swap(u, u_next);
        std::swap(v, v_next);
        std::swap(ink, ink_next);
    }

    void splats_and_buoyancy() {
        unsigned n = ink_cells();
        // The records in one array, three a slot (u, v, the ink), each launch reading its slot's
        // (stages.rs upload_splats): here each record in a slot of its own, the slot's other
        // two records empty (as a stamp's lattice with nothing to add is), and one empty slot
        // more (the padding to a power of two), so every branch of the kernel runs.
        std::vector<InkSplat> records(3 * (stamps.size() + 1), InkSplat{});
        unsigned capacity = 1;
        for (unsigned slot = 0; slot < stamps.size(); ++slot) {
            const Lattice& l = stamps[slot];
            records[3 * slot + l.which] = l.s;
            capacity = std::max(capacity, (unsigned)(l.s.width * l.s.rows));
        }
        // A block more than the largest box: the host launches over the largest box of the
        // stamps' radius (InkSplat::capacity), and the threads beyond a box must leave the fields.
        capacity += INK_BLOCK;
        for (unsigned slot = 0; slot <= stamps.size(); ++slot)
            launch(3 * capacity, [&] { splat(records.data(), slot, capacity, u.data(), v.data(), ink.data(), n, u_open.data(), v_open.data(), stamp_texture.data()); });
        if (lift != 0.0f) launch((unsigned)(g.nx * (g.ny + 1)), [&] { splat_buoyancy(g, ink.data(), v_open.data(), v.data(), lift); });
    }

    // With obstacles, the ghost faces mirror the fluid's velocity (stages.rs mirror_ghosts).
    void mirror_ghosts() {
        if (std::find(solid.begin(), solid.end(), 1) != solid.end())
            launch((unsigned)((g.nx + 1) * (g.ny + 1)), [&] { close_walls(g, 0, g.ny, u.data(), v.data(), p.data(), u_open.data(), v_open.data(), solid.data(), u_fixed.data(), v_fixed.data()); });
    }
    void run_curl() {
        mirror_ghosts();
        launch(cells(), [&] { ::curl(g, u.data(), v.data(), this->curl.data()); });
    }

    void run_vorticity() {
        launch(faces(), [&] { vorticity(g, this->curl.data(), u_open.data(), v_open.data(), u.data(), v.data(), dt, epsilon); });
    }

    void run_divergence() {
        launch_blocks(blocks(cells()), INK_BLOCK, [&] { ::divergence(g, u.data(), v.data(), solid.data(), this->divergence.data(), partials.data()); });
        finish(cells(), 1, 0, 0);
    }

    void run_pressure() {
        if (multigrid) {
            run_multigrid();
        } else {
            for (unsigned it = 0; it < iterations; ++it) {
                float scale = it == 0 ? carry : 1.0f;
                launch(cells(), [&] { pressure(g, stencil.data(), this->divergence.data(), p.data(), p_next.data(), scale, dx2); });
                std::swap(p, p_next);
            }
        }
        if (report) {
            launch_blocks(blocks(cells()), INK_BLOCK, [&] { pressure_residual(g, stencil.data(), this->divergence.data(), p.data(), weight, partials.data()); });
            finish(cells(), 1, 0, 2);
        }
    }

    // multigrid.rs `multigrid_pressure`, launch by launch.
    static unsigned level_cells(const InkLevel& l) { return (unsigned)(l.nx * l.ny); }
    bool closed() const { return levels[0].outflow == 0u; }

    void mg_remove_mean(unsigned level, float* values, float* out) {
        const InkLevel& l = levels[level];
        launch_blocks(blocks(level_cells(l)), INK_BLOCK, [&] { pressure_mg_sum(l, mg_solid.data(), values, partials.data()); });
        finish(level_cells(l), 1, 0, MEAN_SLOT);
        launch(level_cells(l), [&] { pressure_mg_remove_mean(levels.data(), (int)level, mg_solid.data(), values, stats.data(), MEAN_SLOT, out); });
    }

    void mg_smooth(const InkLevel& l) {
        unsigned slots = (unsigned)((l.nx + 1) / 2 * l.ny);
        for (int sweep = 0; sweep < INK_MG_SWEEPS; ++sweep)
            for (int colour = 0; colour < 2; ++colour)
                launch(slots, [&] { pressure_mg_smooth(l, mg_stencil.data(), mg_p.data(), mg_b.data(), colour); });
    }

    void mg_residual(const InkLevel& l) {
        launch(level_cells(l), [&] { pressure_mg_residual(l, mg_stencil.data(), mg_p.data(), mg_b.data(), mg_r.data()); });
    }

    void mg_restrict(unsigned l) {
        const InkLevel &fine = levels[l], &coarse = levels[l + 1];
        launch(level_cells(coarse), [&] { pressure_mg_restrict(fine, coarse, mg_solid.data(), mg_r.data(), mg_b.data(), mg_p.data()); });
        if (closed()) mg_remove_mean(l + 1, mg_b.data(), nullptr);
    }

    void mg_prolong(unsigned l) {
        const InkLevel &fine = levels[l], &coarse = levels[l + 1];
        launch(level_cells(fine), [&] { pressure_mg_prolong(coarse, fine, mg_stencil.data(), mg_solid.data(), mg_p.data()); });
    }

    void mg_tail(unsigned first) {
        launch_blocks(1, tail_threads, [&] {
            pressure_mg_tail(levels.data(), (int)first, (int)levels.size(), mg_stencil.data(), mg_solid.data(), mg_p.data(), mg_b.data(), mg_r.data());
        });
    }

    void mg_cycle() {
        for (unsigned l = 0; l < tail; ++l) {
            mg_smooth(levels[l]);
            mg_residual(levels[l]);
            mg_restrict(l);
        }
        mg_tail(tail);
        for (unsigned l = tail; l-- > 0;) {
            mg_prolong(l);
            mg_smooth(levels[l]);
        }
    }

    void run_multigrid() {
        const InkLevel& finest = levels[0];
        launch(cells(), [&] { pressure_mg_load(finest, this->divergence.data(), p.data(), carry, mg_b.data(), mg_p.data()); });
        if (closed()) mg_remove_mean(0, mg_b.data(), nullptr);
        for (unsigned cycle = 0; cycle < iterations; ++cycle) mg_cycle();
        if (closed()) mg_remove_mean(0, mg_p.data(), p.data());
        else std::copy(mg_p.begin(), mg_p.begin() + cells(), p.begin());
    }

    void run_multigrid_operation() {
        switch (mg_op) {
            case 0: {
                const InkLevel& l = levels[mg_level];
                unsigned slots = (unsigned)((l.nx + 1) / 2 * l.ny);
                for (int colour = 0; colour < 2; ++colour)
                    launch(slots, [&] { pressure_mg_smooth(l, mg_stencil.data(), mg_p.data(), mg_b.data(), colour); });
                break;
            }
            case 1: mg_residual(levels[mg_level]); break;
            case 2: mg_restrict(mg_level); break;
            case 3: mg_prolong(mg_level); break;
            case 4: mg_tail(mg_level); break;
            case 5: mg_cycle(); break;
            default: fprintf(stderr, "unknown multigrid operation %u\n", mg_op); std::exit(2);
        }
    }

    void run_subtract_gradient() {
        launch(faces(), [&] { subtract_gradient(g, p.data(), u_open.data(), v_open.data(), u.data(), v.data()); });
        mirror_ghosts();
        if (report) {
            launch_blocks(blocks(cells()), INK_BLOCK, [&] { ::divergence(g, u.data(), v.data(), solid.data(), nullptr, partials.data()); });
            finish(cells(), 1, 0, 1);
        }
    }

    void totals() {
        launch_blocks(blocks(ink_cells()), INK_BLOCK, [&] { reduce_totals(g, u.data(), v.data(), solid.data(), ink.data(), partials.data()); });
        finish(ink_cells(), 4, 4u, 3);
    }

    // Every row's masks, stencil and fixed velocities derived again from the solid cells, as
    // CudaInk::set_walls has wall_rows do for the rows that changed.
    void run_walls() {
        std::fill(u_open.begin(), u_open.end(), 7);
        std::fill(v_open.begin(), v_open.end(), 7);
        std::fill(stencil.begin(), stencil.end(), 255);
        std::fill(u_fixed.begin(), u_fixed.end(), -1e30f);
        std::fill(v_fixed.begin(), v_fixed.end(), -1e30f);
        launch((unsigned)((g.nx + 1) * (g.ny + 1)), [&] { wall_rows(g, 0, g.ny, 0, g.ny, solid.data(), nullptr, 0, u_open.data(), v_open.data(), stencil.data(), u_fixed.data(), v_fixed.data()); });
    }

    void run_picture() {
        // The divergence and curl views: of this state, into the Jacobi scratch (picture.rs).
        if (view == VIEW_SIGNED && scalar_field == 1)
            launch_blocks(blocks(cells()), INK_BLOCK, [&] { ::divergence(g, u.data(), v.data(), solid.data(), p_next.data(), partials.data()); });
        if (view == VIEW_SIGNED && scalar_field == 2) launch(cells(), [&] { ::curl(g, u.data(), v.data(), p_next.data()); });
        const float* scalar = view == VIEW_SIGNED ? (scalar_field == 0 ? p.data() : p_next.data()) : nullptr;
        launch_blocks(blocks(cells()), INK_BLOCK, [&] { picture_scale(g, u.data(), v.data(), scalar, partials.data()); });
        finish(cells(), 2, 3u, 7);
        int width = view == VIEW_INK ? g.ink_nx : view == VIEW_SIDE_BY_SIDE ? 2 * g.ink_nx : g.nx;
        int height = view == VIEW_INK || view == VIEW_SIDE_BY_SIDE ? g.ink_ny : g.ny;
        texel_width = width;
        texels.assign((size_t)width * height * 4, 0);
        launch((unsigned)(width * height), [&] { picture(g, (int)view, (int)paper, u.data(), v.data(), ink.data(), solid.data(), scalar, stats.data(), 7, 8, 0, width, height); });
    }
};

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: ink INPUT OUTPUT\n"); return 2; }
    FILE* in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 2; }
    State s;
    read(in, &s.g, 1);
    unsigned header[8];
    read(in, header, 8);
    s.stage = header[0]; s.maccormack = header[1]; s.iterations = header[2]; s.splats = header[3];
    s.view = header[4]; s.paper = header[5]; s.report = header[6]; s.scalar_field = header[7];
    float scalars[8];
    read(in, scalars, 8);
    s.dt = scalars[0]; s.velocity_decay = scalars[1]; s.ink_decay = scalars[2]; s.lift = scalars[3];
    s.epsilon = scalars[4]; s.carry = scalars[5]; s.dx2 = scalars[6]; s.weight = scalars[7];
    s.stamps.resize(s.splats);
    for (auto& l : s.stamps) { read(in, &l.which, 1); read(in, &l.s, 1); }
    read(in, s.stamp_texture.data(), s.stamp_texture.size());
    const InkGrid& g = s.g;
    size_t nu = (size_t)(g.nx + 1) * g.ny, nv = (size_t)g.nx * (g.ny + 1), nc = (size_t)g.nx * g.ny, ni = 3 * (size_t)g.ink_nx * g.ink_ny;
    s.u.resize(nu); s.v.resize(nv); s.p.resize(nc); s.ink.resize(ni); s.curl.resize(nc); s.divergence.resize(nc);
    read(in, s.u.data(), nu); read(in, s.v.data(), nv); read(in, s.p.data(), nc); read(in, s.ink.data(), ni);
    read(in, s.curl.data(), nc); read(in, s.divergence.data(), nc);
    s.u_open.resize(nu); s.v_open.resize(nv); s.solid.resize(nc); s.stencil.resize(nc);
    read(in, s.u_open.data(), nu); read(in, s.v_open.data(), nv); read(in, s.solid.data(), nc); read(in, s.stencil.data(), nc);
    s.u_fixed.resize(nu); s.v_fixed.resize(nv);
    read(in, s.u_fixed.data(), nu); read(in, s.v_fixed.data(), nv);
    unsigned mg[8];
    read(in, mg, 8);
    s.multigrid = mg[0]; s.tail = mg[2]; s.tail_threads = mg[3]; s.mg_op = mg[4]; s.mg_level = mg[5];
    s.levels.resize(mg[1]);
    read(in, s.levels.data(), s.levels.size());
    size_t pooled = 0;
    for (const InkLevel& l : s.levels) pooled += (size_t)l.nx * l.ny;
    s.mg_stencil.resize(pooled); s.mg_solid.resize(pooled); s.mg_p.resize(pooled); s.mg_b.resize(pooled); s.mg_r.resize(pooled);
    read(in, s.mg_stencil.data(), pooled); read(in, s.mg_solid.data(), pooled);
    read(in, s.mg_p.data(), pooled); read(in, s.mg_b.data(), pooled); read(in, s.mg_r.data(), pooled);
    fclose(in);
    s.u_next.assign(nu, 0.0f); s.v_next.assign(nv, 0.0f); s.p_next.assign(nc, 0.0f); s.ink_next.assign(ni, 0.0f);
    s.u_hat.assign(nu, 0.0f); s.v_hat.assign(nv, 0.0f); s.ink_hat.assign(ni, 0.0f);
    s.partials.assign(4 * (size_t)s.blocks(s.ink_cells()), 0.0);

    switch (s.stage) {
        case ADVECT: s.advect(); break;
        case SPLAT: s.splats_and_buoyancy(); break;
        case CURL: s.run_curl(); break;
        case VORTICITY: s.run_vorticity(); break;
        case DIVERGENCE: s.run_divergence(); break;
        case PRESSURE: s.run_pressure(); break;
        case SUBTRACT_GRADIENT: s.run_subtract_gradient(); break;
        case TOTALS: s.totals(); break;
        case PICTURE: s.run_picture(); break;
        case MULTIGRID: s.run_multigrid_operation(); break;
        case WALLS: s.run_walls(); break;
        case STEP:
            s.advect();
            s.splats_and_buoyancy();
            if (s.epsilon > 0.0f) { s.run_curl(); s.run_vorticity(); }
            s.run_divergence();
            s.run_pressure();
            s.run_subtract_gradient();
            if (s.report) s.totals();
            break;
        default: fprintf(stderr, "unknown stage %u\n", s.stage); return 2;
    }

    FILE* out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 2; }
    fwrite(s.u.data(), 4, nu, out); fwrite(s.v.data(), 4, nv, out); fwrite(s.p.data(), 4, nc, out);
    fwrite(s.ink.data(), 4, ni, out); fwrite(s.curl.data(), 4, nc, out); fwrite(s.divergence.data(), 4, nc, out);
    fwrite(s.stats.data(), 8, STATS, out);
    fwrite(s.mg_p.data(), 4, pooled, out); fwrite(s.mg_b.data(), 4, pooled, out); fwrite(s.mg_r.data(), 4, pooled, out);
    if (s.stage == PICTURE) fwrite(texels.data(), 1, texels.size(), out);
    if (s.stage == WALLS) {
        fwrite(s.u_open.data(), 1, nu, out); fwrite(s.v_open.data(), 1, nv, out); fwrite(s.stencil.data(), 1, nc, out);
        fwrite(s.u_fixed.data(), 4, nu, out); fwrite(s.v_fixed.data(), 4, nv, out);
    }
    fclose(out);
    return 0;
}
