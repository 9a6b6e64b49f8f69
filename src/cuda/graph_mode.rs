//! Whether a solver's frames (or steps) run as CUDA graphs ([`super::graph`]) or launch by
//! launch, why, and how many ran each way: the bookkeeping every kind's graphs share, with the
//! line `bench` and `doctor` print ([`GraphMode::summary`]).

use super::graph::{GraphFailure, GraphRun};
use super::{GRAPHS_VARIABLE, SYNC_CHECK_VARIABLE};
use std::fmt::Display;

/// Why a frame runs launch by launch: graphs off, a capture failed before, stage timing on (its
/// events sit between the stages), `FLUIDLAB_CUDA_SYNC_CHECK` (a synchronisation after each
/// launch), or a rule of the kind's own that needs the host inside the frame (its name).
#[derive(Clone, Copy, Debug, PartialEq)]
enum LaunchesBecause {
    GraphsOff,
    CaptureRefused,
    StageTiming,
    SyncCheck,
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
    /// Graphs allowed or not ([`super::graphs_requested`]); `unit` names what runs ("frames").
    pub fn new(unit: &'static str, allowed: bool) -> Self {
        Self {
            unit,
            allowed,
            refused: None,
            last: None,
            launched: 0,
        }
    }

    /// Whether this frame must run launch by launch, for the first reason that holds (in
    /// `LaunchesBecause`'s order; `rule`: the kind's own); counted, the reason kept.
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
        self.launched += u64::from(self.last.is_some());
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

    type Ran = Result<(u8, GraphRun), GraphFailure<String>>;

    #[test]
    fn the_summary_counts_each_way_and_says_why_the_last_frame_launched() {
        let mut mode = GraphMode::new("frames", true);
        assert!(!mode.launches(false, false, None));
        let counts = "frames: 1 captured as CUDA graphs, 4 replayed";
        assert_eq!(
            mode.summary((1, 4)),
            format!("{counts}, 0 launch by launch")
        );
        let rule = Some("the density-error rule");
        for (timing, sync_check, why) in [
            (true, true, "stage timing on"),
            (false, true, "FLUIDLAB_CUDA_SYNC_CHECK=1"),
            (false, false, "the density-error rule"),
        ] {
            assert!(mode.launches(timing, sync_check, rule));
            assert!(
                mode.summary((1, 4)).ends_with(&format!(" ({why})")),
                "{why}"
            );
        }
        mode.launched_anyway();
        assert!(!mode.launches(false, false, None));
        assert_eq!(
            mode.summary((1, 4)),
            format!("{counts}, 4 launch by launch")
        );
        assert_eq!(
            mode.ran(Ran::Err(GraphFailure::Capture("no room".into()))),
            Ok(None)
        );
        let refused =
            format!("{counts}, 5 launch by launch (a CUDA graph capture failed: no room)");
        assert_eq!(mode.summary((1, 4)), refused);
        // Given up for good, before stage timing or the kind's rule.
        assert!(mode.launches(true, false, rule));
        assert_eq!(mode.counts((1, 4)), (1, 4, 6));
        assert_eq!(
            mode.summary((1, 4)),
            format!("{counts}, 6 launch by launch (a CUDA graph capture failed: no room)")
        );
        let mut off = GraphMode::new("steps", false);
        assert!(off.launches(true, true, None));
        let why = "1 launch by launch (FLUIDLAB_CUDA_GRAPHS=0)";
        assert!(
            off.summary((0, 0)).ends_with(why),
            "{}",
            off.summary((0, 0))
        );
    }

    #[test]
    fn a_graph_run_or_a_failed_launch_gives_nothing_up() {
        let mut mode = GraphMode::new("steps", true);
        let replayed = Some((7, GraphRun::Replayed));
        assert_eq!(mode.ran(Ran::Ok((7, GraphRun::Replayed))), Ok(replayed));
        assert_eq!(
            mode.ran(Ran::Err(GraphFailure::Launch("gone".into()))),
            Err("gone".into())
        );
        assert!(!mode.launches(false, false, None));
        assert_eq!(mode.counts((0, 1)), (0, 1, 0));
    }

    #[test]
    fn the_kernels_note_says_sync_check_before_graphs_off() {
        let off = GraphMode::new("frames", false);
        let checked = "PTX; FLUIDLAB_CUDA_SYNC_CHECK=1: every launch synchronised and checked";
        assert_eq!(off.kernels_note("PTX", true), checked);
        let no_graphs = "PTX; FLUIDLAB_CUDA_GRAPHS=0: no CUDA graphs";
        assert_eq!(off.kernels_note("PTX", false), no_graphs);
        assert_eq!(
            GraphMode::new("frames", true).kernels_note("PTX", false),
            "PTX"
        );
    }
}
