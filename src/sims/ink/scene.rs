//! Ink's scene section: the grid, the parameters, the display, circular obstacles, and the
//! scripted brush — strokes (a path painted over a time span) and splats (one instant) — so a
//! run is reproducible headless.

use super::boundary::{SideKind, Walls};
use super::brush::{Brush, BrushFile};
use super::params::{Advection, InkParams, PressureSolver, MAX_CELLS};
use super::Stamp;
use crate::scene::{syntax_error, Invalid, SceneError, Source};
use serde::Deserialize;

/// What the ink is drawn on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Background {
    /// White paper, the ink darkens it (the original's ink-wash look: colour 1 − ink).
    Paper,
    /// Black, the ink glows in its colour (coloured dye).
    Dark,
}

/// A solid disc.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obstacle {
    /// Centre, m.
    pub center: [f32; 2],
    /// Radius, m.
    pub radius: f32,
    /// Scripted motion: the disc moves at this velocity (m/s) from `start` for `duration`
    /// seconds, pushing the fluid (a moving wall); it rests before and after.
    #[serde(default)]
    pub velocity: [f32; 2],
    /// When the scripted motion starts, s.
    #[serde(default)]
    pub start: f32,
    /// How long it lasts, s.
    #[serde(default)]
    pub duration: f32,
}

impl Obstacle {
    /// A disc at rest at `center`.
    pub fn resting(center: [f32; 2], radius: f32) -> Obstacle {
        Obstacle {
            center,
            radius,
            velocity: [0.0; 2],
            start: 0.0,
            duration: 0.0,
        }
    }

    /// Where the script has taken the disc by time `t` (s): `center` plus the velocity times
    /// the time it has moved.
    pub fn position(&self, t: f32) -> [f32; 2] {
        let moved = (t - self.start).clamp(0.0, self.duration);
        [
            self.center[0] + self.velocity[0] * moved,
            self.center[1] + self.velocity[1] * moved,
        ]
    }

    /// The script's velocity at time `t`, m/s (zero outside its time span).
    pub fn scripted_velocity(&self, t: f32) -> [f32; 2] {
        if t >= self.start && t < self.start + self.duration {
            self.velocity
        } else {
            [0.0; 2]
        }
    }
}

/// A brush moved along `path` from `start` for `duration` seconds at constant speed, painting
/// `ink` per second and pushing the fluid with `force` × its velocity per second.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stroke {
    /// When the stroke starts, s.
    #[serde(default)]
    pub start: f32,
    /// How long it lasts, s.
    pub duration: f32,
    /// The points it passes through, m.
    pub path: Vec<[f32; 2]>,
    /// Brush radius, m.
    pub radius: f32,
    /// Ink painted per second at the brush centre, per channel (colour × concentration).
    #[serde(default = "white")]
    pub ink: [f32; 3],
    /// Brush-motion influence, 1/s: the fluid is accelerated by force × the brush velocity.
    #[serde(default = "default_force")]
    pub force: f32,
}

/// One instant's push and ink.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Splat {
    /// When, s.
    pub time: f32,
    /// Where, m.
    pub position: [f32; 2],
    /// Velocity added at the centre, m/s.
    #[serde(default)]
    pub velocity: [f32; 2],
    /// Gaussian radius, m.
    pub radius: f32,
    /// Ink added at the centre, per channel.
    #[serde(default)]
    pub ink: [f32; 3],
}

fn white() -> [f32; 3] {
    [1.0; 3]
}

fn default_force() -> f32 {
    20.0
}

