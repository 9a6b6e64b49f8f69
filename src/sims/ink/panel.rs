//! Ink's controls: the panel (every parameter live; the grid and the box's sides apply at once
//! or on restart, as each says) and the tools left drag uses — the brush, and painting,
//! erasing or dragging obstacles.

use super::boundary::{SideKind, Walls, SIDES};
use super::brush::Drag;
use super::params::{Advection, PressureSolver, MAX_CELLS};
use super::scene::{Background, Obstacle};
use super::sim::InkSim;
use super::{BrushStamp, Stamp};
use crate::sims::choose;
use anyhow::{anyhow, Result};

/// What left drag does in the viewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Paint ink and push the fluid along the motion.
    Brush,
    /// Make the cells under the brush solid.
    PaintObstacle,
    /// Make the cells under the brush fluid again.
    EraseObstacle,
    /// Drag one of the scene's discs.
    MoveObstacle,
    /// Place a disc of the brush's radius where the button goes down, and drag it while held.
    PlaceDisc,
}

impl Tool {
    /// Every tool, in menu order.
    pub const ALL: [Tool; 5] = [
        Tool::Brush,
        Tool::PaintObstacle,
        Tool::EraseObstacle,
        Tool::MoveObstacle,
        Tool::PlaceDisc,
    ];

    /// The menu name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Brush => "brush (ink and push)",
            Tool::PaintObstacle => "paint obstacle",
            Tool::EraseObstacle => "erase obstacle",
            Tool::MoveObstacle => "drag a disc",
            Tool::PlaceDisc => "place a disc",
        }
    }
}

impl InkSim {
    /// The panel; returns whether the user asked for a restart (a new grid).
    pub(super) fn panel_ui(&mut self, ui: &imgui::Ui) -> Result<bool> {
        use imgui::TreeNodeFlags;
        let mut restart = false;
        if ui.collapsing_header("Ink", TreeNodeFlags::DEFAULT_OPEN) {
            let p = &mut self.solver.params;
            ui.slider("pressure iterations", 1, 200, &mut p.iterations);
            ui.slider("pressure carry-over", 0.0, 1.0, &mut p.pressure_carry_over);
            ui.slider("vorticity", 0.0, 10.0, &mut p.vorticity);
            ui.slider("velocity damping (1/s)", 0.0, 5.0, &mut p.velocity_damping);
            ui.slider("ink fade (1/s)", 0.0, 5.0, &mut p.ink_fade);
            ui.slider("buoyancy", -10.0, 10.0, &mut p.buoyancy);
            ui.slider("time step (s)", 0.001, 0.1, &mut p.dt);
            ui.slider("substeps", 1, 8, &mut p.substeps);
            if let Some(a) = choose(
                ui,
                "advection",
                &Advection::ALL,
                p.advection,
                Advection::name,
            ) {
                p.advection = a;
            }
            let solvers = &PressureSolver::ALL;
            if let Some(s) = choose(ui, "pressure solver", solvers, p.pressure_solver, |s| {
                s.name()
            }) {
                p.pressure_solver = s;
            }
            ui.text(format!(
                "divergence {:.3e} -> {:.3e} 1/s",
                self.solver.report().divergence_before,
                self.solver.report().divergence_after
            ));
        }
        if ui.collapsing_header("Brush and tools", TreeNodeFlags::DEFAULT_OPEN) {
            if let Some(tool) = choose(ui, "left drag", &Tool::ALL, self.tool, Tool::name) {
                self.tool = tool;
            }
            ui.slider("brush size (m)", 0.002, 0.2, &mut self.brush.radius);
            ui.slider(
                "brush concentration (ink/s)",
                0.0,
                100.0,
                &mut self.brush.concentration,
            );
            ui.slider(
                "brush-motion influence (1/s)",
                0.0,
                200.0,
                &mut self.brush.force,
            );
            let stamps = &BrushStamp::ALL;
            let p = &mut self.solver.params;
            if let Some(stamp) = choose(ui, "brush stamp", stamps, p.brush_stamp, BrushStamp::name)
            {
                p.brush_stamp = stamp;
            }
            ui.color_edit3("ink colour", &mut self.brush.color);
            ui.checkbox("random colour per stroke", &mut self.brush.random_colours);
            let mut dark = self.background == Background::Dark;
            if ui.checkbox("dark background", &mut dark) {
                self.background = if dark {
                    Background::Dark
                } else {
                    Background::Paper
                };
            }
            if ui.button("Random splats (G)") {
                self.random_splats();
            }
            ui.same_line();
            if ui.button("Clear (B)") {
                self.clear();
            }
        }
        if ui.collapsing_header("Box and grid", TreeNodeFlags::empty()) {
            let mut boundary = self.solver.params.boundary;
            if let Some(w) = choose(ui, "walls", &Walls::ALL, boundary.walls, Walls::name) {
                boundary.walls = w;
            }
            for (side, label) in SIDES.iter().enumerate() {
                let current = boundary.sides[side];
                if let Some(kind) = choose(ui, label, &SideKind::ALL, current, SideKind::name) {
                    boundary.sides[side] = kind;
                }
            }
            ui.slider("inflow speed (m/s)", 0.0, 5.0, &mut boundary.inflow_speed);
            if boundary != self.solver.params.boundary {
                self.set_boundary(boundary);
            }
            // CUDA runs the original's 2048² and the 4096²; the CPU stops at 2048² (a
            // 4096² CPU step takes seconds).
            let most = if self.solver.cuda_device().is_some() {
                MAX_CELLS
            } else {
                2048
            };
            ui.slider("cells across", 16, most, &mut self.grid_edit[0]);
            ui.slider("ink cells per cell", 1, 4, &mut self.grid_edit[1]);
            if ui.button("Restart with this grid") {
                let p = &mut self.solver.params;
                let ratio = p.cells_y as f32 / p.cells_x as f32;
                p.cells_x = self.grid_edit[0];
                p.cells_y = ((self.grid_edit[0] as f32 * ratio).round() as usize).max(8);
                p.ink_scale = self.grid_edit[1];
                restart = true;
            }
        }
        self.solver
            .params
            .validate()
            .map_err(|e| anyhow!("{}: {}", e.key, e.message))?;
        Ok(restart)
    }

