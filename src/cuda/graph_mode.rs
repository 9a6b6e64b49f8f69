//! Whether a solver's frames (or steps) run as CUDA graphs ([`super::graph`]) or launch by
//! launch, why, and how many ran each way: the bookkeeping every kind's graphs share, with the
//! line `bench` and `doctor` print ([`GraphMode::summary`]).

use super::graph::{GraphFailure, GraphRun};
use super::{GRAPHS_VARIABLE, SYNC_CHECK_VARIABLE};
use std::fmt::Display;

/// Why a frame runs launch by launch.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LaunchesBecause {
    /// `FLUIDLAB_CUDA_GRAPHS=0`.
    GraphsOff,
    /// A capture failed before ([`GraphMode::refused`]).
    CaptureRefused,
    /// Stage timing on: its events sit between the stages.
    StageTiming,
    /// `FLUIDLAB_CUDA_SYNC_CHECK=1`: a synchronisation after each launch.
    SyncCheck,
    /// A rule of the kind's own that needs the host inside the frame, by its name.
    Rule(&'static str),
}

/// How a solver's frames run: as CUDA graphs where they can, else launch by launch, and why.
pub struct GraphMode {
    /// What one run is called in the summary ("frames", "steps").
    unit: &'static str,
    /// `FLUIDLAB_CUDA_GRAPHS` allows graphs.
    allowed: bool,
    /// Why graphs were given up, when a capture failed: everything runs launch by launch since.
    refused: Option<String>,
    /// Why the last frame ran launch by launch, if it did for a reason.
    last: Option<LaunchesBecause>,
    /// Frames run launch by launch.
    launched: u64,
}

impl GraphMode {
    /// Graphs allowed or not (`FLUIDLAB_CUDA_GRAPHS`, [`super::graphs_requested`]); `unit` names
    /// what runs ("frames", "steps").
    pub fn new(unit: &'static str, allowed: bool) -> Self {
        Self {
            unit,
            allowed,
            refused: None,
            last: None,
            launched: 0,
        }
    }

    /// Whether this frame must run launch by launch (counted, its reason kept for the summary):
    /// graphs off, a capture failed before, stage timing on, `FLUIDLAB_CUDA_SYNC_CHECK`, or the
    /// kind's own `rule` (its name), in that order.
    pub fn launches(
        &mut self,
        stage_timing: bool,
        sync_check: bool,
        rule: Option<&'static str>,
    ) -> bool {
        self.last = if !self.allowed {
            Some(LaunchesBecause::GraphsOff)
        } else if self.refused.is_some() {
            Some(LaunchesBecause::CaptureRefused)
        } else if stage_timing {
            Some(LaunchesBecause::StageTiming)
        } else if sync_check {
            Some(LaunchesBecause::SyncCheck)
        } else {
            rule.map(LaunchesBecause::Rule)
        };
        if self.last.is_some() {
            self.launched += 1;
        }
        self.last.is_some()
    }

    /// Counts a frame that could have been a graph run launch by launch all the same (the
    /// ink's key seen once).
    pub fn launched_anyway(&mut self) {
        self.launched += 1;
    }

    /// What [`super::GraphCache::run`] came to: the graph's outcome where it ran; `None` where
    /// the capture failed, which gives graphs up for this solver (a one-time note on stderr)
    /// and counts the frame launch by launch: nothing was queued, and the caller puts its
    /// state back and runs the frame so. A failed launch is the error.
    pub fn ran<O, E: Display>(
        &mut self,
        ran: Result<(O, GraphRun), GraphFailure<E>>,
    ) -> Result<Option<(O, GraphRun)>, E> {
        match ran {
            Ok(ran) => Ok(Some(ran)),
            Err(GraphFailure::Launch(error)) => Err(error),
            Err(GraphFailure::Capture(error)) => {
                eprintln!(
                    "note: a CUDA graph capture failed ({error}): this solver's {} run launch by \
                     launch from now on",
                    self.unit
                );
                self.refused = Some(error.to_string());
                self.last = Some(LaunchesBecause::CaptureRefused);
                self.launched += 1;
                Ok(None)
            }
        }
    }

    /// Frames captured, replayed (the caches' `counts`) and run launch by launch.
    pub fn counts(&self, (captured, replayed): (u64, u64)) -> (u64, u64, u64) {
        (captured, replayed, self.launched)
    }

