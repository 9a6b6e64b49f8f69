// What the emulated driver (driver.cpp, built as libcuda.so) and a module's emulated kernels
// (kernels.cpp, built once per kernels/<module>.cu as libfluidlab_kernels_<module>.so) say to
// each other, in C: plain types only, so neither side needs the other's headers.
#pragma once
#include <cstddef>

extern "C" {

// A surface object (`cuSurfObjectCreate`): the CUsurfObject handle is a pointer to one.
struct EmulatedSurface {
    unsigned char* data;
    size_t pitch;          // bytes per row
    size_t width;          // elements per row
    size_t height;         // rows
    size_t element_bytes;  // bytes per element
    int live;              // 0 once its array is gone (a GL texture unmapped)
};

struct EmulatedLaunch {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
};

// Whether `pointer` lies in a live device allocation (or is one past its end).
typedef int (*EmulatedPointerCheck)(unsigned long long pointer);

// The module's kernels, by index.
typedef int (*EmulatedKernelCount)();
typedef const char* (*EmulatedKernelName)(int kernel);
// The most threads per block `kernel` may be launched with: its __launch_bounds__, else 1024.
typedef unsigned (*EmulatedKernelMaxThreads)(int kernel);
// The index of the first pointer parameter of `kernel` whose value `check` refuses, or −1;
// a pointer parameter's value is read as the kernel will read it.
typedef int (*EmulatedCheckPointers)(int kernel, void** params, EmulatedPointerCheck check);
// Two pointer parameters of `kernel` given the same address where the kernel may not alias
// them: at least one is __restrict__ (`restrict_mask`, from the module's table) and at least
// one points to non-const (written). Returns a · 256 + b (parameters a < b), or −1.
typedef int (*EmulatedCheckAliases)(int kernel, void** params);
// The byte sizes of `kernel`'s parameters, in order, into `sizes` (at most `capacity`);
// returns how many it has (a stream capture copies each parameter's value by them).
typedef int (*EmulatedParamSizes)(int kernel, size_t* sizes, int capacity);
// Runs `kernel` over `launch` with `params` (cuLaunchKernel's kernelParams).
typedef void (*EmulatedRun)(int kernel, const EmulatedLaunch* launch, void** params);
}
