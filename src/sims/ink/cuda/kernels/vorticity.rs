//! The `curl` and `vorticity` stages' launches: ω at the cell centres and the vorticity
//! confinement it drives (the CPU's `compute_curl` and `vorticity_confinement`).

use super::{per_point, InkGrid, InkKernels};
use crate::cuda::CudaError;
use cudarc::driver::{CudaSlice, CudaStream};

#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// ω at the cell centres.
    pub fn curl(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (u, v): (&CudaSlice<f32>, &CudaSlice<f32>),
        out: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (g, u, v, out);
        // SAFETY: ink.cu's parameters.
        unsafe { self.launch("curl", stream, per_point(g.cells()), args) }
    }

    /// Vorticity confinement on the open inner faces.
    pub fn vorticity(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        curl: &CudaSlice<f32>,
        (u_open, v_open): (&CudaSlice<u8>, &CudaSlice<u8>),
        (u, v): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
        dt: f32,
        epsilon: f32,
    ) -> Result<(), CudaError> {
        let args = (g, curl, u_open, v_open, u, v, &dt, &epsilon);
        // SAFETY: ink.cu's parameters.
        unsafe { self.launch("vorticity", stream, per_point(g.faces()), args) }
    }
}
