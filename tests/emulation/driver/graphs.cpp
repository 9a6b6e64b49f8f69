// Stream capture and CUDA graphs for the emulated driver (driver.cpp): what a program's
// `cuStreamBeginCapture … cuStreamEndCapture → cuGraphInstantiate → cuGraphLaunch` does.
//
//   - While a stream captures, a kernel launch, a memset or a device-to-device copy queued on it
//     runs nothing: it becomes a node of the graph, the launch's parameter values copied (as the driver copies
//     kernelParams at capture), its shape and pointers checked then as a launch's are.
//   - What a capture cannot hold is refused and invalidates the capture, so cuStreamEndCapture
//     returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph, as the real driver does:
//     synchronous calls (copies, memsets, allocations, frees, synchronisations, event queries)
//     while this thread captures in global or thread-local mode; on the capturing stream, what
//     the emulation does not record (copies from or to the host, event records and waits, host functions) —
//     stricter than the driver, which captures those as nodes, and said so in the message.
//     Launches and memsets on a stream whose capture is invalidated return
//     CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, as the driver's do.
//   - cuGraphLaunch runs the nodes in order, each checked again as it runs: a pointer captured
//     into the graph and freed since, the fault of a graph kept past its buffers' lives, is
//     refused with the node and the parameter named.
//   - FLUIDLAB_EMULATED_CAPTURE_LIMIT=N refuses every capture's launch after its N-th;
//     FLUIDLAB_EMULATED_REFUSE_CAPTURE=N the N-th capture only, at its end (cuStreamEndCapture).
//   - Under FLUIDLAB_EMULATED_TRACE each cuStreamBeginCapture and cuGraphLaunch is named on
//     stderr, so a test can count captures and replays.
#include <cuda.h>

#include "driver.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

