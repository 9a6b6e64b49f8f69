// The emulated driver's CUDA arrays, surface objects and 2D copies (driver.cpp): an array is
// host memory with its descriptor; a surface object's handle points at an EmulatedSurface over
// it (interface.h), which kernels' surf2Dwrite checks and writes.
#include "driver.h"

#include <cstdlib>
#include <cstring>
#include <set>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace emulated {

namespace {
std::set<Array*> arrays;
std::set<EmulatedSurface*> surfaces;

size_t format_bytes(CUarray_format format) {
    switch (format) {
        case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
        case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
        case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
        default: return 0;
    }
}
}  // namespace

Array* new_array(const CUDA_ARRAY_DESCRIPTOR& descriptor) {
    size_t element = format_bytes(descriptor.Format) * descriptor.NumChannels;
    if (element == 0 || descriptor.Width == 0) return nullptr;
    auto* array = new Array;
    array->descriptor = descriptor;
    array->element_bytes = element;
    array->pitch = descriptor.Width * element;
    array->rows = std::max<size_t>(descriptor.Height, 1);
    array->data = static_cast<unsigned char*>(std::malloc(array->pitch * array->rows));
    std::memset(array->data, 0xff, array->pitch * array->rows);
    arrays.insert(array);
    return array;
}

void delete_array(Array* array) {
    invalidate_surfaces(array);
    arrays.erase(array);
    std::free(array->data);
    delete array;
}

void invalidate_surfaces(Array* array) {
    for (EmulatedSurface* s : surfaces)
        if (s->data == array->data) s->live = 0;
}

Array* as_array(CUarray handle) {
    auto* array = reinterpret_cast<Array*>(handle);
    return arrays.count(array) && !array->unmapped ? array : nullptr;
}

}  // namespace emulated

using namespace emulated;

