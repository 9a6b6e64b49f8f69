// Warps with real lanes on one OS thread, for kernels that shuffle (find_non_finite):
// launch_warps runs a launch's warps one after another, each as 32 user-level contexts (one per
// lane, ucontext), switched round-robin. __shfl_xor_sync publishes the lane's value and yields;
// once every lane has published, each reads its partner's and yields again before the slots are
// reused. Like the full-mask shuffles it emulates, this needs every lane of the warp to reach
// every shuffle (no lane may return early). Include after cuda_shim.h and pbf.cu.
#pragma once
#include <functional>
#include <ucontext.h>
#include <vector>

namespace warps {
inline ucontext_t scheduler, lanes[32];
inline bool finished[32];
inline unsigned current, values[32];
inline const std::function<void()>* kernel;

inline void yield() { swapcontext(&lanes[current], &scheduler); }

inline void lane_entry() {
    (*kernel)();
    finished[current] = true;  // returning resumes `scheduler` (uc_link)
}
}  // namespace warps

unsigned __shfl_xor_sync(unsigned, unsigned value, int lane_mask) {
    unsigned lane = warps::current;
    warps::values[lane] = value;
    warps::yield();
    unsigned result = warps::values[lane ^ (unsigned)lane_mask];
    warps::yield();
    return result;
}

template <class Kernel> void launch_warps(unsigned n, unsigned block, Kernel body) {
    blockDim = {block, 1, 1};
    unsigned warp_count = std::max((n + block - 1) / block, 1u) * block / 32;
    std::function<void()> function = body;
    warps::kernel = &function;
    std::vector<char> stacks(32 * 65536);
    for (unsigned warp = 0; warp < warp_count; ++warp) {
        for (unsigned lane = 0; lane < 32; ++lane) {
            getcontext(&warps::lanes[lane]);
            warps::lanes[lane].uc_stack.ss_sp = stacks.data() + lane * 65536;
            warps::lanes[lane].uc_stack.ss_size = 65536;
            warps::lanes[lane].uc_link = &warps::scheduler;
            makecontext(&warps::lanes[lane], warps::lane_entry, 0);
            warps::finished[lane] = false;
        }
        // Each sweep runs every unfinished lane up to its next yield (or its end).
        for (bool running = true; running;) {
            running = false;
            for (unsigned lane = 0; lane < 32; ++lane) {
                if (warps::finished[lane]) continue;
                unsigned t = warp * 32 + lane;
                blockIdx = {t / block, 0, 0};
                threadIdx = {t % block, 0, 0};
                warps::current = lane;
                swapcontext(&warps::scheduler, &warps::lanes[lane]);
                running = true;
            }
        }
    }
}
