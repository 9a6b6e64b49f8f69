//! The particles kind against physical theory (docs/particles/validation.md): a cloth pinned
//! along its top row swings as D. Bernoulli's hanging chain; its static strain under its
//! weight, for the springs and for XPBD as its iterations grow; the explicit integrators'
//! stability limit against the lattice's highest frequency. Each test writes what it measured
//! to `target/tmp/particles-validation/` (JSON), which `scripts/plot_particles.py` plots.

use fluidlab::scene::Source;
use fluidlab::sims::particles::body::Body;
use fluidlab::sims::particles::dynamics::{self, Integrator};
use fluidlab::sims::particles::scene::ParticlesScene;
use fluidlab::sims::particles::{ParticlesSim, State};
use fluidlab::sims::Sim;
use glam::Vec3;
use serde_json::{json, Value};

const G: f32 = 9.82;
/// The cloths' structural stiffness, N/m.
const STIFFNESS: f32 = 300.0;
/// The cloths' mass, kg.
const MASS: f32 = 0.3;
/// The first zero of the Bessel function J₀.
const J01: f64 = 2.404_825_557_695_773;

/// Writes `value` as `NAME.json` for the plot.
fn record(name: &str, value: &Value) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("particles-validation");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.json")), value.to_string()).unwrap();
}

fn body(sim: &mut ParticlesSim) -> &mut Body {
    match &mut sim.state {
        State::Body(b) => b,
        State::Fountain(_) => panic!("a body scene"),
    }
}

/// A hanging cloth: n × n nodes, 1 m, `mass` kg, pinned along its top row at y = 2 m in the
/// xy plane, 300 N/m, shear ½, no bending springs, no wind drag, under `gravity` (m/s², down),
/// damped at 5 /s (to come to rest; the swing then sets it to 0).
fn hanging_cloth(
    n: usize,
    (integrator, iterations): (Integrator, u32),
    substeps: u32,
    mass: f32,
    gravity: f32,
) -> ParticlesSim {
    let text = format!(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = {n}\nsize = 1.0\nmass = {mass}\n\
         stiffness = {STIFFNESS}\nshear = 0.5\nbend = 0.0\ndamping = 5.0\npins = \"top\"\n\
         integrator = \"{}\"\niterations = {iterations}\nsubsteps = {substeps}\n\
         start = [0.0, 2.0, 0.0]\n[world]\nwind_drag = 0.0\ngravity = [0.0, {}, 0.0]\n",
        integrator.name(),
        -gravity
    );
    let source = Source::parse(&text, "validation", "validation.toml").unwrap();
    ParticlesSim::with_scene(ParticlesScene::from_source(&source).unwrap_or_else(|e| panic!("{e}")))
}

/// Row j's mean position (row 0 is the pinned top).
fn row_mean(b: &Body, n: usize, j: usize) -> Vec3 {
    b.position[j * n..(j + 1) * n].iter().sum::<Vec3>() / n as f32
}

