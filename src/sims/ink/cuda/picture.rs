//! The picture on the GPU: the view's RGBA8 image written by the `picture` kernel straight into
//! the renderer's GL texture, registered with CUDA once (`cuda::interop::GlInterop`, a 2D
//! texture whose level 0 is mapped as a CUDA array and written through a surface object), so a
//! drawn frame copies nothing through the host. Where the texture cannot be registered (GL not
//! on this GPU) the caller falls back to reading the fields back and drawing them on the CPU.
//! Here too the typed launches of its two kernels, `picture_scale` and `picture`.

use super::kernels::{per_point, InkGrid, InkKernels};
use super::{slot, CudaInk};
use crate::cuda::launch::OrNull;
use crate::cuda::CudaError;
use crate::sims::ink::scene::Background;
use cudarc::driver::{CudaSlice, CudaStream};

/// The kernel's view codes (`VIEW_*` in ink.cu).
const VIEW_INK: i32 = 0;
const VIEW_FLOW: i32 = 1;
const VIEW_SIGNED: i32 = 2;
const VIEW_SIDE_BY_SIDE: i32 = 3;

impl CudaInk {
    /// The picture's size in texels for `view` (as the CPU's `picture` draws it).
    pub fn picture_size(&self, view: &str) -> (usize, usize) {
        let g = &self.grid;
        let (nx, ny) = (g.nx as usize, g.ny as usize);
        let (inx, iny) = (g.ink_nx as usize, g.ink_ny as usize);
        match view {
            "ink" => (inx, iny),
            "side-by-side" => (2 * inx, iny),
            _ => (nx, ny),
        }
    }

    /// Writes `view` on `background` into the GL texture `texture` (storage of at least
    /// [`CudaInk::picture_size`] RGBA8 texels) through CUDA–GL interop. `Ok(false)`: the
    /// texture cannot be shared with CUDA here (said once on stderr); draw through the host.
    ///
    /// The GL context that owns the texture must be current on this thread.
    pub fn write_picture(
        &mut self,
        texture: u32,
        view: &str,
        background: Background,
    ) -> Result<bool, CudaError> {
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        let size = self.picture_size(view);
        let code = match view {
            "ink" => VIEW_INK,
            "flow" => VIEW_FLOW,
            "side-by-side" => VIEW_SIDE_BY_SIDE,
            _ => VIEW_SIGNED,
        };
        let paper = background == Background::Paper;
        let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
        // The divergence and curl views show this state (after the projection), as the CPU's
        // picture derives them: computed into the Jacobi scratch, free between steps.
        match view {
            "divergence" => {
                let out = Some(&mut b.p_next);
                k.divergence(s, g, (&b.u, &b.v), &b.solid, out, &mut b.partials)?
            }
            "curl" => k.curl(s, g, (&b.u, &b.v), &mut b.p_next)?,
            _ => {}
        }
        let scalar = match view {
            "pressure" => Some(&b.p),
            "divergence" | "curl" => Some(&b.p_next),
            _ => None,
        };
        k.picture_scale(s, g, (&b.u, &b.v), scalar, &mut b.partials)?;
        k.reduce_finish(
            s,
            &b.partials,
            g.cells(),
            2,
            0b11,
            &mut b.stats,
            slot::PICTURE,
        )?;
        let surfaces = &mut self.surface;
        let write = |mapped: crate::cuda::interop::MappedArray| -> Result<(), CudaError> {
            let surface = surfaces.create(mapped.array)?;
            // SAFETY: `surface` is a live surface object of the mapped RGBA8 array, which holds
            // at least `size` texels (checked by write_texture).
            unsafe {
                k.picture(
                    s,
                    g,
                    (code, paper),
                    (&b.u, &b.v),
                    (&b.ink, &b.solid),
                    scalar,
                    &b.stats,
                    (slot::PICTURE, slot::PICTURE + 1),
                    surface,
                    size,
                )
            }?;
            surfaces.queued(s)
        };
        // SAFETY: the solver's stream, its context bound above; the caller has the GL context
        // that owns the texture current.
        let written = unsafe {
            self.interop
                .write_texture(self.stream.cu_stream(), texture, size, write)?
        };
        if written && !self.interop_noted {
            eprintln!(
                "note: the ink picture reaches GL by CUDA–GL interop (the picture kernel writes \
                 GL texture {texture}, {}×{} texels, no host copy)",
                size.0, size.1
            );
            self.interop_noted = true;
        }
        Ok(written)
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

impl Drop for CudaInk {
    /// Front ends release the GL texture with [`CudaInk::release_gl`] while their context is
    /// current; this is the safety net for paths that drop the solver first.
    fn drop(&mut self) {
        self.release_gl();
    }
}

#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// Per block the largest |scalar| (if any) and |u|².
    pub fn picture_scale(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        scalar: Option<&CudaSlice<f32>>,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (g, u, v, OrNull(scalar), partials);
        // SAFETY: ink.cu's parameters; partials hold 2 values per block.
        unsafe { self.launch("picture_scale", stream, per_point(g.cells()), args) }
    }

    /// The view's picture into `surface` (a surface object of a mapped texture of at least
    /// `size` texels).
    ///
    /// # Safety
    /// `surface` is a live surface object of an RGBA8 array of at least `size` texels.
    pub unsafe fn picture(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (view, paper): (i32, bool),
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        (ink, solid): (&CudaSlice<f32>, &CudaSlice<u8>),
        scalar: Option<&CudaSlice<f32>>,
        stats: &CudaSlice<f64>,
        (largest_slot, fastest_slot): (u32, u32),
        surface: u64,
        size: (usize, usize),
    ) -> Result<(), CudaError> {
        let (width, height) = (size.0 as i32, size.1 as i32);
        let paper = i32::from(paper);
        let args = (
            g,
            &view,
            &paper,
            u,
            v,
            ink,
            solid,
            OrNull(scalar),
            stats,
            &largest_slot,
            &fastest_slot,
            &surface,
            &width,
            &height,
        );
        // SAFETY: ink.cu's parameters; the caller vouches for the surface.
        unsafe { self.launch("picture", stream, per_point(size.0 * size.1), args) }
    }
}
