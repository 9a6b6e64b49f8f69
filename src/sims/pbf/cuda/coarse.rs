//! Host side of `kernels/coarse.cuh`: the coarse-grid correction on the GPU, the same sequence
//! as `CoarseCorrection::solve` and `Multigrid::solve` on the CPU (`src/sims/pbf/coarse.rs`,
//! `src/sims/pbf/multigrid.rs`), with every scalar of the conjugate gradient kept on the GPU (no
//! synchronisation).
//!
//! Launches per solver step: 3 + (levels − 1) to classify, 2 per preconditioner application
//! and per CG iteration for its vectors and dot products, and per V-cycle 11 per level that
//! needs many blocks plus one `mg_tail` launch that runs every level of at most
//! [`TAIL_CELLS`] cells in one block.

use super::params::GpuParams;
use super::pbf::{per_element, PbfKernels};
use crate::sims::pbf::coarse::{CoarseCorrection, CG_ITERATIONS, CG_ITERATIONS_COLD};
use crate::sims::pbf::multigrid::{Multigrid, SMOOTHING_SWEEPS};
use crate::sims::pbf::{SolverError, World};
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
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
    /// The step length φ was last solved for (the warm start scales φ by (dt / last_dt)²).
    last_dt: f32,
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
            last_dt: 0.0,
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
        obstacles: &CudaSlice<super::params::GpuObstacle>,
        predicted: &mut CudaSlice<[f32; 4]>,
        densities: &CudaSlice<f32>,
        cell_start: &CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let level0 = self.levels[0];
        let n = level0.cells;
        let cells = per_element(n as usize);
        stream
            .memset_zeros(&mut self.any_air)
            .map_err(driver("clearing the coarse grid's air flag"))?;
        let k = &kernels.coarse_gather;
        let mut launch = stream.launch_builder(k.function());
        launch
            .arg(constants)
            .arg(&*predicted)
            .arg(densities)
            .arg(cell_start)
            .arg(&mut self.volume)
            .arg(&mut self.mean_constraint);
        // SAFETY: arguments as in coarse.cuh; one thread per coarse cell (= grid cell).
        unsafe { k.launch(&mut launch, cells)? };
        let k = &kernels.coarse_classify;
        let mut launch = stream.launch_builder(k.function());
        launch
            .arg(constants)
            .arg(&self.solid)
            .arg(&self.volume)
            .arg(&mut self.kinds)
            .arg(&mut self.fractions)
            .arg(&mut self.any_air);
        // SAFETY: as above; level 0 is the first `n` kinds.
        unsafe { k.launch(&mut launch, cells)? };
        let scale = if self.last_dt > 0.0 {
            (constants.dt / self.last_dt).powi(2)
        } else {
            0.0
        };
        self.last_dt = constants.dt;
        // The CPU's choice (`CoarseCorrection::apply`): more iterations from φ = 0.
        let iterations = if scale > 0.0 {
            CG_ITERATIONS
        } else {
            CG_ITERATIONS_COLD
        };
        let k = &kernels.coarse_prepare;
        let mut launch = stream.launch_builder(k.function());
        launch
            .arg(constants)
            .arg(&self.kinds)
            .arg(&self.volume)
            .arg(&self.mean_constraint)
            .arg(&self.any_air)
            .arg(&scale)
            .arg(&mut self.rhs)
            .arg(&mut self.phi);
        // SAFETY: as above.
        unsafe { k.launch(&mut launch, cells)? };
        for l in 1..self.levels.len() {
            let (fine, coarse) = (self.levels[l - 1], self.levels[l]);
            let k = &kernels.mg_coarsen;
            let mut launch = stream.launch_builder(k.function());
            launch.arg(&fine).arg(&coarse).arg(&mut self.kinds);
            // SAFETY: both levels lie in the pooled kinds.
            unsafe { k.launch(&mut launch, per_element(coarse.cells as usize))? };
        }
        self.solve(stream, kernels, iterations)?;

        let total_faces: usize = self.faces.iter().map(|f| f.len()).sum();
        let k = &kernels.coarse_faces;
        let mut launch = stream.launch_builder(k.function());
        let [fx, fy, fz] = &mut self.faces;
        launch
            .arg(constants)
            .arg(&self.kinds)
            .arg(&self.fractions)
            .arg(&self.phi)
            .arg(fx)
            .arg(fy)
            .arg(fz);
        // SAFETY: one thread per face of the three axes, numbered one after the other.
        unsafe { k.launch(&mut launch, per_element(total_faces))? };
        let k = &kernels.coarse_apply;
        let mut launch = stream.launch_builder(k.function());
        let [fx, fy, fz] = &self.faces;
        launch
            .arg(constants)
            .arg(obstacles)
            .arg(fx)
            .arg(fy)
            .arg(fz)
            .arg(predicted);
        // SAFETY: one thread per particle.
        unsafe { k.launch(&mut launch, per_element(constants.particle_count as usize)) }
    }

    /// `Multigrid::solve` from φ: r = b − Aφ, z = M⁻¹r, p = z, then `iterations` + 1 updates of
    /// φ with a preconditioned direction between them.
    fn solve(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
        iterations: usize,
    ) -> Result<(), SolverError> {
        let level0 = self.levels[0];
        let n = level0.cells;
        let vector = per_element(n as usize);
        stream
            .memset_zeros(&mut self.scalars)
            .map_err(driver("clearing the conjugate gradient's scalars"))?;
        let null: u64 = 0;
        let k = &kernels.pcg_operator;
        let mut launch = stream.launch_builder(k.function());
        launch
            .arg(&level0)
            .arg(&self.kinds)
            .arg(&self.fractions)
            .arg(&self.phi)
            .arg(&self.rhs)
            .arg(&mut self.residual);
        // SAFETY: level 0 vectors of n cells.
        unsafe { k.launch(&mut launch, vector)? };
        self.precondition(stream, kernels)?;
        self.dot(stream, kernels, Operands::ResidualZ, PCG_RZ_NEXT)?;
        self.scalars_update(stream, kernels, 2)?;
        self.new_direction(stream, kernels)?;
        for iteration in 0..=iterations {
            let k = &kernels.pcg_operator;
            let mut launch = stream.launch_builder(k.function());
            launch
                .arg(&level0)
                .arg(&self.kinds)
                .arg(&self.fractions)
                .arg(&self.direction)
                .arg(&null)
                .arg(&mut self.product);
            // SAFETY: as above.
            unsafe { k.launch(&mut launch, vector)? };
            self.dot(stream, kernels, Operands::DirectionProduct, PCG_PQ)?;
            self.scalars_update(stream, kernels, 0)?;
            let k = &kernels.pcg_step;
            let mut launch = stream.launch_builder(k.function());
            launch
                .arg(&n)
                .arg(&self.scalars)
                .arg(&self.direction)
                .arg(&self.product)
                .arg(&mut self.phi)
                .arg(&mut self.residual)
                .arg(&mut self.residual_previous);
            // SAFETY: as above.
            unsafe { k.launch(&mut launch, vector)? };
            if iteration == iterations {
                break;
            }
            self.precondition(stream, kernels)?;
            self.dot(stream, kernels, Operands::ZResidualChange, PCG_ZDR)?;
            self.dot(stream, kernels, Operands::ResidualZ, PCG_RZ_NEXT)?;
            self.scalars_update(stream, kernels, 1)?;
            self.new_direction(stream, kernels)?;
        }
        Ok(())
    }

    fn scalars_update(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
        mode: i32,
    ) -> Result<(), SolverError> {
        let k = &kernels.pcg_scalars;
        let mut launch = stream.launch_builder(k.function());
        launch.arg(&mut self.scalars).arg(&mode);
        // SAFETY: one thread updates the 8 scalars.
        unsafe { k.launch(&mut launch, one_thread()) }
    }

    fn new_direction(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
    ) -> Result<(), SolverError> {
        let n = self.levels[0].cells;
        let k = &kernels.pcg_direction;
        let mut launch = stream.launch_builder(k.function());
        // z is level 0 of the pooled x.
        launch
            .arg(&n)
            .arg(&self.scalars)
            .arg(&self.x)
            .arg(&mut self.direction);
        // SAFETY: level 0 vectors of n cells (x holds more).
        unsafe { k.launch(&mut launch, per_element(n as usize)) }
    }

    /// Adds a dot product into scalar `slot`.
    fn dot(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
        operands: Operands,
        slot: i32,
    ) -> Result<(), SolverError> {
        let n = self.levels[0].cells;
        let null: u64 = 0;
        let k = &kernels.pcg_dot;
        let mut launch = stream.launch_builder(k.function());
        launch.arg(&n);
        match operands {
            Operands::ResidualZ => launch.arg(&self.residual).arg(&self.x).arg(&null),
            Operands::DirectionProduct => launch.arg(&self.direction).arg(&self.product).arg(&null),
            Operands::ZResidualChange => launch
                .arg(&self.x)
                .arg(&self.residual)
                .arg(&self.residual_previous),
        };
        launch.arg(&mut self.scalars).arg(&slot);
        // SAFETY: level 0 vectors of n cells; slot < 8.
        unsafe { k.launch(&mut launch, per_element(n as usize)) }
    }

    /// z = M⁻¹ r: one V-cycle from zero on level 0 of the pooled x (`Multigrid::precondition`).
    fn precondition(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
    ) -> Result<(), SolverError> {
        let n = self.levels[0].cells;
        let k = &kernels.mg_load;
        let mut launch = stream.launch_builder(k.function());
        launch
            .arg(&n)
            .arg(&self.residual)
            .arg(&mut self.b)
            .arg(&mut self.x);
        // SAFETY: level 0 is the first n elements of the pools.
        unsafe { k.launch(&mut launch, per_element(n as usize))? };
        for l in 0..self.tail {
            self.smooth(stream, kernels, l)?;
            let level = self.levels[l];
            let k = &kernels.mg_residual;
            let mut launch = stream.launch_builder(k.function());
            launch
                .arg(&level)
                .arg(&self.kinds)
                .arg(&self.fractions)
                .arg(&self.x)
                .arg(&self.b)
                .arg(&mut self.r);
            // SAFETY: the level lies in the pools.
            unsafe { k.launch(&mut launch, per_element(level.cells as usize))? };
            let coarse = self.levels[l + 1];
            let k = &kernels.mg_restrict;
            let mut launch = stream.launch_builder(k.function());
            launch
                .arg(&level)
                .arg(&coarse)
                .arg(&self.kinds)
                .arg(&self.r)
                .arg(&mut self.b)
                .arg(&mut self.x);
            // SAFETY: as above.
            unsafe { k.launch(&mut launch, per_element(coarse.cells as usize))? };
        }
        let first = self.tail as i32;
        let count = self.levels.len() as i32;
        let k = &kernels.mg_tail;
        let mut launch = stream.launch_builder(k.function());
        launch
            .arg(&self.levels_device)
            .arg(&first)
            .arg(&count)
            .arg(&self.kinds)
            .arg(&self.fractions)
            .arg(&mut self.x)
            .arg(&mut self.b)
            .arg(&mut self.r);
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (TAIL_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: one block; the levels from `first` on lie in the pools.
        unsafe { k.launch(&mut launch, config)? };
        for l in (0..self.tail).rev() {
            let (coarse, fine) = (self.levels[l + 1], self.levels[l]);
            let k = &kernels.mg_prolongate;
            let mut launch = stream.launch_builder(k.function());
            launch
                .arg(&coarse)
                .arg(&fine)
                .arg(&self.kinds)
                .arg(&mut self.x);
            // SAFETY: as above.
            unsafe { k.launch(&mut launch, per_element(fine.cells as usize))? };
            self.smooth(stream, kernels, l)?;
        }
        Ok(())
    }

    /// SMOOTHING_SWEEPS red-black sweeps on level `l`.
    fn smooth(
        &mut self,
        stream: &Arc<CudaStream>,
        kernels: &PbfKernels,
        l: usize,
    ) -> Result<(), SolverError> {
        let level = self.levels[l];
        for _ in 0..SMOOTHING_SWEEPS {
            for colour in 0..2i32 {
                let k = &kernels.mg_smooth;
                let mut launch = stream.launch_builder(k.function());
                launch
                    .arg(&level)
                    .arg(&self.kinds)
                    .arg(&self.fractions)
                    .arg(&mut self.x)
                    .arg(&self.b)
                    .arg(&colour);
                // SAFETY: the level lies in the pools.
                unsafe { k.launch(&mut launch, per_element(level.cells as usize))? };
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

fn one_thread() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn driver(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> SolverError {
    move |e| SolverError::Backend(format!("{what}: {e}"))
}
