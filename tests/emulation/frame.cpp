// One frame of the CUDA solver's launch sequence (src/sims/pbf/cuda/stages.rs, `substep`) with every
// kernel of kernels/pbf.cu run on the CPU, thread by thread. The cell scan runs on the host
// (scan_blocks needs a real block; scan_test.cpp checks it). With `reverse`, threads run last
// to first, so the counting sort fills every cell in reverse: the neighbour sums run in another
// order, as on a GPU whose atomics are not ordered. With `random=SEED`, every launch runs its
// threads in a random order (a permutation drawn from SEED), as a GPU's scheduler may.
// find_non_finite runs warp by warp, a context per lane (warps.h): its shuffles need real lanes.
//
// The constraint iterations follow the host's `constraint_iterations`: a fixed count, or the
// density-error rule (check_density_error's flag makes later kernels of the step no-ops), with
// the coarse-grid correction (src/sims/pbf/cuda/coarse.rs, `GpuCoarse::run`) after the first
// compute_lambda. mg_tail runs with one thread: its barriers then hold trivially.
//
// usage: frame INPUT OUTPUT [reverse | random=SEED]
// INPUT: PbfParams, u32 header [obstacle count, substeps, vorticity on, xsph on, coarse
// correction on, fewest iterations, most iterations, tolerance (float bits, negative: a fixed
// count), CG iterations warm and cold, level count, tail level], the obstacles, the CoarseLevels,
// the solid flags of level 0 (u8, padded to 4 bytes), then float4 positions and velocities in id order.
// OUTPUT: u32 non-finite flag, u32 largest speed (float bits), u32 iterations of the frame, u32
// mean compression of the last measured compute_lambda (float bits), then by id: float4
// positions, float4 velocities, f32 densities, u32 neighbour counts.
#include "cuda_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim;
unsigned __shfl_up_sync(unsigned, unsigned value, int) { return value; }
void __syncthreads() {}
#include "pbf.cu"
#include "warps.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

enum class Order { forward, reverse, random };
static Order order = Order::forward;
static std::mt19937 shuffle_random;

template <class Kernel> void launch(unsigned n, Kernel kernel) {
    blockDim = {PBF_BLOCK, 1, 1};
    unsigned threads = std::max((n + PBF_BLOCK - 1) / PBF_BLOCK, 1u) * PBF_BLOCK;
    std::vector<unsigned> sequence(threads);
    std::iota(sequence.begin(), sequence.end(), 0u);
    if (order == Order::reverse) std::reverse(sequence.begin(), sequence.end());
    if (order == Order::random) std::shuffle(sequence.begin(), sequence.end(), shuffle_random);
    for (unsigned t : sequence) {
        blockIdx = {t / PBF_BLOCK, 0, 0};
        threadIdx = {t % PBF_BLOCK, 0, 0};
        kernel();
    }
}

template <class F> void one_thread_call(F f) {
    blockDim = {1, 1, 1}; blockIdx = {0, 0, 0}; threadIdx = {0, 0, 0};
    f();
}

