//! Fixed particles for tests: exact, repeatable images, a read-back that can fail, and the GL
//! probe, which watches how a front end treats OpenGL: it takes hold of the particle buffer the
//! renderer hands it (as the CUDA solver's interop registration does) and records, when told to
//! let go ([`Solver::release_gl`]), whether a GL context was current and the buffer still
//! existed, and whether it was dropped still holding the buffer. Shared by tests/render.rs,
//! tests/render_command.rs, tests/render_light.rs, tests/viewer_gl.rs and
//! tests/viewer_state.rs (`mod gl_probe;`).

// Each test binary uses part of it.
#![allow(dead_code)]

use fluidlab::sims::pbf::backend::Created;
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::{Params, RenderScalar, Snapshot, Solver, SolverError, StageTimes};
use glam::Vec3A;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A 0.3 m block of fluid on the floor in the middle of a 1 m box: 13³ = 2197 particles
/// (tests/render.rs, tests/render_command.rs, tests/render_light.rs).
pub const BLOCK: &str = r#"
    description = "render test block"
    [container]
    min = [0.0, 0.0, 0.0]
    max = [1.0, 1.0, 1.0]
    [[fluid]]
    shape = "box"
    min = [0.35, 0.0, 0.35]
    max = [0.65, 0.3, 0.65]
    [params]
    spacing = 0.025
"#;

/// Probes alive in this process.
pub static LIVE: AtomicUsize = AtomicUsize::new(0);

/// What the probe saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlLog {
    /// The GL buffer the renderer handed to `write_gl_buffer`.
    pub buffer: Option<u32>,
    /// One entry per release that found the buffer held: (a GL context was current, the
    /// buffer still existed).
    pub releases: Vec<(bool, bool)>,
    /// Dropped while still holding the buffer (no release before).
    pub dropped_holding: bool,
    /// Dropped at all.
    pub dropped: bool,
}

impl GlLog {
    /// Panics unless the buffer was taken, let go of exactly once while its context was
    /// current and the buffer existed, and never dropped while held.
    pub fn assert_released_while_gl_was_alive(&self) {
        assert!(
            self.buffer.is_some(),
            "the renderer never handed over its buffer: {self:?}"
        );
        assert!(self.dropped, "the solver was not dropped: {self:?}");
        assert!(
            !self.dropped_holding,
            "the solver was dropped still holding the GL buffer: nobody called release_gl: {self:?}"
        );
        assert_eq!(
            self.releases,
            [(true, true)],
            "release_gl must run once, with the GL context current and the buffer alive: {self:?}"
        );
    }
}

/// Particles that never move (exact, repeatable images), optionally failing to read back (as a
/// CUDA copy can) or probing GL (see the module's comment).
pub struct FixedParticles {
    positions: Vec<[f32; 4]>,
    params: Params,
    /// Reading the state back fails.
    pub unreadable: bool,
    holding: Option<u32>,
    log: Option<Arc<Mutex<GlLog>>>,
}

impl FixedParticles {
    /// The scene's seeded particles, at rest.
    pub fn of(scene: &Scene) -> FixedParticles {
        FixedParticles {
            positions: scene
                .seed()
                .positions
                .iter()
                .map(|p| [p.x, p.y, p.z, 0.0])
                .collect(),
            params: scene.params.clone(),
            unreadable: false,
            holding: None,
            log: None,
        }
    }

    /// `positions` (m), at rest, with `scene`'s parameters.
    pub fn at(scene: &Scene, positions: &[[f32; 3]]) -> FixedParticles {
        let mut particles = FixedParticles::of(scene);
        particles.positions = positions.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect();
        particles
    }

    /// No particles.
    pub fn empty(scene: &Scene) -> FixedParticles {
        let mut particles = FixedParticles::of(scene);
        particles.positions.clear();
        particles
    }

    fn read_back(&self) -> Result<(), SolverError> {
        if self.unreadable {
            return Err(SolverError::Backend(
                "copying particles back failed (test)".into(),
            ));
        }
        Ok(())
    }
}

/// The GL probe: fixed particles that record how GL was treated.
pub struct GlProbe;

