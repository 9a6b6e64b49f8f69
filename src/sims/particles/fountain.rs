//! The fountain: water particles shot up from a nozzle just below the top of a cube standing
//! in a basin. The first hit on the cube's top cuts their vertical speed and boosts the
//! horizontal one (the jet spreads into a sheet that runs off the top), later hits bounce; particles die after their
//! lifetime (fading out over its last seconds) or below a height. Every particle that falls
//! into the basin pushes its water surface down where it lands — a Gaussian stamp on the
//! pool's wave equation (`sims::pool`'s `disturb` and substep, called, not copied).

use super::dynamics::Air;
use super::random;
use crate::sims::pool::cpu::{self as wave, StepConstants};
use crate::sims::pool::drops::{self, Drop, Stencils, Target};
use crate::sims::pool::surface::Surface;
use crate::sims::pool::{Edges, Model, PoolParams};
use glam::Vec3;
use rayon::prelude::*;
use serde::Deserialize;

/// Particles per rayon task in `advance`.
const MIN_PARTICLES: usize = 4096;

/// The fountain's constants (SI units; the room's floor is y = 0, the cube stands on it
/// centred on the y axis, the basin is the square [−basin, basin]² around it). Gravity and the
/// wind are the world's ([`Air`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FountainParams {
    /// Particles emitted per second.
    pub rate: f32,
    /// Seconds a particle lives.
    pub lifetime: f32,
    /// Seconds at the end of its life over which a particle fades out (α from 1 to 0).
    pub fade: f32,
    /// Most particles alive at once (emission waits beyond).
    pub max_particles: usize,
    /// The nozzle's radius: start positions are uniform on a disc across the jet, m.
    pub spread: f32,
    /// How far below the cube's top the nozzle sits, m.
    pub emitter_depth: f32,
    /// Launch speed along the jet, uniform in [min, max], m/s.
    pub speed: [f32; 2],
    /// Launch speed across the jet, uniform in [0, this] in a random direction, m/s.
    pub horizontal: f32,
    /// The jet's direction (normalised when used).
    pub direction: [f32; 3],
    /// Air drag towards the wind's velocity, 1/s (0: the wind does nothing).
    pub drag: f32,
    /// The cube's side, m.
    pub cube: f32,
    /// The fraction of the vertical speed kept (upwards) on the first hit of the cube's top.
    pub cut: f32,
    /// The factor on the horizontal speed at the first hit.
    pub boost: f32,
    /// The horizontal speed the first hit adds along the particle's horizontal direction (the
    /// jet spreading into a sheet over the top), per m/s of its fall, (m/s)/(m/s).
    pub sheet: f32,
    /// Restitution of later bounces on the cube (vertical speed kept, sign flipped).
    pub bounce: f32,
    /// The basin's half-width, m.
    pub basin: f32,
    /// The basin's water level, m.
    pub level: f32,
    /// Surface velocity at a landing's centre per m/s of the particle's fall, (m/s)/(m/s);
    /// negative pushes the water down.
    pub push: f32,
    /// A landing's Gaussian radius, m.
    pub splash_radius: f32,
    /// The basin surface's nodes per side.
    pub surface_nodes: usize,
    /// Wave speed of the basin's surface, m/s.
    pub surface_speed: f32,
    /// Damping of the basin's surface, 1/s.
    pub surface_damping: f32,
    /// Particles die below this height, m.
    pub kill_height: f32,
    /// Seed of the emitter's random numbers.
    pub seed: u64,
}

impl Default for FountainParams {
    /// The spec's proposal: a jet about 1.2 cube sizes high, 2000 particles/s living 4 s
    /// and fading over the last 0.5 s, the first bounce keeping 0.3 of the vertical speed,
    /// boosting the horizontal ×1.5 and adding a quarter of the fall outwards. A drag of
    /// 1/s (a droplet's: g over a terminal speed of ~10 m/s) lets a 2 m/s wind bend the jet
    /// and move its landings about 1 m downwind (docs/particles/physics.md).
    fn default() -> Self {
        FountainParams {
            rate: 2000.0,
            lifetime: 4.0,
            fade: 0.5,
            max_particles: 1 << 20,
            spread: 0.03,
            emitter_depth: 0.05,
            speed: [5.5, 6.5],
            horizontal: 0.4,
            direction: [0.0, 1.0, 0.0],
            drag: 1.0,
            cube: 1.0,
            cut: 0.3,
            boost: 1.5,
            sheet: 0.25,
            bounce: 0.5,
            basin: 2.5,
            level: 0.3,
            push: -0.03,
            splash_radius: 0.06,
            surface_nodes: 160,
            surface_speed: 0.8,
            surface_damping: 0.3,
            kill_height: 0.0,
            seed: 1,
        }
    }
}

