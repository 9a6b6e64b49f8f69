//! CUDA–OpenGL interop: the renderer's vertex buffer, registered once with
//! `cuGraphicsGLRegisterBuffer` and mapped once per frame on the simulation stream, so the last
//! kernel of a frame writes the render records straight into it.
//!
//! cudarc binds the driver API without `cudaGL.h`, so `cuGraphicsGLRegisterBuffer` and
//! `cuGLGetDevices` are resolved from libcuda by name (`shared/recipes/interop_probe` proved
//! this path on an H200). The driver calls go through [`GraphicsDriver`], so the fallbacks can
//! be tested without a GPU.

use super::pbf::is_execution_error;
use crate::sims::pbf::SolverError;
use cudarc::driver::sys;

type RegisterBuffer = unsafe extern "C" fn(*mut sys::CUgraphicsResource, u32, u32) -> sys::CUresult;
type GlGetDevices = unsafe extern "C" fn(*mut u32, *mut sys::CUdevice, u32, u32) -> sys::CUresult;

/// `CU_GL_DEVICE_LIST_ALL` (cudaGL.h): every CUDA device of the current GL context.
const CU_GL_DEVICE_LIST_ALL: u32 = 1;

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
    /// Registers GL buffer `gl_buffer` for writing (`cuGraphicsGLRegisterBuffer`).
    fn register(&mut self, gl_buffer: u32) -> Result<sys::CUgraphicsResource, String>;
    /// Maps `resource` on `stream` and returns its device pointer and size in bytes.
    fn map(
        &mut self,
        resource: sys::CUgraphicsResource,
        stream: sys::CUstream,
    ) -> Result<(sys::CUdeviceptr, usize), CallFailure>;
    /// Unmaps `resource` on `stream`.
    fn unmap(
        &mut self,
        resource: sys::CUgraphicsResource,
        stream: sys::CUstream,
    ) -> Result<(), CallFailure>;
    /// Unregisters `resource` (`cuGraphicsUnregisterResource`).
    fn unregister(&mut self, resource: sys::CUgraphicsResource);
}

/// The real driver. Its calls need the solver's CUDA context current on the calling thread,
/// and registering and unregistering need the GL context that owns the buffer current too.
#[derive(Default)]
pub struct CudaGraphics;

impl GraphicsDriver for CudaGraphics {
    fn register(&mut self, gl_buffer: u32) -> Result<sys::CUgraphicsResource, String> {
        // SAFETY: the symbol has this C signature in cudaGL.h; libcuda is loaded (a solver
        // exists).
        unsafe {
            let register = *sys::culib()
                .get::<RegisterBuffer>(b"cuGraphicsGLRegisterBuffer\0")
                .map_err(|e| format!("libcuda has no cuGraphicsGLRegisterBuffer: {e}"))?;
            let mut resource: sys::CUgraphicsResource = std::ptr::null_mut();
            register(
                &mut resource,
                gl_buffer,
                sys::CUgraphicsRegisterFlags::CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD as u32,
            )
            .result()
            .map_err(|e| {
                format!("cuGraphicsGLRegisterBuffer refused GL buffer {gl_buffer}: {e}")
            })?;
            Ok(resource)
        }
    }

    fn map(
        &mut self,
        mut resource: sys::CUgraphicsResource,
        stream: sys::CUstream,
    ) -> Result<(sys::CUdeviceptr, usize), CallFailure> {
        // SAFETY: `resource` is a live registration; the stream belongs to the current context.
        unsafe {
            sys::cuGraphicsMapResources(1, &mut resource, stream)
                .result()
                .map_err(|e| CallFailure::of("cuGraphicsMapResources", e))?;
            let (mut pointer, mut bytes) = (0, 0);
            let got =
                sys::cuGraphicsResourceGetMappedPointer_v2(&mut pointer, &mut bytes, resource)
                    .result();
            if let Err(e) = got {
                sys::cuGraphicsUnmapResources(1, &mut resource, stream);
                return Err(CallFailure::of("cuGraphicsResourceGetMappedPointer", e));
            }
            Ok((pointer, bytes))
        }
    }

    fn unmap(
        &mut self,
        mut resource: sys::CUgraphicsResource,
        stream: sys::CUstream,
    ) -> Result<(), CallFailure> {
        // SAFETY: the resource was mapped on this stream by `map`.
        unsafe { sys::cuGraphicsUnmapResources(1, &mut resource, stream) }
            .result()
            .map_err(|e| CallFailure::of("cuGraphicsUnmapResources", e))
    }

    fn unregister(&mut self, resource: sys::CUgraphicsResource) {
        // SAFETY: a live, unmapped registration; failure leaves nothing to clean up.
        unsafe {
            sys::cuGraphicsUnregisterResource(resource);
        }
    }
}

/// A GL buffer registered with CUDA.
struct Registration {
    buffer: u32,
    resource: sys::CUgraphicsResource,
}

