//! The ink solver's state moved between host and GPU: the fields uploaded (a CPU solver's, or
//! a scene's start), and read back into the CPU solver's types — owned, as a frame's copy, or
//! lent through the host mirror (`walls.rs`) — for frames, exports, the parity checks and
//! the picture's host-copy fallback.

use super::walls::Mirror;
use super::{CudaInk, Fields};
use crate::cuda::CudaError;
use crate::sims::ink::fields::{Field, Flow, FlowCopy, Ink};
use crate::sims::ink::params::PressureSolver;
use cudarc::driver::CudaSlice;

/// What a read-back downloads: the velocity (u, v) and pressure values, the ink, the curl and
/// the divergence.
type Downloaded = ([Vec<f32>; 3], Ink, Field, Field);

impl CudaInk {
    /// [`CudaInk::upload`] of a whole [`Fields`] (the parity checks' CPU state).
    pub fn upload_fields(&mut self, fields: &Fields) -> Result<(), CudaError> {
        self.upload(
            &fields.flow,
            &fields.ink,
            Some(&fields.curl),
            Some(&fields.divergence),
        )
    }

    /// Replaces the state on the GPU with `flow` (its velocities, pressure and masks) and `ink`;
    /// the curl and divergence too when given. `flow` must have this solver's grid.
    pub fn upload(
        &mut self,
        flow: &Flow,
        ink: &Ink,
        curl: Option<&Field>,
        divergence: Option<&Field>,
    ) -> Result<(), CudaError> {
        let g = self.grid;
        let (nx, ny) = (g.nx as usize, g.ny as usize);
        assert_eq!((flow.nx, flow.ny), (nx, ny), "the solver's grid");
        let u_open: Vec<u8> = (0..g.u_faces())
            .map(|k| u8::from(flow.u_open(k % (nx + 1), k / (nx + 1))))
            .collect();
        let v_open: Vec<u8> = (0..g.v_faces())
            .map(|k| u8::from(flow.v_open(k % nx, k / nx)))
            .collect();
        let solid: Vec<u8> = flow.solid().iter().map(|&s| u8::from(s)).collect();
        let planes: Vec<f32> = ink
            .channels
            .iter()
            .flat_map(|c| c.data.iter().copied())
            .collect();
        let s = &self.stream;
        let b = &mut self.buffers;
        let copy = CudaError::driver("copying the ink state to the GPU");
        s.memcpy_htod(&flow.u.data, &mut b.u).map_err(&copy)?;
        s.memcpy_htod(&flow.v.data, &mut b.v).map_err(&copy)?;
        s.memcpy_htod(&flow.p.data, &mut b.p).map_err(&copy)?;
        s.memcpy_htod(&planes, &mut b.ink).map_err(&copy)?;
        s.memcpy_htod(&u_open, &mut b.u_open).map_err(&copy)?;
        s.memcpy_htod(&v_open, &mut b.v_open).map_err(&copy)?;
        s.memcpy_htod(&solid, &mut b.solid).map_err(&copy)?;
        s.memcpy_htod(&flow.poisson.cells, &mut b.stencil)
            .map_err(&copy)?;
        let (u_fixed, v_fixed) = flow.fixed();
        s.memcpy_htod(u_fixed, &mut b.u_fixed).map_err(&copy)?;
        s.memcpy_htod(v_fixed, &mut b.v_fixed).map_err(&copy)?;
        if let Some(curl) = curl {
            s.memcpy_htod(&curl.data, &mut b.curl).map_err(&copy)?;
        }
        if let Some(divergence) = divergence {
            s.memcpy_htod(&divergence.data, &mut b.divergence)
                .map_err(&copy)?;
        }
        // The multigrid's masks follow now when it is in use, else at its first step.
        b.multigrid.current = false;
        if self.params.pressure_solver == PressureSolver::Multigrid {
            b.multigrid.upload(s, flow)?;
        }
        s.synchronize().map_err(&copy)?;
        self.solved_cells = solved_cells(flow);
        self.mirror = Mirror::new(flow);
        Ok(())
    }

    fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        slice: &CudaSlice<T>,
        into: &mut Vec<T>,
    ) -> Result<(), CudaError> {
        into.resize(slice.len(), T::default());
        self.stream
            .memcpy_dtoh(slice, into.as_mut_slice())
            .map_err(CudaError::driver("copying the ink state from the GPU"))
    }

    /// The fields, copied back into the CPU solver's types, owned, the mirror's masks copied
    /// too (the parity checks'; a frame takes [`CudaInk::read_back_cells`], and
    /// [`CudaInk::with_read_back`] lends the masks).
    pub fn read_back(&self) -> Result<Fields, CudaError> {
        let ([u, v, p], ink, curl, divergence) = self.download_values()?;
        let mut flow = self.mirror.current();
        (flow.u.data, flow.v.data, flow.p.data) = (u, v, p);
        Ok(Fields {
            flow,
            ink,
            curl,
            divergence,
        })
    }

    /// The flow's values and the ink read back for a frame, owned: the mirror's cells and the
    /// values downloaded ([`FlowCopy`]: not its masks, stencil or fixed velocities, which a
    /// frame never reads and which are not brought up to date).
    pub fn read_back_cells(&self) -> Result<(FlowCopy, Ink), CudaError> {
        let (values, ink, _, _) = self.download_values()?;
        Ok((FlowCopy::with_values(&self.mirror.flow(), values), ink))
    }

    /// Calls `f` with the fields read back: the flow is the host mirror's, brought up to date
    /// in place and lent with the downloaded values in it ([`Mirror::with_values`]: no
    /// copy of its masks), the ink, curl and divergence downloaded.
    pub fn with_read_back<R>(
        &self,
        f: impl FnOnce(&Flow, &Ink, &Field, &Field) -> R,
    ) -> Result<R, CudaError> {
        let (values, ink, curl, divergence) = self.download_values()?;
        let lent = |flow: &Flow| f(flow, &ink, &curl, &divergence);
        Ok(self.mirror.with_values(values, lent))
    }

    /// The velocity (u, v), pressure, ink, curl and divergence copied from the GPU (for
    /// frames, exports and the picture's host-copy fallback; waits for the stream).
    fn download_values(&self) -> Result<Downloaded, CudaError> {
        let g = self.grid;
        let (nx, ny, dx) = (g.nx as usize, g.ny as usize, g.dx);
        let b = &self.buffers;
        let mut values: [Vec<f32>; 3] = Default::default();
        for (slice, into) in [&b.u, &b.v, &b.p].into_iter().zip(&mut values) {
            self.download(slice, into)?;
        }
        let mut planes = Vec::new();
        self.download(&b.ink, &mut planes)?;
        let mut curl = Field::new(nx, ny, [0.5, 0.5], dx);
        let mut divergence = curl.clone();
        self.download(&b.curl, &mut curl.data)?;
        self.download(&b.divergence, &mut divergence.data)?;
        self.stream
            .synchronize()
            .map_err(CudaError::driver("copying the ink state from the GPU"))?;
        let mut ink = Ink::new(g.ink_nx as usize, g.ink_ny as usize, g.ink_h);
        for (channel, plane) in ink
            .channels
            .iter_mut()
            .zip(planes.chunks_exact(g.ink_cells()))
        {
            channel.data.copy_from_slice(plane);
        }
        Ok((values, ink, curl, divergence))
    }

    /// The flow's shape, solid cells and moving discs on the host, behind the mirror's guard;
    /// its masks may lag the cells (they are brought up to date when read:
    /// [`CudaInk::read_back`]) and its values are not kept (empty).
    pub fn mirror(&self) -> std::cell::Ref<'_, Flow> {
        self.mirror.flow()
    }
}

/// The cells the pressure is solved for (`Poisson::solved`): the count the residual's RMS
/// divides by, on the GPU (`CudaInk::upload`, kept up to date by `set_walls`) and in the
/// parity checks' report of the CPU's (`parity::report_of`), so the emulated pressure stage's
/// residual is compared through it.
pub(super) fn solved_cells(flow: &Flow) -> usize {
    (0..flow.poisson.cells.len())
        .filter(|&k| flow.poisson.solved(k))
        .count()
}