/// A validated ink scene.
#[derive(Clone, Debug, PartialEq)]
pub struct InkScene {
    /// Preset name or file stem.
    pub name: String,
    /// One line saying what the scene shows.
    pub description: String,
    /// Parameters.
    pub params: InkParams,
    /// What the ink is drawn on.
    pub background: Background,
    /// The grid on the CUDA backend, when it differs from `params`' (the original's 2048² where
    /// the CPU runs 512²).
    pub cuda_cells: Option<[usize; 2]>,
    /// The viewer's brush at start (the `[brush]` section over [`Brush::default_for`]).
    pub brush: Brush,
    /// Solid discs.
    pub obstacles: Vec<Obstacle>,
    /// Scripted strokes.
    pub strokes: Vec<Stroke>,
    /// Scripted splats.
    pub splats: Vec<Splat>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InkFile {
    #[allow(dead_code)]
    kind: String,
    description: Option<String>,
    grid: Option<GridFile>,
    params: Option<ParamsFile>,
    display: Option<DisplayFile>,
    boundary: Option<BoundaryFile>,
    brush: Option<BrushFile>,
    #[serde(default)]
    obstacle: Vec<Obstacle>,
    #[serde(default)]
    stroke: Vec<Stroke>,
    #[serde(default)]
    splat: Vec<Splat>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    cells: Option<[usize; 2]>,
    cuda_cells: Option<[usize; 2]>,
    ink_scale: Option<usize>,
    width: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamsFile {
    dt: Option<f32>,
    substeps: Option<u32>,
    iterations: Option<u32>,
    pressure_solver: Option<PressureSolver>,
    pressure_carry_over: Option<f32>,
    advection: Option<Advection>,
    vorticity: Option<f32>,
    velocity_damping: Option<f32>,
    ink_fade: Option<f32>,
    buoyancy: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundaryFile {
    walls: Option<Walls>,
    left: Option<SideKind>,
    right: Option<SideKind>,
    bottom: Option<SideKind>,
    top: Option<SideKind>,
    inflow_speed: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DisplayFile {
    background: Option<Background>,
}

impl InkScene {
    /// Parses and validates an ink scene source.
    pub fn from_source(source: &Source) -> Result<InkScene, SceneError> {
        let file: InkFile = toml::from_str(&source.text)
            .map_err(|error| syntax_error(&source.text, &source.origin, &error))?;
        let mut params = InkParams::default();
        let cuda_cells = file.grid.as_ref().and_then(|g| g.cuda_cells);
        if let Some(grid) = file.grid {
            if let Some([x, y]) = grid.cells {
                (params.cells_x, params.cells_y) = (x, y);
            }
            params.ink_scale = grid.ink_scale.unwrap_or(params.ink_scale);
            params.width = grid.width.unwrap_or(params.width);
        }
        if let Some(p) = file.params {
            params.dt = p.dt.unwrap_or(params.dt);
            params.substeps = p.substeps.unwrap_or(params.substeps);
            params.iterations = p.iterations.unwrap_or(params.iterations);
            params.pressure_solver = p.pressure_solver.unwrap_or(params.pressure_solver);
            params.pressure_carry_over =
                p.pressure_carry_over.unwrap_or(params.pressure_carry_over);
            params.advection = p.advection.unwrap_or(params.advection);
            params.vorticity = p.vorticity.unwrap_or(params.vorticity);
            params.velocity_damping = p.velocity_damping.unwrap_or(params.velocity_damping);
            params.ink_fade = p.ink_fade.unwrap_or(params.ink_fade);
            params.buoyancy = p.buoyancy.unwrap_or(params.buoyancy);
        }
        if let Some(b) = file.boundary {
            let boundary = &mut params.boundary;
            boundary.walls = b.walls.unwrap_or(boundary.walls);
            for (side, kind) in [b.left, b.right, b.bottom, b.top].into_iter().enumerate() {
                boundary.sides[side] = kind.unwrap_or(boundary.sides[side]);
            }
            boundary.inflow_speed = b.inflow_speed.unwrap_or(boundary.inflow_speed);
        }
        let brush_file = file.brush.unwrap_or_default();
        params.brush_stamp = brush_file.stamp.unwrap_or(params.brush_stamp);
        let brush = Brush::default_for(params.width).with(&brush_file);
        let scene = InkScene {
            name: source.name.clone(),
            description: file.description.unwrap_or_default(),
            params,
            background: file
                .display
                .and_then(|d| d.background)
                .unwrap_or(Background::Paper),
            cuda_cells,
            brush,
            obstacles: file.obstacle,
            strokes: file.stroke,
            splats: file.splat,
        };
        scene
            .validate()
            .map_err(|invalid| source.error_at(invalid))?;
        Ok(scene)
    }

    /// Checks the parameters, and that every obstacle, stroke and splat is finite, sized and
    /// inside the domain.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.params.validate()?;
        if let Some([x, y]) = self.cuda_cells {
            let (cx, cy) = (self.params.cells_x, self.params.cells_y);
            let sized = [x, y].iter().all(|n| (8..=MAX_CELLS).contains(n))
                && [x, y]
                    .iter()
                    .all(|n| n * self.params.ink_scale <= MAX_CELLS);
            if !sized || x * cy != y * cx {
                return Err(Invalid::new(
                    "grid.cuda_cells",
                    format!(
                        "must be 8 to {MAX_CELLS} cells each (with the ink grid at most \
                         {MAX_CELLS}) in grid.cells' aspect {cx}:{cy}, got [{x}, {y}]"
                    ),
                ));
            }
        }
        let (w, h) = (self.params.width, self.params.height());
        let inside = |key: String, p: [f32; 2]| {
            if p.iter().all(|v| v.is_finite())
                && (0.0..=w).contains(&p[0])
                && (0.0..=h).contains(&p[1])
            {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!(
                        "[{}, {}] lies outside the domain [0, {w}] × [0, {h}] m",
                        p[0], p[1]
                    ),
                ))
            }
        };
        let radius = |key: String, r: f32| {
            if r.is_finite() && r > 0.0 && r <= w.max(h) {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!("must be in (0, {}] m, got {r}", w.max(h)),
                ))
            }
        };
        let finite = |key: String, values: &[f32], least: f32| match values
            .iter()
            .find(|v| !(v.is_finite() && **v >= least && v.abs() <= 1e6))
        {
            None => Ok(()),
            Some(v) => Err(Invalid::new(
                key,
                format!("must be finite, at least {least} and at most 1e6 in size, got {v}"),
            )),
        };
        self.brush.validate(w.max(h))?;
        for (k, o) in self.obstacles.iter().enumerate() {
            inside(format!("obstacle[{k}].center"), o.center)?;
            radius(format!("obstacle[{k}].radius"), o.radius)?;
            finite(format!("obstacle[{k}].velocity"), &o.velocity, -1e6)?;
            finite(format!("obstacle[{k}].start"), &[o.start], 0.0)?;
            finite(format!("obstacle[{k}].duration"), &[o.duration], 0.0)?;
            if o.velocity != [0.0; 2] && o.duration == 0.0 {
                return Err(Invalid::new(
                    format!("obstacle[{k}].duration"),
                    "a moving disc (velocity ≠ 0) needs a duration > 0 s",
                ));
            }
            let end = o.position(o.start + o.duration);
            inside(format!("obstacle[{k}].velocity (where it ends)"), end)?;
        }
        for (k, s) in self.strokes.iter().enumerate() {
            if s.path.is_empty() {
                return Err(Invalid::new(
                    format!("stroke[{k}].path"),
                    "needs at least one point",
                ));
            }
            for p in &s.path {
                inside(format!("stroke[{k}].path"), *p)?;
            }
            finite(format!("stroke[{k}].start"), &[s.start], 0.0)?;
            if !(s.duration.is_finite() && s.duration > 0.0 && s.duration <= 1e6) {
                return Err(Invalid::new(
                    format!("stroke[{k}].duration"),
                    format!("must be in (0, 1e6] s, got {}", s.duration),
                ));
            }
            radius(format!("stroke[{k}].radius"), s.radius)?;
            finite(format!("stroke[{k}].ink"), &s.ink, 0.0)?;
            finite(format!("stroke[{k}].force"), &[s.force], 0.0)?;
        }
        for (k, s) in self.splats.iter().enumerate() {
            finite(format!("splat[{k}].time"), &[s.time], 0.0)?;
            inside(format!("splat[{k}].position"), s.position)?;
            radius(format!("splat[{k}].radius"), s.radius)?;
            finite(format!("splat[{k}].velocity"), &s.velocity, -1e6)?;
            finite(format!("splat[{k}].ink"), &s.ink, 0.0)?;
        }
        Ok(())
    }

    /// The scene rescaled to about `cells` velocity cells in `grid.cells`' aspect (`bench
    /// --particles`), validated; the CUDA grid is then the same. A count outside the range the
    /// aspect allows (8 to 4096 / ink_scale cells per side) is refused naming `--particles`.
    pub fn rescale(&mut self, cells: u64) -> Result<(), Invalid> {
        let p = &self.params;
        let (cx, cy) = (p.cells_x, p.cells_y);
        let most = (MAX_CELLS / p.ink_scale.max(1)) as f64;
        let ratio = cy as f64 / cx as f64;
        // The smallest grid has 8 cells along its shorter side, the largest `most` along its
        // longer one.
        let (least, largest) = if ratio <= 1.0 {
            ((64.0 / ratio).ceil(), (most * most * ratio).floor())
        } else {
            ((64.0 * ratio).ceil(), (most * most / ratio).floor())
        };
        let scaled = if p.ink_scale > 1 {
            format!(", ink ×{}", p.ink_scale)
        } else {
            String::new()
        };
        if !(least..=largest).contains(&(cells as f64)) {
            return Err(Invalid::new(
                "--particles",
                format!(
                    "must be {least} to {largest} cells for this scene (8 to {most} per side in \
                     grid.cells' aspect {cx}:{cy}{scaled}), got {cells}"
                ),
            ));
        }
        let side = |n: f64| (n.round() as usize).clamp(8, most as usize);
        let nx = side((cells as f64 / ratio).sqrt());
        self.params.cells_x = nx;
        self.params.cells_y = side(nx as f64 * ratio);
        self.cuda_cells = None;
        self.validate().map_err(|invalid| Invalid {
            message: format!("with --particles {cells}: {}", invalid.message),
            ..invalid
        })
    }

    /// Whether the point (x, y) m is inside an obstacle.
    pub fn solid(&self, x: f32, y: f32) -> bool {
        self.obstacles.iter().any(|o| {
            let (dx, dy) = (x - o.center[0], y - o.center[1]);
            dx * dx + dy * dy <= o.radius * o.radius
        })
    }

    /// The brush stamps of the step from `t0` to `t1` (s): each stroke active at the step's
    /// middle, along the part of its path the step covers ([`Stroke::stamps`]), and each splat
    /// whose time falls in [t0, t1).
    pub fn stamps(&self, t0: f32, t1: f32) -> Vec<Stamp> {
        let mut stamps = Vec::new();
        let middle = 0.5 * (t0 + t1);
        for stroke in &self.strokes {
            if middle < stroke.start || middle >= stroke.start + stroke.duration {
                continue;
            }
            let fraction = |t: f32| ((t - stroke.start) / stroke.duration).clamp(0.0, 1.0);
            stroke.stamps(fraction(t0), fraction(t1), &mut stamps);
        }
        for splat in &self.splats {
            if (t0..t1).contains(&splat.time) {
                stamps.push(Stamp {
                    position: splat.position,
                    radius: splat.radius,
                    velocity: splat.velocity,
                    ink: splat.ink,
                    per_second: false,
                    direction: None,
                });
            }
        }
        stamps
    }
}

