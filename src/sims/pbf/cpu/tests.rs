//! The CPU solver's stages one at a time against what their formulas predict on small, exactly
//! known configurations: a lattice with a density wave (the Jacobi iteration's response), a
//! rigid rotation (the SPH curl and vorticity confinement), a moving particle among resting
//! ones (XSPH) and a few isolated particles (s_corr). Each value is derived in the test's
//! comment; the margins are what f32 and the configuration's second-order terms allow, far
//! below what a wrong sign, a dropped term or a missing factor changes.

use super::*;
use crate::sims::pbf::{Aabb, Obstacle};

/// A container far larger than the particles of these tests: no wall is within reach.
fn open_world() -> World {
    World {
        container: Aabb::new([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]),
        obstacles: vec![],
    }
}

/// The defaults at 0.02 m, in zero gravity.
fn weightless() -> Params {
    let mut params = Params::with_spacing(0.02);
    params.gravity = [0.0; 3];
    params
}

/// A cube of `n`³ lattice sites of `spacing`, centred at the origin.
fn cube(n: usize, spacing: f32) -> Vec<Vec3A> {
    let half = 0.5 * (n as f32 - 1.0);
    let mut points = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                points.push((Vec3A::new(i as f32, j as f32, k as f32) - half) * spacing);
            }
        }
    }
    points
}

fn solver(params: &Params, positions: Vec<Vec3A>, velocities: Vec<Vec3A>) -> CpuSolver {
    let initial = InitialState {
        positions,
        velocities,
    };
    CpuSolver::new(open_world(), params.clone(), &initial).expect("solver")
}

/// The sorted index of the particle whose id is `id`.
fn sorted_index(solver: &CpuSolver, id: usize) -> usize {
    solver.ids.iter().position(|&i| i as usize == id).unwrap()
}

/// Least-squares fit of c₀ + a cos φ + b sin φ to `values` at phases `phases`.
fn fit_wave(phases: &[f32], values: &[f32]) -> [f64; 3] {
    let (mut normal, mut right) = (glam::DMat3::ZERO, glam::DVec3::ZERO);
    for (&phase, &value) in phases.iter().zip(values) {
        let basis = glam::DVec3::new(1.0, (phase as f64).cos(), (phase as f64).sin());
        right += basis * value as f64;
        normal += glam::DMat3::from_cols(basis * basis.x, basis * basis.y, basis * basis.z);
    }
    (normal.inverse() * right).to_array()
}

