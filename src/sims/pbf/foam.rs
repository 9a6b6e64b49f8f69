//! The `foam` stage (Ihmsen, Akinci, Akinci & Teschner, "Unified spray, foam and bubbles for
//! particle-based fluids", The Visual Computer 2012), CPU reference: diffuse particles born
//! where the fluid traps air, at wave crests and with kinetic energy, then carried as spray,
//! foam or bubbles by what surrounds them. The fluid is not changed (one-way coupling).
//!
//! Per fluid particle i over its neighbour list (the solver's: every j ≠ i within the kernel
//! radius h), with the radially symmetric weight W = 1 − r/h:
//!
//! - trapped air: I_ta = Σⱼ |vᵢⱼ| (1 − v̂ᵢⱼ·x̂ᵢⱼ) W, vᵢⱼ = vᵢ − vⱼ, xᵢⱼ = xᵢ − xⱼ (m/s);
//! - wave crest: the surface normal n̂ᵢ is the direction away from the neighbours' weighted
//!   mean (particles whose mean lies within [`SURFACE_OFFSET`] h of themselves are inside and
//!   have none); κᵢ = Σⱼ (1 − n̂ᵢ·n̂ⱼ) W over the neighbours below i (x̂ⱼᵢ·n̂ᵢ < 0), counted only
//!   where the particle moves along its normal (v̂ᵢ·n̂ᵢ ≥ [`CREST_ALIGNMENT`]);
//! - kinetic energy per unit mass: I_k = ½|vᵢ|² (J/kg).
//!
//! Each is clamped into [0, 1] by Φ(I, τ_min, τ_max) = (min(I, τ_max) − min(I, τ_min)) /
//! (τ_max − τ_min) with the thresholds [`TRAPPED_AIR`], [`WAVE_CREST`], [`KINETIC`], and the
//! particle emits n = dt (k_ta Φ_ta + k_wc Φ_wc) Φ_k diffuse particles (the fraction rounded
//! up with that probability, by a hash of the seed, the step and the particle's id:
//! deterministic, in parallel, and independent of the particles' order; at most
//! [`emission_limit`]). The newborn join the pool after the survivors, ordered by the parent's
//! id and their number, as far as the cap allows.
//! They start inside the cylinder of radius r_p around xᵢ along vᵢ, with vᵢ plus the offset
//! across it per unit time.
//!
//! Every step, each diffuse particle counts the fluid particles within h: fewer than
//! [`SPRAY_BELOW`] make it spray (ballistic under gravity), more than [`BUBBLE_ABOVE`] a bubble
//! (buoyant, k_b, and dragged towards the fluid's velocity, k_d), the rest foam (moved with the
//! fluid's velocity averaged with W). Foam ages, and so does any diffuse particle lying on the
//! container's walls or an obstacle; it dies when its lifetime is spent. The scene's obstacles
//! and then the walls stop diffuse particles (`stop_at_obstacles`: one that ended the step
//! inside an obstacle is put on its surface by the fluid's projection, `Obstacle::push_out`
//! with no margin, its velocity into the surface lost; `stop_at_walls`: put back on the wall,
//! the velocity into it lost, so spray slides down the glass). No more are born than the cap allows, and a cap lowered below the alive count drops
//! the youngest.
//!
//! The CUDA solver runs this stage as kernels (`kernels/foam.cuh`, `cuda/foam.rs`) in the same
//! operation order: its emulation matches this code bit for bit (`cuda/foam_emulation.rs`).

use super::grid::UniformGrid;
use super::{Aabb, World};
use glam::Vec3A;
use rayon::prelude::*;

/// Trapped-air potential's thresholds τ_min, τ_max (m/s, the sum over the neighbours).
pub const TRAPPED_AIR: (f32, f32) = (8.0, 14.0);
/// Wave-crest potential's thresholds (the curvature sum, dimensionless).
pub const WAVE_CREST: (f32, f32) = (5.0, 10.0);
/// Kinetic energy per unit mass's thresholds (J/kg).
pub const KINETIC: (f32, f32) = (0.5, 5.0);
/// A particle whose neighbours' weighted mean lies farther than this many h away is at the
/// surface and has a normal.
pub const SURFACE_OFFSET: f32 = 0.1;
/// Least cos(angle) between velocity and normal at a wave crest.
pub const CREST_ALIGNMENT: f32 = 0.6;
/// Fewer fluid neighbours than this: spray.
pub const SPRAY_BELOW: usize = 6;
/// More fluid neighbours than this: a bubble.
pub const BUBBLE_ABOVE: usize = 20;
/// Bubbles' buoyancy k_b (multiples of −g) and drag towards the fluid k_d (per step, 0..1).
pub const BUOYANCY: f32 = 2.0;
/// See [`BUOYANCY`].
pub const DRAG: f32 = 0.5;
/// The spread of a new particle's velocity across the parent's, as a fraction of its speed
/// at the cylinder's rim.
pub const SPREAD: f32 = 0.1;
/// Foam fades out over the last this many seconds of its lifetime (the picture's alpha).
pub const FADE: f32 = 0.5;

