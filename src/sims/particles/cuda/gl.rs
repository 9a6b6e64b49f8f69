//! The particles' and nodes' arrays into the renderer's GL buffers through CUDA–GL interop
//! (`cuda::interop::GlInterop`, one registration per buffer; a device-to-device copy into the
//! mapped buffer), so a drawn frame copies nothing through the host. Where a buffer cannot be
//! registered (GL not on this GPU) the caller reads the state back and uploads it itself.

use super::{cuda, Buffers, CudaParticles, GlBuffers};
use crate::cuda::CudaError;
use cudarc::driver::DevicePtr;

impl CudaParticles {
    /// Copies the positions, velocities, ages and drawing order into the renderer's GL
    /// `buffers` through CUDA–GL interop (no host copy). `Ok(false)`: a buffer could not be
    /// shared with CUDA here (said once on stderr): read the state back
    /// ([`CudaParticles::download_fountain`], [`CudaParticles::download_body`]) and upload it.
    /// The GL context that owns the buffers must be current on this thread. Not yet run on a
    /// GPU.
    pub fn write_gl(&mut self, buffers: GlBuffers) -> Result<bool, CudaError> {
        self.context
            .bind_to_thread()
            .map_err(cuda("binding the CUDA context"))?;
        let n = self.totals.count;
        let stream = &self.stream;
        // Per buffer: the GL name asked for, and the device array (pointer, bytes) it gets.
        type Source = (Option<u32>, Option<(u64, usize)>);
        let sources: [Source; 4] = match &self.buffers {
            Buffers::Fountain(b) => [
                (
                    buffers.position,
                    Some((b.position.device_ptr(stream).0, 12 * n)),
                ),
                (
                    buffers.velocity,
                    Some((b.velocity.device_ptr(stream).0, 12 * n)),
                ),
                (buffers.age, Some((b.age.device_ptr(stream).0, 4 * n))),
                (buffers.order, Some((b.order.device_ptr(stream).0, 4 * n))),
            ],
            Buffers::Body(b) => [
                (
                    buffers.position,
                    Some((b.position.device_ptr(stream).0, 12 * n)),
                ),
                (
                    buffers.velocity,
                    Some((b.velocity.device_ptr(stream).0, 12 * n)),
                ),
                (None, None),
                (None, None),
            ],
        };
        let mut shared = true;
        for (interop, (gl, source)) in self.interop.iter_mut().zip(sources) {
            let (Some(gl), Some((from, bytes))) = (gl, source) else {
                continue;
            };
            if bytes == 0 {
                continue;
            }
            let raw = stream.cu_stream();
            let write = |to: cudarc::driver::sys::CUdeviceptr| {
                // SAFETY: `to` is a mapped GL buffer of at least `bytes` (write_buffer checks),
                // `from` a live allocation of this context holding them.
                unsafe { cudarc::driver::result::memcpy_dtod_async(to, from, bytes, raw) }
                    .map_err(cuda("copying into a GL buffer"))
            };
            // SAFETY: the solver's stream, its context bound above; the caller has the GL
            // context current.
            shared &= unsafe { interop.write_buffer(raw, gl, bytes, write)? };
        }
        Ok(shared)
    }

    /// Unregisters the GL buffers (while their context is current).
    pub fn release_gl(&mut self) {
        if self.interop.iter().any(|i| i.is_registered()) && self.context.bind_to_thread().is_ok() {
            let _ = self.stream.synchronize();
            for interop in &mut self.interop {
                interop.release();
            }
        }
    }
}
