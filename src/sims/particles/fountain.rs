//! The fountain: water particles shot up from just below the top of a cube standing in a
//! basin. The first hit on the cube's top cuts their vertical speed and boosts the horizontal
//! one (the jet spreads into a sheet), later hits bounce; particles die after their lifetime
//! (fading out first) or when they fall into the basin, where each pushes the water surface
//! down where it lands — the pool's wave equation (`sims::pool`) on the basin's grid.

use crate::sims::pool::cpu::{self as wave, StepConstants};
use crate::sims::pool::drops::{self, Drop, Rng, Stencils, Target};
use crate::sims::pool::surface::Surface;
use crate::sims::pool::{Edges, Model, PoolParams};
use glam::Vec3;

/// The fountain's constants (SI units; the room's floor is y = 0, the cube stands on it
/// centred on the y axis, the basin is the square around it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FountainParams {
    /// Particles emitted per second.
    pub rate: f32,
    /// Seconds a particle lives.
    pub lifetime: f32,
    /// The last fraction of its life over which a particle fades out.
    pub fade: f32,
    /// Most particles alive at once (emission waits beyond).
    pub max_particles: usize,
    /// The emitter's position spread (radius), m.
    pub spread: f32,
    /// Vertical launch speed range, m/s.
    pub speed: [f32; 2],
    /// Horizontal launch speed spread, m/s.
    pub horizontal: f32,
    /// The jet's direction (normalised when used; up by default).
    pub direction: Vec3,
    /// Gravity, m/s².
    pub gravity: Vec3,
    /// Wind, m/s.
    pub wind: Vec3,
    /// Air drag towards the wind's velocity, 1/s.
    pub drag: f32,
    /// The cube's side, m.
    pub cube: f32,
    /// Vertical speed kept on the first hit of the cube's top.
    pub cut: f32,
    /// Horizontal speed multiplied on the first hit.
    pub boost: f32,
    /// Restitution of later bounces.
    pub bounce: f32,
    /// The basin's half-width, m (it spans [−b, b]² around the cube).
    pub basin: f32,
    /// The basin's water level, m.
    pub level: f32,
    /// Surface velocity per m/s of a landing particle's fall, m/s (negative: down).
    pub push: f32,
    /// A landing's Gaussian radius, m.
    pub splash_radius: f32,
    /// The basin surface's nodes per side, wave speed (m/s) and damping (1/s).
    pub surface_nodes: usize,
    /// Wave speed of the basin's surface, m/s.
    pub surface_speed: f32,
    /// Damping of the basin's surface, 1/s.
    pub surface_damping: f32,
    /// Particles die below this height, m.
    pub floor: f32,
    /// Seed of the emitter.
    pub seed: u64,
}

impl Default for FountainParams {
    fn default() -> Self {
        FountainParams {
            rate: 4000.0,
            lifetime: 4.0,
            fade: 0.25,
            max_particles: 1 << 20,
            spread: 0.03,
            speed: [4.0, 5.0],
            horizontal: 0.25,
            direction: Vec3::Y,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            wind: Vec3::ZERO,
            drag: 0.1,
            cube: 1.0,
            cut: 0.3,
            boost: 2.5,
            bounce: 0.4,
            basin: 2.5,
            level: 0.3,
            push: -0.02,
            splash_radius: 0.05,
            surface_nodes: 160,
            surface_speed: 0.8,
            surface_damping: 0.4,
            floor: 0.0,
            seed: 1,
        }
    }
}

/// The particles (structure of arrays, alive ones first) and the basin's surface.
pub struct Fountain {
    /// Constants.
    pub params: FountainParams,
    /// Positions, m.
    pub position: Vec<Vec3>,
    /// Velocities, m/s.
    pub velocity: Vec<Vec3>,
    /// Age, s.
    pub age: Vec<f32>,
    /// Hits on the cube so far.
    pub hits: Vec<u8>,
    /// Each particle's number in the order of emission (the renderer picks its sprite and
    /// colour from it, so they stay with the particle).
    pub tag: Vec<u32>,
    emitted: u32,
    /// The basin's water (the pool's state; node (i, j) at (−b + i·h, level, −b + j·h)).
    pub surface: Surface,
    surface_params: PoolParams,
    stencils: Stencils,
    rng: Rng,
    owed: f32,
    /// Particles that fell into the basin over the last step.
    pub landed: usize,
}

impl Fountain {
    /// No particles yet, the basin calm, the cube's footprint fixed.
    pub fn new(params: FountainParams) -> Fountain {
        let surface_params = basin_params(&params);
        let (b, half) = (params.basin, 0.5 * params.cube);
        let surface = Surface::new(&surface_params, |x, z| {
            (x - b).abs() <= half && (z - b).abs() <= half
        });
        Fountain {
            rng: Rng::new(params.seed),
            params,
            position: Vec::new(),
            velocity: Vec::new(),
            age: Vec::new(),
            hits: Vec::new(),
            tag: Vec::new(),
            emitted: 0,
            surface,
            surface_params,
            stencils: Stencils::default(),
            owed: 0.0,
            landed: 0,
        }
    }

    /// Particles alive.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// Whether no particle is alive.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// A particle's opacity: 1, falling linearly to 0 over the last `fade` of its life.
    pub fn alpha(&self, k: usize) -> f32 {
        let p = &self.params;
        ((p.lifetime - self.age[k]) / (p.fade * p.lifetime).max(1e-6)).clamp(0.0, 1.0)
    }

