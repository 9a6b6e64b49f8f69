//! Physics of the particles kind: the fountain's steady state, ballistic paths, the
//! integrators' exactness, the cloth's energy, strain and wind, the basin's ripples, the
//! back-to-front sort, pins, the jelly's landing, the springs' colours; through the door
//! (`tests/door.rs`, `tests/arrow.rs`): the grabber, the wind arrow, live edits, F1–F3, the
//! scene's errors, restarts.

use super::body::{Body, SpringKind};
use super::dynamics::{self, Air, Integrator};
use super::fountain::{Fountain, FountainParams};
use super::scene::{ParticlesScene, Which};
use super::sim::{ParticlesSim, State};
use super::sort;
use crate::gfx::camera::Camera;
use crate::scene::{Aabb, Source};
use crate::sims::pool::drops::Rng;
use crate::sims::Sim;
use glam::{DVec3, Vec3};

fn scene(text: &str) -> ParticlesScene {
    let source = Source::parse(text, "test", "test.toml").expect("a kind");
    ParticlesScene::from_source(&source).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    let source = Source::parse(text, "test", "test.toml").expect("a kind");
    ParticlesScene::from_source(&source)
        .expect_err("an invalid scene")
        .to_string()
}

fn body(sim: &mut ParticlesSim) -> &mut Body {
    match &mut sim.state {
        State::Body(b) => b,
        State::Fountain(_) => panic!("a body scene"),
    }
}

/// Each node of `sim`'s body lifted by up to `lift` m at random (seed 7; its previous position
/// alike: no velocity), and its shear and genbo springs switched back on (0.5, 0.3): a folded
/// jelly handed back its springs (`tests/growth.rs`, `tests/volume.rs`).
fn lift_and_switch_springs_on(sim: &mut ParticlesSim, lift: f32) {
    let b = body(sim);
    let mut rng = Rng::new(7);
    for (p, q) in b.position.iter_mut().zip(b.previous.iter_mut()) {
        let dy = lift * rng.unit();
        (p.y, q.y) = (p.y + dy, q.y + dy);
    }
    sim.scene.body.shear = 0.5;
    sim.scene.body.bend = 0.3;
}

fn fountain(sim: &mut ParticlesSim) -> &mut Fountain {
    match &mut sim.state {
        State::Fountain(f) => f,
        State::Body(_) => panic!("a fountain scene"),
    }
}

const GRAVITY: Vec3 = Vec3::new(0.0, -9.82, 0.0);

/// After a lifetime of emission, the particles alive are rate × lifetime (none lands: the
/// lifetime is shorter than the flight); the last `fade` seconds of life fade out.
#[test]
fn steady_state_count_is_rate_times_lifetime() {
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 3000.0\n\
         lifetime = 0.5\nfade = 0.21\n",
    ));
    for _ in 0..90 {
        sim.step().unwrap();
    }
    let f = fountain(&mut sim);
    let expected = 3000.0 * 0.5;
    let alive = f.len() as f64;
    assert!(
        (alive - expected).abs() <= 50.0,
        "{alive} alive, {expected} expected"
    );
    assert_eq!(f.emitted, 4500);
    for k in 0..f.len() {
        let (age, alpha) = (f.age[k], f.alpha(k));
        let fading = age > 0.5 - 0.21;
        assert!((0.0..=1.0).contains(&alpha));
        assert_eq!(alpha < 1.0, fading, "age {age} alpha {alpha}");
        if fading {
            assert!((alpha - (0.5 - age) / 0.21).abs() < 1e-4);
        }
    }
}

