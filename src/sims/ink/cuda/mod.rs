//! Ink's CUDA solver: the fields live on the GPU and each stage of the CPU solver (`cpu.rs`)
//! runs as kernels of `kernels/ink.cu` (same names, same operations), launched through the
//! shared CUDA layer (`src/cuda/`) on one stream. A frame's steps enqueue their kernels with no
//! host synchronisation; the frame ends with the statistics reduced on the GPU and one 72-byte
//! copy back (the frame's one synchronisation), which also carries the stage events' end.
//!
//! The pressure is solved by Jacobi sweeps or, with `pressure_solver = "multigrid"`, by the CPU's
//! multigrid V-cycles (`multigrid.rs`: the level hierarchy pooled on the GPU, its masks uploaded
//! with the flow's).
//!
//! Here: the solver's state (its buffers, statistics slots and memory needs), its construction,
//! reset and boundary; `transfer.rs` the fields' up- and download, `frame.rs` a frame's steps
//! and its end, `stages.rs` the launches of each stage, `step_graph.rs` a step's launches as
//! one CUDA graph, `kernels.rs` (and `kernels/`) the typed
//! launches, `multigrid.rs` the multigrid pressure solver's levels and launches (`hierarchy.rs`
//! its levels on the host), `walls.rs` obstacles changed between steps (a moving disc's rows
//! closed on the GPU), `picture.rs` the picture through a GL texture (CUDA–GL interop),
//! `parity.rs` the comparison with the CPU solver stage by stage, and `emulation.rs` (tests)
//! the same comparison with the kernels compiled as C++.

mod frame;
pub mod hierarchy;
pub mod kernels;
pub mod multigrid;
pub mod parity;
pub mod parity_walls;
#[cfg(test)]
mod patch_tests;
mod picture;
mod stages;
mod step_graph;
mod transfer;
mod walls;
#[cfg(test)]
mod walls_read_tests;
#[cfg(test)]
mod walls_tests;
#[cfg(test)]
mod walls_timing;

#[cfg(test)]
mod emulation;
#[cfg(test)]
mod emulation_multigrid;
#[cfg(test)]
mod emulation_sides;

use super::fields::{Field, Flow, Ink};
use super::params::InkParams;
use super::stamp::{BrushStamp, STAMP_TEXELS};
use super::{InkStage, SolveReport};
use crate::cuda::interop::GlInterop;
use crate::cuda::{CudaError, EventTimer, Records};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use kernels::{InkGrid, InkKernels};
use multigrid::GpuMultigrid;
use std::sync::Arc;

/// The line logged the first time the flow is read back through a copy of the host mirror
/// (a read while `InkSolver::flow`'s guard is alive, `walls::Mirror::current`).
pub const MIRROR_COPIED: &str = "ink (CUDA): the flow read back while its host mirror is lent \
     (InkSolver::flow's guard alive): its stale rows are brought up to date in a copy, again at \
     each such read";

/// Slots of the statistics array the reductions fill (`reduce_finish`'s `first`).
pub mod slot {
    /// Σ d² over the fluid cells before the projection.
    pub const DIVERGENCE_BEFORE: u32 = 0;
    /// Σ d² after it.
    pub const DIVERGENCE_AFTER: u32 = 1;
    /// Σ r² of the pressure equation over the solved cells.
    pub const RESIDUAL: u32 = 2;
    /// Σ ink, then Σ ½|u|², the largest |u|², the non-finite faces (`reduce_totals`).
    pub const TOTALS: u32 = 3;
    /// The picture's largest |scalar| and largest |u|² (`picture_scale`).
    pub const PICTURE: u32 = 7;
    /// The multigrid's Σ over a level's fluid cells (its mean's numerator).
    pub const MEAN: u32 = 9;
    /// Slots in all.
    pub const COUNT: usize = 10;
}

/// Splat records the GPU holds at first: a stroke's 64 stamps, three records each
/// (`MOST_STAMPS_PER_STEP`); more grow the array (65 stamps are padded to 128).
const SPLATS_ALLOCATED: usize = 3 * super::scene::MOST_STAMPS_PER_STEP;