/// The lowest mode of the discrete hanging chain the cloth's rows make at rest: row j (1 to
/// n − 1, of mass n·m each) hangs from the gap above it, which carries the weight of the
/// n − j rows below, so its stiffness against a sideways offset (per unit row mass) is
/// (n − j)·g / Δy_j with Δy_j the gap's height at rest (the springs' stretch included).
/// Returns ω² and the mode's shape (row 1 to n − 1), by inverse iteration on the tridiagonal
/// matrix.
fn chain_mode(gaps: &[f64]) -> (f64, Vec<f64>) {
    let rows = gaps.len();
    // c[j]: the stiffness of the gap above row j + 1 (rows from 1), per unit row mass.
    let c: Vec<f64> = (0..rows)
        .map(|j| (rows - j) as f64 * f64::from(G) / gaps[j])
        .collect();
    let diagonal: Vec<f64> = (0..rows)
        .map(|j| c[j] + c.get(j + 1).copied().unwrap_or(0.0))
        .collect();
    let off: Vec<f64> = (0..rows - 1).map(|j| -c[j + 1]).collect();
    let multiply = |x: &[f64]| -> Vec<f64> {
        (0..rows)
            .map(|j| {
                let mut y = diagonal[j] * x[j];
                if j > 0 {
                    y += off[j - 1] * x[j - 1];
                }
                if j + 1 < rows {
                    y += off[j] * x[j + 1];
                }
                y
            })
            .collect()
    };
    // Thomas's algorithm for A·y = x.
    let solve = |x: &[f64]| -> Vec<f64> {
        let (mut c2, mut d2) = (vec![0.0; rows], vec![0.0; rows]);
        for j in 0..rows {
            let lower = if j > 0 { off[j - 1] } else { 0.0 };
            let pivot = diagonal[j] - if j > 0 { lower * c2[j - 1] } else { 0.0 };
            c2[j] = if j + 1 < rows { off[j] / pivot } else { 0.0 };
            d2[j] = (x[j] - if j > 0 { lower * d2[j - 1] } else { 0.0 }) / pivot;
        }
        for j in (0..rows - 1).rev() {
            d2[j] -= c2[j] * d2[j + 1];
        }
        d2
    };
    let mut x = vec![1.0; rows];
    for _ in 0..60 {
        let y = solve(&x);
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        x = y.iter().map(|v| v / norm).collect();
    }
    let ax = multiply(&x);
    let lambda = x.iter().zip(&ax).map(|(a, b)| a * b).sum::<f64>();
    let bottom = x[rows - 1];
    (lambda, x.iter().map(|v| v / bottom).collect())
}

/// What one swing measured.
struct Swing {
    /// ω from the zero crossings of the bottom row's mean out-of-plane offset, rad/s.
    omega: f64,
    /// The discrete chain's lowest ω at the cloth's rest spacings, rad/s.
    chain: f64,
    /// The continuous chain's, (j₀₁/2)·√(g/L) with L the hanging length at rest, rad/s.
    continuum: f64,
    /// L, m.
    length: f64,
    /// The bottom row's mean offset (m) each frame, from the release.
    offsets: Vec<f64>,
}

/// Hangs the cloth to rest (damped, 2.5 s), offsets it out of its plane (z) in the shape of
/// the discrete chain's first mode, 1 cm at the bottom, lets it swing undamped for `seconds`
/// and times the zero crossings of the bottom row's mean offset (linear between frames).
fn swing(n: usize, solver: (Integrator, u32), gravity: f32, seconds: f32) -> Swing {
    let substeps = match solver.0 {
        Integrator::Xpbd => 24,
        _ => (n as u32 * 3 / 2).max(12),
    };
    let mut sim = hanging_cloth(n, solver, substeps, MASS, gravity);
    let dt = sim.scene.dt;
    for _ in 0..(2.5 / dt) as usize {
        sim.step().unwrap();
    }
    let b = body(&mut sim);
    let rows: Vec<Vec3> = (0..n).map(|j| row_mean(b, n, j)).collect();
    let gaps: Vec<f64> = (1..n)
        .map(|j| f64::from(rows[j - 1].y - rows[j].y))
        .collect();
    let length = gaps.iter().sum::<f64>();
    let (lambda, shape) = chain_mode(&gaps);
    for j in 1..n {
        let dz = (0.01 * shape[j - 1]) as f32;
        for k in j * n..(j + 1) * n {
            b.position[k].z += dz;
            b.previous[k].z += dz;
            b.velocity[k] = Vec3::ZERO;
        }
    }
    sim.scene.body.damping = 0.0;
    let bottom =
        |sim: &mut ParticlesSim| f64::from(row_mean(body(sim), n, n - 1).z - rows[n - 1].z);
    let mut offsets = vec![bottom(&mut sim)];
    for _ in 0..(seconds / dt) as usize {
        sim.step().unwrap();
        offsets.push(bottom(&mut sim));
    }
    let dt = f64::from(dt);
    let crossings: Vec<f64> = offsets
        .windows(2)
        .enumerate()
        .filter(|(_, w)| (w[0] > 0.0) != (w[1] > 0.0))
        .map(|(k, w)| (k as f64 + w[0] / (w[0] - w[1])) * dt)
        .collect();
    assert!(crossings.len() >= 4, "{} crossings", crossings.len());
    let half = (crossings.last().unwrap() - crossings[0]) / (crossings.len() - 1) as f64;
    Swing {
        omega: std::f64::consts::PI / half,
        chain: lambda.sqrt(),
        continuum: J01 / 2.0 * (f64::from(G) / length).sqrt(),
        length,
        offsets,
    }
}

