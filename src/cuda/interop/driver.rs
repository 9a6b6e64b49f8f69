//! The CUDA driver's GL interop calls, resolved from libcuda by name (cudarc binds the driver
//! API without `cudaGL.h`): registration, mapping, surfaces, and the GPU of the current GL
//! context.

use super::{CallFailure, GlObject, GraphicsDriver, MappedArray, Mapping};
use crate::cuda::CudaError;
use cudarc::driver::sys;

type RegisterBuffer = unsafe extern "C" fn(*mut sys::CUgraphicsResource, u32, u32) -> sys::CUresult;
type RegisterImage =
    unsafe extern "C" fn(*mut sys::CUgraphicsResource, u32, u32, u32) -> sys::CUresult;
type GlGetDevices = unsafe extern "C" fn(*mut u32, *mut sys::CUdevice, u32, u32) -> sys::CUresult;

/// `CU_GL_DEVICE_LIST_ALL` (cudaGL.h): every CUDA device of the current GL context.
const CU_GL_DEVICE_LIST_ALL: u32 = 1;
/// `GL_TEXTURE_2D`, the target of the textures registered.
const GL_TEXTURE_2D: u32 = 0x0DE1;

/// The real driver. Its calls need the simulation's CUDA context current on the calling thread,
/// and registering and unregistering need the GL context that owns the object current too.
#[derive(Default)]
pub struct CudaGraphics;

impl CudaGraphics {
    /// Where `resource`, mapped, lies: a buffer's pointer, a texture's level-0 array.
    ///
    /// # Safety
    /// `resource` is mapped and is the registration of `object`.
    unsafe fn mapping_of(
        resource: sys::CUgraphicsResource,
        object: GlObject,
    ) -> Result<Mapping, CallFailure> {
        match object {
            GlObject::Buffer(_) => {
                let (mut pointer, mut bytes) = (0, 0);
                // SAFETY: a mapped buffer registration; valid out-pointers.
                unsafe {
                    sys::cuGraphicsResourceGetMappedPointer_v2(&mut pointer, &mut bytes, resource)
                }
                .result()
                .map_err(|e| CallFailure::of("cuGraphicsResourceGetMappedPointer", e))?;
                Ok(Mapping::Buffer { pointer, bytes })
            }
            GlObject::Texture2d(_) => {
                let mut array: sys::CUarray = std::ptr::null_mut();
                // SAFETY: a mapped image registration; array index 0 and level 0 exist in
                // every 2D texture with storage.
                unsafe { sys::cuGraphicsSubResourceGetMappedArray(&mut array, resource, 0, 0) }
                    .result()
                    .map_err(|e| CallFailure::of("cuGraphicsSubResourceGetMappedArray", e))?;
                let mut descriptor = std::mem::MaybeUninit::<sys::CUDA_ARRAY_DESCRIPTOR>::uninit();
                // SAFETY: `array` is the live array just returned; the descriptor is written
                // whole on success.
                let descriptor = unsafe {
                    sys::cuArrayGetDescriptor_v2(descriptor.as_mut_ptr(), array)
                        .result()
                        .map_err(|e| CallFailure::of("cuArrayGetDescriptor", e))?;
                    descriptor.assume_init()
                };
                Ok(Mapping::Array(MappedArray {
                    array,
                    width: descriptor.Width,
                    height: descriptor.Height,
                }))
            }
        }
    }
}

impl GraphicsDriver for CudaGraphics {
    fn register(&mut self, object: GlObject) -> Result<sys::CUgraphicsResource, String> {
        let mut resource: sys::CUgraphicsResource = std::ptr::null_mut();
        let (call, result) = match object {
            GlObject::Buffer(buffer) => {
                let call = "cuGraphicsGLRegisterBuffer";
                // SAFETY: the symbol has this C signature in cudaGL.h; libcuda is loaded (a
                // context exists); `resource` is a valid out-pointer.
                let result = unsafe {
                    let register = *sys::culib()
                        .get::<RegisterBuffer>(b"cuGraphicsGLRegisterBuffer\0")
                        .map_err(|e| format!("libcuda has no {call}: {e}"))?;
                    register(
                        &mut resource,
                        buffer,
                        sys::CUgraphicsRegisterFlags::CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD
                            as u32,
                    )
                };
                (call, result)
            }
            GlObject::Texture2d(texture) => {
                let call = "cuGraphicsGLRegisterImage";
                // Kernels write the texture through a surface (SURFACE_LDST) and never read
                // what GL left in it (WRITE_DISCARD).
                let flags = sys::CUgraphicsRegisterFlags::CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST
                    as u32
                    | sys::CUgraphicsRegisterFlags::CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD as u32;
                // SAFETY: as for buffers, with cudaGL.h's signature of the image call.
                let result = unsafe {
                    let register = *sys::culib()
                        .get::<RegisterImage>(b"cuGraphicsGLRegisterImage\0")
                        .map_err(|e| format!("libcuda has no {call}: {e}"))?;
                    register(&mut resource, texture, GL_TEXTURE_2D, flags)
                };
                (call, result)
            }
        };
        result
            .result()
            .map_err(|e| format!("{call} refused {object}: {e}"))?;
        Ok(resource)
    }

