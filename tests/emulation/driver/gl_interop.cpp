// The emulated driver's CUDA–GL interop (driver.cpp).
//
// By default cuGLGetDevices finds no CUDA device behind the current GL context, as the real
// driver does when the context is Mesa's, and registering a GL object is refused: the program
// takes its host-copy fallback. With FLUIDLAB_EMULATED_INTEROP=1 the current EGL context
// counts as on device 0 and interop is emulated with GL calls on that context:
//   - mapping a buffer gives a new device allocation of its size holding its contents (0xff
//     bytes instead under WRITE_DISCARD, so what a kernel leaves unwritten shows); unmapping
//     uploads the allocation into the buffer and frees it, so a kernel launched with the mapped
//     pointer after the unmap is refused as any freed pointer is;
//   - mapping a texture gives a CUDA array of its level 0 (RGBA8, RGBA32F, RG32F or R32F),
//     whose surface objects (registered with SURFACE_LDST only, as the real driver requires)
//     kernels write; unmapping uploads it and invalidates the array and those surfaces. The
//     next mapping returns the same array handle (as NVIDIA's driver usually does, though it
//     need not), so a surface object kept from an earlier mapping is caught every time.
#include "driver.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <set>
#include <vector>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace emulated;

typedef unsigned int GLenum;
typedef unsigned int GLuint;
typedef int GLint;
typedef long GLsizeiptr;
typedef long GLintptr;

constexpr GLenum GL_TEXTURE_2D = 0x0DE1, GL_TEXTURE_BINDING_2D = 0x8069, GL_TEXTURE_WIDTH = 0x1000,
                 GL_TEXTURE_HEIGHT = 0x1001, GL_TEXTURE_INTERNAL_FORMAT = 0x1003, GL_RGBA8 = 0x8058,
                 GL_RGBA32F = 0x8814, GL_RG32F = 0x8230, GL_R32F = 0x822E, GL_RGBA = 0x1908, GL_RG = 0x8227,
                 GL_RED = 0x1903, GL_UNSIGNED_BYTE = 0x1401, GL_FLOAT = 0x1406, GL_COPY_WRITE_BUFFER = 0x8F37,
                 GL_BUFFER_SIZE = 0x8764, GL_PIXEL_UNPACK_BUFFER = 0x88EC, GL_PIXEL_UNPACK_BUFFER_BINDING = 0x88EF,
                 GL_PIXEL_PACK_BUFFER = 0x88EB, GL_PIXEL_PACK_BUFFER_BINDING = 0x88ED,
                 GL_UNPACK_ALIGNMENT = 0x0CF5, GL_PACK_ALIGNMENT = 0x0D05;

struct Gl {
    void* (*eglGetCurrentContext)() = nullptr;
    void (*GetIntegerv)(GLenum, GLint*) = nullptr;
    unsigned char (*IsBuffer)(GLuint) = nullptr;
    unsigned char (*IsTexture)(GLuint) = nullptr;
    void (*BindBuffer)(GLenum, GLuint) = nullptr;
    void (*GetBufferParameteriv)(GLenum, GLenum, GLint*) = nullptr;
    void (*GetBufferSubData)(GLenum, GLintptr, GLsizeiptr, void*) = nullptr;
    void (*BufferSubData)(GLenum, GLintptr, GLsizeiptr, const void*) = nullptr;
    void (*BindTexture)(GLenum, GLuint) = nullptr;
    void (*GetTexLevelParameteriv)(GLenum, GLint, GLenum, GLint*) = nullptr;
    void (*GetTexImage)(GLenum, GLint, GLenum, GLenum, void*) = nullptr;
    void (*TexSubImage2D)(GLenum, GLint, GLint, GLint, int, int, GLenum, GLenum, const void*) = nullptr;
    void (*PixelStorei)(GLenum, GLint) = nullptr;
};

bool interop_on() {
    const char* on = std::getenv("FLUIDLAB_EMULATED_INTEROP");
    return on && std::strcmp(on, "1") == 0;
}

