//! A spring-mass body's stages: `springs` (each node gathers its springs' pull), `wind` (per
//! triangle along its normal, ∝ area·(n̂·w)), `integrate` (time-corrected Verlet, symplectic
//! Euler, or XPBD's constraint projection), `collide` (the ground and a sphere).

use super::body::Body;
use glam::Vec3;
use rayon::prelude::*;
use serde::Deserialize;

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Integrator {
    /// Time-corrected Verlet (Dickinson): x' = x + (x − x₋)·dt/dt₋ + a·dt·(dt + dt₋)/2 — Verlet
    /// at a constant step, exact for constant acceleration when the step changes.
    Verlet,
    /// Symplectic Euler: v' = v + a·dt, x' = x + v'·dt.
    Euler,
    /// Extended position-based dynamics (Macklin et al. 2016): springs as compliant distance
    /// constraints (compliance 1/k), Gauss–Seidel iterations.
    Xpbd,
}

impl Integrator {
    /// Every integrator, in the panel's order.
    pub const ALL: [Integrator; 3] = [Integrator::Verlet, Integrator::Euler, Integrator::Xpbd];

    /// The name in scene files and the panel.
    pub fn name(self) -> &'static str {
        match self {
            Integrator::Verlet => "verlet",
            Integrator::Euler => "euler",
            Integrator::Xpbd => "xpbd",
        }
    }
}

/// What acts on a body besides its springs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surroundings {
    /// Gravity, m/s².
    pub gravity: Vec3,
    /// Wind velocity, m/s.
    pub wind: Vec3,
    /// Wind force per m² of triangle per m/s of wind along its normal, N·s/m³.
    pub wind_drag: f32,
    /// Velocity damping, 1/s.
    pub damping: f32,
    /// The ground's height, m (nothing below it).
    pub ground: f32,
    /// A solid sphere (centre, radius), when there is one.
    pub sphere: Option<(Vec3, f32)>,
    /// Tangential velocity lost on contact (0–1).
    pub friction: f32,
}

/// `springs`: every node's force from its springs, S = k·(l − l₀)·ê towards the other end,
/// gathered per node in parallel, plus gravity.
pub fn springs(body: &mut Body, gravity: Vec3) {
    let (position, springs) = (&body.position, &body.springs);
    let (start, list, mass) = (&body.node_start, &body.node_springs, body.mass);
    body.force.par_iter_mut().enumerate().for_each(|(k, f)| {
        let mut sum = gravity * mass;
        for &s in &list[start[k] as usize..start[k + 1] as usize] {
            let s = &springs[s as usize];
            let other = if s.a as usize == k { s.b } else { s.a };
            let d = position[other as usize] - position[k];
            let length = d.length();
            if length > 0.0 {
                sum += d * (s.stiffness * (length - s.rest) / length);
            }
        }
        *f = sum;
    });
}

/// `wind`: each triangle is pushed along its unit normal n̂ by drag·area·(n̂·w)·n̂, w the wind
/// relative to the triangle's mean velocity, a third on each corner. Face-on wind pushes
/// downwind whichever side faces it; edge-on wind pushes nothing.
pub fn wind(body: &mut Body, surroundings: &Surroundings) {
    if surroundings.wind_drag == 0.0 {
        return;
    }
    for t in &body.triangles {
        let [a, b, c] = t.map(|k| k as usize);
        let (pa, pb, pc) = (body.position[a], body.position[b], body.position[c]);
        let cross = (pb - pa).cross(pc - pa);
        let area = 0.5 * cross.length();
        if area == 0.0 {
            continue;
        }
        let normal = cross / (2.0 * area);
        let mean = (body.velocity[a] + body.velocity[b] + body.velocity[c]) / 3.0;
        let along = normal.dot(surroundings.wind - mean);
        let force = normal * (surroundings.wind_drag * area * along / 3.0);
        for k in [a, b, c] {
            body.force[k] += force;
        }
    }
}