    unsafe fn map(
        &mut self,
        mut resource: sys::CUgraphicsResource,
        object: GlObject,
        stream: sys::CUstream,
    ) -> Result<Mapping, CallFailure> {
        // SAFETY: the caller's promise: a live registration, a stream of the current context.
        unsafe { sys::cuGraphicsMapResources(1, &mut resource, stream) }
            .result()
            .map_err(|e| CallFailure::of("cuGraphicsMapResources", e))?;
        // SAFETY: mapped just above, and registered for `object`.
        let mapping = unsafe { Self::mapping_of(resource, object) };
        if mapping.is_err() {
            // SAFETY: mapped on this stream just above.
            unsafe { sys::cuGraphicsUnmapResources(1, &mut resource, stream) };
        }
        mapping
    }

    unsafe fn unmap(
        &mut self,
        mut resource: sys::CUgraphicsResource,
        stream: sys::CUstream,
    ) -> Result<(), CallFailure> {
        // SAFETY: the caller's promise: mapped on this stream by `map`.
        unsafe { sys::cuGraphicsUnmapResources(1, &mut resource, stream) }
            .result()
            .map_err(|e| CallFailure::of("cuGraphicsUnmapResources", e))
    }

    unsafe fn unregister(&mut self, resource: sys::CUgraphicsResource) {
        // SAFETY: the caller's promise: a live, unmapped registration; failure leaves nothing
        // to clean up.
        unsafe {
            sys::cuGraphicsUnregisterResource(resource);
        }
    }
}

/// A surface object over `array` (a mapped texture's level 0, registered with SURFACE_LDST by
/// [`GlInterop::write_texture`]), for kernels' `surf2Dwrite`; destroy it with
/// `cuSurfObjectDestroy` once the stream that used it is synchronised.
pub fn create_surface(array: sys::CUarray) -> Result<u64, CudaError> {
    // SAFETY: a zeroed descriptor is valid plain data; the fields set below make it an array
    // resource.
    let mut descriptor: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
    descriptor.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
    descriptor.res.array.hArray = array;
    let mut surface: sys::CUsurfObject = 0;
    // SAFETY: valid out-pointer and descriptor; `array` is a mapped array registered with
    // SURFACE_LDST (GlInterop::write_texture).
    unsafe { sys::cuSurfObjectCreate(&mut surface, &descriptor) }
        .result()
        .map_err(CudaError::driver("cuSurfObjectCreate"))?;
    Ok(surface)
}

/// The CUDA ordinal of the GPU that renders the OpenGL context current on this thread
/// (`cuGLGetDevices`), or `None`: no CUDA driver, no current context, or a context on another
/// vendor's GPU or a software renderer (Mesa), where interop cannot work anyway.
pub fn gl_device() -> Option<usize> {
    if crate::cuda::unavailable().is_some() {
        return None;
    }
    // SAFETY: cudaGL.h's signature (cuGLGetDevices is a macro for the _v2 symbol); libcuda is
    // loaded and initialised (checked above); every out-pointer is valid.
    unsafe {
        let get_devices = *sys::culib()
            .get::<GlGetDevices>(b"cuGLGetDevices_v2\0")
            .ok()?;
        let mut count = 0u32;
        let mut devices: [sys::CUdevice; 8] = [0; 8];
        get_devices(
            &mut count,
            devices.as_mut_ptr(),
            devices.len() as u32,
            CU_GL_DEVICE_LIST_ALL,
        )
        .result()
        .ok()?;
        if count == 0 {
            return None;
        }
        let mut ordinals = 0;
        sys::cuDeviceGetCount(&mut ordinals).result().ok()?;
        (0..ordinals).find_map(|ordinal| {
            let mut device: sys::CUdevice = 0;
            let found = sys::cuDeviceGet(&mut device, ordinal).result().is_ok();
            (found && device == devices[0]).then_some(ordinal as usize)
        })
    }
}
