//! Host side of `kernels/coarse.cuh`: the coarse-grid correction on the GPU, the same sequence
//! as `CoarseCorrection::solve` and `Multigrid::solve` on the CPU (`src/sims/pbf/coarse.rs`,
//! `src/sims/pbf/multigrid.rs`), with every scalar of the conjugate gradient kept on the GPU (no
//! synchronisation).
//!
//! Launches per solver step: 3 + (levels − 1) to classify, 2 per preconditioner application
//! and per CG iteration for its vectors and dot products, and per V-cycle 11 per level that
//! needs many blocks plus one `mg_tail` launch that runs every level of at most
//! [`TAIL_CELLS`] cells in one block. The kernels' typed launches are in `coarse_kernels.rs`.

use super::params::{GpuObstacle, GpuParams};
use super::pbf::PbfKernels;
use crate::cuda::CudaError;
use crate::sims::pbf::coarse::{CoarseCorrection, CG_ITERATIONS, CG_ITERATIONS_COLD};
use crate::sims::pbf::multigrid::{Multigrid, SMOOTHING_SWEEPS};
use crate::sims::pbf::{SolverError, World};
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use std::sync::Arc;

/// Levels of at most this many cells run in the one-block `mg_tail` kernel.
pub const TAIL_CELLS: usize = 8192;
/// Threads of `mg_tail` (`MG_TAIL_THREADS` in coarse.cuh).
pub const TAIL_THREADS: u32 = 1024;

/// One level of the hierarchy, mirrored by `struct CoarseLevel` in `kernels/coarse.cuh`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CoarseLevel {
    /// Cells per axis.
    pub dims: [i32; 3],
    /// 1 / h² per axis: the weight of a face in the Laplacian.
    pub weight: [f32; 3],
    /// The level's first cell in the pooled arrays.
    pub offset: u32,
    /// Cells of the level.
    pub cells: u32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for CoarseLevel {}

/// Slots of the conjugate gradient's scalars (`PCG_*` in coarse.cuh).
const PCG_RZ_NEXT: i32 = 3;
const PCG_PQ: i32 = 1;
const PCG_ZDR: i32 = 2;

/// The correction's arrays on the GPU and the hierarchy's shape.
pub struct GpuCoarse {
    levels: Vec<CoarseLevel>,
    levels_device: CudaSlice<CoarseLevel>,
    /// First level run by `mg_tail`.
    tail: usize,
    solid: CudaSlice<u8>,
    volume: CudaSlice<f32>,
    /// Level 0's fluid fractions: place the free surface between fluid and air cells.
    fractions: CudaSlice<f32>,
    mean_constraint: CudaSlice<f32>,
    rhs: CudaSlice<f32>,
    phi: CudaSlice<f32>,
    any_air: CudaSlice<u32>,
    /// Pooled over the levels.
    kinds: CudaSlice<u8>,
    x: CudaSlice<f32>,
    b: CudaSlice<f32>,
    r: CudaSlice<f32>,
    /// The conjugate gradient's vectors (z is level 0 of `x`).
    residual: CudaSlice<f32>,
    residual_previous: CudaSlice<f32>,
    direction: CudaSlice<f32>,
    product: CudaSlice<f32>,
    scalars: CudaSlice<f64>,
    faces: [CudaSlice<f32>; 3],
    /// The step length φ was last solved for, on the device (0 before the first solve):
    /// coarse_prepare scales φ by (dt / last_dt)², coarse_apply records the step's dt. On the
    /// device so a frame's CUDA graph does not depend on the previous frame's substeps.
    last_dt: CudaSlice<f32>,
    /// Whether a solve has run: the first runs [`CG_ITERATIONS_COLD`] from φ = 0. Host state
    /// the launches depend on: part of a frame graph's key (`frame_graph.rs`).
    pub(super) solved: bool,
}

/// The levels over `world`'s container with the neighbour grid's `dims` cell counts, pooled in
/// order, and the first level `mg_tail` runs.
pub fn hierarchy(world: &World, dims: [usize; 3]) -> (Vec<CoarseLevel>, usize) {
    let cell = CoarseCorrection::cell_size(world, dims).to_array();
    let mut offset = 0u32;
    let levels: Vec<CoarseLevel> = Multigrid::shapes(dims, cell)
        .into_iter()
        .map(|(dims, cell)| {
            let cells = dims.iter().product::<usize>() as u32;
            let level = CoarseLevel {
                dims: dims.map(|d| d as i32),
                weight: cell.map(|h| 1.0 / (h * h)),
                offset,
                cells,
            };
            offset += cells;
            level
        })
        .collect();
    let tail = levels
        .iter()
        .position(|l| l.cells as usize <= TAIL_CELLS)
        .unwrap_or(levels.len() - 1);
    (levels, tail)
}

