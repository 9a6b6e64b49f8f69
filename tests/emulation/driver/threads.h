// How the emulated driver runs a launch's threads on one OS thread (driver/kernels.cpp).
//
// A kernel without barriers or shuffles runs thread by thread, straight through. A
// "cooperative" kernel (one that reaches __syncthreads or a warp shuffle; the table the test
// harness generates says which) runs block by block, each thread a user-level context
// with its own stack, switched only where the thread waits:
//   - __syncthreads: the thread waits until every thread of the block waits at the same
//     __syncthreads;
//   - a shuffle: the thread publishes its value and waits until every lane of its warp has
//     published, reads its partner's, and waits again before the slots are reused.
// A block where this cannot go on (a barrier some threads returned before or wait at another
// one, a shuffle some lanes of the warp never reach or returned before) is what
// compute-sanitizer's synccheck reports on a GPU: the process stops with a message saying which. Atomics are plain read-modify-writes, exact
// because only one thread runs at any time.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/mman.h>
#include <ucontext.h>
#include <utility>
#include <vector>

namespace threads {

// The kernel being run, for messages.
inline const char* kernel_name = "";

[[noreturn]] inline void fail(const std::string& what) {
    std::fprintf(stderr, "emulated CUDA driver: kernel `%s`: %s\n", kernel_name, what.c_str());
    std::fflush(stderr);
    std::abort();
}

// A user-level context: a stack and the registers to resume it with. On x86-64 the switch
// saves and restores the callee-saved registers only (no signal mask: swapcontext's system call
// on every switch made cooperative kernels 20× slower); elsewhere ucontext.
#if defined(__x86_64__)
extern "C" void fluidlab_switch_stack(void** save, void* to);
asm(R"(
    .text
    .globl fluidlab_switch_stack
    .hidden fluidlab_switch_stack
    .type fluidlab_switch_stack, @function
fluidlab_switch_stack:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size fluidlab_switch_stack, .-fluidlab_switch_stack
)");
struct Context {
    void* sp = nullptr;
    const void* bottom = nullptr;  // the stack, for AddressSanitizer
    size_t size = 0;
};
// Makes `context` start `function` (which must never return) on `stack` at its first switch.
inline void prepare(Context& context, char* stack, size_t bytes, void (*function)()) {
    context.bottom = stack;
    context.size = bytes;
    auto top = reinterpret_cast<uintptr_t>(stack + bytes) & ~uintptr_t{15};
    auto** frame = reinterpret_cast<void**>(top - 16);  // 16-aligned: as after a call, once popped
    frame[0] = reinterpret_cast<void*>(function);
    frame[1] = nullptr;
    frame -= 6;  // the six callee-saved registers, zero
    for (int i = 0; i < 6; ++i) frame[i] = nullptr;
    context.sp = frame;
}
inline void raw_switch(Context& from, Context& to) { fluidlab_switch_stack(&from.sp, to.sp); }
#else
struct Context {
    ucontext_t context;
    const void* bottom = nullptr;
    size_t size = 0;
};
inline void prepare(Context& c, char* stack, size_t bytes, void (*function)()) {
    c.bottom = stack;
    c.size = bytes;
    getcontext(&c.context);
    c.context.uc_stack.ss_sp = stack;
    c.context.uc_stack.ss_size = bytes;
    c.context.uc_link = nullptr;
    makecontext(&c.context, function, 0);
}
inline void raw_switch(Context& from, Context& to) { swapcontext(&from.context, &to.context); }
#endif

// Under AddressSanitizer (the emulated driver's memcheck build) every switch is announced, so
// it knows which stack runs; a stack is unpoisoned before it is reused and once a launch is
// over.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
inline void switch_context(Context& from, Context& to, bool exiting = false) {
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(exiting ? nullptr : &fake_stack, to.bottom, to.size);
    raw_switch(from, to);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}
// In a thread's first moments: learns the stack it was switched from (the scheduler's).
inline void entered(Context& from) { __sanitizer_finish_switch_fiber(nullptr, &from.bottom, &from.size); }
inline void unpoison(char* stack, size_t bytes) { ASAN_UNPOISON_MEMORY_REGION(stack, bytes); }
#else
inline void switch_context(Context& from, Context& to, bool = false) { raw_switch(from, to); }
inline void entered(Context&) {}
inline void unpoison(char*, size_t) {}
#endif

enum State : unsigned char { ready, at_barrier, at_warp, done };

inline bool cooperative = false;   // the launch runs as contexts (else straight through)
inline unsigned block_size = 0;    // threads per block
inline unsigned current = 0;       // the running thread's linear index in its block
inline Context scheduler;
inline std::vector<Context> contexts;
inline std::vector<State> states;
inline std::vector<unsigned long long> slots;  // the lanes' published shuffle values
struct Site { const char* file; int line; };
inline bool operator!=(Site a, Site b) { return a.line != b.line || std::strcmp(a.file, b.file) != 0; }
inline std::vector<Site> sites;                // the __syncthreads each waiting thread called
inline char* stacks = nullptr;  // each thread's stack, below a page that faults on overflow
inline size_t stack_slots = 0;
inline const std::function<void()>* body = nullptr;
constexpr size_t stack_bytes = 64 * 1024, guard_bytes = 4096;

inline char* stack_of(unsigned t) { return stacks + t * (stack_bytes + guard_bytes) + guard_bytes; }

inline void ensure_stacks(unsigned count) {
    if (count <= stack_slots) return;
    size_t slot = stack_bytes + guard_bytes;
    if (stacks) munmap(stacks, stack_slots * slot);
    void* region = mmap(nullptr, count * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) fail("no memory for the threads' stacks");
    stacks = static_cast<char*>(region);
    stack_slots = count;
    for (unsigned t = 0; t < count; ++t) mprotect(stacks + t * slot, guard_bytes, PROT_NONE);
}

inline void set_indices(unsigned block_linear, unsigned t) {
    unsigned gx = gridDim.x, gy = gridDim.y;
    blockIdx = {block_linear % gx, block_linear / gx % gy, block_linear / (gx * gy)};
    unsigned bx = blockDim.x, by = blockDim.y;
    threadIdx = {t % bx, t / bx % by, t / (bx * by)};
}

inline void wait(State state) {
    states[current] = state;
    switch_context(contexts[current], scheduler);
}

[[noreturn]] inline void entry() {
    entered(scheduler);
    (*body)();
    states[current] = done;
    switch_context(contexts[current], scheduler, true);
    fail("a returned thread was resumed");
}

// Releases whatever can go on once no thread is ready; false when the block is finished.
inline bool release() {
    bool released = false;
    for (unsigned warp = 0; warp * 32 < block_size; ++warp) {
        unsigned first = warp * 32, end = std::min(block_size, first + 32);
        unsigned waiting = 0, returned = 0;
        for (unsigned t = first; t < end; ++t) {
            waiting += states[t] == at_warp;
            returned += states[t] == done;
        }
        if (waiting == 0) continue;
        if (waiting + returned < end - first)
            fail("a shuffle that some lanes of warp " + std::to_string(warp) +
                 " never reach (they wait at __syncthreads)");
        if (returned != 0)
            fail("a shuffle in warp " + std::to_string(warp) + " after " + std::to_string(returned) +
                 " of its lanes returned");
        for (unsigned t = first + 1; t < end; ++t)
            if (sites[t] != sites[first])
                fail("lanes of warp " + std::to_string(warp) + " shuffle at different places (" + sites[first].file +
                     ":" + std::to_string(sites[first].line) + " and " + sites[t].file + ":" +
                     std::to_string(sites[t].line) + ")");
        for (unsigned t = first; t < end; ++t) states[t] = ready;
        released = true;
    }
    if (released) return true;
    unsigned barrier = 0, returned = 0;
    Site site{"", 0};
    for (unsigned t = 0; t < block_size; ++t) {
        if (states[t] == done) ++returned;
        if (states[t] != at_barrier) continue;
        if (barrier++ == 0) site = sites[t];
        if (sites[t] != site)
            fail("threads of one block wait at different __syncthreads (" + std::string(site.file) + ":" +
                 std::to_string(site.line) + " and " + sites[t].file + ":" + std::to_string(sites[t].line) + ")");
    }
    if (barrier == 0) return false;
    if (returned != 0)
        fail("a __syncthreads that " + std::to_string(returned) + " of the block's " + std::to_string(block_size) +
             " threads never reach: they returned before it");
    for (State& s : states)
        if (s == at_barrier) s = ready;
    return true;
}

// Called at the start of each block of a cooperative kernel (kernels.cpp: fills the module's
// shared memory with 0xff).
inline void (*block_start)() = nullptr;

// The launch's order (FLUIDLAB_EMULATED_ORDER), read once:
//   unset or "forward": blocks first to last, and each block's threads from the first;
//   "reverse": blocks last to first, and (kernels without barriers or shuffles) threads too:
//     atomics then hand out slots in the other order, as a GPU's unordered scheduling may;
//   "random:SEED" ("random": seed 1): a permutation per launch, drawn from the seed and the
//     launch's number (the same run, the same orders): kernels without barriers or shuffles run
//     the grid's threads in one random order, blocks interleaved as on a GPU where they run
//     at once; kernels with them run their blocks in a random order, and at every barrier or
//     shuffle resume the block's waiting threads in a random order.
// A result that depends on the order (a block reading what another block of the launch writes,
// an atomic's slot read as if in order) then changes with the seed. What needs threads running
// at once does not show: every write is seen at once and a thread runs to its next barrier or
// shuffle alone, so a missing __threadfence (a "last block" test) or a read-modify-write race
// without atomics gives the right result in every order; only the review and a GPU catch those.
enum class Order { forward, reverse, random };
struct OrderSetting {
    Order order = Order::forward;
    unsigned long long seed = 0;
};
inline OrderSetting parse_order(const char* text) {
    OrderSetting s;
    if (text == nullptr || *text == 0 || std::strcmp(text, "forward") == 0) return s;
    if (std::strcmp(text, "reverse") == 0) {
        s.order = Order::reverse;
        return s;
    }
    if (std::strncmp(text, "random", 6) == 0 && (text[6] == 0 || text[6] == ':')) {
        s.order = Order::random;
        s.seed = 1;
        if (text[6] == 0) return s;
        char* end = nullptr;
        const char* digits = text + 7;
        if (*digits >= '0' && *digits <= '9') {
            s.seed = std::strtoull(digits, &end, 10);
            if (end != nullptr && *end == 0) return s;
        }
    }
    std::fprintf(stderr,
                 "emulated CUDA driver: FLUIDLAB_EMULATED_ORDER=%s: expected forward, reverse, random or "
                 "random:SEED (SEED a decimal integer)\n",
                 text);
    std::fflush(stderr);
    std::abort();
}
inline const OrderSetting& order_setting() {
    static const OrderSetting setting = parse_order(std::getenv("FLUIDLAB_EMULATED_ORDER"));
    return setting;
}

// splitmix64: the permutations' random numbers.
struct Random {
    unsigned long long state;
    unsigned long long next() {
        unsigned long long z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // 0 ..= bound − 1 (bound ≥ 1; the modulo's bias is irrelevant here).
    unsigned below(unsigned bound) { return (unsigned)(next() % bound); }
};
inline Random random_order{0};  // this launch's, seeded in run()

// 0 .. count − 1 in a random order (Fisher–Yates) into `out`.
inline void permutation(std::vector<unsigned>& out, unsigned count) {
    out.resize(count);
    for (unsigned i = 0; i < count; ++i) out[i] = i;
    for (unsigned i = count; i > 1; --i) std::swap(out[i - 1], out[random_order.below(i)]);
}

inline std::vector<unsigned> resume_order;  // a random-order block's threads, per round

inline void run_block(unsigned block_linear) {
    if (block_start) block_start();
    for (unsigned t = 0; t < block_size; ++t) {
        unpoison(stack_of(t), stack_bytes);
        prepare(contexts[t], stack_of(t), stack_bytes, entry);
        states[t] = ready;
    }
    bool shuffled = order_setting().order == Order::random;
    do {
        if (shuffled) permutation(resume_order, block_size);
        for (unsigned u = 0; u < block_size; ++u) {
            unsigned t = shuffled ? resume_order[u] : u;
            if (states[t] != ready) continue;
            set_indices(block_linear, t);
            current = t;
            switch_context(scheduler, contexts[t]);
        }
    } while (release());
}

// Runs `kernel` (a closure over its arguments) over the launch shape in blockDim and gridDim,
// in the order order_setting() says.
inline unsigned long long launches = 0;  // launches run so far (random order's per-launch seed)

template <class Kernel> void run(Kernel kernel, bool is_cooperative) {
    unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    block_size = blockDim.x * blockDim.y * blockDim.z;
    cooperative = is_cooperative && block_size > 1;
    const OrderSetting& setting = order_setting();
    random_order.state = setting.seed * 0xd1342543de82ef95ull + ++launches;
    bool reverse = setting.order == Order::reverse, random = setting.order == Order::random;
    auto nth = [reverse](unsigned i, unsigned count) { return reverse ? count - 1 - i : i; };
    static std::vector<unsigned> order;
    if (!cooperative) {
        if (random) {
            permutation(order, blocks * block_size);
            for (unsigned linear : order) {
                unsigned b = linear / block_size, t = linear % block_size;
                set_indices(b, t);
                current = t;
                kernel();
            }
            return;
        }
        for (unsigned b = 0; b < blocks; ++b)
            for (unsigned t = 0; t < block_size; ++t) {
                set_indices(nth(b, blocks), nth(t, block_size));
                current = nth(t, block_size);
                kernel();
            }
        return;
    }
    std::function<void()> function = kernel;
    body = &function;
    contexts.resize(block_size);
    states.assign(block_size, ready);
    slots.assign(block_size, 0);
    sites.assign(block_size, Site{"", 0});
    ensure_stacks(block_size);
    if (random) permutation(order, blocks);
    for (unsigned b = 0; b < blocks; ++b) run_block(random ? order[b] : nth(b, blocks));
    // Each thread's first frame (entry) never returned: its redzones would stay poisoned, and
    // whatever is mapped there after the stacks are replaced (ensure_stacks) would be reported
    // on wrongly (Mesa's LLVM JIT copying code there once was).
    for (unsigned t = 0; t < block_size; ++t) unpoison(stack_of(t), stack_bytes);
    cooperative = false;
}

inline void barrier(Site site) {
    if (cooperative) {
        sites[current] = site;
        return wait(at_barrier);
    }
    if (block_size > 1)
        fail("__syncthreads in a kernel the table marks as running thread by thread "
             "(the test harness's scan of kernels/ missed it)");
}

// A full-warp shuffle: lane `current % 32` publishes `value`, gets lane `source(lane)`'s (its
// own where the source is outside the warp or the block).
template <class T, class Source> T shuffle(Site site, T value, Source source) {
    if (!cooperative) {
        if (block_size > 1)
            fail("a warp shuffle in a kernel the table marks as running thread by thread "
                 "(the test harness's scan of kernels/ missed it)");
        return value;
    }
    static_assert(sizeof(T) <= sizeof(unsigned long long));
    unsigned lane = current % 32, first = current - lane;
    std::memcpy(&slots[current], &value, sizeof(T));
    sites[current] = site;
    wait(at_warp);
    int from = source((int)lane);
    T result = value;
    if (from >= 0 && from < 32 && first + from < block_size) std::memcpy(&result, &slots[first + from], sizeof(T));
    wait(at_warp);  // (the same site: every lane read before any slot is reused)
    return result;
}

}  // namespace threads

// Each __syncthreads by its place in the source, so threads waiting at different ones are told
// apart however the compiler duplicates the call.
#define __syncthreads() ::threads::barrier(::threads::Site{__FILE__, __LINE__})
// Likewise each shuffle: lanes exchanging values at different shuffles stop the launch.
namespace threads {
template <class T> T shuffle_up(Site site, T value, int delta) {
    return shuffle(site, value, [&](int lane) { return lane - delta; });
}
template <class T> T shuffle_down(Site site, T value, int delta) {
    return shuffle(site, value, [&](int lane) { return lane + delta; });
}
template <class T> T shuffle_xor(Site site, T value, int lane_mask) {
    return shuffle(site, value, [&](int lane) { return lane ^ lane_mask; });
}
}  // namespace threads
#define __shfl_up_sync(mask, value, delta) ::threads::shuffle_up(::threads::Site{__FILE__, __LINE__}, value, delta)
#define __shfl_down_sync(mask, value, delta) ::threads::shuffle_down(::threads::Site{__FILE__, __LINE__}, value, delta)
#define __shfl_xor_sync(mask, value, lane_mask) \
    ::threads::shuffle_xor(::threads::Site{__FILE__, __LINE__}, value, lane_mask)