// The GL entry points of the current EGL context, or null when there is none.
const Gl* gl() {
    static Gl functions;
    static bool loaded = false;
    if (!loaded) {
        void* egl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!egl) return nullptr;  // not loaded yet: asked again at the next call
        loaded = true;
        auto get_proc = reinterpret_cast<void* (*)(const char*)>(dlsym(egl, "eglGetProcAddress"));
        functions.eglGetCurrentContext = reinterpret_cast<void* (*)()>(dlsym(egl, "eglGetCurrentContext"));
        auto find = [&](const char* name) {
            void* f = get_proc ? get_proc(name) : nullptr;
            return f ? f : dlsym(RTLD_DEFAULT, name);
        };
#define LOAD(name) functions.name = reinterpret_cast<decltype(functions.name)>(find("gl" #name))
        LOAD(GetIntegerv); LOAD(IsBuffer); LOAD(IsTexture); LOAD(BindBuffer); LOAD(GetBufferParameteriv);
        LOAD(GetBufferSubData); LOAD(BufferSubData); LOAD(BindTexture); LOAD(GetTexLevelParameteriv);
        LOAD(GetTexImage); LOAD(TexSubImage2D); LOAD(PixelStorei);
#undef LOAD
    }
    const Gl& f = functions;
    bool complete = f.eglGetCurrentContext && f.GetIntegerv && f.IsBuffer && f.IsTexture && f.BindBuffer &&
                    f.GetBufferParameteriv && f.GetBufferSubData && f.BufferSubData && f.BindTexture &&
                    f.GetTexLevelParameteriv && f.GetTexImage && f.TexSubImage2D && f.PixelStorei;
    if (!complete || f.eglGetCurrentContext() == nullptr) return nullptr;
    return &functions;
}

struct Resource {
    bool image;
    GLuint object;
    unsigned flags;
    bool mapped = false;
    CUdeviceptr pointer = 0;
    size_t bytes = 0;
    Array* array = nullptr;
    GLenum format = 0, type = 0;
};
std::set<Resource*> resources;

Resource* as_resource(CUgraphicsResource handle) {
    auto* r = reinterpret_cast<Resource*>(handle);
    return resources.count(r) ? r : nullptr;
}

// The texture's level-0 array shape and GL upload format, from its internal format.
bool texture_shape(const Gl& g, GLuint texture, CUDA_ARRAY_DESCRIPTOR* descriptor, GLenum* format, GLenum* type) {
    GLint previous, width = 0, height = 0, internal = 0;
    g.GetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
    g.BindTexture(GL_TEXTURE_2D, texture);
    g.GetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &width);
    g.GetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &height);
    g.GetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_INTERNAL_FORMAT, &internal);
    g.BindTexture(GL_TEXTURE_2D, previous);
    *descriptor = {};
    descriptor->Width = width;
    descriptor->Height = height;
    switch ((GLenum)internal) {
        case GL_RGBA8: descriptor->Format = CU_AD_FORMAT_UNSIGNED_INT8; descriptor->NumChannels = 4; *format = GL_RGBA; *type = GL_UNSIGNED_BYTE; break;
        case GL_RGBA32F: descriptor->Format = CU_AD_FORMAT_FLOAT; descriptor->NumChannels = 4; *format = GL_RGBA; *type = GL_FLOAT; break;
        case GL_RG32F: descriptor->Format = CU_AD_FORMAT_FLOAT; descriptor->NumChannels = 2; *format = GL_RG; *type = GL_FLOAT; break;
        case GL_R32F: descriptor->Format = CU_AD_FORMAT_FLOAT; descriptor->NumChannels = 1; *format = GL_RED; *type = GL_FLOAT; break;
        default: return false;
    }
    return true;
}

// Runs `f` with tight pixel rows and no pixel buffers bound, restoring GL's state after.
template <class F> void with_plain_pixels(const Gl& g, F f) {
    GLint unpack_buffer, pack_buffer, unpack_alignment, pack_alignment, texture;
    g.GetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &unpack_buffer);
    g.GetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer);
    g.GetIntegerv(GL_UNPACK_ALIGNMENT, &unpack_alignment);
    g.GetIntegerv(GL_PACK_ALIGNMENT, &pack_alignment);
    g.GetIntegerv(GL_TEXTURE_BINDING_2D, &texture);
    g.BindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    g.BindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    g.PixelStorei(GL_UNPACK_ALIGNMENT, 1);
    g.PixelStorei(GL_PACK_ALIGNMENT, 1);
    f();
    g.PixelStorei(GL_UNPACK_ALIGNMENT, unpack_alignment);
    g.PixelStorei(GL_PACK_ALIGNMENT, pack_alignment);
    g.BindBuffer(GL_PIXEL_UNPACK_BUFFER, unpack_buffer);
    g.BindBuffer(GL_PIXEL_PACK_BUFFER, pack_buffer);
    g.BindTexture(GL_TEXTURE_2D, texture);
}

