//! A particles state read back: the fountain's particles (and its basin as a field for
//! `--format npy`) or a body's nodes, as tables, statistics and summary lines.

use super::body::Body;
use super::scene::ParticlesScene;
use super::sim::State;
use crate::output::{Column, Grid, Table};
use crate::sims::{stats_row, Frame};
use glam::Vec3;
use serde_json::value::RawValue;

/// A copy of what `simulate` exports.
pub enum ParticlesFrame {
    /// The fountain's particles and basin.
    Fountain {
        /// Positions, m.
        position: Vec<Vec3>,
        /// Velocities, m/s.
        velocity: Vec<Vec3>,
        /// Ages, s.
        age: Vec<f32>,
        /// Opacities.
        alpha: Vec<f32>,
        /// Particles emitted since the start.
        emitted: u64,
        /// Landings in the last step.
        landed: usize,
        /// The basin's heights above its level, m, row by row (z), `nodes` per row.
        basin: Vec<f32>,
        /// The basin's nodes per side.
        nodes: usize,
        /// The basin's node spacing, m.
        spacing: f32,
    },
    /// A body's nodes.
    Body {
        /// The body.
        body: Box<Body>,
        /// Gravity (for the potential energy), m/s².
        gravity: Vec3,
    },
}

impl ParticlesFrame {
    /// A copy of `state`.
    pub fn new(state: &State, scene: &ParticlesScene) -> ParticlesFrame {
        match state {
            State::Fountain(f) => ParticlesFrame::Fountain {
                position: f.position.clone(),
                velocity: f.velocity.clone(),
                age: f.age.clone(),
                alpha: (0..f.len()).map(|k| f.alpha(k)).collect(),
                emitted: f.emitted,
                landed: f.landed,
                basin: f.surface.height.clone(),
                nodes: f.surface.n,
                spacing: f.surface.h,
            },
            State::Body(b) => ParticlesFrame::Body {
                body: Box::new(b.clone()),
                gravity: Vec3::from(scene.world.gravity),
            },
        }
    }
}

/// The statistics of a body: energies (J; potential measured from y = 0), strain, extent.
#[derive(serde::Serialize)]
struct BodyStats {
    step: u64,
    time: f64,
    nodes: usize,
    springs: usize,
    energy: f64,
    kinetic: f64,
    potential: f64,
    elastic: f64,
    max_strain: f32,
    lowest: f32,
    centre: [f32; 3],
    step_ms: f64,
}

/// The statistics of the fountain: particles and the basin's surface.
#[derive(serde::Serialize)]
struct FountainStats {
    step: u64,
    time: f64,
    alive: usize,
    emitted: u64,
    landed: usize,
    basin_lowest: f32,
    basin_highest: f32,
    basin_volume: f64,
    step_ms: f64,
}

impl Frame for ParticlesFrame {
    /// One row per particle (`id,x,y,z,vx,vy,vz,age,alpha`) or node
    /// (`id,x,y,z,vx,vy,vz,pinned`); positions m, velocities m/s, ages s.
    fn table(&self) -> Table {
        let (position, velocity) = match self {
            ParticlesFrame::Fountain {
                position, velocity, ..
            } => (position, velocity),
            ParticlesFrame::Body { body, .. } => (&body.position, &body.velocity),
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
        match self {
            ParticlesFrame::Fountain { age, alpha, .. } => {
                table.push("age", Column::F32(age.clone()));
                table.push("alpha", Column::F32(alpha.clone()));
            }
            ParticlesFrame::Body { body, .. } => {
                let pinned = body.pinned.iter().map(|&p| u32::from(p)).collect();
                table.push("pinned", Column::U32(pinned));
            }
        }
        table
    }

    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue> {
        match self {
            ParticlesFrame::Fountain {
                position,
                emitted,
                landed,
                basin,
                spacing,
                ..
            } => {
                let sum: f64 = basin.iter().map(|&u| f64::from(u)).sum();
                stats_row(&FountainStats {
                    step,
                    time,
                    alive: position.len(),
                    emitted: *emitted,
                    landed: *landed,
                    basin_lowest: basin.iter().copied().fold(0.0, f32::min),
                    basin_highest: basin.iter().copied().fold(0.0, f32::max),
                    basin_volume: sum * f64::from(*spacing).powi(2),
                    step_ms,
                })
            }
            ParticlesFrame::Body { body, gravity } => {
                let figures = BodyFigures::of(body, *gravity);
                stats_row(&BodyStats {
                    step,
                    time,
                    nodes: body.len(),
                    springs: body.springs.len(),
                    energy: figures.energy(),
                    kinetic: figures.kinetic,
                    potential: figures.potential,
                    elastic: figures.elastic,
                    max_strain: figures.max_strain,
                    lowest: body
                        .position
                        .iter()
                        .map(|p| p.y)
                        .fold(f32::INFINITY, f32::min),
                    centre: body.centre().to_array(),
                    step_ms,
                })
            }
        }
    }

    fn summary(&self) -> Vec<String> {
        match self {
            ParticlesFrame::Fountain {
                position,
                emitted,
                basin,
                ..
            } => vec![fountain_line(
                position.len(),
                *emitted,
                basin_highest(basin).into(),
            )],
            ParticlesFrame::Body { body, gravity } => {
                vec![BodyFigures::of(body, *gravity).line()]
            }
        }
    }

    /// The fountain's basin: `basin_height` (m above the level, rows along z).
    fn fields(&self) -> Vec<Grid> {
        match self {
            ParticlesFrame::Fountain { basin, nodes, .. } => {
                vec![Grid::new("basin_height", *nodes, *nodes, 1, basin.clone())]
            }
            ParticlesFrame::Body { .. } => Vec::new(),
        }
    }
}

/// The fountain's summary line: particles alive, emitted since the start, and the basin's
/// largest |height| (m; what the GPU's `reduce_fountain` reduces).
pub fn fountain_line(alive: usize, emitted: u64, highest: f64) -> String {
    format!(
        "{alive} particles alive ({emitted} emitted), the basin's largest |height| {highest:.2e} m"
    )
}

/// The basin's largest |height| (m), the fountain line's figure (the GPU's `reduce_fountain`
/// reduces the same): a NaN node has no size and is passed over (f32::max), an infinite one is
/// the largest.
pub fn basin_highest(height: &[f32]) -> f32 {
    height.iter().fold(0.0, |m: f32, u| m.max(u.abs()))
}

/// The basin's non-finite nodes (the GPU's `reduce_fountain` counts the same): the fountain
/// has blown up when any is.
pub fn non_finite_heights(height: &[f32]) -> usize {
    height.iter().filter(|u| !u.is_finite()).count()
}

/// The fountain's particles with a non-finite position or velocity (the GPU's
/// `reduce_fountain` counts the same over the particles alive): the fountain has blown up when
/// any is. Such a particle would live on to the end of its lifetime (a NaN is never below the
/// kill height nor in the basin), be sorted by a NaN depth and drawn.
pub fn non_finite_particles(position: &[Vec3], velocity: &[Vec3]) -> usize {
    position
        .iter()
        .zip(velocity)
        .filter(|(x, v)| !(x.is_finite() && v.is_finite()))
        .count()
}

/// A body's nodes with a non-finite position (the GPU's `reduce_nodes` counts the same).
pub fn non_finite_nodes(position: &[Vec3]) -> usize {
    position.iter().filter(|p| !p.is_finite()).count()
}

/// What the end of a frame found not finite, the step's check: counted on the host's state
/// ([`NonFinite::of`]) or, on CUDA, by the frame's end-of-frame reductions (`reduce_fountain`,
/// `reduce_nodes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonFinite {
    /// The basin's nodes (a height), or a body's nodes (a position).
    pub nodes: u64,
    /// The fountain's particles alive (a position or a velocity); 0 for a body.
    pub particles: u64,
}

