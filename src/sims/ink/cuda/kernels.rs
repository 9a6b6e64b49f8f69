//! Host side of `kernels/ink.cu`: the parameter records it takes by value (mirrored field for
//! field), the brush stamps' boxes, and one typed launch per kernel, each a call of the shared
//! launch helper with the kernel's parameters in order.

use crate::cuda::launch::{self, KernelArgs, OrNull};
use crate::cuda::{CudaError, Module};
use crate::sims::ink::boundary::{BOTTOM, LEFT, RIGHT, TOP};
use crate::sims::ink::params::InkParams;
use crate::sims::ink::{splat_box, Stamp};
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, LaunchConfig};
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
        let sticks = [LEFT, RIGHT, BOTTOM, TOP]
            .iter()
            .enumerate()
            .map(|(bit, &side)| u32::from(b.sticks(side)) << bit)
            .sum::<u32>()
            | u32::from(b.obstacles_stick()) << 4;
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
            outflow: [LEFT, RIGHT, BOTTOM, TOP]
                .iter()
                .enumerate()
                .map(|(bit, &side)| u32::from(b.dirichlet(side)) << bit)
                .sum(),
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

/// Which lattice a stamp's box lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplatLattice {
    /// The vertical faces (u).
    U = 0,
    /// The horizontal faces (v).
    V = 1,
    /// The ink cells (all three channels).
    Ink = 2,
}

/// One stamp on one lattice, as `struct InkSplat` in ink.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InkSplat {
    /// The lattice's points per row.
    pub nx: i32,
    /// The box's first column.
    pub i0: i32,
    /// The box's first row.
    pub j0: i32,
    /// Columns in the box.
    pub width: i32,
    /// Rows in the box.
    pub rows: i32,
    /// The lattice's offset, spacings.
    pub offset: [f32; 2],
    /// The lattice's spacing, m.
    pub h: f32,
    /// The stamp's centre, m.
    pub position: [f32; 2],
    /// The stamp's Gaussian radius, m.
    pub radius: f32,
    /// What is added at the centre, per field.
    pub amounts: [f32; 3],
    /// The brush's direction of motion (unit): the brush stamp's texture is turned to it.
    pub direction: [f32; 2],
    /// 1: the amounts are × the brush stamp's alpha (a brush's ink with a textured stamp).
    pub masked: i32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for InkSplat {}

impl InkSplat {
    /// Points in the box.
    pub fn points(&self) -> usize {
        (self.width * self.rows) as usize
    }
}

/// The launches of `stamp` in a step of `dt` (the CPU's `splat` per stamp): for u, v and the
/// ink, the box of lattice points within three radii (cpu.rs `add_gaussian`'s arithmetic) and
/// the amounts; with `textured` (the brush stamp is not round) a brush's ink is masked by it.
/// Lattices with nothing to add or an empty box are left out.
pub fn splat_records(
    grid: &InkGrid,
    stamp: &Stamp,
    dt: f32,
    textured: bool,
) -> Vec<(SplatLattice, InkSplat)> {
    let scale = if stamp.per_second { dt } else { 1.0 };
    let region = stamp.region();
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let (inx, iny) = (grid.ink_nx as usize, grid.ink_ny as usize);
    let lattices = [
        (
            SplatLattice::U,
            (nx + 1, ny, [0.0, 0.5], grid.dx),
            [stamp.velocity[0] * scale, 0.0, 0.0],
        ),
        (
            SplatLattice::V,
            (nx, ny + 1, [0.5, 0.0], grid.dx),
            [stamp.velocity[1] * scale, 0.0, 0.0],
        ),
        (
            SplatLattice::Ink,
            (inx, iny, [0.5, 0.5], grid.ink_h),
            stamp.ink.map(|amount| amount * scale),
        ),
    ];
    let mut records = Vec::new();
    for (lattice, (lx, ly, offset, h), amounts) in lattices {
        if amounts.iter().all(|&a| a == 0.0) {
            continue;
        }
        let (columns, rows_range) = splat_box(region, (lx, ly), offset, h);
        let (i0, j0) = (columns.start, rows_range.start);
        let width = columns.len();
        let rows = rows_range.len();
        if width == 0 || rows == 0 {
            continue;
        }
        records.push((
            lattice,
            InkSplat {
                nx: lx as i32,
                i0: i0 as i32,
                j0: j0 as i32,
                width: width as i32,
                rows: rows as i32,
                offset,
                h,
                position: stamp.position,
                radius: stamp.radius,
                amounts,
                direction: stamp.direction.unwrap_or([1.0, 0.0]),
                masked: i32::from(
                    textured && stamp.direction.is_some() && lattice == SplatLattice::Ink,
                ),
            },
        ));
    }
    records
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

/// The kernels, one method per kernel taking its parameters in order (hence the long lists).
/// Every array holds what its lattice has points (`CudaInk::allocate`), the partials four per
/// block of the largest launch; the SAFETY comments name what else a launch relies on.
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

    /// One stamp's Gaussian on one lattice: `fields` are u (or v) three times, or the ink's
    /// three planes (`planes` values apart), `open` the face mask (none for the ink), `stamp`
    /// the brush stamp's texture (read when the record is masked).
    pub fn splat(
        &self,
        stream: &CudaStream,
        s: &InkSplat,
        field: &mut CudaSlice<f32>,
        planes: usize,
        open: Option<&CudaSlice<u8>>,
        stamp: &CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let (base, _guard) = field.device_ptr_mut(stream);
        let pointers = [0, 1, 2].map(|c| base + (c * planes * 4) as u64);
        let args = (
            s,
            &pointers[0],
            &pointers[1],
            &pointers[2],
            OrNull(open),
            stamp,
        );
        // SAFETY: ink.cu's parameters; the box lies inside the lattice (splat_records), the
        // three pointers inside `field` (three planes of `planes` values, or the same array).
        unsafe { self.launch("splat", stream, per_point(s.points()), args) }
    }

    /// The ink's buoyancy on the open v faces.
    pub fn splat_buoyancy(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        ink: &CudaSlice<f32>,
        v_open: &CudaSlice<u8>,
        v: &mut CudaSlice<f32>,
        lift: f32,
    ) -> Result<(), CudaError> {
        let args = (g, ink, v_open, v, &lift);
        // SAFETY: ink.cu's parameters.
        unsafe { self.launch("splat_buoyancy", stream, per_point(g.v_faces()), args) }
    }

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
