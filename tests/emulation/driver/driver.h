// What the emulated driver's parts share (driver.cpp, launches.cpp, graphs.cpp, arrays.cpp,
// gl_interop.cpp): the device memory's registry and the lock every entry point takes.
#pragma once
#include <cuda.h>

#include "interface.h"

#include <mutex>
#include <string>
#include <vector>

namespace emulated {

extern std::recursive_mutex lock;

// The launch limits of the device (an H200's).
constexpr int max_threads_per_block = 1024, max_dynamic_shared = 48 * 1024;

// A new device allocation of `bytes`, filled with 0xff until written.
CUresult allocate(CUdeviceptr* pointer, size_t bytes);
// Frees an allocation made by `allocate`.
CUresult release(CUdeviceptr pointer);
// The allocation `pointer` lies in (or one past the end of).
bool find_allocation(unsigned long long pointer, unsigned long long* base, size_t* bytes);
// 1 when `pointer` lies in a live allocation (or one past its end), else 0 (a kernel's
// pointer-parameter check).
int pointer_is_valid(unsigned long long pointer);
// Whether FLUIDLAB_EMULATED_TRACE asks for every launch and interop call on stderr.
bool tracing();
// Says `why` on stderr and returns `code`.
CUresult refuse(CUresult code, const std::string& why);

// Whether `bytes` at `pointer` lie inside one live allocation; if not, says so (naming `call`)
// and returns CUDA_ERROR_INVALID_VALUE.
CUresult check_range(const char* call, CUdeviceptr pointer, size_t bytes);

// Kernels (driver.cpp). Checks a launch of `function` over `shape` with `params` against the
// device's limits, the kernel's __launch_bounds__ and the live allocations (`where` begins
// the message of a refusal).
CUresult check_launch(CUfunction function, const EmulatedLaunch& shape, void** params, const std::string& where);
// Runs a checked launch (traced with `note` under FLUIDLAB_EMULATED_TRACE).
void run_kernel(CUfunction function, const EmulatedLaunch& shape, void** params, const char* note);
// The byte size of each of `function`'s parameters.
std::vector<size_t> kernel_param_sizes(CUfunction function);

// Stream capture (graphs.cpp). Each sets `captured` to whether `stream` is capturing; if it is,
// the launch or memset became a node of its graph (and did not run), or is refused with the
// code returned (the capture invalidated).
CUresult capture_launch(CUstream stream, CUfunction function, const EmulatedLaunch& shape, void** params,
                        bool* captured);
CUresult capture_memset(CUstream stream, CUdeviceptr to, unsigned value, size_t count, unsigned width,
                        bool* captured);
// A device-to-device copy of `bytes` queued on `stream`: as capture_launch (its ranges checked
// at the capture and again at each replay).
CUresult capture_copy(CUstream stream, CUdeviceptr to, CUdeviceptr from, size_t bytes, bool* captured);
// CUDA_SUCCESS unless `stream` captures: then `call` (work the emulation does not capture) is
// refused and the capture invalidated.
CUresult refuse_on_capturing_stream(const char* call, CUstream stream);
// CUDA_SUCCESS unless a capture binds this thread (global or thread-local mode): then `call`
// (a synchronous call) is refused and that capture invalidated.
CUresult refuse_while_capturing(const char* call);

// A CUDA array (arrays.cpp): rows of elements in host memory.
struct Array {
    CUDA_ARRAY_DESCRIPTOR descriptor;
    size_t element_bytes, pitch, rows;
    unsigned char* data;
    bool mapped_from_gl = false;    // a GL texture's level 0, mapped (gl_interop.cpp)
    bool surface_writable = true;  // false for a texture registered without SURFACE_LDST, or an
                                   // array made without CUDA_ARRAY3D_SURFACE_LDST
    bool unmapped = false;         // a GL texture's array between mappings: not usable
};
// A new array of `descriptor`'s shape, filled with 0xff; null for a shape it cannot hold.
Array* new_array(const CUDA_ARRAY_DESCRIPTOR& descriptor);
void delete_array(Array* array);
// The live, usable array `handle` names, or null.
Array* as_array(CUarray handle);
// Marks every surface object over `array` dead (kernels writing through one then stop).
void invalidate_surfaces(Array* array);

}  // namespace emulated
