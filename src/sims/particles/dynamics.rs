//! A spring-mass body's stages, once per substep: `springs` (each spring's pull computed
//! once, then each node gathers its springs' pulls, plus gravity), `wind` (per triangle
//! along its normal, ∝ area·(n̂·w), a third on each corner), `integrate` (time-corrected
//! Verlet, symplectic Euler, or XPBD's constraint projection), `collide` (the ground and a
//! sphere). Every node-parallel stage gathers what reaches its node (one task per node, no
//! atomics), as a kernel would.

use super::body::{Body, HIGHER_END};
use super::volume;
use glam::Vec3;
use rayon::prelude::*;
use serde::Deserialize;

/// Nodes per rayon task: small bodies run on one thread.
const MIN_NODES: usize = 1024;
/// Springs per rayon task in `springs`' first loop (a jelly's 512 nodes have 6 220 springs:
/// its spring loop splits where its node loops do not).
const MIN_SPRINGS: usize = 1024;

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Integrator {
    /// Time-corrected Verlet: x' = x + (x − x₋)·(dt/dt₋) + a·dt·(dt + dt₋)/2. Verlet at a
    /// constant step; exact for a constant acceleration when the step changes.
    Verlet,
    /// Symplectic Euler: v' = v + a·dt, x' = x + v'·dt (the original's fountain).
    Euler,
    /// Extended position-based dynamics (Macklin, Müller & Chentanez 2016): springs as
    /// distance constraints of compliance 1/k, Gauss–Seidel iterations per substep.
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

    /// Whether springs are forces integrated explicitly (stable only while dt·ω < 2).
    pub fn explicit(self) -> bool {
        self != Integrator::Xpbd
    }
}

/// Gravity and the wind, shared by every scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Air {
    /// Gravity, m/s².
    pub gravity: Vec3,
    /// The wind's velocity, m/s.
    pub wind: Vec3,
}

/// What acts on a body besides its springs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surroundings {
    /// Gravity and the wind.
    pub air: Air,
    /// Wind force per m² of triangle per m/s of wind along its normal, N·s/m³.
    pub wind_drag: f32,
    /// Whether the wind a triangle feels is relative to its mean velocity.
    pub wind_relative: bool,
    /// The ground's height, m (nothing below it).
    pub ground: f32,
    /// A solid sphere (centre, radius), when there is one.
    pub sphere: Option<(Vec3, f32)>,
    /// The Coulomb friction coefficient μ of every contact (ground, sphere, the body on itself;
    /// [`coulomb`]).
    pub friction: f32,
}

/// `springs`: every node's force, its weight m·g plus (`with_springs`) the pull of each of
/// its springs, k·(l − l₀)·ê towards the other end (Hooke; the spec's ambiguity 4 resolved to
/// the physical sign). XPBD passes `with_springs = false`: its springs are constraints.
///
/// Each spring's pull is computed once, on its lower-index end, into
/// [`Body::spring_force`] (springs in parallel: one square root and one division a spring),
/// then each node gathers its links' pulls, negated at the higher-index end (nodes in
/// parallel, no atomics). The same sums as each node computing its links itself, bit for
/// bit: x_lo − x_hi is −(x_hi − x_lo) exactly, and so is its length and the product.
pub fn springs(body: &mut Body, gravity: Vec3, with_springs: bool) {
    let weight = gravity * body.mass;
    if !with_springs {
        body.force
            .par_iter_mut()
            .with_min_len(MIN_NODES)
            .for_each(|f| *f = weight);
        return;
    }
    let position = &body.position;
    body.spring_force
        .par_iter_mut()
        .zip(body.springs.par_iter())
        .with_min_len(MIN_SPRINGS)
        .for_each(|(f, s)| {
            let d = position[s.a.max(s.b) as usize] - position[s.a.min(s.b) as usize];
            let length = d.length();
            *f = Vec3::ZERO;
            if length > 0.0 {
                *f = d * (s.stiffness * (length - s.rest) / length);
            }
        });
    let (start, links, pulls) = (&body.node_start, &body.link_pulls, &body.spring_force);
    body.force
        .par_iter_mut()
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, f)| {
            let mut sum = weight;
            for &link in &links[start[k] as usize..start[k + 1] as usize] {
                let pull = pulls[(link & !HIGHER_END) as usize];
                if link & HIGHER_END == 0 {
                    sum += pull;
                } else {
                    sum -= pull;
                }
            }
            *f = sum;
        });
}