/// What a diffuse particle is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffuseKind {
    /// In the air: ballistic.
    Spray = 0,
    /// On the surface: carried by the fluid.
    Foam = 1,
    /// Under the surface: rises.
    Bubble = 2,
}

/// One diffuse particle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diffuse {
    /// Position, m.
    pub position: Vec3A,
    /// Velocity, m/s.
    pub velocity: Vec3A,
    /// Lifetime left, s (spent only as foam).
    pub life: f32,
    /// Its class at the last step.
    pub kind: DiffuseKind,
}

/// The `foam` stage's controls (scene file `[foam]`, the panel's Foam section, `render --foam`).
#[derive(Clone, Debug, PartialEq)]
pub struct FoamSettings {
    /// Whether the stage runs (and the picture shows it).
    pub enabled: bool,
    /// k_ta: diffuse particles per fluid particle per second at full trapped-air potential.
    pub trapped_air_rate: f32,
    /// k_wc: the same at full wave-crest potential.
    pub wave_crest_rate: f32,
    /// Lifetime of foam, s.
    pub lifetime: f32,
    /// Most diffuse particles alive at once.
    pub max_count: u32,
    /// Seed of the emission's random numbers.
    pub seed: u64,
}

impl Default for FoamSettings {
    /// The rates: at 1000/s the 30 000-particle dam break's breaking front is one saturated
    /// white sheet in the picture (the additive foam discs); at 250/s it stays white where the
    /// trapped air is strongest and shows the sheet's structure elsewhere (docs/foam.md).
    fn default() -> Self {
        FoamSettings {
            enabled: false,
            trapped_air_rate: 250.0,
            wave_crest_rate: 250.0,
            lifetime: 2.0,
            max_count: 100_000,
            seed: 1,
        }
    }
}

impl FoamSettings {
    /// Every value in range, or the offending key and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let rate = |key, v: f32| {
            if (0.0..=10_000.0).contains(&v) {
                Ok(())
            } else {
                Err((key, format!("must lie in 0..=10000 per second, got {v}")))
            }
        };
        rate("foam.trapped_air_rate", self.trapped_air_rate)?;
        rate("foam.wave_crest_rate", self.wave_crest_rate)?;
        if !(self.lifetime > 0.0 && self.lifetime <= 600.0) {
            return Err((
                "foam.lifetime",
                format!("must lie in (0, 600] s, got {}", self.lifetime),
            ));
        }
        if self.max_count > 10_000_000 {
            return Err((
                "foam.max_count",
                format!("must be at most 10000000, got {}", self.max_count),
            ));
        }
        Ok(())
    }
}

/// The fluid the stage reads: positions, velocities and CSR neighbour lists
/// (`neighbors[neighbor_start[i]..neighbor_start[i + 1]]`, i excluded) within `radius`.
pub struct FluidView<'a> {
    /// Positions, m.
    pub positions: &'a [Vec3A],
    /// Velocities, m/s.
    pub velocities: &'a [Vec3A],
    /// Each particle's identity, a permutation of 0..n (the solvers' particle ids): the
    /// emission's random numbers and the newborn's order follow it, not the particles' order
    /// in the arrays, which on the GPU depends on its atomics.
    pub ids: &'a [u32],
    /// CSR starts, one more than particles.
    pub neighbor_start: &'a [u32],
    /// CSR lists.
    pub neighbors: &'a [u32],
    /// The kernel radius h, m.
    pub radius: f32,
    /// Particle radius r_p (half the spacing), m.
    pub particle_radius: f32,
}

