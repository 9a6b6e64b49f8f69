//! Host side of `kernels/ink.cu`: the module loaded on a device ([`InkKernels`]), the grid record
//! every launch takes by value ([`InkGrid`], mirrored field for field), the launch shapes, and
//! the statistics' reductions. The other kernels' typed launches, each a call of the shared
//! launch helper with the kernel's parameters in order, are grouped by stage: `kernels/advect.rs`
//! (advect), `kernels/splat.rs` (the brush stamps' records and boxes, splat, the buoyancy),
//! `kernels/vorticity.rs` (curl, vorticity), `kernels/projection.rs` (divergence, pressure,
//! subtract_gradient); the picture's are in `picture.rs`, the walls' in `walls.rs` and the
//! multigrid's in `multigrid.rs`.

mod advect;
mod projection;
mod splat;
mod vorticity;

pub use splat::{lattice_rows, splat_records, InkSplat, SplatLattice};

use crate::cuda::launch::{self, KernelArgs};
use crate::cuda::{CudaError, Module};
use crate::sims::ink::boundary::{BOTTOM, LEFT, RIGHT, TOP};
use crate::sims::ink::params::InkParams;
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr, LaunchConfig};
use std::sync::Arc;

/// The module's name: `kernels/ink.cu`.
pub const MODULE: &str = "ink";

/// Threads per block (`INK_BLOCK` in ink.cu; the block reductions assume it).
pub const BLOCK: u32 = 256;

/// The grid's shape and constants, as `struct InkGrid` in ink.cu, derived from [`InkParams`]
/// with the CPU solver's operations (`Flow::new`, `Ink::new`, `Flow::sampler`), so both start
/// from the same numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InkGrid {
    /// Velocity cells along x.
    pub nx: i32,
    /// Velocity cells along y.
    pub ny: i32,
    /// Ink cells along x.
    pub ink_nx: i32,
    /// Ink cells along y.
    pub ink_ny: i32,
    /// Ink cells per velocity cell per axis.
    pub ink_scale: i32,
    /// Cell size, m.
    pub dx: f32,
    /// 1 / dx.
    pub inverse_dx: f32,
    /// Ink cell size, m.
    pub ink_h: f32,
    /// 1 / ink_h.
    pub ink_inverse_h: f32,
    /// ½ dx.
    pub half_cell: f32,
    /// nx · dx.
    pub width: f32,
    /// ny · dx.
    pub height: f32,
    /// Bit per side (left, right, bottom, top): a no-slip wall; bit 4: no-slip obstacles.
    pub sticks: u32,
    /// The fixed normal velocity of closed faces per side (left, right, bottom, top).
    pub fixed: [f32; 4],
    /// Bit per side (left, right, bottom, top, as `sticks`): an outflow (zero pressure
    /// beyond it, its faces open to fluid beside them; `wall_rows`).
    pub outflow: u32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for InkGrid {}

impl InkGrid {
    /// The grid of `params`.
    pub fn new(params: &InkParams) -> InkGrid {
        let (nx, ny, s) = (params.cells_x, params.cells_y, params.ink_scale);
        let dx = params.dx();
        let ink_h = dx / s as f32;
        let b = &params.boundary;
        let sticks = side_bits(|side| b.sticks(side)) | u32::from(b.obstacles_stick()) << 4;
        InkGrid {
            nx: nx as i32,
            ny: ny as i32,
            ink_nx: (nx * s) as i32,
            ink_ny: (ny * s) as i32,
            ink_scale: s as i32,
            dx,
            inverse_dx: 1.0 / dx,
            ink_h,
            ink_inverse_h: 1.0 / ink_h,
            half_cell: 0.5 * dx,
            width: nx as f32 * dx,
            height: ny as f32 * dx,
            sticks,
            fixed: [LEFT, RIGHT, BOTTOM, TOP].map(|side| b.fixed_velocity(side)),
            outflow: side_bits(|side| b.dirichlet(side)),
        }
    }

    /// Velocity cells.
    pub fn cells(&self) -> usize {
        (self.nx * self.ny) as usize
    }

    /// Ink cells (per channel).
    pub fn ink_cells(&self) -> usize {
        (self.ink_nx * self.ink_ny) as usize
    }

    /// Points of (nx + 1) × (ny + 1): the launches that cover both face lattices.
    pub fn faces(&self) -> usize {
        ((self.nx + 1) * (self.ny + 1)) as usize
    }

