//! The coarse correction's kernels (`kernels/coarse.cuh`), one typed launch per kernel; the
//! sequence that calls them is `coarse.rs`.

use super::coarse::{CoarseLevel, TAIL_THREADS};
use super::params::{GpuObstacle, GpuParams};
use super::pbf::{per_element, PbfKernels};
use crate::cuda::launch::{self, OrNull};
use crate::sims::pbf::SolverError;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};

/// The coarse correction's kernels (`coarse.cuh`), one method per kernel taking its parameters
/// in order, as the particle kernels' in pbf.rs. The per-cell kernels of `p` run one thread per
/// cell of the neighbour grid (level 0, `p.cell_count()`), a level's kernels one per cell of
/// the level they write; every pooled array holds every level.
#[allow(clippy::too_many_arguments)]
impl PbfKernels {
    /// Each coarse cell's fluid volume and mean density constraint from the particles in it.
    pub(super) fn coarse_gather(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        predicted: &CudaSlice<[f32; 4]>,
        densities: &CudaSlice<f32>,
        cell_start: &CudaSlice<u32>,
        volume: &mut CudaSlice<f32>,
        mean_constraint: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (p, predicted, densities, cell_start, volume, mean_constraint);
        // SAFETY: coarse.cuh's parameters; per-cell arrays of p.cell_count() cells.
        unsafe { self.launch("coarse_gather", stream, per_cell(p), args) }
    }

    /// Solid, fluid or air per cell (level 0 of `kinds`), the fluid fractions, and whether any
    /// cell is air.
    pub(super) fn coarse_classify(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        solid: &CudaSlice<u8>,
        volume: &CudaSlice<f32>,
        kinds: &mut CudaSlice<u8>,
        fractions: &mut CudaSlice<f32>,
        any_air: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let args = (p, solid, volume, kinds, fractions, any_air);
        // SAFETY: coarse.cuh's parameters; as coarse_gather, any_air one value.
        unsafe { self.launch("coarse_classify", stream, per_cell(p), args) }
    }

