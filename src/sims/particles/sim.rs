//! Particles behind the [`Sim`] door: the fountain or a spring-mass body, stepped by stages and
//! timed, read back as tables and statistics, drawn by `render/`.

use super::body::Body;
use super::dynamics::{self, Integrator, Surroundings};
use super::fountain::Fountain;
use super::render::{self, RenderSettings, Renderer};
use super::scene::{ParticlesScene, Pins, Which};
use super::{sort, BODY_STAGES, FOUNTAIN_STAGES};
use crate::gfx::camera::Camera;
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::output::{Column, Table};
use crate::scene::{Aabb, Source};
use crate::sims::{stats_row, Backend, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{anyhow, bail, Result};
use glam::Vec3;
use serde_json::value::RawValue;
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

/// A particles scene running on the CPU.
pub struct ParticlesSim {
    /// The scene (edited live by the panel).
    pub scene: ParticlesScene,
    /// The state.
    pub state: State,
    /// The fountain's drawing order of the last step (back to front).
    pub order: Vec<u32>,
    time: f64,
    steps: u64,
    dt_before: f32,
    seconds: Vec<f64>,
    camera: Camera,
    /// What the picture shows (the panel's rendering section, `--view`, **P** and **T**).
    pub render: RenderSettings,
    renderer: Option<Renderer>,
}

impl ParticlesSim {
    /// Parses `source` and sets the scene up (`options.elements`: about that many particles
    /// alive — the rate is set so rate × lifetime is that — or nodes).
    pub fn open(source: &Source, options: &OpenOptions) -> Result<ParticlesSim> {
        let mut scene = ParticlesScene::from_source(source)?;
        if options.backend == Backend::Cuda {
            bail!("the particles kind has no CUDA path yet; use --backend cpu or auto");
        }
        if let Some(elements) = options.elements {
            match scene.which {
                Which::Fountain => {
                    scene.fountain.rate = elements as f32 / scene.fountain.lifetime;
                    scene.fountain.max_particles = (2 * elements as usize).max(1);
                }
                Which::Cloth => scene.body.n = (elements as f64).sqrt().round() as usize,
                Which::Jelly => scene.body.n = (elements as f64).cbrt().round() as usize,
            }
            scene
                .validate()
                .map_err(|e| anyhow!("rescaled scene: {}: {}", e.key, e.message))?;
        }
        let state = build(&scene);
        let stages = match scene.which {
            Which::Fountain => FOUNTAIN_STAGES.len(),
            _ => BODY_STAGES.len(),
        };
        let camera = Camera::framing(&bounds_of(&scene));
        Ok(ParticlesSim {
            dt_before: scene.dt / scene.substeps as f32,
            scene,
            state,
            order: Vec::new(),
            time: 0.0,
            steps: 0,
            seconds: vec![0.0; stages],
            camera,
            render: RenderSettings::default(),
            renderer: None,
        })
    }

    /// What acts on the body.
    pub fn surroundings(&self) -> Surroundings {
        let w = &self.scene.world;
        Surroundings {
            gravity: Vec3::from(w.gravity),
            wind: Vec3::from(w.wind),
            wind_drag: w.wind_drag,
            damping: self.scene.body.damping,
            ground: w.ground,
            sphere: (w.sphere_radius > 0.0).then(|| (Vec3::from(w.sphere_center), w.sphere_radius)),
            friction: w.friction,
        }
    }

    fn lap(&mut self, stage: usize, since: Instant) -> Instant {
        let now = Instant::now();
        self.seconds[stage] += (now - since).as_secs_f64();
        now
    }

    fn step_body(&mut self) {
        let surroundings = self.surroundings();
        let b = self.scene.body;
        let dt = self.scene.dt / self.scene.substeps as f32;
        for _ in 0..self.scene.substeps {
            let State::Body(body) = &mut self.state else {
                return;
            };
            let clock = Instant::now();
            if b.integrator == Integrator::Xpbd {
                let weight = surroundings.gravity * body.mass;
                body.force.iter_mut().for_each(|f| *f = weight);
            } else {
                dynamics::springs(body, surroundings.gravity);
            }
            let clock = self.lap(0, clock);
            let State::Body(body) = &mut self.state else {
                return;
            };
            dynamics::wind(body, &surroundings);
            let clock = self.lap(1, clock);
            let State::Body(body) = &mut self.state else {
                return;
            };
            if b.integrator == Integrator::Xpbd {
                let external = body.force.clone();
                dynamics::xpbd(body, &external, dt, b.damping, b.iterations);
            } else {
                dynamics::integrate(body, b.integrator, dt, self.dt_before, b.damping);
            }
            let clock = self.lap(2, clock);
            let State::Body(body) = &mut self.state else {
                return;
            };
            dynamics::collide(body, &surroundings, dt);
            self.lap(3, clock);
            self.dt_before = dt;
            self.steps += 1;
        }
    }

    fn step_fountain(&mut self) {
        let dt = self.scene.dt;
        let State::Fountain(f) = &mut self.state else {
            return;
        };
        let clock = Instant::now();
        f.emit(dt);
        let clock = self.lap(0, clock);
        let State::Fountain(f) = &mut self.state else {
            return;
        };
        f.advance(dt);
        let clock = self.lap(1, clock);
        let State::Fountain(f) = &mut self.state else {
            return;
        };
        let drops = f.collide();
        let clock = self.lap(2, clock);
        let State::Fountain(f) = &mut self.state else {
            return;
        };
        f.basin(&drops, dt);
        let clock = self.lap(3, clock);
        let State::Fountain(f) = &mut self.state else {
            return;
        };
        let forward = (self.camera.target - self.camera.eye()).normalize();
        self.order = sort::back_to_front(&f.position, self.camera.eye(), forward);
        self.lap(4, clock);
        self.steps += 1;
    }
}

/// The state `scene` starts from.
fn build(scene: &ParticlesScene) -> State {
    let b = &scene.body;
    let stiffness = [b.stiffness, b.stiffness * b.shear, b.stiffness * b.bend];
    match scene.which {
        Which::Fountain => State::Fountain(Fountain::new(scene.fountain)),
        Which::Cloth => {
            let mut body = Body::cloth(b.n, b.size, Vec3::from(b.start), b.mass, stiffness);
            let last = b.n - 1;
            match b.pins {
                Pins::Corners => {
                    body.pinned[0] = true;
                    body.pinned[last] = true;
                }
                Pins::Top => body.pinned[..b.n].iter_mut().for_each(|p| *p = true),
                Pins::None => {}
            }
            State::Body(body)
        }
        Which::Jelly => State::Body(Body::jelly(
            b.n,
            b.size,
            Vec3::from(b.start),
            b.mass,
            stiffness,
        )),
    }
}

/// The box the camera frames.
fn bounds_of(scene: &ParticlesScene) -> Aabb {
    match scene.which {
        Which::Fountain => {
            let b = scene.fountain.basin;
            Aabb::new([-b, 0.0, -b], [b, 2.0 * scene.fountain.cube + 1.0, b])
        }
        _ => {
            let s = Vec3::from(scene.body.start);
            let size = scene.body.size;
            Aabb::new(
                [s.x - size, scene.world.ground, s.z - size],
                [s.x + 2.0 * size, s.y + size, s.z + 2.0 * size],
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
            State::Fountain(f) => f.len().max(1) as u64,
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
        match &self.state {
            State::Fountain(f) => format!(
                "{} particles/s for {} s, basin {}² nodes",
                f.params.rate, f.params.lifetime, f.params.surface_nodes
            ),
            State::Body(b) => format!(
                "{} nodes, {} springs, {} substeps of {}",
                b.len(),
                b.springs.len(),
                self.scene.substeps,
                self.scene.body.integrator.name()
            ),
        }
    }

    fn step(&mut self) -> Result<()> {
        match self.state {
            State::Fountain(_) => self.step_fountain(),
            State::Body(_) => self.step_body(),
        }
        self.time += f64::from(self.scene.dt);
        if let State::Body(b) = &self.state {
            if !b.position.iter().all(|p| p.is_finite()) {
                bail!(
                    "time {:.3} s: the body is no longer finite; lower the stiffness or raise \
                     the substeps",
                    self.time
                );
            }
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
        self.seconds.clone()
    }

    fn reset_stage_times(&mut self) {
        self.seconds.iter_mut().for_each(|s| *s = 0.0);
    }

    fn set_stage_timing(&mut self, _enabled: bool) {}

    fn frame(&self) -> Result<Box<dyn Frame>> {
        Ok(Box::new(match &self.state {
            State::Fountain(f) => ParticlesFrame::Fountain {
                position: f.position.clone(),
                velocity: f.velocity.clone(),
                alpha: (0..f.len()).map(|k| f.alpha(k)).collect(),
                landed: f.landed,
                basin_height: f.surface.max_height(),
                basin_volume: f.surface.volume(),
            },
            State::Body(b) => ParticlesFrame::Body {
                body: b.clone(),
                gravity: Vec3::from(self.scene.world.gravity),
            },
        }))
    }

    fn solve_summary(&self) -> SolveSummary {
        let b = &self.scene.body;
        SolveSummary {
            iterations: if b.integrator == Integrator::Xpbd {
                f64::from(b.iterations)
            } else {
                0.0
            },
            rule: b.integrator.name().to_string(),
            figures: Vec::new(),
        }
    }

    fn bounds(&self) -> Aabb {
        bounds_of(&self.scene)
    }

    fn restart(&mut self) -> Result<()> {
        self.state = build(&self.scene);
        self.time = 0.0;
        self.steps = 0;
        Ok(())
    }

    fn use_cuda_device(&mut self, _device: usize) -> Result<()> {
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        let restart = super::panel_ui(self, ui);
        render::panel(ui, &mut self.render, self.scene.which);
        Ok(restart)
    }

    /// **P** and **T** toggle a body's nodes and springs and its textured surface.
    fn key(&mut self, key: KeyCode) -> bool {
        if self.scene.which == Which::Fountain {
            return false;
        }
        match key {
            KeyCode::KeyP => self.render.toggle(true),
            KeyCode::KeyT => self.render.toggle(false),
            _ => return false,
        }
        true
    }

    fn key_help(&self) -> &'static [(&'static str, &'static str)] {
        match self.scene.which {
            Which::Fountain => &[],
            _ => &[
                ("P", "nodes (by speed) and springs (by strain)"),
                ("T", "the textured surface"),
            ],
        }
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

    /// Draws the state; the camera is kept for the next step's back-to-front sort.
    fn draw(&mut self, camera: &Camera, output: Output) -> Result<()> {
        self.camera = *camera;
        let renderer = self
            .renderer
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        renderer.draw(
            &self.state,
            &self.order,
            &self.scene,
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
        if let Some(renderer) = self.renderer.take() {
            renderer.delete();
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A state read back.
pub enum ParticlesFrame {
    /// The fountain's particles and basin.
    Fountain {
        /// Positions.
        position: Vec<Vec3>,
        /// Velocities.
        velocity: Vec<Vec3>,
        /// Opacities.
        alpha: Vec<f32>,
        /// Landings in the last step.
        landed: usize,
        /// The basin's highest |height|.
        basin_height: f32,
        /// The basin's displaced volume.
        basin_volume: f64,
    },
    /// A body's nodes.
    Body {
        /// The body.
        body: Body,
        /// Gravity (for the potential energy).
        gravity: Vec3,
    },
}

impl Frame for ParticlesFrame {
    /// One row per particle (`id,x,y,z,vx,vy,vz,alpha`) or node (`id,x,y,z,vx,vy,vz,pinned`).
    fn table(&self) -> Table {
        let (position, velocity, last): (&[Vec3], &[Vec3], (&str, Column)) = match self {
            ParticlesFrame::Fountain {
                position,
                velocity,
                alpha,
                ..
            } => (position, velocity, ("alpha", Column::F32(alpha.clone()))),
            ParticlesFrame::Body { body, .. } => (
                &body.position,
                &body.velocity,
                (
                    "pinned",
                    Column::U32(body.pinned.iter().map(|&p| u32::from(p)).collect()),
                ),
            ),
        };
        let mut table = Table::default();
        table.push("id", Column::U32((0..position.len() as u32).collect()));
        for (name, column) in [
            ("x", position.iter().map(|p| p.x).collect()),
            ("y", position.iter().map(|p| p.y).collect()),
            ("z", position.iter().map(|p| p.z).collect()),
            ("vx", velocity.iter().map(|v| v.x).collect()),
            ("vy", velocity.iter().map(|v| v.y).collect()),
            ("vz", velocity.iter().map(|v| v.z).collect()),
        ] {
            table.push(name, Column::F32(column));
        }
        table.push(last.0, last.1);
        table
    }

    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue> {
        match self {
            ParticlesFrame::Fountain {
                position,
                landed,
                basin_height,
                basin_volume,
                ..
            } => stats_row(&serde_json::json!({
                "step": step, "time": time, "alive": position.len(), "landed": landed,
                "basin_max_height": basin_height, "basin_volume": basin_volume,
                "step_ms": step_ms,
            })),
            ParticlesFrame::Body { body, gravity } => {
                let (kinetic, potential, elastic) = body.energy(*gravity);
                stats_row(&serde_json::json!({
                    "step": step, "time": time, "nodes": body.len(), "springs": body.springs.len(),
                    "energy": kinetic + potential + elastic, "kinetic": kinetic,
                    "potential": potential, "elastic": elastic,
                    "max_strain": body.max_strain(), "step_ms": step_ms,
                }))
            }
        }
    }

    fn summary(&self) -> Vec<String> {
        match self {
            ParticlesFrame::Fountain {
                position,
                basin_height,
                ..
            } => vec![format!(
                "{} particles alive, the basin's highest ripple {:.2e} m",
                position.len(),
                basin_height
            )],
            ParticlesFrame::Body { body, gravity } => {
                let (kinetic, potential, elastic) = body.energy(*gravity);
                vec![format!(
                    "energy {:.4} J (kinetic {:.4}, potential {:.4}, elastic {:.4}), max strain \
                     {:.4}",
                    kinetic + potential + elastic,
                    kinetic,
                    potential,
                    elastic,
                    body.max_strain()
                )]
            }
        }
    }
}
