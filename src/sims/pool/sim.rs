//! Pool behind the [`Sim`] door: the scene, the solver, the drops of each frame (scripted,
//! random at the start, rain, the pointer's), and the renderer.

mod gl;
mod restart;

use gl::PoolGl;

pub(super) use restart::host_check;
use restart::Opened;

use super::drops::{Drop, Rng};
use super::frame::PoolFrame;
use super::render::{PoolRenderer, VIEWS};
use super::scene::PoolScene;
use super::solver::PoolSolver;
use super::PoolStage;
use crate::gfx::camera::Camera;
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::scene::{Aabb, Source};
use crate::sims::{Backend, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{anyhow, bail, Result};
use std::any::Any;
use std::rc::Rc;
use winit::keyboard::KeyCode;

/// What a left drag on the water does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Drops where the pointer is (evanw: drag on the water draws ripples).
    Drops,
    /// Paints land: the nodes under the brush become fixed.
    PaintIsland,
    /// Erases land.
    EraseIsland,
}

/// A pool scene on the CPU or CUDA.
pub struct PoolSim {
    /// The scene (its parameters edited live by the panel; `pool.nodes` is the solver's).
    pub scene: PoolScene,
    /// The solver.
    pub solver: PoolSolver,
    note: String,
    time: f64,
    steps: u64,
    view: usize,
    rng: Rng,
    rain_sign: f32,
    pending: Vec<Drop>,
    last_drop: Option<[f32; 2]>,
    camera: Option<Camera>,
    /// What left drag does.
    pub tool: Tool,
    /// Nodes per side the panel restarts with.
    pub(super) nodes_edit: usize,
    /// The island brush's edits, node by node: `Some(true)` painted land, `Some(false)` erased
    /// land, `None` as the scene's islands say; empty until the brush is first used, and
    /// cleared on restart. Kept apart from the flags so that a scenario without islands can
    /// take the scene's islands away while painted land survives other edits.
    pub(super) painted: Vec<Option<bool>>,
    /// Why the panel's last edit was refused (shown in the panel until the next accepted one).
    pub(super) refusal: Option<String>,
    /// The grid a restart was asked for once and must be asked for again (it takes more than
    /// `restart::CONFIRM_BYTES`).
    pub(super) confirming: Option<usize>,
    gl: Option<PoolGl>,
    /// How `attach_gl` chose the far taps for a scene without `[light] far_taps` (`Sim::gl_note`;
    /// the panel's checkbox shows it until the user picks).
    pub(super) gl_note: Option<String>,
    /// Whether a front end draws it (`OpenOptions::drawn`, or GL attached): the checks count
    /// what drawing takes.
    drawn: bool,
    /// Whether the CUDA solver's surface reaches GL by interop (`None`: not known until a
    /// frame is drawn; `memory::drawn_bytes`).
    pub(super) interop: Option<bool>,
    /// How the scene was opened: the first frame drawn through the host checks its grid again.
    opened: Opened,
}

impl PoolSim {
    /// Parses `source` and starts the solver (`options.elements`: about that many nodes).
    pub fn open(source: &Source, options: &OpenOptions) -> Result<PoolSim> {
        PoolSim::open_within(source, options, crate::host::available_memory())
    }