    /// The Poisson problem's right-hand side, and φ warm-started as φ · (dt / `last_dt`)².
    pub(super) fn coarse_prepare(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        kinds: &CudaSlice<u8>,
        volume: &CudaSlice<f32>,
        mean_constraint: &CudaSlice<f32>,
        any_air: &CudaSlice<u32>,
        last_dt: &CudaSlice<f32>,
        rhs: &mut CudaSlice<f32>,
        phi: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            kinds,
            volume,
            mean_constraint,
            any_air,
            last_dt,
            rhs,
            phi,
        );
        // SAFETY: coarse.cuh's parameters; as coarse_gather, last_dt one value.
        unsafe { self.launch("coarse_prepare", stream, per_cell(p), args) }
    }

    /// The kinds of level `coarse` from those of level `fine`.
    pub(super) fn mg_coarsen(
        &self,
        stream: &CudaStream,
        fine: CoarseLevel,
        coarse: CoarseLevel,
        kinds: &mut CudaSlice<u8>,
    ) -> Result<(), SolverError> {
        let args = (&fine, &coarse, kinds);
        // SAFETY: coarse.cuh's parameters; both levels lie in the pooled kinds.
        unsafe {
            self.launch(
                "mg_coarsen",
                stream,
                per_element(coarse.cells as usize),
                args,
            )
        }
    }

    /// One red-black Gauss–Seidel sweep of colour `colour` on `level`.
    pub(super) fn mg_smooth(
        &self,
        stream: &CudaStream,
        level: CoarseLevel,
        kinds: &CudaSlice<u8>,
        fractions: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
        b: &CudaSlice<f32>,
        colour: i32,
    ) -> Result<(), SolverError> {
        let args = (&level, kinds, fractions, x, b, &colour);
        // SAFETY: coarse.cuh's parameters; the level lies in the pools.
        unsafe { self.launch("mg_smooth", stream, per_element(level.cells as usize), args) }
    }

    /// r = b − A x on `level`.
    pub(super) fn mg_residual(
        &self,
        stream: &CudaStream,
        level: CoarseLevel,
        kinds: &CudaSlice<u8>,
        fractions: &CudaSlice<f32>,
        x: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        r: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (&level, kinds, fractions, x, b, r);
        // SAFETY: coarse.cuh's parameters; the level lies in the pools.
        unsafe {
            self.launch(
                "mg_residual",
                stream,
                per_element(level.cells as usize),
                args,
            )
        }
    }

    /// `fine`'s residual restricted into `coarse`'s b, and `coarse`'s x zeroed.
    pub(super) fn mg_restrict(
        &self,
        stream: &CudaStream,
        fine: CoarseLevel,
        coarse: CoarseLevel,
        kinds: &CudaSlice<u8>,
        r: &CudaSlice<f32>,
        b: &mut CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (&fine, &coarse, kinds, r, b, x);
        // SAFETY: coarse.cuh's parameters; both levels lie in the pools.
        unsafe {
            self.launch(
                "mg_restrict",
                stream,
                per_element(coarse.cells as usize),
                args,
            )
        }
    }

    /// `coarse`'s x interpolated and added to `fine`'s.
    pub(super) fn mg_prolongate(
        &self,
        stream: &CudaStream,
        coarse: CoarseLevel,
        fine: CoarseLevel,
        kinds: &CudaSlice<u8>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (&coarse, &fine, kinds, x);
        // SAFETY: coarse.cuh's parameters; both levels lie in the pools.
        unsafe {
            self.launch(
                "mg_prolongate",
                stream,
                per_element(fine.cells as usize),
                args,
            )
        }
    }

    /// One block of [`TAIL_THREADS`]: the V-cycle's levels `first..count`, down and up.
    pub(super) fn mg_tail(
        &self,
        stream: &CudaStream,
        levels: &CudaSlice<CoarseLevel>,
        first: usize,
        count: usize,
        kinds: &CudaSlice<u8>,
        fractions: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
        b: &mut CudaSlice<f32>,
        r: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let (first, count) = (first as i32, count as i32);
        let args = (levels, &first, &count, kinds, fractions, x, b, r);
        // SAFETY: coarse.cuh's parameters; `levels` holds `count` levels, from `first` on in
        // the pools.
        unsafe { self.launch("mg_tail", stream, launch::one_block(TAIL_THREADS), args) }
    }

    /// out = A x on `level` (minus from `b`, if given: b − A x).
    pub(super) fn pcg_operator(
        &self,
        stream: &CudaStream,
        level: CoarseLevel,
        kinds: &CudaSlice<u8>,
        fractions: &CudaSlice<f32>,
        x: &CudaSlice<f32>,
        b: Option<&CudaSlice<f32>>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (&level, kinds, fractions, x, OrNull(b), out);
        // SAFETY: coarse.cuh's parameters; vectors of the level's cells.
        unsafe {
            self.launch(
                "pcg_operator",
                stream,
                per_element(level.cells as usize),
                args,
            )
        }
    }

    /// Adds a · b (a · (b − c) when `c` is given) of `n` values into `scalars[slot]`.
    pub(super) fn pcg_dot(
        &self,
        stream: &CudaStream,
        n: usize,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: Option<&CudaSlice<f32>>,
        scalars: &mut CudaSlice<f64>,
        slot: i32,
    ) -> Result<(), SolverError> {
        let count = n as u32;
        let args = (&count, a, b, OrNull(c), scalars, &slot);
        // SAFETY: coarse.cuh's parameters; vectors of at least n values, slot < 8.
        unsafe { self.launch("pcg_dot", stream, per_element(n), args) }
    }

    /// One thread: the conjugate gradient's α (`mode` 0) or β (1, 2: the first) from its dot
    /// products.
    pub(super) fn pcg_scalars(
        &self,
        stream: &CudaStream,
        scalars: &mut CudaSlice<f64>,
        mode: i32,
    ) -> Result<(), SolverError> {
        let args = (scalars, &mode);
        // SAFETY: coarse.cuh's parameters; the 8 scalars.
        unsafe { self.launch("pcg_scalars", stream, launch::one_block(1), args) }
    }

    /// x += α p, r −= α q, the old r kept in `r_previous` (`n` values).
    pub(super) fn pcg_step(
        &self,
        stream: &CudaStream,
        n: usize,
        scalars: &CudaSlice<f64>,
        p: &CudaSlice<f32>,
        q: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
        r: &mut CudaSlice<f32>,
        r_previous: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let count = n as u32;
        let args = (&count, scalars, p, q, x, r, r_previous);
        // SAFETY: coarse.cuh's parameters; vectors of at least n values.
        unsafe { self.launch("pcg_step", stream, per_element(n), args) }
    }

    /// p = z + β p (`n` values).
    pub(super) fn pcg_direction(
        &self,
        stream: &CudaStream,
        n: usize,
        scalars: &CudaSlice<f64>,
        z: &CudaSlice<f32>,
        p: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let count = n as u32;
        let args = (&count, scalars, z, p);
        // SAFETY: coarse.cuh's parameters; vectors of at least n values.
        unsafe { self.launch("pcg_direction", stream, per_element(n), args) }
    }

    /// b = r and x = 0 (`n` values): the V-cycle's start.
    pub(super) fn mg_load(
        &self,
        stream: &CudaStream,
        n: usize,
        r: &CudaSlice<f32>,
        b: &mut CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let count = n as u32;
        let args = (&count, r, b, x);
        // SAFETY: coarse.cuh's parameters; vectors of at least n values.
        unsafe { self.launch("mg_load", stream, per_element(n), args) }
    }

    /// The displacement −∇φ on every face of the three axes (one thread per face, numbered
    /// axis after axis).
    pub(super) fn coarse_faces(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        kinds: &CudaSlice<u8>,
        fractions: &CudaSlice<f32>,
        phi: &CudaSlice<f32>,
        faces_x: &mut CudaSlice<f32>,
        faces_y: &mut CudaSlice<f32>,
        faces_z: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let faces = faces_x.len() + faces_y.len() + faces_z.len();
        let args = (p, kinds, fractions, phi, faces_x, faces_y, faces_z);
        // SAFETY: coarse.cuh's parameters; each axis' array holds its faces of the grid of p.
        unsafe { self.launch("coarse_faces", stream, per_element(faces), args) }
    }

    /// Every particle moved by the faces' displacement, projected out of walls and obstacles;
    /// the step's dt into `last_dt`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn coarse_apply(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        obstacles: &CudaSlice<GpuObstacle>,
        faces_x: &CudaSlice<f32>,
        faces_y: &CudaSlice<f32>,
        faces_z: &CudaSlice<f32>,
        predicted: &mut CudaSlice<[f32; 4]>,
        last_dt: &mut CudaSlice<f32>,
    ) -> Result<(), SolverError> {
        let args = (p, obstacles, faces_x, faces_y, faces_z, predicted, last_dt);
        let particles = per_element(p.particle_count as usize);
        // SAFETY: coarse.cuh's parameters; one thread per particle of p, last_dt one value.
        unsafe { self.launch("coarse_apply", stream, particles, args) }
    }
}

/// One thread per cell of the neighbour grid of `p` (the coarse hierarchy's level 0).
pub(super) fn per_cell(p: &GpuParams) -> LaunchConfig {
    per_element(p.cell_count())
}
