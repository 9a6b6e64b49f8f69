//! Physical behaviour of the CPU reference solver.

use fluidlab::sims::pbf::cpu::CpuSolver;
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::stats::FrameStats;
use fluidlab::sims::pbf::{Aabb, InitialState, Params, Solver, SolverError, World};
use glam::Vec3A;
use std::collections::HashMap;

fn solver_for(toml: &str) -> (Scene, CpuSolver) {
    let scene = Scene::parse(toml, "test", "test.toml").expect("valid scene");
    let solver =
        CpuSolver::new(scene.world(), scene.params.clone(), &scene.seed()).expect("solver");
    (scene, solver)
}

fn run(solver: &mut CpuSolver, steps: usize) {
    for _ in 0..steps {
        solver.step().expect("step");
    }
}

/// A 0.3 × 0.2 × 0.3 m block (2250 particles) settles in a tank for 3 simulated seconds.
#[test]
fn a_block_of_fluid_settles_at_rest_density_and_height() {
    let (scene, mut solver) = solver_for(
        r#"
        [container]
        min = [0.0, 0.0, 0.0]
        max = [0.3, 0.5, 0.3]
        [[fluid]]
        shape = "box"
        min = [0.0, 0.0, 0.0]
        max = [0.3, 0.2, 0.3]
        [params]
        spacing = 0.02
        iterations = 4
        substeps = 2
        dt = 0.0166
        "#,
    );
    let count = solver.particle_count();
    assert_eq!(count, 15 * 10 * 15);
    run(&mut solver, 180);
    let snapshot = solver.snapshot().unwrap();
    assert_eq!(snapshot.positions.len(), count);
    let margin = scene.params.particle_radius() - 1e-6;
    for (id, p) in snapshot.positions.iter().enumerate() {
        assert!(
            p.is_finite() && snapshot.velocities[id].is_finite(),
            "particle {id}"
        );
        assert!(
            p.cmpge(scene.container.min + Vec3A::splat(margin)).all(),
            "particle {id} at {p} left the tank"
        );
        assert!(
            p.cmple(scene.container.max - Vec3A::splat(margin)).all(),
            "particle {id} at {p} left the tank"
        );
    }
    let stats = FrameStats::measure(&snapshot, 180, 3.0, 0.0);
    // At rest: the residual speed is the deep-pool jitter PBF is known for; 0.05 m/s rms is
    // 0.4 mm per substep, under 2% of the spacing.
    let rms_speed =
        (2.0 * stats.kinetic_energy / (snapshot.particle_mass as f64 * count as f64)).sqrt();
    assert!(rms_speed < 0.05, "rms speed {rms_speed} m/s");
    // Compression: 4 iterations × 2 substeps leave a residual; 2% mean over-density is the
    // budget the PBF paper quotes for its scenes (1–2%).
    let compression: f64 = snapshot
        .densities
        .iter()
        .map(|&d| (d as f64 / scene.params.rest_density as f64 - 1.0).max(0.0))
        .sum::<f64>()
        / count as f64;
    assert!(compression < 0.02, "mean compression {compression}");
    // |ρ/ρ₀ − 1| also counts the density deficit of particles at the free surface and walls,
    // which have fewer neighbours: roughly a third of this block's particles touch the top or a
    // wall, with deficits of 20–50%, so the mean stays under 15%.
    assert!(
        stats.density_error_mean < 0.15,
        "mean density error {}",
        stats.density_error_mean
    );
    // Height: the fluid's volume N·V over the tank's floor area, where V = m/ρ₀. The measured
    // surface is the mean top of the particles' spheres in the top layer. Particles at the
    // walls and the free surface lack neighbours on one side, so (with no boundary density)
    // they pack closer than interior ones: measured here as 9% (0.9 of a spacing) for this
    // small, wall-dominated block. 12% bounds that and still catches a collapse or a jump.
    let volume = count as f64 * scene.params.particle_volume() as f64;
    let expected = volume / (0.3 * 0.3);
    let mut heights: Vec<f32> = snapshot.positions.iter().map(|p| p.y).collect();
    heights.sort_by(f32::total_cmp);
    let top_layer = &heights[heights.len() - 15 * 15..];
    let surface = top_layer.iter().map(|&y| y as f64).sum::<f64>() / top_layer.len() as f64
        + scene.params.particle_radius() as f64;
    assert!(
        (surface / expected - 1.0).abs() < 0.12,
        "surface at {surface} m, expected {expected} m"
    );
}

/// Two blobs collide in zero gravity far from every wall: Δp is antisymmetric pair by pair and
/// XSPH exchanges velocity pairwise, so total momentum changes only by round-off. The coarse
/// correction moves particles by a displacement interpolated from a grid, like a FLIP pressure
/// projection: it conserves momentum only as far as particles sample the grid evenly (0.3 % of
/// Σ|v| here); the particle solve alone conserves it to round-off.
#[test]
fn momentum_is_conserved_without_gravity_walls_or_vorticity() {
    for (coarse, allowance) in [(false, 1e-4), (true, 1e-2)] {
        momentum_of_colliding_blobs(coarse, allowance);
    }
}

