//! Host side of `kernels/pool.cu`: the parameter records it takes by value (mirrored field for
//! field), a drop's launch box, and one typed launch per kernel, each a call of the shared
//! launch helper with the kernel's parameters in order.

use crate::cuda::launch::{self, KernelArgs};
use crate::cuda::{CudaError, Module};
use crate::sims::pool::cpu::StepConstants;
use crate::sims::pool::drops::footprint;
use crate::sims::pool::params::Model;
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr, LaunchConfig};
use std::sync::Arc;

/// The module's name: `kernels/pool.cu`.
pub const MODULE: &str = "pool";

/// Threads per block (`POOL_BLOCK` in pool.cu; the block reductions assume it).
pub const BLOCK: u32 = 256;

/// A substep's constants, as `struct PoolGrid` in pool.cu: [`StepConstants`] field for field
/// (the same f32 values the CPU stages read), and the diagonal springs' rest length.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PoolGrid {
    /// Nodes per side.
    pub n: i32,
    /// 0 wave, 1 springs.
    pub model: i32,
    /// 1 when the diagonal springs exist.
    pub shear: i32,
    /// Spacing, m.
    pub h: f32,
    /// Substep, s.
    pub dt: f32,
    /// c²/h², 1/s².
    pub wave_k: f32,
    /// k/m, 1/s².
    pub spring_k: f32,
    /// Structural rest length, m.
    pub rest: f32,
    /// √2·h, m (f32, as the CPU computes it).
    pub diagonal_rest: f32,
    /// e^(−damping·dt).
    pub decay: f32,
    /// Mur's coefficient.
    pub mur: f32,
    /// The horizontal sponge's σ_max·dt at open edges (0: none).
    pub sponge: f32,
    /// 1 / the sponge's width in nodes.
    pub sponge_width: f32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for PoolGrid {}

impl PoolGrid {
    /// The record of `k`, the CPU's constants of a substep.
    pub fn new(k: &StepConstants) -> PoolGrid {
        PoolGrid {
            n: k.n as i32,
            model: match k.model {
                Model::Wave => 0,
                Model::Springs => 1,
            },
            shear: i32::from(k.shear),
            h: k.h,
            dt: k.dt,
            wave_k: k.wave_k,
            spring_k: k.spring_k,
            rest: k.rest,
            diagonal_rest: std::f32::consts::SQRT_2 * k.h,
            decay: k.decay,
            mur: k.mur,
            sponge: k.sponge,
            sponge_width: k.sponge_width,
        }
    }

    /// Nodes.
    pub fn nodes(&self) -> usize {
        (self.n * self.n) as usize
    }

    /// Edge nodes, 4·(N − 1).
    pub fn edge_nodes(&self) -> usize {
        4 * (self.n as usize - 1)
    }
}

/// One drop's box on the grid, as `struct PoolDrop` in pool.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PoolDrop {
    /// Nodes per side.
    pub n: i32,
    /// The node nearest the centre (column).
    pub ci: i32,
    /// The node nearest the centre (row).
    pub cj: i32,
    /// The box's first column.
    pub i0: i32,
    /// The box's first row.
    pub j0: i32,
    /// Columns in the box.
    pub width: i32,
    /// Rows in the box.
    pub rows: i32,
    /// The stencil's half-width, nodes.
    pub reach: i32,
    /// m (height) or m/s (velocity).
    pub amplitude: f32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for PoolDrop {}

impl PoolDrop {
    /// The box of a drop at `position` (m) with `amplitude` and a stencil of half-width
    /// `reach` on a grid of `n` per side at spacing `h`: `drops::footprint`'s nodes.
    pub fn new(position: [f32; 2], amplitude: f32, reach: usize, (n, h): (usize, f32)) -> Self {
        let (ci, cj, columns, rows) = footprint(position, h, n, reach);
        PoolDrop {
            n: n as i32,
            ci: ci as i32,
            cj: cj as i32,
            i0: columns.start as i32,
            j0: rows.start as i32,
            width: columns.len() as i32,
            rows: rows.len() as i32,
            reach: reach as i32,
            amplitude,
        }
    }

    /// Nodes in the box.
    pub fn nodes(&self) -> usize {
        (self.width * self.rows) as usize
    }
}

/// The kernels of `kernels/pool.cu`, loaded on one device.
pub struct PoolKernels {
    module: Module,
}

fn per_node(count: usize) -> LaunchConfig {
    launch::per_element(count, BLOCK)
}

/// Blocks of a launch over `count` nodes (the number of partials a reduction writes per
/// quantity).
pub fn blocks(count: usize) -> usize {
    count.div_ceil(BLOCK as usize).max(1)
}

/// The state's arrays on the GPU, as the kernels take them.
pub struct State<'a> {
    /// Heights, N².
    pub height: &'a CudaSlice<f32>,
    /// Vertical velocities, N².
    pub velocity: &'a CudaSlice<f32>,
    /// Horizontal offsets, 2·N² (x, z per node).
    pub offset: &'a CudaSlice<f32>,
    /// Horizontal velocities, 2·N².
    pub velocity_h: &'a CudaSlice<f32>,
}

