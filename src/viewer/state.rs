//! The viewer's state machine, independent of any window: the running scene and solver, the
//! set-up for the next restart, live parameters, run control, render settings and the camera.
//! Front ends (and tests) feed it [`Edit`]s and call [`AppState::advance`] once per frame.

use crate::gfx::camera::Camera;
use crate::scene::Shape;
use crate::sims::pbf::backend;
use crate::sims::pbf::cpu::CpuSolver;
use crate::sims::pbf::render::RenderSettings;
use crate::sims::pbf::scene::{FluidBody, Scene};
use crate::sims::pbf::{Aabb, Backend, InitialState, Params, Solver};
use anyhow::{Context, Result};
use glam::Vec3A;

/// Container presets offered before a restart: name and size in metres (the box starts at the
/// origin).
pub const CONTAINERS: &[(&str, [f32; 3])] = &[
    ("tank 1.6 × 1.0 × 0.6", [1.6, 1.0, 0.6]),
    ("cube 1 m", [1.0, 1.0, 1.0]),
    ("tall 0.6 × 1.6 × 0.6", [0.6, 1.6, 0.6]),
    ("wide 2.4 × 0.8 × 1.2", [2.4, 0.8, 1.2]),
];

/// The initial fluid body chosen before a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FluidShape {
    /// The bodies the loaded scene defines.
    FromScene,
    /// A cube.
    Cube,
    /// A sphere.
    Sphere,
    /// An upright cylinder as tall as it is wide.
    Cylinder,
}

impl FluidShape {
    /// Every choice, in menu order.
    pub const ALL: [FluidShape; 4] = [
        FluidShape::FromScene,
        FluidShape::Cube,
        FluidShape::Sphere,
        FluidShape::Cylinder,
    ];

    /// Label in the UI.
    pub fn name(self) -> &'static str {
        match self {
            FluidShape::FromScene => "as in the scene",
            FluidShape::Cube => "cube",
            FluidShape::Sphere => "sphere",
            FluidShape::Cylinder => "cylinder",
        }
    }
}

/// What the next restart builds.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    /// Index into [`CONTAINERS`], or `None` for the loaded scene's container.
    pub container: Option<usize>,
    /// The initial fluid body.
    pub shape: FluidShape,
    /// Centre of the body as a fraction of the container on each axis (0..1); the body is
    /// moved inwards as needed to fit.
    pub position: [f32; 3],
    /// Width of the body (cube edge, sphere and cylinder diameter) as a fraction of the
    /// container's smallest edge.
    pub size: f32,
    /// Fluid parameters the scene starts with (spacing sets the particle count).
    pub params: Params,
}

impl Setup {
    /// The set-up that rebuilds `scene` as it is.
    pub fn of(scene: &Scene) -> Setup {
        Setup {
            container: None,
            shape: FluidShape::FromScene,
            position: [0.5, 0.35, 0.5],
            size: 0.5,
            params: scene.params.clone(),
        }
    }