    /// [`PoolSim::open`] with `available` bytes of host memory (`None`: not known). Each memory
    /// is checked against its own need before the grid is built (`memory::drawn_bytes`): host
    /// memory here, with the figures of the backend that builds it, GPU memory by the CUDA
    /// solver.
    pub fn open_within(
        source: &Source,
        options: &OpenOptions,
        available: Option<u64>,
    ) -> Result<PoolSim> {
        let mut scene = PoolScene::from_source(source)?;
        if let Some(nodes) = options.elements {
            scene
                .rescale(nodes)
                .map_err(|e| anyhow!("scene {}: {}: {}", scene.name, e.key, e.message))?;
        }
        let cuda_nodes = scene.cuda_nodes.filter(|_| options.elements.is_none());
        let (interop, fits) = host_check(source, options, cuda_nodes, available);
        let (solver, note) = PoolSolver::create(
            &mut scene,
            cuda_nodes,
            (options.backend, options.device),
            (options.drawn, interop),
            &fits,
        )?;
        // The CPU's frames always go through the host, whatever GL context is current.
        let interop = interop.filter(|_| solver.cuda_device().is_some());
        let opened = Opened::new(source, options, cuda_nodes);
        Ok(PoolSim {
            opened,
            rng: Rng::new(scene.drops.seed),
            nodes_edit: scene.params.nodes,
            painted: Vec::new(),
            refusal: None,
            confirming: None,
            scene,
            solver,
            note,
            time: 0.0,
            steps: 0,
            view: 0,
            rain_sign: 1.0,
            pending: Vec::new(),
            last_drop: None,
            camera: None,
            tool: Tool::Drops,
            gl: None,
            gl_note: None,
            drawn: options.drawn,
            interop,
        })
    }

    /// The parameters the solver runs with.
    pub fn params(&self) -> &super::PoolParams {
        &self.scene.params
    }

    /// A drop with the scene's settings at a random place (G; rain; the start's drops),
    /// alternating up and down so the mean level stays.
    fn random_drop(&mut self) -> Drop {
        let size = self.scene.params.size;
        let position = [
            size * (0.05 + 0.9 * self.rng.unit()),
            size * (0.05 + 0.9 * self.rng.unit()),
        ];
        self.rain_sign = -self.rain_sign;
        Drop {
            position,
            radius: self.scene.drops.radius,
            amplitude: self.rain_sign * self.scene.drops.amplitude,
            target: self.scene.drops.target,
        }
    }

    /// Queues a random drop (the G key).
    pub fn drop_at_random(&mut self) {
        let drop = self.random_drop();
        self.pending.push(drop);
    }

    /// Queues `drop` for the next frame.
    pub fn add_drop(&mut self, drop: Drop) {
        self.pending.push(drop);
    }

    /// Puts the water at rest (the C key); islands stay.
    pub fn clear(&mut self) {
        self.solver.clear();
    }

    /// Re-applies the edges, horizontal motion and the scene's islands after a panel edit,
    /// with the brush's edits over them (painted land stays, erased land stays water).
    pub(super) fn refresh_flags(&mut self) {
        let (n, h) = self.solver.grid();
        let (scene, painted) = (&self.scene, &self.painted);
        let land = |x: f32, z: f32| {
            let k = (z / h).round() as usize * n + (x / h).round() as usize;
            painted
                .get(k)
                .copied()
                .flatten()
                .unwrap_or_else(|| scene.land(x, z))
        };
        self.solver.set_flags(&scene.params, land);
    }

    /// Whether the brush has painted land that is still there.
    pub(super) fn has_painted_land(&self) -> bool {
        self.painted.contains(&Some(true))
    }

    /// The point (x, z) m on the rest plane under output pixel `position`, when it is on the
    /// pool, seen by the camera of the last frame drawn.
    pub fn pick(&self, position: [f32; 2], size: [u32; 2]) -> Option<[f32; 2]> {
        let camera = self.camera.as_ref()?;
        let (near, direction) = camera.ray(position, size);
        if direction.y.abs() < 1e-9 {
            return None;
        }
        let t = -near.y / direction.y;
        if t < 0.0 {
            return None;
        }
        let hit = near + t * direction;
        let size = self.scene.params.size;
        ((0.0..=size).contains(&hit.x) && (0.0..=size).contains(&hit.z)).then_some([hit.x, hit.z])
    }

    /// Remembers `camera` as the last frame's (what [`PoolSim::pick`] sees through), as
    /// drawing does.
    pub fn draw_camera(&mut self, camera: Camera) {
        self.camera = Some(camera);
    }

