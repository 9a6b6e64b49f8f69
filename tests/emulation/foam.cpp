// The `foam` kernels of kernels/pbf.cu (kernels/foam.cuh) run on the CPU, thread by thread, over
// several frames' fluid states, with the pool kept between them as the CUDA solver keeps it
// (src/sims/pbf/cuda/foam_emulation.rs compares it with the CPU stage). The two exclusive scans
// are done here on the host: they are pbf.cu's scan_blocks, checked on its own (scan_test.cpp).
//
// usage: foam INPUT OUTPUT
// INPUT: PbfParams, FoamParams (its step unused), PbfObstacle obstacles[PbfParams::obstacle_count],
// u32 frames, u32 cells, u32 alive, float4 pool[2 alive]; then per frame: u32 step_lo, u32 step_hi, u32 cell_start[cells + 1], float4
// positions[n], float4 velocities[n], float4 grid_positions[n], u32 ids[n] (n =
// PbfParams::particle_count), u32 reload and, if reload is 1, u32 alive (at most the capacity)
// and float4 pool[2 alive] replacing the pool before the frame's stage.
// OUTPUT: per frame float4 raw[n] ([I_ta, κ, I_k, count]), u32 state[FOAM_STATE_WORDS] and
// float4 pool[2 alive]; then float4 records[alive] of the last frame.
#include "cuda_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim;
unsigned __shfl_up_sync(unsigned, unsigned value, int) { return value; }
unsigned __shfl_xor_sync(unsigned, unsigned value, int) { return value; }
void __syncthreads() {}
#include "pbf.cu"

#include <cstdio>
#include <cstdlib>
#include <vector>

template <class T> void read(FILE* f, T* data, size_t count) {
    if (fread(data, sizeof(T), count, f) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}

template <class Kernel> void launch(unsigned count, Kernel kernel) {
    blockDim = {PBF_BLOCK, 1, 1};
    unsigned threads = (count + PBF_BLOCK - 1) / PBF_BLOCK * PBF_BLOCK;
    for (unsigned t = 0; t < threads; ++t) {
        blockIdx = {t / PBF_BLOCK, 0, 0};
        threadIdx = {t % PBF_BLOCK, 0, 0};
        kernel();
    }
}

void exclusive_scan(std::vector<unsigned>& values) {
    unsigned total = 0;
    for (unsigned& v : values) {
        unsigned value = v;
        v = total;
        total += value;
    }
}

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: foam INPUT OUTPUT\n"); return 2; }
    FILE* in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 2; }
    PbfParams p;
    read(in, &p, 1);
    FoamParams f;
    read(in, &f, 1);
    std::vector<PbfObstacle> obstacles(p.obstacle_count + 1);
    read(in, obstacles.data(), p.obstacle_count);
    unsigned frames, cells, alive;
    read(in, &frames, 1);
    read(in, &cells, 1);
    read(in, &alive, 1);
    unsigned n = p.particle_count, cap = f.capacity;
    std::vector<float4> pool(2 * (size_t)cap + 2), next(2 * (size_t)cap + 2);
    read(in, pool.data(), 2 * (size_t)alive);
    std::vector<unsigned> state(FOAM_STATE_WORDS, 0u), cell_start(cells + 1), counts(n + 1), slots(cap + 1);
    state[FOAM_ALIVE] = alive;
    std::vector<float4> positions(n), velocities(n), grid_positions(n), normals(n), raw(n);
    std::vector<unsigned> ids(n);
    FILE* out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 2; }
    for (unsigned frame = 0; frame < frames; ++frame) {
        read(in, &f.step_lo, 1);
        read(in, &f.step_hi, 1);
        read(in, cell_start.data(), cell_start.size());
        read(in, positions.data(), n);
        read(in, velocities.data(), n);
        read(in, grid_positions.data(), n);
        read(in, ids.data(), n);
        unsigned reload;
        read(in, &reload, 1);
        if (reload == 1u) {
            read(in, &alive, 1);
            if (alive > cap) { fprintf(stderr, "pool over the capacity\n"); return 2; }
            read(in, pool.data(), 2 * (size_t)alive);
            state[FOAM_ALIVE] = alive;
        }
        launch(n, [&] { foam_normals(p, positions.data(), cell_start.data(), grid_positions.data(), normals.data(), state.data()); });
        launch(n, [&] {
            foam_potentials(p, f, positions.data(), velocities.data(), ids.data(), cell_start.data(),
                            grid_positions.data(), normals.data(), counts.data(), raw.data());
        });
        launch(cap + 1, [&] {
            foam_advect(p, f, obstacles.data(), positions.data(), velocities.data(), cell_start.data(), state.data(), pool.data(), slots.data());
        });
        exclusive_scan(slots);
        launch(cap, [&] { foam_compact(f, slots.data(), pool.data(), next.data()); });
        exclusive_scan(counts);
        launch(n, [&] {
            foam_emit(p, f, positions.data(), velocities.data(), ids.data(), counts.data(), slots.data(), next.data());
        });
        launch(1, [&] { foam_finish(f, n, slots.data(), counts.data(), state.data()); });
        launch(cap, [&] { foam_count(f, next.data(), state.data()); });
        std::swap(pool, next);
        fwrite(raw.data(), sizeof(float4), n, out);
        fwrite(state.data(), sizeof(unsigned), state.size(), out);
        fwrite(pool.data(), sizeof(float4), 2 * (size_t)state[FOAM_ALIVE], out);
    }
    fclose(in);
    alive = state[FOAM_ALIVE];
    std::vector<float4> records(alive);
    launch(alive, [&] { foam_records(alive, pool.data(), records.data()); });
    fwrite(records.data(), sizeof(float4), alive, out);
    fclose(out);
    return 0;
}
