//! The CUDA solver's CUDA–GL interop: the renderer's particle, ellipsoid and foam buffers
//! written by kernels through `GlInterop` (`src/cuda/interop.rs`), and their release.

use super::CudaSolver;
use crate::cuda::CudaError;
use crate::sims::pbf::{RenderScalar, SolverError};

impl CudaSolver {
    pub(super) fn gl_write_particles(
        &mut self,
        gl_buffer: u32,
        scalar: RenderScalar,
    ) -> Result<bool, SolverError> {
        let n = self.particle_count;
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        let (stream, kernels, buffers) = (&self.stream, &self.kernels, &self.buffers);
        let write = |pointer| {
            // SAFETY: the mapped buffer holds at least n float4 records (checked by
            // write_buffer).
            unsafe {
                kernels.write_render_buffer(
                    stream,
                    n,
                    &buffers.positions,
                    &buffers.velocities,
                    &buffers.densities,
                    scalar.code(),
                    pointer,
                )
            }
        };
        // SAFETY: the solver's stream, its context bound above; the caller has the GL context
        // that owns the buffer current (`Solver::write_gl_buffer`).
        unsafe {
            self.interop
                .write_buffer(stream.cu_stream(), gl_buffer, n * 16, write)
        }
    }

    pub(super) fn gl_write_anisotropy(&mut self, gl_buffer: u32) -> Result<bool, SolverError> {
        let n = self.particle_count;
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        let (stream, kernels, buffers) = (&self.stream, &self.kernels, &self.buffers);
        let (constants, particle_radius) = (&self.constants, self.params.particle_radius());
        let write = |pointer: cudarc::driver::sys::CUdeviceptr| {
            // SAFETY: the mapped buffer holds n render records then 3 n ellipsoid records
            // (checked by write_buffer against 64 n bytes).
            unsafe {
                kernels.anisotropy(
                    stream,
                    constants,
                    &buffers.positions,
                    &buffers.cell_start,
                    &buffers.grid_positions,
                    particle_radius,
                    pointer + (n * 16) as u64,
                )
            }
        };
        // SAFETY: as write_gl_buffer.
        unsafe {
            self.interop
                .write_buffer(stream.cu_stream(), gl_buffer, n * 64, write)
        }
    }
    /// The `foam` stage's records into the renderer's foam buffer
    /// ([`crate::sims::pbf::Solver::write_gl_foam`]).
    pub(super) fn gl_write_foam(
        &mut self,
        gl_buffer: u32,
        buffer_bytes: usize,
    ) -> Result<bool, SolverError> {
        let Some(pool) = self.foam.as_mut() else {
            return Ok(false);
        };
        let alive = pool.alive();
        if alive == 0 {
            return Ok(true);
        }
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        let (stream, kernels, pool) = (&self.stream, &self.kernels, &*pool);
        // SAFETY: the mapped buffer holds at least `alive` float4 records (checked by
        // write_buffer).
        let write = |pointer| unsafe { pool.write_records(kernels, stream, pointer) };
        // The mapping must cover the buffer's whole current storage, not only the records
        // written: the renderer sizes it to the cap, so a larger cap re-specifies it while the
        // alive records may still fit the old (orphaned) storage's registration.
        let needed = buffer_bytes.max(alive * 16);
        // SAFETY: as write_gl_buffer.
        unsafe {
            self.foam_interop
                .write_buffer(stream.cu_stream(), gl_buffer, needed, write)
        }
    }

    /// Unregisters both GL buffers ([`crate::sims::pbf::Solver::release_gl`]).
    pub(super) fn gl_release(&mut self) {
        let registered = self.interop.is_registered() || self.foam_interop.is_registered();
        if registered && self.context.bind_to_thread().is_ok() {
            // Work queued on the buffers finishes before they are unregistered.
            let _ = self.stream.synchronize();
            self.interop.release();
            self.foam_interop.release();
        }
    }
}