/// Most stamps one stroke lays in one step: a brush that crosses more than 32 radii in a step
/// gets its stamps spaced wider than half a radius (each is a CUDA launch).
pub const MOST_STAMPS_PER_STEP: usize = 64;

impl Stroke {
    /// The stamps of one step that covers the stroke from fraction `f0` to `f1` of its
    /// duration: evenly spaced along the path the brush travels in that time, at most half a
    /// radius apart (up to [`MOST_STAMPS_PER_STEP`]), each carrying its share of the stroke's
    /// rates — ink per second, and force × the brush's velocity there — so the ink and momentum
    /// laid per second do not depend on how finely the path is cut.
    pub fn stamps(&self, f0: f32, f1: f32, out: &mut Vec<Stamp>) {
        let travelled = (f1 - f0).abs() * self.length();
        let spacing = 0.5 * self.radius;
        let n = ((travelled / spacing).ceil() as usize).clamp(1, MOST_STAMPS_PER_STEP);
        let share = 1.0 / n as f32;
        for k in 0..n {
            let fraction = f0 + (f1 - f0) * (k as f32 + 0.5) * share;
            let (position, velocity) = self.at(fraction);
            let speed = velocity[0].hypot(velocity[1]);
            let direction = if speed > 0.0 {
                velocity.map(|v| v / speed)
            } else {
                [1.0, 0.0]
            };
            out.push(Stamp {
                position,
                radius: self.radius,
                velocity: velocity.map(|v| self.force * v * share),
                ink: self.ink.map(|c| c * share),
                per_second: true,
                direction: Some(direction),
            });
        }
    }