/// A cloth pinned along its top row swings out of its plane as D. Bernoulli's hanging chain
/// (each row a link): for Verlet, symplectic Euler and XPBD (5 iterations) at n = 6, 11, 16
/// its period is the discrete chain's at the cloth's own rest spacings within 0.3 %, and
/// converges on the continuous chain's ω₁ = (j₀₁/2)·√(g/L): 1.6 % below it at n = 16 (the
/// discrete chain's ≈ 1/(4(n − 1)), a chain of lumped masses being about h/2 longer), each n
/// closer than the one before. The same cloth under 10 % less gravity than the theory's is
/// 5 % slower: outside both margins.
#[test]
fn a_cloth_hanging_from_its_top_row_swings_as_the_hanging_chain() {
    let mut records = Vec::new();
    for solver in [
        (Integrator::Verlet, 1),
        (Integrator::Euler, 1),
        (Integrator::Xpbd, 5),
    ] {
        let mut previous = f64::INFINITY;
        for n in [6, 11, 16] {
            let s = swing(n, solver, G, 5.0);
            let (to_chain, to_continuum) = (s.omega / s.chain - 1.0, s.omega / s.continuum - 1.0);
            let name = solver.0.name();
            assert!(
                to_chain.abs() < 0.003,
                "{name}, n = {n}: ω {:.4} rad/s against the discrete chain's {:.4}",
                s.omega,
                s.chain
            );
            assert!(
                to_continuum.abs() < previous,
                "{name}, n = {n}: {to_continuum:.4} off the continuum, no closer than before"
            );
            previous = to_continuum.abs();
            records.push(json!({
                "integrator": name, "iterations": solver.1, "n": n, "omega": s.omega,
                "chain": s.chain, "continuum": s.continuum, "length": s.length,
                "dt": 1.0 / 60.0, "offsets": s.offsets,
            }));
        }
        assert!(
            previous < 0.02,
            "{}, n = 16: {previous:.4} off the continuous chain",
            solver.0.name()
        );
    }
    let weak = swing(11, (Integrator::Verlet, 1), 0.9 * G, 5.0);
    let (to_chain, to_continuum) = (
        weak.omega / weak.chain - 1.0,
        weak.omega / weak.continuum - 1.0,
    );
    assert!(
        to_chain < -0.04 && to_continuum < -0.04,
        "10 % less gravity: {to_chain:.4}, {to_continuum:.4}"
    );
    record(
        "chain",
        &json!({"runs": records, "weaker_gravity": {"to_chain": to_chain, "to_continuum": to_continuum}}),
    );
}

/// A cloth hanging at rest after `seconds`: the top gap's mean strain (the top row's height
/// over the next row's, against h), the largest spring strain and the kinetic energy (J).
fn rest_strain(
    n: usize,
    solver: (Integrator, u32),
    substeps: u32,
    mass: f32,
    seconds: f32,
) -> (f64, f64, f64) {
    let mut sim = hanging_cloth(n, solver, substeps, mass, G);
    for _ in 0..(seconds / sim.scene.dt) as usize {
        sim.step().unwrap();
    }
    let b = body(&mut sim);
    let gap = f64::from(row_mean(b, n, 0).y - row_mean(b, n, 1).y);
    let (kinetic, _, _) = b.energy(Vec3::new(0.0, -G, 0.0));
    (
        gap * (n - 1) as f64 - 1.0,
        f64::from(b.max_strain()),
        kinetic,
    )
}