    /// The scene this set-up describes, built on `base` (its obstacles, and its container and
    /// bodies where the set-up keeps them), validated.
    pub fn build(&self, base: &Scene) -> Result<Scene> {
        let mut scene = base.clone();
        if let Some(index) = self.container {
            let size = CONTAINERS
                .get(index)
                .with_context(|| format!("no container preset {index}"))?
                .1;
            scene.container = Aabb::new([0.0; 3], size);
            // Obstacles of the scene that no longer fit are dropped with the old container.
            let container = scene.container;
            scene.obstacles.retain(|o| {
                let b = o.bounds();
                b.min.cmpge(container.min).all() && b.max.cmple(container.max).all()
            });
        }
        let container = scene.container;
        let extent = container.size();
        let half = 0.5 * self.size.clamp(0.05, 1.0) * extent.min_element();
        let half_extents = Vec3A::splat(half);
        let wanted = container.min + extent * Vec3A::from(self.position);
        let center = wanted.clamp(container.min + half_extents, container.max - half_extents);
        let shape = match self.shape {
            FluidShape::FromScene => None,
            FluidShape::Cube => Some(Shape::Box(Aabb {
                min: center - half_extents,
                max: center + half_extents,
            })),
            FluidShape::Sphere => Some(Shape::Sphere {
                center,
                radius: half,
            }),
            FluidShape::Cylinder => Some(Shape::Cylinder {
                center,
                radius: half,
                height: 2.0 * half,
            }),
        };
        if let Some(shape) = shape {
            scene.fluids = vec![FluidBody {
                shape,
                velocity: Vec3A::ZERO,
            }];
        }
        scene.params = self.params.clone();
        scene.params.calibrate_mass();
        scene
            .validate()
            .map_err(|invalid| anyhow::anyhow!("{}: {}", invalid.key, invalid.message))?;
        Ok(scene)
    }
}

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
    /// New live parameters; they reach the solver before its next step.
    LiveParams(Params),
    /// New render settings.
    Render(RenderSettings),
    /// New set-up for the next restart.
    Setup(Setup),
    /// Switch run mode.
    RunMode(RunMode),
    /// Pause or resume continuous running.
    TogglePause,
    /// Advance one frame (step mode, or while paused).
    StepOnce,
    /// Rebuild the scene from the set-up and start again.
    Restart,
    /// Load a preset or scene file and restart on it.
    LoadScene(String),
    /// Back to the default view of the container.
    ResetCamera,
    /// Show or hide the key help.
    ToggleHelp,
    /// Show or hide the panels.
    ToggleUi,
}

/// How [`AppState`] makes a solver for a scene: backend asked for, CUDA device
/// ([`backend::create_on`] unless a test says otherwise).
pub type SolverFactory = fn(&Scene, Backend, usize) -> Result<backend::Created>;

/// Everything the viewer knows apart from GL and the window.
pub struct AppState {
    /// The scene as loaded (preset or file): the base restarts build on.
    pub loaded: Scene,
    /// The scene running now.
    pub scene: Scene,
    /// What the next restart builds.
    pub setup: Setup,
    /// The solver of the running scene.
    pub solver: Box<dyn Solver>,
    /// Backend asked for.
    pub backend: Backend,
    /// The CUDA device solvers are created on (the GPU of the viewer's GL context).
    pub cuda_device: usize,
    /// Which backend runs and why.
    pub backend_note: String,
    /// Live parameters as edited; sent to the solver before its next step.
    pub live_params: Params,
    params_pending: bool,
    /// Run mode.
    pub run_mode: RunMode,
    /// Paused (continuous mode).
    pub paused: bool,
    steps_requested: u32,
    /// Render settings.
    pub render: RenderSettings,
    /// The camera.
    pub camera: Camera,
    /// Help overlay shown.
    pub show_help: bool,
    /// Panels shown.
    pub show_ui: bool,
    /// The last error or notice for the user.
    pub message: Option<String>,
    /// Set when the scene was rebuilt; the front end clears it after updating the renderer.
    pub scene_changed: bool,
    factory: SolverFactory,
}

impl AppState {
    /// Starts `scene` on `backend` (CUDA device 0).
    pub fn new(scene: Scene, backend: Backend) -> Result<AppState> {
        let created = backend::create(&scene, backend)?;
        Ok(AppState::with_solver(scene, backend, created))
    }

    /// Starts `scene` with a solver already made for it (`backend` is what restarts use).
    pub fn with_solver(scene: Scene, backend: Backend, created: backend::Created) -> AppState {
        AppState {
            setup: Setup::of(&scene),
            live_params: scene.params.clone(),
            params_pending: false,
            camera: Camera::framing(&scene.container),
            loaded: scene.clone(),
            scene,
            solver: created.solver,
            backend,
            cuda_device: 0,
            backend_note: created.note,
            run_mode: RunMode::Continuous,
            paused: false,
            steps_requested: 0,
            render: RenderSettings::default(),
            show_help: false,
            show_ui: true,
            message: None,
            scene_changed: true,
            factory: backend::create_on,
        }
    }