/// Under symplectic Euler a free particle's nth position is x₀ + n·dt·v₀ + g·dt²·n(n+1)/2
/// without drag, and with drag d towards the wind w it follows v_{k+1} = v_k + (g + d(w −
/// v_k))·dt exactly: v_k = u + (v₀ − u)(1 − d·dt)^k with u = w + g/d.
#[test]
fn a_free_particle_follows_the_ballistic_path_of_its_integrator() {
    for drag in [0.0f32, 0.7] {
        let params = FountainParams {
            rate: 0.0,
            drag,
            lifetime: 100.0,
            ..FountainParams::default()
        };
        let mut f = Fountain::new(params);
        let (x0, v0) = (Vec3::new(0.3, 5.0, -0.2), Vec3::new(1.0, 4.0, 0.5));
        f.push(x0, v0);
        let air = Air {
            gravity: GRAVITY,
            wind: Vec3::new(2.0, 0.0, -1.0),
        };
        let dt = 1.0 / 60.0;
        let mut x = x0.as_dvec3();
        let (g, w, d, h) = (
            GRAVITY.as_dvec3(),
            air.wind.as_dvec3(),
            f64::from(drag),
            f64::from(dt),
        );
        for n in 1..=60u32 {
            f.advance(dt, &air);
            if drag == 0.0 {
                let n = f64::from(n);
                x = x0.as_dvec3() + v0.as_dvec3() * n * h + g * h * h * n * (n + 1.0) / 2.0;
            } else {
                let u = w + g / d;
                x += (u + (v0.as_dvec3() - u) * (1.0 - d * h).powi(n as i32)) * h;
            }
            let error = (f.position[0].as_dvec3() - x).length();
            assert!(error < 5e-5, "drag {drag}, step {n}: {error} m off");
        }
    }
}

/// A node with no springs, its force its weight.
fn free_node(x: Vec3, previous: Vec3) -> Body {
    let mut body = Body::new(vec![x], 0.1, Vec::new(), Vec::new());
    body.previous[0] = previous;
    body
}

/// Time-corrected Verlet is Verlet (x' = 2x − x₋ + a·dt²) at a constant step, and exact for a
/// constant acceleration when the step changes (started from the exact x₋); the original's
/// a·dt² form is not.
#[test]
fn tcv_is_verlet_at_constant_dt_and_exact_under_varying_dt() {
    let dt = 0.01f32;
    let mut rng = Rng::new(7);
    let mut random = |scale: f32| Vec3::new(rng.unit(), rng.unit(), rng.unit()) * scale;
    for _ in 0..100 {
        let (x, before) = (random(4.0), random(4.0));
        let mut tcv = free_node(x, before);
        dynamics::springs(&mut tcv, GRAVITY, true);
        dynamics::integrate(&mut tcv, Integrator::Verlet, dt, dt, 0.0);
        let verlet = 2.0 * x - before + GRAVITY * dt * dt;
        assert!((tcv.position[0] - verlet).length() <= 1e-6 * verlet.length().max(1.0));
    }
    // Steps between 5 and 25 ms, from the origin moving at v₀.
    let v0 = DVec3::new(1.0, 3.0, -0.5);
    let g = GRAVITY.as_dvec3();
    let exact = |t: f64| v0 * t + 0.5 * g * t * t;
    let steps: Vec<f32> = (0..100).map(|_| 0.005 + 0.02 * rng.unit()).collect();
    let first = f64::from(steps[0]);
    let start = exact(-first).as_vec3();
    let mut node = free_node(Vec3::ZERO, start);
    let (mut naive, mut naive_before) = (DVec3::ZERO, exact(-first));
    let (mut t, mut dt_before) = (0.0f64, first);
    let (mut worst, mut worst_naive) = (0.0f64, 0.0f64);
    for &dt in &steps[1..] {
        dynamics::springs(&mut node, GRAVITY, true);
        dynamics::integrate(&mut node, Integrator::Verlet, dt, dt_before as f32, 0.0);
        let h = f64::from(dt);
        let next = naive + (naive - naive_before) * (h / dt_before) + g * h * h;
        (naive_before, naive) = (naive, next);
        t += h;
        dt_before = h;
        let scale = exact(t).length().max(1.0);
        let error = (node.position[0].as_dvec3() - exact(t)).length() / scale;
        worst = worst.max(error);
        worst_naive = worst_naive.max((naive - exact(t)).length() / scale);
    }
    assert!(worst < 1e-4, "relative error {worst}");
    assert!(
        worst_naive > 30.0 * worst,
        "the a·dt² form erred {worst_naive}, the corrected {worst}"
    );
}

