//! The `advect` stage's launches: semi-Lagrangian or MacCormack advection of both face lattices
//! and of the ink's three planes (the CPU's `advect_velocity` and `advect_ink`).

use super::{per_point, InkGrid, InkKernels};
use crate::cuda::CudaError;
use cudarc::driver::{CudaSlice, CudaStream};

#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// φ̂ of both face lattices (`hat`), or their semi-Lagrangian values × decay with closed
    /// faces fixed.
    pub fn advect_velocity(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        hat: bool,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        (u_open, v_open): (&CudaSlice<u8>, &CudaSlice<u8>),
        (out_u, out_v): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
        dt: f32,
        decay: f32,
    ) -> Result<(), CudaError> {
        let hat = i32::from(hat);
        let args = (g, &hat, u, v, u_open, v_open, out_u, out_v, &dt, &decay);
        // SAFETY: ink.cu's parameters; face arrays hold (nx + 1)·ny and nx·(ny + 1) values.
        unsafe { self.launch("advect_velocity", stream, per_point(g.faces()), args) }
    }

    /// MacCormack's second pass over both face lattices.
    pub fn advect_velocity_correct(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        (u_hat, v_hat): (&CudaSlice<f32>, &CudaSlice<f32>),
        (u_open, v_open): (&CudaSlice<u8>, &CudaSlice<u8>),
        (out_u, out_v): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
        dt: f32,
        decay: f32,
    ) -> Result<(), CudaError> {
        let args = (
            g, u, v, u_hat, v_hat, u_open, v_open, out_u, out_v, &dt, &decay,
        );
        // SAFETY: as advect_velocity.
        unsafe {
            self.launch(
                "advect_velocity_correct",
                stream,
                per_point(g.faces()),
                args,
            )
        }
    }

    /// φ̂ of the ink's three planes (`hat`), or their semi-Lagrangian values × decay.
    pub fn advect_ink(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        hat: bool,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        ink: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        dt: f32,
        decay: f32,
    ) -> Result<(), CudaError> {
        let hat = i32::from(hat);
        let args = (g, &hat, u, v, ink, out, &dt, &decay);
        // SAFETY: ink.cu's parameters; ink arrays hold 3 planes of ink_nx·ink_ny values.
        unsafe { self.launch("advect_ink", stream, per_point(g.ink_cells()), args) }
    }

    /// MacCormack's second pass over the ink.
    pub fn advect_ink_correct(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        ink: &CudaSlice<f32>,
        hat: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        dt: f32,
        decay: f32,
    ) -> Result<(), CudaError> {
        let args = (g, u, v, ink, hat, out, &dt, &decay);
        // SAFETY: as advect_ink.
        unsafe { self.launch("advect_ink_correct", stream, per_point(g.ink_cells()), args) }
    }
}