/// The solver's fields as the CPU solver holds them (read back from the GPU).
#[derive(Clone, Debug)]
pub struct Fields {
    /// The flow (with its masks).
    pub flow: Flow,
    /// The ink.
    pub ink: Ink,
    /// The curl of the last step that had vorticity confinement.
    pub curl: Field,
    /// The divergence before the last projection.
    pub divergence: Field,
}

/// What the end of a frame measured on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// The amount of ink, m² (`Ink::total`).
    pub ink: f64,
    /// ½ Σ |u|² × cell area at the centres.
    pub kinetic_energy: f64,
    /// The largest speed at a centre, m/s.
    pub max_speed: f64,
    /// Faces whose velocity is NaN or infinite.
    pub non_finite: u64,
}

/// Bytes of GPU memory per velocity cell: u and v four times (the field, the advection's
/// output, MacCormack's φ̂, the closed faces' fixed values), p twice (Jacobi's ping-pong),
/// curl, divergence, and four masks (the multigrid's levels come on top,
/// [`GpuMultigrid::bytes`]).
pub const BYTES_PER_CELL: u64 = 4 * (8 + 2 + 2) + 4;
/// Bytes per ink cell: three channels, three times.
pub const BYTES_PER_INK_CELL: u64 = 4 * 9;

/// GPU memory `params` needs, bytes (with the reductions' partials, a row of faces and the
/// multigrid's levels).
pub fn gpu_bytes(params: &InkParams) -> u64 {
    let g = InkGrid::new(params);
    g.faces() as u64 * BYTES_PER_CELL
        + g.ink_cells() as u64 * BYTES_PER_INK_CELL
        + 4 * 8 * kernels::blocks(g.ink_cells()) as u64
        + GpuMultigrid::bytes(params.cells_x, params.cells_y)
}

pub(super) struct Buffers {
    pub u: CudaSlice<f32>,
    pub v: CudaSlice<f32>,
    pub u_next: CudaSlice<f32>,
    pub v_next: CudaSlice<f32>,
    pub u_hat: CudaSlice<f32>,
    pub v_hat: CudaSlice<f32>,
    pub p: CudaSlice<f32>,
    pub p_next: CudaSlice<f32>,
    /// Three planes of ink cells each.
    pub ink: CudaSlice<f32>,
    pub ink_next: CudaSlice<f32>,
    pub ink_hat: CudaSlice<f32>,
    pub curl: CudaSlice<f32>,
    pub divergence: CudaSlice<f32>,
    pub u_open: CudaSlice<u8>,
    pub v_open: CudaSlice<u8>,
    pub solid: CudaSlice<u8>,
    pub stencil: CudaSlice<u8>,
    /// The closed faces' fixed velocities (`Flow::fixed`), as the host last sent them.
    pub u_fixed: CudaSlice<f32>,
    pub v_fixed: CudaSlice<f32>,
    /// The moving discs' records `wall_rows` reads (centre, radius, velocity; grown as needed).
    pub wall_discs: CudaSlice<f32>,
    /// Per block of the largest launch, four quantities.
    pub partials: CudaSlice<f64>,
    /// [`slot::COUNT`] values.
    pub stats: CudaSlice<f64>,
    /// The multigrid pressure solver's levels.
    pub multigrid: GpuMultigrid,
    /// The brush stamps' splat records the `splat` launches read (three a stamp; sent when
    /// they change, grown as needed).
    pub splats: Records<kernels::InkSplat>,
    /// The brush stamp's texture (`stamp.rs`), and which stamp it holds.
    pub stamp: CudaSlice<f32>,
    pub stamp_kind: BrushStamp,
}

