//! Ink behind the [`Sim`] door: the scene, the solver (CPU or CUDA, `solver.rs`), the scripted
//! brush's clock, and the picture (a field turned into an RGBA image in a texture, shown
//! letterboxed: written by a kernel through CUDA–GL interop on CUDA, uploaded otherwise).

use super::brush::{Brush, Drag};
use super::frame::{cfl, summary_lines, InkFrame};
use super::panel::Tool;
use super::picture::picture;
use super::scene::{Background, InkScene};
use super::solver::InkSolver;
use super::{InkStage, Stamp};
use crate::gfx::camera::Camera;
use crate::gfx::fullscreen::{FullscreenTriangle, Present};
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::scene::{Aabb, Invalid, Source};
use crate::sims::{Backend, Frame, Kind, OpenOptions, Sim, SolveSummary};
use anyhow::{anyhow, bail, Result};
use glow::HasContext;
use std::any::Any;
use std::rc::Rc;
use winit::keyboard::KeyCode;

#[path = "sim_draw.rs"]
mod draw;
use draw::{cells_in, specify_texture};

/// What the picture shows.
const VIEWS: [&str; 6] = [
    "ink",
    "flow",
    "pressure",
    "divergence",
    "curl",
    "side-by-side",
];

/// An ink scene running on the CPU or a GPU.
pub struct InkSim {
    /// The scene (its parameters edited live by the panel).
    pub scene: InkScene,
    /// The solver.
    pub solver: InkSolver,
    note: String,
    pub(super) time: f64,
    steps: u64,
    view: usize,
    pub(super) background: Background,
    pub(super) extra_stamps: Vec<Stamp>,
    pub(super) seed: u64,
    /// The interactive brush (the left mouse button paints).
    pub brush: Brush,
    /// The brush's drag under way: painted as one segment per simulated frame.
    pub(super) drag: Option<Drag>,
    /// The steps taken when the last frame was drawn (a frame drawn without a step is paused).
    steps_drawn: u64,
    pub(super) last_pointer: Option<[f32; 2]>,
    /// What left drag does.
    pub tool: Tool,
    /// The obstacle being dragged (index into the scene's obstacles).
    pub(super) dragged: Option<usize>,
    /// The dragged disc's `center` when the last frame was stepped (its velocity is measured
    /// from there).
    pub(super) dragged_from: Option<[f32; 2]>,
    /// Where each disc is drawn in the solid mask (`discs.rs`).
    pub(super) disc_drawn: Vec<[f32; 2]>,
    /// The rows of cells of the walls that moved in the last substep (`discs.rs`).
    pub(super) walls_rows: Option<std::ops::Range<usize>>,
    /// The cells painted solid (the solid mask is these and the discs, `discs.rs`).
    pub(super) painted: Vec<bool>,
    /// The grid the panel will restart with: cells across, ink cells per cell.
    pub(super) grid_edit: [usize; 2],
    /// The pixels the viewer's panels covered in the last output drawn (the picture is
    /// letterboxed beside them, and the pointer finds it there).
    covered: [u32; 2],
    gl: Option<InkGl>,
}

struct InkGl {
    gl: Rc<glow::Context>,
    texture: glow::Texture,
    size: (usize, usize),
    present: Present,
    triangle: FullscreenTriangle,
    pixels: Vec<u8>,
}

