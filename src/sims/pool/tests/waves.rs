//! The height field's waves: a drop's ring at the wave speed, energy and volume kept without
//! damping, damping's exponential decay, and the substeps that keep both schemes stable.

use super::*;

/// A drop's ring travels at the wave speed c: its crest moves c·Δt between two times
/// (the crest lags the front by a constant, which the difference cancels).
#[test]
fn a_drops_ring_travels_at_the_wave_speed() {
    let p = params(Model::Wave, Edges::Open, 257);
    ring_travels_at_the_wave_speed(&p, 0.01);
}

/// Without damping, symplectic Euler keeps the height field's discrete invariant to rounding
/// (islands included), its energy within 10 % (it differs from the invariant by
/// dt/2·Σv·a, largest for the shortest waves), and — with walls — the volume.
#[test]
fn without_damping_energy_and_volume_are_conserved() {
    let p = params(Model::Wave, Edges::Pool, 96);
    let island = |x: f32, z: f32| (x - 1.4).powi(2) + (z - 1.3).powi(2) < 0.04;
    for with_island in [false, true] {
        let mut pool = CpuPool::new(&p, |x, z| with_island && island(x, z));
        pool.step(&p, &[drop_at([0.7, 0.8], 0.08, 0.02)]);
        let (invariant, energy0, volume0) = (
            wave_invariant(&pool.surface, &p),
            energy_of(&pool, &p),
            pool.surface.volume(),
        );
        let mut worst_energy = 0.0f64;
        for _ in 0..10 {
            run_until(&mut pool, &p, 1.0);
            worst_energy = worst_energy.max((energy_of(&pool, &p) / energy0 - 1.0).abs());
        }
        let drift = (wave_invariant(&pool.surface, &p) / invariant - 1.0).abs();
        assert!(
            drift < 1e-6,
            "island {with_island}: invariant drifted {drift}"
        );
        assert!(
            worst_energy < 0.1,
            "island {with_island}: energy strayed {worst_energy}"
        );
        if !with_island {
            let volume_drift = (pool.surface.volume() - volume0).abs() / volume0.abs();
            // Σu changes only by f32 rounding (the mirrored Laplacian sums to zero): 2.2e-7
            // measured over the 6000 substeps.
            assert!(volume_drift < 1e-6, "volume drifted {volume_drift}");
        }
    }
}

/// Velocity damping d takes the energy down as e^(−d·t).
#[test]
fn damping_takes_the_energy_down_exponentially() {
    let mut p = params(Model::Wave, Edges::Pool, 96);
    p.damping = 0.5;
    let mut pool = CpuPool::new(&p, |_, _| false);
    pool.step(&p, &[drop_at([1.0, 1.0], 0.1, 0.02)]);
    // Let kinetic and potential energy reach their average split first.
    run_until(&mut pool, &p, 0.5);
    let before = energy_of(&pool, &p);
    run_until(&mut pool, &p, 2.0);
    let ratio = energy_of(&pool, &p) / before;
    let expected = (-p.damping * 2.0f32).exp() as f64;
    assert!(
        (ratio / expected - 1.0).abs() < 0.03,
        "energy fell to {ratio}, expected {expected}"
    );
}

/// Substeps keep the height field's c·dt/h at or below 0.5 and the springs' dt·ω_max at or
/// below 1.4.
#[test]
fn substeps_keep_the_schemes_stable() {
    let mut p = PoolParams::default();
    for nodes in [64, 256, 1024] {
        p.nodes = nodes;
        p.model = Model::Wave;
        assert!(p.wave_speed * p.substep_dt() / p.spacing() <= 0.5 + 1e-6);
        p.model = Model::Springs;
        let omega = (2.0 * 8.0 * p.stiffness()).sqrt();
        assert!(omega * p.substep_dt() <= 1.4 + 1e-5);
        assert!(p.substeps() > 1);
    }
}