/// An undamped cloth pinned at two corners, let go flat, swings down and back: its energy
/// (kinetic + gravitational + elastic) stays within 1 % of the energy it trades, for Verlet
/// and symplectic Euler.
#[test]
fn undamped_swinging_cloth_keeps_its_energy() {
    for integrator in ["verlet", "euler"] {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 12\nsize = 1.0\nmass = 0.2\n\
             stiffness = 100.0\ndamping = 0.0\nbend = 0.0\nsubsteps = 20\n\
             orientation = \"flat\"\nintegrator = \"{integrator}\"\nstart = [0.0, 2.0, 0.0]\n\
             [world]\nwind_drag = 0.0\n"
        )));
        let energy = |sim: &mut ParticlesSim| {
            let (k, p, e) = body(sim).energy(GRAVITY);
            (k + p + e, k)
        };
        let (start, _) = energy(&mut sim);
        let traded = 0.2 * 9.82 * 1.0;
        let (mut worst, mut fastest) = (0.0f64, 0.0f64);
        for _ in 0..120 {
            sim.step().unwrap();
            let (e, kinetic) = energy(&mut sim);
            worst = worst.max((e - start).abs());
            fastest = fastest.max(kinetic);
        }
        assert!(
            fastest > 0.2 * traded,
            "{integrator}: it barely swung ({fastest} J)"
        );
        assert!(
            worst < 0.01 * traded,
            "{integrator}: energy drifted {worst} J of {traded}"
        );
    }
}

/// A cloth hanging from its whole top row, damped to rest: its largest strain, in the top
/// cells, lies between the weight below over the vertical stiffness of every spring crossing
/// the top row of cells, ε₋ = (n − 1)·n·m·g / (k·h·(n + s(n − 1))) (n structural springs and
/// 2(n − 1) diagonals of stiffness s·k, each adding s·k/2 vertically), and that weight over
/// the structural springs alone, ε₊ = (n − 1)·m·g / (k·h) (the edges carry more than the
/// mean, and the diagonals less than their uniform share).
#[test]
fn hanging_cloth_strain_at_rest_is_the_weight_over_the_stiffness() {
    let (n, size, mass, k, s) = (16usize, 1.5f32, 0.3f32, 300.0f32, 0.5f32);
    let mut sim = ParticlesSim::with_scene(scene(&format!(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = {n}\nsize = {size}\n\
         mass = {mass}\nstiffness = {k}\nshear = {s}\nbend = 0.0\ndamping = 3.0\n\
         pins = \"top\"\nsubsteps = 24\n"
    )));
    for _ in 0..300 {
        sim.step().unwrap();
    }
    let b = body(&mut sim);
    let (nf, h) = (n as f32, size / (n - 1) as f32);
    let m = mass / (nf * nf);
    let shared = (nf - 1.0) * nf * m * 9.82 / (k * h * (nf + s * (nf - 1.0)));
    let structural = (nf - 1.0) * m * 9.82 / (k * h);
    let strain = b.max_strain();
    let (kinetic, _, _) = b.energy(GRAVITY);
    assert!(kinetic < 1e-6, "not at rest: {kinetic} J");
    assert!(
        (shared..=structural).contains(&strain),
        "max strain {strain}, not in [{shared}, {structural}]"
    );
}

/// Wind along a hanging cloth's normal pushes it downwind (either way); wind along its plane
/// pushes nothing: the run is bit for bit the windless one.
#[test]
fn wind_pushes_a_facing_cloth_downwind_and_an_edge_on_one_not_at_all() {
    let run = |wind: [f32; 3]| {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 10\nsize = 1.0\n\
             pins = \"top\"\nsubsteps = 12\n[world]\nwind = {wind:?}\nwind_drag = 1.0\n"
        )));
        for _ in 0..60 {
            sim.step().unwrap();
        }
        body(&mut sim).position.clone()
    };
    let still = run([0.0; 3]);
    let centre = |p: &[Vec3]| p.iter().sum::<Vec3>() / p.len() as f32;
    assert!(still.iter().all(|p| p.z == 0.0));
    for (wind, sign) in [(4.0, 1.0), (-4.0, -1.0)] {
        let blown = centre(&run([0.0, 0.0, wind]));
        assert!(
            sign * blown.z > 0.05,
            "wind {wind}: centre at z = {}",
            blown.z
        );
    }
    assert_eq!(run([4.0, 0.0, 0.0]), still);
    assert_eq!(run([0.0, 4.0, 0.0]), still);
}