CUresult map(const Gl& g, Resource& r) {
    bool discard = r.flags & CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD;
    if (!r.image) {
        GLint previous, size = 0;
        g.GetIntegerv(GL_COPY_WRITE_BUFFER, &previous);
        g.BindBuffer(GL_COPY_WRITE_BUFFER, r.object);
        g.GetBufferParameteriv(GL_COPY_WRITE_BUFFER, GL_BUFFER_SIZE, &size);
        if (CUresult result = allocate(&r.pointer, size)) return result;
        r.bytes = size;
        if (!discard && size > 0) g.GetBufferSubData(GL_COPY_WRITE_BUFFER, 0, size, reinterpret_cast<void*>(r.pointer));
        g.BindBuffer(GL_COPY_WRITE_BUFFER, previous);
        return CUDA_SUCCESS;
    }
    CUDA_ARRAY_DESCRIPTOR descriptor;
    if (!texture_shape(g, r.object, &descriptor, &r.format, &r.type))
        return refuse(CUDA_ERROR_NOT_SUPPORTED, "cuGraphicsMapResources: a texture format the emulation does not map");
    if (descriptor.Width == 0 || descriptor.Height == 0)
        return refuse(CUDA_ERROR_INVALID_VALUE, "cuGraphicsMapResources: a texture without storage");
    const CUDA_ARRAY_DESCRIPTOR* old = r.array ? &r.array->descriptor : nullptr;
    if (!old || old->Width != descriptor.Width || old->Height != descriptor.Height || old->Format != descriptor.Format ||
        old->NumChannels != descriptor.NumChannels) {
        if (r.array) delete_array(r.array);
        r.array = new_array(descriptor);
    }
    r.array->unmapped = false;
    r.array->mapped_from_gl = true;
    if (discard) std::memset(r.array->data, 0xff, r.array->pitch * r.array->rows);  // as at every map
    r.array->surface_writable = r.flags & CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST;
    if (!discard)
        with_plain_pixels(g, [&] {
            g.BindTexture(GL_TEXTURE_2D, r.object);
            g.GetTexImage(GL_TEXTURE_2D, 0, r.format, r.type, r.array->data);
        });
    return CUDA_SUCCESS;
}

void unmap(const Gl& g, Resource& r) {
    if (!r.image) {
        GLint previous;
        g.GetIntegerv(GL_COPY_WRITE_BUFFER, &previous);
        g.BindBuffer(GL_COPY_WRITE_BUFFER, r.object);
        if (r.bytes > 0) g.BufferSubData(GL_COPY_WRITE_BUFFER, 0, r.bytes, reinterpret_cast<void*>(r.pointer));
        g.BindBuffer(GL_COPY_WRITE_BUFFER, previous);
        release(r.pointer);
        r.pointer = 0;
        r.bytes = 0;
        return;
    }
    if (r.array) {
        with_plain_pixels(g, [&] {
            g.BindTexture(GL_TEXTURE_2D, r.object);
            g.TexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, r.array->descriptor.Width, r.array->descriptor.Height, r.format,
                            r.type, r.array->data);
        });
        invalidate_surfaces(r.array);
        r.array->unmapped = true;  // kept for the next mapping, unusable until then
    }
}

CUresult register_object(CUgraphicsResource* handle, GLuint object, bool image, unsigned flags) {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    const Gl* g = interop_on() ? gl() : nullptr;
    if (!g) return CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
    if (!(image ? g->IsTexture(object) : g->IsBuffer(object)))
        return refuse(CUDA_ERROR_INVALID_VALUE, std::string("cuGraphicsGLRegister") + (image ? "Image" : "Buffer") +
                                                    ": GL object " + std::to_string(object) + " is no " +
                                                    (image ? "texture" : "buffer") + " of the current context");
    auto* r = new Resource{image, object, flags};
    resources.insert(r);
    *handle = reinterpret_cast<CUgraphicsResource>(r);
    return CUDA_SUCCESS;
}

}  // namespace