    /// Left drag at `point` (m; `None` off the picture) with the current tool; whether the
    /// event was over the picture.
    pub(super) fn use_tool(&mut self, point: Option<[f32; 2]>, dragging: bool) -> bool {
        let (Some(point), true) = (point, dragging) else {
            self.last_pointer = None;
            self.dragged = None;
            self.dragged_from = None;
            if let Some(drag) = &mut self.drag {
                drag.released = true;
            }
            return point.is_some();
        };
        let pressed = self.last_pointer.is_none();
        match self.tool {
            Tool::Brush => {
                if pressed && self.brush.random_colours {
                    let hue = self.random_unit();
                    self.brush.color = hue_to_rgb(hue);
                }
                match &mut self.drag {
                    Some(drag) if !pressed => drag.to = point,
                    _ => self.drag = Some(Drag::new(point)),
                }
            }
            Tool::PaintObstacle | Tool::EraseObstacle => {
                let solid = self.tool == Tool::PaintObstacle;
                self.paint_solid(point, self.brush.radius, solid);
            }
            Tool::MoveObstacle => {
                if pressed {
                    let t = self.time as f32;
                    self.dragged = self.scene.obstacles.iter().position(|o| {
                        let at = o.position(t);
                        let d2 = (at[0] - point[0]).powi(2) + (at[1] - point[1]).powi(2);
                        d2 <= (1.5 * o.radius).powi(2)
                    });
                    self.dragged_from = self.dragged.map(|k| self.scene.obstacles[k].center);
                }
                self.drag_disc(point);
            }
            Tool::PlaceDisc => {
                if pressed {
                    let disc = Obstacle::resting(point, self.brush.radius);
                    self.scene.obstacles.push(disc);
                    self.disc_drawn.push(point);
                    self.dragged = Some(self.scene.obstacles.len() - 1);
                    self.dragged_from = Some(point);
                    self.redraw(self.rows_of(point, disc.radius));
                }
                self.drag_disc(point);
            }
        }
        self.last_pointer = Some(point);
        true
    }