    /// Uses the tool at `point` (m); returns whether the pointer was on the water.
    fn use_tool(&mut self, point: Option<[f32; 2]>) -> bool {
        let Some([x, z]) = point else {
            return false;
        };
        match self.tool {
            Tool::Drops => {
                let s = &self.scene.drops;
                self.pending.push(Drop {
                    position: [x, z],
                    radius: s.radius,
                    amplitude: s.amplitude,
                    target: s.target,
                });
            }
            Tool::PaintIsland | Tool::EraseIsland => {
                let land = self.tool == Tool::PaintIsland;
                let (n, h) = self.solver.grid();
                if self.painted.len() != n * n {
                    self.painted = vec![None; n * n];
                }
                let r = self.scene.drops.radius.max(h);
                let range = |c: f32| {
                    let lo = ((c - r) / h).floor().max(0.0) as usize;
                    lo..(((c + r) / h).ceil() as usize + 1).min(n)
                };
                for j in range(z) {
                    for i in range(x) {
                        let (dx, dz) = (i as f32 * h - x, j as f32 * h - z);
                        if dx * dx + dz * dz <= r * r {
                            self.painted[j * n + i] = Some(land);
                            self.solver.set_island_node(&self.scene.params, i, j, land);
                        }
                    }
                }
            }
        }
        true
    }
}

impl Sim for PoolSim {
    fn kind(&self) -> Kind {
        Kind::Pool
    }

    fn scene_name(&self) -> &str {
        &self.scene.name
    }

    fn backend(&self) -> &str {
        &self.note
    }

    fn dt(&self) -> f64 {
        f64::from(self.scene.params.dt)
    }

    fn elements(&self) -> u64 {
        self.scene.params.node_count() as u64
    }

