// One frame of the CUDA solver's launch sequence (src/sim/cuda/mod.rs, `substep`) with every
// kernel of kernels/pbf.cu run on the CPU, thread by thread. The cell scan runs on the host
// (scan_blocks needs a real block; scan_test.cpp checks it). With `reverse`, threads run last
// to first, so the counting sort fills every cell in reverse: the neighbour sums run in another
// order, as on a GPU whose atomics are not ordered. With `random=SEED`, every launch runs its
// threads in a random order (a permutation drawn from SEED), as a GPU's scheduler may.
// find_non_finite runs warp by warp, a context per lane (warps.h): its shuffles need real lanes.
//
// usage: frame INPUT OUTPUT [reverse | random=SEED]
// INPUT: PbfParams, u32 obstacle count, iterations, substeps, vorticity on, xsph on, the
// obstacles, then float4 positions and velocities in id order. OUTPUT: u32 non-finite flag, u32
// largest speed (float bits), then by id: float4 positions, float4 velocities, f32 densities, u32 neighbour counts.
#include "cuda_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim;
unsigned __shfl_up_sync(unsigned, unsigned value, int) { return value; }
void __syncthreads() {}
#include "pbf.cu"
#include "warps.h"

#include <cstdio>
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

template <class T> void read(FILE* f, T* data, size_t count) {
    if (fread(data, sizeof(T), count, f) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}

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
    unsigned header[5];
    read(in, header, 5);
    unsigned obstacle_count = header[0], iterations = header[1], substeps = header[2];
    bool vorticity = header[3], xsph_on = header[4];
    std::vector<PbfObstacle> obstacles(obstacle_count + 1);
    read(in, obstacles.data(), obstacle_count);
    unsigned n = p.particle_count;
    std::vector<float4> x(n), v(n), xp(n), x2(n), xp2(n), v2(n), omega(n), grid(n);
    read(in, x.data(), n);
    read(in, v.data(), n);
    fclose(in);
    std::vector<unsigned> ids(n), ids2(n), cell_of(n), rank(n), neighbors(n);
    for (unsigned i = 0; i < n; ++i) ids[i] = i;
    std::vector<float> lambdas(n), densities(n);
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
        for (unsigned it = 0; it < iterations; ++it) {
            launch(n, [&] {
                compute_lambda(p, xp.data(), ids.data(), start.data(), grid.data(), lambdas.data(), densities.data(),
                               it == 0 ? neighbors.data() : nullptr);
            });
            launch(n, [&] { apply_delta(p, obstacles.data(), xp.data(), ids.data(), lambdas.data(), start.data(), grid.data(), xp2.data()); });
            std::swap(xp, xp2);
        }
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
    fwrite(out_x.data(), 16, n, out);
    fwrite(out_v.data(), 16, n, out);
    fwrite(out_density.data(), 4, n, out);
    fwrite(out_neighbors.data(), 4, n, out);
    return fclose(out) == 0 ? 0 : 2;
}