    /// A pseudo-random number in [0, 1) (xorshift64*: deterministic, so a scripted run with
    /// random splats repeats).
    pub(super) fn random_unit(&mut self) -> f32 {
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        (self.seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Between 5 and 12 splats of random colour, place and direction (the G key).
    pub fn random_splats(&mut self) {
        let (w, h) = (self.scene.params.width, self.scene.params.height());
        let count = 5 + (self.random_unit() * 8.0) as usize;
        for _ in 0..count {
            let angle = self.random_unit() * std::f32::consts::TAU;
            let speed = 0.5 * w.max(h) * (0.5 + self.random_unit());
            let position = [
                w * (0.1 + 0.8 * self.random_unit()),
                h * (0.1 + 0.8 * self.random_unit()),
            ];
            let ink = [self.random_unit(), self.random_unit(), self.random_unit()];
            self.extra_stamps.push(Stamp {
                position,
                radius: 0.03 * w.max(h),
                velocity: [speed * angle.cos(), speed * angle.sin()],
                ink,
                per_second: false,
                direction: None,
            });
        }
    }

    /// Makes `boundary` the box's sides at once: the masks and the pressure stencil follow.
    pub fn set_boundary(&mut self, boundary: super::Boundary) {
        self.solver.set_boundary(boundary);
    }
}

/// A saturated colour of hue `h` (0–1).
fn hue_to_rgb(h: f32) -> [f32; 3] {
    let channel = |offset: f32| {
        let x = (h * 6.0 + offset) % 6.0;
        (((x - 3.0).abs() - 1.0).clamp(0.0, 1.0)) * 0.9 + 0.1
    };
    [channel(0.0), channel(4.0), channel(2.0)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Source;
    use crate::sims::ink::boundary::CHANNEL;
    use crate::sims::ink::Stamp;
    use crate::sims::{OpenOptions, Sim};

    const SCENE: &str = "kind = \"ink\"\n[grid]\ncells = [32, 32]\n\n\
                         [[obstacle]]\ncenter = [0.3, 0.5]\nradius = 0.1\n";

    fn open() -> InkSim {
        let source = Source::parse(SCENE, "test", "test.toml").unwrap();
        // The panel's logic, on the CPU solver wherever the tests run.
        let options = OpenOptions {
            backend: crate::sims::Backend::Cpu,
            ..OpenOptions::default()
        };
        InkSim::open(&source, &options).unwrap()
    }

    fn solid_at(sim: &InkSim, x: f32, y: f32) -> bool {
        let flow = sim.solver.flow();
        let (i, j) = ((x / flow.dx) as usize, (y / flow.dx) as usize);
        flow.solid()[j * flow.nx + i]
    }

    /// Painting makes the cells under the brush solid (about π r²/dx² of them), their faces
    /// close, and erasing opens them again. The picture spans pixels 50–150 of a 200 × 100
    /// output.
    #[test]
    fn painting_and_erasing_obstacles_edits_the_solid_cells() {
        let mut sim = open();
        let size = [200, 100];
        let scene_cells = sim.solver.flow().solid().iter().filter(|&&s| s).count();
        sim.tool = Tool::PaintObstacle;
        sim.brush.radius = 0.1;
        assert!(sim.pointer([125.0, 50.0], size, true));
        let painted = sim.solver.flow().solid().iter().filter(|&&s| s).count() - scene_cells;
        let expected = std::f32::consts::PI * 0.01 * 32.0 * 32.0;
        assert!(
            (painted as f32 - expected).abs() < 0.15 * expected,
            "{painted} cells painted, about {expected} expected"
        );
        assert!(solid_at(&sim, 0.75, 0.5) && !solid_at(&sim, 0.75, 0.65));
        sim.step().unwrap();
        assert_eq!(
            sim.solver
                .with_state(|flow, _, _, _| flow.u.get(24, 16))
                .unwrap(),
            0.0,
            "a face inside is closed"
        );
        sim.pointer([125.0, 50.0], size, false);
        sim.tool = Tool::EraseObstacle;
        sim.pointer([125.0, 50.0], size, true);
        let left = sim.solver.flow().solid().iter().filter(|&&s| s).count();
        assert_eq!(
            left, scene_cells,
            "the scene's disc stays, the painted one is gone"
        );
    }

    /// Dragging a disc moves its solid cells with it; releasing lets go.
    #[test]
    fn a_disc_can_be_dragged() {
        let mut sim = open();
        let size = [200, 100];
        sim.tool = Tool::MoveObstacle;
        assert!(solid_at(&sim, 0.3, 0.5) && !solid_at(&sim, 0.7, 0.5));
        sim.pointer([80.0, 50.0], size, true);
        assert_eq!(sim.dragged, Some(0));
        sim.pointer([120.0, 50.0], size, true);
        assert!(!solid_at(&sim, 0.3, 0.5) && solid_at(&sim, 0.7, 0.5));
        assert_eq!(sim.scene.obstacles[0].center, [0.7, 0.5]);
        sim.pointer([120.0, 50.0], size, false);
        assert_eq!(sim.dragged, None);
        sim.pointer([60.0, 90.0], size, true);
        assert_eq!(sim.dragged, None, "nothing to drag there");
    }

    /// A click with "place a disc" puts a disc of the brush's radius there (about π r²/dx²
    /// solid cells) and drags it while held; pushed at, no flow enters it: every face of every
    /// solid cell stays closed.
    #[test]
    fn a_placed_disc_is_solid_draggable_and_closed_to_the_flow() {
        let mut sim = open();
        let size = [200, 100];
        let solids = |sim: &InkSim| sim.solver.flow().solid().iter().filter(|&&s| s).count();
        let scene_cells = solids(&sim);
        sim.tool = Tool::PlaceDisc;
        sim.brush.radius = 0.1;
        assert!(sim.pointer([125.0, 50.0], size, true));
        assert_eq!(sim.scene.obstacles.len(), 2);
        assert_eq!(sim.scene.obstacles[1].center, [0.75, 0.5]);
        assert_eq!(sim.scene.obstacles[1].radius, 0.1);
        let placed = solids(&sim) - scene_cells;
        let expected = std::f32::consts::PI * 0.01 * 32.0 * 32.0;
        assert!(
            (placed as f32 - expected).abs() < 0.15 * expected,
            "{placed} cells placed, about {expected} expected"
        );
        sim.pointer([135.0, 50.0], size, true);
        assert_eq!(sim.scene.obstacles[1].center, [0.85, 0.5]);
        assert!(solid_at(&sim, 0.9, 0.5) && !solid_at(&sim, 0.66, 0.5));
        assert_eq!(solids(&sim) - scene_cells, placed, "the same disc, moved");
        sim.pointer([135.0, 50.0], size, false);
        assert_eq!(sim.dragged, None);
        // Push the water at it from the left for a few frames.
        for _ in 0..5 {
            sim.extra_stamps.push(Stamp {
                position: [0.6, 0.5],
                radius: 0.08,
                velocity: [3.0, 0.5],
                ink: [0.0; 3],
                per_second: false,
                direction: None,
            });
            sim.step().unwrap();
        }
        let (open_faces, pushed) = sim
            .solver
            .with_state(|flow, _, _, _| {
                let mut open = Vec::new();
                for j in 0..flow.ny {
                    for i in 0..flow.nx {
                        if !flow.solid()[j * flow.nx + i] {
                            continue;
                        }
                        // The faces towards fluid cells (between two solid cells: the
                        // mirror image of the fluid's tangential velocity).
                        let (ii, jj) = (i as isize, j as isize);
                        let faces = [
                            flow.u.get(i, j) * f32::from(u8::from(flow.fluid(ii - 1, jj))),
                            flow.u.get(i + 1, j) * f32::from(u8::from(flow.fluid(ii + 1, jj))),
                            flow.v.get(i, j) * f32::from(u8::from(flow.fluid(ii, jj - 1))),
                            flow.v.get(i, j + 1) * f32::from(u8::from(flow.fluid(ii, jj + 1))),
                        ];
                        if faces.iter().any(|&f| f != 0.0) {
                            open.push((i, j, faces));
                        }
                    }
                }
                (open, flow.u.get(21, 16))
            })
            .unwrap();
        assert!(
            pushed > 0.1,
            "the water moves towards the disc: {pushed} m/s"
        );
        assert!(
            open_faces.is_empty(),
            "flow into solid cells: {open_faces:?}"
        );
    }

    /// Opening a side applies at once: the pressure equation gains its outflow.
    #[test]
    fn the_sides_change_live() {
        let mut sim = open();
        assert!(sim.solver.flow().poisson.pure_neumann);
        let mut boundary = sim.solver.params.boundary;
        boundary.sides = CHANNEL;
        sim.set_boundary(boundary);
        assert!(!sim.solver.flow().poisson.pure_neumann);
        sim.solver.params.pressure_solver = PressureSolver::Multigrid;
        sim.step().unwrap();
        let inflow = sim
            .solver
            .with_state(|flow, _, _, _| flow.u.get(0, 10))
            .unwrap();
        assert_eq!(inflow, boundary.inflow_speed);
        assert!(
            sim.solver
                .with_state(|flow, _, _, _| flow.u.get(32, 10))
                .unwrap()
                > 0.5,
            "fluid leaves on the right"
        );
    }

    /// The solver's parameters the panel's sliders and menus edit reach the solver at the next
    /// step, with no restart (the "every control live"): the pressure iterations run.
    #[test]
    fn the_solver_parameters_change_live() {
        let mut sim = open();
        sim.solver.params.pressure_solver = PressureSolver::Jacobi;
        for iterations in [7, 13] {
            sim.solver.params.iterations = iterations;
            sim.step().unwrap();
            assert_eq!(sim.solver.report().iterations, iterations);
        }
    }
}