/// One constraint iteration (`apply_delta`, then the densities `compute_lambda` measures)
/// multiplies a density wave of wave vector κ by 1 − ω μ(κ), where
/// μ(κ) = |V Σⱼ ∇W(rⱼ) sin(κ·rⱼ)|² / Σⱼ |V ∇W(rⱼ)|² over the lattice offsets rⱼ (the Jacobi
/// iteration's symbol, `SphKernel::lattice_jacobi_peak`) and ω = `jacobi_relaxation`. At the
/// peak, κ = π/(3s)·(1, 1, 1), μ = 2.6 and ω = 4/(3μ₀): the wave comes back at −⅓ of itself.
/// Plain Jacobi (ω = 1) would return −1.6 of it (growing); Δp from λᵢ alone (λⱼ dropped)
/// would leave it as it is (+1); λ's denominator without Σ|∇C|² would blow it up.
///
/// The lattice is compressed by 0.15 % (so every interior constraint is active: the uniform
/// C₀ ≈ 0.45 % lies above the wave's ±0.11 %) and μ is evaluated at the compressed spacing s′
/// (ω is the solver's, from the rest lattice). Only particles 6 spacings or more inside the
/// cube's faces are fitted: the two outer layers lack neighbours, so their λ differs, and that
/// reaches 4 layers further in one iteration (2 for Δp, 2 for the density). The prediction is
/// linear in the wave; what it leaves out is of the order of C₀ (the uniform λ₀ acting on the
/// displaced lattice, Σ|∇C|² varying with the wave): at C₀ = 3 % those moved the ratio by
/// 0.065, at 0.45 % by 0.01 (measured −0.346 against −0.337), well within ±0.03.
#[test]
fn one_iteration_returns_the_peak_density_wave_at_minus_a_third() {
    let params = weightless();
    let s = params.spacing * 0.9985;
    let n = 22;
    let rest = cube(n, s);
    let wave = Vec3A::splat(std::f32::consts::PI / (3.0 * s));
    let along = Vec3A::ONE.normalize();
    // A longitudinal displacement wave d = a ê sin(κ·x): its density wave is a cosine.
    let amplitude = 0.001 * s;
    let positions: Vec<Vec3A> = rest
        .iter()
        .map(|&x| x + along * (amplitude * wave.dot(x).sin()))
        .collect();
    let mut solver = solver(&params, positions, vec![Vec3A::ZERO; n * n * n]);
    let c = StepConstants::new(&params, params.dt);
    // The sites 6 spacings or more inside every face, by id (the sites before the move).
    let reach = (0.5 * (n as f32 - 1.0) - 6.0) * s + 1e-6;
    let interior: Vec<usize> = (0..rest.len())
        .filter(|&id| rest[id].abs().max_element() <= reach)
        .collect();
    assert!(interior.len() >= 10 * 10 * 10, "{}", interior.len());
    let measure = |solver: &CpuSolver| {
        let (phases, constraints): (Vec<f32>, Vec<f32>) = interior
            .iter()
            .map(|&id| {
                let k = sorted_index(solver, id);
                let constraint = solver.densities[k] * c.inverse_rest_density - 1.0;
                (wave.dot(rest[id]), constraint)
            })
            .unzip();
        assert!(
            constraints.iter().all(|&c| c > 0.0),
            "a constraint is inactive"
        );
        fit_wave(&phases, &constraints)
    };
    let before = measure(&solver);
    solver.apply_delta(&c);
    solver.compute_lambda(&c);
    let after = measure(&solver);
    // The theory at the compressed spacing.
    let kernel = params.kernel();
    let (mut sine, mut squares) = (Vec3A::ZERO, 0.0f32);
    for offset in cube(5, s) {
        let gradient = kernel.gradient(offset, offset.length_squared()) * c.volume;
        sine += gradient * wave.dot(offset).sin();
        squares += gradient.length_squared();
    }
    let mu = sine.length_squared() / squares;
    let expected = 1.0 - c.jacobi_relaxation * mu;
    let (a, b) = (before[1], before[2]);
    let ratio = (after[1] * a + after[2] * b) / (a * a + b * b);
    println!(
        "C₀ {:.4} → {:.4}, wave {:.2e} → ratio {ratio:.4} (theory {expected:.4}, μ {mu:.3}, ω {:.3})",
        before[0],
        after[0],
        a.hypot(b),
        c.jacobi_relaxation
    );
    // C₀ = 3 × 0.15 % (ρ ∝ s⁻³), the wave a quarter of it.
    assert!((0.003..0.006).contains(&before[0]), "C₀ = {}", before[0]);
    let wave_amplitude = a.hypot(b);
    assert!(
        (0.15..0.5).contains(&(wave_amplitude / before[0])),
        "wave amplitude {wave_amplitude}"
    );
    assert!(
        (ratio - expected as f64).abs() < 0.03,
        "the wave came back at {ratio} of itself, theory {expected}"
    );
    // The uniform compression has no gradient in the interior: one iteration leaves it (the
    // wave's second order moves it by about its square, 1 % of C₀).
    assert!(
        (after[0] / before[0] - 1.0).abs() < 0.03,
        "C₀ {} → {}",
        before[0],
        after[0]
    );
}

