//! CUDA–OpenGL interop: a renderer's GL buffer or 2D texture, registered once with
//! `cuGraphicsGLRegisterBuffer` / `cuGraphicsGLRegisterImage` and mapped once per frame on the
//! simulation stream, so the last kernel of a frame writes straight into it (PBF's particle
//! records into a vertex buffer; a 2D grid into a texture through its mapped CUDA array).
//!
//! cudarc binds the driver API without `cudaGL.h`, so the GL entry points are resolved from
//! libcuda by name (`shared/recipes/interop_probe` proved the buffer path on an H200; the
//! texture path has not run on a GPU yet). The driver calls go through [`GraphicsDriver`], so
//! the fallbacks can be tested without a GPU.

use super::launch::is_execution_error;
use super::CudaError;
use cudarc::driver::sys;

type RegisterBuffer = unsafe extern "C" fn(*mut sys::CUgraphicsResource, u32, u32) -> sys::CUresult;
type RegisterImage =
    unsafe extern "C" fn(*mut sys::CUgraphicsResource, u32, u32, u32) -> sys::CUresult;
type GlGetDevices = unsafe extern "C" fn(*mut u32, *mut sys::CUdevice, u32, u32) -> sys::CUresult;

/// `CU_GL_DEVICE_LIST_ALL` (cudaGL.h): every CUDA device of the current GL context.
const CU_GL_DEVICE_LIST_ALL: u32 = 1;
/// `GL_TEXTURE_2D`, the target of the textures registered.
const GL_TEXTURE_2D: u32 = 0x0DE1;

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
    if super::unavailable().is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use sys::CUresult::*;

    /// A driver that records its calls and fails where told; buffers map `mapped_sizes` bytes,
    /// textures `mapped_sizes` × 64 texels.
    #[derive(Default)]
    struct FakeDriver {
        refuse_registration: bool,
        map_error: Option<sys::CUresult>,
        mapped_sizes: Vec<usize>,
        calls: Vec<String>,
    }

    impl FakeDriver {
        fn count(&self, call: &str) -> usize {
            self.calls.iter().filter(|c| c.starts_with(call)).count()
        }
    }

    impl GraphicsDriver for FakeDriver {
        fn register(&mut self, object: GlObject) -> Result<sys::CUgraphicsResource, String> {
            self.calls.push(format!("register {object}"));
            if self.refuse_registration {
                return Err("refused".into());
            }
            Ok(std::ptr::NonNull::dangling().as_ptr())
        }
        unsafe fn map(
            &mut self,
            _: sys::CUgraphicsResource,
            object: GlObject,
            _: sys::CUstream,
        ) -> Result<Mapping, CallFailure> {
            self.calls.push("map".into());
            if let Some(code) = self.map_error {
                return Err(CallFailure {
                    code,
                    message: format!("cuGraphicsMapResources: {code:?}"),
                });
            }
            let size = if self.mapped_sizes.is_empty() {
                1 << 20
            } else {
                self.mapped_sizes.remove(0)
            };
            Ok(match object {
                GlObject::Buffer(_) => Mapping::Buffer {
                    pointer: 0x1000,
                    bytes: size,
                },
                GlObject::Texture2d(_) => Mapping::Array(MappedArray {
                    array: std::ptr::NonNull::dangling().as_ptr(),
                    width: size,
                    height: 64,
                }),
            })
        }
        unsafe fn unmap(
            &mut self,
            _: sys::CUgraphicsResource,
            _: sys::CUstream,
        ) -> Result<(), CallFailure> {
            self.calls.push("unmap".into());
            Ok(())
        }
        unsafe fn unregister(&mut self, _: sys::CUgraphicsResource) {
            self.calls.push("unregister".into());
        }
    }

    fn write(interop: &mut GlInterop<FakeDriver>, buffer: u32) -> Result<bool, CudaError> {
        // SAFETY: the fake driver never uses the stream.
        unsafe { interop.write_buffer(std::ptr::null_mut(), buffer, 1024, |_| Ok(())) }
    }

    fn write_texture(
        interop: &mut GlInterop<FakeDriver>,
        texture: u32,
    ) -> Result<Option<MappedArray>, CudaError> {
        let mut seen = None;
        let stream = std::ptr::null_mut();
        // SAFETY: the fake driver never uses the stream.
        let written = unsafe {
            interop.write_texture(stream, texture, (256, 64), |array| {
                seen = Some(array);
                Ok::<_, CudaError>(())
            })?
        };
        assert_eq!(written, seen.is_some());
        Ok(seen)
    }

    #[test]
    fn a_mapped_buffer_is_written_and_unmapped() {
        let mut interop = GlInterop::with_driver(FakeDriver::default());
        assert!(write(&mut interop, 7).unwrap());
        assert!(write(&mut interop, 7).unwrap());
        assert_eq!(
            interop.driver.calls,
            ["register GL buffer 7", "map", "unmap", "map", "unmap"]
        );
        interop.release();
        assert_eq!(interop.driver.count("unregister"), 1);
        assert!(!interop.is_registered());
    }

    /// A registration that succeeds but cannot be mapped falls back to host copies, like a
    /// refused registration: released, reported once, not retried every frame.
    #[test]
    fn a_map_failure_after_registration_falls_back_to_host_copies() {
        let mut interop = GlInterop::with_driver(FakeDriver {
            map_error: Some(CUDA_ERROR_UNKNOWN),
            ..Default::default()
        });
        assert!(!write(&mut interop, 7).unwrap());
        assert!(!write(&mut interop, 7).unwrap());
        assert_eq!(
            interop.driver.calls,
            ["register GL buffer 7", "map", "unregister"]
        );
        assert!(!interop.is_registered());
    }

    #[test]
    fn a_refused_registration_falls_back_once() {
        let mut interop = GlInterop::with_driver(FakeDriver {
            refuse_registration: true,
            ..Default::default()
        });
        assert!(!write(&mut interop, 7).unwrap());
        assert!(!write(&mut interop, 7).unwrap());
        assert_eq!(interop.driver.calls, ["register GL buffer 7"]);
    }

    /// An earlier kernel's execution error surfacing at the map is an error, not a fallback.
    #[test]
    fn an_execution_error_at_the_map_is_reported() {
        let mut interop = GlInterop::with_driver(FakeDriver {
            map_error: Some(CUDA_ERROR_ILLEGAL_ADDRESS),
            ..Default::default()
        });
        let error = write(&mut interop, 7).unwrap_err();
        assert!(
            error.to_string().contains("cuGraphicsMapResources"),
            "{error}"
        );
    }

    /// A buffer re-specified larger after registration maps too few bytes: registered again.
    #[test]
    fn a_stale_registration_is_renewed_once() {
        let mut interop = GlInterop::with_driver(FakeDriver {
            mapped_sizes: vec![512, 4096],
            ..Default::default()
        });
        assert!(write(&mut interop, 7).unwrap());
        assert_eq!(
            interop.driver.calls,
            [
                "register GL buffer 7",
                "map",
                "unmap",
                "unregister",
                "register GL buffer 7",
                "map",
                "unmap"
            ]
        );
    }

    /// A buffer still too small after registering again is an error naming the sizes.
    #[test]
    fn a_buffer_too_small_is_an_error() {
        let mut interop = GlInterop::with_driver(FakeDriver {
            mapped_sizes: vec![512, 512],
            ..Default::default()
        });
        let error = write(&mut interop, 7).unwrap_err();
        assert_eq!(
            error.to_string(),
            "GL buffer 7 is smaller than the 1024 bytes to be written"
        );
        assert!(!interop.is_registered());
    }

    #[test]
    fn another_buffer_replaces_the_registration() {
        let mut interop = GlInterop::with_driver(FakeDriver::default());
        assert!(write(&mut interop, 7).unwrap());
        assert!(write(&mut interop, 8).unwrap());
        assert_eq!(interop.driver.count("unregister"), 1);
        assert_eq!(interop.driver.count("register"), 2);
    }

    /// A texture is registered as an image and its level-0 array handed to the writer.
    #[test]
    fn a_mapped_texture_hands_its_array_to_the_writer() {
        let mut interop = GlInterop::with_driver(FakeDriver::default());
        let array = write_texture(&mut interop, 3).unwrap().expect("written");
        assert_eq!((array.width, array.height), (1 << 20, 64));
        assert_eq!(
            interop.driver.calls,
            ["register GL texture 3", "map", "unmap"]
        );
    }

    /// Textures take the buffers' fallbacks: a refusal once, a stale registration renewed, one
    /// still too small an error in texels.
    #[test]
    fn textures_fall_back_and_renew_as_buffers_do() {
        let mut refused = GlInterop::with_driver(FakeDriver {
            refuse_registration: true,
            ..Default::default()
        });
        assert_eq!(write_texture(&mut refused, 3).unwrap(), None);
        assert_eq!(write_texture(&mut refused, 3).unwrap(), None);
        assert_eq!(refused.driver.calls, ["register GL texture 3"]);

        let mut stale = GlInterop::with_driver(FakeDriver {
            mapped_sizes: vec![128, 256],
            ..Default::default()
        });
        assert!(write_texture(&mut stale, 3).unwrap().is_some());
        assert_eq!(stale.driver.count("register"), 2);

        let mut small = GlInterop::with_driver(FakeDriver {
            mapped_sizes: vec![128, 128],
            ..Default::default()
        });
        let error = write_texture(&mut small, 3).unwrap_err();
        assert_eq!(
            error.to_string(),
            "GL texture 3 is smaller than the 256×64 texels to be written"
        );
    }

    /// A buffer and a texture with the same id are different objects: switching re-registers.
    #[test]
    fn a_texture_replaces_a_buffer_of_the_same_id() {
        let mut interop = GlInterop::with_driver(FakeDriver::default());
        assert!(write(&mut interop, 7).unwrap());
        assert!(write_texture(&mut interop, 7).unwrap().is_some());
        assert_eq!(
            interop.driver.calls,
            [
                "register GL buffer 7",
                "map",
                "unmap",
                "unregister",
                "register GL texture 7",
                "map",
                "unmap"
            ]
        );
    }
}