impl InkSim {
    /// Parses `source` and starts the solver `options.backend` asks for (`solver.rs`: auto is
    /// CUDA when a driver and GPU are found, and says why when it is not).
    pub fn open(source: &Source, options: &OpenOptions) -> Result<InkSim> {
        let mut scene = InkScene::from_source(source)?;
        if let Some(cells) = options.elements {
            scene
                .rescale(cells)
                .map_err(|e| anyhow!("scene {}: {}: {}", scene.name, e.key, e.message))?;
        }
        if let Some(available) = crate::host::available_memory() {
            let needed = scene.params.memory_bytes();
            if needed > available {
                let fix = match options.elements {
                    Some(_) => "fewer --particles",
                    None => "fewer cells or a smaller grid.ink_scale",
                };
                let message = format!(
                    "{}×{} cells (ink ×{}) need about {} but only {} is available; use {fix}",
                    scene.params.cells_x,
                    scene.params.cells_y,
                    scene.params.ink_scale,
                    crate::host::format_bytes(needed),
                    crate::host::format_bytes(available)
                );
                let invalid = Invalid::new("grid.cells", message);
                return Err(source
                    .error_after_parse(invalid, options.elements.is_some())
                    .into());
            }
        }
        let cuda_cells =
            InkSolver::cuda_cells(&scene, options.elements.is_some(), cells_in(&source.text));
        let (solver, note) =
            InkSolver::create(&mut scene, cuda_cells, options.backend, options.device)?;
        let (scene_cells, scene_ink_scale) = (scene.params.cells_x, scene.params.ink_scale);
        let brush = scene.brush;
        let disc_drawn = scene.obstacles.iter().map(|o| o.center).collect();
        let painted = vec![false; solver.flow().solid().len()];
        Ok(InkSim {
            background: scene.background,
            scene,
            solver,
            note,
            time: 0.0,
            steps: 0,
            view: 0,
            extra_stamps: Vec::new(),
            seed: 0x9e37_79b9_7f4a_7c15,
            brush,
            drag: None,
            steps_drawn: 0,
            grid_edit: [scene_cells, scene_ink_scale],
            last_pointer: None,
            covered: [0, 0],
            tool: Tool::Brush,
            dragged: None,
            dragged_from: None,
            disc_drawn,
            walls_rows: None,
            painted,
            gl: None,
        })
    }

    /// Removes all ink and motion (the B key).
    /// Obstacles painted or dragged stay (a new grid size takes the scene's).
    pub fn clear(&mut self) {
        let mask = self.solver.solid_mask();
        self.solver
            .clear(&|x, y| self.scene.solid(x, y), Some(mask.clone()));
        if self.solver.flow().solid() != mask.as_slice() {
            // A new grid: the discs are drawn at their centres (`InkScene::solid`).
            self.disc_drawn = self.scene.obstacles.iter().map(|o| o.center).collect();
            self.painted = vec![false; self.solver.flow().solid().len()];
        }
        self.walls_rows = Some(0..self.solver.flow().ny);
    }

    /// The solver made again on `backend` (CUDA: device `device`) with the grid and parameters
    /// it has, from the start (a restart). As [`InkSim::clear`]: the solid cells stay (the
    /// scene draws only its discs, not the cells painted), and the next substep sets every row
    /// again, the moving discs with it.
    pub(super) fn rebuild_solver(&mut self, backend: Backend, device: usize) -> Result<()> {
        let mask = self.solver.solid_mask();
        let mut scene = self.scene.clone();
        scene.params = self.solver.params.clone();
        let (solver, note) = InkSolver::create(&mut scene, None, backend, device)?;
        (self.solver, self.note) = (solver, note);
        if mask.len() == self.solver.flow().solid().len() {
            self.solver.set_solid(mask);
        }
        self.walls_rows = Some(0..self.solver.flow().ny);
        self.start_clock();
        Ok(())
    }

    /// The domain point (m) under output pixel `position` of an output of `size`, when the
    /// pointer is over the ink (the right half in the side-by-side view).
    fn domain_point(&self, position: [f32; 2], size: [u32; 2]) -> Option<[f32; 2]> {
        let p = &self.solver.params;
        let side_by_side = VIEWS[self.view] == "side-by-side";
        let aspect = p.width / p.height() * if side_by_side { 2.0 } else { 1.0 };
        let [x0, y0, w, h] = draw::letterbox(aspect, size, self.covered);
        let mut fx = (position[0] - x0) / w;
        let fy = 1.0 - (position[1] - y0) / h;
        if side_by_side {
            fx = 2.0 * fx - 1.0;
        }
        ((0.0..=1.0).contains(&fx) && (0.0..=1.0).contains(&fy))
            .then(|| [fx * p.width, fy * p.height()])
    }