fn momentum_of_colliding_blobs(coarse: bool, allowance: f64) {
    let (_, mut solver) = solver_for(&format!(
        r#"
        [container]
        min = [-1.0, -1.0, -1.0]
        max = [1.0, 1.0, 1.0]
        [[fluid]]
        shape = "sphere"
        center = [-0.12, 0.0, 0.0]
        radius = 0.1
        velocity = [1.5, 0.2, 0.0]
        [[fluid]]
        shape = "box"
        min = [0.0, -0.08, -0.1]
        max = [0.16, 0.1, 0.1]
        velocity = [-0.5, 0.0, 0.1]
        [params]
        spacing = 0.02
        gravity = [0.0, 0.0, 0.0]
        vorticity = 0.0
        xsph_c = 0.05
        coarse_correction = {coarse}
        "#
    ));
    let momentum = |s: &CpuSolver| {
        s.snapshot()
            .unwrap()
            .velocities
            .iter()
            .fold(glam::DVec3::ZERO, |sum, v| {
                sum + glam::DVec3::new(v.x as f64, v.y as f64, v.z as f64)
            })
    };
    let before = momentum(&solver);
    let initial_speed: f64 = solver
        .snapshot()
        .unwrap()
        .velocities
        .iter()
        .map(|v| v.length() as f64)
        .sum();
    run(&mut solver, 20);
    let snapshot = solver.snapshot().unwrap();
    let after = momentum(&solver);
    // The blobs met: the bodies pushed each other (speeds changed a lot) and compressed.
    let final_speed: f64 = snapshot.velocities.iter().map(|v| v.length() as f64).sum();
    assert!(
        (final_speed - initial_speed).abs() > 0.05 * initial_speed,
        "no collision happened: Σ|v| {initial_speed} → {final_speed}"
    );
    // No wall touched.
    assert!(snapshot
        .positions
        .iter()
        .all(|p| p.abs().max_element() < 0.9));
    // Round-off: each velocity is (x* − x)/dt with |x| ≈ 0.2 m in f32 (ulp 1.5e-8 m), so one
    // particle's error is ~1e-8 / 0.0083 s ≈ 2e-6 m/s; the allowance is 1e-4 of Σ|v|.
    let drift = (after - before).length();
    assert!(
        drift < allowance * initial_speed,
        "coarse correction {coarse}: momentum drifted by {drift} (Σ|v| = {initial_speed})"
    );
}

/// A column centred in x collapses both ways; each particle's mirror partner stays mirrored.
#[test]
fn a_mirror_symmetric_scene_stays_symmetric() {
    let (scene, mut solver) = solver_for(
        r#"
        [container]
        min = [0.0, 0.0, 0.0]
        max = [0.6, 0.4, 0.2]
        [[fluid]]
        shape = "box"
        min = [0.2, 0.0, 0.0]
        max = [0.4, 0.3, 0.2]
        [params]
        spacing = 0.02
        vorticity = 0.0
        "#,
    );
    let mirror = |p: Vec3A| Vec3A::new(0.6 - p.x, p.y, p.z);
    let key = |p: Vec3A| {
        (
            (p.x * 1e4).round() as i64,
            (p.y * 1e4).round() as i64,
            (p.z * 1e4).round() as i64,
        )
    };
    let initial = solver.snapshot().unwrap().positions;
    let index: HashMap<_, _> = initial
        .iter()
        .enumerate()
        .map(|(id, p)| (key(*p), id))
        .collect();
    let partner: Vec<usize> = initial.iter().map(|p| index[&key(mirror(*p))]).collect();
    run(&mut solver, 6);
    let positions = solver.snapshot().unwrap().positions;
    let moved = positions
        .iter()
        .zip(&initial)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0, f32::max);
    assert!(
        moved > 0.01,
        "the column did not start to collapse (max displacement {moved})"
    );
    // Particle by particle: partners sum their neighbours in different orders, so they differ
    // by round-off (1e-7 m at first), which the collapse amplifies about 3× per frame. After
    // 6 frames that is ~4e-5 m; 1% of the spacing (2e-4 m) leaves a margin of 5 and is far
    // below a real asymmetry, which shows at the scale of a spacing.
    let tolerance = 0.01 * scene.params.spacing;
    for (id, p) in positions.iter().enumerate() {
        let error = (*p - mirror(positions[partner[id]])).length();
        assert!(
            error < tolerance,
            "particle {id} is {error} m off its mirror image"
        );
    }
    // Later, single particles diverge (the splash is chaotic) but the flow stays symmetric:
    // the centre of mass stays on the mirror plane and the two fronts at the same distance.
    run(&mut solver, 24);
    let stats = FrameStats::measure(&solver.snapshot().unwrap(), 30, 0.5, 0.0);
    assert!(
        (stats.center_of_mass[0] - 0.3).abs() < 0.05 * scene.params.spacing as f64,
        "{:?}",
        stats.center_of_mass
    );
    let fronts = (stats.bbox_min[0] - (0.6 - stats.bbox_max[0])).abs();
    assert!(
        fronts < scene.params.spacing,
        "fronts at {} and {}",
        stats.bbox_min[0],
        stats.bbox_max[0]
    );
    assert!(
        stats.bbox_max[0] - stats.bbox_min[0] > 0.3,
        "the column spread out"
    );
}

