// One kernels/<module>.cu compiled as plain C++ for the emulated driver (driver.cpp): built by
// tests/support/emulated_driver.rs as libfluidlab_kernels_<module>.so with
//   -DMODULE_SOURCE='"<module>.cu"' -DMODULE_TABLE='"<generated table>"'
// The table lists the module's kernels, `KERNEL(name, cooperative, most threads, restrict mask)`,
// where cooperative says the kernel reaches __syncthreads or a shuffle (threads.h), most threads
// is its __launch_bounds__ (as written, evaluated here; 1024 without), and bit k of the mask says
// its parameter k is declared __restrict__ (a launch giving such a parameter the address of
// another, one of them written, is refused: launches.cpp). Unlike the stage emulations
// (tests/emulation/*.cpp), no <KIND>_EMULATION switch is set: the kernels compile as nvcc sees
// them, warp shuffles, block barriers and surface writes included.
#include "../cuda_builtins.h"
#include "interface.h"
#include "threads.h"

// Shared memory: every __shared__ array of the module in one section, filled with 0xff bytes
// (NaN floats, 0xffffffff integers) at the start of each block of a cooperative kernel (one that
// reaches a barrier or a shuffle: the kernels whose threads share what they write there), so a
// read of shared memory the block never wrote shows, as compute-sanitizer's initcheck would
// report it (a GPU's holds whatever was there before). The linker brackets the section with __start_/__stop_ symbols (weak: a
// module without shared memory has neither).
#undef __shared__
#define __shared__ static __attribute__((section("fluidlab_shared")))
extern "C" char __start_fluidlab_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_fluidlab_shared[] __attribute__((weak, visibility("hidden")));

// Through a volatile pointer, 8 bytes at a time (the section is 32-byte aligned): no memset call
// for AddressSanitizer to intercept.
__attribute__((no_sanitize_address)) static void poison_shared() {
    char* p = __start_fluidlab_shared;
    for (; p + 8 <= __stop_fluidlab_shared; p += 8) *reinterpret_cast<volatile unsigned long long*>(p) = ~0ull;
    for (; p < __stop_fluidlab_shared; ++p) *reinterpret_cast<volatile char*>(p) = (char)0xff;
}

#include <tuple>
#include <type_traits>
#include <utility>

thread_local Dim blockIdx, threadIdx;
Dim blockDim, gridDim;

typedef unsigned long long cudaSurfaceObject_t;

// A surface write at byte column `x_bytes`, row `y`; out of range traps, as CUDA's default
// boundary mode does.
template <class T> void surf2Dwrite(T value, cudaSurfaceObject_t surface, int x_bytes, int y) {
    auto* s = reinterpret_cast<const EmulatedSurface*>(surface);
    if (s == nullptr) threads::fail("surf2Dwrite on a null surface");
    if (!s->live) threads::fail("surf2Dwrite on a surface whose array is gone (a GL texture unmapped)");
    if (sizeof(T) != s->element_bytes)
        threads::fail("surf2Dwrite of " + std::to_string(sizeof(T)) + "-byte texels into a surface of " +
                      std::to_string(s->element_bytes) + "-byte ones");
    if (x_bytes < 0 || y < 0 || x_bytes % sizeof(T) != 0 || (size_t)x_bytes / sizeof(T) >= s->width ||
        (size_t)y >= s->height)
        threads::fail("surf2Dwrite at byte " + std::to_string(x_bytes) + ", row " + std::to_string(y) +
                      " of a " + std::to_string(s->width) + " x " + std::to_string(s->height) + " surface");
    std::memcpy(s->data + (size_t)y * s->pitch + (size_t)x_bytes, &value, sizeof(T));
}

#include MODULE_SOURCE