impl FountainParams {
    /// The jet's unit direction (up when `direction` is zero).
    pub fn jet(&self) -> Vec3 {
        Vec3::from(self.direction).normalize_or(Vec3::Y)
    }

    /// The nozzle's centre, m.
    pub fn nozzle(&self) -> Vec3 {
        Vec3::new(0.0, self.cube - self.emitter_depth, 0.0)
    }

    /// The basin's water at rest. The cube's footprint is water too (the renderer draws the
    /// cube over it): the pool's land nodes are a fixed shore, which reflects inverted and lets
    /// the level drift by whatever the splashes beside the cube send it (2 mm in 8 s), where
    /// the walls keep the volume.
    pub fn calm_basin(&self) -> Surface {
        Surface::new(&self.basin_params(1.0 / 60.0), |_, _| false)
    }

    /// The basin's surface as a pool: a walled square of the basin's side, the wave equation,
    /// one frame of `dt`.
    pub fn basin_params(&self, dt: f32) -> PoolParams {
        PoolParams {
            nodes: self.surface_nodes,
            size: 2.0 * self.basin,
            depth: self.level,
            dt,
            model: Model::Wave,
            edges: Edges::Pool,
            wave_speed: self.surface_speed,
            damping: self.surface_damping,
            ..PoolParams::default()
        }
    }
}

/// The particles (structure of arrays) and the basin's surface.
#[derive(Clone, Debug)]
pub struct Fountain {
    /// Constants (edited live by the panel).
    pub params: FountainParams,
    /// Whether the nozzle emits.
    pub on: bool,
    /// Positions, m.
    pub position: Vec<Vec3>,
    /// Velocities, m/s.
    pub velocity: Vec<Vec3>,
    /// Age, s.
    pub age: Vec<f32>,
    /// Hits on the cube's top so far.
    pub hits: Vec<u8>,
    /// Each particle's number in the order of emission, wrapping (the renderer picks its
    /// sprite and colour from it, so they stay with the particle).
    pub tag: Vec<u32>,
    /// The basin's water: the pool's state, node (i, j) at (−basin + i·h, level + height,
    /// −basin + j·h).
    pub surface: Surface,
    stencils: Stencils,
    owed: f32,
    /// Particles emitted since the start.
    pub emitted: u64,
    /// Particles that fell into the basin over the last step.
    pub landed: usize,
}