/// A particle falling into the basin pushes the surface down where it lands; the ripple
/// reaches a point 0.8 m away about 0.8/c s later, and not by 0.4/c.
#[test]
fn a_drop_into_the_basin_lowers_the_surface_and_the_ripple_spreads() {
    let params = FountainParams {
        rate: 0.0,
        surface_damping: 0.0,
        ..FountainParams::default()
    };
    let (c, dt) = (params.surface_speed, 1.0 / 60.0);
    let air = Air {
        gravity: GRAVITY,
        wind: Vec3::ZERO,
    };
    let mut f = Fountain::new(params);
    let landing = Vec3::new(1.5, params.level, 0.3);
    f.push(
        landing + Vec3::new(0.0, 0.02, 0.0),
        Vec3::new(0.0, -3.0, 0.0),
    );
    f.step(dt, &air);
    assert_eq!((f.landed, f.len()), (1, 0));
    assert!(f.basin_height(landing.x, landing.z) < -1e-4);
    let (far_x, far_z) = (landing.x, landing.z + 0.8);
    let mut early = 0.0f32;
    let mut late = 0.0f32;
    let mut centre_depth = 0.0f32;
    for frame in 1..100 {
        f.step(dt, &air);
        let t = frame as f32 * dt;
        let here = f.basin_height(far_x, far_z).abs();
        centre_depth = centre_depth.min(f.basin_height(landing.x, landing.z));
        if t < 0.4 / c {
            early = early.max(here);
        } else {
            late = late.max(here);
        }
    }
    assert!(
        late > 0.03 * centre_depth.abs(),
        "late {late}, depth {centre_depth}"
    );
    assert!(early < 0.05 * late, "early {early}, late {late}");
}

/// The drawing order is a permutation with view depths falling (farthest first), whatever the
/// signs of the depths.
#[test]
fn back_to_front_order_is_sorted() {
    let mut rng = Rng::new(3);
    let positions: Vec<Vec3> = (0..5000)
        .map(|_| Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 8.0 - 4.0)
        .collect();
    let (eye, forward) = (
        Vec3::new(0.5, 1.0, 2.0),
        Vec3::new(-0.3, -0.2, -1.0).normalize(),
    );
    let order = sort::back_to_front(&positions, eye, forward);
    let mut seen = vec![false; positions.len()];
    for &k in &order {
        assert!(!std::mem::replace(&mut seen[k as usize], true));
    }
    assert!(seen.iter().all(|&s| s));
    let depth = |k: u32| (positions[k as usize] - eye).dot(forward);
    assert!(depth(order[0]) > 0.0 && depth(*order.last().unwrap()) < 0.0);
    for pair in order.windows(2) {
        assert!(depth(pair[0]) >= depth(pair[1]), "{pair:?}");
    }
    let keys = [3.0f32, -1.0, 0.0, -0.0, 2.5, -7.0, 3.0].map(sort::order_key);
    assert_eq!(sort::radix_sort(&keys), [5, 1, 3, 2, 4, 0, 6]);
}

/// Pinned nodes never move, whatever the integrator, the wind and the sphere.
#[test]
fn pinned_nodes_never_move() {
    for integrator in ["verlet", "euler", "xpbd"] {
        for pins in ["corners", "top"] {
            let mut sim = ParticlesSim::with_scene(scene(&format!(
                "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 10\nsize = 1.0\n\
                 pins = \"{pins}\"\nintegrator = \"{integrator}\"\nsubsteps = 12\n\
                 orientation = \"flat\"\nstart = [0.0, 1.0, 0.0]\n[world]\n\
                 wind = [1.0, 2.0, 3.0]\nsphere_center = [0.5, 0.5, 0.5]\nsphere_radius = 0.3\n"
            )));
            let start = body(&mut sim).position.clone();
            for _ in 0..60 {
                sim.step().unwrap();
            }
            let b = body(&mut sim);
            let pinned: Vec<usize> = (0..b.len()).filter(|&k| b.pinned[k]).collect();
            assert_eq!(pinned.len(), if pins == "top" { 10 } else { 2 });
            for (k, (p, s)) in b.position.iter().zip(&start).enumerate() {
                assert_eq!(p == s, b.pinned[k], "{integrator} {pins} {k}");
            }
        }
    }
}

/// The jelly falls, lands and settles: no node ever below the floor, its centre at rest
/// near half its side, its springs strained little.
#[test]
fn the_jelly_lands_and_stays_above_the_floor() {
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nn = 5\ndamping = 3.0\n",
    ));
    let mut lowest = f32::INFINITY;
    for _ in 0..240 {
        sim.step().unwrap();
        let b = body(&mut sim);
        let low = b.position.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
        assert!(low >= 0.0, "a node at y = {low}");
        lowest = lowest.min(low);
    }
    let b = body(&mut sim);
    let (kinetic, _, _) = b.energy(GRAVITY);
    assert!(lowest < 1e-3, "it never landed ({lowest} m)");
    assert!(kinetic < 1e-3, "still moving: {kinetic} J");
    let centre = b.centre();
    assert!((0.4..0.5).contains(&centre.y), "centre at {centre}");
    assert!(b.max_strain() < 0.2, "strain {}", b.max_strain());
}