    /// Makes the solvers of later restarts with `factory`.
    pub fn set_solver_factory(&mut self, factory: SolverFactory) {
        self.factory = factory;
    }

    /// Applies one edit. Failures (an invalid parameter, a scene that does not load) leave the
    /// state as it was and are returned; front ends show them in [`AppState::message`].
    pub fn apply(&mut self, edit: Edit) -> Result<()> {
        match edit {
            Edit::LiveParams(params) => {
                self.solver
                    .params()
                    .check_live_edit(&params)
                    .map_err(anyhow::Error::msg)?;
                self.live_params = params;
                self.params_pending = true;
            }
            Edit::Render(settings) => self.render = settings,
            Edit::Setup(setup) => self.setup = setup,
            Edit::RunMode(mode) => {
                self.run_mode = mode;
                self.steps_requested = 0;
            }
            Edit::TogglePause => self.paused = !self.paused,
            Edit::StepOnce => self.steps_requested += 1,
            Edit::Restart => self.restart()?,
            Edit::LoadScene(name) => {
                let loaded = Scene::load(&name)?;
                let setup = Setup::of(&loaded);
                let scene = setup.build(&loaded)?;
                self.start(scene)?;
                self.loaded = loaded;
                self.setup = setup;
                self.camera = Camera::framing(&self.scene.container);
            }
            Edit::ResetCamera => self.camera = Camera::framing(&self.scene.container),
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
        let scene = self.setup.build(&self.loaded)?;
        let container_changed = scene.container != self.scene.container;
        self.start(scene)?;
        if container_changed {
            self.camera = Camera::framing(&self.scene.container);
        }
        Ok(())
    }

    /// Simulates on CUDA device `device` from now on (the viewer passes the GPU of its GL
    /// context once it has one): a CUDA solver on another device restarts the scene there.
    pub fn use_cuda_device(&mut self, device: usize) -> Result<()> {
        if device == self.cuda_device {
            return Ok(());
        }
        self.cuda_device = device;
        if self.solver.backend_name() == "cuda" {
            self.start(self.scene.clone())?;
        }
        Ok(())
    }

    /// Replaces the solver with one for `scene`. The running solver goes first: it lets go of
    /// the GL buffer (the front end's context is current while edits are applied) and frees its
    /// memory, so the new solver's memory check does not count the old one's. If the new one
    /// cannot start, the running scene starts again from its beginning and the error is
    /// returned.
    fn start(&mut self, scene: Scene) -> Result<()> {
        self.solver.release_gl();
        let placeholder = CpuSolver::new(
            scene.world(),
            scene.params.clone(),
            &InitialState::default(),
        )?;
        drop(std::mem::replace(&mut self.solver, Box::new(placeholder)));
        let created = match (self.factory)(&scene, self.backend, self.cuda_device) {
            Ok(created) => created,
            Err(error) => {
                let again = (self.factory)(&self.scene, self.backend, self.cuda_device)?;
                self.solver = again.solver;
                self.backend_note = again.note;
                self.scene_changed = true;
                return Err(error);
            }
        };
        self.solver = created.solver;
        self.backend_note = created.note;
        self.live_params = scene.params.clone();
        self.params_pending = false;
        self.steps_requested = 0;
        self.scene = scene;
        self.scene_changed = true;
        self.message = None;
        Ok(())
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

    /// One displayed frame: sends pending live parameters to the solver, then steps it once
    /// when the run mode says so. Returns whether it stepped.
    pub fn advance(&mut self) -> Result<bool> {
        if self.params_pending {
            self.solver
                .set_params(&self.live_params)
                .context("applying the edited parameters")?;
            self.params_pending = false;
        }
        if !self.will_step() {
            return Ok(false);
        }
        self.steps_requested = self.steps_requested.saturating_sub(1);
        self.solver.step().context("simulation step")?;
        Ok(true)
    }
}