/// The top gap's strain if the weight below, (n − 1)·n·m·g, were spread evenly over the
/// springs crossing it: n structural of stiffness k and 2(n − 1) diagonals of s·k, each
/// adding s·k/2 vertically: ε = (n − 1)·n·m·g / (k·h·(n + s(n − 1))).
fn weight_over_springs(n: usize, mass: f32) -> f64 {
    let (nf, h) = (n as f64, 1.0 / (n - 1) as f64);
    let m = f64::from(mass) / (nf * nf);
    (nf - 1.0) * nf * m * f64::from(G) / (f64::from(STIFFNESS) * h * (nf + 0.5 * (nf - 1.0)))
}

/// The static strain of a cloth of 11² nodes hanging from its top row: with springs
/// (Verlet, 24 substeps) the top gap's mean strain is the weight below over the springs
/// crossing it within 4 % (measured +2.9 %: the even spread is an approximation, the edges
/// carry more; 10 % more mass is outside), the largest strain between that and the weight
/// over the structural springs alone; XPBD at compliance 1/k and the same substeps comes to
/// the springs' strain as its iterations grow: within 1 % from 2 iterations on, 1 iteration
/// softer by more than 2 % (its Gauss–Seidel sweep has not converged). At 96 substeps, where
/// a substep's fall g·dt² = 2.8·10⁻⁷ m is about one float32 step of y at 2 m, XPBD (solving
/// for the substep's displacement) is within 1.5 % of the springs' at 1, 2 and 5 iterations
/// (measured ±0.1 %; 18–20 % too stiff when it solved for absolute positions) and at rest:
/// kinetic energy below 10⁻⁷ J (measured 3.5–4.8·10⁻⁹ J, the springs' 5.8·10⁻⁸; 5.9·10⁻⁶
/// before).
#[test]
fn xpbd_comes_to_the_springs_static_strain_as_its_iterations_grow() {
    let n = 11;
    let theory = weight_over_springs(n, MASS);
    let structural = theory * (n as f64 + 0.5 * (n - 1) as f64) / n as f64;
    let (springs, springs_max, springs_kinetic) =
        rest_strain(n, (Integrator::Verlet, 1), 24, MASS, 3.0);
    assert!(
        (springs / theory - 1.0).abs() < 0.04,
        "springs: top strain {springs:.5}, the weight over the springs {theory:.5}"
    );
    assert!(
        (theory..structural).contains(&springs_max),
        "springs: max strain {springs_max:.5} not in [{theory:.5}, {structural:.5}]"
    );
    let (heavier, _, _) = rest_strain(n, (Integrator::Verlet, 1), 24, 1.1 * MASS, 3.0);
    assert!(
        heavier / theory - 1.0 > 0.06,
        "10 % more mass: {heavier:.5} against {theory:.5}"
    );
    let mut xpbd = Vec::new();
    for substeps in [24, 96] {
        for iterations in [1, 2, 5, 20] {
            if substeps == 96 && iterations > 5 {
                continue;
            }
            let (top, max, kinetic) =
                rest_strain(n, (Integrator::Xpbd, iterations), substeps, MASS, 3.0);
            xpbd.push(
                json!({"substeps": substeps, "iterations": iterations, "top": top,
                             "max": max, "kinetic": kinetic}),
            );
            println!("XPBD × {iterations}, {substeps} substeps: {top:.5}, {kinetic:.3e} J");
            if substeps == 96 {
                let off = top / springs - 1.0;
                assert!(
                    off.abs() < 0.015,
                    "XPBD × {iterations}, 96 substeps: {top:.5} against the springs' {springs:.5}"
                );
                assert!(
                    kinetic < 1e-7,
                    "XPBD × {iterations}, 96 substeps: not at rest, {kinetic:.3e} J"
                );
            } else {
                let off = top / springs - 1.0;
                if iterations == 1 {
                    assert!(
                        off > 0.02,
                        "XPBD × 1: {top:.5} against the springs' {springs:.5}"
                    );
                } else {
                    assert!(
                        off.abs() < 0.01,
                        "XPBD × {iterations}: {top:.5} against {springs:.5}"
                    );
                }
            }
        }
    }
    record(
        "strain",
        &json!({"n": n, "theory": theory, "structural": structural, "springs": springs, "heavier": heavier,
                "springs_kinetic": springs_kinetic,
                "springs_max": springs_max, "xpbd": xpbd}),
    );
}