/// The cloth's and the jelly's springs: counts by kind, rest lengths, the jelly's faces wound
/// outwards.
#[test]
fn cloth_and_jelly_springs_and_faces() {
    let cloth = Body::cloth(4, 3.0, Vec3::ZERO, Vec3::NEG_Y, 1.0, [1.0, 1.0, 1.0]);
    let count = |b: &Body, kind| b.kinds.iter().filter(|&&k| k == kind).count();
    assert_eq!(count(&cloth, SpringKind::Structural), 24);
    assert_eq!(count(&cloth, SpringKind::Shear), 18);
    assert_eq!(count(&cloth, SpringKind::Bend), 16);
    assert_eq!(cloth.triangles.len(), 18);
    let jelly = Body::jelly(3, 2.0, Vec3::ZERO, 1.0, [1.0, 1.0, 1.0]);
    // 3 axes × 3·3·2 structural, 6 face-diagonal families × 3·2·2 + 4 body diagonals × 2·2·2,
    // 3 axes × 3·3·1 genbo.
    assert_eq!(count(&jelly, SpringKind::Structural), 54);
    assert_eq!(count(&jelly, SpringKind::Shear), 72 + 32);
    assert_eq!(count(&jelly, SpringKind::Bend), 27);
    for (s, kind) in jelly.springs.iter().zip(&jelly.kinds) {
        let rest = match kind {
            SpringKind::Structural => 1.0,
            SpringKind::Shear if (s.rest - 2f32.sqrt()).abs() < 1e-5 => 2f32.sqrt(),
            SpringKind::Shear => 3f32.sqrt(),
            SpringKind::Bend => 2.0,
        };
        assert!((s.rest - rest).abs() < 1e-5);
    }
    assert_eq!(jelly.triangles.len(), 6 * 2 * 4);
    let middle = Vec3::ONE;
    for t in &jelly.triangles {
        let [a, b, c] = t.map(|k| jelly.position[k as usize]);
        let outward = ((a + b + c) / 3.0 - middle).dot((b - a).cross(c - a));
        assert!(outward > 0.0, "{t:?} faces inwards");
    }
}

/// A spring from a node to itself is refused where bodies are built (the builders make none;
/// the GPU's figures would leave it out, the CPU's count it).
#[test]
#[should_panic(expected = "spring 1 joins node 1 to itself")]
fn a_spring_from_a_node_to_itself_is_refused() {
    let spring = |a, b| {
        let s = super::body::Spring {
            a,
            b,
            rest: 1.0,
            stiffness: 10.0,
        };
        (s, SpringKind::Structural)
    };
    let positions = vec![Vec3::ZERO, Vec3::X];
    Body::new(positions, 0.1, vec![spring(0, 1), spring(1, 1)], Vec::new());
}

/// XPBD's colours partition the springs, and no two springs of a colour share a node (so a
/// colour is solved in parallel on the GPU); the cloth needs few colours, the jelly more.
#[test]
fn spring_colours_partition_the_springs_without_shared_nodes() {
    let cloth = Body::cloth(12, 1.0, Vec3::ZERO, Vec3::NEG_Y, 1.0, [100.0, 50.0, 10.0]);
    let jelly = Body::jelly(5, 1.0, Vec3::ZERO, 1.0, [100.0, 50.0, 10.0]);
    for (body, most) in [(&cloth, 24), (&jelly, 64)] {
        let mut sorted = body.coloured.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..body.springs.len() as u32).collect::<Vec<_>>());
        let colours = body.colour_start.len() - 1;
        assert!((2..=most).contains(&colours), "{colours} colours");
        for c in 0..colours {
            let mut seen = vec![false; body.len()];
            for &s in
                &body.coloured[body.colour_start[c] as usize..body.colour_start[c + 1] as usize]
            {
                let s = body.springs[s as usize];
                for end in [s.a, s.b] {
                    assert!(!seen[end as usize], "colour {c} meets node {end} twice");
                    seen[end as usize] = true;
                }
            }
        }
    }
}

mod arrow;
mod door;
mod energy_colours;
mod fountain_wind;
mod friction;
mod growth;
mod self_collision;
mod stages;
mod tangles;
mod volume;
mod wind_limit;

