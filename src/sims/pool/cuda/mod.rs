//! The pool's CUDA solver: the surface lives on the GPU and each stage of the CPU solver
//! (`cpu.rs`, `drops.rs`) runs as kernels of `kernels/pool.cu` (same names, same operations),
//! launched through the shared CUDA layer (`src/cuda/`) on one stream. A frame's stages enqueue
//! their kernels with no host synchronisation; the frame ends with the statistics (energy,
//! volume, highest point, wave front) reduced on the GPU and one 48-byte copy back, the frame's
//! one synchronisation, which also carries the stage events' end.
//!
//! Here: buffers, construction, up- and download, the frame, the edits of flags; `stages.rs`
//! the launches of each stage, `kernels.rs` the typed launches, `texture.rs` the renderer's
//! surface texture written through CUDA–GL interop, `parity.rs` the comparison with the CPU
//! solver stage by stage, and `emulation.rs` (tests) the same comparison with the kernels
//! compiled as C++.

pub mod kernels;
pub mod parity;
mod stages;
mod texture;

#[cfg(test)]
mod emulation;

use super::cpu::StepConstants;
use super::drops::Drop;
use super::frame::PoolStats;
use super::params::PoolParams;
use super::surface::{self, Surface};
use super::PoolStage;
use crate::cuda::interop::GlInterop;
use crate::cuda::launch::read_back;
use crate::cuda::{CudaError, EventTimer};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use kernels::{PoolGrid, PoolKernels};
use std::sync::Arc;

/// Slots of the statistics array the reductions fill (`SLOT_*` in pool.cu).
pub mod slot {
    /// Σ ½(v² + w²).
    pub const KINETIC: u32 = 0;
    /// The pairs' or springs' energy.
    pub const POTENTIAL: u32 = 1;
    /// Σ u.
    pub const VOLUME: u32 = 2;
    /// The largest |u|.
    pub const MAX_HEIGHT: u32 = 3;
    /// Nodes whose height or velocity is not finite.
    pub const NON_FINITE: u32 = 4;
    /// The wave front's radius.
    pub const FRONT: u32 = 5;
    /// Slots in all.
    pub const COUNT: usize = 6;
}

/// The state on the GPU, in the CPU's layout (`Surface`; the horizontal pairs as 2·N² floats).
struct Buffers {
    height: CudaSlice<f32>,
    velocity: CudaSlice<f32>,
    accel: CudaSlice<f32>,
    offset: CudaSlice<f32>,
    velocity_h: CudaSlice<f32>,
    accel_h: CudaSlice<f32>,
    flags: CudaSlice<u8>,
    /// The edge nodes' new heights (`edges` → `edges_apply`), 4·(N − 1).
    next: CudaSlice<f32>,
    partials: CudaSlice<f64>,
    stats: CudaSlice<f64>,
}

/// A precomputed Gaussian on the GPU (drops.rs `Stencil`), by the radius in nodes it is for.
struct GpuStencil {
    radius_bits: u32,
    reach: usize,
    weights: CudaSlice<f32>,
}

/// Bytes of GPU memory a grid of `nodes`² takes for the solver: six f32 fields (three of them
/// pairs: nine floats), the flags, the edges' new heights, the partials and the statistics
/// (drawn, the GL objects come on top: `memory::grid_bytes`). [`CudaPool::buffer_bytes`]
/// counts the same from the buffers allocated.
pub fn gpu_bytes(nodes: usize) -> u64 {
    let count = (nodes * nodes) as u64;
    count * crate::sims::pool::surface::BYTES_PER_NODE as u64
        + 4 * 4 * (nodes.max(1) - 1) as u64
        + 5 * 8 * kernels::blocks(nodes * nodes) as u64
        + 8 * slot::COUNT as u64
}

/// The pool on a CUDA device.
pub struct CudaPool {
    /// Seconds per stage since the last reset (GPU time, from the stage events).
    pub stage_seconds: [f64; PoolStage::ALL.len()],
    n: usize,
    h: f32,
    device: usize,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: PoolKernels,
    buffers: Buffers,
    stencils: Vec<GpuStencil>,
    /// The flags as the host last set them (the GPU's copy follows before the next launch).
    flags: Vec<u8>,
    flags_dirty: bool,
    /// The statistics the last frame ended with, while they describe the state.
    stats: Option<PoolStats>,
    timer: EventTimer<PoolStage>,
    stage_timing: bool,
    frame_open: bool,
    interop: GlInterop,
    /// The surface object the picture kernel writes the mapped texture through.
    surface: crate::cuda::interop::MappedSurface,
    interop_noted: bool,
}