    /// Time and steps from 0 again (a restart): a drag under way ends, and the next frame
    /// shown is compared with step 0 to tell whether the sim is paused.
    fn start_clock(&mut self) {
        self.time = 0.0;
        self.steps = 0;
        self.drag = None;
        self.steps_drawn = 0;
    }

    /// A frame is shown: if none was stepped since the last one (paused), the drag's motion
    /// meanwhile is not painted — its segment starts over at the pointer.
    pub(super) fn frame_shown(&mut self) {
        if self.steps == self.steps_drawn {
            self.drag = self.drag.map(Drag::idle);
            self.discs_after_frame();
        }
        self.steps_drawn = self.steps;
    }

    /// The solver's step, s: the frame's dt over its substeps.
    fn dt_substep(&self) -> f32 {
        self.solver.params.dt / self.solver.params.substeps as f32
    }

    fn image(&self) -> Result<(usize, usize, Vec<u8>)> {
        let (view, background) = (VIEWS[self.view], self.background);
        self.solver
            .with_state(|flow, ink, _, _| picture(flow.view(), ink, view, background))
    }
}

impl Sim for InkSim {
    fn kind(&self) -> Kind {
        Kind::Ink
    }

    fn scene_name(&self) -> &str {
        &self.scene.name
    }

    fn backend(&self) -> &str {
        &self.note
    }

    fn cuda_graphs(&self) -> Option<String> {
        self.solver.as_cuda().map(|cuda| cuda.graph_summary())
    }

    fn dt(&self) -> f64 {
        f64::from(self.solver.params.dt)
    }

    fn elements(&self) -> u64 {
        (self.solver.params.cells_x * self.solver.params.cells_y) as u64
    }

