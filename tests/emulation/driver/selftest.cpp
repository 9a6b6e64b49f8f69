// Checks the emulated driver (driver.cpp) through the driver API, as a program would: run by
// tests/emulated_driver.rs, linked against the emulated libcuda.so, with selftest.cu's kernels
// built beside it.
//
// usage: selftest                  every check that must pass; exit 0, or 1 naming the first
//                                   that failed
//        selftest FAULT            runs one kernel that must stop the process: divergent-barrier,
//                                   shuffle-after-return, divergent-shuffle, surface-overrun;
//                                   buffer-overrun (on
//                                   the memcheck build only)
#include <cuda.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

static int failures = 0;

#define CHECK(condition, ...)                                  \
    do {                                                       \
        if (!(condition)) {                                    \
            std::fprintf(stderr, "FAIL %s: ", #condition);     \
            std::fprintf(stderr, __VA_ARGS__);                 \
            std::fprintf(stderr, "\n");                        \
            ++failures;                                        \
        }                                                      \
    } while (0)

#define OK(call) CHECK((call) == CUDA_SUCCESS, "%s", #call)

static CUmodule module;

static CUfunction function(const char* name) {
    CUfunction f = nullptr;
    OK(cuModuleGetFunction(&f, module, name));
    return f;
}

static CUresult launch(const char* name, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
                       std::vector<void*> params) {
    return cuLaunchKernel(function(name), grid_x, grid_y, 1, block_x, block_y, 1, 0, nullptr, params.data(), nullptr);
}

static void block_sums() {
    const unsigned n = 700, block = 256, blocks = 3;
    std::vector<float> values(n);
    for (unsigned i = 0; i < n; ++i) values[i] = (float)(i % 17) + 0.25f;
    CUdeviceptr d_values, d_sums;
    OK(cuMemAlloc(&d_values, n * 4));
    OK(cuMemAlloc(&d_sums, blocks * 4));
    OK(cuMemcpyHtoD(d_values, values.data(), n * 4));
    unsigned count = n;
    OK(launch("selftest_block_sum", blocks, 1, block, 1, {&d_values, &count, &d_sums}));
    float sums[blocks];
    OK(cuMemcpyDtoH(sums, d_sums, sizeof sums));
    for (unsigned b = 0; b < blocks; ++b) {
        double expected = 0;
        for (unsigned i = b * block; i < std::min(n, (b + 1) * block); ++i) expected += values[i];
        CHECK(sums[b] == (float)expected, "block %u: %g, expected %g", b, sums[b], expected);
    }
    // Its __launch_bounds__ allow 256 threads: 512 do not fit its registers.
    int most = 0;
    OK(cuFuncGetAttribute(&most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function("selftest_block_sum")));
    CHECK(most == (int)block, "selftest_block_sum's most threads per block: %d", most);
    CHECK(launch("selftest_block_sum", 1, 1, 2 * block, 1, {&d_values, &count, &d_sums}) ==
              CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
          "512 threads of a kernel bounded to 256");
    OK(cuMemFree(d_values));
    OK(cuMemFree(d_sums));
}

// A cooperative kernel's threads run on stacks the driver keeps (threads.h). A thread's first
// frame never returns, so its redzones stay poisoned for AddressSanitizer unless the driver
// clears them: once the launch is over no stack may be left so, or whatever is mapped there
// later (the driver's own bigger stacks, or any library's memory) is reported on wrongly — as
// Mesa's LLVM JIT copying code into it once was, in `fluidlab doctor` on the memcheck build.
static void thread_stacks() {
    const unsigned block = 64;
    CUdeviceptr out;
    OK(cuMemAlloc(&out, block * 8));
    OK(launch("selftest_stack_address", 1, 1, block, 1, {&out}));
    std::vector<unsigned long long> where(block);
    OK(cuMemcpyDtoH(where.data(), out, block * 8));
    for (unsigned t = 0; t + 1 < block; ++t) {
        CHECK(where[t] != 0 && where[t] != where[t + 1], "threads %u and %u: stacks at %llx and %llx", t, t + 1,
              where[t], where[t + 1]);
#if defined(__SANITIZE_ADDRESS__)
        // From the kernel's frame up through the frames that called it (the last thread's is
        // not looked at: above its stack lies memory that is not the driver's).
        void* poisoned = __asan_region_is_poisoned(reinterpret_cast<void*>(where[t]), 4096);
        CHECK(poisoned == nullptr, "thread %u's stack (a local at %llx) is poisoned at %p after the launch", t,
              where[t], poisoned);
#endif
    }
    OK(cuMemFree(out));
}

static void warp_shuffles() {
    const unsigned n = 128;
    std::vector<unsigned> values(n);
    for (unsigned i = 0; i < n; ++i) values[i] = (i * 37u) % 101u;
    CUdeviceptr d_values, d_prefix, d_largest, d_totals;
    OK(cuMemAlloc(&d_values, n * 4));
    OK(cuMemAlloc(&d_prefix, n * 4));
    OK(cuMemAlloc(&d_largest, n * 4));
    OK(cuMemAlloc(&d_totals, n / 32 * 4));
    OK(cuMemcpyHtoD(d_values, values.data(), n * 4));
    OK(launch("selftest_warp", 2, 1, 64, 1, {&d_values, &d_prefix, &d_largest, &d_totals}));
    std::vector<unsigned> prefix(n), largest(n), totals(n / 32);
    OK(cuMemcpyDtoH(prefix.data(), d_prefix, n * 4));
    OK(cuMemcpyDtoH(largest.data(), d_largest, n * 4));
    OK(cuMemcpyDtoH(totals.data(), d_totals, n / 32 * 4));
    for (unsigned warp = 0; warp < n / 32; ++warp) {
        unsigned sum = 0, top = 0;
        for (unsigned lane = 0; lane < 32; ++lane) {
            unsigned i = warp * 32 + lane;
            sum += values[i];
            top = std::max(top, values[i]);
            CHECK(prefix[i] == sum, "prefix[%u] = %u, expected %u", i, prefix[i], sum);
        }
        for (unsigned lane = 0; lane < 32; ++lane)
            CHECK(largest[warp * 32 + lane] == top, "largest[%u] = %u, expected %u", warp * 32 + lane,
                  largest[warp * 32 + lane], top);
        CHECK(totals[warp] == sum, "totals[%u] = %u, expected %u", warp, totals[warp], sum);
    }
    for (CUdeviceptr p : {d_values, d_prefix, d_largest, d_totals}) OK(cuMemFree(p));
}

static CUarray rgba8_array(int width, int height, CUsurfObject* surface) {
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    descriptor.Width = width;
    descriptor.Height = height;
    descriptor.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    descriptor.NumChannels = 4;
    descriptor.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CUarray array = nullptr;
    OK(cuArray3DCreate(&array, &descriptor));
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    OK(cuSurfObjectCreate(surface, &resource));
    return array;
}

static void surfaces() {
    const int width = 37, height = 21;
    CUsurfObject surface = 0;
    CUarray array = rgba8_array(width, height, &surface);
    CUDA_ARRAY_DESCRIPTOR read_back{};
    OK(cuArrayGetDescriptor(&read_back, array));
    CHECK(read_back.Width == (size_t)width && read_back.Height == (size_t)height, "descriptor %zu × %zu",
          read_back.Width, read_back.Height);
    OK(launch("selftest_surface", 3, 2, 16, 16, {&surface, (void*)&width, (void*)&height}));
    std::vector<unsigned char> texels(width * height * 4);
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    copy.srcArray = array;
    copy.dstMemoryType = CU_MEMORYTYPE_HOST;
    copy.dstHost = texels.data();
    copy.dstPitch = width * 4;
    copy.WidthInBytes = width * 4;
    copy.Height = height;
    OK(cuMemcpy2D(&copy));
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const unsigned char* t = &texels[(y * width + x) * 4];
            CHECK(t[0] == x && t[1] == y && t[2] == 7 && t[3] == 255, "texel (%d, %d) = %u %u %u %u", x, y, t[0], t[1],
                  t[2], t[3]);
        }
    std::vector<unsigned char> taller(width * (height + 1) * 4);
    copy.Height = height + 1;
    copy.dstHost = taller.data();
    CHECK(cuMemcpy2D(&copy) == CUDA_ERROR_INVALID_VALUE, "a copy of more rows than the array holds is refused");
    OK(cuSurfObjectDestroy(surface));
    OK(cuArrayDestroy(array));
    // An array without CUDA_ARRAY3D_SURFACE_LDST (all cuArrayCreate makes) takes no surface.
    CUDA_ARRAY_DESCRIPTOR plain{};
    plain.Width = width;
    plain.Height = height;
    plain.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    plain.NumChannels = 4;
    OK(cuArrayCreate(&array, &plain));
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    CHECK(cuSurfObjectCreate(&surface, &resource) == CUDA_ERROR_INVALID_VALUE,
          "a surface over an array made without SURFACE_LDST");
    OK(cuArrayDestroy(array));
}

