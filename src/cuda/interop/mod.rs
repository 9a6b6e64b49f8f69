//! CUDA–OpenGL interop: a renderer's GL buffer or 2D texture, registered once with
//! `cuGraphicsGLRegisterBuffer` / `cuGraphicsGLRegisterImage` and mapped once per frame on the
//! simulation stream, so the last kernel of a frame writes straight into it (PBF's particle
//! records into a vertex buffer; a 2D grid into a texture through its mapped CUDA array).
//!
//! cudarc binds the driver API without `cudaGL.h`, so the GL entry points are resolved from
//! libcuda by name (`shared/recipes/interop_probe` proved the buffer path on an H200; the
//! texture path has not run on a GPU yet). The driver calls go through [`GraphicsDriver`], so
//! the fallbacks can be tested without a GPU.
//!
//! `driver.rs` holds the real driver calls ([`CudaGraphics`], surfaces, the GL context's GPU);
//! this file the registration's life: register once, map per frame, renew, release.

mod driver;
mod surface;
#[cfg(test)]
mod tests;

pub use driver::{create_surface, gl_device, CudaGraphics};
pub use surface::MappedSurface;

use super::launch::is_execution_error;
use super::CudaError;
use cudarc::driver::sys;

/// A GL object CUDA writes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlObject {
    /// A buffer object (`glGenBuffers`), mapped as a device pointer.
    Buffer(u32),
    /// A 2D texture (`GL_TEXTURE_2D`), its level 0 mapped as a CUDA array.
    Texture2d(u32),
}

impl std::fmt::Display for GlObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GlObject::Buffer(id) => write!(f, "GL buffer {id}"),
            GlObject::Texture2d(id) => write!(f, "GL texture {id}"),
        }
    }
}

/// A mapped texture's level 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MappedArray {
    /// The CUDA array: the source of a `cuSurfObjectCreate` for kernels to write with
    /// `surf2Dwrite`, or the destination of a `cuMemcpy2D`.
    pub array: sys::CUarray,
    /// Texels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

/// Where a mapped GL object lies for CUDA.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mapping {
    /// A buffer: its device pointer and size in bytes.
    Buffer {
        /// Device pointer.
        pointer: sys::CUdeviceptr,
        /// Size in bytes.
        bytes: usize,
    },
    /// A texture's level 0.
    Array(MappedArray),
}

impl Mapping {
    /// Whether the mapping holds nothing (storage not yet specified).
    fn is_empty(&self) -> bool {
        match self {
            Mapping::Buffer { bytes, .. } => *bytes == 0,
            Mapping::Array(array) => array.width == 0 || array.height == 0,
        }
    }
}

/// A failed driver call: its result code and a sentence naming the call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallFailure {
    /// The driver's result.
    pub code: sys::CUresult,
    /// "cuGraphicsMapResources: ...".
    pub message: String,
}

impl CallFailure {
    fn of(call: &str, error: cudarc::driver::DriverError) -> Self {
        CallFailure {
            code: error.0,
            message: format!("{call}: {error}"),
        }
    }
}

/// The graphics-interop calls of the CUDA driver API ([`CudaGraphics`]; tests use a stand-in).
pub trait GraphicsDriver {
    /// Registers `object` for writing (`cuGraphicsGLRegisterBuffer`,
    /// `cuGraphicsGLRegisterImage`).
    fn register(&mut self, object: GlObject) -> Result<sys::CUgraphicsResource, String>;
    /// Maps `resource`, the registration of `object`, on `stream`: a buffer's device pointer
    /// and size, a texture's level-0 array and its size.
    ///
    /// # Safety
    /// `resource` is a live registration of `object` made by [`GraphicsDriver::register`], and
    /// `stream` a live stream of the current CUDA context.
    unsafe fn map(
        &mut self,
        resource: sys::CUgraphicsResource,
        object: GlObject,
        stream: sys::CUstream,
    ) -> Result<Mapping, CallFailure>;
    /// Unmaps `resource` on `stream`.
    ///
    /// # Safety
    /// `resource` was mapped on `stream` by [`GraphicsDriver::map`].
    unsafe fn unmap(
        &mut self,
        resource: sys::CUgraphicsResource,
        stream: sys::CUstream,
    ) -> Result<(), CallFailure>;
    /// Unregisters `resource` (`cuGraphicsUnregisterResource`).
    ///
    /// # Safety
    /// `resource` is a live, unmapped registration made by [`GraphicsDriver::register`], not
    /// used again.
    unsafe fn unregister(&mut self, resource: sys::CUgraphicsResource);
}

/// A GL object registered with CUDA.
struct Registration {
    object: GlObject,
    resource: sys::CUgraphicsResource,
}

/// One GL object shared with CUDA: at most one registration, and the object that could not be
/// registered or mapped (so the failure is reported once, not every frame). A simulation with
/// several objects to write holds one each.
pub struct GlInterop<D: GraphicsDriver = CudaGraphics> {
    driver: D,
    registration: Option<Registration>,
    refused: Option<GlObject>,
}

impl Default for GlInterop {
    fn default() -> Self {
        GlInterop::with_driver(CudaGraphics)
    }
}

impl<D: GraphicsDriver> GlInterop<D> {
    /// Interop through `driver`.
    pub fn with_driver(driver: D) -> Self {
        GlInterop {
            driver,
            registration: None,
            refused: None,
        }
    }