impl GpuCoarse {
    /// The arrays for `world`'s container with the neighbour grid's `dims` cell counts.
    pub fn new(
        stream: &Arc<CudaStream>,
        world: &World,
        dims: [usize; 3],
    ) -> Result<Self, cudarc::driver::DriverError> {
        let (levels, tail) = hierarchy(world, dims);
        let n = levels[0].cells as usize;
        let pooled = levels.iter().map(|l| l.cells as usize).sum();
        let solid: Vec<u8> = CoarseCorrection::solid_cells(world, dims)
            .into_iter()
            .map(u8::from)
            .collect();
        let face_count = |axis: usize| {
            let mut d = dims;
            d[axis] += 1;
            d.iter().product::<usize>()
        };
        Ok(Self {
            levels_device: stream.clone_htod(&levels)?,
            levels,
            tail,
            solid: stream.clone_htod(&solid)?,
            volume: stream.alloc_zeros(n)?,
            fractions: stream.alloc_zeros(n)?,
            mean_constraint: stream.alloc_zeros(n)?,
            rhs: stream.alloc_zeros(n)?,
            phi: stream.alloc_zeros(n)?,
            any_air: stream.alloc_zeros(1)?,
            kinds: stream.alloc_zeros(pooled)?,
            x: stream.alloc_zeros(pooled)?,
            b: stream.alloc_zeros(pooled)?,
            r: stream.alloc_zeros(pooled)?,
            residual: stream.alloc_zeros(n)?,
            residual_previous: stream.alloc_zeros(n)?,
            direction: stream.alloc_zeros(n)?,
            product: stream.alloc_zeros(n)?,
            scalars: stream.alloc_zeros(8)?,
            faces: [
                stream.alloc_zeros(face_count(0))?,
                stream.alloc_zeros(face_count(1))?,
                stream.alloc_zeros(face_count(2))?,
            ],
            last_dt: stream.alloc_zeros(1)?,
            solved: false,
        })
    }

