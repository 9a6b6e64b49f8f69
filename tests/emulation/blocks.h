// Blocks with real barriers on one OS thread, for kernels that call __syncthreads (ink.cu's
// block reductions): launch_blocks runs a launch's blocks one after another, each as one
// user-level context per thread (ucontext), switched round-robin. __syncthreads yields; one
// sweep over the threads runs each to its next barrier (or its end), so every thread has reached
// a barrier before any passes it. Like the barriers it emulates, this needs every thread of the
// block to reach every __syncthreads (none may return early). Include after the kernels.
#pragma once
#include <functional>
#include <ucontext.h>
#include <vector>

namespace blocks {
inline ucontext_t scheduler;
inline std::vector<ucontext_t> threads;
inline std::vector<char> finished;
inline unsigned current;
inline const std::function<void()>* kernel;

inline void thread_entry() {
    (*kernel)();
    finished[current] = 1;  // returning resumes `scheduler` (uc_link)
}
}  // namespace blocks

void __syncthreads() { swapcontext(&blocks::threads[blocks::current], &blocks::scheduler); }

template <class Kernel> void launch_blocks(unsigned grid, unsigned block, Kernel body) {
    blockDim = {block, 1, 1};
    gridDim = {grid, 1, 1};
    std::function<void()> function = body;
    blocks::kernel = &function;
    const size_t stack = 32768;
    static std::vector<char> stacks;
    stacks.resize(block * stack);
    blocks::threads.resize(block);
    blocks::finished.assign(block, 0);
    for (unsigned b = 0; b < grid; ++b) {
        for (unsigned t = 0; t < block; ++t) {
            getcontext(&blocks::threads[t]);
            blocks::threads[t].uc_stack.ss_sp = stacks.data() + t * stack;
            blocks::threads[t].uc_stack.ss_size = stack;
            blocks::threads[t].uc_link = &blocks::scheduler;
            makecontext(&blocks::threads[t], blocks::thread_entry, 0);
            blocks::finished[t] = 0;
        }
        for (bool running = true; running;) {
            running = false;
            for (unsigned t = 0; t < block; ++t) {
                if (blocks::finished[t]) continue;
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                blocks::current = t;
                swapcontext(&blocks::scheduler, &blocks::threads[t]);
                running = true;
            }
        }
    }
}