static void memory() {
    size_t free_before, total, free_during, free_after;
    OK(cuMemGetInfo(&free_before, &total));
    CUdeviceptr from, to;
    OK(cuMemAlloc(&from, 1000 * 4));
    OK(cuMemAlloc(&to, 1000 * 4));
    OK(cuMemGetInfo(&free_during, &total));
    CHECK(free_before - free_during == 8000, "8000 bytes allocated, free memory fell by %zu", free_before - free_during);
    unsigned n = 1000;
    OK(launch("selftest_copy", 4, 1, 256, 1, {&from, &to, &n}));
    std::vector<unsigned> copied(1000);
    OK(cuMemcpyDtoH(copied.data(), to, 4000));
    CHECK(copied[0] == 0xffffffffu && copied[999] == 0xffffffffu, "memory never written reads 0x%x",
          copied[0]);  // poisoned
    unsigned word = 5;
    CHECK(cuMemcpyHtoD(from + 3998, &word, 4) == CUDA_ERROR_INVALID_VALUE, "a copy past an allocation's end");
    CHECK(cuMemcpyDtoH(&word, to + 4000, 4) == CUDA_ERROR_INVALID_VALUE, "a copy from past an allocation's end");
    CHECK(cuMemFree(from + 4) == CUDA_ERROR_INVALID_VALUE, "freeing inside an allocation");
    CHECK(cuMemcpyHtoD(to, reinterpret_cast<void*>(from), 4) == CUDA_ERROR_INVALID_VALUE,
          "a device pointer as a copy's host side");
    CUdeviceptr stale = from;
    OK(cuMemFree(from));
    OK(cuMemFree(to));
    OK(cuMemGetInfo(&free_after, &total));
    CHECK(free_after == free_before, "free memory %zu after, %zu before", free_after, free_before);
    // A launch whose pointer parameter lies in no allocation (freed, or a scalar in its place).
    CUdeviceptr live;
    OK(cuMemAlloc(&live, 4000));
    CHECK(launch("selftest_copy", 4, 1, 256, 1, {&stale, &live, &n}) == CUDA_ERROR_INVALID_VALUE,
          "a launch with a freed buffer");
    unsigned long long scalar = 1000;
    CHECK(launch("selftest_copy", 4, 1, 256, 1, {&live, &scalar, &n}) == CUDA_ERROR_INVALID_VALUE,
          "a launch with a number where a pointer goes");
    CHECK(launch("selftest_copy", 1, 1, 2048, 1, {&live, &live, &n}) == CUDA_ERROR_INVALID_VALUE,
          "2048 threads per block");
    CHECK(launch("selftest_copy", 1, 1, 32, 1, {&live, &live, &n}) == CUDA_SUCCESS, "a valid launch");
    OK(cuMemFree(live));
}

