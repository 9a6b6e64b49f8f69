//! An ink step's launches as one CUDA graph (`crate::cuda::graph`, as PBF's frame): captured
//! the second time a step of its kind runs, replayed with one launch afterwards. The first
//! time, the step runs launch by launch and its key joins a short list of keys seen once
//! ([`SEEN_ONCE_KEPT`]): a one-off step (a click's splats, a stroke's first step, a stamp count
//! a hand-driven drag lays once) never pays for a capture it would not replay. A frame of
//! `substeps = 1` (every preset) is one graph; the frame's end (`reduce_totals` and the
//! statistics' one copy back) stays outside it, as PBF's `find_non_finite` does.
//!
//! The unit is the step, not the frame: between a frame's steps the host moves the discs
//! (`set_walls`: their rows sent from pageable memory, the multigrid's masks updated from the
//! host's copy) and takes the next step's brush stamps; none of it can be captured. A frame
//! of several steps as one graph would need those copies made before the frame for all its
//! steps (the discs' rows of every substep), which `InkSim::step` does not do.
//!
//! A graph holds the launches' arguments as captured. What varies from step to step while the
//! user paints or a disc moves is therefore not passed by value: it lives in small device
//! arrays the kernels read, sent before the graph's launch (outside the capture), and the key
//! holds only what decides the launch sequence, the launch shapes and the by-value arguments.
//! Field by field:
//!
//! - key `params` (all of [`InkParams`]): the by-value constants (damping, fade, lift,
//!   epsilon, carry-over, dx²), which stages run (vorticity, buoyancy), iterations, solver,
//!   advection.
//! - key `dt` (its bits): the by-value constants derived from it. `InkSim` derives it from
//!   `params` (dt / substeps), but [`CudaInk::step`] takes any.
//! - key `last`: the frame's last step reduces the residual and the divergence after.
//! - key `grid` (the `InkGrid` record's bytes): passed by value to most kernels (sides,
//!   walls' fixed velocities, outflows).
//! - key `obstacles`: whether the ghost faces' `close_walls` runs.
//! - key `levels`: the multigrid levels' shapes (their records with the fluid counts zeroed:
//!   sizes, offsets, h², outflows), by value to its kernels (with the counts zeroed too:
//!   `GpuMultigrid::levels_by_value`) and deciding the launches.
//!   Data: the levels' fluid counts, which change most steps while a disc moves;
//!   `pressure_mg_remove_mean` and `pressure_mg_tail` read them from the records on the device
//!   (`update_cells` keeps those current).
//! - key `tail_cells`: which levels run in the one-block `pressure_mg_tail`.
//! - key `splats`: the `splat` launches: how many (a slot of three records, one per lattice,
//!   a stamp; the stamps padded with empty slots to a power of two) and the points each
//!   covers a lattice (the step's largest `InkSplat::capacity`, from the stamps' radius: the
//!   same wherever a stamp lies), and the records' array (its device pointer: it grows when a
//!   step has more records). Data: the records (position, amounts, direction, box), sent
//!   before the step (`upload_splats`) and read by `splat` from the array. A drag lays a
//!   stamp count that follows the hand's speed; any count from 2ᵏ⁻¹ + 1 to 2ᵏ runs the same
//!   launches, so a drag of 1 to 20 stamps a step runs at most 6 (32 slots), each in the
//!   step's two arrangements: 12 keys, within [`GRAPHS_KEPT`].
//! - key `start`: which allocation each ping-pong array holds when the step begins (the
//!   device pointers). The step swaps them (advection's outputs, Jacobi's sweeps); a replay
//!   swaps nothing, so the recording's end arrangement is kept with the graph and put back
//!   after each replay.
//!
//! The other arrays are allocated with the solver and never again; what they hold (masks,
//! fixed velocities, the brush stamp's texture, the multigrid's masks) is sent before the step.
//!
//! Steps run launch by launch for `cuda::GraphMode`'s reasons, and at a key's first sighting.

use super::stages::SplatLaunches;
use super::CudaInk;
use crate::cuda::graph::permute;
use crate::cuda::{CudaError, GraphCache, GraphMode, GraphRun};
use crate::sims::ink::params::InkParams;
use crate::sims::ink::Stamp;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

/// Graphs kept: a frame's steps (two arrangements) for a few settings switched back and forth
/// in the panel, or a brush dragged at a few speeds.
const GRAPHS_KEPT: usize = 16;

/// Keys seen once remembered (the oldest forgotten): a step's key is captured when it comes
/// again while remembered, so a few recurring kinds of step (a drag's stamp counts, both
/// arrangements each) capture on their second sighting.
const SEEN_ONCE_KEPT: usize = 32;

/// The ping-pong arrays, in a fixed order: u, u_next, v, v_next, ink, ink_next, p, p_next.
const ARRAYS: usize = 8;

/// Which allocation each ping-pong array holds (device pointers, in [`ARRAYS`]'s order).
type Arrangement = [u64; ARRAYS];

/// What a step's graph depends on (the module's note says why each field).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StepKey {
    params: InkParams,
    /// The step's dt, its bits.
    dt: u32,
    last: bool,
    /// The grid's record (`InkGrid`), its bytes.
    grid: Vec<u8>,
    obstacles: bool,
    /// The multigrid's level records with their fluid counts zeroed, their bytes.
    levels: Vec<u8>,
    tail_cells: usize,
    /// The splat launches (slots, points a lattice), and the records' array.
    splats: SplatLaunches,
    splat_array: u64,
    start: Arrangement,
}

