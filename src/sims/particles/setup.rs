//! The state a particles scene starts from: the fountain, or the cloth or jelly with its pins;
//! a scene resized for `--particles`; the box the camera frames.

use super::body::Body;
use super::dynamics::Air;
use super::fountain::{Emission, Fountain};
use super::scene::{Orientation, ParticlesScene, Pins, Which, MAX_FOUNTAIN_PARTICLES, MAX_RATE};
use super::sim::State;
use crate::scene::{Aabb, Invalid};
use glam::Vec3;

/// `scene` resized to about `elements` particles alive (rate × [`mean_life`]) or nodes, with the
/// substeps a body then needs. A count beyond what the scene's keys allow is refused naming
/// `--particles`, with the range in the scene's unit.
pub(super) fn rescale(scene: &mut ParticlesScene, elements: u64) -> Result<(), Invalid> {
    let (least, most, unit) = match scene.which {
        Which::Fountain => {
            let by_rate = (f64::from(MAX_RATE) * f64::from(scene.fountain.lifetime)).floor();
            (
                1,
                (MAX_FOUNTAIN_PARTICLES as u64).min(by_rate as u64),
                format!(
                    "particles alive (rate × lifetime {} s; fountain.rate at most {MAX_RATE:e}/s, \
                     fountain.max_particles at most {MAX_FOUNTAIN_PARTICLES})",
                    scene.fountain.lifetime
                ),
            )
        }
        Which::Cloth => (4, 1024 * 1024, "nodes (2² to 1024², a square cloth)".into()),
        Which::Jelly => (8, 64 * 64 * 64, "nodes (2³ to 64³, a cube)".into()),
    };
    if !(least..=most).contains(&elements) {
        return Err(Invalid::new(
            "--particles",
            format!("must be {least} to {most} {unit}, got {elements}"),
        ));
    }
    match scene.which {
        Which::Fountain => {
            let life = mean_life(scene);
            let f = &mut scene.fountain;
            f.rate = (elements as f64 / life).min(f64::from(MAX_RATE)) as f32;
            f.max_particles = (2 * elements).min(MAX_FOUNTAIN_PARTICLES as u64) as usize;
        }
        Which::Cloth => {
            // The thickness keeps its fraction of the spacing.
            let before = scene.body.thickness / scene.body.spacing();
            scene.body.n = (elements as f64).sqrt().round() as usize;
            scene.body.thickness = before * scene.body.spacing();
        }
        Which::Jelly => {
            let before = scene.body.thickness / scene.body.spacing();
            scene.body.n = (elements as f64).cbrt().round() as usize;
            scene.body.thickness = before * scene.body.spacing();
        }
    }
    if scene.which != Which::Fountain && scene.body.integrator.explicit() {
        let needed = scene.stable_substeps();
        scene.body.substeps = scene.body.substeps.max(needed.min(4096));
    }
    scene.validate().map_err(|invalid| Invalid {
        message: format!("with --particles {elements}: {}", invalid.message),
        ..invalid
    })
}

/// Particles the pilot of [`mean_life`] follows.
const PILOT_PARTICLES: u64 = 4096;

/// Steps the pilot of [`mean_life`] takes at most (4096 particles × 20 000 steps: about a
/// second): a scene's lifetime may be 1000 s at any dt, a million steps or more.
const PILOT_STEPS: u64 = 20_000;

/// How long, on average, a particle of `scene`'s fountain is counted alive at a step's end, s:
/// its `lifetime` less what landing in the basin (or falling below `kill_height`) takes off,
/// never more than the lifetime. By Little's law the particles alive in the steady state are
/// rate × this, so `--particles N` sets rate = N / this (rate = N / lifetime kept 47 % of N
/// alive in the preset). Measured by a pilot: the first
/// [`PILOT_PARTICLES`] particles the nozzle would emit, advanced and collided with the
/// fountain's own stages (the basin's waves do not move a particle) until all are dead, or
/// for [`PILOT_STEPS`] at most, the particles still alive then counted to their lifetime.
pub(super) fn mean_life(scene: &ParticlesScene) -> f64 {
    let params = scene.fountain;
    let dt = scene.dt;
    let air = Air {
        gravity: Vec3::from(scene.world.gravity),
        wind: Vec3::from(scene.world.wind),
    };
    let mut pilot = Fountain::new(params);
    let emission = Emission::new(&params);
    for e in 0..PILOT_PARTICLES {
        let (x, v) = emission.particle(e);
        pilot.push(x, v);
    }
    let (mut alive_steps, mut steps) = (0_u64, 0_u64);
    while !pilot.is_empty() && steps < PILOT_STEPS {
        pilot.advance(dt, &air);
        let _landings = pilot.collide(dt);
        alive_steps += pilot.len() as u64;
        steps += 1;
    }
    // In f64: a lifetime over a step of 1e-30 s is more steps than a u64 holds.
    let lifetime_steps = (f64::from(params.lifetime) / f64::from(dt)).ceil();
    let survivors = pilot.len() as f64 * (lifetime_steps - steps as f64).max(0.0);
    // Emitted at a step's start, a particle is first counted at that step's end, as here.
    let counted = (alive_steps as f64 + survivors) / PILOT_PARTICLES as f64;
    (counted * f64::from(dt)).clamp(f64::from(dt), f64::from(params.lifetime))
}