namespace emulated {

namespace {

struct Node {
    bool kernel = true;
    // A device-to-device copy of `count` bytes from `from` to `to` (not a kernel, not a memset).
    bool copy = false;
    CUdeviceptr from = 0;
    // A kernel: its function, shape and each parameter's bytes as captured.
    CUfunction function = nullptr;
    EmulatedLaunch shape{};
    std::vector<std::vector<unsigned char>> values;
    // A memset of `count` elements of `width` bytes (1 or 4) to `value`.
    CUdeviceptr to = 0;
    unsigned value = 0, width = 1;
    size_t count = 0;
};

struct Graph { std::vector<Node> nodes; };
struct Exec { std::vector<Node> nodes; };

struct Capture {
    Graph* graph;
    CUstreamCaptureMode mode;
    std::thread::id thread;
    bool invalidated = false;
    // Captures begun in this process before it and it: 1 for the first.
    unsigned long long ordinal = 0;
};
unsigned long long captures_begun = 0;

std::map<CUstream, Capture> captures;
std::set<Graph*> graphs;
std::set<Exec*> execs;

CUresult invalidate(Capture& capture, CUresult code, const std::string& why) {
    capture.invalidated = true;
    return refuse(code, why + " (the capture is invalidated: cuStreamEndCapture will return no graph)");
}

}  // namespace

CUresult capture_launch(CUstream stream, CUfunction function, const EmulatedLaunch& shape, void** params,
                        bool* captured) {
    std::lock_guard guard(lock);
    auto at = captures.find(stream);
    *captured = at != captures.end();
    if (!*captured) return CUDA_SUCCESS;
    // As the driver: work queued on a stream whose capture is invalidated is refused.
    if (at->second.invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    // FLUIDLAB_EMULATED_CAPTURE_LIMIT=N: a capture's launch after its N-th is refused, as a
    // driver refusing something in the middle of a frame would (the program's fallback).
    static const char* limit = std::getenv("FLUIDLAB_EMULATED_CAPTURE_LIMIT");
    if (limit && at->second.graph->nodes.size() >= std::strtoull(limit, nullptr, 10))
        return invalidate(at->second, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                          std::string("FLUIDLAB_EMULATED_CAPTURE_LIMIT=") + limit + ": a capture's launch refused");
    Node node;
    node.function = function;
    node.shape = shape;
    std::vector<size_t> sizes = kernel_param_sizes(function);
    for (size_t i = 0; i < sizes.size(); ++i) {
        auto* from = static_cast<const unsigned char*>(params[i]);
        node.values.emplace_back(from, from + sizes[i]);
    }
    at->second.graph->nodes.push_back(std::move(node));
    return CUDA_SUCCESS;
}

CUresult capture_memset(CUstream stream, CUdeviceptr to, unsigned value, size_t count, unsigned width,
                        bool* captured) {
    std::lock_guard guard(lock);
    auto at = captures.find(stream);
    *captured = at != captures.end();
    if (!*captured) return CUDA_SUCCESS;
    if (at->second.invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    Node node;
    node.kernel = false;
    node.to = to;
    node.value = value;
    node.count = count;
    node.width = width;
    at->second.graph->nodes.push_back(node);
    return CUDA_SUCCESS;
}

CUresult capture_copy(CUstream stream, CUdeviceptr to, CUdeviceptr from, size_t bytes, bool* captured) {
    std::lock_guard guard(lock);
    auto at = captures.find(stream);
    *captured = at != captures.end();
    if (!*captured) return CUDA_SUCCESS;
    if (at->second.invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (CUresult r = check_range("cuMemcpyDtoDAsync (captured)", to, bytes)) return invalidate(at->second, r, "a captured copy's destination");
    if (CUresult r = check_range("cuMemcpyDtoDAsync (captured)", from, bytes)) return invalidate(at->second, r, "a captured copy's source");
    Node node;
    node.kernel = false;
    node.copy = true;
    node.to = to;
    node.from = from;
    node.count = bytes;
    at->second.graph->nodes.push_back(node);
    return CUDA_SUCCESS;
}

CUresult refuse_on_capturing_stream(const char* call, CUstream stream) {
    std::lock_guard guard(lock);
    auto at = captures.find(stream);
    if (at == captures.end()) return CUDA_SUCCESS;
    return invalidate(at->second, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                      std::string(call) + " on a capturing stream (not capturable, or not by the emulation, which "
                                          "captures only kernel launches and memsets)");
}

CUresult refuse_while_capturing(const char* call) {
    std::lock_guard guard(lock);
    for (auto& [stream, capture] : captures) {
        bool binds = capture.mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
                     (capture.mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && capture.thread == std::this_thread::get_id());
        if (binds)
            return invalidate(capture, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                              std::string(call) + " while a stream captures (not allowed in its capture mode)");
    }
    return CUDA_SUCCESS;
}

}  // namespace emulated

using namespace emulated;

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode) {
    std::lock_guard guard(lock);
    if (stream == nullptr)
        return refuse(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuStreamBeginCapture on the legacy default stream");
    if (captures.count(stream)) return refuse(CUDA_ERROR_ILLEGAL_STATE, "cuStreamBeginCapture on a capturing stream");
    auto* graph = new Graph;
    graphs.insert(graph);
    captures.emplace(stream, Capture{graph, mode, std::this_thread::get_id(), false, ++captures_begun});
    if (tracing()) std::fprintf(stderr, "emulated CUDA driver: cuStreamBeginCapture\n");
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph* out) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    *out = nullptr;
    auto at = captures.find(stream);
    if (at == captures.end()) return refuse(CUDA_ERROR_ILLEGAL_STATE, "cuStreamEndCapture on a stream not capturing");
    Capture capture = at->second;
    if (capture.mode != CU_STREAM_CAPTURE_MODE_RELAXED && capture.thread != std::this_thread::get_id())
        return refuse(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "cuStreamEndCapture from another thread");
    captures.erase(at);
    // FLUIDLAB_EMULATED_REFUSE_CAPTURE=N: the N-th capture is refused at its end, all its work
    // recorded (the captures before and after it are not), so a test can choose the frame whose
    // capture fails, after the program's recording has run whole.
    static const char* refused = std::getenv("FLUIDLAB_EMULATED_REFUSE_CAPTURE");
    bool chosen = refused && capture.ordinal == std::strtoull(refused, nullptr, 10);
    if (capture.invalidated || chosen) {
        graphs.erase(capture.graph);
        delete capture.graph;
        if (chosen && !capture.invalidated)
            return refuse(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                          std::string("FLUIDLAB_EMULATED_REFUSE_CAPTURE=") + refused + ": this capture refused at its end");
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *out = reinterpret_cast<CUgraph>(capture.graph);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
    if (!status) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    auto at = captures.find(stream);
    *status = at == captures.end()     ? CU_STREAM_CAPTURE_STATUS_NONE
              : at->second.invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                       : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* out, CUgraph handle, unsigned long long) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    auto* graph = reinterpret_cast<Graph*>(handle);
    if (!graphs.count(graph)) return refuse(CUDA_ERROR_INVALID_HANDLE, "cuGraphInstantiate of no live graph");
    auto* exec = new Exec{graph->nodes};
    execs.insert(exec);
    // Under FLUIDLAB_EMULATED_TRACE, each instantiation and graph launch is named with its
    // nodes, so a test can count captures and replays.
    if (tracing()) std::fprintf(stderr, "emulated CUDA driver: cuGraphInstantiate %zu nodes\n", exec->nodes.size());
    *out = reinterpret_cast<CUgraphExec>(exec);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphUpload(CUgraphExec handle, CUstream) {
    std::lock_guard guard(lock);
    return execs.count(reinterpret_cast<Exec*>(handle)) ? CUDA_SUCCESS
                                                         : refuse(CUDA_ERROR_INVALID_HANDLE, "cuGraphUpload of no live graph");
}

EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec handle, CUstream stream) {
    std::lock_guard guard(lock);
    auto* exec = reinterpret_cast<Exec*>(handle);
    if (!execs.count(exec)) return refuse(CUDA_ERROR_INVALID_HANDLE, "cuGraphLaunch of no live executable graph");
    if (CUresult r = refuse_on_capturing_stream("cuGraphLaunch", stream)) return r;
    if (tracing()) std::fprintf(stderr, "emulated CUDA driver: cuGraphLaunch %zu nodes\n", exec->nodes.size());
    for (size_t i = 0; i < exec->nodes.size(); ++i) {
        const Node& node = exec->nodes[i];
        std::string where = "cuGraphLaunch, node " + std::to_string(i) + ": ";
        if (node.copy) {
            if (CUresult r = check_range((where + "copy to").c_str(), node.to, node.count)) return r;
            if (CUresult r = check_range((where + "copy from").c_str(), node.from, node.count)) return r;
            std::memmove(reinterpret_cast<void*>(node.to), reinterpret_cast<const void*>(node.from), node.count);
            continue;
        }
        if (!node.kernel) {
            if (CUresult r = check_range((where + "memset").c_str(), node.to, node.count * node.width)) return r;
            if (node.width == 1) std::memset(reinterpret_cast<void*>(node.to), (int)node.value, node.count);
            else
                for (size_t k = 0; k < node.count; ++k) reinterpret_cast<unsigned*>(node.to)[k] = node.value;
            continue;
        }
        std::vector<void*> params;
        for (const auto& value : node.values) params.push_back(const_cast<unsigned char*>(value.data()));
        if (CUresult r = check_launch(node.function, node.shape, params.data(), where)) return r;
        run_kernel(node.function, node.shape, params.data(), "(graph node)");
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec handle) {
    std::lock_guard guard(lock);
    auto* exec = reinterpret_cast<Exec*>(handle);
    if (!execs.erase(exec)) return refuse(CUDA_ERROR_INVALID_HANDLE, "cuGraphExecDestroy of no live executable graph");
    delete exec;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph handle) {
    std::lock_guard guard(lock);
    auto* graph = reinterpret_cast<Graph*>(handle);
    if (!graphs.erase(graph)) return refuse(CUDA_ERROR_INVALID_HANDLE, "cuGraphDestroy of no live graph");
    delete graph;
    return CUDA_SUCCESS;
}