/// A cube of fluid turning rigidly at Ω about z. The SPH curl ωᵢ = Σⱼ V (vᵢ − vⱼ) × ∇Wᵢⱼ of
/// v = Ω × x is, with ∇W(r) = F(r) r and the lattice's isotropy (Σ F r rᵀ = σ I),
/// V Σ F [r (Ω·r) − Ω r²] = −2 V σ Ω: twice the angular velocity times −Vσ, which is 1 for
/// the continuous kernel (∫ y ⊗ ∇W = −I) and 0.95 on the lattice at h = 2 spacings, so ω is
/// computed from the lattice sum and asserted to 10⁻³ at every interior particle.
///
/// Confinement then adds dt·ε·(η̂ × ω), η = Σⱼ (|ωⱼ| − |ωᵢ|) ∇Wᵢⱼ: |ω| falls at the surface
/// (missing neighbours), so η̂ points inwards, and on the +x face η̂ × ω = −x̂ × ẑ = +ŷ, the
/// direction the fluid turns there: confinement speeds the rotation up by exactly dt·ε·|ωᵢ|
/// at the middle of each side face (η̂ lies along the face's normal there by symmetry).
#[test]
fn the_curl_of_a_rigid_rotation_is_twice_its_rate_and_confinement_drives_it() {
    let mut params = weightless();
    params.vorticity = 0.01;
    let s = params.spacing;
    let n = 13;
    let positions = cube(n, s);
    let spin = Vec3A::new(0.0, 0.0, 2.0);
    let velocities: Vec<Vec3A> = positions.iter().map(|&x| spin.cross(x)).collect();
    let mut solver = solver(&params, positions.clone(), velocities.clone());
    let dt = params.dt / params.substeps as f32;
    let c = StepConstants::new(&params, dt);
    solver.vorticity(&c);
    let kernel = params.kernel();
    let sigma: f32 = cube(5, s)
        .iter()
        .map(|&r| {
            let gradient = kernel.gradient(r, r.length_squared());
            gradient.x * r.x
        })
        .sum();
    let expected = spin * (-2.0 * c.volume * sigma);
    assert!(
        (0.9..1.0).contains(&(expected.z / (2.0 * spin.z))),
        "{expected}"
    );
    let half = 0.5 * (n as f32 - 1.0) * s;
    let mut interior = 0;
    for (id, x) in positions.iter().enumerate() {
        if x.abs().max_element() > half - 2.0 * s + 1e-6 {
            continue;
        }
        let omega = solver.vectors[sorted_index(&solver, id)];
        assert!(
            (omega - expected).length() < 1e-3 * expected.length(),
            "particle {id} at {x}: ω = {omega}, expected {expected}"
        );
        interior += 1;
    }
    assert_eq!(interior, 9 * 9 * 9);
    // The middle of each side face: the flow there runs along Ω × (outward normal).
    let middle = n / 2;
    for (i, j, normal) in [
        (n - 1, middle, Vec3A::X),
        (0, middle, -Vec3A::X),
        (middle, n - 1, Vec3A::Y),
        (middle, 0, -Vec3A::Y),
    ] {
        let id = i + n * (j + n * middle);
        let k = sorted_index(&solver, id);
        let omega = solver.vectors[k];
        // A surface particle's curl: lower than the interior's, still along Ω.
        assert!(
            omega.z > 0.3 * expected.z && omega.z < expected.z,
            "{omega}"
        );
        let change = solver.velocities[k] - velocities[id];
        let flow = spin.cross(normal).normalize();
        let size = params.vorticity * dt * omega.length();
        assert!(
            (change - flow * size).length() < 1e-3 * size,
            "face {normal}: Δv = {change}, expected {} (ε dt |ω| = {size} m/s)",
            flow * size
        );
    }
}

/// XSPH: vᵢ += c Σⱼ V (vⱼ − vᵢ) Wᵢⱼ. One particle moving at u in a resting lattice keeps
/// u (1 − c V Σⱼ≠ᵢ Wᵢⱼ) = u (1 − c (1 − V W(0))) (the mass is calibrated so that
/// V Σⱼ Wᵢⱼ = 1 over the lattice, the particle itself included), and each neighbour j takes
/// c V Wᵢⱼ u: the blend conserves momentum and relaxes the difference, never amplifies it.
#[test]
fn xsph_shares_a_moving_particles_velocity_with_its_neighbours() {
    let mut params = weightless();
    params.xsph_c = 0.1;
    let s = params.spacing;
    let n = 9;
    let positions = cube(n, s);
    let centre = n * n * n / 2;
    assert_eq!(positions[centre], Vec3A::ZERO);
    let u = Vec3A::new(0.1, -0.05, 0.02);
    let mut velocities = vec![Vec3A::ZERO; positions.len()];
    velocities[centre] = u;
    let mut solver = solver(&params, positions.clone(), velocities);
    let c = StepConstants::new(&params, params.dt);
    solver.xsph(&c);
    let kernel = params.kernel();
    let keep = 1.0 - params.xsph_c * (1.0 - c.volume * kernel.density(0.0));
    let k = sorted_index(&solver, centre);
    assert!(
        (solver.velocities[k] - u * keep).length() < 1e-5 * u.length(),
        "{} vs {}",
        solver.velocities[k],
        u * keep
    );
    assert!((0.9..0.95).contains(&keep), "{keep}");
    let mut total = solver.velocities[k];
    for id in (0..positions.len()).filter(|&id| id != centre) {
        let v = solver.velocities[sorted_index(&solver, id)];
        let w = kernel.density(positions[id].length_squared());
        let expected = u * (params.xsph_c * c.volume * w);
        assert!(
            (v - expected).length() < 1e-5 * u.length(),
            "particle {id}: {v} vs {expected}"
        );
        total += v;
    }
    assert!((total - u).length() < 1e-5 * u.length(), "momentum {total}");
}

