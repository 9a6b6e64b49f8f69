//! A frame's substeps as one CUDA graph (`crate::cuda::graph`): captured the first time a
//! frame of its kind runs, replayed with one launch afterwards.
//!
//! A graph holds the launches' arguments as they were captured, so its key names everything
//! on the host they depend on: the parameters and the substep count (the by-value constants,
//! which kernels run and how often), which allocation each swapped particle array held when
//! the frame began (the device pointers), and whether the coarse correction has solved before
//! (its first solve runs more iterations; its warm start's dt ratio is read on the device, so
//! the previous frame's substeps are not in the key). The frame changes that host state as it
//! goes (the sort, apply_delta and xsph swap arrays); a replay changes nothing, so the
//! recording's final state is kept with the graph and put back after each replay.
//!
//! Each substep permutes the four float4 position arrays the same way (a 3- or 4-cycle, by the
//! parity of the iteration count) and swaps the velocity and id pairs at most once, so the
//! arrangements a run goes through are at most 4: a scene whose CFL substeps take k values
//! keeps at most 4k graphs.
//!
//! Frames run launch by launch for `cuda::GraphMode`'s reasons, and under the density-error
//! rule (the host reads the convergence flag inside the frame).

use super::buffers::Buffers;
use super::{CudaSolver, Float4};
use crate::cuda::graph::permute;
use crate::cuda::{CudaError, GraphCache, GraphMode, GraphRun};
use crate::sims::pbf::{Params, SolverError};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

/// Graphs kept: up to 4 arrangements of the arrays for each of up to 8 substep counts (the
/// CFL condition changes the count as the fluid speeds up).
pub(super) const GRAPHS_KEPT: usize = 32;

/// The swapped arrays, in a fixed order: the float4 ones, then the ids.
const FLOAT4_ARRAYS: usize = 6;
const ARRAYS: usize = FLOAT4_ARRAYS + 2;

/// Which allocation each swapped array holds: device pointers in [`Buffers::swapped`]'s order.
pub(super) type Arrangement = [u64; ARRAYS];

/// The host state a frame's launches depend on and change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct HostState {
    /// Which allocation each swapped array holds.
    arrays: Arrangement,
    /// Whether the coarse correction has solved before (`GpuCoarse::solved`).
    coarse_solved: bool,
}

/// What a frame's graph depends on.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct FrameKey {
    substeps: u32,
    params: Params,
    start: HostState,
}

/// What the recorded frame did to the host's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct FrameOutcome {
    /// Constraint iterations applied, over all substeps.
    iterations: u32,
    /// The host state at the frame's end.
    end: HostState,
}

/// The solver's graphs, and how its frames run.
pub(super) struct FrameGraphs {
    cache: GraphCache<FrameKey, FrameOutcome>,
    pub(super) mode: GraphMode,
}

impl FrameGraphs {
    pub(super) fn new(allowed: bool) -> Self {
        Self {
            cache: GraphCache::new(GRAPHS_KEPT),
            mode: GraphMode::new("frames", allowed),
        }
    }
}

impl CudaSolver {
    /// The frame's `substeps` solver steps, as a CUDA graph when the frame can be one (see the
    /// module's note), else launch by launch. Returns the constraint iterations applied.
    pub(super) fn frame(&mut self, substeps: u32) -> Result<u32, SolverError> {
        let rule = self
            .params
            .iteration_rule()
            .2
            .map(|_| "the density-error rule");
        let sync_check = self.kernels.sync_check();
        if self
            .graphs
            .mode
            .launches(self.stage_timing, sync_check, rule)
        {
            return self.frame_launches(substeps);
        }
        let stream = self.stream.clone();
        let start = self.host_state(&stream);
        let key = FrameKey {
            substeps,
            params: self.params.clone(),
            start,
        };
        let mut cache = std::mem::replace(&mut self.graphs.cache, GraphCache::new(1));
        let ran = cache.run(&stream, key, || {
            let iterations = self.frame_launches(substeps)?;
            Ok::<_, SolverError>(FrameOutcome {
                iterations,
                end: self.host_state(&stream),
            })
        });
        self.graphs.cache = cache;
        match self.graphs.mode.ran(ran)? {
            Some((outcome, run)) => {
                if run == GraphRun::Replayed {
                    self.restore(&stream, &outcome.end)?;
                }
                Ok(outcome.iterations)
            }
            None => {
                // Nothing was queued: the arrays go back to where the frame began.
                self.restore(&stream, &start)?;
                self.frame_launches(substeps)
            }
        }
    }

