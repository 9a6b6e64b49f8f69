//! Host side of `kernels/ink_multigrid.cuh`: the `pressure` stage with `pressure_solver =
//! "multigrid"` on the GPU — `Multigrid::solve` of the CPU (`src/sims/ink/multigrid.rs`), the
//! same V-cycles launched on the solver's stream with no synchronisation. The levels' arrays are
//! pooled and allocated with the solver (their shapes depend on the grid only); their masks
//! (stencil and solid bytes, built on the host by the CPU's own code) are uploaded with the
//! flow's.
//!
//! Launches per step: 2 to load (+ 3 to remove the mean in a closed box, pure Neumann), per
//! V-cycle 11 per level of more than [`TAIL_CELLS`] cells (+ 3 in a closed box) and one
//! `pressure_mg_tail` that runs the rest in one block, then the store (+ 2 in a closed box).

use super::hierarchy::{Hierarchy, JOIN_BYTES, JOIN_DEVICE_BYTES};
use super::kernels::{per_point, InkKernels};
use super::{slot, CudaInk};
use crate::cuda::launch::{one_block, OrNull};
use crate::cuda::CudaError;
use crate::sims::ink::fields::Flow;
use crate::sims::ink::multigrid::{level_shapes, SMOOTHING_SWEEPS};
use crate::sims::ink::params::PressureSolver;
use crate::sims::ink::patch::Patch;
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use std::sync::Arc;

/// Levels of at most this many cells run in the one-block `pressure_mg_tail`.
pub const TAIL_CELLS: usize = 8192;
/// Threads of `pressure_mg_tail` (`INK_MG_TAIL_THREADS` in ink_multigrid.cuh).
pub const TAIL_THREADS: u32 = 1024;

/// One level of the hierarchy, as `struct InkLevel` in `kernels/ink_multigrid.cuh`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InkLevel {
    /// Cells along x.
    pub nx: i32,
    /// Cells along y.
    pub ny: i32,
    /// The level's first cell in the pooled arrays.
    pub offset: u32,
    /// Fluid cells (the mean's count).
    pub fluid: u32,
    /// h², m².
    pub h2: f32,
    /// 1 / h².
    pub weight: f32,
    /// Bit per side (left, right, bottom, top): an outflow, zero pressure beyond it.
    pub outflow: u32,
    /// Unused (keeps the record a multiple of 8 bytes).
    pub spare: u32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for InkLevel {}
// SAFETY: every field is an integer or a float, for which all-zero bits are a value.
unsafe impl ValidAsZeroBits for InkLevel {}

impl InkLevel {
    /// Cells of the level.
    pub fn cells(&self) -> usize {
        (self.nx * self.ny) as usize
    }
}

/// A copy of the multigrid's masks from the GPU: the levels' records, the pooled stencil and
/// solid bytes.
pub type MaskCopy = (Vec<InkLevel>, Vec<u8>, Vec<u8>);

/// The hierarchy's arrays on the GPU.
pub struct GpuMultigrid {
    levels: Vec<InkLevel>,
    /// The host's copy of the masks on the GPU (set again over the changed cells,
    /// [`Hierarchy::update_cells`]).
    host: Option<Hierarchy>,
    levels_device: CudaSlice<InkLevel>,
    stencil: CudaSlice<u8>,
    solid: CudaSlice<u8>,
    p: CudaSlice<f32>,
    b: CudaSlice<f32>,
    r: CudaSlice<f32>,
    /// Whether the masks on the GPU are the flow's present ones.
    pub current: bool,
}

