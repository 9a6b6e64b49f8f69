//! CUDA graphs: a frame's fixed sequence of kernel launches captured once into a graph and
//! replayed with one call, so a frame of ~100–200 small launches costs one launch of host time
//! instead of one per kernel (docs/cuda.md "CUDA graphs").
//!
//! A graph holds each launch's parameter values as they were when it was captured: device
//! pointers, launch shapes and by-value constants. So a [`GraphCache`] keeps each graph under a
//! key that must name everything those depend on (the constants' inputs, which buffer each
//! handle pointed to), and replays a graph only for an equal key. What the captured frame did
//! to the host's state (buffer handles swapped, iterations counted) is returned by the
//! recording as an outcome, kept with the graph, and given back at each replay, for the caller
//! to bring its host state to where the recording left it.
//!
//! `FLUIDLAB_CUDA_GRAPHS=0` turns graphs off (every launch queued by itself, as before).

use super::launch::switch_from;
use super::CudaError;
use cudarc::driver::{sys, CudaGraph, CudaStream};
use std::cell::Cell;
use std::sync::Arc;

/// The environment variable that turns CUDA graphs off (`0`) or on (`1`, the default).
pub const GRAPHS_VARIABLE: &str = "FLUIDLAB_CUDA_GRAPHS";

/// Whether a value of [`GRAPHS_VARIABLE`] allows graphs: unset or empty, `1`, `true`, `yes`,
/// `on` do; `0`, `false`, `no`, `off` do not; anything else is an error.
pub fn graphs_from(value: Option<&str>) -> Result<bool, CudaError> {
    switch_from(
        GRAPHS_VARIABLE,
        value,
        true,
        "0 (queue every kernel launch by itself) or 1 (replay each frame's launches as a CUDA graph)",
    )
}

/// Whether this process allows CUDA graphs ([`GRAPHS_VARIABLE`]).
pub fn graphs_requested() -> Result<bool, CudaError> {
    let value = std::env::var(GRAPHS_VARIABLE).ok();
    graphs_from(value.as_deref())
}

thread_local! {
    /// Kernel launches captured so far by the capture under way on this thread, if any.
    static CAPTURED: Cell<Option<u64>> = const { Cell::new(None) };
    /// The launch of a capture on this thread at which a test's panic is armed.
    static PANIC_AT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Counts a launch into the capture under way on this thread; false when there is none (the
/// launch was queued to run).
pub(super) fn count_captured_launch() -> bool {
    let Some(count) = CAPTURED.with(|captured| captured.get()).map(|n| n + 1) else {
        return false;
    };
    CAPTURED.with(|captured| captured.set(Some(count)));
    if PANIC_AT.with(|at| at.get()) == Some(count) {
        PANIC_AT.with(|at| at.set(None));
        panic!("a test's panic at launch {count} of a CUDA graph capture");
    }
    true
}

/// Ends counting launches into the capture under way on this thread: how many it took. A
/// test's armed panic goes with it, fired or not.
fn end_counting() -> u64 {
    PANIC_AT.with(|at| at.set(None));
    CAPTURED.with(|captured| captured.take()).unwrap_or(0)
}

/// Makes the next capture on this thread panic at its `launch`-th kernel launch, as a bug in
/// a solver's recording would: a test hook (what a panic inside a recording leaves), not a
/// setting. A capture that ends with fewer launches disarms it.
#[doc(hidden)]
pub fn panic_in_next_capture(launch: u64) {
    PANIC_AT.with(|at| at.set(Some(launch)));
}

/// One kept graph.
struct Entry<K, O> {
    key: K,
    graph: CudaGraph,
    /// Kernel launches in the graph.
    kernels: u64,
    /// What the recording returned.
    outcome: O,
}

/// Graphs of a solver's frames, kept by key (the most recently used kept when full).
pub struct GraphCache<K, O> {
    entries: Vec<Entry<K, O>>,
    capacity: usize,
    captures: u64,
    replays: u64,
}

/// How a [`GraphCache::run`] went: the graph was captured now, or replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphRun {
    /// The work was captured into a new graph, which then ran.
    Captured,
    /// A kept graph ran.
    Replayed,
}

impl<K: PartialEq, O: Clone> GraphCache<K, O> {
    /// An empty cache that keeps at most `capacity` graphs (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::new(),
            capacity: capacity.max(1),
            captures: 0,
            replays: 0,
        }
    }

    /// Runs on `stream` the work `record` queues there: replays the graph kept under a key
    /// equal to `key`, giving back what `record` returned when it was captured; else captures
    /// what `record` queues (it runs nothing while capturing), keeps the graph under `key`, and
    /// launches it.
    ///
    /// `record` should queue only kernel launches, memsets and device-to-device copies on
    /// `stream`: a synchronisation or a copy to pageable host memory fails the capture (what else
    /// the driver captures, fluidlab's graphs do not hold; the emulated driver refuses it). A
    /// failed capture is [`GraphFailure::Capture`]: the capture was ended and nothing was queued.
    pub fn run<E: From<CudaError>>(
        &mut self,
        stream: &Arc<CudaStream>,
        key: K,
        record: impl FnOnce() -> Result<O, E>,
    ) -> Result<(O, GraphRun), GraphFailure<E>> {
        let launch_failed =
            |e| GraphFailure::Launch(CudaError::driver("launching a CUDA graph")(e).into());
        if let Some(at) = self.entries.iter().position(|entry| entry.key == key) {
            let entry = self.entries.remove(at);
            entry.graph.launch().map_err(launch_failed)?;
            super::module::count_graph_launch(entry.kernels);
            let outcome = entry.outcome.clone();
            self.entries.push(entry);
            self.replays += 1;
            return Ok((outcome, GraphRun::Replayed));
        }
        let (outcome, graph, kernels) = capture(stream, record).map_err(GraphFailure::Capture)?;
        graph.launch().map_err(launch_failed)?;
        super::module::count_graph_launch(kernels);
        if self.entries.len() == self.capacity {
            self.entries.remove(0);
        }
        self.entries.push(Entry {
            key,
            graph,
            kernels,
            outcome: outcome.clone(),
        });
        self.captures += 1;
        Ok((outcome, GraphRun::Captured))
    }

    /// Whether a graph is kept under a key equal to `key`.
    pub fn contains(&self, key: &K) -> bool {
        self.entries.iter().any(|entry| entry.key == *key)
    }

    /// Graphs captured and graphs replayed since the cache was made.
    pub fn counts(&self) -> (u64, u64) {
        (self.captures, self.replays)
    }
}

