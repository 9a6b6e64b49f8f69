// An emulated CUDA driver: a libcuda.so whose "GPU" is this CPU, so the program's real CUDA host
// code (cudarc, src/sims/*/cuda/, src/cuda/) runs its kernels without a GPU. Built and used by
// tests/support/emulated_driver.rs: the program is started with this directory first on
// LD_LIBRARY_PATH, and loads it as it would load NVIDIA's.
//
// What it emulates, and how:
//   - one device, "compute capability 9.0", with an H200's limits; the driver reports CUDA 13.0;
//   - device memory is host memory: each allocation is its own heap block, filled with 0xff
//     bytes (NaN floats, 0xffffffff integers) until written, so a kernel that reads memory the
//     host never initialised shows it; its size is known, so a copy or a kernel's pointer
//     argument outside every live allocation is refused with a message naming it;
//   - modules: the cubin, PTX or source the program loads is matched to one of the
//     libfluidlab_kernels_<module>.so beside this library (the one whose kernel names the image
//     holds) and its kernels run on the CPU (launches.cpp; kernels.cpp, threads.h);
//   - streams and events: work runs when it is queued, in order, so waits are no-ops; an
//     event's time is the wall clock when it was recorded;
//   - the launch limits of a real GPU (1024 threads per block, grid sizes, 48 KiB of dynamic
//     shared memory) are checked, and a launch beyond them fails as on a GPU;
//   - stream capture and graphs (graphs.cpp): a capture records launches and memsets, a graph
//     launch replays them, checked again as they run;
//   - graphics interop (gl_interop.cpp): cuGLGetDevices reports no CUDA device behind the GL
//     context unless FLUIDLAB_EMULATED_INTEROP=1, as on a machine whose GL is Mesa, so the
//     program takes its host-copy fallback.
// A failure the real driver reports with a code returns that code; a kernel's fault (an access
// outside a buffer, a barrier only some threads reach) stops the process with a message, as a
// GPU's fault stops the context.
#include <cuda.h>

#include "driver.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace emulated {

std::recursive_mutex lock;

namespace {

constexpr size_t device_memory = 143771ull << 20;  // an H200's 140.4 GiB

struct Context { int device = 0; };
Context primary_context;
thread_local CUcontext current_context = nullptr;


struct Stream { int unused = 0; };
struct Event { std::chrono::steady_clock::time_point at; bool recorded = false; };

std::map<unsigned long long, size_t> allocations;  // base → bytes
size_t allocated = 0;

}  // namespace

bool find_allocation(unsigned long long pointer, unsigned long long* base, size_t* bytes) {
    auto after = allocations.upper_bound(pointer);
    if (after == allocations.begin()) return false;
    auto at = std::prev(after);
    if (pointer > at->first + at->second) return false;
    if (base) *base = at->first;
    if (bytes) *bytes = at->second;
    return true;
}

bool range_is_allocated(unsigned long long pointer, size_t bytes) {
    unsigned long long base;
    size_t size;
    // Written so that no sum wraps: a length near 2^64 (a host's underflow) is refused.
    return find_allocation(pointer, &base, &size) && bytes <= size && pointer - base <= size - bytes;
}

int pointer_is_valid(unsigned long long pointer) { return find_allocation(pointer, nullptr, nullptr) ? 1 : 0; }

bool tracing() {
    static const bool on = std::getenv("FLUIDLAB_EMULATED_TRACE") != nullptr;
    return on;
}

// With FLUIDLAB_EMULATED_TRACE, every copy from the host, back to it and within the device
// and every wait (a context's, a stream's, an event's) is named on stderr with its size
// (launches.cpp names every kernel launch), so a test can count what a frame waits for, sends,
// copies, reads back and runs.
static void trace_call(const char* call, size_t bytes) {
    if (tracing()) std::fprintf(stderr, "emulated CUDA driver: %s %zu bytes\n", call, bytes);
}

CUresult refuse(CUresult code, const std::string& why) {
    std::fprintf(stderr, "emulated CUDA driver: %s\n", why.c_str());
    return code;
}