/// The ink solver's step graphs, and how its steps run.
pub(super) struct StepGraphs {
    cache: GraphCache<StepKey, Arrangement>,
    /// Keys of steps run once launch by launch, not captured (oldest first).
    seen_once: Vec<StepKey>,
    pub(super) mode: GraphMode,
}

impl StepGraphs {
    pub(super) fn new(allowed: bool) -> Self {
        Self {
            cache: GraphCache::new(GRAPHS_KEPT),
            seen_once: Vec::new(),
            mode: GraphMode::new("steps", allowed),
        }
    }
}

impl CudaInk {
    /// A step's stages: as a CUDA graph when the step can be one (see the module's note), else
    /// launch by launch.
    pub(super) fn step_stages(
        &mut self,
        dt: f32,
        stamps: &[Stamp],
        last: bool,
    ) -> Result<(), CudaError> {
        let sync_check = self.kernels.sync_check();
        if self
            .graphs
            .mode
            .launches(self.stage_timing, sync_check, None)
        {
            return self.step_launches(dt, stamps, last);
        }
        // What a step sends, sent now (no copy from the host can be captured; inside the
        // recording these find nothing new to send).
        self.upload_stamp_texture()?;
        self.upload_multigrid_masks()?;
        let splats = self.upload_splats(dt, stamps)?;
        let stream = self.stream.clone();
        let levels = self.buffers.multigrid.levels_by_value();
        let start = self.buffers.arrangement(&stream);
        let key = StepKey {
            params: self.params.clone(),
            dt: dt.to_bits(),
            last,
            grid: bytemuck::bytes_of(&self.grid).to_vec(),
            obstacles: self.mirror.flow_unguarded().has_obstacles(),
            levels: bytemuck::cast_slice(&levels).to_vec(),
            tail_cells: self.tail_cells,
            splats,
            splat_array: self.buffers.splats.pointer(&stream),
            start,
        };
        // A key neither kept nor seen before runs launch by launch, remembered.
        if !self.graphs.cache.contains(&key) {
            let seen = &mut self.graphs.seen_once;
            if let Some(at) = seen.iter().position(|k| *k == key) {
                seen.remove(at);
            } else {
                if seen.len() == SEEN_ONCE_KEPT {
                    seen.remove(0);
                }
                seen.push(key);
                self.graphs.mode.launched_anyway();
                return self.step_launches(dt, stamps, last);
            }
        }
        // The cache is moved out while the recording borrows the solver, and put back even
        // when the recording panics.
        let mut cache = std::mem::replace(&mut self.graphs.cache, GraphCache::new(1));
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cache.run(&stream, key, || {
                self.step_launches(dt, stamps, last)?;
                Ok::<_, CudaError>(self.buffers.arrangement(&stream))
            })
        }));
        self.graphs.cache = cache;
        let ran = ran.unwrap_or_else(|panic| {
            // The recording may have swapped arrays while nothing ran: they go back to where
            // the step began for a caller that catches the unwind.
            let _ = self.buffers.arrange(&stream, &start);
            std::panic::resume_unwind(panic)
        });
        if ran.is_err() {
            // A capture failed (nothing was queued) or a graph just captured could not be
            // launched: the recording swapped the arrays while nothing ran.
            self.buffers.arrange(&stream, &start)?;
        }
        match self.graphs.mode.ran(ran)? {
            Some((end, run)) => {
                if run == GraphRun::Replayed {
                    self.buffers.arrange(&stream, &end)?;
                }
                Ok(())
            }
            None => self.step_launches(dt, stamps, last),
        }
    }

    /// How this solver's steps ran ([`GraphMode::summary`]).
    pub fn graph_summary(&self) -> String {
        self.graphs.mode.summary(self.graphs.cache.counts())
    }

    /// Steps captured, replayed and run launch by launch since the solver was made.
    pub fn graph_counts(&self) -> (u64, u64, u64) {
        self.graphs.mode.counts(self.graphs.cache.counts())
    }
}

impl super::Buffers {
    /// The ping-pong pairs, in [`Arrangement`]'s order.
    fn pairs(&mut self) -> [(&mut CudaSlice<f32>, &mut CudaSlice<f32>); ARRAYS / 2] {
        [
            (&mut self.u, &mut self.u_next),
            (&mut self.v, &mut self.v_next),
            (&mut self.ink, &mut self.ink_next),
            (&mut self.p, &mut self.p_next),
        ]
    }

    /// Which allocation each ping-pong array holds now.
    fn arrangement(&mut self, stream: &CudaStream) -> Arrangement {
        let mut pointers = [0; ARRAYS];
        for (k, (a, b)) in self.pairs().into_iter().enumerate() {
            pointers[2 * k] = a.device_ptr(stream).0;
            pointers[2 * k + 1] = b.device_ptr(stream).0;
        }
        pointers
    }

    /// Swaps the pairs until each array holds the allocation `target` names for it.
    fn arrange(&mut self, stream: &CudaStream, target: &Arrangement) -> Result<(), CudaError> {
        let current = self.arrangement(stream);
        for (k, (a, b)) in self.pairs().into_iter().enumerate() {
            let pair = 2 * k..2 * k + 2;
            if !permute([a, b], &current[pair.clone()], &target[pair]) {
                return Err(CudaError::Module(
                    "a CUDA graph's recorded arrangement of the ink's arrays names allocations \
                     the solver does not hold"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}