impl Fountain {
    /// No particles yet, the basin calm.
    pub fn new(params: FountainParams) -> Fountain {
        Fountain {
            params,
            on: true,
            position: Vec::new(),
            velocity: Vec::new(),
            age: Vec::new(),
            hits: Vec::new(),
            tag: Vec::new(),
            surface: params.calm_basin(),
            stencils: Stencils::default(),
            owed: 0.0,
            emitted: 0,
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

    /// Particle `k`'s opacity: 1, falling linearly to 0 over the last `fade` seconds of life.
    pub fn alpha(&self, k: usize) -> f32 {
        let p = &self.params;
        ((p.lifetime - self.age[k]) / p.fade.max(1e-6)).clamp(0.0, 1.0)
    }

    /// Adds one particle.
    pub fn push(&mut self, position: Vec3, velocity: Vec3) {
        self.position.push(position);
        self.velocity.push(velocity);
        self.age.push(0.0);
        self.hits.push(0);
        self.tag.push(self.emitted as u32);
        self.emitted += 1;
    }

    /// `emit`: rate·dt new particles (the fraction carried to the next step), uniform on the
    /// nozzle's disc across the jet, launched along it at a speed uniform in `speed` plus a
    /// uniform sideways speed up to `horizontal` in a random direction. Particle number e
    /// (since the start) draws its five numbers from `random::unit(key, e, 0..5)`, so the
    /// kernel draws the same ones.
    pub fn emit(&mut self, dt: f32) {
        let count = self.emission(dt, self.len());
        let frame = Emission::new(&self.params);
        for _ in 0..count {
            let (x, v) = frame.particle(self.emitted);
            self.push(x, v);
        }
    }

    /// How many particles this step emits with `alive` alive (the owed fraction carried),
    /// within `max_particles`.
    pub fn emission(&mut self, dt: f32, alive: usize) -> usize {
        let p = self.params;
        if !self.on {
            return 0;
        }
        self.owed += p.rate * dt;
        let whole = self.owed.floor();
        self.owed -= whole;
        (whole as usize).min(p.max_particles.saturating_sub(alive))
    }

    /// `advance`: symplectic Euler, v ← v + (g + drag·(w − v))·dt, x ← x + v·dt; ageing.
    pub fn advance(&mut self, dt: f32, air: &Air) {
        let drag = self.params.drag;
        self.position
            .par_iter_mut()
            .zip(self.velocity.par_iter_mut())
            .zip(self.age.par_iter_mut())
            .with_min_len(MIN_PARTICLES)
            .for_each(|((x, v), age)| {
                *v += (air.gravity + (air.wind - *v) * drag) * dt;
                *x += *v * dt;
                *age += dt;
            });
    }

    /// `collide`: the cube, then deaths. A particle that crossed the cube's top since the last step
    /// (its previous position, x − v·dt under symplectic Euler, above it) is put back on it: the
    /// first hit keeps `cut` of its vertical speed, upwards, and multiplies the horizontal by
    /// `boost` and adds `sheet` × the fall along it; later hits keep `bounce`. One that entered
    /// through a side goes back out through that side, keeping `bounce` of its speed across it; one
    /// rising in the nozzle is left alone. Particles die of age, below `kill_height`, or by falling
    /// into the basin's water: those are returned as drops pushing the surface down where they
    /// land. The survivors keep their order (a stable compaction, as the kernels' scan).
    pub fn collide(&mut self, dt: f32) -> Vec<Drop> {
        let p = self.params;
        let (half, top) = (0.5 * p.cube, p.cube);
        let mut drops = Vec::new();
        let mut kept = 0;
        for k in 0..self.len() {
            let (x, v) = (&mut self.position[k], &mut self.velocity[k]);
            let before = *x - *v * dt;
            let over = |q: Vec3| q.x.abs() < half && q.z.abs() < half;
            if over(*x) && x.y < top && x.y > 0.0 {
                if before.y >= top {
                    x.y = top;
                    if self.hits[k] == 0 {
                        let fall = -v.y;
                        let r = (v.x * v.x + v.z * v.z).sqrt();
                        let out = if r > 0.0 { p.sheet * fall / r } else { 0.0 };
                        v.y = fall * p.cut;
                        v.x *= p.boost + out;
                        v.z *= p.boost + out;
                    } else {
                        v.y = -v.y * p.bounce;
                    }
                    self.hits[k] = self.hits[k].saturating_add(1);
                } else if !over(before) {
                    let axis = if before.x.abs() >= half { 0 } else { 2 };
                    x[axis] = half * before[axis].signum();
                    v[axis] = -v[axis] * p.bounce;
                }
            }
            let in_basin = x.x.abs() <= p.basin && x.z.abs() <= p.basin && !over(*x);
            let landed = in_basin && x.y <= p.level && v.y < 0.0;
            if landed {
                drops.push(Drop {
                    position: [x.x + p.basin, x.z + p.basin],
                    radius: p.splash_radius,
                    amplitude: p.push * -v.y,
                    target: Target::Velocity,
                });
            }
            if !(landed || self.age[k] >= p.lifetime || x.y < p.kill_height) {
                self.position[kept] = self.position[k];
                self.velocity[kept] = self.velocity[k];
                self.age[kept] = self.age[k];
                self.hits[kept] = self.hits[k];
                self.tag[kept] = self.tag[k];
                kept += 1;
            }
        }
        self.position.truncate(kept);
        self.velocity.truncate(kept);
        self.age.truncate(kept);
        self.hits.truncate(kept);
        self.tag.truncate(kept);
        self.landed = drops.len();
        drops
    }

    /// `basin`: the landings' splashes, then the pool's wave-equation substeps (`forces`,
    /// `integrate`, `edges`) for a frame of `dt`. A splash is two of the pool's `disturb`
    /// Gaussians: the landing's, down where it lands, and one of twice its radius up around
    /// it, scaled by the ratio of the two stencils' sums so that they carry equal and opposite
    /// volume (a·πr² each, but for the lattice) and the level stays where it is.
    pub fn basin(&mut self, drops: &[Drop], dt: f32) {
        let h = self.surface.h;
        // The two stencils' sums for the last radius seen (a frame's landings share one:
        // summed once a frame, not twice a landing over ~800 weights).
        let mut sums: Option<(f32, f32, f32)> = None;
        for drop in drops {
            let ring = Drop {
                radius: 2.0 * drop.radius,
                ..*drop
            };
            let (inner, outer) = match sums {
                Some((radius, inner, outer)) if radius.to_bits() == drop.radius.to_bits() => {
                    (inner, outer)
                }
                _ => {
                    let inner: f32 = self.stencils.get(drop.radius / h).weights.iter().sum();
                    let outer: f32 = self.stencils.get(ring.radius / h).weights.iter().sum();
                    sums = Some((drop.radius, inner, outer));
                    (inner, outer)
                }
            };
            let ring = Drop {
                amplitude: -drop.amplitude * inner / outer,
                ..ring
            };
            drops::disturb(&mut self.surface, drop, &mut self.stencils);
            drops::disturb(&mut self.surface, &ring, &mut self.stencils);
        }
        let params = self.params.basin_params(dt);
        let constants = StepConstants::new(&params);
        for _ in 0..params.substeps() {
            wave::substep(&mut self.surface, &constants);
        }
    }

    /// One step without timing: `emit`, `advance`, `collide`, `basin` (the sort is the
    /// drawing's, see `sort.rs`).
    pub fn step(&mut self, dt: f32, air: &Air) {
        self.emit(dt);
        self.advance(dt, air);
        let drops = self.collide(dt);
        self.basin(&drops, dt);
    }

    /// The basin's height at (x, z), m above the level: the nearest node's (0 off the basin).
    pub fn basin_height(&self, x: f32, z: f32) -> f32 {
        let s = &self.surface;
        let node = |v: f32| ((v + self.params.basin) / s.h).round();
        let (i, j) = (node(x), node(z));
        if i < 0.0 || j < 0.0 || i >= s.n as f32 || j >= s.n as f32 {
            return 0.0;
        }
        s.height[j as usize * s.n + i as usize]
    }
}

/// The emitter's frame for one step: the jet's axis and the two directions across it, the
/// nozzle, and the draws' key (host-side constants of the `emit` kernel too).
#[derive(Clone, Copy, Debug)]
pub struct Emission {
    /// The jet's unit direction.
    pub up: Vec3,
    /// A unit vector across it.
    pub side: Vec3,
    /// up × side.
    pub other: Vec3,
    /// The nozzle's centre, m.
    pub nozzle: Vec3,
    /// The random draws' key (`random::key(seed)`).
    pub key: u32,
    params: FountainParams,
}

impl Emission {
    /// The frame of `params`.
    pub fn new(params: &FountainParams) -> Emission {
        let up = params.jet();
        let side = up.any_orthonormal_vector();
        Emission {
            up,
            side,
            other: up.cross(side),
            nozzle: params.nozzle(),
            key: random::key(params.seed),
            params: *params,
        }
    }

    /// Particle number `e`'s start: position and velocity.
    pub fn particle(&self, e: u64) -> (Vec3, Vec3) {
        let p = &self.params;
        let draw = |d: u32| random::unit(self.key, e, d);
        let across = |angle: f32| self.side * angle.cos() + self.other * angle.sin();
        let at = across(std::f32::consts::TAU * draw(0));
        let radius = p.spread * draw(1).sqrt();
        let speed = p.speed[0] + (p.speed[1] - p.speed[0]) * draw(2);
        let sideways = across(std::f32::consts::TAU * draw(3));
        let lateral = p.horizontal * draw(4);
        (
            self.nozzle + at * radius,
            self.up * speed + sideways * lateral,
        )
    }
}
