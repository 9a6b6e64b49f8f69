//! PBF behind the [`Sim`] door: a scene and the solver its backend made.

use super::backend;
use super::cpu::CpuSolver;
use super::foam::{Foam, FoamSettings};
use super::panel;
use super::render::{Output, RenderSettings, Renderer, View};
use super::scene::Scene;
use super::setup::Setup;
use super::stats::FrameStats;
use super::{Aabb, Backend, InitialState, Params, Snapshot, Solver, Stage};
use crate::gfx::camera::Camera;
use crate::gfx::timing::PassClock;
use crate::output::{Column, Table};
use crate::scene::{Invalid, SceneError, Source};
use crate::sims::{stats_row, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{anyhow, Context, Result};
use serde_json::value::RawValue;
use std::any::Any;
use std::rc::Rc;
use std::time::Instant;
use winit::keyboard::KeyCode;

/// The stage names of [`Stage::ALL`], in order, then the `foam` stage's (run by [`PbfSim`]
/// after the solver's step, [`super::foam`]).
const STAGES: [&str; Stage::ALL.len() + 1] = {
    let mut names = ["foam"; Stage::ALL.len() + 1];
    let mut k = 0;
    while k < Stage::ALL.len() {
        names[k] = Stage::ALL[k].name();
        k += 1;
    }
    names
};

/// How [`PbfSim`] makes a solver for a scene: backend asked for, CUDA device
/// ([`backend::create_on`] unless a test says otherwise).
pub type SolverFactory = fn(&Scene, Backend, usize) -> Result<backend::Created>;

/// A change to a running PBF simulation from its panel, a key or a test.
#[derive(Clone, Debug, PartialEq)]
pub enum PbfEdit {
    /// New live parameters; they reach the solver before its next step.
    LiveParams(Params),
    /// New render settings.
    Render(RenderSettings),
    /// New set-up for the next restart.
    Setup(Setup),
    /// New `foam` stage settings, from the next step on.
    Foam(FoamSettings),
}

/// A PBF scene running on a CPU or CUDA solver, with what the viewer edits: the set-up of the
/// next restart, live parameters and render settings.
pub struct PbfSim {
    /// The scene as loaded (preset or file): the base restarts build on.
    pub loaded: Scene,
    /// The scene running now.
    pub scene: Scene,
    /// What the next restart builds.
    pub setup: Setup,
    /// The solver of the running scene.
    pub solver: Box<dyn Solver>,
    /// Which backend runs it and why.
    pub note: String,
    /// Live parameters as edited; sent to the solver before its next step.
    pub live_params: Params,
    /// Render settings.
    pub render: RenderSettings,
    /// The `foam` stage's settings (the scene's `[foam]`, then the panel's).
    pub foam: FoamSettings,
    /// The diffuse particles.
    pub diffuse: Foam,
    foam_seconds: f64,
    foam_records: Vec<[f32; 4]>,
    params_pending: bool,
    backend: Backend,
    device: usize,
    factory: SolverFactory,
    renderer: Option<Renderer>,
    scene_changed: bool,
}

impl PbfSim {
    /// Parses `source`, rescales it when `options.elements` asks, and creates the solver.
    pub fn open(source: &Source, options: &OpenOptions) -> Result<PbfSim> {
        let mut scene = Scene::from_source(source)?;
        if let Some(particles) = options.elements {
            scene = scene
                .with_particle_target(particles)
                .map_err(|e| anyhow!("scene {}: {}: {}", scene.name, e.key, e.message))?;
        }
        let created = backend::create_on(&scene, options.backend, options.device).map_err(
            // A memory check's refusal of a scene file at its key's line (not when
            // --particles set the size: its message counts the particles).
            |error| match error.downcast::<SceneError>() {
                Ok(refusal) if options.elements.is_none() => {
                    let key = refusal.key.unwrap_or_default();
                    let invalid = Invalid::new(key, refusal.message);
                    source.error_after_parse(invalid, false).into()
                }
                Ok(refusal) => refusal.into(),
                Err(error) => error,
            },
        )?;
        Ok(PbfSim::with_solver(
            scene,
            options.backend,
            options.device,
            created,
        ))
    }

    /// Runs `scene` with a solver already made for it (`backend` and `device` are what
    /// restarts use).
    pub fn with_solver(
        scene: Scene,
        backend: Backend,
        device: usize,
        created: backend::Created,
    ) -> PbfSim {
        PbfSim {
            setup: Setup::of(&scene),
            foam: scene.foam.clone(),
            live_params: scene.params.clone(),
            loaded: scene.clone(),
            scene,
            solver: created.solver,
            note: created.note,
            render: RenderSettings::default(),
            diffuse: Foam::default(),
            foam_seconds: 0.0,
            foam_records: Vec::new(),
            params_pending: false,
            backend,
            device,
            factory: backend::create_on,
            renderer: None,
            scene_changed: true,
        }
    }

    /// Makes the solvers of later restarts with `factory`.
    pub fn set_solver_factory(&mut self, factory: SolverFactory) {
        self.factory = factory;
    }

    /// Applies one edit. A failure (a parameter that cannot change while running) leaves
    /// everything as it was and is returned.
    pub fn apply(&mut self, edit: PbfEdit) -> Result<()> {
        match edit {
            PbfEdit::LiveParams(params) => {
                self.solver
                    .params()
                    .check_live_edit(&params)
                    .map_err(anyhow::Error::msg)?;
                self.live_params = params;
                self.params_pending = true;
            }
            PbfEdit::Render(settings) => self.render = settings,
            PbfEdit::Setup(setup) => self.setup = setup,
            PbfEdit::Foam(foam) => {
                foam.check()
                    .map_err(|(key, message)| anyhow!("{key}: {message}"))?;
                self.foam = foam;
            }
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
        let created = match (self.factory)(&scene, self.backend, self.device) {
            Ok(created) => created,
            Err(error) => {
                let again = (self.factory)(&self.scene, self.backend, self.device)?;
                self.solver = again.solver;
                self.note = again.note;
                self.scene_changed = true;
                return Err(error);
            }
        };
        self.solver = created.solver;
        self.note = created.note;
        self.live_params = scene.params.clone();
        self.params_pending = false;
        self.scene = scene;
        self.scene_changed = true;
        self.diffuse.clear();
        Ok(())
    }
}

impl PbfSim {
    /// The `foam` stage after a step when it is on; off, the diffuse particles go.
    fn run_foam(&mut self) -> Result<()> {
        if !self.foam.enabled {
            self.diffuse.clear();
            return self.solver.clear_foam().context("the foam stage");
        }
        let start = Instant::now();
        let dt = self.solver.params().dt;
        self.solver
            .foam(&mut self.diffuse, &self.foam, dt, &self.scene.world())
            .context("the foam stage")?;
        self.foam_seconds += start.elapsed().as_secs_f64();
        Ok(())
    }
}

impl Sim for PbfSim {
    fn kind(&self) -> Kind {
        Kind::Pbf
    }

    fn scene_name(&self) -> &str {
        &self.scene.name
    }

    fn backend(&self) -> &str {
        &self.note
    }

    fn cuda_graphs(&self) -> Option<String> {
        self.solver.cuda_graphs()
    }

    fn dt(&self) -> f64 {
        f64::from(self.solver.params().dt)
    }

    fn elements(&self) -> u64 {
        self.solver.particle_count() as u64
    }

    fn element_unit(&self) -> &'static str {
        "particles"
    }

    fn scheme(&self) -> String {
        let params = self.solver.params();
        format!("≥ {} substeps × {}", params.substeps, rule_in_words(params))
    }

    /// Sends pending live parameters to the solver, then steps it.
    fn step(&mut self) -> Result<()> {
        if self.params_pending {
            self.solver
                .set_params(&self.live_params)
                .context("applying the edited parameters")?;
            self.params_pending = false;
        }
        self.solver.step().context("simulation step")?;
        self.run_foam()
    }

    fn steps_taken(&self) -> u64 {
        self.solver.steps_taken()
    }

    fn stages(&self) -> &'static [&'static str] {
        &STAGES
    }

    fn stage_seconds(&self) -> Vec<f64> {
        let times = self.solver.stage_times();
        let mut seconds: Vec<f64> = Stage::ALL.iter().map(|&stage| times.get(stage)).collect();
        seconds.push(self.foam_seconds);
        seconds
    }

    fn reset_stage_times(&mut self) {
        self.solver.reset_stage_times();
        self.foam_seconds = 0.0;
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        self.solver.set_stage_timing(enabled);
    }

    fn frame(&self) -> Result<Box<dyn Frame>> {
        Ok(Box::new(ParticleFrame(self.solver.snapshot()?)))
    }

    fn solve_summary(&self) -> SolveSummary {
        let report = self.solver.solve_report();
        SolveSummary {
            iterations: f64::from(report.iterations),
            rule: rule_in_words(self.solver.params()),
            figures: vec![("compression", f64::from(report.compression))],
        }
    }

    fn bounds(&self) -> Aabb {
        self.scene.container
    }

    fn restart(&mut self) -> Result<()> {
        let scene = self.setup.build(&self.loaded)?;
        self.start(scene)
    }

    fn use_cuda_device(&mut self, device: usize) -> Result<()> {
        if device == self.device {
            return Ok(());
        }
        self.device = device;
        if self.solver.backend_name() == "cuda" {
            self.start(self.scene.clone())?;
        }
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        panel::sections(ui, self)
    }

    fn status(&mut self) -> Result<Vec<String>> {
        let transfer = match self.renderer.as_ref().and_then(Renderer::interop) {
            Some(true) => "CUDA-GL interop",
            Some(false) => "host upload",
            None => "-",
        };
        let mut lines = vec![format!("particles reach GL by {transfer}")];
        if self.foam.enabled {
            let [spray, foam, bubbles] = self.solver.foam_counts(&self.diffuse);
            lines.push(format!(
                "foam: {spray} spray, {foam} foam, {bubbles} bubbles (cap {})",
                self.foam.max_count
            ));
        }
        lines.extend(self.solver.frame_stats()?.lines());
        Ok(lines)
    }

    fn key(&mut self, key: KeyCode) -> bool {
        match panel::render_for_key(key, &self.render) {
            Some(settings) => {
                self.render = settings;
                true
            }
            None => false,
        }
    }

    fn key_help(&self) -> &'static [(&'static str, &'static str)] {
        panel::KEYS
    }

    fn views(&self) -> &'static [&'static str] {
        &VIEWS
    }

    fn view(&self) -> usize {
        View::ALL
            .iter()
            .position(|v| *v == self.render.view)
            .unwrap_or(0)
    }

    fn set_view(&mut self, view: usize) {
        if let Some(&view) = View::ALL.get(view) {
            self.render.view = view;
        }
    }

    fn attach_gl(&mut self, gl: Rc<glow::Context>, clock: PassClock) -> Result<()> {
        self.renderer = Some(Renderer::new(gl, &self.scene, clock)?);
        self.scene_changed = false;
        Ok(())
    }

    fn draw(&mut self, camera: &Camera, output: Output) -> Result<()> {
        let renderer = self
            .renderer
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        if self.scene_changed {
            renderer.set_scene(&self.scene)?;
            self.scene_changed = false;
        }
        renderer.update_particles(self.solver.as_mut(), &self.render)?;
        if self.foam.enabled {
            renderer.update_foam_from(
                self.solver.as_mut(),
                &self.diffuse,
                self.foam.max_count as usize,
                &mut self.foam_records,
            )?;
        } else {
            renderer.update_foam(&[])?;
        }
        renderer.draw(camera, &self.render, output)
    }

    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        self.renderer
            .as_ref()
            .map_or_else(Vec::new, Renderer::pass_times)
    }

    /// The solver lets go of the particle buffer first, then the renderer's GL objects go,
    /// both while the context is current.
    fn release_gl(&mut self) {
        self.solver.release_gl();
        self.renderer = None;
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The view names of [`View::ALL`], in order.
const VIEWS: [&str; View::ALL.len()] = {
    let mut names = [""; View::ALL.len()];
    let mut k = 0;
    while k < names.len() {
        names[k] = View::ALL[k].name();
        k += 1;
    }
    names
};

/// "4 iterations" or "until compression ≤ 0.001 (2–100 iterations)".
fn rule_in_words(params: &Params) -> String {
    match params.iteration_rule() {
        (_, most, None) => format!("{most} iterations"),
        (fewest, most, Some(tolerance)) => {
            format!("until compression ≤ {tolerance} ({fewest}–{most} iterations)")
        }
    }
}

/// A particle snapshot as a [`Frame`].
pub struct ParticleFrame(pub Snapshot);

impl Frame for ParticleFrame {
    /// `id,x,y,z,vx,vy,vz,density`, one row per particle in id order.
    fn table(&self) -> Table {
        let s = &self.0;
        let component = |values: &[glam::Vec3A], axis: usize| {
            Column::F32(values.iter().map(|v| v[axis]).collect())
        };
        let mut table = Table::default();
        table
            .push("id", Column::U32((0..s.positions.len() as u32).collect()))
            .push("x", component(&s.positions, 0))
            .push("y", component(&s.positions, 1))
            .push("z", component(&s.positions, 2))
            .push("vx", component(&s.velocities, 0))
            .push("vy", component(&s.velocities, 1))
            .push("vz", component(&s.velocities, 2))
            .push("density", Column::F32(s.densities.clone()));
        table
    }

    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue> {
        stats_row(&FrameStats::measure(&self.0, step, time, step_ms))
    }

    fn summary(&self) -> Vec<String> {
        FrameStats::measure(&self.0, 0, 0.0, 0.0).lines()
    }
}