/// A NaN in the basin stops the fountain's step (as the GPU's `reduce_fountain` counts it): the
/// largest |height| passes over a NaN, so a check on it alone let a NaN basin run on. The
/// substeps spread it to its neighbours.
#[test]
fn a_nan_in_the_basin_stops_the_fountain() {
    let mut sim = ParticlesSim::with_scene(scene("kind = \"particles\"\nscene = \"fountain\"\n"));
    sim.step().unwrap();
    let f = fountain(&mut sim);
    let middle = f.surface.height.len() / 2;
    f.surface.height[middle] = f32::NAN;
    assert!(f.surface.max_height().is_finite());
    let error = sim.step().expect_err("a NaN basin steps on").to_string();
    assert!(error.contains("no longer finite ("), "{error}");
    assert!(error.contains("basin nodes not finite)"), "{error}");
}

/// A fountain particle alive at the end of a frame with a non-finite position or velocity
/// stops the step, as a NaN basin does (the GPU's `reduce_fountain` counts the same). Before,
/// such a particle lived on: a NaN height is never below the kill height nor in the basin, so
/// it flew to the end of its lifetime (3.5 s here), sorted by a NaN depth (first or last) and
/// drawn, while the step went on. One that dies in the frame (at y = −∞, below the kill
/// height) is gone and counts for nothing.
#[test]
fn a_non_finite_particle_stops_the_fountain() {
    type Plant = fn(&mut Fountain, usize);
    let cases: [(&str, Plant, bool); 5] = [
        ("a NaN position", |f, k| f.position[k] = Vec3::NAN, true),
        ("y = +∞", |f, k| f.position[k].y = f32::INFINITY, true),
        ("a NaN velocity", |f, k| f.velocity[k].z = f32::NAN, true),
        // v_y = −∞ meets the drag's +∞: a NaN.
        ("v_y = −∞", |f, k| f.velocity[k].y = f32::NEG_INFINITY, true),
        (
            "y = −∞ (dies)",
            |f, k| f.position[k].y = f32::NEG_INFINITY,
            false,
        ),
    ];
    for (name, plant, stops) in cases {
        let mut sim =
            ParticlesSim::with_scene(scene("kind = \"particles\"\nscene = \"fountain\"\n"));
        for _ in 0..30 {
            sim.step().unwrap();
        }
        let f = fountain(&mut sim);
        let k = f.len() / 2;
        plant(f, k);
        let result = sim.step();
        let f = fountain(&mut sim);
        assert_eq!(
            super::frame::non_finite_heights(&f.surface.height),
            0,
            "{name}"
        );
        if stops {
            let error = result.expect_err(name).to_string();
            assert!(
                error.contains("no longer finite (1 particle not finite)"),
                "{name}: {error}"
            );
        } else {
            result.unwrap_or_else(|e| panic!("{name}: {e}"));
            let bad = super::frame::non_finite_particles(&f.position, &f.velocity);
            assert_eq!(bad, 0, "{name}");
        }
    }
}

/// `--particles` on a fountain whose particles outlive any pilot (1000 s at 1 ms steps, no
/// gravity: none lands) counts those still flying after the pilot's steps to their lifetime,
/// instead of following them for a million steps.
#[test]
fn the_mean_life_pilot_stops_and_counts_the_survivors_to_their_lifetime() {
    let long = scene(
        "kind = \"particles\"\nscene = \"fountain\"\ndt = 0.001\n[fountain]\n\
         lifetime = 1000.0\n[world]\ngravity = [0.0, 0.0, 0.0]\n",
    );
    let life = super::setup::mean_life(&long);
    assert!(
        (life - 1000.0).abs() < 0.01,
        "mean life {life} s, not 1000 s"
    );
    // The fuzz test's case: steps of 1e-30 s, more to a lifetime than a u64 counts.
    let tiny = scene(
        "kind = \"particles\"\nscene = \"fountain\"\ndt = 1e-30\n[fountain]\n\
         lifetime = 4.0\n",
    );
    let life = super::setup::mean_life(&tiny);
    assert!((life - 4.0).abs() < 1e-6, "mean life {life} s, not 4 s");
    // The preset's droplets land: their mean life is well under the 4 s lifetime.
    let preset = scene(&std::fs::read_to_string("scenes/particles/fountain.toml").unwrap());
    let life = super::setup::mean_life(&preset);
    assert!(life > 1.0 && life < 3.8, "the preset's mean life {life} s");
}
