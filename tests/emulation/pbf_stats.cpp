// The frame statistics' reductions of kernels/pbf.cu (kernels/pbf_stats.cuh) run on the CPU,
// block by block with real barriers (blocks.h); src/sims/pbf/cuda/stats_emulation.rs compares
// them with FrameStats::measure.
//
// usage: pbf_stats INPUT OUTPUT
// INPUT: u32 count, f32 rest density, float4 positions[count], float4 velocities[count],
// f32 densities[count], u32 neighbour counts[count].
// OUTPUT: the 16 reduced quantities (f64), in STATS_* order.
#include "cuda_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim, gridDim;
unsigned __shfl_up_sync(unsigned, unsigned value, int) { return value; }
unsigned __shfl_xor_sync(unsigned, unsigned value, int) { return value; }
#include "pbf.cu"
#include "blocks.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

template <class T> void read(FILE* f, T* data, size_t count) {
    if (fread(data, sizeof(T), count, f) != count) { fprintf(stderr, "short input\n"); std::exit(2); }
}

int main(int argc, char** argv) {
    if (argc != 3) { fprintf(stderr, "usage: pbf_stats INPUT OUTPUT\n"); return 2; }
    FILE* in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 2; }
    unsigned count;
    float rest_density;
    read(in, &count, 1);
    read(in, &rest_density, 1);
    std::vector<float4> positions(count), velocities(count);
    std::vector<float> densities(count);
    std::vector<unsigned> neighbours(count);
    read(in, positions.data(), count);
    read(in, velocities.data(), count);
    read(in, densities.data(), count);
    read(in, neighbours.data(), count);
    fclose(in);
    unsigned blocks = std::max((count + PBF_BLOCK - 1) / PBF_BLOCK, 1u);
    std::vector<double> partials((size_t)STATS_QUANTITIES * blocks), out(STATS_QUANTITIES);
    launch_blocks(blocks, PBF_BLOCK, [&] {
        frame_stats(count, rest_density, positions.data(), velocities.data(), densities.data(), neighbours.data(),
                    partials.data());
    });
    launch_blocks(STATS_QUANTITIES, PBF_BLOCK, [&] { frame_stats_finish(blocks, partials.data(), out.data()); });
    FILE* f = fopen(argv[2], "wb");
    if (!f) { perror(argv[2]); return 2; }
    fwrite(out.data(), sizeof(double), out.size(), f);
    fclose(f);
    return 0;
}