impl GlProbe {
    /// The scene's seeded particles, at rest, probing GL, and the log the probe writes.
    pub fn of(scene: &Scene) -> (Created, Arc<Mutex<GlLog>>) {
        let log = Arc::new(Mutex::new(GlLog::default()));
        let mut probe = FixedParticles::of(scene);
        probe.log = Some(Arc::clone(&log));
        LIVE.fetch_add(1, Ordering::SeqCst);
        let created = Created {
            solver: Box::new(probe),
            note: "GL probe".into(),
        };
        (created, log)
    }
}

type GetCurrentContext = unsafe extern "C" fn() -> *mut c_void;
type GetProcAddress = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type IsBuffer = unsafe extern "C" fn(u32) -> u8;

/// (an EGL context is current on this thread, `buffer` is a live GL buffer of it).
fn gl_state(buffer: u32) -> (bool, bool) {
    // SAFETY: EGL 1.4 entry points with their C signatures; glIsBuffer is called only with a
    // context current.
    unsafe {
        let Ok(egl) = libloading::Library::new("libEGL.so.1") else {
            return (false, false);
        };
        let current: libloading::Symbol<GetCurrentContext> = egl
            .get(b"eglGetCurrentContext\0")
            .expect("eglGetCurrentContext");
        if current().is_null() {
            return (false, false);
        }
        let get_proc: libloading::Symbol<GetProcAddress> =
            egl.get(b"eglGetProcAddress\0").expect("eglGetProcAddress");
        let is_buffer = get_proc(c"glIsBuffer".as_ptr());
        assert!(!is_buffer.is_null(), "no glIsBuffer");
        let is_buffer: IsBuffer = std::mem::transmute(is_buffer);
        (true, is_buffer(buffer) != 0)
    }
}

impl Solver for FixedParticles {
    fn backend_name(&self) -> &'static str {
        "fixed"
    }
    fn particle_count(&self) -> usize {
        self.positions.len()
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn set_params(&mut self, params: &Params) -> Result<(), SolverError> {
        self.params = params.clone();
        Ok(())
    }
    fn step(&mut self) -> Result<(), SolverError> {
        Ok(())
    }
    fn steps_taken(&self) -> u64 {
        0
    }
    fn stage_times(&self) -> StageTimes {
        StageTimes::default()
    }
    fn reset_stage_times(&mut self) {}
    fn solve_report(&self) -> fluidlab::sims::pbf::SolveReport {
        Default::default()
    }
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.read_back()?;
        Ok(Snapshot {
            positions: self
                .positions
                .iter()
                .map(|p| Vec3A::new(p[0], p[1], p[2]))
                .collect(),
            ..Snapshot::default()
        })
    }
    /// At rest (speed 0, the bottom of the speed ramp) and at 1.1 ρ₀ (the top of the density
    /// ramp), so the two particle views must colour the same particles differently.
    fn render_positions(
        &self,
        scalar: RenderScalar,
        out: &mut Vec<[f32; 4]>,
    ) -> Result<(), SolverError> {
        self.read_back()?;
        let value = match scalar {
            RenderScalar::Speed => 0.0,
            RenderScalar::Density => 1.1 * self.params.rest_density,
        };
        out.clear();
        out.extend(self.positions.iter().map(|p| [p[0], p[1], p[2], value]));
        Ok(())
    }
    /// The probe takes hold of the buffer, then lets the renderer upload (as when interop is
    /// refused).
    fn write_gl_buffer(&mut self, gl_buffer: u32, _: RenderScalar) -> Result<bool, SolverError> {
        if let Some(log) = &self.log {
            self.holding = Some(gl_buffer);
            log.lock().unwrap().buffer = Some(gl_buffer);
        }
        Ok(false)
    }
    fn release_gl(&mut self) {
        if let (Some(buffer), Some(log)) = (self.holding.take(), &self.log) {
            let state = gl_state(buffer);
            log.lock().unwrap().releases.push(state);
        }
    }
}

impl Drop for FixedParticles {
    fn drop(&mut self) {
        if let Some(log) = &self.log {
            LIVE.fetch_sub(1, Ordering::SeqCst);
            let mut log = log.lock().unwrap();
            log.dropped = true;
            log.dropped_holding = self.holding.is_some();
        }
    }
}