/// The kernels, one method per kernel taking its parameters in order. Every node array holds
/// N² values (2·N² for the horizontal pairs), `next` 4·(N − 1), the partials five per block of
/// a launch over the nodes; the SAFETY comments name what else a launch relies on.
#[allow(clippy::too_many_arguments)]
impl PoolKernels {
    /// The kernels the host launches (each an `.entry` of the PTX), each by the method of the
    /// same name.
    pub const NAMES: &'static [&'static str] = &[
        "disturb",
        "forces",
        "integrate",
        "edges",
        "edges_apply",
        "settle_flags",
        "stats_partials",
        "stats_front",
        "reduce_finish",
        "surface_texels",
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
    unsafe fn launch<'a>(
        &'a self,
        kernel: &'static str,
        stream: &'a CudaStream,
        config: LaunchConfig,
        args: impl KernelArgs<'a>,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.module.launch(kernel, stream, config, args) }
    }

    /// One drop through its stencil into `field` (heights or velocities).
    pub fn disturb(
        &self,
        stream: &CudaStream,
        drop: &PoolDrop,
        weights: &CudaSlice<f32>,
        flags: &CudaSlice<u8>,
        field: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        if drop.nodes() == 0 {
            return Ok(());
        }
        let args = (drop, weights, flags, field);
        // SAFETY: pool.cu's parameters; the box lies inside the grid (footprint) and the
        // stencil holds (2·reach + 1)² weights.
        unsafe { self.launch("disturb", stream, per_node(drop.nodes()), args) }
    }

    /// Every node's acceleration (the model's forces).
    pub fn forces(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        height: &CudaSlice<f32>,
        offset: &CudaSlice<f32>,
        accel: &mut CudaSlice<f32>,
        accel_h: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (g, height, offset, accel, accel_h);
        // SAFETY: pool.cu's parameters.
        unsafe { self.launch("forces", stream, per_node(g.nodes()), args) }
    }

    /// Symplectic Euler with damping.
    pub fn integrate(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        flags: &CudaSlice<u8>,
        (accel, accel_h): (&CudaSlice<f32>, &CudaSlice<f32>),
        (height, velocity): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
        (offset, velocity_h): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        let args = (
            g, flags, accel, accel_h, height, velocity, offset, velocity_h,
        );
        // SAFETY: pool.cu's parameters.
        unsafe { self.launch("integrate", stream, per_node(g.nodes()), args) }
    }

    /// Mur's condition's new heights of the open edge nodes into `next`.
    pub fn edges(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        flags: &CudaSlice<u8>,
        (height, velocity): (&CudaSlice<f32>, &CudaSlice<f32>),
        next: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (g, flags, height, velocity, next);
        // SAFETY: pool.cu's parameters; next holds 4·(N − 1) values.
        unsafe { self.launch("edges", stream, per_node(g.edge_nodes()), args) }
    }

    /// The heights of [`PoolKernels::edges`] applied.
    pub fn edges_apply(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        flags: &CudaSlice<u8>,
        next: &CudaSlice<f32>,
        (height, velocity): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        let args = (g, flags, next, height, velocity);
        // SAFETY: as edges.
        unsafe { self.launch("edges_apply", stream, per_node(g.edge_nodes()), args) }
    }

    /// Fixed nodes at rest, locked ones without horizontal offset or motion.
    pub fn settle_flags(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        flags: &CudaSlice<u8>,
        (height, velocity): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
        (offset, velocity_h): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        let args = (g, flags, height, velocity, offset, velocity_h);
        // SAFETY: pool.cu's parameters.
        unsafe { self.launch("settle_flags", stream, per_node(g.nodes()), args) }
    }

    /// Per block: kinetic, potential, Σu, the largest |u|, the non-finite nodes.
    pub fn stats_partials(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        s: &State,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (g, s.height, s.velocity, s.offset, s.velocity_h, partials);
        // SAFETY: pool.cu's parameters; partials hold 5 values per block.
        unsafe { self.launch("stats_partials", stream, per_node(g.nodes()), args) }
    }

    /// Per block the wave front's radius around (x, z), from the largest |u| in `stats`.
    pub fn stats_front(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        height: &CudaSlice<f32>,
        stats: &CudaSlice<f64>,
        [x, z]: [f32; 2],
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (g, height, stats, &x, &z, partials);
        // SAFETY: pool.cu's parameters; stats holds the slots, partials a value per block.
        unsafe { self.launch("stats_front", stream, per_node(g.nodes()), args) }
    }

    /// The `quantities` partials of a launch over `count` nodes into `stats[first..]` (sums,
    /// or the largest where bit q of `max_mask` is set).
    pub fn reduce_finish(
        &self,
        stream: &CudaStream,
        partials: &CudaSlice<f64>,
        count: usize,
        (quantities, max_mask): (u32, u32),
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
        // SAFETY: pool.cu's parameters; partials hold quantities × blocks values, stats at least
        // first + quantities.
        unsafe { self.launch("reduce_finish", stream, config, args) }
    }

    /// The renderer's texels into `surface`.
    ///
    /// # Safety
    /// `surface` is a live surface object of an RGBA32F array of at least N × N texels.
    pub unsafe fn surface_texels(
        &self,
        stream: &CudaStream,
        g: &PoolGrid,
        (height, offset): (&CudaSlice<f32>, &CudaSlice<f32>),
        flags: &CudaSlice<u8>,
        surface: u64,
    ) -> Result<(), CudaError> {
        let args = (g, height, offset, flags, &surface);
        // SAFETY: pool.cu's parameters; the caller vouches for the surface.
        unsafe { self.launch("surface_texels", stream, per_node(g.nodes()), args) }
    }
}