/// The CUDA ink solver.
pub struct CudaInk {
    /// Parameters in force (the grid is fixed; the rest may change between steps).
    pub params: InkParams,
    /// What the last frame's last projection did.
    pub report: SolveReport,
    /// What the last frame ended with.
    pub totals: Totals,
    /// GPU seconds per stage since the last reset, in [`InkStage::ALL`] order.
    pub stage_seconds: [f64; InkStage::ALL.len()],
    grid: InkGrid,
    /// The flow's shape, cells and masks on the host (masks taken lazily, `walls.rs`); its
    /// values are not kept.
    mirror: walls::Mirror,
    solved_cells: usize,
    device: usize,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: InkKernels,
    buffers: Buffers,
    timer: EventTimer<InkStage>,
    stage_timing: bool,
    frame_open: bool,
    interop: GlInterop,
    /// The surface object the picture kernel writes the mapped texture through.
    surface: crate::cuda::interop::MappedSurface,
    /// Multigrid levels of at most this many cells run in one block.
    tail_cells: usize,
    interop_noted: bool,
    /// The rows of masks and fixed velocities `set_walls` last sent (`walls.rs`).
    wall_rows: walls::WallRows,
    /// The steps' CUDA graphs (`step_graph.rs`).
    graphs: step_graph::StepGraphs,
}

/// A fluid at rest in the box of `params` whose cells are solid where `solid(x, y)` at their
/// centres: the CPU solver's starting state (`CpuInk::new`).
pub fn rest_state(params: &InkParams, solid: &dyn Fn(f32, f32) -> bool) -> (Flow, Ink) {
    let (nx, ny, dx) = (params.cells_x, params.cells_y, params.dx());
    let mut flow = Flow::new(nx, ny, dx, params.boundary);
    let cells = (0..nx * ny)
        .map(|k| {
            let (x, y) = flow.p.position(k % nx, k / nx);
            solid(x, y)
        })
        .collect();
    flow.set_solid(cells);
    let s = params.ink_scale;
    (flow, Ink::new(nx * s, ny * s, dx / s as f32))
}

impl CudaInk {
    /// A fluid at rest with no ink on CUDA device `device`; `solid(x, y)` says which cell
    /// centres are inside obstacles. Fails when CUDA is unavailable or the grid does not fit in
    /// the GPU's free memory (checked before allocating).
    pub fn new_on(
        device: usize,
        params: InkParams,
        solid: &dyn Fn(f32, f32) -> bool,
    ) -> Result<Self, CudaError> {
        params
            .validate()
            .map_err(|e| CudaError::Setting(format!("{}: {}", e.key, e.message)))?;
        let sync_check = crate::cuda::sync_check_requested()?;
        let graphs = crate::cuda::graphs_requested()?;
        let context = crate::cuda::context(device)?;
        let needed = gpu_bytes(&params);
        let (free, _) = context
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        if needed > free as u64 {
            let name = context.name().unwrap_or_else(|_| "the GPU".into());
            return Err(CudaError::Unavailable(format!(
                "{}×{} cells (ink ×{}) need {} of GPU memory, but {name} has only {} free; use \
                 fewer cells or --backend cpu",
                params.cells_x,
                params.cells_y,
                params.ink_scale,
                crate::host::format_bytes(needed),
                crate::host::format_bytes(free as u64)
            )));
        }
        let kernels = InkKernels::load(&context, sync_check)?;
        // SAFETY: set before any allocation of this context's solver; all work goes to `stream`.
        unsafe { context.disable_event_tracking() };
        let stream = context
            .new_stream()
            .map_err(CudaError::driver("creating a CUDA stream"))?;
        let grid = InkGrid::new(&params);
        let splats = Records::new(&stream, SPLATS_ALLOCATED)?;
        let buffers = Self::allocate(&stream, &grid, splats)
            .map_err(CudaError::driver("allocating GPU memory"))?;
        let (flow, ink) = rest_state(&params, solid);
        let mut solver = CudaInk {
            report: SolveReport::default(),
            totals: Totals::default(),
            stage_seconds: [0.0; InkStage::ALL.len()],
            grid,
            mirror: walls::Mirror::new(&flow),
            solved_cells: 0,
            device,
            timer: EventTimer::new(context.clone()),
            context,
            stream,
            kernels,
            buffers,
            stage_timing: true,
            frame_open: false,
            interop: GlInterop::default(),
            surface: Default::default(),
            tail_cells: multigrid::TAIL_CELLS,
            interop_noted: false,
            wall_rows: Default::default(),
            graphs: step_graph::StepGraphs::new(graphs),
            params,
        };
        solver.upload(&flow, &ink, None, None)?;
        Ok(solver)
    }