template <class T> void read(FILE* f, T* data, size_t count) {
    if (fread(data, sizeof(T), count, f) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}


// The coarse-grid correction's arrays (GpuCoarse) and its launch sequence.
struct Coarse {
    std::vector<CoarseLevel> levels;
    int tail = 0, cg_iterations = 2, cg_iterations_cold = 8;
    std::vector<unsigned char> solid, kinds;
    std::vector<float> volume, fractions, mean, rhs, phi, x, b, r, residual, residual_previous, direction, product, faces[3];
    std::vector<double> scalars = std::vector<double>(8);
    unsigned any_air = 0;
    float last_dt = 0.0f;  // on the device: coarse_prepare reads it, coarse_apply writes it
    bool solved = false;

    void allocate(const PbfParams& p) {
        unsigned n = levels[0].cells;
        size_t pooled = 0;
        for (auto& l : levels) pooled += l.cells;
        kinds.assign(pooled, 0); x.assign(pooled, 0.0f); b.assign(pooled, 0.0f); r.assign(pooled, 0.0f);
        for (auto* v : {&volume, &fractions, &mean, &rhs, &phi, &residual, &residual_previous, &direction, &product}) v->assign(n, 0.0f);
        for (int axis = 0; axis < 3; ++axis) {
            size_t count = 1;
            int dims[3] = {p.grid_dims_x, p.grid_dims_y, p.grid_dims_z};
            dims[axis] += 1;
            count = (size_t)dims[0] * dims[1] * dims[2];
            faces[axis].assign(count, 0.0f);
        }
    }

    void smooth(int l) {
        CoarseLevel level = levels[l];
        for (int sweep = 0; sweep < MG_SMOOTHING_SWEEPS; ++sweep)
            for (int colour = 0; colour < 2; ++colour)
                launch(level.cells, [&] { mg_smooth(level, kinds.data(), fractions.data(), x.data(), b.data(), colour); });
    }

    void precondition() {
        unsigned n = levels[0].cells;
        launch(n, [&] { mg_load(n, residual.data(), b.data(), x.data()); });
        for (int l = 0; l < tail; ++l) {
            smooth(l);
            CoarseLevel level = levels[l], coarse = levels[l + 1];
            launch(level.cells, [&] { mg_residual(level, kinds.data(), fractions.data(), x.data(), b.data(), r.data()); });
            launch(coarse.cells, [&] { mg_restrict(level, coarse, kinds.data(), r.data(), b.data(), x.data()); });
        }
        blockDim = {1, 1, 1};
        blockIdx = {0, 0, 0};
        threadIdx = {0, 0, 0};
        mg_tail(levels.data(), tail, (int)levels.size(), kinds.data(), fractions.data(), x.data(), b.data(), r.data());
        for (int l = tail - 1; l >= 0; --l) {
            CoarseLevel coarse = levels[l + 1], fine = levels[l];
            launch(fine.cells, [&] { mg_prolongate(coarse, fine, kinds.data(), x.data()); });
            smooth(l);
        }
    }

    void one_thread(std::function<void()> f) {
        blockDim = {1, 1, 1}; blockIdx = {0, 0, 0}; threadIdx = {0, 0, 0};
        f();
    }

    void run(const PbfParams& p, const PbfObstacle* obstacles, float4* predicted, const float* densities,
             const unsigned* cell_start) {
        CoarseLevel level0 = levels[0];
        unsigned n = level0.cells;
        any_air = 0;
        launch(n, [&] { coarse_gather(p, predicted, densities, cell_start, volume.data(), mean.data()); });
        launch(n, [&] { coarse_classify(p, solid.data(), volume.data(), kinds.data(), fractions.data(), &any_air); });
        int iterations = solved ? cg_iterations : cg_iterations_cold;
        solved = true;
        launch(n, [&] { coarse_prepare(p, kinds.data(), volume.data(), mean.data(), &any_air, &last_dt, rhs.data(), phi.data()); });
        for (size_t l = 1; l < levels.size(); ++l) {
            CoarseLevel fine = levels[l - 1], coarse = levels[l];
            launch(coarse.cells, [&] { mg_coarsen(fine, coarse, kinds.data()); });
        }
        std::fill(scalars.begin(), scalars.end(), 0.0);
        launch(n, [&] { pcg_operator(level0, kinds.data(), fractions.data(), phi.data(), rhs.data(), residual.data()); });
        precondition();
        launch(n, [&] { pcg_dot(n, residual.data(), x.data(), nullptr, scalars.data(), PCG_RZ_NEXT); });
        one_thread([&] { pcg_scalars(scalars.data(), 2); });
        launch(n, [&] { pcg_direction(n, scalars.data(), x.data(), direction.data()); });
        for (int iteration = 0; iteration <= iterations; ++iteration) {
            launch(n, [&] { pcg_operator(level0, kinds.data(), fractions.data(), direction.data(), nullptr, product.data()); });
            launch(n, [&] { pcg_dot(n, direction.data(), product.data(), nullptr, scalars.data(), PCG_PQ); });
            one_thread([&] { pcg_scalars(scalars.data(), 0); });
            launch(n, [&] {
                pcg_step(n, scalars.data(), direction.data(), product.data(), phi.data(), residual.data(),
                         residual_previous.data());
            });
            if (iteration == iterations) break;
            precondition();
            launch(n, [&] { pcg_dot(n, x.data(), residual.data(), residual_previous.data(), scalars.data(), PCG_ZDR); });
            launch(n, [&] { pcg_dot(n, residual.data(), x.data(), nullptr, scalars.data(), PCG_RZ_NEXT); });
            one_thread([&] { pcg_scalars(scalars.data(), 1); });
            launch(n, [&] { pcg_direction(n, scalars.data(), x.data(), direction.data()); });
        }
        size_t total = faces[0].size() + faces[1].size() + faces[2].size();
        launch((unsigned)total, [&] { coarse_faces(p, kinds.data(), fractions.data(), phi.data(), faces[0].data(), faces[1].data(), faces[2].data()); });
        launch(p.particle_count, [&] { coarse_apply(p, obstacles, faces[0].data(), faces[1].data(), faces[2].data(), predicted, &last_dt); });
    }
};

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    if (argc > 3) {
        std::string mode = argv[3];
        if (mode == "reverse") {
            order = Order::reverse;
        } else if (mode.rfind("random=", 0) == 0) {
            order = Order::random;
            shuffle_random.seed(std::stoul(mode.substr(7)));
        } else {
            fprintf(stderr, "unknown order %s\n", argv[3]);
            return 2;
        }
    }
    FILE* in = fopen(argv[1], "rb");
    if (!in) return 2;
    PbfParams p;
    read(in, &p, 1);
    unsigned header[12];
    read(in, header, 12);
    unsigned obstacle_count = header[0], substeps = header[1];
    bool vorticity = header[2], xsph_on = header[3], coarse_on = header[4];
    unsigned fewest = header[5], most = header[6];
    float tolerance;
    std::memcpy(&tolerance, &header[7], 4);
    std::vector<PbfObstacle> obstacles(obstacle_count + 1);
    read(in, obstacles.data(), obstacle_count);
    Coarse coarse;
    coarse.cg_iterations = (int)header[8];
    coarse.cg_iterations_cold = (int)header[9];
    coarse.levels.resize(header[10]);
    coarse.tail = (int)header[11];
    read(in, coarse.levels.data(), coarse.levels.size());
    coarse.solid.resize((coarse.levels[0].cells + 3) / 4 * 4);
    read(in, coarse.solid.data(), coarse.solid.size());
    coarse.allocate(p);
    unsigned n = p.particle_count;
    std::vector<float4> x(n), v(n), xp(n), x2(n), xp2(n), v2(n), omega(n), grid(n);
    read(in, x.data(), n);
    read(in, v.data(), n);
    fclose(in);
    std::vector<unsigned> ids(n), ids2(n), cell_of(n), rank(n), neighbors(n);
    for (unsigned i = 0; i < n; ++i) ids[i] = i;
    std::vector<float> lambdas(n), densities(n);
    std::vector<float4> walls(n);
    double compression = 0.0;
    unsigned solve_state[3] = {0, 0, 0}, frame_iterations = 0;
    size_t cells = (size_t)p.grid_dims_x * p.grid_dims_y * p.grid_dims_z;
    std::vector<unsigned> counts(cells + 1), start(cells + 1);

    for (unsigned s = 0; s < substeps; ++s) {
        launch(n, [&] { predict_positions(p, obstacles.data(), x.data(), v.data(), xp.data()); });
        launch(n, [&] { compute_cell_ids(p, xp.data(), cell_of.data(), rank.data(), counts.data()); });
        unsigned total = 0;
        for (size_t c = 0; c <= cells; ++c) { start[c] = total; total += counts[c]; counts[c] = 0; }
        launch(n, [&] {
            reorder_particles(p, cell_of.data(), rank.data(), start.data(), x.data(), xp.data(), v.data(), ids.data(),
                              x2.data(), xp2.data(), v2.data(), ids2.data(), grid.data());
        });
        std::swap(x, x2); std::swap(xp, xp2); std::swap(v, v2); std::swap(ids, ids2);
        bool fixed = tolerance < 0.0f;
        if (!fixed) { solve_state[0] = solve_state[1] = 0; compression = 0.0; }
        for (unsigned it = 0; it < most; ++it) {
            bool measure = !fixed || (s + 1 == substeps && it + 1 == most);
            const unsigned* guard = fixed ? nullptr : solve_state;
            launch(n, [&] { boundary_density(p, obstacles.data(), xp.data(), walls.data(), guard); });
            launch(n, [&] {
                compute_lambda(p, xp.data(), ids.data(), start.data(), grid.data(), walls.data(), lambdas.data(),
                               densities.data(), it == 0 ? neighbors.data() : nullptr,
                               measure ? &compression : nullptr, guard);
            });
            if (measure) one_thread_call([&] { check_density_error(p, &compression, solve_state, fixed ? -1.0f : tolerance, it, fewest); });
            if (it == 0 && coarse_on) coarse.run(p, obstacles.data(), xp.data(), densities.data(), start.data());
            const float4* evaluated_at = (it == 0 && coarse_on) ? grid.data() : xp.data();
            launch(n, [&] {
                apply_delta(p, obstacles.data(), xp.data(), evaluated_at, ids.data(), lambdas.data(), walls.data(),
                            start.data(), grid.data(), xp2.data(), fixed ? nullptr : solve_state);
            });
            std::swap(xp, xp2);
            if (!fixed && solve_state[0]) break;
        }
        frame_iterations += fixed ? most : solve_state[1];
        launch(n, [&] { update_velocity(p, x.data(), xp.data(), v.data()); });
        if (vorticity) {
            launch(n, [&] { vorticity_curl(p, xp.data(), v.data(), start.data(), grid.data(), omega.data()); });
            launch(n, [&] { vorticity_confinement(p, xp.data(), omega.data(), start.data(), grid.data(), v.data()); });
        }
        if (xsph_on) {
            launch(n, [&] { xsph(p, xp.data(), v.data(), start.data(), grid.data(), v2.data()); });
            std::swap(v, v2);
        }
        std::swap(x, xp);
    }
    unsigned frame_check[2] = {0, 0};
    launch_warps(n, PBF_BLOCK, [&] { find_non_finite(n, x.data(), v.data(), ids.data(), frame_check); });

    std::vector<float4> out_x(n), out_v(n);
    std::vector<float> out_density(n);
    std::vector<unsigned> out_neighbors(n);
    for (unsigned k = 0; k < n; ++k) {
        out_x[ids[k]] = x[k]; out_v[ids[k]] = v[k];
        out_density[ids[k]] = densities[k]; out_neighbors[ids[k]] = neighbors[k];
    }
    FILE* out = fopen(argv[2], "wb");
    if (!out) return 2;
    fwrite(frame_check, 4, 2, out);
    fwrite(&frame_iterations, 4, 1, out);
    fwrite(&solve_state[2], 4, 1, out);
    fwrite(out_x.data(), 16, n, out);
    fwrite(out_v.data(), 16, n, out);
    fwrite(out_density.data(), 4, n, out);
    fwrite(out_neighbors.data(), 4, n, out);
    return fclose(out) == 0 ? 0 : 2;
}