impl GpuMultigrid {
    /// Arrays for an `nx × ny` grid (masks to be uploaded).
    pub fn new(
        stream: &Arc<CudaStream>,
        nx: usize,
        ny: usize,
    ) -> Result<Self, cudarc::driver::DriverError> {
        let n = Hierarchy::pooled_cells(nx, ny);
        let count = level_shapes(nx, ny, 1.0, vec![true; nx * ny]).len();
        Ok(GpuMultigrid {
            levels: Vec::new(),
            host: None,
            levels_device: stream.alloc_zeros(count)?,
            stencil: stream.alloc_zeros(n)?,
            solid: stream.alloc_zeros(n)?,
            p: stream.alloc_zeros(n)?,
            b: stream.alloc_zeros(n)?,
            r: stream.alloc_zeros(n)?,
            current: false,
        })
    }

    /// The levels' records as the kernels get them (empty before the masks' first upload).
    pub fn levels(&self) -> &[InkLevel] {
        &self.levels
    }

    /// The levels' records as the kernels get them by value: their fluid counts 0. A count
    /// changes while a disc moves, and a step's CUDA graph would freeze the one it was
    /// captured with (`step_graph.rs`), so the kernels read it from the records on the device
    /// (`pressure_mg_remove_mean`, `pressure_mg_tail`), which `update_cells` keeps current.
    pub fn levels_by_value(&self) -> Vec<InkLevel> {
        let by_value = |level: &InkLevel| InkLevel { fluid: 0, ..*level };
        self.levels.iter().map(by_value).collect()
    }

    /// Bytes of GPU memory the arrays of an `nx × ny` grid take.
    pub fn bytes(nx: usize, ny: usize) -> u64 {
        Hierarchy::pooled_cells(nx, ny) as u64 * (3 * 4 + 2)
    }

    /// Uploads the masks of `flow` (its shape is the arrays').
    pub fn upload(&mut self, stream: &Arc<CudaStream>, flow: &Flow) -> Result<(), CudaError> {
        let mut hierarchy = Hierarchy::new(flow);
        let copy = CudaError::driver("copying the multigrid levels' masks to the GPU");
        stream
            .memcpy_htod(&hierarchy.levels, &mut self.levels_device)
            .map_err(&copy)?;
        stream
            .memcpy_htod(hierarchy.stencil(flow), &mut self.stencil)
            .map_err(&copy)?;
        stream
            .memcpy_htod(&hierarchy.solid, &mut self.solid)
            .map_err(&copy)?;
        self.levels = hierarchy.levels.clone();
        self.host = Some(hierarchy);
        self.current = true;
        Ok(())
    }

    /// The masks again after `flow`'s cells changed in the cells `patch` (the host's copy
    /// set again there, [`Hierarchy::update_cells`]): the finest level's rows under it copied
    /// on the GPU from the flow's `solid` (sent already) and `stencil` (derived there by
    /// `wall_rows`), each coarser level's rows under it sent from the host's copy, and the
    /// levels' records: about 0.17 MB a substep where the whole hierarchy was 2.67 MB, for
    /// the `stir` disc at 1414 × 707 (docs/ink-walls.md, "The multigrid's masks follow the
    /// changed cells").
    /// `patch` holds every change of the substep, however scattered: each level is coarsened
    /// once and copied in its blocks of whole rows, blocks near each other joined
    /// ([`Hierarchy::pooled_blocks`]; [`JOIN_DEVICE_BYTES`] apart on the finest level, on the
    /// device; [`JOIN_BYTES`] and at most the larger block across the coarser ones), so the rows between joined blocks are copied too, unchanged.
    /// That holds because, while the masks are current, the pool's finest level equals the
    /// flow's solid bytes and stencil on the GPU and the coarser levels the host's copy (each
    /// change goes through here). Masks not current are sent whole at the next solve instead.
    pub fn update_cells(
        &mut self,
        stream: &Arc<CudaStream>,
        flow: &Flow,
        patch: Patch,
        (solid, stencil): (&CudaSlice<u8>, &CudaSlice<u8>),
    ) -> Result<(), CudaError> {
        let Some(host) = self.host.as_mut().filter(|_| self.current) else {
            self.current = false;
            return Ok(());
        };
        let patches = host.update_cells(flow, patch);
        let copy = CudaError::driver("copying the multigrid levels' masks to the GPU");
        let finest =
            Hierarchy::pooled_blocks(&host.levels[..1], &patches[..1], JOIN_DEVICE_BYTES, false);
        for finest in finest {
            stream
                .memcpy_dtod(
                    &solid.slice(finest.clone()),
                    &mut self.solid.slice_mut(finest.clone()),
                )
                .map_err(&copy)?;
            stream
                .memcpy_dtod(
                    &stencil.slice(finest.clone()),
                    &mut self.stencil.slice_mut(finest),
                )
                .map_err(&copy)?;
        }
        for span in Hierarchy::pooled_blocks(&host.levels[1..], &patches[1..], JOIN_BYTES, true) {
            stream
                .memcpy_htod(
                    &host.stencil[span.clone()],
                    &mut self.stencil.slice_mut(span.clone()),
                )
                .map_err(&copy)?;
            stream
                .memcpy_htod(
                    &host.solid[span.clone()],
                    &mut self.solid.slice_mut(span.clone()),
                )
                .map_err(&copy)?;
        }
        if host.levels != self.levels {
            stream
                .memcpy_htod(&host.levels, &mut self.levels_device)
                .map_err(&copy)?;
            self.levels.clone_from(&host.levels);
        }
        Ok(())
    }

