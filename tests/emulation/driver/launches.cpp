// Modules and kernel launches for the emulated driver (driver.cpp): a module image the program
// loads is matched to the libfluidlab_kernels_<module>.so beside this library that holds every
// kernel it names; a launch is checked against the device's limits, the kernel's
// __launch_bounds__ and the live allocations, then run on the CPU (kernels.cpp, threads.h) or,
// while its stream captures, recorded into the graph (graphs.cpp).
#include <cuda.h>

#include "driver.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace emulated {

namespace {

struct Module;
struct Function { Module* module; int index; std::string name; unsigned max_threads; };
struct Module {
    std::string name;
    void* library = nullptr;
    EmulatedKernelName kernel_name = nullptr;
    EmulatedKernelCount kernel_count = nullptr;
    EmulatedKernelMaxThreads kernel_max_threads = nullptr;
    EmulatedCheckPointers check_pointers = nullptr;
    EmulatedCheckAliases check_aliases = nullptr;
    EmulatedParamSizes param_sizes = nullptr;
    EmulatedRun run = nullptr;
    std::vector<Function> functions;
};
std::vector<Module*> modules;  // every kernels library found, loaded once
bool modules_loaded = false;

std::string own_directory() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return ".";
    std::string path = info.dli_fname;
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

void load_modules() {
    if (modules_loaded) return;
    modules_loaded = true;
    std::string directory = own_directory();
    DIR* dir = opendir(directory.c_str());
    if (dir == nullptr) return;
    const std::string prefix = "libfluidlab_kernels_", suffix = ".so";
    while (dirent* item = readdir(dir)) {
        std::string file = item->d_name;
        if (file.rfind(prefix, 0) != 0 || file.size() <= prefix.size() + suffix.size() ||
            file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        std::string path = directory + "/" + file;
        void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            std::fprintf(stderr, "emulated CUDA driver: cannot load %s: %s\n", path.c_str(), dlerror());
            continue;
        }
        auto* m = new Module;
        m->name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
        m->library = library;
        m->kernel_count = reinterpret_cast<EmulatedKernelCount>(dlsym(library, "fluidlab_kernel_count"));
        m->kernel_name = reinterpret_cast<EmulatedKernelName>(dlsym(library, "fluidlab_kernel_name"));
        m->kernel_max_threads = reinterpret_cast<EmulatedKernelMaxThreads>(dlsym(library, "fluidlab_kernel_max_threads"));
        m->check_pointers = reinterpret_cast<EmulatedCheckPointers>(dlsym(library, "fluidlab_kernel_check_pointers"));
        m->param_sizes = reinterpret_cast<EmulatedParamSizes>(dlsym(library, "fluidlab_kernel_param_sizes"));
        m->check_aliases = reinterpret_cast<EmulatedCheckAliases>(dlsym(library, "fluidlab_kernel_check_aliases"));
        m->run = reinterpret_cast<EmulatedRun>(dlsym(library, "fluidlab_kernel_run"));
        if (!m->kernel_count || !m->kernel_name || !m->kernel_max_threads || !m->check_pointers || !m->check_aliases || !m->param_sizes ||
            !m->run) {
            std::fprintf(stderr, "emulated CUDA driver: %s lacks the kernels interface\n", path.c_str());
            delete m;
            continue;
        }
        for (int k = 0; k < m->kernel_count(); ++k)
            m->functions.push_back(Function{m, k, m->kernel_name(k), m->kernel_max_threads(k)});
        modules.push_back(m);
    }
    closedir(dir);
}

// The bytes of a module image: an ELF cubin's extent from its header, else text up to its NUL.
std::string image_bytes(const void* image) {
    auto* bytes = static_cast<const unsigned char*>(image);
    if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0 && bytes[4] == 2) {
        unsigned long long section_table;
        unsigned short entry_size, entries;
        std::memcpy(&section_table, bytes + 0x28, 8);
        std::memcpy(&entry_size, bytes + 0x3a, 2);
        std::memcpy(&entries, bytes + 0x3c, 2);
        return std::string(reinterpret_cast<const char*>(bytes), section_table + (size_t)entry_size * entries);
    }
    return std::string(reinterpret_cast<const char*>(bytes));
}

bool is_name_char(char c) { return std::isalnum((unsigned char)c) || c == '_'; }

// Whether `name` occurs in `image` as a whole word.
bool holds_name(const std::string& image, const std::string& name) {
    for (size_t at = image.find(name); at != std::string::npos; at = image.find(name, at + 1)) {
        bool starts = at == 0 || !is_name_char(image[at - 1]);
        bool ends = at + name.size() == image.size() || !is_name_char(image[at + name.size()]);
        if (starts && ends) return true;
    }
    return false;
}


}  // namespace

}  // namespace emulated