CUresult allocate(CUdeviceptr* pointer, size_t bytes) {
    if (pointer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = refuse_while_capturing("a device allocation")) return r;
    // cuMemAlloc documents CUDA_ERROR_INVALID_VALUE for 0 bytes (and cudarc passes 0 on for an
    // empty slice); cuMemAllocAsync's behaviour is not documented: refused here too.
    if (bytes == 0) return refuse(CUDA_ERROR_INVALID_VALUE, "a device allocation of 0 bytes");
    std::lock_guard guard(lock);
    if (allocated + bytes > device_memory) return CUDA_ERROR_OUT_OF_MEMORY;
    // Aligned as cuMemAlloc's are, and exactly `bytes` long, so the memcheck build's red zone
    // starts at the buffer's end.
    void* block = nullptr;
    if (posix_memalign(&block, 256, std::max<size_t>(bytes, 1)) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    std::memset(block, 0xff, bytes);
    *pointer = reinterpret_cast<CUdeviceptr>(block);
    allocations[*pointer] = bytes;
    allocated += bytes;
    return CUDA_SUCCESS;
}

// Freed blocks are held back (up to 256 MiB, oldest freed first) before they go back to the
// heap, so the next allocations get other addresses and a freed (or unmapped) pointer stays in no
// live allocation: a launch or copy that still uses it is refused rather than landing in
// whatever took its place.
void quarantine(CUdeviceptr pointer, size_t bytes) {
    static std::deque<std::pair<void*, size_t>> held;
    static size_t held_bytes = 0;
    constexpr size_t most = 256u << 20;
    held.emplace_back(reinterpret_cast<void*>(pointer), bytes);
    held_bytes += bytes;
    while (held_bytes > most && held.size() > 1) {
        std::free(held.front().first);
        held_bytes -= held.front().second;
        held.pop_front();
    }
}

CUresult release(CUdeviceptr pointer) {
    std::lock_guard guard(lock);
    if (CUresult r = refuse_while_capturing("cuMemFree")) return r;
    if (pointer == 0) return CUDA_SUCCESS;
    auto at = allocations.find(pointer);
    if (at == allocations.end())
        return refuse(CUDA_ERROR_INVALID_VALUE, "cuMemFree of a pointer that is not an allocation's start");
    allocated -= at->second;
    quarantine(pointer, at->second);
    allocations.erase(at);
    return CUDA_SUCCESS;
}

CUresult check_range(const char* call, CUdeviceptr pointer, size_t bytes) {
    if (bytes == 0 || range_is_allocated(pointer, bytes)) return CUDA_SUCCESS;
    return refuse(CUDA_ERROR_INVALID_VALUE, std::string(call) + ": " + std::to_string(bytes) + " bytes at 0x" +
                                                [&] { char b[32]; std::snprintf(b, sizeof b, "%llx", (unsigned long long)pointer); return std::string(b); }() +
                                                " are not inside one device allocation");
}

CUresult copy(const char* call, void* to, const void* from, size_t bytes, CUdeviceptr device_to, CUdeviceptr device_from) {
    std::lock_guard guard(lock);
    if (device_to) if (CUresult r = check_range(call, device_to, bytes)) return r;
    if (device_from) if (CUresult r = check_range(call, device_from, bytes)) return r;
    // Device memory is host memory here: a device pointer given as the host side would work,
    // where a GPU's would fault.
    for (auto [host, is_host] : {std::pair{to, !device_to}, std::pair{const_cast<void*>(from), !device_from}})
        if (is_host && bytes && find_allocation(reinterpret_cast<unsigned long long>(host), nullptr, nullptr))
            return refuse(CUDA_ERROR_INVALID_VALUE, std::string(call) + ": the host side is a device pointer");
    if (bytes) std::memmove(to, from, bytes);
    return CUDA_SUCCESS;
}

}  // namespace emulated

using namespace emulated;

#define EXPORT extern "C" __attribute__((visibility("default")))

// ---- initialisation, device, context ------------------------------------------------------

