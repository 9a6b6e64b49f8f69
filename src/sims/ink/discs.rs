//! Discs that move: scripted ones (`[[obstacle]]` with a `velocity`, for its time span) and
//! the one the pointer drags. Before each substep each disc is redrawn where it is into the
//! solid mask and the moving ones are handed to the solver as moving walls
//! ([`MovingDisc`]: their cells' closed faces carry their velocity), so a disc pushes the fluid
//! ahead of it and draws it in behind (docs/ink.md, "Obstacles").

use super::boundary::MovingDisc;
use super::scene::Obstacle;
use super::sim::InkSim;

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
        let mut moving = Vec::new();
        let mut moves = Vec::new();
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
                moves.push((k, self.disc_drawn[k], position));
            }
            if velocity != [0.0; 2] {
                moving.push(MovingDisc {
                    center: position,
                    radius: o.radius,
                    velocity,
                });
            }
        }
        if moves.is_empty() && moving.is_empty() && !self.walls_moving {
            return;
        }
        let flow = self.solver.flow();
        let mut mask = flow.solid().to_vec();
        for &(k, old, new) in &moves {
            let radius = obstacles[k].radius;
            redraw(&mut mask, flow, radius, old, new);
            self.disc_drawn[k] = new;
        }
        self.walls_moving = !moving.is_empty();
        self.solver.set_walls(mask, moving);
    }

    /// Moves the disc being dragged (if any) so it is at `point` now: its cells become solid,
    /// those it left fluid again; its velocity reaches the fluid at the next step.
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
        self.edit_solid(|mask, x, y, cell| {
            let inside =
                |c: [f32; 2]| (x - c[0]).powi(2) + (y - c[1]).powi(2) <= old.radius.powi(2);
            if inside(point) {
                mask[cell] = true;
            } else if inside(drawn) {
                mask[cell] = false;
            }
        });
    }

    /// After a frame: the dragged disc's motion is measured from where it is now.
    pub(super) fn discs_after_frame(&mut self) {
        self.dragged_from = self.dragged.map(|k| self.scene.obstacles[k].center);
    }
}

/// A disc of `radius` moved from `old` to `new` in `mask`: the cells whose centres it covers
/// now solid, those it covered before and no longer fluid.
fn redraw(
    mask: &mut [bool],
    flow: &super::fields::Flow,
    radius: f32,
    old: [f32; 2],
    new: [f32; 2],
) {
    let inside =
        |c: [f32; 2], x: f32, y: f32| (x - c[0]).powi(2) + (y - c[1]).powi(2) <= radius.powi(2);
    for (k, cell) in mask.iter_mut().enumerate() {
        let (x, y) = flow.p.position(k % flow.nx, k / flow.nx);
        if inside(new, x, y) {
            *cell = true;
        } else if inside(old, x, y) {
            *cell = false;
        }
    }
}