/// Why [`GraphCache::run`] failed.
#[derive(Debug)]
pub enum GraphFailure<E> {
    /// The capture failed (the work could not be captured, or `record` failed): nothing was
    /// queued, and the same work can run launch by launch.
    Capture(E),
    /// A graph was captured or kept but could not be launched.
    Launch(E),
}

/// Captures what `record` queues on `stream` into an instantiated graph: `record`'s result, the
/// graph and its kernel launches. The capture is ended whatever happens, a panic in `record`
/// included, so the stream is usable afterwards.
fn capture<O, E: From<CudaError>>(
    stream: &Arc<CudaStream>,
    record: impl FnOnce() -> Result<O, E>,
) -> Result<(O, CudaGraph, u64), E> {
    /// Ends the capture (and stops counting launches into it) when dropped, unless taken.
    struct Capturing<'a>(Option<&'a Arc<CudaStream>>);
    impl Capturing<'_> {
        fn end(&mut self) -> (Result<Option<CudaGraph>, cudarc::driver::DriverError>, u64) {
            let kernels = end_counting();
            let stream = self.0.take().expect("ended once");
            (
                stream.end_capture(sys::CUgraphInstantiate_flags(0)),
                kernels,
            )
        }
    }
    impl Drop for Capturing<'_> {
        fn drop(&mut self) {
            if self.0.is_some() {
                let _ = self.end();
            }
        }
    }
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(CudaError::driver("beginning a CUDA graph capture"))?;
    let mut capturing = Capturing(Some(stream));
    CAPTURED.with(|captured| captured.set(Some(0)));
    let recorded = record();
    let (ended, kernels) = capturing.end();
    let outcome = recorded?;
    let graph = ended
        .map_err(CudaError::driver("ending a CUDA graph capture"))?
        .ok_or_else(|| CudaError::Module("a CUDA graph capture recorded no work".into()))?;
    Ok((outcome, graph, kernels))
}

/// Swaps the values behind `slots` (which hold what `current` names) until slot i holds what
/// `target[i]` names. False, with nothing changed, when `target` is not a rearrangement of
/// `current`.
pub fn permute<T, const N: usize>(mut slots: [&mut T; N], current: &[u64], target: &[u64]) -> bool {
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
    fn the_graphs_switch_defaults_on_and_refuses_typos() {
        assert!(graphs_from(None).unwrap());
        assert!(graphs_from(Some("")).unwrap());
        for on in ["1", "on", "TRUE", " yes "] {
            assert!(graphs_from(Some(on)).unwrap(), "{on}");
        }
        for off in ["0", "off", "False", "no"] {
            assert!(!graphs_from(Some(off)).unwrap(), "{off}");
        }
        let error = graphs_from(Some("2")).unwrap_err().to_string();
        assert!(error.contains("FLUIDLAB_CUDA_GRAPHS=2"), "{error}");
    }

    #[test]
    fn a_launch_counts_into_the_capture_under_way_only() {
        assert!(!count_captured_launch());
        CAPTURED.with(|c| c.set(Some(0)));
        assert!(count_captured_launch());
        assert!(count_captured_launch());
        assert_eq!(CAPTURED.with(|c| c.take()), Some(2));
        assert!(!count_captured_launch());
    }

    #[test]
    fn an_armed_panic_fires_once_at_its_launch_of_a_capture() {
        panic_in_next_capture(2);
        assert!(!count_captured_launch(), "no capture under way");
        CAPTURED.with(|c| c.set(Some(0)));
        assert!(count_captured_launch());
        let panic = std::panic::catch_unwind(count_captured_launch).unwrap_err();
        assert_eq!(
            panic.downcast_ref::<String>().map(String::as_str),
            Some("a test's panic at launch 2 of a CUDA graph capture")
        );
        assert!(count_captured_launch());
        assert_eq!(end_counting(), 3);
    }

    #[test]
    fn an_armed_panic_ends_with_the_capture_it_did_not_reach() {
        panic_in_next_capture(2);
        CAPTURED.with(|c| c.set(Some(0)));
        assert!(count_captured_launch());
        assert_eq!(end_counting(), 1);
        CAPTURED.with(|c| c.set(Some(0)));
        for _ in 0..3 {
            assert!(count_captured_launch(), "a later capture must not panic");
        }
        assert_eq!(end_counting(), 3);
    }

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
}