    fn element_unit(&self) -> &'static str {
        "cells"
    }

    fn scheme(&self) -> String {
        let p = &self.solver.params;
        format!(
            "{}×{} cells, ink ×{}, {} substep{} × {} {} iterations, {}",
            p.cells_x,
            p.cells_y,
            p.ink_scale,
            p.substeps,
            if p.substeps == 1 { "" } else { "s" },
            p.iterations,
            p.pressure_solver.name(),
            p.advection.name()
        )
    }

    fn step(&mut self) -> Result<()> {
        let substeps = self.solver.params.substeps;
        let dt = self.solver.params.dt / substeps as f32;
        for k in 0..substeps {
            let t0 = self.time as f32;
            self.move_discs(t0 + 0.5 * dt);
            let mut stamps = self.scene.stamps(t0, t0 + dt);
            stamps.append(&mut self.extra_stamps);
            if let Some(drag) = self.drag {
                drag.stamps(&self.brush, self.solver.params.dt, k, substeps, &mut stamps);
            }
            self.solver.step(dt, &stamps, k + 1 == substeps)?;
            self.time += f64::from(dt);
            self.steps += 1;
        }
        self.drag = self.drag.and_then(Drag::after_frame);
        self.discs_after_frame();
        if !self.solver.end_frame()? {
            bail!(
                "step {}: the velocity is no longer finite; lower dt or the brush force",
                self.steps
            );
        }
        Ok(())
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn stages(&self) -> &'static [&'static str] {
        &InkStage::NAMES
    }

    fn stage_seconds(&self) -> Vec<f64> {
        self.solver.stage_seconds().to_vec()
    }

    fn stage_bytes(&self) -> Vec<Option<f64>> {
        let obstacles = self.solver.flow().has_obstacles();
        super::bandwidth::stage_bytes(&self.solver.params, obstacles).to_vec()
    }

    fn reset_stage_times(&mut self) {
        self.solver.reset_stage_times();
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        self.solver.set_stage_timing(enabled);
    }

    fn frame(&self) -> Result<Box<dyn Frame>> {
        let (flow, ink) = self.solver.state()?;
        Ok(Box::new(InkFrame {
            flow,
            ink,
            report: self.solver.report(),
            background: self.background,
            dt_substep: self.dt_substep(),
        }))
    }

    /// The summary's lines from the solver's totals (on CUDA the GPU's, reduced at the end of
    /// every frame: no field is read back).
    fn status(&mut self) -> Result<Vec<String>> {
        let (ink, energy, fastest) = self.solver.totals();
        let cfl = cfl(fastest, self.dt_substep(), self.solver.params.dx());
        Ok(summary_lines(
            &self.solver.report(),
            ink,
            energy,
            fastest,
            cfl,
        ))
    }

    fn solve_summary(&self) -> SolveSummary {
        let report = self.solver.report();
        SolveSummary {
            iterations: f64::from(report.iterations),
            rule: format!(
                "{} {} iterations",
                self.solver.params.iterations,
                self.solver.params.pressure_solver.name()
            ),
            figures: vec![
                ("divergence_before", report.divergence_before),
                ("divergence_after", report.divergence_after),
                ("residual", report.residual),
            ],
        }
    }

    fn bounds(&self) -> Aabb {
        let p = &self.solver.params;
        Aabb::new([0.0, 0.0, 0.0], [p.width, p.height(), 0.01])
    }

    fn restart(&mut self) -> Result<()> {
        self.clear();
        self.start_clock();
        Ok(())
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
            self.rebuild_solver(Backend::Cuda, device)?;
        }
        Ok(())
    }

    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool> {
        self.panel_ui(ui)
    }

    /// Left drag uses the tool chosen in the panel: the brush paints ink and pushes the fluid,
    /// the obstacle tools paint, erase or drag solids.
    fn pointer(&mut self, position: [f32; 2], size: [u32; 2], dragging: bool) -> bool {
        let point = self.domain_point(position, size);
        self.use_tool(point, dragging)
    }

    fn key(&mut self, key: KeyCode) -> bool {
        match key {
            KeyCode::KeyB => self.clear(),
            KeyCode::KeyG => self.random_splats(),
            _ => return false,
        }
        true
    }

    fn flat(&self) -> bool {
        true
    }

    fn key_help(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("Left drag (ink)", "paint ink and push the fluid"),
            ("B", "clear the ink and the flow"),
            ("G", "random splats"),
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

    fn attach_gl(&mut self, gl: Rc<glow::Context>, _clock: PassClock) -> Result<()> {
        // SAFETY: GL call on the current context the front end attached.
        let texture = unsafe { gl.create_texture() }.map_err(|e| anyhow!("texture: {e}"))?;
        self.gl = Some(InkGl {
            present: Present::new(&gl)?,
            triangle: FullscreenTriangle::new(&gl)?,
            gl,
            texture,
            size: (0, 0),
            pixels: Vec::new(),
        });
        Ok(())
    }

    /// Writes the view's image into the texture (a kernel through CUDA–GL interop on CUDA,
    /// else an upload of the CPU's picture) and shows it in the largest viewport of its aspect
    /// centred beside the panels' [`Output::covered`] band.
    fn draw(&mut self, _camera: &Camera, output: Output) -> Result<()> {
        self.covered = output.covered;
        self.frame_shown();
        if let Some(size) = self.draw_through_interop()? {
            return self.present(size, output);
        }
        let (width, height, pixels) = self.image()?;
        let ink_gl = self
            .gl
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        ink_gl.pixels = pixels;
        let gl = &ink_gl.gl;
        // SAFETY: GL calls on the current context; the texture is this sim's, the pixels hold
        // width × height RGBA8 texels.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(ink_gl.texture));
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            if ink_gl.size != (width, height) {
                specify_texture(gl, (width, height), Some(&ink_gl.pixels));
                ink_gl.size = (width, height);
            } else {
                gl.tex_sub_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    0,
                    0,
                    width as i32,
                    height as i32,
                    glow::RGBA,
                    glow::UNSIGNED_BYTE,
                    glow::PixelUnpackData::Slice(&ink_gl.pixels),
                );
            }
        }
        self.present((width, height), output)
    }

    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        Vec::new()
    }

    fn release_gl(&mut self) {
        self.solver.release_gl();
        if let Some(ink_gl) = self.gl.take() {
            ink_gl.present.delete(&ink_gl.gl);
            ink_gl.triangle.delete(&ink_gl.gl);
            // SAFETY: GL call on the current context; the texture is this sim's.
            unsafe { ink_gl.gl.delete_texture(ink_gl.texture) };
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: &str = "kind = \"ink\"\ndescription = \"test\"\n[grid]\ncells = [32, 32]\n\n\
                         [[stroke]]\nduration = 1.0\npath = [[0.2, 0.5]]\nradius = 0.05\n";

    fn open(text: &str) -> Result<InkSim> {
        let source = Source::parse(text, "test", "test.toml")?;
        InkSim::open(&source, &OpenOptions::default())
    }

    /// A left drag over the ink paints where the pointer is (the picture is letterboxed in the
    /// output) and pushes the fluid along the motion; off the picture nothing happens.
    #[test]
    fn dragging_the_pointer_paints_and_pushes_where_it_points() {
        let mut sim = open(SCENE).unwrap();
        let size = [200, 100];
        assert!(
            !sim.pointer([10.0, 50.0], size, true),
            "left of the picture"
        );
        assert!(sim.pointer([100.0, 25.0], size, true));
        assert!(sim.pointer([110.0, 25.0], size, true));
        // x = (110 − 50)/100 of the width, y = 1 − 25/100 of the height.
        let drag = sim.drag.expect("a drag");
        assert_eq!((drag.from, drag.to), ([0.5, 0.75], [0.6, 0.75]));
        let ink = |sim: &InkSim| sim.solver.with_state(|_, ink, _, _| ink.total()).unwrap();
        let pushed = |sim: &InkSim| {
            sim.solver
                .with_state(|flow, _, _, _| flow.u.sample(0.55, 0.75))
                .unwrap()
        };
        sim.step().unwrap();
        assert!(ink(&sim) > 0.0);
        assert!(pushed(&sim) > 0.0, "pushed along the motion");
        assert_eq!(
            sim.drag.unwrap().from,
            [0.6, 0.75],
            "the next segment starts there"
        );
        assert!(
            sim.pointer([110.0, 25.0], size, false),
            "hovering over the picture"
        );
        assert_eq!(sim.last_pointer, None);
        sim.step().unwrap();
        assert_eq!(sim.drag, None, "let go after the frame");
    }

    /// Bad ink input names the file, line and key; a stroke paints ink as it goes.
    #[test]
    fn ink_scenes_are_validated_with_their_lines_and_strokes_paint() {
        let bad = SCENE.replace("radius = 0.05", "radius = -1.0");
        let error = open(&bad).err().unwrap().to_string();
        assert!(
            error.starts_with("test.toml:9: stroke[0].radius: must be in (0, 1] m, got -1"),
            "{error}"
        );
        let error = open(&SCENE.replace("[32, 32]", "[32, 99999]"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with(
                "test.toml:4: grid.cells: must be 8 to 4096 cells each, got [32, 99999]"
            ),
            "{error}"
        );
        let mut sim = open(SCENE).unwrap();
        for _ in 0..10 {
            sim.step().unwrap();
        }
        assert!(sim.solver.with_state(|_, ink, _, _| ink.total()).unwrap() > 0.0);
        let frame = sim.frame().unwrap();
        let table = frame.table();
        assert_eq!(table.rows(), 32 * 32);
        assert_eq!(table.columns[9].0, "ink_b");
    }
}