    /// The masks on the GPU: the levels' records, the pooled stencil and solid bytes (for the
    /// parity checks; waits for the stream).
    pub fn read_masks(&self, stream: &Arc<CudaStream>) -> Result<MaskCopy, CudaError> {
        let read = CudaError::driver("copying the multigrid levels' masks from the GPU");
        let levels = stream.clone_dtoh(&self.levels_device).map_err(&read)?;
        let stencil = stream.clone_dtoh(&self.stencil).map_err(&read)?;
        let solid = stream.clone_dtoh(&self.solid).map_err(&read)?;
        Ok((levels, stencil, solid))
    }
}

impl CudaInk {
    /// Which levels run in the one-block kernel: those of at most `cells` cells (the parity
    /// checks run both paths; the default is [`TAIL_CELLS`]).
    pub fn set_multigrid_tail_cells(&mut self, cells: usize) {
        self.tail_cells = cells;
    }

    /// The multigrid's masks on the GPU ([`GpuMultigrid::read_masks`]).
    pub fn multigrid_masks(&self) -> Result<MaskCopy, CudaError> {
        self.buffers.multigrid.read_masks(&self.stream)
    }

    /// With the multigrid solver, its masks sent when they are not the flow's (before a step:
    /// a copy from the host cannot be part of a CUDA graph).
    pub(super) fn upload_multigrid_masks(&mut self) -> Result<(), CudaError> {
        if self.params.pressure_solver == PressureSolver::Multigrid
            && !self.buffers.multigrid.current
        {
            self.buffers
                .multigrid
                .upload(&self.stream, self.mirror.flow_unguarded())?;
        }
        Ok(())
    }