EXPORT CUresult CUDAAPI cuInit(unsigned int) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuDriverGetVersion(int* version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = 13000;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetCount(int* count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice) {
    if (!name || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, length, "fluidlab emulated CUDA device (CPU)");
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice) {
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    std::memset(uuid, 0xe5, sizeof *uuid);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice) {
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    *bytes = emulated::device_memory;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = max_threads_per_block; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 0x7fffffff; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = max_dynamic_shared; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 233472; break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = 2619000; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = 6144; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 1; break;
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *value = 1; break;
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: case CU_DEVICE_ATTRIBUTE_INTEGRATED: *value = 0; break;
        default: *value = 0;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
    *context = reinterpret_cast<CUcontext>(&primary_context);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
    current_context = context;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    *context = current_context;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) { return cuCtxSetCurrent(context); }
EXPORT CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
    if (context) *context = current_context;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSynchronize() {
    if (CUresult r = refuse_while_capturing("cuCtxSynchronize")) return r;
    trace_call("cuCtxSynchronize", 0);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSetLimit(CUlimit, size_t) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuCtxGetLimit(size_t* value, CUlimit) {
    if (value) *value = 0;
    return CUDA_SUCCESS;
}

// ---- errors -------------------------------------------------------------------------------

namespace {
const char* error_name(CUresult code) {
    switch (code) {
        case CUDA_SUCCESS: return "CUDA_SUCCESS";
        case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
        case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
        case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
        case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
        case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
        case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
        case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
        case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
        case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
        case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
        case CUDA_ERROR_INVALID_GRAPHICS_CONTEXT: return "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT";
        case CUDA_ERROR_ALREADY_MAPPED: return "CUDA_ERROR_ALREADY_MAPPED";
        case CUDA_ERROR_NOT_MAPPED: return "CUDA_ERROR_NOT_MAPPED";
        case CUDA_ERROR_ILLEGAL_STATE: return "CUDA_ERROR_ILLEGAL_STATE";
        case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
        case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
        case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: return "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD";
        default: return "CUDA_ERROR_UNKNOWN";
    }
}
const char* error_text(CUresult code) {
    switch (code) {
        case CUDA_SUCCESS: return "no error";
        case CUDA_ERROR_INVALID_VALUE: return "invalid argument";
        case CUDA_ERROR_OUT_OF_MEMORY: return "out of memory";
        case CUDA_ERROR_NOT_INITIALIZED: return "initialization error";
        case CUDA_ERROR_INVALID_DEVICE: return "invalid device ordinal";
        case CUDA_ERROR_INVALID_IMAGE: return "device kernel image is invalid";
        case CUDA_ERROR_INVALID_CONTEXT: return "invalid device context";
        case CUDA_ERROR_INVALID_HANDLE: return "invalid resource handle";
        case CUDA_ERROR_NOT_FOUND: return "named symbol not found";
        case CUDA_ERROR_NOT_SUPPORTED: return "operation not supported";
        case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return "too many resources requested for launch";
        case CUDA_ERROR_INVALID_GRAPHICS_CONTEXT: return "invalid OpenGL or DirectX context";
        case CUDA_ERROR_ALREADY_MAPPED: return "resource already mapped";
        case CUDA_ERROR_NOT_MAPPED: return "resource not mapped";
        case CUDA_ERROR_ILLEGAL_STATE: return "the operation is not permitted in the current state";
        case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "operation not permitted when stream is capturing";
        case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return "operation failed due to a previous error during capture";
        case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: return "attempt to terminate a thread-local capture sequence from another thread";
        default: return "unknown error";
    }
}
}  // namespace

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult code, const char** name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    *name = error_name(code);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGetErrorString(CUresult code, const char** text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    *text = error_text(code);
    return CUDA_SUCCESS;
}

// ---- memory -------------------------------------------------------------------------------

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr* pointer, size_t bytes) { return allocate(pointer, bytes); }
EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* pointer, size_t bytes, CUstream) { return allocate(pointer, bytes); }
EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) { return release(pointer); }
EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream) { return release(pointer); }
EXPORT CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
    std::lock_guard guard(lock);
    if (free) *free = device_memory - allocated;
    if (total) *total = device_memory;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemHostAlloc(void** pointer, size_t bytes, unsigned int) {
    if (!pointer) return CUDA_ERROR_INVALID_VALUE;
    *pointer = std::malloc(std::max<size_t>(bytes, 1));
    return *pointer ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult CUDAAPI cuMemFreeHost(void* pointer) {
    std::free(pointer);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr to, const void* from, size_t bytes) {
    if (CUresult r = refuse_while_capturing("cuMemcpyHtoD")) return r;
    trace_call("cuMemcpyHtoD", bytes);
    return copy("cuMemcpyHtoD", reinterpret_cast<void*>(to), from, bytes, to, 0);
}
EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr to, const void* from, size_t bytes, CUstream stream) {
    if (CUresult r = refuse_on_capturing_stream("cuMemcpyHtoDAsync", stream)) return r;
    trace_call("cuMemcpyHtoDAsync", bytes);
    return copy("cuMemcpyHtoDAsync", reinterpret_cast<void*>(to), from, bytes, to, 0);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoH(void* to, CUdeviceptr from, size_t bytes) {
    if (CUresult r = refuse_while_capturing("cuMemcpyDtoH")) return r;
    trace_call("cuMemcpyDtoH", bytes);
    return copy("cuMemcpyDtoH", to, reinterpret_cast<const void*>(from), bytes, 0, from);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void* to, CUdeviceptr from, size_t bytes, CUstream stream) {
    if (CUresult r = refuse_on_capturing_stream("cuMemcpyDtoHAsync", stream)) return r;
    trace_call("cuMemcpyDtoHAsync", bytes);
    return copy("cuMemcpyDtoHAsync", to, reinterpret_cast<const void*>(from), bytes, 0, from);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr to, CUdeviceptr from, size_t bytes) {
    if (CUresult r = refuse_while_capturing("cuMemcpyDtoD")) return r;
    trace_call("cuMemcpyDtoD", bytes);
    return copy("cuMemcpyDtoD", reinterpret_cast<void*>(to), reinterpret_cast<const void*>(from), bytes, to, from);
}
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream) {
    bool captured = false;
    if (CUresult r = capture_copy(stream, to, from, bytes, &captured); r || captured) return r;
    trace_call("cuMemcpyDtoDAsync", bytes);
    return copy("cuMemcpyDtoDAsync", reinterpret_cast<void*>(to), reinterpret_cast<const void*>(from), bytes, to, from);
}
EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr to, unsigned char value, size_t count) {
    std::lock_guard guard(lock);
    if (CUresult r = refuse_while_capturing("cuMemsetD8")) return r;
    if (CUresult r = check_range("cuMemsetD8", to, count)) return r;
    std::memset(reinterpret_cast<void*>(to), value, count);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t count, CUstream stream) {
    std::lock_guard guard(lock);
    if (CUresult r = check_range("cuMemsetD8Async", to, count)) return r;
    bool captured;
    if (CUresult r = capture_memset(stream, to, value, count, 1, &captured); r || captured) return r;
    std::memset(reinterpret_cast<void*>(to), value, count);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr to, unsigned int value, size_t count, CUstream stream) {
    std::lock_guard guard(lock);
    if (count > SIZE_MAX / 4) return refuse(CUDA_ERROR_INVALID_VALUE, "cuMemsetD32Async of over 2^62 words");
    if (CUresult r = check_range("cuMemsetD32Async", to, count * 4)) return r;
    bool captured;
    if (CUresult r = capture_memset(stream, to, value, count, 4, &captured); r || captured) return r;
    auto* words = reinterpret_cast<unsigned int*>(to);
    for (size_t i = 0; i < count; ++i) words[i] = value;
    return CUDA_SUCCESS;
}