/// `wind`: each triangle is pushed along its unit normal n̂ by drag·area·(n̂·w)·n̂ — w the
/// wind, less the triangle's mean velocity when relative — a third on each corner (the
/// spec's ambiguity 5: the original added all of it to each). Face-on wind pushes downwind
/// whichever side faces it; edge-on wind pushes nothing. Triangles in parallel, then each
/// node gathers its triangles' thirds.
///
/// With c the edges' cross product (|c| twice the area, n̂ = c/|c|) a corner's third is
/// drag·(c·3w)/(18|c|)·c, 3w = 3·wind − (v_a + v_b + v_c): one square root and one division
/// a triangle. Written as n̂ = c/|c|, the mean velocity over 3 and the third apart it took
/// seven divisions, which bound the stage (the divider is the CPU's slowest unit: the stage
/// cost 0.7 of `springs`' time for a sixth of its square roots); the force differs from that
/// form by float rounding only (≤ 4·10⁻⁷ relative on a 64² cloth). The kernel computes the same.
pub fn wind(body: &mut Body, surroundings: &Surroundings) {
    let drag = surroundings.wind_drag;
    if drag == 0.0 {
        return;
    }
    let (position, velocity) = (&body.position, &body.velocity);
    let (wind3, relative) = (surroundings.air.wind * 3.0, surroundings.wind_relative);
    let drag18 = drag / 18.0;
    body.triangle_force
        .par_iter_mut()
        .zip(body.triangles.par_iter())
        .with_min_len(MIN_NODES)
        .for_each(|(f, t)| {
            let [a, b, c] = t.map(|k| k as usize);
            let cross = (position[b] - position[a]).cross(position[c] - position[a]);
            let twice_area = cross.length();
            *f = Vec3::ZERO;
            if twice_area > 0.0 {
                let mut w3 = wind3;
                if relative {
                    w3 -= velocity[a] + velocity[b] + velocity[c];
                }
                *f = cross * (drag18 * cross.dot(w3) / twice_area);
            }
        });
    let (start, list, pushes) = (
        &body.node_triangle_start,
        &body.node_triangles,
        &body.triangle_force,
    );
    body.force
        .par_iter_mut()
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, f)| {
            for &t in &list[start[k] as usize..start[k + 1] as usize] {
                *f += pushes[t as usize];
            }
        });
}

/// `integrate` with springs as forces: time-corrected Verlet (`dt_before` the previous
/// step's length) or symplectic Euler, velocities damped by e^(−damping·dt); pinned nodes
/// stay. Every integrator leaves `previous` = the position before the step and `velocity` =
/// the step's motion over dt (Verlet's half-step velocity), so one can switch to another live.
pub fn integrate(body: &mut Body, integrator: Integrator, dt: f32, dt_before: f32, damping: f32) {
    let decay = (-damping * dt).exp();
    let inverse_mass = 1.0 / body.mass;
    let carry = dt / dt_before * decay;
    let reach = dt * (dt + dt_before) * 0.5;
    body.position
        .par_iter_mut()
        .zip(body.previous.par_iter_mut())
        .zip(body.velocity.par_iter_mut())
        .zip(body.force.par_iter())
        .zip(body.pinned.par_iter())
        .with_min_len(MIN_NODES)
        .for_each(|((((x, before), v), f), &pinned)| {
            if pinned {
                *before = *x;
                *v = Vec3::ZERO;
                return;
            }
            let a = *f * inverse_mass;
            let last = std::mem::replace(before, *x);
            if integrator == Integrator::Verlet {
                *x += (*x - last) * carry + a * reach;
                *v = (*x - *before) / dt;
            } else {
                *v = (*v + a * dt) * decay;
                *x += *v * dt;
            }
        });
}