    /// Maps `gl_buffer` (registering it first when needed) and calls `write` with its device
    /// pointer, then unmaps it, all on `stream`. Returns `Ok(false)` when the buffer cannot be
    /// registered or mapped (GL not on this CUDA device: Mesa, remote desktops, WSL, hybrid
    /// laptops), after saying why once on stderr; the caller then copies through the host.
    /// An execution error of an earlier kernel that surfaces here is returned as an error.
    ///
    /// # Safety
    /// `stream` is a live stream of the CUDA context current on this thread, and the GL context
    /// that owns the buffer is current too.
    pub unsafe fn write_buffer<E: From<CudaError>>(
        &mut self,
        stream: sys::CUstream,
        gl_buffer: u32,
        needed_bytes: usize,
        write: impl FnOnce(sys::CUdeviceptr) -> Result<(), E>,
    ) -> Result<bool, E> {
        let object = GlObject::Buffer(gl_buffer);
        let fit = |mapping: &Mapping| match *mapping {
            Mapping::Buffer { pointer, bytes } if bytes >= needed_bytes => Some(pointer),
            _ => None,
        };
        let short = || format!("{object} is smaller than the {needed_bytes} bytes to be written");
        // SAFETY: the caller's promise.
        unsafe { self.write(stream, object, fit, short, write) }
    }

    /// As [`GlInterop::write_buffer`] for the 2D texture `gl_texture`: `write` gets its level 0
    /// as a CUDA array of at least `width` × `height` texels. Not yet run on a GPU.
    ///
    /// # Safety
    /// As [`GlInterop::write_buffer`].
    pub unsafe fn write_texture<E: From<CudaError>>(
        &mut self,
        stream: sys::CUstream,
        gl_texture: u32,
        (width, height): (usize, usize),
        write: impl FnOnce(MappedArray) -> Result<(), E>,
    ) -> Result<bool, E> {
        let object = GlObject::Texture2d(gl_texture);
        let fit = |mapping: &Mapping| match *mapping {
            Mapping::Array(array) if array.width >= width && array.height >= height => Some(array),
            _ => None,
        };
        let short =
            || format!("{object} is smaller than the {width}×{height} texels to be written");
        // SAFETY: the caller's promise.
        unsafe { self.write(stream, object, fit, short, write) }
    }

    /// Maps `object` and calls `write` with what `fit` takes from its mapping (`None`: the
    /// mapping is too small, `short` says so), then unmaps it.
    ///
    /// # Safety
    /// As [`GlInterop::write_buffer`].
    unsafe fn write<T, E: From<CudaError>>(
        &mut self,
        stream: sys::CUstream,
        object: GlObject,
        fit: impl Fn(&Mapping) -> Option<T>,
        short: impl FnOnce() -> String,
        write: impl FnOnce(T) -> Result<(), E>,
    ) -> Result<bool, E> {
        if self.refused == Some(object) {
            return Ok(false);
        }
        if self
            .registration
            .as_ref()
            .is_some_and(|r| r.object != object)
        {
            self.release();
        }
        let mut mapped = None;
        // Twice at most: a registration older than the object's current storage (the viewer
        // re-specified it for a new size) maps too little and is renewed once.
        for _ in 0..2 {
            let resource = match &self.registration {
                Some(registration) => registration.resource,
                None => match self.driver.register(object) {
                    Ok(resource) => {
                        self.registration = Some(Registration { object, resource });
                        resource
                    }
                    Err(reason) => return Ok(self.refuse(object, &reason)),
                },
            };
            // SAFETY: `resource` is the registration of `object` held in `self.registration`;
            // the caller vouches for the stream.
            let mapping = match unsafe { self.driver.map(resource, object, stream) } {
                Ok(mapping) => mapping,
                Err(failure) if is_execution_error(failure.code) => {
                    return Err(CudaError::Wait(failure.message).into())
                }
                Err(failure) => {
                    // Registered but not mappable: as good as not registered.
                    self.release();
                    return Ok(self.refuse(object, &failure.message));
                }
            };
            if let Some(fitting) = fit(&mapping) {
                mapped = Some(fitting);
                break;
            }
            // SAFETY: mapped on `stream` just above.
            unsafe { self.unmap(stream)? };
            self.release();
            if mapping.is_empty() {
                break;
            }
        }
        let Some(mapped) = mapped else {
            return Err(CudaError::Interop(short()).into());
        };
        let written = write(mapped);
        // SAFETY: mapped on `stream` in the loop above.
        unsafe { self.unmap(stream)? };
        written.map(|()| true)
    }

    /// Records that `object` cannot be used and says why, once. Returns `false`.
    fn refuse(&mut self, object: GlObject, reason: &str) -> bool {
        eprintln!(
            "note: CUDA–OpenGL interop is not available ({reason}); {object} is filled through \
             host memory instead"
        );
        self.refused = Some(object);
        false
    }

    /// Unmaps the registration.
    ///
    /// # Safety
    /// It was mapped on `stream`.
    unsafe fn unmap(&mut self, stream: sys::CUstream) -> Result<(), CudaError> {
        if let Some(registration) = &self.registration {
            // SAFETY: the caller's promise.
            unsafe { self.driver.unmap(registration.resource, stream) }
                .map_err(|failure| CudaError::Interop(failure.message))?;
        }
        Ok(())
    }

    /// Unregisters the object, if any. The GL context that owns it must still exist and be
    /// current: front ends call this before they delete it.
    pub fn release(&mut self) {
        if let Some(registration) = self.registration.take() {
            // SAFETY: the registration this interop made, unmapped (every write unmaps before
            // it returns), and taken out of `self` so never used again.
            unsafe { self.driver.unregister(registration.resource) };
        }
    }

    /// Whether an object is registered.
    pub fn is_registered(&self) -> bool {
        self.registration.is_some()
    }
}
