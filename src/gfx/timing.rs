//! Per-pass render times. Two clocks:
//! - [`PassClock::GpuQueries`]: GL timer queries (`GL_TIME_ELAPSED`, core since 3.3), read back
//!   a few frames later without stalling; the window uses it.
//! - [`PassClock::Finish`]: `glFinish` after each pass and the wall clock; exact on software
//!   rasterisers such as llvmpipe and for `fluidlab render --timings`, at the cost of a stall.

use crate::sims::pbf::render::Pass;
use glow::HasContext;
use std::time::Instant;

/// How pass times are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassClock {
    /// GL timer queries, non-blocking.
    GpuQueries,
    /// `glFinish` + wall clock, blocking.
    Finish,
}

/// Frames of timer queries in flight before results are read.
const QUERY_FRAMES: usize = 3;

/// Measures each [`Pass`] of a frame.
pub struct PassTimer {
    clock: PassClock,
    queries: Vec<[Option<glow::Query>; Pass::ALL.len()]>,
    frame: usize,
    started: Option<(Pass, Instant)>,
    latest: [Option<f64>; Pass::ALL.len()],
}

impl PassTimer {
    /// A timer using `clock`.
    pub fn new(clock: PassClock) -> PassTimer {
        PassTimer {
            clock,
            queries: vec![[None; Pass::ALL.len()]; QUERY_FRAMES],
            frame: 0,
            started: None,
            latest: [None; Pass::ALL.len()],
        }
    }

    /// Starts timing `pass`.
    pub fn begin(&mut self, gl: &glow::Context, pass: Pass) {
        match self.clock {
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            PassClock::GpuQueries => unsafe {
                let slot = &mut self.queries[self.frame][pass as usize];
                if slot.is_none() {
                    *slot = gl.create_query().ok();
                }
                if let Some(query) = *slot {
                    gl.begin_query(glow::TIME_ELAPSED, query);
                }
            },
            PassClock::Finish => {
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe { gl.finish() };
                self.started = Some((pass, Instant::now()));
            }
        }
    }

    /// Stops timing the pass begun last.
    pub fn end(&mut self, gl: &glow::Context) {
        match self.clock {
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            PassClock::GpuQueries => unsafe { gl.end_query(glow::TIME_ELAPSED) },
            PassClock::Finish => {
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe { gl.finish() };
                if let Some((pass, started)) = self.started.take() {
                    self.latest[pass as usize] = Some(started.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// Marks the end of a frame: collects the query results of the oldest frame in flight.
    pub fn end_frame(&mut self, gl: &glow::Context, passes_run: &[Pass]) {
        if self.clock == PassClock::GpuQueries {
            self.frame = (self.frame + 1) % QUERY_FRAMES;
            let oldest = &self.queries[self.frame];
            for pass in Pass::ALL {
                let Some(query) = oldest[pass as usize] else {
                    continue;
                };
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe {
                    if gl.get_query_parameter_u32(query, glow::QUERY_RESULT_AVAILABLE) != 0 {
                        let nanoseconds = gl.get_query_parameter_u32(query, glow::QUERY_RESULT);
                        self.latest[pass as usize] = Some(nanoseconds as f64 * 1e-9);
                    }
                }
            }
        }
        for pass in Pass::ALL {
            if !passes_run.contains(&pass) {
                self.latest[pass as usize] = None;
            }
        }
    }

    /// Seconds of each pass in the latest measured frame (`None`: not run or not measured yet).
    pub fn latest(&self) -> Vec<(Pass, Option<f64>)> {
        Pass::ALL
            .iter()
            .map(|&pass| (pass, self.latest[pass as usize]))
            .collect()
    }

    /// Frees the query objects.
    pub fn delete(&mut self, gl: &glow::Context) {
        for frame in &mut self.queries {
            for query in frame.iter_mut().filter_map(Option::take) {
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe { gl.delete_query(query) };
            }
        }
    }
}
