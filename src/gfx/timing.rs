//! Per-pass render times. Two clocks:
//! - [`PassClock::GpuQueries`]: GL timer queries (`GL_TIME_ELAPSED`, core since 3.3), read back
//!   a few frames later without stalling; the window uses it.
//! - [`PassClock::Finish`]: `glFinish` after each pass and the wall clock; exact on software
//!   rasterisers such as llvmpipe and for `fluidlab render --timings`, at the cost of a stall.

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

/// One pass's queries and latest time.
struct PassSlot {
    name: &'static str,
    queries: [Option<glow::Query>; QUERY_FRAMES],
    latest: Option<f64>,
    ran_this_frame: bool,
}

/// Measures each pass of a frame, passes known by name (a renderer's pass names are its
/// shaders' and methods'). Passes are listed in the order they first ran.
pub struct PassTimer {
    clock: PassClock,
    passes: Vec<PassSlot>,
    frame: usize,
    started: Option<(usize, Instant)>,
}

impl PassTimer {
    /// A timer using `clock`.
    pub fn new(clock: PassClock) -> PassTimer {
        PassTimer {
            clock,
            passes: Vec::new(),
            frame: 0,
            started: None,
        }
    }

    /// Starts timing the pass `name`.
    pub fn begin(&mut self, gl: &glow::Context, name: &'static str) {
        let index = match self.passes.iter().position(|slot| slot.name == name) {
            Some(index) => index,
            None => {
                self.passes.push(PassSlot {
                    name,
                    queries: [None; QUERY_FRAMES],
                    latest: None,
                    ran_this_frame: false,
                });
                self.passes.len() - 1
            }
        };
        let slot = &mut self.passes[index];
        slot.ran_this_frame = true;
        match self.clock {
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            PassClock::GpuQueries => unsafe {
                let query = &mut slot.queries[self.frame];
                if query.is_none() {
                    *query = gl.create_query().ok();
                }
                if let Some(query) = *query {
                    gl.begin_query(glow::TIME_ELAPSED, query);
                }
            },
            PassClock::Finish => {
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe { gl.finish() };
                self.started = Some((index, Instant::now()));
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
                if let Some((index, started)) = self.started.take() {
                    self.passes[index].latest = Some(started.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// Marks the end of a frame: collects the query results of the oldest frame in flight, and
    /// forgets the times of passes this frame did not run.
    pub fn end_frame(&mut self, gl: &glow::Context) {
        if self.clock == PassClock::GpuQueries {
            self.frame = (self.frame + 1) % QUERY_FRAMES;
            for slot in &mut self.passes {
                let Some(query) = slot.queries[self.frame] else {
                    continue;
                };
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe {
                    if gl.get_query_parameter_u32(query, glow::QUERY_RESULT_AVAILABLE) != 0 {
                        let nanoseconds = gl.get_query_parameter_u32(query, glow::QUERY_RESULT);
                        slot.latest = Some(nanoseconds as f64 * 1e-9);
                    }
                }
            }
        }
        for slot in &mut self.passes {
            if !slot.ran_this_frame {
                slot.latest = None;
            }
            slot.ran_this_frame = false;
        }
    }

    /// Seconds of each pass in the latest measured frame (`None`: not run in the last frame, or
    /// not measured yet), in the order the passes first ran.
    pub fn latest(&self) -> Vec<(&'static str, Option<f64>)> {
        self.passes
            .iter()
            .map(|slot| (slot.name, slot.latest))
            .collect()
    }

    /// Frees the query objects.
    pub fn delete(&mut self, gl: &glow::Context) {
        for slot in &mut self.passes {
            for query in slot.queries.iter_mut().filter_map(Option::take) {
                // SAFETY: GL calls on this thread's current context (front ends make it current
                // before calling the renderer); every object named is this renderer's and alive.
                unsafe { gl.delete_query(query) };
            }
        }
    }
}