fn lone_world() -> World {
    World {
        container: Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
        obstacles: vec![],
    }
}

#[test]
fn a_lone_particle_falls_freely_without_nan() {
    let mut params = Params::with_spacing(0.02);
    params.cfl = 0.0;
    let initial = InitialState {
        positions: vec![Vec3A::new(0.5, 0.8, 0.5)],
        velocities: vec![Vec3A::ZERO],
    };
    let mut solver = CpuSolver::new(lone_world(), params.clone(), &initial).unwrap();
    run(&mut solver, 10);
    let snapshot = solver.snapshot().unwrap();
    // Symplectic Euler: after n substeps v = −g n dt and y = y₀ − g dt² n(n+1)/2.
    let n = 10.0 * params.substeps as f32;
    let dt = params.dt / params.substeps as f32;
    assert!((snapshot.velocities[0].y + 9.81 * n * dt).abs() < 1e-4);
    assert!((snapshot.positions[0].y - (0.8 - 9.81 * dt * dt * n * (n + 1.0) / 2.0)).abs() < 1e-4);
    assert_eq!(snapshot.neighbor_counts[0], 0);
    assert_eq!(
        snapshot.densities[0],
        params.particle_mass * params.kernel().density(0.0)
    );
}

#[test]
fn coincident_particles_separate_without_nan() {
    let params = Params::with_spacing(0.02);
    let p = Vec3A::new(0.5, 0.01, 0.5);
    let initial = InitialState {
        positions: vec![p, p, p],
        velocities: vec![Vec3A::ZERO; 3],
    };
    let mut solver = CpuSolver::new(lone_world(), params, &initial).unwrap();
    run(&mut solver, 5);
    let s = solver.snapshot().unwrap();
    assert!(s.positions.iter().all(|p| p.is_finite()));
    assert!(s.velocities.iter().all(|v| v.is_finite()));
    for (a, b) in [(0, 1), (0, 2), (1, 2)] {
        assert!(
            (s.positions[a] - s.positions[b]).length() > 1e-3,
            "particles {a} and {b} still coincide"
        );
    }
}

#[test]
fn a_non_finite_value_is_reported_with_the_step_and_particle_id() {
    let params = Params::with_spacing(0.02);
    let mut positions: Vec<Vec3A> = (0..5)
        .map(|i| Vec3A::new(0.1 + 0.02 * i as f32, 0.1, 0.1))
        .collect();
    // Parameters cannot overflow (they are validated); a hand-made initial state can: a
    // particle 10³⁸ m outside the container is projected back in the first step, and
    // v = Δx / dt overflows f32.
    let mut far_out = positions.clone();
    far_out[3].x = 1e38;
    let initial = InitialState {
        velocities: vec![Vec3A::ZERO; 5],
        positions: far_out,
    };
    let mut solver = CpuSolver::new(lone_world(), params.clone(), &initial).unwrap();
    match solver.step() {
        Err(SolverError::NonFinite {
            step,
            particle,
            quantity,
            stage,
            ..
        }) => {
            assert_eq!(
                (step, particle, quantity, stage),
                (0, 3, "velocity", "xsph")
            );
        }
        other => panic!("expected a non-finite error, got {other:?}"),
    }
    let message = solver.step().unwrap_err().to_string();
    assert!(
        message.contains("step 0") && message.contains("particle id"),
        "{message}"
    );
    // A non-finite initial state is refused before the first step.
    positions[1] = Vec3A::new(0.1, f32::INFINITY, 0.1);
    let initial = InitialState {
        velocities: vec![Vec3A::ZERO; 5],
        positions,
    };
    let error = CpuSolver::new(lone_world(), params, &initial)
        .err()
        .expect("refused");
    assert!(error.to_string().contains("particle id 1"), "{error}");
}

#[test]
fn live_parameter_edits_reach_the_next_step() {
    let params = Params::with_spacing(0.02);
    let initial = InitialState {
        positions: vec![Vec3A::new(0.5, 0.5, 0.5)],
        velocities: vec![Vec3A::ZERO],
    };
    let mut solver = CpuSolver::new(lone_world(), params.clone(), &initial).unwrap();
    let mut sideways = params.clone();
    sideways.gravity = [2.0, 0.0, 0.0];
    solver.set_params(&sideways).unwrap();
    solver.step().unwrap();
    let v = solver.snapshot().unwrap().velocities[0];
    assert!((v.x - 2.0 * params.dt).abs() < 1e-5 && v.y == 0.0, "{v}");
    let mut bad = params;
    bad.spacing = 0.03;
    assert!(solver
        .set_params(&bad)
        .unwrap_err()
        .to_string()
        .contains("spacing"));
}
