//! Particles behind the [`Sim`] door: the fountain or a spring-mass body, stepped stage by
//! stage and timed, read back as tables and statistics; the grabber, the F1–F3 scene keys.
//! Drawing is a placeholder (the sky's colour) until the renderer lands.

use super::body::Body;
use super::dynamics::{self, Air, Surroundings};
use super::fountain::Fountain;
use super::frame::ParticlesFrame;
use super::grab::Grabber;
use super::scene::{Orientation, ParticlesScene, Pins, Which};
use super::{sort, BODY_STAGES, FOUNTAIN_STAGES};
use crate::gfx::camera::Camera;
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::scene::{Aabb, Source};
use crate::sims::{Backend, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{anyhow, bail, Context, Result};
use glam::Vec3;
use glow::HasContext;
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
struct Stopwatch {
    seconds: Vec<f64>,
    enabled: bool,
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
    applied: ParticlesScene,
    pub(super) note: Option<String>,
    time: f64,
    steps: u64,
    dt_before: f32,
    watch: Stopwatch,
    camera: Camera,
    gl: Option<Rc<glow::Context>>,
}

impl ParticlesSim {
    /// Parses `source` and sets the scene up. `options.elements`: about that many particles
    /// alive (rate × lifetime), or nodes; a body gets the substeps it needs to stay stable.
    pub fn open(source: &Source, options: &OpenOptions) -> Result<ParticlesSim> {
        let mut scene = ParticlesScene::from_source(source)?;
        if options.backend == Backend::Cuda {
            bail!("the particles kind has no CUDA path yet; use --backend cpu or auto");
        }
        if let Some(elements) = options.elements {
            rescale(&mut scene, elements);
            scene
                .validate()
                .map_err(|e| anyhow!("rescaled scene: {}: {}", e.key, e.message))?;
        }
        Ok(ParticlesSim::with_scene(scene))
    }

    /// A simulation of a validated `scene`, from its start.
    pub fn with_scene(scene: ParticlesScene) -> ParticlesSim {
        let stages = match scene.which {
            Which::Fountain => FOUNTAIN_STAGES.len(),
            _ => BODY_STAGES.len(),
        };
        ParticlesSim {
            state: build(&scene),
            camera: Camera::framing(&bounds_of(&scene)),
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
            gl: None,
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

    /// Applies edits of `scene` (panel, keys, tests) to the state before the next step: an
    /// explicit integrator's substeps are raised to what the springs need to stay stable; an
    /// invalid edit is undone and returned as an error. A changed shape (scene, n, size, start,
    /// orientation) or basin grid starts that part again; stiffness, masses, pins and every
    /// other constant apply to the running state.
    pub fn sync(&mut self) -> Result<()> {
        if self.scene == self.applied {
            return Ok(());
        }
        let body = self.scene.body;
        if self.scene.which != Which::Fountain && body.integrator.explicit() && body.n >= 2 {
            let needed = self.scene.stable_substeps();
            if needed > body.substeps && needed <= 4096 {
                self.note = Some(format!("substeps raised to {needed} to stay stable"));
                self.scene.body.substeps = needed;
            }
        }
        if let Err(invalid) = self.scene.validate() {
            self.scene = self.applied.clone();
            bail!("{}: {}", invalid.key, invalid.message);
        }
        let (new, old) = (&self.scene, &self.applied);
        let (nb, ob) = (new.body, old.body);
        let shape = new.which != old.which
            || nb.n != ob.n
            || nb.size != ob.size
            || nb.start != ob.start
            || nb.orientation != ob.orientation;
        let (nf, of) = (new.fountain, old.fountain);
        let basin = nf.basin != of.basin || nf.surface_nodes != of.surface_nodes;
        if shape {
            self.rebuild();
            return Ok(());
        }
        let node_mass = self.scene.node_mass();
        match &mut self.state {
            State::Fountain(f) => {
                f.params = nf;
                if basin {
                    f.surface = nf.calm_basin();
                }
            }
            State::Body(body) => {
                body.mass = node_mass;
                body.set_stiffness(nb.stiffnesses());
                if nb.pins != ob.pins {
                    pin(body, &self.scene);
                    if let Some(held) = &mut self.grabber.held {
                        held.was_pinned = body.pinned[held.node];
                        body.pinned[held.node] = true;
                    }
                }
            }
        }
        self.applied = self.scene.clone();
        Ok(())
    }

    /// Starts the running scene again from its beginning.
    fn rebuild(&mut self) {
        self.grabber.forget();
        self.state = build(&self.scene);
        self.order.clear();
        self.time = 0.0;
        self.steps = 0;
        self.dt_before = self.scene.dt / self.scene.body.substeps as f32;
        let stages = match self.scene.which {
            Which::Fountain => FOUNTAIN_STAGES.len(),
            _ => BODY_STAGES.len(),
        };
        self.watch.seconds = vec![0.0; stages];
        self.applied = self.scene.clone();
    }

    /// Switches to the preset of scene `which` (F1–F3).
    pub fn switch(&mut self, which: Which) -> Result<()> {
        let source = Source::load(which.name())?;
        self.scene = ParticlesScene::from_source(&source)
            .with_context(|| format!("the {} preset", which.name()))?;
        self.rebuild();
        self.camera = Camera::framing(&bounds_of(&self.scene));
        Ok(())
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

    /// One frame of a body: `substeps` × (`springs`, `wind`, `integrate`, `collide`).
    fn step_body(&mut self) {
        let surroundings = self.surroundings();
        let b = self.scene.body;
        let dt = self.scene.dt / b.substeps as f32;
        let explicit = b.integrator.explicit();
        let (State::Body(body), watch) = (&mut self.state, &mut self.watch) else {
            return;
        };
        for _ in 0..b.substeps {
            watch.time(0, || {
                dynamics::springs(body, surroundings.air.gravity, explicit);
            });
            watch.time(1, || dynamics::wind(body, &surroundings));
            watch.time(2, || {
                if explicit {
                    dynamics::integrate(body, b.integrator, dt, self.dt_before, b.damping);
                } else {
                    dynamics::xpbd(body, dt, b.damping, b.iterations);
                }
            });
            watch.time(3, || dynamics::collide(body, &surroundings, dt));
            self.dt_before = dt;
        }
        self.steps += u64::from(b.substeps);
    }

    /// The camera the fountain's `sort` and the grabber see through (the last frame drawn's).
    pub fn set_camera(&mut self, camera: Camera) {
        self.camera = camera;
    }
}

/// `scene` resized to about `elements` particles alive (rate × lifetime) or nodes, with the
/// substeps a body then needs.
fn rescale(scene: &mut ParticlesScene, elements: u64) {
    let elements = elements.max(1);
    match scene.which {
        Which::Fountain => {
            let f = &mut scene.fountain;
            f.rate = elements as f32 / f.lifetime;
            f.max_particles = (2 * elements).min(1 << 26) as usize;
        }
        Which::Cloth => scene.body.n = ((elements as f64).sqrt().round() as usize).max(2),
        Which::Jelly => scene.body.n = ((elements as f64).cbrt().round() as usize).max(2),
    }
    if scene.which != Which::Fountain && scene.body.integrator.explicit() {
        let needed = scene.stable_substeps();
        scene.body.substeps = scene.body.substeps.max(needed.min(4096));
    }
}

/// Pins `body`'s nodes as the scene says (the cloth's corners or top row; the jelly none).
fn pin(body: &mut Body, scene: &ParticlesScene) {
    body.pinned.fill(false);
    if scene.which != Which::Cloth {
        return;
    }
    let n = scene.body.n;
    match scene.body.pins {
        Pins::Corners => {
            body.pinned[0] = true;
            body.pinned[n - 1] = true;
        }
        Pins::Top => body.pinned[..n].fill(true),
        Pins::None => {}
    }
}

/// The state `scene` starts from.
fn build(scene: &ParticlesScene) -> State {
    let b = &scene.body;
    let start = Vec3::from(b.start);
    match scene.which {
        Which::Fountain => State::Fountain(Fountain::new(scene.fountain)),
        Which::Cloth => {
            let down = match b.orientation {
                Orientation::Hanging => Vec3::NEG_Y,
                Orientation::Flat => Vec3::Z,
            };
            let mut body = Body::cloth(b.n, b.size, start, down, b.mass, b.stiffnesses());
            pin(&mut body, scene);
            State::Body(body)
        }
        Which::Jelly => State::Body(Body::jelly(b.n, b.size, start, b.mass, b.stiffnesses())),
    }
}

/// The box the camera frames.
fn bounds_of(scene: &ParticlesScene) -> Aabb {
    match scene.which {
        Which::Fountain => {
            let f = &scene.fountain;
            let high = f.cube + f.speed[1] * f.speed[1] / (2.0 * 9.82);
            Aabb::new(
                [-f.basin, 0.0, -f.basin],
                [f.basin, high.min(4.0 * f.basin), f.basin],
            )
        }
        _ => {
            let (s, size) = (Vec3::from(scene.body.start), scene.body.size);
            let ground = scene.world.ground.min(s.y - size);
            Aabb::new(
                [s.x - 0.5 * size, ground, s.z - size],
                [s.x + 1.5 * size, s.y + 0.5 * size, s.z + 2.0 * size],
            )
        }
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
        "cpu (the particles kind has no CUDA path yet)"
    }

    fn dt(&self) -> f64 {
        f64::from(self.scene.dt)
    }

    fn elements(&self) -> u64 {
        match &self.state {
            State::Fountain(f) => f.len() as u64,
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
        match self.state {
            State::Fountain(_) => self.step_fountain(),
            State::Body(_) => self.step_body(),
        }
        self.time += f64::from(self.scene.dt);
        let finite = match &self.state {
            State::Fountain(f) => f.surface.max_height().is_finite(),
            State::Body(b) => b.position.iter().all(|p| p.is_finite()),
        };
        if !finite {
            bail!(
                "time {:.3} s: the simulation is no longer finite; lower the stiffness or the \
                 wave speed, or raise the substeps",
                self.time
            );
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
        self.watch.seconds.clone()
    }

    fn reset_stage_times(&mut self) {
        self.watch.seconds.fill(0.0);
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        self.watch.enabled = enabled;
    }

    fn frame(&self) -> Result<Box<dyn Frame>> {
        Ok(Box::new(ParticlesFrame::new(&self.state, &self.scene)))
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

    fn restart(&mut self) -> Result<()> {
        let result = self.sync();
        self.rebuild();
        result
    }

    fn use_cuda_device(&mut self, _device: usize) -> Result<()> {
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        let restart = super::panel_ui(self, ui);
        self.sync()?;
        Ok(restart)
    }

    /// A left drag that starts on a cloth or jelly node drags it (the grabber).
    fn pointer(&mut self, position: [f32; 2], size: [u32; 2], dragging: bool) -> bool {
        let State::Body(body) = &mut self.state else {
            return false;
        };
        self.grabber
            .pointer(body, &self.camera, position, size, dragging)
    }

    fn key(&mut self, key: KeyCode) -> bool {
        let which = match key {
            KeyCode::F1 => Which::Fountain,
            KeyCode::F2 => Which::Cloth,
            KeyCode::F3 => Which::Jelly,
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
        &["scene"]
    }

    fn view(&self) -> usize {
        0
    }

    fn set_view(&mut self, _view: usize) {}

    fn attach_gl(&mut self, gl: Rc<glow::Context>, _clock: PassClock) -> Result<()> {
        self.gl = Some(gl);
        Ok(())
    }

    /// A placeholder until the renderer lands: clears to the sky's colour.
    fn draw(&mut self, camera: &Camera, output: Output) -> Result<()> {
        self.camera = *camera;
        let gl = self
            .gl
            .as_ref()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        // SAFETY: GL calls on the current context; the framebuffer is the front end's.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            gl.clear_color(0.45, 0.6, 0.8, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
        }
        Ok(())
    }

    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        Vec::new()
    }

    fn release_gl(&mut self) {
        self.gl = None;
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