// Shared memory holds the poison at each block's start.
static void shared_memory() {
    const unsigned blocks = 3;
    CUdeviceptr out;
    OK(cuMemAlloc(&out, blocks * 64 * 4));
    OK(launch("selftest_shared_unwritten", blocks, 1, 64, 1, {&out}));
    std::vector<unsigned> read(blocks * 64);
    OK(cuMemcpyDtoH(read.data(), out, read.size() * 4));
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < 64; ++t) {
            unsigned expected = t == b ? b + 100u : 0xffffffffu;
            CHECK(read[b * 64 + t] == expected, "block %u, shared[%u] = 0x%x, expected 0x%x", b, t, read[b * 64 + t],
                  expected);
        }
    OK(cuMemFree(out));
}

// The order of a launch's threads (FLUIDLAB_EMULATED_ORDER), thread by thread and as contexts:
// forward and reverse as named; random a permutation that is neither, blocks interleaved
// (thread by thread), another at the next launch. Prints each launch's first numbers
// ("order: ..."), so that a test can compare runs of one seed and of two.
static std::vector<unsigned> ordered(const char* kernel, unsigned blocks, unsigned block) {
    CUdeviceptr counter, out;
    OK(cuMemAlloc(&counter, 4));
    OK(cuMemAlloc(&out, blocks * block * 4));
    OK(cuMemsetD8(counter, 0, 4));
    OK(launch(kernel, blocks, 1, block, 1, {&counter, &out}));
    std::vector<unsigned> read(blocks * block);
    OK(cuMemcpyDtoH(read.data(), out, read.size() * 4));
    OK(cuMemFree(counter));
    OK(cuMemFree(out));
    std::vector<bool> seen(read.size(), false);
    for (unsigned v : read) {
        CHECK(v < read.size() && !seen[v], "%s: %u taken twice or out of range", kernel, v);
        if (v < read.size()) seen[v] = true;
    }
    std::printf("order: %s", kernel);
    for (unsigned i = 0; i < 8; ++i) std::printf(" %u", read[i]);
    std::printf("\n");
    return read;
}