/// s_corr (the paper's artificial pressure, eq. 13): Δpᵢ = V Σⱼ s_corr ∇Wᵢⱼ with
/// s_corr = −k (W(r)/W(Δq))ⁿ / Σ|∇C|²₀ (`scorr_k` a fraction of the rest stiffness). Five
/// particles too few to reach ρ₀ (λ = 0: the constraint only resists compression) feel only
/// it: a step moves each by that sum, away from its neighbours. The centre has four
/// neighbours (the four-lane path), the others one to three (the scalar path).
#[test]
fn s_corr_pushes_sparse_particles_apart_by_the_papers_formula() {
    let mut params = weightless();
    params.scorr_k = 0.1;
    params.xsph_c = 0.0;
    params.vorticity = 0.0;
    params.coarse_correction = false;
    params.iterations = 1;
    params.substeps = 1;
    params.cfl = 0.0;
    let h = params.kernel_radius;
    let positions = vec![
        Vec3A::ZERO,
        Vec3A::new(0.5 * h, 0.0, 0.0),
        Vec3A::new(0.0, 0.45 * h, 0.1 * h),
        Vec3A::new(-0.3 * h, -0.1 * h, 0.35 * h),
        Vec3A::new(0.1 * h, -0.2 * h, -0.45 * h),
    ];
    let mut solver = solver(&params, positions.clone(), vec![Vec3A::ZERO; 5]);
    solver.step().unwrap();
    let snapshot = solver.snapshot().unwrap();
    let kernel = params.kernel();
    let volume = params.particle_volume();
    let reference = kernel.density((params.scorr_dq * h).powi(2));
    let scale = params.scorr_k / params.rest_stiffness();
    let (mut total, mut largest) = (Vec3A::ZERO, 0.0f32);
    for (i, &x) in positions.iter().enumerate() {
        assert!(
            snapshot.densities[i] < 0.9 * params.rest_density,
            "particle {i} is compressed: {}",
            snapshot.densities[i]
        );
        let mut expected = Vec3A::ZERO;
        for (j, &y) in positions.iter().enumerate() {
            let r2 = (x - y).length_squared();
            if j != i && r2 < h * h {
                let scorr = -scale * (kernel.density(r2) / reference).powi(params.scorr_n);
                expected += kernel.gradient(x - y, r2) * (volume * scorr);
            }
        }
        let moved = snapshot.positions[i] - x;
        assert!(
            expected.length() > 1e-5 * h,
            "particle {i}: {expected} is too small to test"
        );
        assert!(
            (moved - expected).length() < 1e-3 * expected.length(),
            "particle {i}: moved {moved}, expected {expected}"
        );
        total += moved;
        largest = largest.max(moved.length());
    }
    // Pair by pair equal and opposite: the centre of mass stays.
    assert!(
        total.length() < 1e-3 * largest,
        "the particles moved by {total} in all"
    );
}