/// `integrate` with springs as forces: time-corrected Verlet (`dt_before` the previous step's
/// length) or symplectic Euler, velocities damped by e^(−d·dt); pinned nodes stay.
pub fn integrate(body: &mut Body, integrator: Integrator, dt: f32, dt_before: f32, damping: f32) {
    let decay = (-damping * dt).exp();
    let inverse_mass = 1.0 / body.mass;
    let ratio = dt / dt_before;
    body.position
        .par_iter_mut()
        .zip(body.previous.par_iter_mut())
        .zip(body.velocity.par_iter_mut())
        .zip(body.force.par_iter())
        .zip(body.pinned.par_iter())
        .for_each(|((((x, before), v), f), pinned)| {
            if *pinned {
                *before = *x;
                *v = Vec3::ZERO;
                return;
            }
            let a = *f * inverse_mass;
            let next = match integrator {
                Integrator::Verlet => {
                    *x + (*x - *before) * (ratio * decay) + a * (dt * (dt + dt_before) * 0.5)
                }
                _ => {
                    *v = (*v + a * dt) * decay;
                    *x + *v * dt
                }
            };
            *before = *x;
            *x = next;
            if integrator == Integrator::Verlet {
                *v = (*x - *before) / dt;
            }
        });
}

/// `integrate` the XPBD way: predict with the external forces already in `force` less the
/// springs (gravity and wind: call [`springs`] with no springs' part, i.e. this takes
/// `external` per node), then `iterations` Gauss–Seidel sweeps over the springs as compliant
/// distance constraints (compliance α = 1/k, α̃ = α/dt²), then velocities from the motion.
pub fn xpbd(body: &mut Body, external: &[Vec3], dt: f32, damping: f32, iterations: u32) {
    let decay = (-damping * dt).exp();
    let inverse_mass = 1.0 / body.mass;
    for k in 0..body.len() {
        body.previous[k] = body.position[k];
        if body.pinned[k] {
            body.velocity[k] = Vec3::ZERO;
            continue;
        }
        body.velocity[k] += external[k] * (inverse_mass * dt);
        body.position[k] += body.velocity[k] * dt;
    }
    let mut lambda = vec![0.0f32; body.springs.len()];
    for _ in 0..iterations {
        for (s, l) in body.springs.iter().zip(lambda.iter_mut()) {
            let (a, b) = (s.a as usize, s.b as usize);
            let wa = if body.pinned[a] { 0.0 } else { inverse_mass };
            let wb = if body.pinned[b] { 0.0 } else { inverse_mass };
            let d = body.position[a] - body.position[b];
            let length = d.length();
            if length == 0.0 || wa + wb == 0.0 {
                continue;
            }
            let compliance = 1.0 / (s.stiffness * dt * dt);
            let c = length - s.rest;
            let delta = (-c - compliance * *l) / (wa + wb + compliance);
            *l += delta;
            let n = d / length;
            body.position[a] += n * (wa * delta);
            body.position[b] -= n * (wb * delta);
        }
    }
    for k in 0..body.len() {
        body.velocity[k] = (body.position[k] - body.previous[k]) / dt * decay;
    }
}

/// `collide`: nodes below the ground or inside the sphere go back to its surface, losing the
/// velocity into it and `friction` of the tangential part; the Verlet and XPBD previous
/// positions follow so the implied velocity is the same.
pub fn collide(body: &mut Body, surroundings: &Surroundings, dt: f32) {
    let keep = 1.0 - surroundings.friction;
    for k in 0..body.len() {
        let mut x = body.position[k];
        let mut normal = None;
        if x.y < surroundings.ground {
            x.y = surroundings.ground;
            normal = Some(Vec3::Y);
        }
        if let Some((centre, radius)) = surroundings.sphere {
            let d = x - centre;
            let distance = d.length();
            if distance < radius && distance > 0.0 {
                let n = d / distance;
                x = centre + n * radius;
                normal = Some(n);
            }
        }
        if let Some(n) = normal {
            let v = body.velocity[k];
            let into = v.dot(n).min(0.0);
            let tangential = v - n * v.dot(n);
            let v = tangential * keep + n * (v.dot(n) - into);
            body.position[k] = x;
            body.velocity[k] = v;
            body.previous[k] = x - v * dt;
        }
    }
}