    /// `emit`: rate·dt new particles (the fraction carried to the next step), at the emitter
    /// just below the cube's top, launched along the jet with the speed spreads.
    pub fn emit(&mut self, dt: f32) {
        let p = self.params;
        self.owed += p.rate * dt;
        let count = (self.owed.floor() as usize).min(p.max_particles.saturating_sub(self.len()));
        self.owed -= self.owed.floor();
        let up = p.direction.normalize_or(Vec3::Y);
        let side = up.any_orthonormal_vector();
        let other = up.cross(side);
        for _ in 0..count {
            let angle = std::f32::consts::TAU * self.rng.unit();
            let radius = p.spread * self.rng.unit().sqrt();
            let offset = (side * angle.cos() + other * angle.sin()) * radius;
            let speed = p.speed[0] + (p.speed[1] - p.speed[0]) * self.rng.unit();
            let turn = std::f32::consts::TAU * self.rng.unit();
            let across = p.horizontal * self.rng.unit();
            let velocity = up * speed + (side * turn.cos() + other * turn.sin()) * across;
            self.position
                .push(Vec3::new(0.0, p.cube - 0.02, 0.0) + offset);
            self.velocity.push(velocity);
            self.age.push(0.0);
            self.hits.push(0);
            self.tag.push(self.emitted);
            self.emitted = self.emitted.wrapping_add(1);
        }
    }

    /// `move`: symplectic Euler under gravity and air drag towards the wind; ageing.
    pub fn advance(&mut self, dt: f32) {
        let p = self.params;
        for k in 0..self.len() {
            let a = p.gravity + (p.wind - self.velocity[k]) * p.drag;
            self.velocity[k] += a * dt;
            self.position[k] += self.velocity[k] * dt;
            self.age[k] += dt;
        }
    }

    /// `collide`: the cube (its top's first hit cuts and boosts, later hits and the sides
    /// bounce), the basin's outer walls; then deaths — of age, below the floor, or into the
    /// basin's water, which they push down where they land.
    pub fn collide(&mut self) -> Vec<Drop> {
        let p = self.params;
        let half = 0.5 * p.cube;
        let mut drops = Vec::new();
        let mut k = 0;
        while k < self.len() {
            let (x, v) = (&mut self.position[k], &mut self.velocity[k]);
            let over_cube = x.x.abs() < half && x.z.abs() < half;
            if over_cube && x.y < p.cube && v.y < 0.0 && x.y > p.cube - 0.25 * p.cube {
                x.y = p.cube;
                if self.hits[k] == 0 {
                    v.y = -v.y * p.cut;
                    v.x *= p.boost;
                    v.z *= p.boost;
                } else {
                    v.y = -v.y * p.bounce;
                }
                self.hits[k] = self.hits[k].saturating_add(1);
            } else if over_cube && x.y < p.cube {
                // Into a side: back out through the nearer face.
                if (x.x.abs() - half).abs() < (x.z.abs() - half).abs() {
                    x.x = half * x.x.signum();
                    v.x = -v.x * p.bounce;
                } else {
                    x.z = half * x.z.signum();
                    v.z = -v.z * p.bounce;
                }
            }
            for axis in [0, 2] {
                if x[axis].abs() > p.basin && x.y < p.level + 0.1 {
                    x[axis] = p.basin * x[axis].signum();
                    v[axis] = -v[axis] * p.bounce;
                }
            }
            let in_basin = x.x.abs() <= p.basin && x.z.abs() <= p.basin && !over_cube;
            let landed = in_basin && x.y <= p.level && v.y < 0.0;
            if landed {
                drops.push(Drop {
                    position: [x.x + p.basin, x.z + p.basin],
                    radius: p.splash_radius,
                    amplitude: p.push * -v.y,
                    target: Target::Velocity,
                });
            }
            if landed || self.age[k] >= p.lifetime || x.y < p.floor {
                self.position.swap_remove(k);
                self.velocity.swap_remove(k);
                self.age.swap_remove(k);
                self.hits.swap_remove(k);
                self.tag.swap_remove(k);
            } else {
                k += 1;
            }
        }
        self.landed = drops.len();
        drops
    }

    /// `basin`: the landings' pushes, then the basin's wave equation for `dt` (the pool's
    /// stages, in its own substeps).
    pub fn basin(&mut self, drops: &[Drop], dt: f32) {
        for drop in drops {
            drops::disturb(&mut self.surface, drop, &mut self.stencils);
        }
        self.surface_params.dt = dt;
        let k = StepConstants::new(&self.surface_params);
        for _ in 0..self.surface_params.substeps() {
            wave::substep(&mut self.surface, &k);
        }
    }

    /// One step: `emit`, `move`, `collide`, `basin`.
    pub fn step(&mut self, dt: f32) {
        self.emit(dt);
        self.advance(dt);
        let drops = self.collide();
        self.basin(&drops, dt);
    }
}

/// The basin's surface as a pool: a walled square of the basin's side, the wave equation.
pub fn basin_params(p: &FountainParams) -> PoolParams {
    PoolParams {
        nodes: p.surface_nodes,
        size: 2.0 * p.basin,
        depth: p.level,
        model: Model::Wave,
        edges: Edges::Pool,
        wave_speed: p.surface_speed,
        damping: p.surface_damping,
        ..PoolParams::default()
    }
}