impl FluidView<'_> {
    fn list(&self, i: usize) -> &[u32] {
        &self.neighbors[self.neighbor_start[i] as usize..self.neighbor_start[i + 1] as usize]
    }
}

/// The diffuse particles of one simulation and the step counter their random numbers use.
#[derive(Clone, Debug, Default)]
pub struct Foam {
    /// Alive now.
    pub particles: Vec<Diffuse>,
    steps: u64,
}

/// The renderer's records of `particles` ([`Foam::records`]).
pub fn records(particles: &[Diffuse], out: &mut Vec<[f32; 4]>) {
    out.clear();
    out.extend(particles.iter().map(|d| {
        let fade = (d.life / FADE).clamp(0.0, 1.0);
        let p = d.position;
        [p.x, p.y, p.z, d.kind as u32 as f32 + 0.499 * fade]
    }));
}

/// Most diffuse particles one fluid particle emits in one step over `n` fluid particles:
/// 2²⁴ (exact in f32), and at most (2³² − 1) / n so the step's total fits the u32 counts and
/// scan of the CUDA stage (429 per particle at 10 M particles, where the largest rates and a
/// step of 1/60 s would ask for up to 333).
pub fn emission_limit(n: usize) -> u32 {
    (u32::MAX / n.max(1) as u32).min(1 << 24)
}

/// Φ(I, τ_min, τ_max).
fn clamp_potential(value: f32, (low, high): (f32, f32)) -> f32 {
    (value.min(high) - value.min(low)) / (high - low)
}