// ---- streams and events -------------------------------------------------------------------

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int) {
    if (!stream) return CUDA_ERROR_INVALID_VALUE;
    *stream = reinterpret_cast<CUstream>(new Stream);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int) {
    return cuStreamCreate(stream, flags);
}
EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
    if (CUresult r = refuse_on_capturing_stream("cuStreamDestroy", stream)) return r;
    delete reinterpret_cast<Stream*>(stream);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
    if (CUresult r = refuse_on_capturing_stream("cuStreamSynchronize", stream)) return r;
    if (CUresult r = refuse_while_capturing("cuStreamSynchronize")) return r;
    trace_call("cuStreamSynchronize", 0);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuStreamQuery(CUstream stream) { return refuse_on_capturing_stream("cuStreamQuery", stream); }
EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent, unsigned int) {
    return refuse_on_capturing_stream("cuStreamWaitEvent", stream);
}
EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream stream, CUhostFn function, void* data) {
    if (CUresult r = refuse_on_capturing_stream("cuLaunchHostFunc", stream)) return r;
    function(data);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int) {
    if (!event) return CUDA_ERROR_INVALID_VALUE;
    *event = reinterpret_cast<CUevent>(new Event);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventDestroy(CUevent event) {
    delete reinterpret_cast<Event*>(event);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
    if (!event) return CUDA_ERROR_INVALID_HANDLE;
    if (CUresult r = refuse_on_capturing_stream("cuEventRecord", stream)) return r;
    auto* e = reinterpret_cast<Event*>(event);
    e->at = std::chrono::steady_clock::now();
    e->recorded = true;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventQuery(CUevent) { return refuse_while_capturing("cuEventQuery"); }
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent) {
    if (CUresult r = refuse_while_capturing("cuEventSynchronize")) return r;
    trace_call("cuEventSynchronize", 0);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
    auto *a = reinterpret_cast<Event*>(start), *b = reinterpret_cast<Event*>(end);
    if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
    *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
    return CUDA_SUCCESS;
}