impl CudaPool {
    /// A surface at rest for `params` on CUDA device `device`, `land(x, z)` fixed. Fails when
    /// CUDA is unavailable or fewer than `needed` bytes of GPU memory are free (checked before
    /// allocating; `memory::gpu_needed`: the state, and the GL objects of a drawn grid, less
    /// what a grid it replaces frees).
    pub fn new_on(
        device: usize,
        params: &PoolParams,
        needed: u64,
        land: impl Fn(f32, f32) -> bool,
    ) -> Result<Self, CudaError> {
        params
            .validate()
            .map_err(|e| CudaError::Setting(format!("{}: {}", e.key, e.message)))?;
        let sync_check = crate::cuda::sync_check_requested()?;
        let context = crate::cuda::context(device)?;
        let n = params.nodes;
        let (free, _) = context
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        if needed > free as u64 {
            let name = context.name().unwrap_or_else(|_| "the GPU".into());
            return Err(CudaError::Unavailable(format!(
                "{n}² nodes need {} of GPU memory, but {name} has only {} free; use fewer nodes \
                 (pool.cuda_nodes) or --backend cpu",
                crate::host::format_bytes(needed),
                crate::host::format_bytes(free as u64)
            )));
        }
        let kernels = PoolKernels::load(&context, sync_check)?;
        // SAFETY: set before any allocation of this context's solver; all work goes to `stream`.
        unsafe { context.disable_event_tracking() };
        let stream = context
            .new_stream()
            .map_err(CudaError::driver("creating a CUDA stream"))?;
        let buffers =
            Self::allocate(&stream, n).map_err(CudaError::driver("allocating GPU memory"))?;
        let surface = Surface::new(params, land);
        let mut solver = CudaPool {
            stage_seconds: [0.0; PoolStage::ALL.len()],
            n,
            h: surface.h,
            device,
            timer: EventTimer::new(context.clone()),
            context,
            stream,
            kernels,
            buffers,
            stencils: Vec::new(),
            flags: Vec::new(),
            flags_dirty: false,
            stats: None,
            stage_timing: true,
            frame_open: false,
            interop: GlInterop::default(),
            surface: Default::default(),
            interop_noted: false,
        };
        solver.upload(&surface)?;
        Ok(solver)
    }

    fn allocate(
        stream: &Arc<CudaStream>,
        n: usize,
    ) -> Result<Buffers, cudarc::driver::DriverError> {
        let count = n * n;
        Ok(Buffers {
            height: stream.alloc_zeros(count)?,
            velocity: stream.alloc_zeros(count)?,
            accel: stream.alloc_zeros(count)?,
            offset: stream.alloc_zeros(2 * count)?,
            velocity_h: stream.alloc_zeros(2 * count)?,
            accel_h: stream.alloc_zeros(2 * count)?,
            flags: stream.alloc_zeros(count)?,
            next: stream.alloc_zeros(4 * (n - 1))?,
            partials: stream.alloc_zeros(5 * kernels::blocks(count))?,
            stats: stream.alloc_zeros(slot::COUNT)?,
        })
    }

    /// A surface at rest for `params` (the same node count) in the buffers already allocated,
    /// `land(x, z)` fixed: a restart with an unchanged grid allocates nothing.
    pub fn reset(
        &mut self,
        params: &PoolParams,
        land: impl Fn(f32, f32) -> bool,
    ) -> Result<(), CudaError> {
        assert_eq!(params.nodes, self.n, "a reset keeps the grid");
        let surface = Surface::new(params, land);
        self.upload(&surface)?;
        self.h = surface.h;
        self.stage_seconds = [0.0; PoolStage::ALL.len()];
        Ok(())
    }

    /// Bytes of GPU memory its buffers hold, as allocated (`gpu_bytes`).
    pub fn buffer_bytes(&self) -> u64 {
        let b = &self.buffers;
        let f32s = [
            &b.height,
            &b.velocity,
            &b.accel,
            &b.offset,
            &b.velocity_h,
            &b.accel_h,
            &b.next,
        ];
        let f32s: usize = f32s.iter().map(|s| s.num_bytes()).sum();
        (f32s + b.flags.num_bytes() + b.partials.num_bytes() + b.stats.num_bytes()) as u64
    }

    /// The device this solver runs on.
    pub fn device(&self) -> usize {
        self.device
    }

    /// Nodes per side.
    pub fn nodes(&self) -> usize {
        self.n
    }

    /// Spacing, m.
    pub fn spacing(&self) -> f32 {
        self.h
    }

    /// Where the kernels' code came from (cubin, PTX or NVRTC, and why), and whether every
    /// launch is checked.
    pub fn kernel_origin(&self) -> String {
        let origin = self.kernels.origin();
        if self.kernels.sync_check() {
            format!(
                "{origin}; {}=1: every launch synchronised and checked",
                crate::cuda::SYNC_CHECK_VARIABLE
            )
        } else {
            origin.to_string()
        }
    }