    /// `iterations` V-cycles from the last pressure × the carry-over (`Multigrid::solve`).
    pub(super) fn multigrid_pressure(&mut self) -> Result<(), CudaError> {
        self.upload_multigrid_masks()?;
        let carry = self.params.pressure_carry_over;
        let cycles = self.params.iterations;
        let (k, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
        let mg = &mut b.multigrid;
        let levels = mg.levels_by_value();
        let tail = Hierarchy::tail(&levels, self.tail_cells);
        let finest = levels[0];
        let pure_neumann = finest.outflow == 0;
        k.pressure_mg_load(s, finest, &b.divergence, &b.p, carry, &mut mg.b, &mut mg.p)?;
        let mut remove_mean = |mg: &mut GpuMultigrid,
                               l: usize,
                               of_p: bool,
                               out: Option<&mut CudaSlice<f32>>|
         -> Result<(), CudaError> {
            let level = levels[l];
            let GpuMultigrid {
                levels_device,
                solid,
                p,
                b: mg_b,
                ..
            } = mg;
            let values = if of_p { p } else { mg_b };
            k.pressure_mg_sum(s, level, solid, values, &mut b.partials)?;
            let count = level.cells();
            k.reduce_finish(s, &b.partials, count, 1, 0, &mut b.stats, slot::MEAN)?;
            let (stats, level) = ((&b.stats, slot::MEAN), (&*levels_device, l, count));
            k.pressure_mg_remove_mean(s, level, solid, values, stats, out)
        };
        if pure_neumann {
            remove_mean(mg, 0, false, None)?;
        }
        for _ in 0..cycles {
            for l in 0..tail {
                let (fine, coarse) = (levels[l], levels[l + 1]);
                smooth(k, s, mg, fine)?;
                k.pressure_mg_residual(s, fine, &mg.stencil, &mg.p, &mg.b, &mut mg.r)?;
                k.pressure_mg_restrict(s, fine, coarse, &mg.solid, &mg.r, &mut mg.b, &mut mg.p)?;
                if pure_neumann {
                    remove_mean(mg, l + 1, false, None)?;
                }
            }
            k.pressure_mg_tail(s, tail, levels.len(), mg)?;
            for l in (0..tail).rev() {
                let (fine, coarse) = (levels[l], levels[l + 1]);
                k.pressure_mg_prolong(s, coarse, fine, &mg.stencil, &mg.solid, &mut mg.p)?;
                smooth(k, s, mg, fine)?;
            }
        }
        if pure_neumann {
            remove_mean(mg, 0, true, Some(&mut b.p))
        } else {
            s.memcpy_dtod(&mg.p.slice(0..finest.cells()), &mut b.p)
                .map_err(CudaError::driver("copying the multigrid's pressure"))
        }
    }
}

/// [`SMOOTHING_SWEEPS`] red-black sweeps of `level`.
fn smooth(
    k: &InkKernels,
    s: &CudaStream,
    mg: &mut GpuMultigrid,
    level: InkLevel,
) -> Result<(), CudaError> {
    for _ in 0..SMOOTHING_SWEEPS {
        for colour in 0..2 {
            k.pressure_mg_smooth(s, level, &mg.stencil, &mut mg.p, &mg.b, colour)?;
        }
    }
    Ok(())
}

/// Cells of one colour of `level` (`colour_slots` in ink_multigrid.cuh).
fn colour_slots(level: InkLevel) -> usize {
    ((level.nx + 1) / 2 * level.ny) as usize
}

/// The multigrid kernels, one method per kernel taking its parameters in order. Pooled arrays
/// hold every level (`GpuMultigrid::new`); level 0's are the flow's cells.
#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// Level 0's b = the divergence, p = the pressure × `carry`.
    pub fn pressure_mg_load(
        &self,
        stream: &CudaStream,
        level: InkLevel,
        divergence: &CudaSlice<f32>,
        pressure: &CudaSlice<f32>,
        carry: f32,
        b: &mut CudaSlice<f32>,
        p: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (&level, divergence, pressure, &carry, b, p);
        // SAFETY: ink_multigrid.cuh's parameters; every array holds level 0's cells.
        unsafe { self.launch("pressure_mg_load", stream, per_point(level.cells()), args) }
    }

    /// One colour of a red-black sweep of `level`.
    pub fn pressure_mg_smooth(
        &self,
        stream: &CudaStream,
        level: InkLevel,
        stencil: &CudaSlice<u8>,
        p: &mut CudaSlice<f32>,
        b: &CudaSlice<f32>,
        colour: i32,
    ) -> Result<(), CudaError> {
        let args = (&level, stencil, p, b, &colour);
        let config = per_point(colour_slots(level));
        // SAFETY: ink_multigrid.cuh's parameters; the pooled arrays hold the level; its
        // stencil's bits name only neighbours in the level.
        unsafe { self.launch("pressure_mg_smooth", stream, config, args) }
    }

