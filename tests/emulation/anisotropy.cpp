// The `anisotropy` kernel of kernels/pbf.cu (kernels/anisotropy.cuh) run on the CPU, thread by
// thread (src/sims/pbf/cuda/anisotropy_emulation.rs compares it with the CPU stage).
//
// usage: anisotropy INPUT OUTPUT
// INPUT: PbfParams, f32 particle radius, u32 cell count, u32 cell_start[cells + 1], float4
// sorted positions (also the grid's positions).
// OUTPUT: float4 records, three per sorted particle.
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

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: anisotropy INPUT OUTPUT\n"); return 2; }
    FILE* in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 2; }
    PbfParams p;
    read(in, &p, 1);
    float particle_radius;
    read(in, &particle_radius, 1);
    unsigned cells;
    read(in, &cells, 1);
    std::vector<unsigned> cell_start(cells + 1);
    read(in, cell_start.data(), cell_start.size());
    std::vector<float4> positions(p.particle_count);
    read(in, positions.data(), positions.size());
    fclose(in);
    std::vector<float4> out(3 * (size_t)p.particle_count);
    blockDim = {PBF_BLOCK, 1, 1};
    unsigned threads = (p.particle_count + PBF_BLOCK - 1) / PBF_BLOCK * PBF_BLOCK;
    for (unsigned t = 0; t < threads; ++t) {
        blockIdx = {t / PBF_BLOCK, 0, 0};
        threadIdx = {t % PBF_BLOCK, 0, 0};
        anisotropy(p, positions.data(), cell_start.data(), positions.data(), particle_radius, out.data());
    }
    FILE* f = fopen(argv[2], "wb");
    if (!f) { perror(argv[2]); return 2; }
    fwrite(out.data(), sizeof(float4), out.size(), f);
    fclose(f);
    return 0;
}