// Parameters that must not alias: one buffer given to selftest_copy_restrict's two __restrict__
// pointers is refused, and to selftest_copy_from_restrict's (only the read one __restrict__);
// two buffers run; selftest_copy (no __restrict__) may run in place, and selftest_sum_restrict
// may read one buffer through both its const __restrict__ pointers.
static void aliases() {
    const unsigned n = 64;
    CUdeviceptr a, b, c;
    OK(cuMemAlloc(&a, n * 4));
    OK(cuMemAlloc(&b, n * 4));
    OK(cuMemAlloc(&c, n * 4));
    OK(cuMemsetD8(a, 0, n * 4));
    unsigned count = n;
    CHECK(launch("selftest_copy_restrict", 1, 1, 64, 1, {&a, &a, &count}) == CUDA_ERROR_INVALID_VALUE,
          "one buffer in two __restrict__ parameters");
    CHECK(launch("selftest_copy_from_restrict", 1, 1, 64, 1, {&a, &a, &count}) == CUDA_ERROR_INVALID_VALUE,
          "one buffer in a __restrict__ parameter and a written one");
    OK(launch("selftest_copy_restrict", 1, 1, 64, 1, {&a, &b, &count}));
    OK(launch("selftest_copy", 1, 1, 64, 1, {&b, &b, &count}));
    unsigned read[n];
    OK(cuMemcpyDtoH(read, b, sizeof read));
    CHECK(read[0] == 1u && read[n - 1] == 1u, "the copies: %u, %u", read[0], read[n - 1]);
    OK(launch("selftest_sum_restrict", 1, 1, 64, 1, {&b, &b, &c, &count}));
    OK(cuMemcpyDtoH(read, c, sizeof read));
    CHECK(read[0] == 2u && read[n - 1] == 2u, "one buffer read through two const __restrict__: %u, %u", read[0],
          read[n - 1]);
    OK(cuMemFree(c));
    OK(cuMemFree(a));
    OK(cuMemFree(b));
}