impl NonFinite {
    /// The counts of `state`.
    pub fn of(state: &State) -> NonFinite {
        match state {
            State::Fountain(f) => NonFinite {
                nodes: non_finite_heights(&f.surface.height) as u64,
                particles: non_finite_particles(&f.position, &f.velocity) as u64,
            },
            State::Body(b) => NonFinite {
                nodes: non_finite_nodes(&b.position) as u64,
                particles: 0,
            },
        }
    }

    /// Whether everything counted is finite.
    pub fn none(&self) -> bool {
        self.nodes == 0 && self.particles == 0
    }

    /// The step's error at `time` (s) for a fountain or a body: what is not finite, and what
    /// to change.
    pub fn error(&self, time: f64, fountain: bool) -> String {
        let counted = |n: u64, what: &str| {
            (n > 0).then(|| format!("{n} {what}{}", if n == 1 { "" } else { "s" }))
        };
        let (nodes, advice) = if fountain {
            (
                "basin node",
                "lower the drag, the wind or the basin's wave speed",
            )
        } else {
            ("node", "lower the stiffness or raise the substeps")
        };
        let what: Vec<String> = [
            counted(self.particles, "particle"),
            counted(self.nodes, nodes),
        ]
        .into_iter()
        .flatten()
        .collect();
        let what = what.join(" and ");
        format!(
            "time {time:.3} s: the simulation is no longer finite ({what} not finite); {advice}"
        )
    }
}

/// A body's figures on the statistics panel (its summary line): energies, J (potential from
/// the origin along gravity, so above y = 0 under the presets' gravity), and the largest spring
/// strain. On CUDA they are reduced on the GPU (`cuda/stats.rs`, the `body_stats` kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BodyFigures {
    /// Σ ½m|v|² over the nodes.
    pub kinetic: f64,
    /// Σ −m·g·x over the nodes.
    pub potential: f64,
    /// Σ ½k(l − l₀)² over the springs.
    pub elastic: f64,
    /// max |l − l₀|/l₀ over the springs (0 without any).
    pub max_strain: f32,
}

impl BodyFigures {
    /// `body`'s in `gravity` (m/s²), measured on the host ([`Body::energy`],
    /// [`Body::max_strain`]).
    pub fn of(body: &Body, gravity: Vec3) -> BodyFigures {
        let (kinetic, potential, elastic) = body.energy(gravity);
        BodyFigures {
            kinetic,
            potential,
            elastic,
            max_strain: body.max_strain(),
        }
    }

    /// Their sum, J.
    pub fn energy(&self) -> f64 {
        self.kinetic + self.potential + self.elastic
    }

    /// The summary line.
    pub fn line(&self) -> String {
        format!(
            "energy {:.4} J (kinetic {:.4}, potential {:.4}, elastic {:.4}), max strain {:.4}",
            self.energy(),
            self.kinetic,
            self.potential,
            self.elastic,
            self.max_strain
        )
    }
}