using namespace emulated;

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    load_modules();
    std::string bytes = image_bytes(image);
    Module* best = nullptr;
    for (Module* m : modules) {
        bool all = !m->functions.empty();
        for (const Function& f : m->functions) all = all && holds_name(bytes, f.name);
        if (all && (!best || m->functions.size() > best->functions.size())) best = m;
    }
    if (!best)
        return refuse(CUDA_ERROR_INVALID_IMAGE, "no emulated kernels library (libfluidlab_kernels_*.so beside "
                                                "this libcuda.so) has every kernel the module image names");
    *module = reinterpret_cast<CUmodule>(best);
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*, void**) {
    return cuModuleLoadData(module, image);
}
EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
    if (!function || !module || !name) return CUDA_ERROR_INVALID_VALUE;
    auto* m = reinterpret_cast<Module*>(module);
    for (Function& f : m->functions)
        if (f.name == name) {
            *function = reinterpret_cast<CUfunction>(&f);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function) {
    if (!value || !function) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
            *value = (int)reinterpret_cast<Function*>(function)->max_threads;
            break;
        case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = 90; break;
        default: *value = 0;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction, CUfunc_cache) { return CUDA_SUCCESS; }

namespace emulated {

CUresult check_launch(CUfunction function, const EmulatedLaunch& shape, void** params, const std::string& place) {
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    auto* f = reinterpret_cast<Function*>(function);
    std::string where = place + "kernel `" + f->name + "`";
    auto [gx, gy, gz] = shape.grid;
    auto [bx, by, bz] = shape.block;
    unsigned long long threads = (unsigned long long)bx * by * bz;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bz > 64 || gy > 65535 || gz > 65535 ||
        gx > 0x7fffffffu || bx > 1024 || by > 1024)
        return refuse(CUDA_ERROR_INVALID_VALUE, where + ": launch shape grid (" + std::to_string(gx) + ", " +
                                                    std::to_string(gy) + ", " + std::to_string(gz) + ") block (" +
                                                    std::to_string(bx) + ", " + std::to_string(by) + ", " +
                                                    std::to_string(bz) + ") is outside the device's limits");
    if (threads > (unsigned long long)max_threads_per_block)
        return refuse(CUDA_ERROR_INVALID_VALUE, where + ": " + std::to_string(threads) + " threads per block");
    // ptxas sized the kernel's registers for its __launch_bounds__: more threads do not fit.
    if (threads > f->max_threads)
        return refuse(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, where + ": " + std::to_string(threads) +
                                                              " threads per block, over its __launch_bounds__ of " +
                                                              std::to_string(f->max_threads));
    if (shape.shared_bytes > (unsigned)max_dynamic_shared)
        return refuse(CUDA_ERROR_INVALID_VALUE,
                      where + ": " + std::to_string(shape.shared_bytes) + " bytes of dynamic shared memory");
    if (!params) return refuse(CUDA_ERROR_INVALID_VALUE, where + ": no kernel parameters");
    std::lock_guard guard(lock);
    int bad = f->module->check_pointers(f->index, params, pointer_is_valid);
    if (bad >= 0) {
        unsigned long long value;
        std::memcpy(&value, params[bad], sizeof value);
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", value);
        return refuse(CUDA_ERROR_INVALID_VALUE, where + ": parameter " + std::to_string(bad) + " is a pointer, and " +
                                                    hex + " is in no live device allocation");
    }
    // nvcc may read a const __restrict__ parameter through the read-only cache, and keep any
    // restricted value in registers: another parameter at the same address, written by the
    // same launch, is undefined behaviour that only a GPU shows (stale reads).
    int alias = f->module->check_aliases(f->index, params);
    if (alias >= 0) {
        int a = alias / 256, b = alias % 256;
        unsigned long long value;
        std::memcpy(&value, params[a], sizeof value);
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", value);
        return refuse(CUDA_ERROR_INVALID_VALUE, where + ": parameters " + std::to_string(a) + " and " +
                                                    std::to_string(b) + " are both " + hex +
                                                    ", one __restrict__ and one written: they must not alias");
    }
    return CUDA_SUCCESS;
}

void run_kernel(CUfunction function, const EmulatedLaunch& shape, void** params, const char* note) {
    std::lock_guard guard(lock);
    auto* f = reinterpret_cast<Function*>(function);
    if (tracing())
        std::fprintf(stderr, "emulated CUDA driver: kernel `%s` grid %u×%u×%u block %u×%u×%u%s%s\n", f->name.c_str(),
                     shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1], shape.block[2],
                     *note ? " " : "", note);
    f->module->run(f->index, &shape, params);
}

std::vector<size_t> kernel_param_sizes(CUfunction function) {
    auto* f = reinterpret_cast<Function*>(function);
    std::vector<size_t> sizes(64);
    int count = f->module->param_sizes(f->index, sizes.data(), (int)sizes.size());
    if (count > (int)sizes.size()) {
        sizes.resize(count);
        f->module->param_sizes(f->index, sizes.data(), count);
    }
    sizes.resize(count);
    return sizes;
}

}  // namespace emulated

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy, unsigned int gz,
                                      unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                                      CUstream stream, void** params, void** extra) {
    if (extra != nullptr && function)
        return refuse(CUDA_ERROR_NOT_SUPPORTED,
                      "kernel `" + reinterpret_cast<Function*>(function)->name + "`: `extra` launch arguments");
    EmulatedLaunch launch{{gx, gy, gz}, {bx, by, bz}, shared_bytes};
    std::lock_guard guard(lock);
    if (CUresult r = check_launch(function, launch, params, "")) return r;
    bool captured;
    if (CUresult r = capture_launch(stream, function, launch, params, &captured); r || captured) return r;
    run_kernel(function, launch, params, "");
    return CUDA_SUCCESS;
}