/// The largest displacement from `rest`, m (infinite when not finite).
fn spread(b: &Body, rest: &[Vec3]) -> f32 {
    b.position
        .iter()
        .zip(rest)
        .map(|(p, r)| {
            if p.is_finite() {
                p.distance(*r)
            } else {
                f32::INFINITY
            }
        })
        .fold(0.0, f32::max)
}

/// A free n × n cloth (1 m, 0.3 kg, shear ½, no gravity) at stiffness `k`, its nodes moved
/// by up to 10⁻³·h at random, stepped `steps` times at `dt` with springs as forces: the
/// largest displacement from rest over the first one.
fn growth(n: usize, k: f32, integrator: Integrator, dt: f32, steps: usize) -> f32 {
    let mut b = Body::cloth(n, 1.0, Vec3::ZERO, Vec3::NEG_Y, MASS, [k, 0.5 * k, 0.0]);
    let rest = b.position.clone();
    let h = 1.0 / (n - 1) as f32;
    let mut seed = 0x9e37_79b9_u32;
    let mut random = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32 - 0.5
    };
    for k in 0..b.len() {
        let kick = Vec3::new(random(), random(), 0.0) * (2e-3 * h);
        b.position[k] += kick;
        b.previous[k] += kick;
    }
    let start = spread(&b, &rest);
    for _ in 0..steps {
        dynamics::springs(&mut b, Vec3::ZERO, true);
        dynamics::integrate(&mut b, integrator, dt, dt, 0.0);
    }
    spread(&b, &rest) / start
}

/// The explicit integrators are stable while dt·ω_max < 2. The free 16² cloth's highest mode
/// (the lattice's ω² = 6k/m of the docs, 5.92k/m on 16² with its free edges) sets the largest
/// stable k at a given step: bisected on whether 2000 steps grow a 10⁻³·h disturbance
/// 50-fold, it is 4m/(6·dt²) times 1.00–1.03 (6/5.92 = 1.013), for Verlet and symplectic
/// Euler alike (at a constant step the same recurrence), and so 2.0–2.06 times the k the
/// scene's Gershgorin bound (ω² ≤ 12k/m) admits.
#[test]
fn the_explicit_integrators_blow_up_where_the_lattice_frequency_says() {
    let n = 16;
    let (dt, m) = (1.0 / 60.0 / 8.0, MASS / (n * n) as f32);
    let predicted = 4.0 * m / (6.0 * dt * dt);
    let bound = 4.0 * m / (12.0 * dt * dt);
    let mut records = Vec::new();
    for integrator in [Integrator::Verlet, Integrator::Euler] {
        let unstable = |k: f32| growth(n, k, integrator, dt, 2000) > 50.0;
        let (mut low, mut high) = (0.8 * predicted, 1.2 * predicted);
        assert!(!unstable(low) && unstable(high), "{}", integrator.name());
        for _ in 0..10 {
            let middle = 0.5 * (low + high);
            if unstable(middle) {
                high = middle;
            } else {
                low = middle;
            }
        }
        let ratio = f64::from(low / predicted);
        assert!(
            (1.0..1.03).contains(&ratio),
            "{}: stable up to {low:.2} N/m, {ratio:.4} × 4m/(6·dt²)",
            integrator.name()
        );
        let sweep: Vec<Value> = (0..=20)
            .map(|i| {
                let k = predicted * (0.9 + 0.01 * i as f32);
                json!([k / predicted, growth(n, k, integrator, dt, 2000).min(1e30)])
            })
            .collect();
        records.push(json!({"integrator": integrator.name(), "largest": low, "sweep": sweep}));
    }
    record(
        "stability",
        &json!({"n": n, "dt": dt, "mass": m, "predicted": predicted, "bound": bound,
                "runs": records}),
    );
}