namespace {

template <class F> struct Kernel;
template <class... A> struct Kernel<void (*)(A...)> {
    using Arguments = std::tuple<std::decay_t<A>...>;

    // The arguments as the kernel receives them: copied once from kernelParams.
    template <size_t... I> static Arguments read(void** params, std::index_sequence<I...>) {
        return Arguments{*static_cast<std::decay_t<A>*>(params[I])...};
    }

    static int check(void** params, EmulatedPointerCheck pointer_is_valid) {
        int bad = -1;
        int index = 0;
        auto one = [&](auto* parameter_type) {
            using P = std::remove_pointer_t<decltype(parameter_type)>;
            if constexpr (std::is_pointer_v<P>) {
                unsigned long long value = 0;
                std::memcpy(&value, params[index], sizeof(value));
                if (bad < 0 && value != 0 && !pointer_is_valid(value)) bad = index;
            }
            ++index;
        };
        (one(static_cast<std::decay_t<A>*>(nullptr)), ...);
        return bad;
    }

    // Pointer parameters at one address that must not alias (EmulatedCheckAliases).
    static int aliases(void** params, unsigned long long restrict_mask) {
        unsigned long long values[sizeof...(A) + 1] = {};
        bool pointer[sizeof...(A) + 1] = {}, written[sizeof...(A) + 1] = {};
        int index = 0;
        auto one = [&](auto* parameter_type) {
            using P = std::remove_pointer_t<decltype(parameter_type)>;
            if constexpr (std::is_pointer_v<P>) {
                std::memcpy(&values[index], params[index], sizeof(unsigned long long));
                pointer[index] = true;
                written[index] = !std::is_const_v<std::remove_pointer_t<P>>;
            }
            ++index;
        };
        (one(static_cast<std::decay_t<A>*>(nullptr)), ...);
        for (int a = 0; a < index; ++a)
            for (int b = a + 1; b < index; ++b) {
                if (!pointer[a] || !pointer[b] || values[a] == 0 || values[a] != values[b]) continue;
                bool restricted = ((restrict_mask >> a) & 1u) || ((restrict_mask >> b) & 1u);
                if (restricted && (written[a] || written[b])) return a * 256 + b;
            }
        return -1;
    }

    static int sizes(size_t* out, int capacity) {
        const size_t all[] = {sizeof(std::decay_t<A>)..., 0};
        int count = (int)sizeof...(A);
        for (int i = 0; i < count && i < capacity; ++i) out[i] = all[i];
        return count;
    }
};

struct Entry {
    const char* name;
    bool cooperative;
    unsigned max_threads;
    unsigned long long restrict_mask;  // bit k: parameter k is __restrict__
    int (*check)(void**, EmulatedPointerCheck);
    int (*aliases)(void**, unsigned long long);
    int (*sizes)(size_t*, int);
    void (*run)(void**, bool);
};

template <auto K> Entry entry(const char* name, bool cooperative, unsigned max_threads, unsigned long long restrict_mask) {
    using Info = Kernel<decltype(K)>;
    return Entry{name, cooperative, max_threads, restrict_mask, &Info::check, &Info::aliases, &Info::sizes, [](void** params, bool coop) {
                     auto arguments = Info::read(params, std::make_index_sequence<std::tuple_size_v<typename Info::Arguments>>{});
                     threads::run([&] { std::apply(K, arguments); }, coop);
                 }};
}

#define KERNEL(name, cooperative, max_threads, restrict_mask) entry<&name>(#name, cooperative, max_threads, restrict_mask),
const Entry table[] = {
#include MODULE_TABLE
};
#undef KERNEL

constexpr int kernel_count = sizeof(table) / sizeof(table[0]);

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int fluidlab_kernel_count() { return kernel_count; }

__attribute__((visibility("default"))) const char* fluidlab_kernel_name(int kernel) {
    return kernel >= 0 && kernel < kernel_count ? table[kernel].name : nullptr;
}

__attribute__((visibility("default"))) unsigned fluidlab_kernel_max_threads(int kernel) {
    return table[kernel].max_threads;
}

__attribute__((visibility("default"))) int fluidlab_kernel_check_pointers(int kernel, void** params,
                                                                           EmulatedPointerCheck check) {
    return table[kernel].check(params, check);
}

__attribute__((visibility("default"))) int fluidlab_kernel_check_aliases(int kernel, void** params) {
    return table[kernel].aliases(params, table[kernel].restrict_mask);
}

__attribute__((visibility("default"))) int fluidlab_kernel_param_sizes(int kernel, size_t* sizes, int capacity) {
    return table[kernel].sizes(sizes, capacity);
}

__attribute__((visibility("default"))) void fluidlab_kernel_run(int kernel, const EmulatedLaunch* launch,
                                                                 void** params) {
    gridDim = {launch->grid[0], launch->grid[1], launch->grid[2]};
    blockDim = {launch->block[0], launch->block[1], launch->block[2]};
    threads::kernel_name = table[kernel].name;
    threads::block_start = poison_shared;
    table[kernel].run(params, table[kernel].cooperative);
}
}