    /// Vertical faces, (nx + 1) × ny.
    pub fn u_faces(&self) -> usize {
        ((self.nx + 1) * self.ny) as usize
    }

    /// Horizontal faces, nx × (ny + 1).
    pub fn v_faces(&self) -> usize {
        (self.nx * (self.ny + 1)) as usize
    }
}

/// A bit per side of the box where `test(side)` holds, bit `side` (left, right, bottom, top: the
/// layout of `InkGrid::sticks` and `outflow` and of `InkLevel::outflow`).
pub(super) fn side_bits(test: impl Fn(usize) -> bool) -> u32 {
    [LEFT, RIGHT, BOTTOM, TOP]
        .into_iter()
        .map(|side| u32::from(test(side)) << side)
        .sum()
}

/// The kernels of `kernels/ink.cu`, loaded on one device.
pub struct InkKernels {
    module: Module,
}

pub(super) fn per_point(count: usize) -> LaunchConfig {
    launch::per_element(count, BLOCK)
}

/// Blocks of a launch over `count` points (the number of partials a reduction writes).
pub fn blocks(count: usize) -> usize {
    count.div_ceil(BLOCK as usize).max(1)
}

/// The kernels, one method per kernel taking its parameters in order (hence the long lists);
/// here the statistics' reductions, the other stages' in the files of their stages. Every array
/// holds what its lattice has points (`CudaInk::allocate`), the partials four per block of the
/// largest launch; the SAFETY comments name what else a launch relies on.
#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// The kernels the host launches (each an `.entry` of the PTX), each by the method of the
    /// same name.
    pub const NAMES: &'static [&'static str] = &[
        "advect_velocity",
        "advect_velocity_correct",
        "advect_ink",
        "advect_ink_correct",
        "splat",
        "splat_buoyancy",
        "curl",
        "vorticity",
        "divergence",
        "pressure",
        "pressure_residual",
        "pressure_mg_load",
        "pressure_mg_smooth",
        "pressure_mg_residual",
        "pressure_mg_restrict",
        "pressure_mg_prolong",
        "pressure_mg_sum",
        "pressure_mg_remove_mean",
        "pressure_mg_tail",
        "subtract_gradient",
        "wall_rows",
        "close_walls",
        "reduce_totals",
        "reduce_finish",
        "picture_scale",
        "picture",
    ];

    /// Loads the module on `context` and looks every kernel up; with `sync_check` every launch
    /// is synchronised and checked.
    pub fn load(context: &Arc<CudaContext>, sync_check: bool) -> Result<Self, CudaError> {
        Ok(Self {
            module: Module::load(context, MODULE, Self::NAMES, sync_check)?,
        })
    }

    /// Where the code came from, and why.
    pub fn origin(&self) -> &str {
        self.module.origin()
    }

    /// Whether every launch is synchronised and checked.
    pub fn sync_check(&self) -> bool {
        self.module.sync_check()
    }

    /// # Safety
    /// As [`Module::launch`].
    pub(super) unsafe fn launch<'a>(
        &'a self,
        kernel: &'static str,
        stream: &'a CudaStream,
        config: LaunchConfig,
        args: impl KernelArgs<'a>,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.module.launch(kernel, stream, config, args) }
    }

    /// Per block: Σ ink, Σ ½|u|² and the largest |u|² over the fluid cells, the non-finite
    /// faces.
    pub fn reduce_totals(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (u, v, solid): (&CudaSlice<f32>, &CudaSlice<f32>, &CudaSlice<u8>),
        ink: &CudaSlice<f32>,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (g, u, v, solid, ink, partials);
        // SAFETY: ink.cu's parameters; partials hold 4 values per block.
        unsafe { self.launch("reduce_totals", stream, per_point(g.ink_cells()), args) }
    }

    /// The `quantities` partials of a launch over `count` points into `stats[first..]` (sums,
    /// or the largest where bit q of `max_mask` is set).
    pub fn reduce_finish(
        &self,
        stream: &CudaStream,
        partials: &CudaSlice<f64>,
        count: usize,
        quantities: u32,
        max_mask: u32,
        stats: &mut CudaSlice<f64>,
        first: u32,
    ) -> Result<(), CudaError> {
        let block_count = blocks(count) as u32;
        let config = LaunchConfig {
            grid_dim: (quantities, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let args = (partials, &block_count, &max_mask, stats, &first);
        // SAFETY: ink.cu's parameters; partials hold quantities × blocks values, stats at least
        // first + quantities.
        unsafe { self.launch("reduce_finish", stream, config, args) }
    }
}