    /// The correction from the densities of the first compute_lambda: every particle of
    /// `predicted` moves by the displacement, projected out of walls and obstacles.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
        constants: &GpuParams,
        obstacles: &CudaSlice<GpuObstacle>,
        predicted: &mut CudaSlice<[f32; 4]>,
        densities: &CudaSlice<f32>,
        cell_start: &CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        stream
            .memset_zeros(&mut self.any_air)
            .map_err(CudaError::driver("clearing the coarse grid's air flag"))?;
        let p = constants;
        kernels.coarse_gather(
            stream,
            p,
            predicted,
            densities,
            cell_start,
            &mut self.volume,
            &mut self.mean_constraint,
        )?;
        kernels.coarse_classify(
            stream,
            p,
            &self.solid,
            &self.volume,
            &mut self.kinds,
            &mut self.fractions,
            &mut self.any_air,
        )?;
        // The CPU's choice (`CoarseCorrection::apply`): more iterations from φ = 0.
        let iterations = if self.solved {
            CG_ITERATIONS
        } else {
            CG_ITERATIONS_COLD
        };
        self.solved = true;
        kernels.coarse_prepare(
            stream,
            p,
            &self.kinds,
            &self.volume,
            &self.mean_constraint,
            &self.any_air,
            &self.last_dt,
            &mut self.rhs,
            &mut self.phi,
        )?;
        for pair in self.levels.windows(2) {
            kernels.mg_coarsen(stream, pair[0], pair[1], &mut self.kinds)?;
        }
        self.solve(stream, kernels, iterations)?;
        let [fx, fy, fz] = &mut self.faces;
        kernels.coarse_faces(
            stream,
            p,
            &self.kinds,
            &self.fractions,
            &self.phi,
            fx,
            fy,
            fz,
        )?;
        let [fx, fy, fz] = &self.faces;
        kernels.coarse_apply(
            stream,
            p,
            obstacles,
            fx,
            fy,
            fz,
            predicted,
            &mut self.last_dt,
        )
    }

    /// `Multigrid::solve` from φ: r = b − Aφ, z = M⁻¹r, p = z, then `iterations` + 1 updates of
    /// φ with a preconditioned direction between them. z is level 0 of the pooled `x`.
    fn solve(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
        iterations: usize,
    ) -> Result<(), SolverError> {
        let level0 = self.levels[0];
        let n = level0.cells as usize;
        stream
            .memset_zeros(&mut self.scalars)
            .map_err(CudaError::driver(
                "clearing the conjugate gradient's scalars",
            ))?;
        let (kinds, fractions) = (&self.kinds, &self.fractions);
        kernels.pcg_operator(
            stream,
            level0,
            kinds,
            fractions,
            &self.phi,
            Some(&self.rhs),
            &mut self.residual,
        )?;
        self.precondition(stream, kernels)?;
        self.dot(stream, kernels, Operands::ResidualZ, PCG_RZ_NEXT)?;
        kernels.pcg_scalars(stream, &mut self.scalars, 2)?;
        kernels.pcg_direction(stream, n, &self.scalars, &self.x, &mut self.direction)?;
        for iteration in 0..=iterations {
            let (kinds, fractions) = (&self.kinds, &self.fractions);
            kernels.pcg_operator(
                stream,
                level0,
                kinds,
                fractions,
                &self.direction,
                None,
                &mut self.product,
            )?;
            self.dot(stream, kernels, Operands::DirectionProduct, PCG_PQ)?;
            kernels.pcg_scalars(stream, &mut self.scalars, 0)?;
            kernels.pcg_step(
                stream,
                n,
                &self.scalars,
                &self.direction,
                &self.product,
                &mut self.phi,
                &mut self.residual,
                &mut self.residual_previous,
            )?;
            if iteration == iterations {
                break;
            }
            self.precondition(stream, kernels)?;
            self.dot(stream, kernels, Operands::ZResidualChange, PCG_ZDR)?;
            self.dot(stream, kernels, Operands::ResidualZ, PCG_RZ_NEXT)?;
            kernels.pcg_scalars(stream, &mut self.scalars, 1)?;
            kernels.pcg_direction(stream, n, &self.scalars, &self.x, &mut self.direction)?;
        }
        Ok(())
    }

    /// Adds a dot product of level-0 vectors into scalar `slot`.
    fn dot(
        &mut self,
        stream: &CudaStream,
        kernels: &PbfKernels,
        operands: Operands,
        slot: i32,
    ) -> Result<(), SolverError> {
        let n = self.levels[0].cells as usize;
        let (a, b, minus) = match operands {
            Operands::ResidualZ => (&self.residual, &self.x, None),
            Operands::DirectionProduct => (&self.direction, &self.product, None),
            Operands::ZResidualChange => (&self.x, &self.residual, Some(&self.residual_previous)),
        };
        kernels.pcg_dot(stream, n, a, b, minus, &mut self.scalars, slot)
    }

    /// z = M⁻¹ r: one V-cycle from zero on level 0 of the pooled x (`Multigrid::precondition`).
    fn precondition(
        &mut self,
        stream: &CudaStream,
        kernels: &PbfKernels,
    ) -> Result<(), SolverError> {
        let n = self.levels[0].cells as usize;
        kernels.mg_load(stream, n, &self.residual, &mut self.b, &mut self.x)?;
        for l in 0..self.tail {
            self.smooth(stream, kernels, l)?;
            let (level, coarse) = (self.levels[l], self.levels[l + 1]);
            let (kinds, fractions) = (&self.kinds, &self.fractions);
            kernels.mg_residual(
                stream,
                level,
                kinds,
                fractions,
                &self.x,
                &self.b,
                &mut self.r,
            )?;
            kernels.mg_restrict(
                stream,
                level,
                coarse,
                kinds,
                &self.r,
                &mut self.b,
                &mut self.x,
            )?;
        }
        kernels.mg_tail(
            stream,
            &self.levels_device,
            self.tail,
            self.levels.len(),
            &self.kinds,
            &self.fractions,
            &mut self.x,
            &mut self.b,
            &mut self.r,
        )?;
        for l in (0..self.tail).rev() {
            let (coarse, fine) = (self.levels[l + 1], self.levels[l]);
            kernels.mg_prolongate(stream, coarse, fine, &self.kinds, &mut self.x)?;
            self.smooth(stream, kernels, l)?;
        }
        Ok(())
    }

    /// SMOOTHING_SWEEPS red-black sweeps on level `l`.
    fn smooth(
        &mut self,
        stream: &CudaStream,
        kernels: &PbfKernels,
        l: usize,
    ) -> Result<(), SolverError> {
        let level = self.levels[l];
        for _ in 0..SMOOTHING_SWEEPS {
            for colour in 0..2 {
                let (kinds, fractions) = (&self.kinds, &self.fractions);
                kernels.mg_smooth(
                    stream,
                    level,
                    kinds,
                    fractions,
                    &mut self.x,
                    &self.b,
                    colour,
                )?;
            }
        }
        Ok(())
    }
}

/// The pairs of vectors the conjugate gradient takes dot products of.
#[derive(Clone, Copy)]
enum Operands {
    /// r·z.
    ResidualZ,
    /// p·q.
    DirectionProduct,
    /// z·(r − r_previous).
    ZResidualChange,
}
