//! An ink step's launches as one CUDA graph (`crate::cuda::graph`, as PBF's frame): captured
//! the first time a step of its kind runs, replayed with one launch afterwards. A frame of
//! `substeps = 1` (every preset) is one graph; the frame's end (`reduce_totals` and the
//! statistics' one copy back) stays outside it, as PBF's `find_non_finite` does.
//!
//! The unit is the step, not the frame, because what the host does between a frame's steps
//! (a moving disc's rows sent from pageable memory by `set_walls`) cannot be captured.
//!
//! A graph holds the launches' arguments as captured, so its key names everything on the host
//! they depend on: the parameters (dissipation, vorticity, buoyancy, carry-over, iterations,
//! solver, advection, brush stamp, …), the step's dt and whether it is the frame's last (its
//! reductions), the grid's constants (sides, walls), whether there are obstacles (the ghost
//! faces' `close_walls`), the multigrid's level records and which levels run in one block, the
//! brush stamps' splat records (by value), and which allocation each ping-pong array holds when
//! the step begins (the device pointers). The step swaps those (advection's outputs, Jacobi's
//! sweeps); a replay swaps nothing, so the recording's end arrangement is kept with the graph
//! and put back after each replay. What a step would upload (the brush stamp's texture, the
//! multigrid's masks after the solver was switched or the walls changed) is uploaded before
//! the capture.
//!
//! Brush stamps vary from step to step while a brush moves: a step whose splat records are
//! not those of the step before runs launch by launch (capturing it would cost a capture and
//! an instantiation for one replay). So does a step whose multigrid level records differ from
//! the step before's: a moving disc changes the levels' fluid counts most steps. A source that lays the same stamps every step (`karman`'s
//! and `smoke`'s strokes, which do not move) is captured at its second step and replayed after.
//!
//! Steps run as plain launches with stage timing on (its events sit between the stages),
//! `FLUIDLAB_CUDA_SYNC_CHECK=1` (a synchronisation after each launch) and
//! `FLUIDLAB_CUDA_GRAPHS=0`, and after a capture the driver refused.

use super::kernels::{splat_records, InkSplat};
use super::CudaInk;
use crate::cuda::{CudaError, GraphCache, GraphFailure, GraphRun};
use crate::sims::ink::params::InkParams;
use crate::sims::ink::Stamp;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

/// Graphs kept: a frame's steps (the last one differs by its reductions) for a few settings
/// switched back and forth in the panel.
const GRAPHS_KEPT: usize = 16;

/// The ping-pong arrays, in a fixed order: u, u_next, v, v_next, ink, ink_next, p, p_next.
const ARRAYS: usize = 8;

/// Which allocation each ping-pong array holds (device pointers, in [`ARRAYS`]'s order).
type Arrangement = [u64; ARRAYS];

/// What a step's graph depends on.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StepKey {
    params: InkParams,
    /// The step's dt, its bits (the by-value constants derive from it).
    dt: u32,
    last: bool,
    /// The grid's record (`InkGrid`), its bytes.
    grid: Vec<u8>,
    obstacles: bool,
    /// The multigrid's level records, their bytes, and the one-block levels' threshold.
    levels: Vec<u8>,
    tail_cells: usize,
    /// The brush stamps' splat records (lattice, record bytes).
    splats: Vec<u8>,
    start: Arrangement,
}

/// The ink solver's step graphs, and whether this process allows them.
pub(super) struct StepGraphs {
    cache: GraphCache<StepKey, Arrangement>,
    /// `FLUIDLAB_CUDA_GRAPHS` allows graphs.
    allowed: bool,
    /// Why graphs were given up, when a capture failed: steps run launch by launch since.
    refused: Option<String>,
    /// The splat records of the last step (a step with new ones runs launch by launch).
    last_splats: Vec<u8>,
    /// The multigrid's level records in the last step (a step with changed ones, a moving
    /// disc's, runs launch by launch); `None` before the first step.
    last_levels: Option<Vec<u8>>,
    /// Steps run launch by launch (graphs allowed or not).
    launched: u64,
}

impl StepGraphs {
    pub(super) fn new(allowed: bool) -> Self {
        Self {
            cache: GraphCache::new(GRAPHS_KEPT),
            allowed,
            refused: None,
            last_splats: Vec::new(),
            last_levels: None,
            launched: 0,
        }
    }

    /// Steps captured, replayed and run launch by launch since the solver was made.
    pub fn counts(&self) -> (u64, u64, u64) {
        let (captured, replayed) = self.cache.counts();
        (captured, replayed, self.launched)
    }
}

