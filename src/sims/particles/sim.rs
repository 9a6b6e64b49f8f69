//! Particles behind the [`Sim`] door: the fountain or a spring-mass body, stepped stage by
//! stage and timed, read back as tables and statistics, drawn by `render/`; the grabber, the
//! F1–F3 scene keys, **P** and **T**. On CUDA the stages run on the GPU (`solver.rs`) and the
//! fountain is drawn from its arrays shared with GL.

use super::body::Body;
use super::dynamics::{self, Air, Surroundings};
use super::fountain::Fountain;
use super::frame::{NonFinite, ParticlesFrame};
use super::grab::Grabber;
use super::render::{self, RenderSettings, Renderer};
use super::scene::{ParticlesScene, Which};
use super::setup::{bounds_of, build, rescale};
use super::solver::Device;
use super::{self_collide, sort, volume, BODY_STAGES, FOUNTAIN_STAGES};
use crate::gfx::camera::{Camera, Orientation};
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::scene::{Aabb, Source};
use crate::sims::{Backend, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{anyhow, bail, Result};
use glam::Vec3;
use std::any::Any;
use std::rc::Rc;
use std::time::Instant;
use winit::keyboard::KeyCode;

/// What runs.
pub enum State {
    /// The fountain.
    Fountain(Fountain),
    /// A cloth or a jelly.
    Body(Body),
}

/// Seconds per stage, summed since the last reset.
pub(super) struct Stopwatch {
    pub(super) seconds: Vec<f64>,
    pub(super) enabled: bool,
}

impl Stopwatch {
    /// Runs `stage` (an index into the kind's stage list), adding its time.
    fn time<T>(&mut self, stage: usize, run: impl FnOnce() -> T) -> T {
        if !self.enabled {
            return run();
        }
        let start = Instant::now();
        let result = run();
        self.seconds[stage] += start.elapsed().as_secs_f64();
        result
    }
}

/// A particles scene running on the CPU.
pub struct ParticlesSim {
    /// The scene: its constants are read every step; edits of the ones built into the state
    /// (spring stiffness, masses, pins, the basin's grid, the body's shape) are applied before
    /// the next step ([`ParticlesSim::sync`]).
    pub scene: ParticlesScene,
    /// The state.
    pub state: State,
    /// The fountain's particles in drawing order (back to front), from the last step's `sort`.
    pub order: Vec<u32>,
    /// The grabber (cloth and jelly).
    pub grabber: Grabber,
    /// The scene the state was last built or edited from (`sim_edit.rs`).
    pub(super) applied: ParticlesScene,
    pub(super) note: Option<String>,
    pub(super) time: f64,
    pub(super) steps: u64,
    pub(super) dt_before: f32,
    pub(super) watch: Stopwatch,
    pub(super) camera: Camera,
    /// The CUDA solver, when one runs (`solver.rs`).
    pub(super) cuda: Option<Device>,
    /// Which backend runs and why.
    pub(super) backend_note: String,
    /// What the picture shows (the panel's rendering section, `--view`, **P** and **T**).
    pub render: RenderSettings,
    renderer: Option<Renderer>,
}

impl ParticlesSim {
    /// Parses `source` and sets the scene up. `options.elements`: about that many particles
    /// alive (rate × their mean life), or nodes; a body gets the substeps it needs to stay stable.
    pub fn open(source: &Source, options: &OpenOptions) -> Result<ParticlesSim> {
        let mut scene = ParticlesScene::from_source(source)?;
        if let Some(elements) = options.elements {
            rescale(&mut scene, elements)
                .map_err(|e| anyhow!("scene {}: {}: {}", scene.name, e.key, e.message))?;
        }
        let mut sim = ParticlesSim::with_scene(scene);
        sim.choose_backend(options.backend, options.device)?;
        if sim.cuda.is_none() {
            super::memory::check_host(
                source,
                &sim.scene,
                options.drawn,
                options.elements.is_some(),
                crate::host::available_memory(),
            )?;
        }
        Ok(sim)
    }

    /// A simulation of a validated `scene`, from its start.
    pub fn with_scene(scene: ParticlesScene) -> ParticlesSim {
        let stages = match scene.which {
            Which::Fountain => FOUNTAIN_STAGES.len(),
            _ => BODY_STAGES.len(),
        };
        let render = RenderSettings::of(&scene);
        ParticlesSim {
            state: build(&scene),
            camera: Camera::oriented_framing(&bounds_of(&scene), render::orientation(scene.which)),
            dt_before: scene.dt / scene.body.substeps as f32,
            applied: scene.clone(),
            scene,
            order: Vec::new(),
            grabber: Grabber::default(),
            note: None,
            time: 0.0,
            steps: 0,
            watch: Stopwatch {
                seconds: vec![0.0; stages],
                enabled: true,
            },
            render,
            renderer: None,
            cuda: None,
            backend_note: "cpu".into(),
        }
    }

    /// Gravity, wind, the ground and the sphere, from the scene.
    pub fn surroundings(&self) -> Surroundings {
        let w = &self.scene.world;
        Surroundings {
            air: self.air(),
            wind_drag: w.wind_drag,
            wind_relative: w.wind_relative,
            ground: w.ground,
            sphere: (w.sphere_radius > 0.0).then(|| (Vec3::from(w.sphere_center), w.sphere_radius)),
            friction: w.friction,
        }
    }

    /// Gravity and the wind, from the scene.
    pub fn air(&self) -> Air {
        Air {
            gravity: Vec3::from(self.scene.world.gravity),
            wind: Vec3::from(self.scene.world.wind),
        }
    }

    /// A notice about the last edit (substeps raised to stay stable), for the panel.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Simulated seconds since the start.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// One frame of the fountain: `emit`, `advance`, `collide`, `basin`, `sort` (back to front
    /// as the camera of the last frame drawn sees them).
    fn step_fountain(&mut self) {
        let (dt, air) = (self.scene.dt, self.air());
        let eye = self.camera.eye();
        let forward = (self.camera.target - eye).normalize_or_zero();
        let (State::Fountain(f), watch) = (&mut self.state, &mut self.watch) else {
            return;
        };
        watch.time(0, || f.emit(dt));
        watch.time(1, || f.advance(dt, &air));
        let drops = watch.time(2, || f.collide(dt));
        watch.time(3, || f.basin(&drops, dt));
        self.order = watch.time(4, || sort::back_to_front(&f.position, eye, forward));
        self.steps += 1;
    }

    /// One frame of a body: `substeps` × (`springs`, `volume`, `wind`, `integrate`,
    /// `collide`, `self_collide` with `self_collision`), all on one of rayon's workers (`rayon::scope`): the caller hands the frame to the pool once,
    /// rather than each stage's parallel loop once (four or five hand-offs a substep, each a
    /// wake-up of a sleeping worker and a wait for it, ~35 µs apiece on this loaded machine).
    fn step_body(&mut self) {
        let surroundings = self.surroundings();
        let b = self.scene.body;
        let dt = self.scene.dt / b.substeps as f32;
        let explicit = b.integrator.explicit();
        let (State::Body(body), watch) = (&mut self.state, &mut self.watch) else {
            return;
        };
        let dt_before = &mut self.dt_before;
        rayon::scope(|_| {
            for _ in 0..b.substeps {
                watch.time(0, || {
                    dynamics::springs(body, surroundings.air.gravity, explicit);
                });
                watch.time(1, || {
                    if explicit {
                        volume::volume_forces(body);
                    }
                });
                watch.time(2, || dynamics::wind(body, &surroundings));
                watch.time(3, || {
                    if explicit {
                        dynamics::integrate(body, b.integrator, dt, *dt_before, b.damping);
                    } else {
                        dynamics::xpbd(body, dt, b.damping, b.iterations);
                    }
                });
                watch.time(4, || dynamics::collide(body, &surroundings, dt));
                watch.time(5, || {
                    if b.self_collision {
                        self_collide::self_collide(body, b.thickness, surroundings.friction, dt);
                    }
                });
                *dt_before = dt;
            }
        });
        self.steps += u64::from(b.substeps);
    }

    /// The camera the fountain's `sort` and the grabber see through (the last frame drawn's).
    pub fn set_camera(&mut self, camera: Camera) {
        self.camera = camera;
    }

    /// Where the wind arrow stands now ([`super::grab::arrow_base`]): over a body's box as it
    /// is, from the GPU's end of frame reduction while the GPU holds the newer state.
    pub fn arrow_base(&self) -> Vec3 {
        let bounds = match &self.state {
            State::Fountain(_) => None,
            State::Body(body) => match self.cuda.as_ref().filter(|d| d.device_newer) {
                Some(device) => device.solver.totals.bounds,
                None => body.bounds(),
            },
        };
        super::grab::arrow_base(&self.scene, bounds)
    }

    /// The renderer, once attached to GL.
    pub fn renderer(&self) -> Option<&Renderer> {
        self.renderer.as_ref()
    }
}

impl Sim for ParticlesSim {
    fn kind(&self) -> Kind {
        Kind::Particles
    }

    fn scene_name(&self) -> &str {
        &self.scene.name
    }

    fn backend(&self) -> &str {
        &self.backend_note
    }

    fn cuda_graphs(&self) -> Option<String> {
        self.cuda.as_ref().map(|d| d.solver.graph_summary())
    }

    fn dt(&self) -> f64 {
        f64::from(self.scene.dt)
    }

    fn elements(&self) -> u64 {
        match &self.state {
            State::Fountain(_) => self.alive() as u64,
            State::Body(b) => b.springs.len() as u64,
        }
    }

    fn element_unit(&self) -> &'static str {
        match self.state {
            State::Fountain(_) => "particles",
            State::Body(_) => "springs",
        }
    }

    fn scheme(&self) -> String {
        let b = &self.scene.body;
        match &self.state {
            State::Fountain(f) => format!(
                "{} particles/s living {} s, basin {n}×{n} nodes (wave equation)",
                f.params.rate,
                f.params.lifetime,
                n = f.params.surface_nodes
            ),
            State::Body(body) => format!(
                "{} nodes, {} springs, {} substeps of {}{}",
                body.len(),
                body.springs.len(),
                b.substeps,
                b.integrator.name(),
                if b.integrator.explicit() {
                    String::new()
                } else {
                    format!(" × {} iterations", b.iterations)
                }
            ),
        }
    }

    fn step(&mut self) -> Result<()> {
        self.sync()?;
        self.grow_springs()?;
        let non_finite = if self.cuda.is_some() {
            self.step_device()?
        } else {
            match self.state {
                State::Fountain(_) => self.step_fountain(),
                State::Body(_) => self.step_body(),
            }
            // Counted as the GPU's reductions count (a NaN node too, which the largest
            // |height| passes over; the particles alive).
            NonFinite::of(&self.state)
        };
        self.time += f64::from(self.scene.dt);
        if !non_finite.none() {
            let fountain = matches!(self.state, State::Fountain(_));
            bail!(non_finite.error(self.time, fountain));
        }
        Ok(())
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn stages(&self) -> &'static [&'static str] {
        match self.state {
            State::Fountain(_) => &FOUNTAIN_STAGES,
            State::Body(_) => &BODY_STAGES,
        }
    }

    fn stage_seconds(&self) -> Vec<f64> {
        match &self.cuda {
            Some(device) => device.solver.stage_seconds.clone(),
            None => self.watch.seconds.clone(),
        }
    }

    fn reset_stage_times(&mut self) {
        self.watch.seconds.fill(0.0);
        if let Some(device) = &mut self.cuda {
            device.solver.stage_seconds.fill(0.0);
        }
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        self.watch.enabled = enabled;
    }

    fn frame(&self) -> Result<Box<dyn Frame>> {
        let current = self.current_state()?;
        let state = current.as_ref().unwrap_or(&self.state);
        Ok(Box::new(ParticlesFrame::new(state, &self.scene)))
    }

    /// On CUDA, while the GPU holds the newer state, nothing is read back: the fountain's line
    /// comes from the GPU's count and the frame's basin reduction, a body's energies and strain
    /// from its `body_stats` reduction (`cuda/stats.rs`, 32 bytes back). Otherwise the host's
    /// state is the current one and is measured as the frame's summary.
    fn status(&mut self) -> Result<Vec<String>> {
        if let Some(device) = self.cuda.as_mut().filter(|d| d.device_newer) {
            let solver = &mut device.solver;
            return Ok(vec![match &self.state {
                State::Fountain(f) => {
                    super::frame::fountain_line(solver.count(), f.emitted, solver.totals.figure)
                }
                State::Body(b) => solver
                    .body_figures(
                        b.mass,
                        Vec3::from(self.scene.world.gravity),
                        super::cuda::stats::cells(b),
                    )?
                    .line(),
            }]);
        }
        Ok(self.frame()?.summary())
    }

    fn solve_summary(&self) -> SolveSummary {
        let b = &self.scene.body;
        let xpbd = self.scene.which != Which::Fountain && !b.integrator.explicit();
        SolveSummary {
            iterations: if xpbd { f64::from(b.iterations) } else { 0.0 },
            rule: match self.scene.which {
                Which::Fountain => "one step per frame".into(),
                _ if xpbd => format!("{} Gauss–Seidel iterations", b.iterations),
                _ => format!("{} (explicit)", b.integrator.name()),
            },
            figures: Vec::new(),
        }
    }

    fn bounds(&self) -> Aabb {
        bounds_of(&self.scene)
    }

    fn orientation(&self) -> Orientation {
        render::orientation(self.scene.which)
    }

    fn restart(&mut self) -> Result<()> {
        let result = self.sync();
        self.rebuild();
        result
    }

    /// A CUDA solver moves to the GPU of the window's GL context, so interop can share its
    /// buffers (the state carried over through the host).
    fn use_cuda_device(&mut self, device: usize) -> Result<()> {
        if self.cuda.as_ref().is_some_and(|d| d.ordinal != device) {
            self.pull()?;
            self.choose_backend(Backend::Cuda, device)?;
        }
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        let restart = super::panel_ui(self, ui);
        render::panel(ui, &mut self.render, self.scene.which);
        self.sync()?;
        Ok(restart)
    }

    /// A left drag that starts on the wind arrow's head (the handle at its base with no wind)
    /// sets the wind (the head moves with the pointer on the horizontal plane through the
    /// arrow's base; every scene); one that starts on a cloth or jelly node drags it (the
    /// grabber). Where both are under the pointer, the one nearer the camera is taken.
    fn pointer(&mut self, position: [f32; 2], size: [u32; 2], dragging: bool) -> bool {
        let starting = self.grabber.starting(dragging);
        // The nodes' places where a press lands, to pick and to see whether the arrow is
        // nearer: on CUDA the GPU's positions alone when it has stepped since the host's
        // mirror was read (`None`: the mirror's). Nothing else reads the GPU's state.
        let read = match starting {
            true => self.node_positions(),
            false => Ok(None),
        };
        let read = read.unwrap_or_else(|error| {
            self.note = Some(format!("{error:#}"));
            None
        });
        let base = self.arrow_base();
        let wind = Vec3::from(self.scene.world.wind);
        let body = match &self.state {
            State::Body(body) => Some(body),
            State::Fountain(_) => None,
        };
        let nodes = body
            .filter(|_| starting)
            .map(|b| read.as_deref().unwrap_or(&b.position));
        if let Some(wind) =
            self.grabber
                .pointer_arrow(base, wind, nodes, &self.camera, position, size, dragging)
        {
            self.scene.world.wind = wind.into();
            return true;
        }
        let Some(body) = body else {
            self.grabber.track(dragging);
            return false;
        };
        // A press picks (from `nodes`); a move of a node held or the release changes that
        // node alone, in the host's mirror and on the GPU (a hover or a drag that picked
        // nothing changes nothing).
        let edit =
            self.grabber
                .pointer(nodes, &body.pinned, &self.camera, position, size, dragging);
        if let Some(edit) = edit {
            if let Err(error) = self.edit_node(edit) {
                self.note = Some(format!("{error:#}"));
            }
        }
        self.grabber.held.is_some()
    }

    fn key(&mut self, key: KeyCode) -> bool {
        let which = match key {
            KeyCode::F1 => Which::Fountain,
            KeyCode::F2 => Which::Cloth,
            KeyCode::F3 => Which::Jelly,
            KeyCode::KeyP | KeyCode::KeyT if self.scene.which != Which::Fountain => {
                self.render.toggle(key == KeyCode::KeyP);
                return true;
            }
            _ => return super::panel::key(self, key),
        };
        if let Err(error) = self.switch(which) {
            self.note = Some(format!("{error:#}"));
        }
        true
    }

    fn key_help(&self) -> &'static [(&'static str, &'static str)] {
        super::panel::KEYS
    }

    fn views(&self) -> &'static [&'static str] {
        render::views(self.scene.which)
    }

    fn view(&self) -> usize {
        self.render.view
    }

    fn set_view(&mut self, view: usize) {
        if view < self.views().len() {
            self.render.view = view;
        }
    }

    fn attach_gl(&mut self, gl: Rc<glow::Context>, clock: PassClock) -> Result<()> {
        self.release_gl();
        self.renderer = Some(Renderer::new(gl, clock, &self.scene)?);
        Ok(())
    }

    /// Draws the state; the camera is kept for the next step's back-to-front sort and the
    /// grabber. On CUDA the fountain's particles go to the renderer's GL buffers through
    /// interop and its water mesh and a body's skin and coloured nodes are built by kernels
    /// straight into them (only the basin-nodes view reads the basin's heights back); where
    /// interop is refused the state is read back and drawn from the host.
    fn draw(&mut self, camera: &Camera, output: Output) -> Result<()> {
        self.camera = *camera;
        let renderer = self
            .renderer
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        let mut shared = None;
        match (
            self.cuda.as_mut().filter(|d| d.device_newer),
            &mut self.state,
        ) {
            (Some(device), State::Fountain(f)) => {
                let count = device.solver.count();
                let buffers = renderer.shared_buffers(f, count, &self.render)?;
                if device.solver.write_gl(buffers)? {
                    if buffers.water.is_none() {
                        // The basin's nodes are drawn from the host's heights.
                        device.solver.download_basin(&mut f.surface)?;
                    }
                    shared = Some(count);
                }
            }
            (Some(device), State::Body(body)) => {
                let buffers = renderer.body_buffers(body, &self.render)?;
                if device.solver.write_body_gl(buffers)? {
                    shared = Some(body.len());
                }
            }
            (None, _) => {}
        }
        if shared.is_none() {
            self.pull()?;
        }
        let arrow = self.arrow_base();
        let renderer = self.renderer.as_mut().expect("checked above");
        renderer.draw(
            &self.state,
            &self.order,
            shared,
            &self.scene,
            arrow,
            &self.render,
            camera,
            output,
        )
    }

    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        self.renderer
            .as_ref()
            .map_or_else(Vec::new, Renderer::pass_times)
    }

    fn release_gl(&mut self) {
        if let Some(device) = &mut self.cuda {
            device.solver.release_gl();
        }
        if let Some(renderer) = self.renderer.take() {
            renderer.delete();
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
