//! The viewer's state machine, independent of any window and of the simulation kind: the
//! running simulation, run control, the camera and what the panels show. Front ends (and tests)
//! feed it [`Edit`]s and call [`AppState::advance`] once per frame; the kind's own edits go
//! through its panel ([`Sim::panel`]) or its typed API.

use crate::gfx::camera::Camera;
use crate::scene::Source;
use crate::sims::{self, Backend, OpenOptions, Sim};
use crate::viewer::pointer::Pointer;
use anyhow::Result;
use winit::keyboard::KeyCode;

/// Continuous running, or one frame per step request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// A frame of simulation per displayed frame (unless paused).
    Continuous,
    /// A frame of simulation only when asked ([`Edit::StepOnce`]).
    StepByStep,
}

/// A change requested by the UI, a key or a test.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// Switch run mode.
    RunMode(RunMode),
    /// Pause or resume continuous running.
    TogglePause,
    /// Advance one frame (step mode, or while paused).
    StepOnce,
    /// Rebuild the scene from the kind's set-up and start again.
    Restart,
    /// Load a preset (of any kind) or a scene file and start it.
    LoadScene(String),
    /// Back to the default view of the scene.
    ResetCamera,
    /// Show or hide the key help.
    ToggleHelp,
    /// Show or hide the panels.
    ToggleUi,
}

/// Everything the viewer knows apart from GL and the window.
pub struct AppState {
    /// The running simulation.
    pub sim: Box<dyn Sim>,
    /// The preset name or path it was loaded from (a failed load starts it again).
    pub source: String,
    /// Backend asked for.
    pub backend: Backend,
    /// The CUDA device simulations run on (the GPU of the viewer's GL context).
    pub cuda_device: usize,
    /// Run mode.
    pub run_mode: RunMode,
    /// Paused (continuous mode).
    pub paused: bool,
    steps_requested: u32,
    /// The camera.
    pub camera: Camera,
    /// The mouse: buttons held, the cursor, whose drag is under way.
    pub pointer: Pointer,
    /// Help overlay shown.
    pub show_help: bool,
    /// Panels shown.
    pub show_ui: bool,
    /// The last error or notice for the user.
    pub message: Option<String>,
    /// Set when a new simulation replaced the old one; the front end attaches it to GL and
    /// clears the flag.
    pub sim_replaced: bool,
    /// The statistics window shows the stage timings: the simulation times its stages (on
    /// CUDA, events between them) only then; without them PBF's frames run as CUDA graphs.
    pub stage_timing: bool,
}

/// The viewer's default camera for `sim`: its box framed in the 1280×720 window beside the
/// `fluidlab` panel (the part of the window right of [`crate::viewer::panel::PANEL_RIGHT`]).
pub fn framing(sim: &dyn Sim) -> Camera {
    let (width, height) = crate::viewer::panel::WINDOW_SIZE;
    let left = 2.0 * crate::viewer::panel::PANEL_RIGHT / width - 1.0;
    Camera::framing_in(
        &sim.bounds(),
        sim.orientation(),
        width / height,
        [left, 1.0],
    )
}

impl AppState {
    /// Opens `scene` (preset name or path, any kind) on `backend`, on the default CUDA device
    /// until the front end says which GPU draws ([`AppState::use_cuda_device`]).
    pub fn open(scene: &str, backend: Backend) -> Result<AppState> {
        let options = OpenOptions {
            backend,
            drawn: true,
            ..OpenOptions::default()
        };
        let sim = sims::open(&Source::load(scene)?, &options)?;
        Ok(AppState::with_sim(sim, scene, backend))
    }

    /// Runs `sim`, loaded from `source` (`backend` is what later loads use).
    pub fn with_sim(sim: Box<dyn Sim>, source: &str, backend: Backend) -> AppState {
        AppState {
            camera: framing(sim.as_ref()),
            pointer: Pointer::default(),
            sim,
            source: source.to_string(),
            backend,
            cuda_device: crate::cuda::DEFAULT_DEVICE,
            run_mode: RunMode::Continuous,
            paused: false,
            steps_requested: 0,
            show_help: false,
            show_ui: true,
            message: None,
            sim_replaced: true,
            stage_timing: false,
        }
    }