static void order() {
    const char* setting = std::getenv("FLUIDLAB_EMULATED_ORDER");
    std::string mode = setting && *setting ? setting : "forward";
    const unsigned blocks = 4, block = 64, n = blocks * block;
    for (const char* kernel : {"selftest_order", "selftest_order_barrier"}) {
        bool barrier = std::strcmp(kernel, "selftest_order_barrier") == 0;
        std::vector<unsigned> first = ordered(kernel, blocks, block), second = ordered(kernel, blocks, block);
        bool forward = true, reverse = true;
        for (unsigned i = 0; i < n; ++i) {
            forward = forward && first[i] == i;
            // As contexts, reverse runs the blocks last to first and each block's threads from
            // the first.
            unsigned b = i / block, t = i % block;
            reverse = reverse && first[i] == (barrier ? (blocks - 1 - b) * block + t : n - 1 - i);
        }
        if (mode == "forward") CHECK(forward, "%s: forward order", kernel);
        else if (mode == "reverse") CHECK(reverse, "%s: reverse order", kernel);
        else {
            CHECK(!forward && !reverse, "%s: a random order that is forward or reverse", kernel);
            CHECK(first != second, "%s: two launches in the same random order", kernel);
            // Thread by thread, the blocks interleave: block 0's threads do not take one
            // block's worth of consecutive numbers. As contexts, a block runs whole.
            unsigned low = n, high = 0;
            for (unsigned t = 0; t < block; ++t) {
                low = std::min(low, first[t]);
                high = std::max(high, first[t]);
            }
            if (barrier) CHECK(high - low == block - 1, "%s: block 0 interrupted", kernel);
            else CHECK(high - low > block - 1, "%s: block 0's threads in one run", kernel);
            // And the threads of a block in another order than their indices.
            bool in_order = true;
            for (unsigned t = 1; t < block; ++t) in_order = in_order && first[t] > first[t - 1];
            CHECK(!in_order, "%s: block 0's threads in index order", kernel);
            // As contexts, the blocks themselves in another order than their indices (in at
            // least one of the two launches: a block's numbers are one run, its place in the
            // order their first divided by the block size).
            if (barrier) {
                auto blocks_in_order = [&](const std::vector<unsigned>& read) {
                    for (unsigned b = 0; b < blocks; ++b)
                        if (read[b * block] / block != b) return false;
                    return true;
                };
                CHECK(!blocks_in_order(first) || !blocks_in_order(second), "%s: blocks run first to last", kernel);
            }
        }
    }
}