    /// How the frames ran, from the caches' `counts`: "frames: N captured as CUDA graphs, M
    /// replayed, K launch by launch", and why the last ran launch by launch when it did.
    pub fn summary(&self, counts: (u64, u64)) -> String {
        let (captured, replayed, launched) = self.counts(counts);
        let summary = format!(
            "{}: {captured} captured as CUDA graphs, {replayed} replayed, {launched} launch by \
             launch",
            self.unit
        );
        let because = match self.last {
            None => return summary,
            Some(LaunchesBecause::GraphsOff) => format!("{GRAPHS_VARIABLE}=0"),
            Some(LaunchesBecause::CaptureRefused) => format!(
                "a CUDA graph capture failed: {}",
                self.refused.as_deref().unwrap_or_default()
            ),
            Some(LaunchesBecause::StageTiming) => "stage timing on".into(),
            Some(LaunchesBecause::SyncCheck) => format!("{SYNC_CHECK_VARIABLE}=1"),
            Some(LaunchesBecause::Rule(name)) => name.into(),
        };
        format!("{summary} ({because})")
    }

    /// The kernels' `origin` (cubin, PTX or NVRTC, and why) with every launch checked
    /// (`sync_check`) or graphs off said: the backend's note.
    pub fn kernels_note(&self, origin: &str, sync_check: bool) -> String {
        if sync_check {
            format!("{origin}; {SYNC_CHECK_VARIABLE}=1: every launch synchronised and checked")
        } else if !self.allowed {
            format!("{origin}; {GRAPHS_VARIABLE}=0: no CUDA graphs")
        } else {
            origin.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(mode: &mut GraphMode) -> Option<((), GraphRun)> {
        let failed: Result<((), GraphRun), GraphFailure<String>> =
            Err(GraphFailure::Capture("no room".into()));
        mode.ran(failed).unwrap()
    }

    #[test]
    fn the_summary_counts_each_way_and_says_why_the_last_frame_launched() {
        let mut mode = GraphMode::new("frames", true);
        assert!(!mode.launches(false, false, None));
        assert_eq!(
            mode.summary((1, 4)),
            "frames: 1 captured as CUDA graphs, 4 replayed, 0 launch by launch"
        );
        for (stage_timing, sync_check, rule, why) in [
            (
                true,
                true,
                Some("the density-error rule"),
                "stage timing on",
            ),
            (
                false,
                true,
                Some("the density-error rule"),
                "FLUIDLAB_CUDA_SYNC_CHECK=1",
            ),
            (
                false,
                false,
                Some("the density-error rule"),
                "the density-error rule",
            ),
        ] {
            assert!(mode.launches(stage_timing, sync_check, rule));
            assert!(
                mode.summary((1, 4)).ends_with(&format!(" ({why})")),
                "{why}"
            );
        }
        mode.launched_anyway();
        assert_eq!(mode.counts((1, 4)), (1, 4, 4));
        assert!(!mode.launches(false, false, None));
        assert!(mode.summary((1, 4)).ends_with("4 launch by launch"));
        assert_eq!(refused(&mut mode), None);
        assert_eq!(
            mode.summary((1, 4)),
            "frames: 1 captured as CUDA graphs, 4 replayed, 5 launch by launch (a CUDA graph \
             capture failed: no room)"
        );
        // Given up for good, before stage timing or the kind's rule.
        assert!(mode.launches(true, false, Some("a rule")));
        assert!(mode
            .summary((1, 4))
            .ends_with("(a CUDA graph capture failed: no room)"));
        let mut off = GraphMode::new("steps", false);
        assert!(off.launches(true, true, None));
        assert_eq!(
            off.summary((0, 0)),
            "steps: 0 captured as CUDA graphs, 0 replayed, 1 launch by launch \
             (FLUIDLAB_CUDA_GRAPHS=0)"
        );
    }

    #[test]
    fn a_graph_run_or_a_failed_launch_gives_nothing_up() {
        let mut mode = GraphMode::new("steps", true);
        let ran: Result<(u8, GraphRun), GraphFailure<String>> = Ok((7, GraphRun::Replayed));
        assert_eq!(mode.ran(ran).unwrap(), Some((7, GraphRun::Replayed)));
        let failed: Result<(u8, GraphRun), GraphFailure<String>> =
            Err(GraphFailure::Launch("gone".into()));
        assert_eq!(mode.ran(failed).unwrap_err(), "gone");
        assert!(!mode.launches(false, false, None));
        assert_eq!(mode.counts((0, 1)), (0, 1, 0));
    }

    #[test]
    fn the_kernels_note_says_sync_check_before_graphs_off() {
        let off = GraphMode::new("frames", false);
        assert_eq!(
            off.kernels_note("PTX", true),
            "PTX; FLUIDLAB_CUDA_SYNC_CHECK=1: every launch synchronised and checked"
        );
        assert_eq!(
            off.kernels_note("PTX", false),
            "PTX; FLUIDLAB_CUDA_GRAPHS=0: no CUDA graphs"
        );
        assert_eq!(
            GraphMode::new("frames", true).kernels_note("PTX", false),
            "PTX"
        );
    }
}
