// What the emulated driver's parts share (driver.cpp, gl_interop.cpp): the device memory's
// registry and the lock every entry point takes.
#pragma once
#include <cuda.h>

#include "interface.h"

#include <mutex>
#include <string>

namespace emulated {

extern std::recursive_mutex lock;

// A new device allocation of `bytes`, filled with 0xff until written.
CUresult allocate(CUdeviceptr* pointer, size_t bytes);
// Frees an allocation made by `allocate`.
CUresult release(CUdeviceptr pointer);
// The allocation `pointer` lies in (or one past the end of).
bool find_allocation(unsigned long long pointer, unsigned long long* base, size_t* bytes);
// Whether FLUIDLAB_EMULATED_TRACE asks for every launch and interop call on stderr.
bool tracing();
// Says `why` on stderr and returns `code`.
CUresult refuse(CUresult code, const std::string& why);

// A CUDA array (arrays.cpp): rows of elements in host memory.
struct Array {
    CUDA_ARRAY_DESCRIPTOR descriptor;
    size_t element_bytes, pitch, rows;
    unsigned char* data;
    bool mapped_from_gl = false;    // a GL texture's level 0, mapped (gl_interop.cpp)
    bool surface_writable = true;  // false for a texture registered without SURFACE_LDST
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