// An array from cuArrayCreate takes no surface (as the driver's: that needs
// CUDA_ARRAY3D_SURFACE_LDST, which only cuArray3DCreate sets).
EXPORT CUresult CUDAAPI cuArrayCreate(CUarray* handle, const CUDA_ARRAY_DESCRIPTOR* descriptor) {
    if (!handle || !descriptor) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    Array* array = new_array(*descriptor);
    if (!array) return CUDA_ERROR_INVALID_VALUE;
    array->surface_writable = false;
    *handle = reinterpret_cast<CUarray>(array);
    return CUDA_SUCCESS;
}
// 2D arrays only (Depth 0); CUDA_ARRAY3D_SURFACE_LDST lets surfaces write them.
EXPORT CUresult CUDAAPI cuArray3DCreate(CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* descriptor) {
    if (!handle || !descriptor) return CUDA_ERROR_INVALID_VALUE;
    if (descriptor->Depth != 0) return refuse(CUDA_ERROR_NOT_SUPPORTED, "cuArray3DCreate: only 2D arrays are emulated");
    CUDA_ARRAY_DESCRIPTOR flat{};
    flat.Width = descriptor->Width;
    flat.Height = descriptor->Height;
    flat.Format = descriptor->Format;
    flat.NumChannels = descriptor->NumChannels;
    std::lock_guard guard(lock);
    Array* array = new_array(flat);
    if (!array) return CUDA_ERROR_INVALID_VALUE;
    array->surface_writable = (descriptor->Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
    *handle = reinterpret_cast<CUarray>(array);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuArrayDestroy(CUarray handle) {
    std::lock_guard guard(lock);
    Array* array = as_array(handle);
    if (!array) return CUDA_ERROR_INVALID_HANDLE;
    if (array->mapped_from_gl) return refuse(CUDA_ERROR_INVALID_HANDLE, "cuArrayDestroy of a mapped GL texture's array");
    delete_array(array);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* descriptor, CUarray handle) {
    std::lock_guard guard(lock);
    Array* array = as_array(handle);
    if (!descriptor) return CUDA_ERROR_INVALID_VALUE;
    if (!array) return CUDA_ERROR_INVALID_HANDLE;
    *descriptor = array->descriptor;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject* surface, const CUDA_RESOURCE_DESC* resource) {
    if (!surface || !resource) return CUDA_ERROR_INVALID_VALUE;
    if (resource->resType != CU_RESOURCE_TYPE_ARRAY)
        return refuse(CUDA_ERROR_INVALID_VALUE, "cuSurfObjectCreate: only array resources are emulated");
    std::lock_guard guard(lock);
    Array* array = as_array(resource->res.array.hArray);
    if (!array) return refuse(CUDA_ERROR_INVALID_HANDLE, "cuSurfObjectCreate: not a live CUDA array");
    if (!array->surface_writable)
        return refuse(CUDA_ERROR_INVALID_VALUE,
                      array->mapped_from_gl
                          ? "cuSurfObjectCreate: the GL texture was registered without CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST"
                          : "cuSurfObjectCreate: the array was made without CUDA_ARRAY3D_SURFACE_LDST (cuArrayCreate "
                            "cannot set it; cuArray3DCreate can)");
    auto* s = new EmulatedSurface{array->data, array->pitch, array->descriptor.Width, array->rows, array->element_bytes, 1};
    surfaces.insert(s);
    *surface = reinterpret_cast<CUsurfObject>(s);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject surface) {
    std::lock_guard guard(lock);
    auto* s = reinterpret_cast<EmulatedSurface*>(surface);
    if (!surfaces.erase(s)) return CUDA_ERROR_INVALID_HANDLE;
    // Kept, dead: a kernel handed the destroyed handle stops with a message instead of reading
    // freed memory (a few bytes per surface a process destroys).
    s->live = 0;
    return CUDA_SUCCESS;
}

namespace {
// One side of a 2D copy: its first byte and pitch, after checking the rows it spans.
CUresult side(const char* which, CUmemorytype type, const void* host, CUdeviceptr device, CUarray handle, size_t x,
              size_t y, size_t pitch, size_t width, size_t height, unsigned char** start, size_t* row_pitch) {
    switch (type) {
        case CU_MEMORYTYPE_HOST:
            if (find_allocation(reinterpret_cast<unsigned long long>(host), nullptr, nullptr))
                return refuse(CUDA_ERROR_INVALID_VALUE, std::string("cuMemcpy2D: the ") + which +
                                                            " is a device pointer given as host memory");
            *start = (unsigned char*)host + y * pitch + x;
            *row_pitch = pitch;
            return CUDA_SUCCESS;
        case CU_MEMORYTYPE_DEVICE: {
            unsigned long long base;
            size_t bytes;
            unsigned long long first = device + y * pitch + x;
            size_t span = height == 0 ? 0 : (height - 1) * pitch + width;
            if (!find_allocation(first, &base, &bytes) || first + span > base + bytes)
                return refuse(CUDA_ERROR_INVALID_VALUE,
                              std::string("cuMemcpy2D: the ") + which + " rows are not inside one device allocation");
            *start = reinterpret_cast<unsigned char*>(first);
            *row_pitch = pitch;
            return CUDA_SUCCESS;
        }
        case CU_MEMORYTYPE_ARRAY: {
            Array* array = as_array(handle);
            if (!array) return refuse(CUDA_ERROR_INVALID_HANDLE, std::string("cuMemcpy2D: the ") + which + " array is not live");
            if (x + width > array->pitch || y + height > array->rows)
                return refuse(CUDA_ERROR_INVALID_VALUE, std::string("cuMemcpy2D: the ") + which + " rectangle " +
                                                            std::to_string(width) + " bytes × " + std::to_string(height) +
                                                            " rows at (" + std::to_string(x) + ", " + std::to_string(y) +
                                                            ") leaves its " + std::to_string(array->pitch) + " × " +
                                                            std::to_string(array->rows) + " array");
            *start = array->data + y * array->pitch + x;
            *row_pitch = array->pitch;
            return CUDA_SUCCESS;
        }
        default: return refuse(CUDA_ERROR_INVALID_VALUE, "cuMemcpy2D: a memory type the emulation does not copy");
    }
}
}  // namespace

EXPORT CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D* c) {
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    unsigned char *from, *to;
    size_t from_pitch, to_pitch;
    if (CUresult r = side("source", c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY,
                          c->srcPitch, c->WidthInBytes, c->Height, &from, &from_pitch))
        return r;
    if (CUresult r = side("destination", c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes,
                          c->dstY, c->dstPitch, c->WidthInBytes, c->Height, &to, &to_pitch))
        return r;
    for (size_t row = 0; row < c->Height; ++row) std::memmove(to + row * to_pitch, from + row * from_pitch, c->WidthInBytes);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D* copy, CUstream) { return cuMemcpy2D(copy); }