    fn element_unit(&self) -> &'static str {
        "nodes"
    }

    fn scheme(&self) -> String {
        let p = &self.scene.params;
        format!(
            "{n}×{n} nodes, {} model, {} edges, {} substeps of {:.3} ms (c = {} m/s)",
            p.model.name(),
            p.edges.name(),
            p.substeps(),
            1e3 * p.substep_dt(),
            p.wave_speed,
            n = p.nodes,
        )
    }

    fn step(&mut self) -> Result<()> {
        let dt = self.scene.params.dt;
        let (t0, t1) = (self.time as f32, self.time as f32 + dt);
        let mut drops: Vec<Drop> = self
            .scene
            .scripted
            .iter()
            .filter(|d| (t0..t1).contains(&d.time))
            .map(|d| d.drop)
            .collect();
        if self.steps == 0 {
            for _ in 0..self.scene.drops.random {
                let drop = self.random_drop();
                drops.push(drop);
            }
        }
        let rain = self.rng.poisson(self.scene.drops.rain * dt);
        for _ in 0..rain {
            let drop = self.random_drop();
            drops.push(drop);
        }
        drops.append(&mut self.pending);
        if let Some(last) = drops.last() {
            self.last_drop = Some(last.position);
        }
        let finite = self
            .solver
            .step(&self.scene.params, &drops, self.last_drop)?;
        self.time += f64::from(dt);
        self.steps += u64::from(self.scene.params.substeps());
        if !finite {
            bail!(
                "time {:.3} s: the surface is no longer finite; lower the wave speed, the drop \
                 amplitude or the time step",
                self.time
            );
        }
        Ok(())
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn stages(&self) -> &'static [&'static str] {
        &PoolStage::NAMES
    }

    fn stage_seconds(&self) -> Vec<f64> {
        self.solver.stage_seconds()
    }

    fn reset_stage_times(&mut self) {
        self.solver.reset_stage_times();
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        self.solver.set_stage_timing(enabled);
    }

    fn frame(&self) -> Result<Box<dyn Frame>> {
        let (surface, stats) = self.solver.state(&self.scene.params, self.last_drop)?;
        Ok(Box::new(PoolFrame::new(surface, &self.scene.params, stats)))
    }

    /// The statistics' lines without the surface: on CUDA from the GPU's reductions.
    fn status(&mut self) -> Result<Vec<String>> {
        Ok(self
            .solver
            .stats(&self.scene.params, self.last_drop)?
            .lines())
    }

    /// No iterative solve: the substeps' stages and what sets their count.
    fn solve_summary(&self) -> SolveSummary {
        let p = &self.scene.params;
        let limit = match p.model {
            super::Model::Wave => "c·dt/h ≤ 0.5",
            super::Model::Springs => "dt·ω_max ≤ 1.4",
        };
        SolveSummary {
            iterations: 0.0,
            rule: format!(
                "{} in each, {limit} sets their count; disturb once a frame; no iterative solve",
                PoolStage::NAMES[1..].join(", ")
            ),
            figures: Vec::new(),
        }
    }

    /// The pool's opening in the deck, at the rim's height: all that shows of the pool from
    /// above (the water, the walls above it, the floor through it) lies within its outline,
    /// and the basin below the deck is hidden by it, so framing that too would put the pool
    /// high in the picture.
    fn bounds(&self) -> Aabb {
        let p = &self.scene.params;
        let rim = super::render::rim_height(p.size);
        Aabb::new([0.0, rim, 0.0], [p.size, rim, p.size])
    }

    fn restart(&mut self) -> Result<()> {
        self.restart_within(crate::host::available_memory())
    }

    /// A CUDA solver moves to the GPU of the window's GL context (a restart), so interop can
    /// share its texture.
    fn use_cuda_device(&mut self, device: usize) -> Result<()> {
        if self
            .solver
            .cuda_device()
            .is_some_and(|current| current != device)
        {
            self.solver.release_gl();
            let mut scene = self.scene.clone();
            let drawing = (self.is_drawn(), None);
            let (solver, note) = PoolSolver::create(
                &mut scene,
                None,
                (Backend::Cuda, device),
                drawing,
                &|_, _| Ok(()),
            )?;
            self.interop = None;
            (self.solver, self.note) = (solver, note);
            self.painted.clear();
            self.rng = Rng::new(self.scene.drops.seed);
            self.pending.clear();
            self.time = 0.0;
            self.steps = 0;
        }
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        self.panel_ui(ui)
    }

    /// Left drag on the water uses the tool (drops by default); elsewhere the camera orbits.
    fn pointer(&mut self, position: [f32; 2], size: [u32; 2], dragging: bool) -> bool {
        let point = self.pick(position, size);
        if !dragging {
            return point.is_some();
        }
        self.use_tool(point)
    }

    fn key(&mut self, key: KeyCode) -> bool {
        match key {
            KeyCode::KeyC => self.clear(),
            KeyCode::KeyG => self.drop_at_random(),
            KeyCode::KeyL => {
                if let Some(camera) = &self.camera {
                    let towards = (camera.eye() - camera.target).normalize();
                    if towards.y >= super::scene::LOWEST_SUN {
                        self.scene.look.light = towards.to_array();
                    }
                }
            }
            _ => return false,
        }
        true
    }

    fn key_help(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "Left drag (water)",
                "drops, or paint/erase islands (panel tool)",
            ),
            ("G", "a drop at random"),
            ("C", "calm the water"),
            (
                "L",
                "light from the camera's direction (camera looking down at 2.9° or more: the \
                 sun stays above the horizon)",
            ),
        ]
    }

    fn views(&self) -> &'static [&'static str] {
        &VIEWS
    }

    fn view(&self) -> usize {
        self.view
    }

    fn set_view(&mut self, view: usize) {
        if view < VIEWS.len() {
            self.view = view;
        }
    }

    fn attach_gl(&mut self, gl: Rc<glow::Context>, clock: PassClock) -> Result<()> {
        let limit = PoolRenderer::max_texture_size(&gl);
        self.attach_gl_within(gl, clock, limit)
    }

    /// `sim/gl.rs`.
    fn draw(&mut self, camera: &Camera, output: Output) -> Result<()> {
        self.draw_gl(camera, output)
    }

    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        self.renderer()
            .map(PoolRenderer::pass_times)
            .unwrap_or_default()
    }

    fn gl_note(&self) -> Option<&str> {
        self.gl_note.as_deref()
    }

    fn release_gl(&mut self) {
        self.release_gl_objects();
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
