// scan_blocks and add_block_offsets from kernels/pbf.cu, run with one OS thread per CUDA thread,
// real barriers for __syncthreads and per-warp barriers for __shfl_up_sync, through the levels
// of the host's multi-level scan (src/sims/pbf/cuda/stages.rs, `build_grid`). Prints one line per size
// and exits non-zero on a wrong scan or uncleared counts.
#include "cuda_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim;
#include <barrier>
static std::barrier<>* block_barrier;
static std::barrier<>* warp_barriers[32];
static unsigned lanes[32][32];
unsigned __shfl_up_sync(unsigned, unsigned value, int offset) {
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    lanes[warp][lane] = value;
    warp_barriers[warp]->arrive_and_wait();
    unsigned result = lane >= (unsigned)offset ? lanes[warp][lane - offset] : value;
    warp_barriers[warp]->arrive_and_wait();
    return result;
}
unsigned __shfl_xor_sync(unsigned, unsigned value, int lane_mask) {
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    lanes[warp][lane] = value;
    warp_barriers[warp]->arrive_and_wait();
    unsigned result = lanes[warp][lane ^ (unsigned)lane_mask];
    warp_barriers[warp]->arrive_and_wait();
    return result;
}
void __syncthreads() { block_barrier->arrive_and_wait(); }
#include "pbf.cu"

#include <cstdio>
#include <random>
#include <thread>
#include <vector>

static void scan_level(unsigned* input, unsigned* output, unsigned* sums, unsigned n, int clear) {
    unsigned blocks = (n + SCAN_ITEMS_PER_BLOCK - 1) / SCAN_ITEMS_PER_BLOCK;
    blockDim = {SCAN_THREADS, 1, 1};
    for (unsigned b = 0; b < blocks; ++b) {
        std::barrier<> block(SCAN_THREADS);
        block_barrier = &block;
        std::vector<std::barrier<>*> warps;
        for (unsigned w = 0; w < SCAN_THREADS / 32; ++w) warps.push_back(warp_barriers[w] = new std::barrier<>(32));
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < SCAN_THREADS; ++t)
            threads.emplace_back([=] { blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0}; scan_blocks(input, output, sums, n, clear); });
        for (auto& t : threads) t.join();
        for (auto* w : warps) delete w;
    }
}

static void add_offsets(unsigned* data, const unsigned* offsets, unsigned n) {
    blockDim = {PBF_BLOCK, 1, 1};
    for (unsigned t = 0; t < n; ++t) {
        blockIdx = {t / PBF_BLOCK, 0, 0};
        threadIdx = {t % PBF_BLOCK, 0, 0};
        add_block_offsets(data, offsets, n);
    }
}

int main() {
    std::mt19937 random(7);
    bool all_ok = true;
    for (unsigned n : {1u, 5u, 2048u, 2049u, 5000u, 70001u}) {
        std::vector<unsigned> levels{n};
        while (levels.back() > SCAN_ITEMS_PER_BLOCK) levels.push_back((levels.back() + SCAN_ITEMS_PER_BLOCK - 1) / SCAN_ITEMS_PER_BLOCK);
        std::vector<unsigned> counts(n), start(n), expected(n);
        unsigned total = 0;
        for (unsigned i = 0; i < n; ++i) {
            counts[i] = random() % 5 == 0 ? random() % 40 : 0;
            expected[i] = total;
            total += counts[i];
        }
        std::vector<std::vector<unsigned>> sums;
        for (size_t l = 1; l < levels.size(); ++l) sums.emplace_back(levels[l]);
        for (size_t l = 0; l < levels.size(); ++l) {
            unsigned* data = l == 0 ? start.data() : sums[l - 1].data();
            scan_level(l == 0 ? counts.data() : data, data, l + 1 < levels.size() ? sums[l].data() : nullptr, levels[l], l == 0);
        }
        for (size_t l = levels.size() - 1; l-- > 0;) add_offsets(l == 0 ? start.data() : sums[l - 1].data(), sums[l].data(), levels[l]);
        bool scanned = start == expected;
        bool cleared = std::all_of(counts.begin(), counts.end(), [](unsigned c) { return c == 0; });
        printf("%u values, %zu levels: scan %s, counts %s\n", n, levels.size(), scanned ? "ok" : "WRONG", cleared ? "cleared" : "NOT CLEARED");
        all_ok = all_ok && scanned && cleared;
    }
    return all_ok ? 0 : 1;
}
