//! The renderer's surface texture on the GPU: one RGBA32F texel per node (offset x, height,
//! offset z, 1 if fixed; surface.rs `texels`) written by the `surface_texels` kernel straight
//! into the renderer's GL texture, registered with CUDA once (`cuda::interop::GlInterop`, a 2D
//! texture whose level 0 is mapped as a CUDA array and written through a surface object), so a
//! drawn frame copies nothing through the host. Where the texture cannot be registered (GL not
//! on this GPU) the caller falls back to [`CudaPool::texels`] and an upload.

use super::kernels::PoolGrid;
use super::CudaPool;
use crate::cuda::CudaError;
use crate::sims::pool::surface::FIXED;

impl CudaPool {
    /// Writes the surface into the GL texture `texture` (RGBA32F storage of at least N × N
    /// texels) through CUDA–GL interop. `Ok(false)`: the texture cannot be shared with CUDA
    /// here (said once on stderr); upload [`CudaPool::texels`] instead.
    ///
    /// The GL context that owns the texture must be current on this thread.
    pub fn write_texture(&mut self, texture: u32) -> Result<bool, CudaError> {
        self.sync_flags()?;
        self.bind()?;
        let n = self.n;
        let g = PoolGrid {
            n: n as i32,
            ..PoolGrid::default()
        };
        let (k, s, b) = (&self.kernels, &self.stream, &self.buffers);
        let surfaces = &mut self.surface;
        let write = |mapped: crate::cuda::interop::MappedArray| -> Result<(), CudaError> {
            let surface = surfaces.create(mapped.array)?;
            // SAFETY: `surface` is a live surface object of the mapped RGBA32F array, which
            // holds at least N × N texels (checked by write_texture).
            unsafe { k.surface_texels(s, &g, (&b.height, &b.offset), &b.flags, surface) }?;
            surfaces.queued(s)
        };
        // SAFETY: the solver's stream, its context bound above; the caller has the GL context
        // that owns the texture current.
        let written = unsafe {
            self.interop
                .write_texture(self.stream.cu_stream(), texture, (n, n), write)?
        };
        if written && !self.interop_noted {
            eprintln!(
                "note: the pool's surface reaches GL by CUDA–GL interop (surface_texels writes \
                 GL texture {texture}, {n}×{n} RGBA32F texels, no host copy)"
            );
            self.interop_noted = true;
        }
        Ok(written)
    }

    /// The renderer's texels copied through the host (surface.rs `texels`): the heights,
    /// offsets and flags only.
    pub fn texels(&self, out: &mut Vec<[f32; 4]>) -> Result<(), CudaError> {
        let count = self.n * self.n;
        let mut height = vec![0.0f32; count];
        let mut offset = vec![[0.0f32; 2]; count];
        self.download(&self.buffers.height, &mut height)?;
        self.download(&self.buffers.offset, bytemuck::cast_slice_mut(&mut offset))?;
        self.stream
            .synchronize()
            .map_err(CudaError::driver("copying the pool's surface from the GPU"))?;
        out.clear();
        out.extend((0..count).map(|k| {
            let fixed = self.flags[k] & FIXED != 0;
            // A node fixed since the last launch is at rest once the flags reach the GPU.
            let u = if fixed && self.flags_dirty {
                0.0
            } else {
                height[k]
            };
            [offset[k][0], u, offset[k][1], f32::from(u8::from(fixed))]
        }));
        Ok(())
    }

    /// Lets go of the GL texture (work on it finished first): front ends call this while their
    /// GL context is current, before they delete the texture or re-specify its storage.
    pub fn release_gl(&mut self) {
        let registered = self.interop.is_registered() || self.surface.is_some();
        if registered && self.context.bind_to_thread().is_ok() {
            let _ = self.stream.synchronize();
            let _ = self.surface.retire();
            self.interop.release();
        }
    }
}