    fn host_state(&mut self, stream: &CudaStream) -> HostState {
        HostState {
            arrays: self.buffers.arrangement(stream),
            coarse_solved: self.coarse.solved,
        }
    }

    /// Brings the host state to `state` (a recording's end, or a failed recording's start).
    fn restore(&mut self, stream: &CudaStream, state: &HostState) -> Result<(), SolverError> {
        self.buffers.arrange(stream, &state.arrays)?;
        self.coarse.solved = state.coarse_solved;
        Ok(())
    }

    /// The frame's solver steps, each kernel launched by itself.
    fn frame_launches(&mut self, substeps: u32) -> Result<u32, SolverError> {
        let mut iterations = 0;
        for k in 0..substeps {
            iterations += self.substep(k + 1 == substeps)?;
        }
        Ok(iterations)
    }

    /// How this solver's frames ran ([`GraphMode::summary`]).
    pub fn graph_summary(&self) -> String {
        self.graphs.mode.summary(self.graphs.cache.counts())
    }
}

impl Buffers {
    /// The arrays a frame swaps, in [`Arrangement`]'s order.
    fn swapped(
        &mut self,
    ) -> (
        [&mut CudaSlice<Float4>; FLOAT4_ARRAYS],
        [&mut CudaSlice<u32>; 2],
    ) {
        (
            [
                &mut self.positions,
                &mut self.positions_next,
                &mut self.predicted,
                &mut self.predicted_next,
                &mut self.velocities,
                &mut self.velocities_next,
            ],
            [&mut self.ids, &mut self.ids_next],
        )
    }

    /// Which allocation each swapped array holds now.
    pub(super) fn arrangement(&mut self, stream: &CudaStream) -> Arrangement {
        let (floats, ids) = self.swapped();
        let mut pointers = [0; ARRAYS];
        for (pointer, array) in pointers.iter_mut().zip(floats) {
            *pointer = array.device_ptr(stream).0;
        }
        for (pointer, array) in pointers[FLOAT4_ARRAYS..].iter_mut().zip(ids) {
            *pointer = array.device_ptr(stream).0;
        }
        pointers
    }

    /// Swaps the arrays until each holds the allocation `target` names for it.
    pub(super) fn arrange(
        &mut self,
        stream: &CudaStream,
        target: &Arrangement,
    ) -> Result<(), SolverError> {
        let current = self.arrangement(stream);
        let (floats, ids) = self.swapped();
        let floats_ok = permute(floats, &current[..FLOAT4_ARRAYS], &target[..FLOAT4_ARRAYS]);
        let ids_ok = permute(ids, &current[FLOAT4_ARRAYS..], &target[FLOAT4_ARRAYS..]);
        if floats_ok && ids_ok {
            Ok(())
        } else {
            Err(CudaError::Module(
                "a CUDA graph's recorded arrangement of the particle arrays names allocations the \
                 solver does not hold"
                    .into(),
            )
            .into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every arrangement a frame can leave (the sort's four swaps, any number of apply_delta
    /// and xsph swaps, then x = x*) is undone and redone by permute.
    #[test]
    fn permute_reaches_every_arrangement_a_frame_leaves() {
        for substeps in 1..4 {
            for iterations in 1..5 {
                for xsph in [false, true] {
                    // positions, positions_next, predicted, predicted_next, velocities, velocities_next
                    let start = [1u64, 2, 3, 4, 5, 6];
                    let mut s = start;
                    for _ in 0..substeps {
                        s.swap(0, 1); // the sort
                        s.swap(2, 3);
                        s.swap(4, 5);
                        for _ in 0..iterations {
                            s.swap(2, 3); // apply_delta
                        }
                        if xsph {
                            s.swap(4, 5);
                        }
                        s.swap(0, 2); // x = x*
                    }
                    let mut replay = start;
                    let [a, b, c, d, e, f] = &mut replay;
                    assert!(permute([a, b, c, d, e, f], &start, &s));
                    assert_eq!(replay, s);
                }
            }
        }
    }
}