/// A uniform number in [0, 1) from three integers (SplitMix64 of their mix).
fn uniform(seed: u64, step: u64, index: u64, k: u64) -> f32 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(step.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(index.wrapping_mul(0xABC9_8388_FB8B_AC03))
        .wrapping_add(k.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// The three potentials of every fluid particle, clamped: (Φ_ta, Φ_wc, Φ_k).
pub fn potentials(fluid: &FluidView) -> Vec<[f32; 3]> {
    raw_potentials(fluid)
        .into_iter()
        .map(|[ta, wc, k]| {
            [
                clamp_potential(ta, TRAPPED_AIR),
                clamp_potential(wc, WAVE_CREST),
                clamp_potential(k, KINETIC),
            ]
        })
        .collect()
}

/// The three potentials before clamping: I_ta (m/s), the crest's curvature (0 off a crest),
/// I_k (J/kg).
pub fn raw_potentials(fluid: &FluidView) -> Vec<[f32; 3]> {
    let h = fluid.radius;
    let weight = |r: f32| (1.0 - r / h).max(0.0);
    let x = fluid.positions;
    let v = fluid.velocities;
    let normals: Vec<Vec3A> = (0..x.len())
        .into_par_iter()
        .map(|i| {
            let (mut sum, mut total) = (Vec3A::ZERO, 1.0f32);
            for &j in fluid.list(i) {
                let d = x[j as usize] - x[i];
                let w = weight(d.length());
                sum += w * d;
                total += w;
            }
            let offset = sum / total;
            if offset.length() > SURFACE_OFFSET * h {
                -offset.normalize()
            } else {
                Vec3A::ZERO
            }
        })
        .collect();
    (0..x.len())
        .into_par_iter()
        .map(|i| {
            let (mut trapped, mut curvature) = (0.0f32, 0.0f32);
            let n = normals[i];
            for &j in fluid.list(i) {
                let j = j as usize;
                let xij = x[i] - x[j];
                let r = xij.length();
                let w = weight(r);
                let vij = v[i] - v[j];
                let speed = vij.length();
                if speed > 1e-6 && r > 1e-9 {
                    trapped += speed * (1.0 - vij.dot(xij) / (speed * r)) * w;
                }
                if n != Vec3A::ZERO && r > 1e-9 && (-xij).dot(n) < 0.0 {
                    curvature += (1.0 - n.dot(normals[j])) * w;
                }
            }
            let speed = v[i].length();
            let crest = n != Vec3A::ZERO && speed > 1e-6 && v[i].dot(n) >= CREST_ALIGNMENT * speed;
            [
                trapped,
                if crest { curvature } else { 0.0 },
                0.5 * speed * speed,
            ]
        })
        .collect()
}

/// The container's walls for a diffuse particle that moved through one: put back on the wall,
/// its velocity into the wall lost (it slides along the glass, or lies on the floor). Returns
/// whether it now lies on a wall (then it ages even as spray or a bubble, as foam does: spray
/// that hit the glass runs down it and dies after its lifetime rather than vanishing in
/// mid-air at the wall or piling up on a dry floor forever). A non-finite position stays so
/// (and is dropped).
fn stop_at_walls(d: &mut Diffuse, container: &Aabb) -> bool {
    let (lo, hi) = (container.min, container.max);
    let mut on_wall = false;
    for axis in 0..3 {
        if d.position[axis] < lo[axis] {
            d.position[axis] = lo[axis];
            if d.velocity[axis] < 0.0 {
                d.velocity[axis] = 0.0;
            }
        }
        if d.position[axis] > hi[axis] {
            d.position[axis] = hi[axis];
            if d.velocity[axis] > 0.0 {
                d.velocity[axis] = 0.0;
            }
        }
        on_wall |= d.position[axis] == lo[axis] || d.position[axis] == hi[axis];
    }
    on_wall
}

/// The obstacles for a diffuse particle that ended the step inside one, as the walls: put on
/// its surface (`Obstacle::push_out` with no margin, in the obstacles' order, a box left only
/// through a face inside the container, as the fluid's `World::project`), its velocity into
/// the surface (along the outward normal there) lost. Returns whether any obstacle stopped it
/// (it then counts as lying on a wall).
fn stop_at_obstacles(d: &mut Diffuse, world: &World) -> bool {
    let (lo, hi) = (world.container.min, world.container.max);
    let mut on_obstacle = false;
    for obstacle in &world.obstacles {
        if let Some((surface, normal)) = obstacle.push_out(d.position, 0.0, lo, hi) {
            d.position = surface;
            let into = d.velocity.dot(normal);
            if into < 0.0 {
                d.velocity -= into * normal;
            }
            on_obstacle = true;
        }
    }
    on_obstacle
}

impl Foam {
    /// The `foam` stage: one step of `dt` seconds under `gravity` inside `world`'s container
    /// and around its obstacles (see the module's text). Returns how many were born.
    pub fn foam(
        &mut self,
        fluid: &FluidView,
        settings: &FoamSettings,
        dt: f32,
        gravity: Vec3A,
        world: &World,
    ) -> usize {
        self.next_step();
        // The cap holds at all times: lowered below the alive count, it drops the youngest
        // (the CUDA pool is reallocated at the new cap and keeps its first max_count).
        self.particles.truncate(settings.max_count as usize);
        self.advect(fluid, dt, gravity, world);
        let room = (settings.max_count as usize).saturating_sub(self.particles.len());
        let born = self.emit(fluid, settings, dt, room);
        self.particles.extend_from_slice(&born);
        born.len()
    }

    /// Steps taken (the emission's random numbers of step k use k; the first step is 1).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Counts one more step and returns its number: the `foam` stage does it first, and a
    /// backend that keeps the diffuse particles itself (the CUDA solver) does it instead.
    pub fn next_step(&mut self) -> u64 {
        self.steps += 1;
        self.steps
    }

    /// New diffuse particles of this step, by the parent's id and then their number.
    /// Only the first `room` of them are built (the cap cuts the rest, as `foam_emit` does):
    /// at saturated rates a step may ask for far more than the pool holds.
    fn emit(
        &self,
        fluid: &FluidView,
        settings: &FoamSettings,
        dt: f32,
        room: usize,
    ) -> Vec<Diffuse> {
        let (seed, step) = (settings.seed, self.steps);
        let rp = fluid.particle_radius;
        let limit = emission_limit(fluid.positions.len());
        let counts: Vec<u32> = potentials(fluid)
            .par_iter()
            .zip(fluid.ids)
            .map(|(&[ta, wc, k], &id)| {
                let rate =
                    dt * (settings.trapped_air_rate * ta + settings.wave_crest_rate * wc) * k;
                let whole = rate.floor();
                // (A NaN rate, impossible from finite fluid, gets the limit as on the GPU.)
                if whole.is_nan() || whole >= limit as f32 {
                    return limit;
                }
                let extra = (uniform(seed, step, id as u64, 0) < rate - whole) as u32;
                (whole as u32 + extra).min(limit)
            })
            .collect();
        let mut by_id = vec![0u32; fluid.ids.len()];
        for (i, &id) in fluid.ids.iter().enumerate() {
            by_id[id as usize] = i as u32;
        }
        // Each parent's newborn after those of smaller id, cut where the room ends.
        let mut left = room;
        let mut kept: Vec<(u32, u32)> = Vec::new();
        for &i in &by_id {
            if left == 0 {
                break;
            }
            let count = (counts[i as usize] as usize).min(left);
            if count > 0 {
                kept.push((i, count as u32));
                left -= count;
            }
        }
        kept.par_iter()
            .flat_map_iter(|&(i, count)| {
                let i = i as usize;
                let id = fluid.ids[i] as u64;
                let (x, v) = (fluid.positions[i], fluid.velocities[i]);
                let along = v.normalize_or(Vec3A::Y);
                let e1 = along.any_orthonormal_vector();
                let e2 = along.cross(e1);
                (0..count).map(move |m| {
                    let u = |k: u64| uniform(seed, step, id, 1 + 3 * m as u64 + k);
                    let (r, theta) = (rp * u(0).sqrt(), std::f32::consts::TAU * u(1));
                    let across = r * (theta.cos() * e1 + theta.sin() * e2);
                    Diffuse {
                        position: x + across + u(2) * dt * v,
                        velocity: v + across * (SPREAD * v.length() / rp),
                        life: settings.lifetime,
                        kind: DiffuseKind::Spray,
                    }
                })
            })
            .collect()
    }

    /// Classifies, moves and ages every diffuse particle; drops the dead.
    fn advect(&mut self, fluid: &FluidView, dt: f32, gravity: Vec3A, world: &World) {
        if self.particles.is_empty() {
            return;
        }
        let container = &world.container;
        let h = fluid.radius;
        let mut grid = UniformGrid::new(container, h);
        grid.build(fluid.positions);
        let order = grid.order();
        let h2 = h * h;
        self.particles.par_iter_mut().for_each(|d| {
            let (mut count, mut weights, mut velocity) = (0usize, 0.0f32, Vec3A::ZERO);
            grid.for_each_neighbor_range(d.position, |range| {
                for &j in &order[range] {
                    let r2 = (fluid.positions[j as usize] - d.position).length_squared();
                    if r2 < h2 {
                        let w = 1.0 - r2.sqrt() / h;
                        count += 1;
                        weights += w;
                        velocity += w * fluid.velocities[j as usize];
                    }
                }
            });
            let fluid_velocity = if weights > 0.0 {
                velocity / weights
            } else {
                d.velocity
            };
            d.kind = if count < SPRAY_BELOW {
                DiffuseKind::Spray
            } else if count > BUBBLE_ABOVE {
                DiffuseKind::Bubble
            } else {
                DiffuseKind::Foam
            };
            match d.kind {
                DiffuseKind::Spray => {
                    d.velocity += dt * gravity;
                    d.position += dt * d.velocity;
                }
                DiffuseKind::Foam => {
                    d.velocity = fluid_velocity;
                    d.position += dt * fluid_velocity;
                    d.life -= dt;
                }
                DiffuseKind::Bubble => {
                    d.velocity += -BUOYANCY * dt * gravity + DRAG * (fluid_velocity - d.velocity);
                    d.position += dt * d.velocity;
                }
            }
            let on_obstacle = stop_at_obstacles(d, world);
            let on_wall = stop_at_walls(d, container);
            if (on_obstacle || on_wall) && d.kind != DiffuseKind::Foam {
                d.life -= dt;
            }
        });
        self.particles.retain(|d| {
            d.life > 0.0
                && d.position.cmpge(container.min).all()
                && d.position.cmple(container.max).all()
        });
    }

    /// How many of each kind are alive: [spray, foam, bubbles].
    pub fn counts(&self) -> [usize; 3] {
        let mut counts = [0; 3];
        for d in &self.particles {
            counts[d.kind as usize] += 1;
        }
        counts
    }

    /// The renderer's records: `[x, y, z, kind + fade / 2]`, kind 0 spray, 1 foam, 2 bubble,
    /// fade in [0, 1] (foam fades out over its last [`FADE`] seconds).
    pub fn records(&self, out: &mut Vec<[f32; 4]>) {
        records(&self.particles, out);
    }

    /// Forgets every diffuse particle (a restart).
    pub fn clear(&mut self) {
        self.particles.clear();
        self.steps = 0;
    }
}

#[cfg(test)]
#[path = "foam_tests.rs"]
mod tests;