/// Pins `body`'s nodes as the scene says (the cloth's corners or top row; the jelly none).
pub(super) fn pin(body: &mut Body, scene: &ParticlesScene) {
    body.pinned.fill(false);
    if scene.which != Which::Cloth {
        return;
    }
    let n = scene.body.n;
    match scene.body.pins {
        Pins::Corners => {
            body.pinned[0] = true;
            body.pinned[n - 1] = true;
        }
        Pins::Top => body.pinned[..n].fill(true),
        Pins::None => {}
    }
}

/// A flat n × n cloth of `spacing` at `position` (rows along +z) folded in half: row j at arc
/// length t = j·spacing along a path flat at the cloth's height, round a half circle of radius
/// `thickness` (the crease) and back flat 2·`thickness` above, so that its springs start
/// nearly at rest (a crease's chord is 2·h·sin(s/2h) for an arc of s: 4 % short at h = s).
fn fold(position: &mut [Vec3], n: usize, spacing: f32, thickness: f32) {
    let h = thickness;
    let arc = std::f32::consts::PI * h;
    let flat = (((n - 1) as f32 * spacing - arc) / 2.0).max(0.0);
    for (k, p) in position.iter_mut().enumerate() {
        let t = (k / n) as f32 * spacing;
        let (z, y) = if t <= flat {
            (t, 0.0)
        } else if t <= flat + arc {
            let angle = (t - flat) / h;
            (flat + h * angle.sin(), h * (1.0 - angle.cos()))
        } else {
            (flat - (t - flat - arc), 2.0 * h)
        };
        let row = p.z - (k / n) as f32 * spacing;
        *p = Vec3::new(p.x, p.y + y, row + z);
    }
}

/// The state `scene` starts from.
pub(super) fn build(scene: &ParticlesScene) -> State {
    let b = &scene.body;
    let start = Vec3::from(b.start);
    match scene.which {
        Which::Fountain => State::Fountain(Fountain::new(scene.fountain)),
        Which::Cloth => {
            let down = match b.orientation {
                Orientation::Hanging => Vec3::NEG_Y,
                Orientation::Flat | Orientation::Folded => Vec3::Z,
            };
            let mut body = Body::cloth(b.n, b.size, start, down, b.mass, b.stiffnesses());
            if b.orientation == Orientation::Folded {
                fold(&mut body.position, b.n, b.spacing(), b.thickness);
                body.previous.clone_from(&body.position);
            }
            pin(&mut body, scene);
            State::Body(body)
        }
        Which::Jelly => {
            let mut body = Body::jelly(b.n, b.size, start, b.mass, b.stiffnesses());
            body.cells.modulus = b.volume_stiffness;
            State::Body(body)
        }
    }
}

/// The box the camera frames: the fountain's basin up to the jet's top; a body's start with
/// room downwind and down to the ground (a cloth hangs below its `start`, a jelly stands on it,
/// its top `size` above).
pub(super) fn bounds_of(scene: &ParticlesScene) -> Aabb {
    match scene.which {
        Which::Fountain => {
            let f = &scene.fountain;
            let high = f.cube + f.speed[1] * f.speed[1] / (2.0 * 9.82);
            Aabb::new(
                [-f.basin, 0.0, -f.basin],
                [f.basin, high.min(4.0 * f.basin), f.basin],
            )
        }
        _ => {
            let (s, size) = (Vec3::from(scene.body.start), scene.body.size);
            let ground = scene.world.ground.min(s.y - size);
            let top = match scene.which {
                Which::Jelly => s.y + 1.25 * size,
                _ => s.y + 0.5 * size,
            };
            Aabb::new(
                [s.x - 0.5 * size, ground, s.z - size],
                [s.x + 1.5 * size, top, s.z + 2.0 * size],
            )
        }
    }
}