// Stream capture and graphs: a capture runs nothing, a replay runs the captured launches (and
// device-to-device copies) with
// the parameter values of the capture over the memory of the replay, a synchronous call
// invalidates the capture, and a graph whose buffer was freed is refused.
static void graphs() {
    CUstream stream;
    OK(cuStreamCreate(&stream, 0));
    const unsigned n = 1000;
    CUdeviceptr from, to;
    OK(cuMemAlloc(&from, n * 4));
    OK(cuMemAlloc(&to, n * 4));
    std::vector<unsigned> values(n), read(n);
    for (unsigned i = 0; i < n; ++i) values[i] = 3 * i + 1;
    OK(cuMemcpyHtoD(from, values.data(), n * 4));
    OK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    OK(cuStreamIsCapturing(stream, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE, "capture status %d", (int)status);
    OK(cuMemsetD32Async(to, 0, n, stream));
    unsigned count = n / 2;
    void* params[] = {&from, &to, &count};
    OK(cuLaunchKernel(function("selftest_copy"), 4, 1, 1, 256, 1, 1, 0, stream, params, nullptr));
    count = 7;  // after the capture took it: the graph keeps n / 2
    OK(cuMemcpyDtoDAsync(to + (n - 1) * 4, from, 4, stream));  // a copy node: to[n - 1] = from[0]
    CUgraph graph = nullptr;
    OK(cuStreamEndCapture(stream, &graph));
    CHECK(graph != nullptr, "no graph");
    OK(cuMemcpyDtoH(read.data(), to, n * 4));
    CHECK(read[0] == 0xffffffffu, "the capture ran its memset or launch: to[0] = %u", read[0]);
    CHECK(read[n - 1] == 0xffffffffu, "the capture ran its copy: to[n - 1] = %u", read[n - 1]);
    CUgraphExec exec = nullptr;
    OK(cuGraphInstantiateWithFlags(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
        OK(cuGraphLaunch(exec, stream));
        OK(cuStreamSynchronize(stream));
        OK(cuMemcpyDtoH(read.data(), to, n * 4));
        for (unsigned i = 0; i < n; ++i) {
            unsigned expected = i < n / 2 ? values[i] : i == n - 1 ? values[0] : 0;
            CHECK(read[i] == expected, "replay %d: to[%u] = %u, expected %u", replay, i, read[i], expected);
        }
        for (unsigned& v : values) v += 1000;  // the next replay reads what memory holds then
        OK(cuMemcpyHtoD(from, values.data(), n * 4));
    }
    // What a capture cannot hold invalidates it.
    for (int call = 0; call < 3; ++call) {
        OK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        CUresult refused = CUDA_SUCCESS;
        CUevent event = nullptr;
        if (call == 0) refused = cuMemcpyDtoH(read.data(), to, 4);
        if (call == 1) refused = cuStreamSynchronize(stream);
        if (call == 2) {
            OK(cuEventCreate(&event, 0));
            refused = cuEventRecord(event, stream);
        }
        CHECK(refused == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "call %d during a capture: %d", call, (int)refused);
        OK(cuStreamIsCapturing(stream, &status));
        CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED, "call %d: capture status %d", call, (int)status);
        CHECK(cuMemsetD32Async(to, 0, n, stream) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
              "call %d: a memset queued after the capture was invalidated", call);
        CUgraph none = reinterpret_cast<CUgraph>(1);
        CHECK(cuStreamEndCapture(stream, &none) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED && none == nullptr,
              "call %d: an invalidated capture gave a graph", call);
        if (event) OK(cuEventDestroy(event));
    }
    // A graph kept past its buffer's life.
    OK(cuMemFree(from));
    CHECK(cuGraphLaunch(exec, stream) == CUDA_ERROR_INVALID_VALUE, "a graph launch with a freed buffer");
    OK(cuGraphExecDestroy(exec));
    OK(cuGraphDestroy(graph));
    CHECK(cuGraphLaunch(exec, stream) == CUDA_ERROR_INVALID_HANDLE, "a destroyed graph's launch");
    OK(cuMemFree(to));
    OK(cuStreamDestroy(stream));
}

int main(int argc, char** argv) {
    OK(cuInit(0));
    CUdevice device;
    OK(cuDeviceGet(&device, 0));
    CUcontext context;
    OK(cuDevicePrimaryCtxRetain(&context, device));
    OK(cuCtxSetCurrent(context));
    // A module image names its kernels (as a cubin's string table or PTX's .entry lines do).
    const char* image =
        ".entry selftest_block_sum( .entry selftest_warp( .entry selftest_surface( .entry selftest_copy( "
        ".entry selftest_divergent_barrier( .entry selftest_shuffle_after_return( .entry selftest_surface_overrun( "
        ".entry selftest_divergent_shuffle( .entry selftest_shared_unwritten( .entry selftest_stack_address( "
        ".entry selftest_order( .entry selftest_order_barrier( .entry selftest_copy_restrict( "
        ".entry selftest_copy_from_restrict( .entry selftest_sum_restrict(";
    OK(cuModuleLoadData(&module, image));
    CUfunction missing;
    CHECK(cuModuleGetFunction(&missing, module, "selftest_nothing") == CUDA_ERROR_NOT_FOUND, "an unknown kernel");
    CUmodule unknown;
    CHECK(cuModuleLoadData(&unknown, ".entry nothing_here(") == CUDA_ERROR_INVALID_IMAGE,
          "an image no emulated module matches");
    if (argc > 1) {
        std::string fault = argv[1];
        CUdeviceptr out;
        OK(cuMemAlloc(&out, 1024 * 4));
        if (fault == "divergent-barrier") launch("selftest_divergent_barrier", 1, 1, 64, 1, {&out});
        if (fault == "shuffle-after-return") launch("selftest_shuffle_after_return", 1, 1, 32, 1, {&out});
        if (fault == "divergent-shuffle") launch("selftest_divergent_shuffle", 1, 1, 32, 1, {&out});
        if (fault == "buffer-overrun") {
            CUdeviceptr from, to;
            OK(cuMemAlloc(&from, 1000 * 4));
            OK(cuMemAlloc(&to, 100 * 4));
            unsigned n = 1000;
            launch("selftest_copy", 4, 1, 256, 1, {&from, &to, &n});
        }
        if (fault == "surface-overrun") {
            CUsurfObject surface;
            rgba8_array(8, 8, &surface);
            int width = 8;
            launch("selftest_surface_overrun", 1, 1, 1, 1, {&surface, &width});
        }
        std::fprintf(stderr, "the fault %s did not stop the process\n", fault.c_str());
        return 3;
    }
    block_sums();
    thread_stacks();
    warp_shuffles();
    surfaces();
    memory();
    shared_memory();
    graphs();
    order();
    aliases();
    if (failures) std::fprintf(stderr, "%d checks failed\n", failures);
    else std::printf("selftest: every check passed\n");
    return failures ? 1 : 0;
}
