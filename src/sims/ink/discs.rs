//! Discs that move: scripted ones (`[[obstacle]]` with a `velocity`, for its time span) and
//! the one the pointer drags. Before each substep each disc is redrawn where it is into the
//! solid mask and the moving ones are handed to the solver as moving walls
//! ([`MovingDisc`]: their cells' closed faces carry their velocity), so a disc pushes the fluid
//! ahead of it and draws it in behind (docs/ink.md, "Obstacles").
//!
//! The solid cells are the painted ones ([`InkSim::painted`]) and every disc where it is drawn:
//! a disc moved over a painted wall or another disc leaves them whole. Only the rows a change
//! covers are drawn again and handed to the solver ([`InkSolver::set_walls`]), not the grid.
//!
//! [`InkSolver::set_walls`]: super::solver::InkSolver::set_walls

use super::boundary::{disc_rows, MovingDisc};
use super::scene::Obstacle;
use super::sim::InkSim;
use std::ops::Range;

impl InkSim {
    /// Before a substep around time `t` (s): every disc at its scripted position, the moving
    /// ones — scripted, or dragged (the pointer's motion over the last frame, per second) —
    /// handed to the solver with their velocities; once all rest, their faces rest too.
    pub(super) fn move_discs(&mut self, t: f32) {
        let frame_dt = self.solver.params.dt;
        let obstacles = &self.scene.obstacles;
        let first_new = self.disc_drawn.len().min(obstacles.len());
        let new: Vec<[f32; 2]> = obstacles[first_new..]
            .iter()
            .map(|o| o.position(t))
            .collect();
        self.disc_drawn.extend(new);
        // The rows of the walls that moved in the last substep: their faces rest again.
        let mut rows = self.walls_rows.take();
        let mut moving = Vec::new();
        let mut moving_rows = None;
        for (k, o) in obstacles.iter().enumerate() {
            let position = o.position(t);
            let mut velocity = o.scripted_velocity(t);
            if let (Some(dragged), Some(from)) = (self.dragged, self.dragged_from) {
                if dragged == k {
                    velocity[0] += (o.center[0] - from[0]) / frame_dt;
                    velocity[1] += (o.center[1] - from[1]) / frame_dt;
                }
            }
            if position != self.disc_drawn[k] {
                rows = union(rows, self.rows_of(self.disc_drawn[k], o.radius));
                rows = union(rows, self.rows_of(position, o.radius));
                self.disc_drawn[k] = position;
            }
            if velocity != [0.0; 2] {
                moving_rows = union(moving_rows, self.rows_of(position, o.radius));
                moving.push(MovingDisc {
                    center: position,
                    radius: o.radius,
                    velocity,
                });
            }
        }
        let Some(rows) = union(rows, moving_rows.clone().unwrap_or(0..0)) else {
            return;
        };
        self.walls_rows = moving_rows;
        let cells = self.draw_rows(rows.clone());
        self.solver.set_walls(rows, &cells, moving);
    }

    /// Moves the disc being dragged (if any) so it is at `point` now: its cells become solid,
    /// those it left what they are without it (fluid, or painted, or another disc's); its
    /// velocity reaches the fluid at the next step.
    pub(super) fn drag_disc(&mut self, point: [f32; 2]) {
        let Some(k) = self.dragged else { return };
        let t = self.time as f32;
        let old = self.scene.obstacles[k];
        let drawn = self.disc_drawn.get(k).copied().unwrap_or(old.position(t));
        if drawn == point {
            return;
        }
        let offset = [
            old.position(t)[0] - old.center[0],
            old.position(t)[1] - old.center[1],
        ];
        self.scene.obstacles[k] = Obstacle {
            center: [point[0] - offset[0], point[1] - offset[1]],
            ..old
        };
        if let Some(slot) = self.disc_drawn.get_mut(k) {
            *slot = point;
        }
        let rows = union(
            Some(self.rows_of(drawn, old.radius)),
            self.rows_of(point, old.radius),
        );
        self.redraw(rows.unwrap_or(0..0));
    }

    /// After a frame: the dragged disc's motion is measured from where it is now.
    pub(super) fn discs_after_frame(&mut self) {
        self.dragged_from = self.dragged.map(|k| self.scene.obstacles[k].center);
    }

    /// Paints (`solid`) or erases the cells whose centres are within `radius` of `point`:
    /// painted cells are solid whatever the discs do; erasing leaves the discs (move them with
    /// the move tool).
    pub(super) fn paint_solid(&mut self, point: [f32; 2], radius: f32, solid: bool) {
        let rows = self.rows_of(point, radius);
        {
            let flow = self.solver.flow();
            let nx = flow.nx;
            for j in rows.clone() {
                for i in 0..nx {
                    let (x, y) = flow.p.position(i, j);
                    if (x - point[0]).powi(2) + (y - point[1]).powi(2) <= radius * radius {
                        self.painted[j * nx + i] = solid;
                    }
                }
            }
        }
        self.redraw(rows);
    }

    /// Draws the rows `rows` again (painted cells and discs) and hands them to the solver with
    /// the walls moving now.
    pub(super) fn redraw(&mut self, rows: Range<usize>) {
        let cells = self.draw_rows(rows.clone());
        let moving = self.solver.flow().moving.clone();
        self.solver.set_walls(rows, &cells, moving);
    }

    /// The rows of cells whose centres a disc of `radius` at `center` may cover.
    pub(super) fn rows_of(&self, center: [f32; 2], radius: f32) -> Range<usize> {
        let flow = self.solver.flow();
        disc_rows(center[1], radius, flow.dx, flow.ny)
    }

    /// The solid cells of the rows `rows`, row by row: the painted ones and those whose centres
    /// a disc (where it is drawn) covers.
    fn draw_rows(&self, rows: Range<usize>) -> Vec<bool> {
        let flow = self.solver.flow();
        let nx = flow.nx;
        let discs: Vec<([f32; 2], f32)> = (self.scene.obstacles.iter().zip(&self.disc_drawn))
            .map(|(o, &at)| (at, o.radius))
            .filter(|&(at, r)| {
                let covered = self.rows_of(at, r);
                covered.start < rows.end && rows.start < covered.end
            })
            .collect();
        let mut cells = self.painted[rows.start * nx..rows.end * nx].to_vec();
        for (k, cell) in cells.iter_mut().enumerate() {
            let (x, y) = flow.p.position(k % nx, rows.start + k / nx);
            *cell |= discs.iter().any(|&(c, r)| {
                let (dx, dy) = (x - c[0], y - c[1]);
                dx * dx + dy * dy <= r * r
            });
        }
        cells
    }
}

/// The rows of `a` and `b` and those between; `None` when both are empty.
fn union(a: Option<Range<usize>>, b: Range<usize>) -> Option<Range<usize>> {
    match a {
        _ if b.is_empty() => a,
        Some(a) if !a.is_empty() => Some(a.start.min(b.start)..a.end.max(b.end)),
        _ => Some(b),
    }
}
