//! The projection's launches: the `divergence` stage, the `pressure` stage's Jacobi sweeps and
//! residual (the multigrid's are in `multigrid.rs`), and `subtract_gradient`.

use super::{per_point, InkGrid, InkKernels};
use crate::cuda::launch::OrNull;
use crate::cuda::CudaError;
use cudarc::driver::{CudaSlice, CudaStream};

#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// ∇·u into `out` (if any) and Σ d² per block into `partials`.
    pub fn divergence(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        solid: &CudaSlice<u8>,
        out: Option<&mut CudaSlice<f32>>,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (g, u, v, solid, OrNull(out), partials);
        // SAFETY: ink.cu's parameters; partials hold a value per block.
        unsafe { self.launch("divergence", stream, per_point(g.cells()), args) }
    }

    /// One Jacobi sweep from `p` into `out`.
    pub fn pressure(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        stencil: &CudaSlice<u8>,
        b: &CudaSlice<f32>,
        p: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        scale: f32,
        dx2: f32,
    ) -> Result<(), CudaError> {
        let args = (g, stencil, b, p, out, &scale, &dx2);
        // SAFETY: ink.cu's parameters; the stencil's bits name only neighbours in the grid.
        unsafe { self.launch("pressure", stream, per_point(g.cells()), args) }
    }

    /// Σ r² per block of the pressure equation's residual.
    pub fn pressure_residual(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        stencil: &CudaSlice<u8>,
        b: &CudaSlice<f32>,
        p: &CudaSlice<f32>,
        weight: f32,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (g, stencil, b, p, &weight, partials);
        // SAFETY: as pressure; partials hold a value per block.
        unsafe { self.launch("pressure_residual", stream, per_point(g.cells()), args) }
    }

    /// u −= ∇p on the open faces.
    pub fn subtract_gradient(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        p: &CudaSlice<f32>,
        (u_open, v_open): (&CudaSlice<u8>, &CudaSlice<u8>),
        (u, v): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        let args = (g, p, u_open, v_open, u, v);
        // SAFETY: ink.cu's parameters.
        unsafe { self.launch("subtract_gradient", stream, per_point(g.faces()), args) }
    }
}