/// λ and Δp against the paper's formulas (eq. 11–14) with the walls' terms (`boundary.rs`),
/// evaluated here pair by pair over all particles in f64, without the grid, the neighbour
/// lists, the pair cache or the four-lane sums:
/// ρᵢ = m W(0) + m Σⱼ Wᵢⱼ + m Σ_b W, Cᵢ = max(ρᵢ/ρ₀ − 1, 0),
/// λᵢ = −ω Cᵢ / (|V Σⱼ ∇Wᵢⱼ + V Σ_b ∇W|² + Σⱼ |V ∇Wᵢⱼ|² + ε),
/// Δpᵢ = V Σⱼ (λᵢ + λⱼ + s_corr,ᵢⱼ) ∇Wᵢⱼ + V λᵢ Σ_b ∇W, then projection onto the walls and out
/// of the obstacles at the particle radius. A jittered, 5 % compressed block in a corner of the
/// container, beside a box and under a sphere, puts most particles within reach of a solid
/// with an active constraint. The solver sums in f32 in another order: λ and the corrected
/// positions agree to 10⁻⁴ of their largest values; a term dropped, a factor or a sign wrong
/// moves them by a large part of it.
#[test]
fn lambda_and_the_correction_are_the_papers_formulas_with_the_walls_terms() {
    let mut params = weightless();
    params.scorr_k = 0.05;
    // ε at a tenth of the rest stiffness (the default 10⁻⁶ hides it in round-off).
    params.relaxation = 0.1;
    let s = params.spacing;
    let world = World {
        container: Aabb::new([0.0, 0.0, 0.0], [0.2, 0.2, 0.2]),
        obstacles: vec![
            Obstacle::Box(Aabb::new([0.0, 0.0, 0.16], [0.2, 0.1, 0.2])),
            Obstacle::Sphere {
                center: Vec3A::new(0.08, 0.16, 0.08),
                radius: 0.03,
            },
        ],
    };
    let mut seed = 5u64;
    let mut random = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 40) as f32) / (1u64 << 24) as f32 - 0.5
    };
    let spacing = 0.95 * s;
    let mut positions = Vec::new();
    for k in 0..8 {
        for j in 0..6 {
            for i in 0..8 {
                let site = (Vec3A::new(i as f32, j as f32, k as f32) + 0.5) * spacing;
                let jitter = Vec3A::new(random(), random(), random()) * (0.2 * s);
                positions.push(world.project(site + jitter, 0.45 * s));
            }
        }
    }
    let n = positions.len();
    let initial = InitialState {
        velocities: vec![Vec3A::ZERO; n],
        positions: positions.clone(),
    };
    let mut solver = CpuSolver::new(world.clone(), params.clone(), &initial).unwrap();
    let c = StepConstants::new(&params, params.dt);
    let kernel = params.kernel();
    let h2 = params.kernel_radius * params.kernel_radius;
    let (m, v) = (c.mass as f64, c.volume as f64);
    let walls: Vec<_> = positions
        .iter()
        .map(|&x| c.boundary.sums(&world, x))
        .collect();
    let to64 = |g: Vec3A| glam::DVec3::new(g.x as f64, g.y as f64, g.z as f64);
    let lambdas: Vec<f64> = (0..n)
        .map(|i| {
            let (mut density, mut gradient, mut squares) = (0.0f64, glam::DVec3::ZERO, 0.0f64);
            for j in (0..n).filter(|&j| j != i) {
                let r = positions[i] - positions[j];
                let r2 = r.length_squared();
                if r2 < h2 {
                    density += kernel.density(r2) as f64;
                    let g = to64(kernel.gradient(r, r2)) * v;
                    gradient += g;
                    squares += g.length_squared();
                }
            }
            let density = c.self_density as f64 + m * (density + walls[i].density as f64);
            let gradient = gradient + to64(walls[i].gradient) * v;
            let constraint = (density / params.rest_density as f64 - 1.0).max(0.0);
            -(c.jacobi_relaxation as f64) * constraint
                / (gradient.length_squared() + squares + c.relaxation as f64)
        })
        .collect();
    let largest = lambdas.iter().fold(0.0f64, |a, l| a.max(l.abs()));
    let near_solids = (0..n)
        .filter(|&i| walls[i].density > 0.0 && lambdas[i] < -0.2 * largest)
        .count();
    assert!(
        near_solids >= 100,
        "{near_solids} compressed particles at solids"
    );
    for (k, &id) in solver.ids.iter().enumerate() {
        let (lambda, expected) = (solver.lambdas[k] as f64, lambdas[id as usize]);
        assert!(
            (lambda - expected).abs() <= 1e-4 * largest,
            "particle {id}: λ {lambda} vs {expected}"
        );
    }
    let reference = kernel.density((params.scorr_dq * params.kernel_radius).powi(2)) as f64;
    let corrected: Vec<Vec3A> = (0..n)
        .map(|i| {
            let mut delta = to64(walls[i].gradient) * lambdas[i];
            for j in (0..n).filter(|&j| j != i) {
                let r = positions[i] - positions[j];
                let r2 = r.length_squared();
                if r2 < h2 {
                    let scorr = -(c.scorr_scale as f64)
                        * (kernel.density(r2) as f64 / reference).powi(params.scorr_n);
                    delta += to64(kernel.gradient(r, r2)) * (lambdas[i] + lambdas[j] + scorr);
                }
            }
            let delta = delta * v;
            let moved = positions[i] + Vec3A::new(delta.x as f32, delta.y as f32, delta.z as f32);
            world.project(moved, c.margin)
        })
        .collect();
    let largest_move = (0..n)
        .map(|i| (corrected[i] - positions[i]).length())
        .fold(0.0f32, f32::max);
    assert!(
        largest_move > 0.02 * s,
        "largest correction {largest_move} m"
    );
    solver.apply_delta(&c);
    for (k, &id) in solver.ids.iter().enumerate() {
        let (x, expected) = (solver.predicted[k], corrected[id as usize]);
        assert!(
            (x - expected).length() <= 1e-4 * largest_move + 1e-7,
            "particle {id}: corrected to {x}, expected {expected}"
        );
    }
}