    /// The path's length, m.
    fn length(&self) -> f32 {
        self.path
            .windows(2)
            .map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]))
            .sum()
    }

    /// The brush's position (m) and velocity (m/s) at `fraction` (0–1) of the stroke, moving
    /// at constant speed along the path.
    pub fn at(&self, fraction: f32) -> ([f32; 2], [f32; 2]) {
        let segments: Vec<f32> = self
            .path
            .windows(2)
            .map(|w| ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt())
            .collect();
        let length: f32 = segments.iter().sum();
        if length == 0.0 {
            return (self.path[0], [0.0; 2]);
        }
        let speed = length / self.duration;
        let mut along = fraction.clamp(0.0, 1.0) * length;
        for (k, &segment) in segments.iter().enumerate() {
            if along <= segment || k + 1 == segments.len() {
                let t = if segment > 0.0 {
                    (along / segment).min(1.0)
                } else {
                    0.0
                };
                let (a, b) = (self.path[k], self.path[k + 1]);
                let direction = if segment > 0.0 {
                    [(b[0] - a[0]) / segment, (b[1] - a[1]) / segment]
                } else {
                    [0.0; 2]
                };
                return (
                    [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])],
                    [speed * direction[0], speed * direction[1]],
                );
            }
            along -= segment;
        }
        (self.path[0], [0.0; 2])
    }
}

#[cfg(test)]
#[path = "scene_tests.rs"]
mod tests;