/// `integrate` the XPBD way, solving for each node's displacement Δ over the substep (small
/// numbers at float32's full relative precision) rather than its absolute position (whose
/// float32 step, 2.4·10⁻⁷ m at y = 2 m, is about one substep's fall g·dt² at 96 substeps, so
/// x + v·dt and (x − x₋)/dt would be rounded to the order of themselves): predict with the
/// forces in `force` (the weight and the wind), v ← v + f/m·dt, Δ = v·dt; then `iterations`
/// Gauss–Seidel sweeps over the springs as distance constraints C = l − l₀ of compliance
/// α = 1/k (α̃ = α/dt²; Δλ = (−C − α̃λ)/(w_a + w_b + α̃), λ from zero each substep), l the
/// length of d = (x_a − x_b) + (Δ_a − Δ_b) (x the position before the substep: nearby nodes'
/// difference is exact or nearly), the corrections going to Δ; then v = Δ/dt damped by
/// e^(−damping·dt) and x ← x + Δ, once. Pinned nodes have zero inverse mass and Δ = 0.
/// A jelly's volume constraints (`volume.rs` `xpbd_volume`) are swept after the springs in
/// each iteration.
/// Sequential: a sweep reads the corrections made before it, colour by colour
/// ([`Body::coloured`]: the springs of one colour share no node, so the kernels solve a colour
/// in parallel and make the same sweep).
pub fn xpbd(body: &mut Body, dt: f32, damping: f32, iterations: u32) {
    let decay = (-damping * dt).exp();
    let inverse_mass = 1.0 / body.mass;
    // Δ and λ live in the body ([`Body::displacement`], [`Body::lambda`]): sized once, every
    // entry written here before it is read, so a substep allocates nothing.
    body.displacement.resize(body.len(), Vec3::ZERO);
    for (k, moved) in body.displacement.iter_mut().enumerate() {
        body.previous[k] = body.position[k];
        if body.pinned[k] {
            body.velocity[k] = Vec3::ZERO;
            *moved = Vec3::ZERO;
            continue;
        }
        body.velocity[k] += body.force[k] * (inverse_mass * dt);
        *moved = body.velocity[k] * dt;
    }
    body.lambda.clear();
    body.lambda.resize(body.springs.len(), 0.0);
    body.cells.lambda.fill(0.0);
    let weight = |pinned: bool| if pinned { 0.0 } else { inverse_mass };
    // As slices of one length, so that the spring's index, once checked, needs no second check
    // for its λ (as when λ was a fresh vec of the springs' length).
    let (springs, pinned, previous) = (&body.springs[..], &body.pinned[..], &body.previous[..]);
    let lambda = &mut body.lambda[..springs.len()];
    let displacement = &mut body.displacement[..];
    let cells = &mut body.cells;
    for _ in 0..iterations {
        for &index in &body.coloured {
            let (s, l) = (&springs[index as usize], &mut lambda[index as usize]);
            let (a, b) = (s.a as usize, s.b as usize);
            let (wa, wb) = (weight(pinned[a]), weight(pinned[b]));
            let d = (previous[a] - previous[b]) + (displacement[a] - displacement[b]);
            let length = d.length();
            if length == 0.0 || wa + wb == 0.0 {
                continue;
            }
            let compliance = 1.0 / (s.stiffness * dt * dt);
            let delta = (s.rest - length - compliance * *l) / (wa + wb + compliance);
            *l += delta;
            let n = d / length;
            displacement[a] += n * (wa * delta);
            displacement[b] -= n * (wb * delta);
        }
        volume::xpbd_volume(cells, (inverse_mass, dt), pinned, previous, displacement);
    }
    for (k, moved) in displacement.iter().enumerate() {
        body.velocity[k] = *moved / dt * decay;
        body.position[k] = body.previous[k] + *moved;
    }
}

/// Coulomb friction in its position-based form (Macklin et al. 2014, "Unified particle
/// physics", §6.1), written once for every contact (`collide`'s ground and sphere,
/// `self_collide`'s pairs, the CUDA `coulomb`): of the sliding velocity `sliding` (the
/// tangential part of the velocity, or of the relative velocity of a pair), the part removed
/// this substep, given `pressed`, the normal velocity the contact removed (its normal
/// impulse over the mass), and `friction`, μ. Static while |sliding| ≤ μ·pressed: all of it
/// (the node sticks); kinetic beyond: μ·pressed along it. Times dt, the displacement form:
/// the tangential displacement undone is at most μ times the normal displacement undone. The
/// deceleration of a node pressed by its weight is μ·g whatever the substep (pressed = g·dt
/// each substep, μ·g·dt removed), and a node not pressed loses nothing.
pub fn coulomb(sliding: Vec3, pressed: f32, friction: f32) -> Vec3 {
    let bound = friction * pressed;
    let speed = sliding.length();
    if speed <= bound {
        sliding
    } else {
        sliding * (bound / speed)
    }
}

/// `collide`: a node below the ground or inside the sphere goes back to its surface, losing
/// its velocity into it, and [`coulomb`] friction (pressed by the velocity it lost) takes
/// its sliding velocity and moves it back along the surface by what was removed times dt
/// (the tangential displacement the friction undoes: a node held by static friction does not
/// creep); `previous` follows so the implied Verlet velocity is the same. Pinned (and grabbed)
/// nodes stay where they are.
pub fn collide(body: &mut Body, surroundings: &Surroundings, dt: f32) {
    let friction = surroundings.friction;
    let (ground, sphere) = (surroundings.ground, surroundings.sphere);
    body.position
        .par_iter_mut()
        .zip(body.previous.par_iter_mut())
        .zip(body.velocity.par_iter_mut())
        .zip(body.pinned.par_iter())
        .with_min_len(MIN_NODES)
        .for_each(|(((x, before), v), &pinned)| {
            if pinned {
                return;
            }
            let mut normal = None;
            if x.y < ground {
                x.y = ground;
                normal = Some(Vec3::Y);
            }
            if let Some((centre, radius)) = sphere {
                let d = *x - centre;
                let distance = d.length();
                if distance < radius && distance > 0.0 {
                    let n = d / distance;
                    *x = centre + n * radius;
                    normal = Some(n);
                }
            }
            if let Some(n) = normal {
                let along = v.dot(n);
                let tangential = *v - n * along;
                let removed = coulomb(tangential, (-along).max(0.0), friction);
                *v = (tangential - removed) + n * along.max(0.0);
                *x -= removed * dt;
                *before = *x - *v * dt;
            }
        });
}