    /// Turns the per-stage CUDA events on (the default) or off.
    pub fn set_stage_timing(&mut self, enabled: bool) {
        self.stage_timing = enabled;
    }

    fn bind(&self) -> Result<(), CudaError> {
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))
    }

    /// Replaces the state on the GPU with `surface` (which has this solver's grid).
    pub fn upload(&mut self, surface: &Surface) -> Result<(), CudaError> {
        assert_eq!(surface.n, self.n, "the solver's grid");
        self.bind()?;
        let (s, b) = (&self.stream, &mut self.buffers);
        let copy = CudaError::driver("copying the pool's surface to the GPU");
        s.memcpy_htod(&surface.height, &mut b.height)
            .map_err(&copy)?;
        s.memcpy_htod(&surface.velocity, &mut b.velocity)
            .map_err(&copy)?;
        s.memcpy_htod(&surface.accel, &mut b.accel).map_err(&copy)?;
        for (pairs, slice) in [
            (&surface.offset, &mut b.offset),
            (&surface.velocity_h, &mut b.velocity_h),
            (&surface.accel_h, &mut b.accel_h),
        ] {
            let floats: &[f32] = bytemuck::cast_slice(pairs);
            s.memcpy_htod(floats, slice).map_err(&copy)?;
        }
        s.memcpy_htod(&surface.flags, &mut b.flags).map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        self.flags.clone_from(&surface.flags);
        self.flags_dirty = false;
        self.stats = None;
        Ok(())
    }

    fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        slice: &CudaSlice<T>,
        into: &mut [T],
    ) -> Result<(), CudaError> {
        self.stream
            .memcpy_dtoh(slice, into)
            .map_err(CudaError::driver("copying the pool's surface from the GPU"))
    }

    /// The state, copied back into the CPU's type (for frames, exports and the texture's
    /// host-copy fallback).
    pub fn read_back(&self) -> Result<Surface, CudaError> {
        let count = self.n * self.n;
        let mut s = Surface {
            n: self.n,
            h: self.h,
            height: vec![0.0; count],
            velocity: vec![0.0; count],
            accel: vec![0.0; count],
            offset: vec![[0.0; 2]; count],
            velocity_h: vec![[0.0; 2]; count],
            accel_h: vec![[0.0; 2]; count],
            flags: self.flags.clone(),
        };
        let b = &self.buffers;
        self.download(&b.height, &mut s.height)?;
        self.download(&b.velocity, &mut s.velocity)?;
        self.download(&b.accel, &mut s.accel)?;
        self.download(&b.offset, bytemuck::cast_slice_mut(&mut s.offset))?;
        self.download(&b.velocity_h, bytemuck::cast_slice_mut(&mut s.velocity_h))?;
        self.download(&b.accel_h, bytemuck::cast_slice_mut(&mut s.accel_h))?;
        self.stream
            .synchronize()
            .map_err(CudaError::driver("copying the pool's surface from the GPU"))?;
        if self.flags_dirty {
            // What `sync_flags` will do on the GPU before the next launch.
            s.settle();
        }
        Ok(s)
    }

    /// The flags, as the host set them last.
    pub fn flags(&self) -> &[u8] {
        &self.flags
    }

    /// Recomputes every node's flags (surface.rs `set_flags`): on the GPU before the next
    /// launch, with fixed nodes put at rest.
    pub fn set_flags(&mut self, params: &PoolParams, island: impl Fn(f32, f32) -> bool) {
        self.flags = surface::node_flags(params, self.n, self.h, island);
        self.flags_dirty = true;
        self.stats = None;
    }

    /// Fixes or frees node (i, j) (surface.rs `set_island_node`), on the GPU before the next
    /// launch.
    pub fn set_island_node(&mut self, params: &PoolParams, i: usize, j: usize, land: bool) {
        let k = j * self.n + i;
        self.flags[k] = surface::island_node_flags(self.flags[k], params, self.n, (i, j), land);
        self.flags_dirty = true;
        self.stats = None;
    }

    /// Sends flags edited since the last launch and settles the nodes they changed.
    fn sync_flags(&mut self) -> Result<(), CudaError> {
        if !self.flags_dirty {
            return Ok(());
        }
        self.bind()?;
        let (k, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
        s.memcpy_htod(&self.flags, &mut b.flags)
            .map_err(CudaError::driver("copying the pool's flags to the GPU"))?;
        let g = PoolGrid {
            n: self.n as i32,
            ..PoolGrid::default()
        };
        k.settle_flags(
            s,
            &g,
            &b.flags,
            (&mut b.height, &mut b.velocity),
            (&mut b.offset, &mut b.velocity_h),
        )?;
        self.flags_dirty = false;
        Ok(())
    }

    /// Every node back at rest (the panel's Clear), keeping the flags.
    pub fn clear(&mut self) -> Result<(), CudaError> {
        self.bind()?;
        let (s, b) = (&self.stream, &mut self.buffers);
        let zero = CudaError::driver("clearing the pool on the GPU");
        for slice in [
            &mut b.height,
            &mut b.velocity,
            &mut b.accel,
            &mut b.offset,
            &mut b.velocity_h,
            &mut b.accel_h,
        ] {
            s.memset_zeros(slice).map_err(&zero)?;
        }
        self.stats = None;
        Ok(())
    }

    /// Enqueues one frame of `params` with `drops`: `disturb`, then the substeps (`forces`,
    /// `integrate`, `edges`). Nothing waits: [`CudaPool::end_frame`] does, once.
    pub fn step(&mut self, params: &PoolParams, drops: &[Drop]) -> Result<(), CudaError> {
        assert_eq!(params.nodes, self.n, "the solver's grid");
        self.sync_flags()?;
        self.bind()?;
        if !self.frame_open {
            if self.stage_timing {
                self.timer.begin(&self.stream)?;
            }
            self.frame_open = true;
        }
        self.stats = None;
        let k = StepConstants::new(params);
        self.run_stage(PoolStage::Disturb, &k, drops)?;
        for _ in 0..params.substeps() {
            for stage in [PoolStage::Forces, PoolStage::Integrate, PoolStage::Edges] {
                self.run_stage(stage, &k, drops)?;
            }
        }
        Ok(())
    }

    /// Ends the frame: the statistics of `params`' state reduced on the GPU (the front around
    /// `last_drop`), copied back (the frame's one synchronisation), the stage times collected.
    /// Returns them and whether every height and velocity is finite.
    pub fn end_frame(
        &mut self,
        params: &PoolParams,
        last_drop: Option<[f32; 2]>,
    ) -> Result<(PoolStats, bool), CudaError> {
        self.sync_flags()?;
        self.bind()?;
        self.reduce_statistics(params, last_drop)?;
        let mut stats = [0.0f64; slot::COUNT];
        let synchronised = self.kernels.sync_check();
        let failed =
            crate::cuda::launch::waited("a CUDA kernel of the pool's frame failed", synchronised);
        read_back(&self.stream, &self.buffers.stats, &mut stats, failed)?;
        let result = stats_from_slots(&stats, self.h, last_drop);
        if self.frame_open && self.stage_timing {
            let seconds = &mut self.stage_seconds;
            self.timer
                .collect(|stage, time| seconds[stage as usize] += time)?;
        }
        self.frame_open = false;
        self.stats = Some(result);
        Ok((result, stats[slot::NON_FINITE as usize] == 0.0))
    }

    /// The statistics the last frame ended with, when nothing changed the state since.
    pub fn last_stats(&self) -> Option<PoolStats> {
        self.stats
    }

    /// The statistics of the state as it is now: the last frame's when nothing changed it
    /// since, else reduced on the GPU now (after the flags' edits reach it): 48 bytes copied
    /// back, one synchronisation, the surface left where it is.
    pub fn current_stats(
        &mut self,
        params: &PoolParams,
        last_drop: Option<[f32; 2]>,
    ) -> Result<PoolStats, CudaError> {
        if let Some(stats) = self.stats {
            return Ok(stats);
        }
        self.sync_flags()?;
        self.bind()?;
        self.reduce_statistics(params, last_drop)?;
        let stats = stats_from_slots(&self.statistics()?, self.h, last_drop);
        self.stats = Some(stats);
        Ok(stats)
    }

    /// The statistics slots as the last reductions left them (waits for the stream).
    pub fn statistics(&self) -> Result<Vec<f64>, CudaError> {
        let mut stats = vec![0.0; slot::COUNT];
        let copy = CudaError::driver("copying the statistics from the GPU");
        read_back(&self.stream, &self.buffers.stats, &mut stats, copy)?;
        Ok(stats)
    }
}

/// The statistics from the slots the reductions filled on a grid of spacing `h` (`last_drop`:
/// whether the front was reduced).
pub fn stats_from_slots(stats: &[f64], h: f32, last_drop: Option<[f32; 2]>) -> PoolStats {
    let h = f64::from(h);
    let s = |slot: u32| stats[slot as usize];
    PoolStats {
        kinetic: s(slot::KINETIC),
        potential: s(slot::POTENTIAL),
        volume: s(slot::VOLUME) * h * h,
        max_height: s(slot::MAX_HEIGHT),
        front_radius: if last_drop.is_some() {
            s(slot::FRONT)
        } else {
            0.0
        },
    }
}

impl std::ops::Drop for CudaPool {
    /// Front ends release the GL texture with [`CudaPool::release_gl`] while their context is
    /// current; this is the safety net for paths that drop the solver first.
    fn drop(&mut self) {
        self.release_gl();
    }
}