/// The interop state of one solver: at most one registered buffer, and the buffer id that
/// could not be registered or mapped (so the failure is reported once, not every frame).
pub struct GlInterop<D: GraphicsDriver = CudaGraphics> {
    driver: D,
    registration: Option<Registration>,
    refused: Option<u32>,
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
    pub fn write(
        &mut self,
        stream: sys::CUstream,
        gl_buffer: u32,
        needed_bytes: usize,
        write: impl FnOnce(sys::CUdeviceptr) -> Result<(), SolverError>,
    ) -> Result<bool, SolverError> {
        if self.refused == Some(gl_buffer) {
            return Ok(false);
        }
        if self
            .registration
            .as_ref()
            .is_some_and(|r| r.buffer != gl_buffer)
        {
            self.release();
        }
        let mut mapped = None;
        // Twice at most: a registration older than the buffer's current storage (the viewer
        // re-specified it for a new particle count) maps too few bytes and is renewed once.
        for _ in 0..2 {
            let resource = match &self.registration {
                Some(registration) => registration.resource,
                None => match self.driver.register(gl_buffer) {
                    Ok(resource) => {
                        self.registration = Some(Registration {
                            buffer: gl_buffer,
                            resource,
                        });
                        resource
                    }
                    Err(reason) => return Ok(self.refuse(gl_buffer, &reason)),
                },
            };
            let (pointer, bytes) = match self.driver.map(resource, stream) {
                Ok(mapping) => mapping,
                Err(failure) if is_execution_error(failure.code) => {
                    return Err(SolverError::Backend(failure.message))
                }
                Err(failure) => {
                    // Registered but not mappable: as good as not registered.
                    self.release();
                    return Ok(self.refuse(gl_buffer, &failure.message));
                }
            };
            if bytes >= needed_bytes {
                mapped = Some(pointer);
                break;
            }
            self.unmap(stream)?;
            self.release();
            if bytes == 0 {
                break;
            }
        }
        let Some(pointer) = mapped else {
            return Err(SolverError::Backend(format!(
                "GL buffer {gl_buffer} is smaller than the {needed_bytes} bytes the particles need"
            )));
        };
        let written = write(pointer);
        self.unmap(stream)?;
        written.map(|()| true)
    }

    /// Records that `gl_buffer` cannot be used and says why, once. Returns `false`.
    fn refuse(&mut self, gl_buffer: u32, reason: &str) -> bool {
        eprintln!(
            "note: CUDA–OpenGL interop is not available ({reason}); particles go to the GPU \
             buffer through host memory instead"
        );
        self.refused = Some(gl_buffer);
        false
    }

    fn unmap(&mut self, stream: sys::CUstream) -> Result<(), SolverError> {
        if let Some(registration) = &self.registration {
            self.driver
                .unmap(registration.resource, stream)
                .map_err(|failure| SolverError::Backend(failure.message))?;
        }
        Ok(())
    }

    /// Unregisters the buffer, if any. The GL context that owns it must still exist and be
    /// current: front ends call this (through `Solver::release_gl`) before they delete it.
    pub fn release(&mut self) {
        if let Some(registration) = self.registration.take() {
            self.driver.unregister(registration.resource);
        }
    }

    /// Whether a buffer is registered.
    pub fn is_registered(&self) -> bool {
        self.registration.is_some()
    }
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

    /// A driver that records its calls and fails where told.
    #[derive(Default)]
    struct FakeDriver {
        refuse_registration: bool,
        map_error: Option<sys::CUresult>,
        mapped_bytes: Vec<usize>,
        calls: Vec<&'static str>,
    }

    impl FakeDriver {
        fn count(&self, call: &str) -> usize {
            self.calls.iter().filter(|c| **c == call).count()
        }
    }

    impl GraphicsDriver for FakeDriver {
        fn register(&mut self, _: u32) -> Result<sys::CUgraphicsResource, String> {
            self.calls.push("register");
            if self.refuse_registration {
                return Err("refused".into());
            }
            Ok(std::ptr::NonNull::dangling().as_ptr())
        }
        fn map(
            &mut self,
            _: sys::CUgraphicsResource,
            _: sys::CUstream,
        ) -> Result<(sys::CUdeviceptr, usize), CallFailure> {
            self.calls.push("map");
            if let Some(code) = self.map_error {
                return Err(CallFailure {
                    code,
                    message: format!("cuGraphicsMapResources: {code:?}"),
                });
            }
            let bytes = if self.mapped_bytes.is_empty() {
                1 << 20
            } else {
                self.mapped_bytes.remove(0)
            };
            Ok((0x1000, bytes))
        }
        fn unmap(
            &mut self,
            _: sys::CUgraphicsResource,
            _: sys::CUstream,
        ) -> Result<(), CallFailure> {
            self.calls.push("unmap");
            Ok(())
        }
        fn unregister(&mut self, _: sys::CUgraphicsResource) {
            self.calls.push("unregister");
        }
    }

    fn write(interop: &mut GlInterop<FakeDriver>, buffer: u32) -> Result<bool, SolverError> {
        interop.write(std::ptr::null_mut(), buffer, 1024, |_| Ok(()))
    }

    #[test]
    fn a_mapped_buffer_is_written_and_unmapped() {
        let mut interop = GlInterop::with_driver(FakeDriver::default());
        assert!(write(&mut interop, 7).unwrap());
        assert!(write(&mut interop, 7).unwrap());
        assert_eq!(
            interop.driver.calls,
            ["register", "map", "unmap", "map", "unmap"]
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
        assert_eq!(interop.driver.calls, ["register", "map", "unregister"]);
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
        assert_eq!(interop.driver.calls, ["register"]);
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
            mapped_bytes: vec![512, 4096],
            ..Default::default()
        });
        assert!(write(&mut interop, 7).unwrap());
        assert_eq!(
            interop.driver.calls,
            [
                "register",
                "map",
                "unmap",
                "unregister",
                "register",
                "map",
                "unmap"
            ]
        );
    }

    #[test]
    fn another_buffer_replaces_the_registration() {
        let mut interop = GlInterop::with_driver(FakeDriver::default());
        assert!(write(&mut interop, 7).unwrap());
        assert!(write(&mut interop, 8).unwrap());
        assert_eq!(interop.driver.count("unregister"), 1);
        assert_eq!(interop.driver.count("register"), 2);
    }
}