EXPORT CUresult CUDAAPI cuGLGetDevices_v2(unsigned int* count, CUdevice* devices, unsigned int capacity, unsigned int) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard guard(lock);
    *count = interop_on() && gl() ? 1 : 0;
    if (*count && devices && capacity > 0) devices[0] = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphicsGLRegisterBuffer(CUgraphicsResource* handle, GLuint buffer, unsigned int flags) {
    return register_object(handle, buffer, false, flags);
}
EXPORT CUresult CUDAAPI cuGraphicsGLRegisterImage(CUgraphicsResource* handle, GLuint image, GLenum target,
                                                  unsigned int flags) {
    if (target != GL_TEXTURE_2D)
        return refuse(CUDA_ERROR_NOT_SUPPORTED, "cuGraphicsGLRegisterImage: only GL_TEXTURE_2D is emulated");
    return register_object(handle, image, true, flags);
}
EXPORT CUresult CUDAAPI cuGraphicsUnregisterResource(CUgraphicsResource handle) {
    std::lock_guard guard(lock);
    Resource* r = as_resource(handle);
    if (!r) return CUDA_ERROR_INVALID_HANDLE;
    if (r->mapped) {
        if (const Gl* g = gl()) unmap(*g, *r);
    }
    if (r->array) {
        r->array->mapped_from_gl = false;
        delete_array(r->array);
    }
    resources.erase(r);
    delete r;
    return CUDA_SUCCESS;
}
namespace {
// Runs `each` on every resource a map or unmap call names, on the current GL context; stops at
// the first failure.
template <class Each> CUresult each_resource(const char* call, unsigned count, CUgraphicsResource* handles, Each each) {
    std::lock_guard guard(lock);
    const Gl* g = gl();
    if (!g) return refuse(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, std::string(call) + " without a current GL context");
    for (unsigned i = 0; i < count; ++i) {
        Resource* r = as_resource(handles[i]);
        if (!r) return CUDA_ERROR_INVALID_HANDLE;
        if (CUresult result = each(*g, *r)) return result;
    }
    return CUDA_SUCCESS;
}
}  // namespace

EXPORT CUresult CUDAAPI cuGraphicsMapResources(unsigned int count, CUgraphicsResource* handles, CUstream) {
    return each_resource("cuGraphicsMapResources", count, handles, [](const Gl& g, Resource& r) {
        if (r.mapped) return CUDA_ERROR_ALREADY_MAPPED;
        if (CUresult result = map(g, r)) return result;
        r.mapped = true;
        if (tracing())
            std::fprintf(stderr, "emulated CUDA driver: mapped GL %s %u\n", r.image ? "texture" : "buffer", r.object);
        return CUDA_SUCCESS;
    });
}
EXPORT CUresult CUDAAPI cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource* handles, CUstream) {
    return each_resource("cuGraphicsUnmapResources", count, handles, [](const Gl& g, Resource& r) {
        if (!r.mapped) return CUDA_ERROR_NOT_MAPPED;
        unmap(g, r);
        r.mapped = false;
        return CUDA_SUCCESS;
    });
}
EXPORT CUresult CUDAAPI cuGraphicsResourceGetMappedPointer(CUdeviceptr* pointer, size_t* bytes,
                                                           CUgraphicsResource handle) {
    std::lock_guard guard(lock);
    Resource* r = as_resource(handle);
    if (!r) return CUDA_ERROR_INVALID_HANDLE;
    if (!r->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (r->image) return CUDA_ERROR_NOT_MAPPED_AS_POINTER;
    if (pointer) *pointer = r->pointer;
    if (bytes) *bytes = r->bytes;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuGraphicsSubResourceGetMappedArray(CUarray* array, CUgraphicsResource handle,
                                                            unsigned int index, unsigned int level) {
    std::lock_guard guard(lock);
    Resource* r = as_resource(handle);
    if (!array) return CUDA_ERROR_INVALID_VALUE;
    if (!r) return CUDA_ERROR_INVALID_HANDLE;
    if (!r->mapped) return CUDA_ERROR_NOT_MAPPED;
    if (!r->image) return CUDA_ERROR_NOT_MAPPED_AS_ARRAY;
    if (index != 0 || level != 0) return CUDA_ERROR_INVALID_VALUE;
    *array = reinterpret_cast<CUarray>(r->array);
    return CUDA_SUCCESS;
}
