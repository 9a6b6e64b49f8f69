//! The pool's physics, asserted: the wave speed, energy and volume, damping, reflection and
//! absorption at the edges, fixed nodes, and the spring lattice against the height field. Here
//! the helpers the tests share; the tests by idea in `waves.rs`, `edges.rs`, `lattice.rs` and
//! `drops.rs`.

mod drops;
mod edges;
mod lattice;
mod waves;

use super::cpu::{energy, wave_invariant};
use super::drops::{Drop, Target};
use super::params::{Edges, Model, PoolParams};
use super::solver::CpuPool;
use super::surface::{FIXED, LOCK_H};

/// A pool of `nodes`² over 2 m with wave speed 0.5 m/s and no damping.
pub(super) fn params(model: Model, edges: Edges, nodes: usize) -> PoolParams {
    PoolParams {
        nodes,
        size: 2.0,
        model,
        edges,
        wave_speed: 0.5,
        damping: 0.0,
        ..PoolParams::default()
    }
}

fn drop_at(position: [f32; 2], radius: f32, amplitude: f32) -> Drop {
    Drop {
        position,
        radius,
        amplitude,
        target: Target::Height,
    }
}

/// A drop of `amplitude` (m) at (1, 1) m of radius 4 cells on a still pool of `p`: its ring's
/// crest moves at the wave speed within 3 % between 0.6 s and 1.2 s after it (the crest lags
/// the front by a constant, which the difference cancels).
fn ring_travels_at_the_wave_speed(p: &PoolParams, amplitude: f32) {
    let mut pool = CpuPool::new(p, |_, _| false);
    let centre = [1.0, 1.0];
    pool.step(p, &[drop_at(centre, 4.0 * p.spacing(), amplitude)]);
    run_until(&mut pool, p, 0.6 - p.dt);
    let r1 = crest_radius(&pool, centre);
    run_until(&mut pool, p, 0.6);
    let r2 = crest_radius(&pool, centre);
    let speed = (r2 - r1) / 0.6;
    assert!(
        (speed - p.wave_speed).abs() < 0.03 * p.wave_speed,
        "crest at {r1} m then {r2} m: {speed} m/s, expected {} m/s",
        p.wave_speed
    );
}

/// Frames of `params.dt` until `time` (s) has passed.
fn run_until(pool: &mut CpuPool, params: &PoolParams, time: f32) {
    let frames = (time / params.dt).round() as usize;
    for _ in 0..frames {
        pool.step(params, &[]);
    }
}

/// The radius (m) of the crest of a ring around `centre`: the maximum of the height averaged
/// over rings one spacing wide, refined by a parabola through its neighbours.
fn crest_radius(pool: &CpuPool, centre: [f32; 2]) -> f32 {
    let s = &pool.surface;
    let bins = s.n;
    let (mut sum, mut count) = (vec![0.0f64; bins], vec![0u32; bins]);
    for j in 0..s.n {
        for i in 0..s.n {
            let (dx, dz) = (i as f32 * s.h - centre[0], j as f32 * s.h - centre[1]);
            let bin = ((dx * dx + dz * dz).sqrt() / s.h).round() as usize;
            if bin < bins {
                sum[bin] += f64::from(s.height[j * s.n + i]);
                count[bin] += 1;
            }
        }
    }
    let mean: Vec<f64> = (0..bins)
        .map(|b| sum[b] / f64::from(count[b].max(1)))
        .collect();
    let peak = (1..bins / 2 - 1)
        .max_by(|&a, &b| mean[a].total_cmp(&mean[b]))
        .unwrap();
    let (a, b, c) = (mean[peak - 1], mean[peak], mean[peak + 1]);
    let shift = 0.5 * (a - c) / (a - 2.0 * b + c);
    (peak as f64 + shift) as f32 * s.h
}

/// Fraction of `pool`'s energy left relative to `initial`.
fn energy_of(pool: &CpuPool, params: &PoolParams) -> f64 {
    let (kinetic, potential) = energy(&pool.surface, params);
    kinetic + potential
}