    /// r = b − Laplacian(p)/h² on `level`.
    pub fn pressure_mg_residual(
        &self,
        stream: &CudaStream,
        level: InkLevel,
        stencil: &CudaSlice<u8>,
        p: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        r: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (&level, stencil, p, b, r);
        // SAFETY: as pressure_mg_smooth.
        unsafe {
            self.launch(
                "pressure_mg_residual",
                stream,
                per_point(level.cells()),
                args,
            )
        }
    }

    /// `coarse`'s b from `fine`'s r, its p zeroed.
    pub fn pressure_mg_restrict(
        &self,
        stream: &CudaStream,
        fine: InkLevel,
        coarse: InkLevel,
        solid: &CudaSlice<u8>,
        r: &CudaSlice<f32>,
        b: &mut CudaSlice<f32>,
        p: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (&fine, &coarse, solid, r, b, p);
        let config = per_point(coarse.cells());
        // SAFETY: ink_multigrid.cuh's parameters; the pooled arrays hold both levels.
        unsafe { self.launch("pressure_mg_restrict", stream, config, args) }
    }

    /// `fine`'s p plus `coarse`'s correction.
    pub fn pressure_mg_prolong(
        &self,
        stream: &CudaStream,
        coarse: InkLevel,
        fine: InkLevel,
        stencil: &CudaSlice<u8>,
        solid: &CudaSlice<u8>,
        p: &mut CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let args = (&coarse, &fine, stencil, solid, p);
        // SAFETY: as pressure_mg_restrict.
        unsafe { self.launch("pressure_mg_prolong", stream, per_point(fine.cells()), args) }
    }

    /// Σ per block of `values` over `level`'s fluid cells, into `partials`.
    pub fn pressure_mg_sum(
        &self,
        stream: &CudaStream,
        level: InkLevel,
        solid: &CudaSlice<u8>,
        values: &CudaSlice<f32>,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let args = (&level, solid, values, partials);
        // SAFETY: as pressure_mg_restrict; partials hold a value per block.
        unsafe { self.launch("pressure_mg_sum", stream, per_point(level.cells()), args) }
    }

    /// The mean `stats[slot]` / fluid cells subtracted from the fluid cells of `values` of
    /// level `level` of `levels` (on the device: its fluid count read there), in place, or
    /// into `out` (level 0 only); `cells`: the level's.
    pub fn pressure_mg_remove_mean(
        &self,
        stream: &CudaStream,
        (levels, level, cells): (&CudaSlice<InkLevel>, usize, usize),
        solid: &CudaSlice<u8>,
        values: &mut CudaSlice<f32>,
        (stats, slot): (&CudaSlice<f64>, u32),
        out: Option<&mut CudaSlice<f32>>,
    ) -> Result<(), CudaError> {
        let level = level as i32;
        let args = (levels, &level, solid, values, stats, &slot, OrNull(out));
        // SAFETY: as pressure_mg_restrict; `levels` holds record `level`, of `cells` cells;
        // `out` holds them.
        unsafe { self.launch("pressure_mg_remove_mean", stream, per_point(cells), args) }
    }

    /// The V-cycle from level `first` down to the coarsest of `count` and back, in one block.
    fn pressure_mg_tail(
        &self,
        stream: &CudaStream,
        first: usize,
        count: usize,
        mg: &mut GpuMultigrid,
    ) -> Result<(), CudaError> {
        let (first, count) = (first as i32, count as i32);
        let GpuMultigrid {
            levels_device: levels,
            stencil,
            solid,
            p,
            b,
            r,
            ..
        } = mg;
        let args = (&*levels, &first, &count, &*stencil, &*solid, p, b, r);
        // SAFETY: ink_multigrid.cuh's parameters; `levels` holds `count` records whose pooled
        // cells the arrays hold.
        unsafe { self.launch("pressure_mg_tail", stream, one_block(TAIL_THREADS), args) }
    }
}

#[cfg(test)]
#[path = "multigrid_tests.rs"]
mod tests;
