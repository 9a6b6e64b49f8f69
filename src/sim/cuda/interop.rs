//! CUDA–OpenGL interop: the renderer's vertex buffer, registered once with
//! `cuGraphicsGLRegisterBuffer` and mapped once per frame on the simulation stream, so the last
//! kernel of a frame writes the render records straight into it.
//!
//! cudarc binds the driver API without `cudaGL.h`, so `cuGraphicsGLRegisterBuffer` is resolved
//! from libcuda by name (`shared/recipes/interop_probe` proved this path on an H200).

use crate::sim::SolverError;
use cudarc::driver::{sys, CudaContext, CudaStream};
use std::sync::Arc;

type RegisterBuffer = unsafe extern "C" fn(*mut sys::CUgraphicsResource, u32, u32) -> sys::CUresult;

/// A GL buffer registered with CUDA.
struct Registration {
    buffer: u32,
    resource: sys::CUgraphicsResource,
}

/// The interop state of one solver: at most one registered buffer, and the buffer id that
/// could not be registered (so the failure is reported once, not every frame).
#[derive(Default)]
pub struct GlInterop {
    registration: Option<Registration>,
    refused: Option<u32>,
}

impl GlInterop {
    /// Maps `gl_buffer` (registering it first when needed) and calls `write` with its device
    /// pointer, then unmaps it, all on `stream`. Returns `Ok(false)` when the buffer cannot be
    /// registered (GL not on this CUDA device: Mesa, remote desktops, WSL, hybrid laptops),
    /// after saying why once on stderr.
    pub fn write(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
        gl_buffer: u32,
        needed_bytes: usize,
        write: impl FnOnce(sys::CUdeviceptr) -> Result<(), SolverError>,
    ) -> Result<bool, SolverError> {
        if self.refused == Some(gl_buffer) {
            return Ok(false);
        }
        context.bind_to_thread().map_err(backend)?;
        if self
            .registration
            .as_ref()
            .is_some_and(|r| r.buffer != gl_buffer)
        {
            self.unregister();
        }
        let mut mapped = None;
        // Twice at most: a registration older than the buffer's current storage (the viewer
        // re-specified it for a new particle count) maps too few bytes and is renewed once.
        for _ in 0..2 {
            if self.registration.is_none() {
                match register(gl_buffer) {
                    Ok(resource) => {
                        self.registration = Some(Registration {
                            buffer: gl_buffer,
                            resource,
                        })
                    }
                    Err(reason) => {
                        eprintln!(
                            "note: CUDA–OpenGL interop is not available ({reason}); particles go \
                             to the GPU buffer through host memory instead"
                        );
                        self.refused = Some(gl_buffer);
                        return Ok(false);
                    }
                }
            }
            let resource = self.registration.as_mut().map(|r| &mut r.resource);
            let resource = resource.expect("registered above");
            // SAFETY: `resource` is a live registration; the stream belongs to `context`.
            let (pointer, bytes) = unsafe {
                sys::cuGraphicsMapResources(1, resource, stream.cu_stream())
                    .result()
                    .map_err(|e| backend(format!("cuGraphicsMapResources: {e}")))?;
                let (mut pointer, mut bytes) = (0, 0);
                let got =
                    sys::cuGraphicsResourceGetMappedPointer_v2(&mut pointer, &mut bytes, *resource)
                        .result();
                if let Err(e) = got {
                    sys::cuGraphicsUnmapResources(1, resource, stream.cu_stream());
                    return Err(backend(format!("cuGraphicsResourceGetMappedPointer: {e}")));
                }
                (pointer, bytes)
            };
            if bytes >= needed_bytes {
                mapped = Some(pointer);
                break;
            }
            self.unmap(stream)?;
            self.unregister();
            mapped = None;
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

    fn unmap(&mut self, stream: &CudaStream) -> Result<(), SolverError> {
        if let Some(registration) = &mut self.registration {
            // SAFETY: the resource is mapped on this stream by `write`.
            unsafe {
                sys::cuGraphicsUnmapResources(1, &mut registration.resource, stream.cu_stream())
                    .result()
                    .map_err(|e| backend(format!("cuGraphicsUnmapResources: {e}")))?;
            }
        }
        Ok(())
    }

    /// Unregisters the buffer, if any (the GL context that owns it should still exist).
    pub fn unregister(&mut self) {
        if let Some(registration) = self.registration.take() {
            // SAFETY: a live, unmapped registration; failure leaves nothing to clean up.
            unsafe {
                sys::cuGraphicsUnregisterResource(registration.resource);
            }
        }
    }
}

fn register(gl_buffer: u32) -> Result<sys::CUgraphicsResource, String> {
    // SAFETY: the symbol has this C signature in cudaGL.h; libcuda is loaded (the solver exists).
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
        .map_err(|e| format!("cuGraphicsGLRegisterBuffer refused GL buffer {gl_buffer}: {e}"))?;
        Ok(resource)
    }
}

fn backend(error: impl std::fmt::Display) -> SolverError {
    SolverError::Backend(error.to_string())
}