/// A free 6² cloth (no pins, no damping, no wind drag) let go at `y` m under `integrator`,
/// 24 substeps: its mean fall (m) over `frames` frames and the fall the discrete scheme makes
/// exactly, g·dt²·N(N + 1)/2 after N substeps (v gains g·dt, then x moves v·dt).
fn far_fall(integrator: Integrator, y: f32, frames: usize) -> (f64, f64) {
    let text = format!(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 6\nsize = 1.0\nmass = {MASS}\n\
         stiffness = {STIFFNESS}\nshear = 0.5\nbend = 0.0\ndamping = 0.0\npins = \"none\"\n\
         integrator = \"{}\"\niterations = 5\nsubsteps = 24\nstart = [0.0, {y}, 0.0]\n\
         [world]\nwind_drag = 0.0\n",
        integrator.name()
    );
    let source = Source::parse(&text, "far", "far.toml").unwrap();
    let mut sim = ParticlesSim::with_scene(
        ParticlesScene::from_source(&source).unwrap_or_else(|e| panic!("{e}")),
    );
    let mean = |sim: &mut ParticlesSim| {
        let b = body(sim);
        b.position.iter().map(|p| f64::from(p.y)).sum::<f64>() / b.len() as f64
    };
    let before = mean(&mut sim);
    for _ in 0..frames {
        sim.step().unwrap();
    }
    let steps = (frames * 24) as f64;
    let dt = f64::from(sim.scene.dt) / 24.0;
    (
        before - mean(&mut sim),
        f64::from(G) * dt * dt * steps * (steps + 1.0) / 2.0,
    )
}

/// Far from the origin a float32 position steps by more than a substep's fall from rest
/// (at y = 1000 m 6.1·10⁻⁵ m against g·dt² = 4.7·10⁻⁶ m at 24 substeps): XPBD, solving for
/// the substep's displacement and its velocity from it, still falls as its scheme says
/// (within 1 % over 0.5 s, 1.23 m; measured +0.01 %; before, 0 m), as symplectic Euler (whose
/// velocity accumulates apart from the position) does. Time-corrected Verlet, whose velocity
/// is the difference of rounded positions, does not move at all (its limit, in the docs).
#[test]
fn far_from_the_origin_xpbd_still_falls() {
    for integrator in [Integrator::Xpbd, Integrator::Euler] {
        let (fall, scheme) = far_fall(integrator, 1000.0, 30);
        println!(
            "{} at y = 1000 m: fell {fall:.5} m, the scheme {scheme:.5} m",
            integrator.name()
        );
        assert!(
            (fall / scheme - 1.0).abs() < 0.01,
            "{} at y = 1000 m: fell {fall:.5} m, the scheme {scheme:.5} m",
            integrator.name()
        );
    }
    // Verlet's known float32 limit (its velocity is x − x₋; docs/particles/physics.md): when
    // it is fixed, this assertion turns into Verlet falling as the others do.
    let (fall, _) = far_fall(Integrator::Verlet, 1000.0, 30);
    assert!(fall.abs() < 1e-3, "verlet at y = 1000 m: fell {fall:.5} m");
}