    /// Applies one edit. Failures (a scene that does not load, a restart that cannot start)
    /// leave a running simulation and are returned; front ends show them in
    /// [`AppState::message`].
    pub fn apply(&mut self, edit: Edit) -> Result<()> {
        match edit {
            Edit::RunMode(mode) => {
                self.run_mode = mode;
                self.steps_requested = 0;
            }
            Edit::TogglePause => self.paused = !self.paused,
            Edit::StepOnce => self.steps_requested += 1,
            Edit::Restart => self.restart()?,
            Edit::LoadScene(name) => self.load(&name)?,
            Edit::ResetCamera => self.camera = framing(self.sim.as_ref()),
            Edit::ToggleHelp => self.show_help = !self.show_help,
            Edit::ToggleUi => self.show_ui = !self.show_ui,
        }
        Ok(())
    }

    /// Applies an edit and records a failure in [`AppState::message`] instead of returning it.
    pub fn apply_or_report(&mut self, edit: Edit) {
        if let Err(error) = self.apply(edit) {
            self.message = Some(format!("{error:#}"));
        }
    }

    fn restart(&mut self) -> Result<()> {
        let bounds = self.sim.bounds();
        self.steps_requested = 0;
        let result = self.sim.restart();
        if self.sim.bounds() != bounds {
            self.camera = framing(self.sim.as_ref());
        }
        if result.is_ok() {
            self.message = None;
        }
        result
    }

    /// Replaces the simulation with `name`'s. The running one goes first (it lets go of GL and
    /// frees its memory, so the new one's memory check does not count it); when the new one
    /// cannot start, the old scene starts again from its beginning and the error is returned.
    fn load(&mut self, name: &str) -> Result<()> {
        // Parse before letting anything go: a typo keeps the running simulation as it is.
        let source = Source::load(name)?;
        sims::describe(&source)?;
        let options = OpenOptions {
            backend: self.backend,
            device: self.cuda_device,
            elements: None,
            drawn: true,
        };
        self.sim.release_gl();
        let opened = sims::open(&source, &options);
        let (sim, result) = match opened {
            Ok(sim) => {
                self.source = name.to_string();
                (sim, Ok(()))
            }
            Err(error) => {
                let again = sims::open(&Source::load(&self.source)?, &options)?;
                (again, Err(error))
            }
        };
        self.sim = sim;
        self.forget_pointer();
        self.sim_replaced = true;
        self.steps_requested = 0;
        self.camera = framing(self.sim.as_ref());
        if result.is_ok() {
            self.message = None;
        }
        result
    }

    /// Hands `key` to the running kind ([`Sim::key`]); when that changed the scene's box (a
    /// kind switching scenes, as particles' F1–F3 do), the camera frames the new one. Returns
    /// whether the kind used the key.
    pub fn key(&mut self, key: KeyCode) -> bool {
        let bounds = self.sim.bounds();
        let used = self.sim.key(key);
        if self.sim.bounds() != bounds {
            self.camera = framing(self.sim.as_ref());
        }
        used
    }

    /// Simulates on CUDA device `device` from now on (the viewer passes the GPU of its GL
    /// context once it has one).
    pub fn use_cuda_device(&mut self, device: usize) -> Result<()> {
        self.cuda_device = device;
        self.sim.use_cuda_device(device)
    }

    /// Stops running after a failed step: pauses, drops pending step requests and shows why.
    pub fn pause_after(&mut self, error: &anyhow::Error) {
        self.paused = true;
        self.steps_requested = 0;
        self.message = Some(format!("{error:#} (paused)"));
    }

    /// Whether the next [`AppState::advance`] will step the solver.
    fn will_step(&self) -> bool {
        match self.run_mode {
            RunMode::Continuous => !self.paused || self.steps_requested > 0,
            RunMode::StepByStep => self.steps_requested > 0,
        }
    }

    /// One displayed frame: steps the simulation once when the run mode says so (the kind
    /// applies pending edits first). Returns whether it stepped.
    pub fn advance(&mut self) -> Result<bool> {
        if !self.will_step() {
            return Ok(false);
        }
        self.steps_requested = self.steps_requested.saturating_sub(1);
        // Every step: a restart or a new scene makes a new solver, with its own default.
        self.sim.set_stage_timing(self.stage_timing);
        self.sim.step()?;
        Ok(true)
    }
}
