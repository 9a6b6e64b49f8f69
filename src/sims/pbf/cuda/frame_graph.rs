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
//! Frames that cannot be graphs run as plain launches: stage timing on (its events sit between
//! the stages), `FLUIDLAB_CUDA_SYNC_CHECK` (a synchronisation after each launch), the
//! density-error rule (the host reads the convergence flag inside the frame), and
//! `FLUIDLAB_CUDA_GRAPHS=0`.

use super::buffers::Buffers;
use super::{CudaSolver, Float4};
use crate::cuda::{CudaError, GraphCache, GraphFailure, GraphRun};
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

/// The solver's graphs, and whether this process allows them.
pub(super) struct FrameGraphs {
    cache: GraphCache<FrameKey, FrameOutcome>,
    /// `FLUIDLAB_CUDA_GRAPHS` allows graphs.
    pub(super) allowed: bool,
    /// Why graphs were given up, when a capture failed: frames run launch by launch since.
    pub(super) refused: Option<String>,
    /// Why the last frame ran launch by launch, if it did.
    launches_because: Option<LaunchesBecause>,
}

/// Why a frame runs launch by launch.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LaunchesBecause {
    /// `FLUIDLAB_CUDA_GRAPHS=0`.
    GraphsOff,
    /// A capture failed ([`FrameGraphs::refused`]).
    CaptureRefused,
    StageTiming,
    SyncCheck,
    DensityErrorRule,
}

impl FrameGraphs {
    pub(super) fn new(allowed: bool) -> Self {
        Self {
            cache: GraphCache::new(GRAPHS_KEPT),
            allowed,
            refused: None,
            launches_because: None,
        }
    }
}

impl CudaSolver {
    /// The frame's `substeps` solver steps, as a CUDA graph when the frame can be one (see the
    /// module's note), else launch by launch. Returns the constraint iterations applied.
    pub(super) fn frame(&mut self, substeps: u32) -> Result<u32, SolverError> {
        let because = if !self.graphs.allowed {
            Some(LaunchesBecause::GraphsOff)
        } else if self.graphs.refused.is_some() {
            Some(LaunchesBecause::CaptureRefused)
        } else if self.stage_timing {
            Some(LaunchesBecause::StageTiming)
        } else if self.kernels.sync_check() {
            Some(LaunchesBecause::SyncCheck)
        } else if self.params.iteration_rule().2.is_some() {
            Some(LaunchesBecause::DensityErrorRule)
        } else {
            None
        };
        self.graphs.launches_because = because;
        if because.is_some() {
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
        match ran {
            Ok((outcome, run)) => {
                if run == GraphRun::Replayed {
                    self.restore(&stream, &outcome.end)?;
                }
                Ok(outcome.iterations)
            }
            Err(GraphFailure::Launch(error)) => Err(error),
            Err(GraphFailure::Capture(error)) => {
                // Nothing was queued: the arrays go back to where the frame began, and this
                // solver runs its frames launch by launch from now on, saying why.
                self.restore(&stream, &start)?;
                eprintln!(
                    "note: a CUDA graph capture failed ({error}): this solver's frames run launch \
                     by launch from now on"
                );
                self.graphs.refused = Some(error.to_string());
                self.graphs.launches_because = Some(LaunchesBecause::CaptureRefused);
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

    /// How this solver's frames ran: "as CUDA graphs (N captured, M replayed)", or launch by
    /// launch and why.
    pub fn graph_summary(&self) -> String {
        let (captured, replayed) = self.graphs.cache.counts();
        let because = match self.graphs.launches_because {
            None => return format!("as CUDA graphs ({captured} captured, {replayed} replayed)"),
            Some(LaunchesBecause::GraphsOff) => format!("{}=0", crate::cuda::GRAPHS_VARIABLE),
            Some(LaunchesBecause::CaptureRefused) => format!(
                "a CUDA graph capture failed: {}",
                self.graphs.refused.as_deref().unwrap_or_default()
            ),
            Some(LaunchesBecause::StageTiming) => "stage timing on".into(),
            Some(LaunchesBecause::SyncCheck) => format!("{}=1", crate::cuda::SYNC_CHECK_VARIABLE),
            Some(LaunchesBecause::DensityErrorRule) => "the density-error rule".into(),
        };
        format!("launch by launch ({because})")
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

/// Swaps the values behind `slots` (which hold what `current` names) until slot i holds what
/// `target[i]` names. False, with nothing changed, when `target` is not a rearrangement of
/// `current`.
fn permute<T, const N: usize>(mut slots: [&mut T; N], current: &[u64], target: &[u64]) -> bool {
    let (mut a, mut b) = (current.to_vec(), target.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    if a != b || current.len() != N {
        return false;
    }
    let mut held = current.to_vec();
    for i in 0..N {
        let Some(j) = (i..N).find(|&j| held[j] == target[i]) else {
            return false;
        };
        if j != i {
            let (low, high) = slots.split_at_mut(j);
            std::mem::swap(&mut *low[i], &mut *high[0]);
            held.swap(i, j);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_puts_each_value_where_the_target_says() {
        let mut values = [10u64, 20, 30, 40];
        let current = values;
        let target = [30, 10, 40, 20];
        let [a, b, c, d] = &mut values;
        assert!(permute([a, b, c, d], &current, &target));
        assert_eq!(values, target);
    }

    #[test]
    fn permute_refuses_a_target_that_is_no_rearrangement() {
        let mut values = [1u64, 2, 3];
        let current = values;
        let [a, b, c] = &mut values;
        assert!(!permute([a, b, c], &current, &[1, 2, 4]));
        assert_eq!(values, [1, 2, 3]);
    }

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