/// The splat records of `stamps` in a step of `dt`, as bytes (lattice, then the record).
fn splat_bytes(ink: &CudaInk, stamps: &[Stamp], dt: f32) -> Vec<u8> {
    let textured = ink.params.brush_stamp != crate::sims::ink::BrushStamp::Round;
    let mut bytes = Vec::new();
    for stamp in stamps {
        for (lattice, record) in splat_records(&ink.grid, stamp, dt, textured) {
            bytes.push(lattice as u8);
            bytes.extend_from_slice(bytemuck::bytes_of::<InkSplat>(&record));
        }
    }
    bytes
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
        // What a step would upload, uploaded now (no copy from the host can be captured).
        self.upload_stamp_texture()?;
        self.upload_multigrid_masks()?;
        let splats = splat_bytes(self, stamps, dt);
        let new_stamps = !splats.is_empty() && splats != self.graphs.last_splats;
        let levels: Vec<u8> = bytemuck::cast_slice(self.buffers.multigrid.levels()).to_vec();
        let new_levels = self
            .graphs
            .last_levels
            .as_ref()
            .is_some_and(|last| *last != levels);
        let plain = !self.graphs.allowed
            || self.graphs.refused.is_some()
            || self.stage_timing
            || self.kernels.sync_check()
            || new_stamps
            || new_levels;
        self.graphs.last_splats = splats.clone();
        self.graphs.last_levels = Some(levels.clone());
        if plain {
            self.graphs.launched += 1;
            return self.step_launches(dt, stamps, last);
        }
        let stream = self.stream.clone();
        let start = self.buffers.arrangement(&stream);
        let key = StepKey {
            params: self.params.clone(),
            dt: dt.to_bits(),
            last,
            grid: bytemuck::bytes_of(&self.grid).to_vec(),
            obstacles: self.mirror.flow_unguarded().has_obstacles(),
            levels,
            tail_cells: self.tail_cells,
            splats,
            start,
        };
        let mut cache = std::mem::replace(&mut self.graphs.cache, GraphCache::new(1));
        let ran = cache.run(&stream, key, || {
            self.step_launches(dt, stamps, last)?;
            Ok::<_, CudaError>(self.buffers.arrangement(&stream))
        });
        self.graphs.cache = cache;
        match ran {
            Ok((end, run)) => {
                if run == GraphRun::Replayed {
                    self.buffers.arrange(&stream, &end)?;
                }
                Ok(())
            }
            Err(GraphFailure::Launch(error)) => {
                // A graph just captured swapped the arrays while recording, but nothing ran.
                self.buffers.arrange(&stream, &start)?;
                Err(error)
            }
            Err(GraphFailure::Capture(error)) => {
                // Nothing was queued: the arrays go back to where the step began, and this
                // solver runs its steps launch by launch from now on, saying why.
                self.buffers.arrange(&stream, &start)?;
                eprintln!(
                    "note: a CUDA graph capture failed ({error}): the ink solver's steps run \
                     launch by launch from now on"
                );
                self.graphs.refused = Some(error.to_string());
                self.graphs.launched += 1;
                self.step_launches(dt, stamps, last)
            }
        }
    }

    /// How this solver's steps ran: "N captured as CUDA graphs, M replayed, K launch by
    /// launch", and why graphs are off when they are.
    pub fn graph_summary(&self) -> String {
        let (captured, replayed, launched) = self.graphs.counts();
        let mut summary = format!(
            "steps: {captured} captured as CUDA graphs, {replayed} replayed, {launched} launch by \
             launch"
        );
        if !self.graphs.allowed {
            summary += &format!(" ({}=0)", crate::cuda::GRAPHS_VARIABLE);
        } else if let Some(why) = &self.graphs.refused {
            summary += &format!(" (a CUDA graph capture failed: {why})");
        } else if self.stage_timing {
            summary += " (stage timing on)";
        } else if self.kernels.sync_check() {
            summary += &format!(" ({}=1)", crate::cuda::SYNC_CHECK_VARIABLE);
        }
        summary
    }

    /// Steps captured, replayed and run launch by launch since the solver was made.
    pub fn graph_counts(&self) -> (u64, u64, u64) {
        self.graphs.counts()
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
            let (now, wanted) = (&current[2 * k..2 * k + 2], &target[2 * k..2 * k + 2]);
            if now == wanted {
                continue;
            }
            if now[0] == wanted[1] && now[1] == wanted[0] {
                std::mem::swap(a, b);
            } else {
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
