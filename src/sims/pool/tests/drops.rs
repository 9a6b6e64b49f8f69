//! Drops: the precomputed Gaussian on heights and on velocities.

use super::*;
use crate::sims::pool;

/// The precomputed stencil adds the amplitude at the centre and a·πr² in all (the Gaussian's
/// integral), and nothing on fixed nodes.
#[test]
fn a_drop_adds_its_gaussian() {
    let p = params(Model::Wave, Edges::Pool, 201);
    let mut pool = CpuPool::new(&p, |x, _| x < 0.2);
    let (r, a) = (0.05, 0.01);
    pool.step(&p, &[drop_at([1.0, 1.0], r, a)]);
    // The frame's substeps moved it a little: compare with a fresh drop and no steps.
    let mut fresh = CpuPool::new(&p, |x, _| x < 0.2);
    let mut stencils = pool::drops::Stencils::default();
    pool::drops::disturb(
        &mut fresh.surface,
        &drop_at([1.0, 1.0], r, a),
        &mut stencils,
    );
    let s = &fresh.surface;
    assert_eq!(s.height[100 * 201 + 100], a);
    let expected = f64::from(a * std::f32::consts::PI * r * r);
    assert!(
        (s.volume() / expected - 1.0).abs() < 0.01,
        "{} vs {expected}",
        s.volume()
    );
    pool::drops::disturb(
        &mut fresh.surface,
        &drop_at([0.1, 1.0], r, a),
        &mut stencils,
    );
    let s = &fresh.surface;
    assert!((0..201).all(|i| s.flags[100 * 201 + i] & FIXED == 0 || s.height[100 * 201 + i] == 0.0));
    assert!(pool.surface.max_height() > 0.5 * a);
}

/// A drop on velocities adds the same Gaussian to the nodes' vertical velocities (m/s),
/// heights untouched, nothing on fixed nodes; a frame later the heights have risen by about
/// the velocity times the frame time (the surface starts moving up where the drop struck).
#[test]
fn a_velocity_drop_adds_its_gaussian_to_the_velocities() {
    let p = params(Model::Wave, Edges::Pool, 201);
    let (r, a) = (0.05, 0.2);
    let velocity_drop = |x: f32| Drop {
        target: Target::Velocity,
        ..drop_at([x, 1.0], r, a)
    };
    let mut fresh = CpuPool::new(&p, |x, _| x < 0.2);
    let mut stencils = pool::drops::Stencils::default();
    pool::drops::disturb(&mut fresh.surface, &velocity_drop(1.0), &mut stencils);
    pool::drops::disturb(&mut fresh.surface, &velocity_drop(0.2), &mut stencils);
    let s = &fresh.surface;
    assert_eq!(s.velocity[100 * 201 + 100], a);
    assert_eq!(s.max_height(), 0.0, "heights untouched");
    let momentum: f64 = s.velocity.iter().map(|&v| f64::from(v)).sum::<f64>();
    let expected = f64::from(a * std::f32::consts::PI * r * r / (s.h * s.h));
    // The drop at x = 0.2 m is centred on the shore of land x < 0.2 m: its half on the land
    // is left out.
    let on_water = momentum - expected;
    assert!(
        on_water > 0.35 * expected && on_water < 0.55 * expected,
        "{momentum} vs {expected} for the whole drop"
    );
    assert!(
        (0..201).all(|i| s.flags[100 * 201 + i] & FIXED == 0 || s.velocity[100 * 201 + i] == 0.0)
    );
    let mut pool = CpuPool::new(&p, |x, _| x < 0.2);
    pool.step(&p, &[velocity_drop(1.0)]);
    let risen = pool.surface.height[100 * 201 + 100];
    assert!(
        (risen / (a * p.dt) - 1.0).abs() < 0.15,
        "{risen} m after a frame, {} expected",
        a * p.dt
    );
}