    fn allocate(
        stream: &Arc<CudaStream>,
        g: &InkGrid,
        splats: Records<kernels::InkSplat>,
    ) -> Result<Buffers, cudarc::driver::DriverError> {
        let (nu, nv, nc, ni) = (g.u_faces(), g.v_faces(), g.cells(), 3 * g.ink_cells());
        Ok(Buffers {
            u: stream.alloc_zeros(nu)?,
            v: stream.alloc_zeros(nv)?,
            u_next: stream.alloc_zeros(nu)?,
            v_next: stream.alloc_zeros(nv)?,
            u_hat: stream.alloc_zeros(nu)?,
            v_hat: stream.alloc_zeros(nv)?,
            p: stream.alloc_zeros(nc)?,
            p_next: stream.alloc_zeros(nc)?,
            ink: stream.alloc_zeros(ni)?,
            ink_next: stream.alloc_zeros(ni)?,
            ink_hat: stream.alloc_zeros(ni)?,
            curl: stream.alloc_zeros(nc)?,
            divergence: stream.alloc_zeros(nc)?,
            u_open: stream.alloc_zeros(nu)?,
            v_open: stream.alloc_zeros(nv)?,
            solid: stream.alloc_zeros(nc)?,
            stencil: stream.alloc_zeros(nc)?,
            u_fixed: stream.alloc_zeros(nu)?,
            v_fixed: stream.alloc_zeros(nv)?,
            wall_discs: stream.alloc_zeros(5 * 4)?,
            partials: stream.alloc_zeros(4 * kernels::blocks(g.ink_cells()))?,
            stats: stream.alloc_zeros(slot::COUNT)?,
            multigrid: GpuMultigrid::new(stream, g.nx as usize, g.ny as usize)?,
            splats,
            stamp: stream.alloc_zeros(STAMP_TEXELS * STAMP_TEXELS)?,
            stamp_kind: BrushStamp::Round,
        })
    }

    /// The device this solver runs on.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The backend's note on its kernels ([`crate::cuda::GraphMode::kernels_note`]).
    pub fn kernel_origin(&self) -> String {
        let kernels = &self.kernels;
        self.graphs
            .mode
            .kernels_note(kernels.origin(), kernels.sync_check())
    }

    /// Turns the per-stage CUDA events on (the default) or off.
    pub fn set_stage_timing(&mut self, enabled: bool) {
        self.stage_timing = enabled;
    }

    /// Makes `boundary` the box's sides: the masks, the stencil and the grid's constants
    /// follow (as setting the CPU flow's boundary and its solid cells again).
    pub fn set_boundary(&mut self, boundary: super::Boundary) -> Result<(), CudaError> {
        let mut fields = self.read_back()?;
        self.params.boundary = boundary;
        self.grid = InkGrid::new(&self.params);
        fields.flow.boundary = boundary;
        let mask = fields.flow.solid().to_vec();
        fields.flow.set_solid(mask);
        self.upload(&fields.flow, &fields.ink, None, None)
    }

    /// Back to a fluid at rest with no ink, obstacles where `solid(x, y)`, on the grid of
    /// [`CudaInk::params`] (the grid's record made again from them: the sides may have changed
    /// with them; the grid's size may not: an error, the arrays are this size's).
    pub fn clear(&mut self, solid: &dyn Fn(f32, f32) -> bool) -> Result<(), CudaError> {
        let grid = InkGrid::new(&self.params);
        let size = |g: &InkGrid| (g.nx, g.ny, g.ink_scale);
        if size(&grid) != size(&self.grid) {
            let [(x, y, s), (a, b, t)] = [size(&self.grid), size(&grid)];
            return Err(CudaError::Setting(format!(
                "clearing the CUDA ink solver of {x}×{y} cells (ink ×{s}) onto {a}×{b} (ink ×{t}): \
                 another grid size needs a new solver"
            )));
        }
        self.grid = grid;
        let (flow, ink) = rest_state(&self.params, solid);
        let zero = Field::new(flow.nx, flow.ny, [0.5, 0.5], flow.dx);
        self.upload(&flow, &ink, Some(&zero), Some(&zero))?;
        self.report = SolveReport::default();
        self.totals = Totals::default();
        Ok(())
    }
}
