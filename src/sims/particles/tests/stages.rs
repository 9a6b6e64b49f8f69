//! The particles kind's stages one at a time on bodies of one to three nodes, against their
//! definitions in closed form: the wind on a triangle, XPBD's compliant spring at rest, the
//! ground's Coulomb friction, the fountain's emission count and its cube's first bounce; and XPBD's
//! scratch, kept in the body, on a small cloth.

use super::super::body::{Body, Spring, SpringKind};
use super::super::dynamics::{self, Air, Surroundings};
use super::super::fountain::{Fountain, FountainParams};
use glam::Vec3;

fn surroundings(wind: Vec3, drag: f32, relative: bool, friction: f32) -> Surroundings {
    Surroundings {
        air: Air {
            gravity: Vec3::new(0.0, -9.82, 0.0),
            wind,
        },
        wind_drag: drag,
        wind_relative: relative,
        ground: 0.0,
        sphere: None,
        friction,
    }
}

/// A triangle of area A facing a wind w along its normal is pushed by drag · A · w along the
/// normal, a third of it on each corner (2 N·s/m³ · ½ m² · 3 m/s = 3 N, 1 N per corner); moving
/// with the wind (relative wind) it feels none.
#[test]
fn wind_pushes_a_facing_triangle_by_drag_times_area_times_speed_a_third_per_corner() {
    let corners = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
    let wind = Vec3::new(0.0, 0.0, 3.0);
    for (relative, moving, expected) in [(false, false, 1.0), (true, false, 1.0), (true, true, 0.0)]
    {
        let mut body = Body::new(corners.clone(), 0.1, Vec::new(), vec![[0, 1, 2]]);
        if moving {
            body.velocity.iter_mut().for_each(|v| *v = wind);
        }
        dynamics::wind(&mut body, &surroundings(wind, 2.0, relative, 0.0));
        for (k, f) in body.force.iter().enumerate() {
            assert!(
                (*f - Vec3::new(0.0, 0.0, expected)).length() < 1e-6,
                "relative {relative}, moving {moving}, corner {k}: {f}"
            );
        }
    }
}

/// XPBD solves a spring as a distance constraint of compliance α = 1/k, α̃ = α/dt²: hanging
/// from a pinned node, a mass settles where the spring holds its weight, stretched by m g / k
/// (0.1 kg · 9.82 m/s² / 50 N/m = 1.96 cm), whatever dt and the iteration count. (With α̃ = α,
/// or without the accumulated λ in the update, the stretch shrinks with dt or the iterations.)
#[test]
fn an_xpbd_spring_holds_a_hanging_mass_at_its_weight_over_the_stiffness() {
    let (mass, k, rest) = (0.1f32, 50.0f32, 0.5f32);
    for (dt, iterations) in [(1.0f32 / 600.0, 4), (1.0 / 240.0, 1)] {
        let spring = Spring {
            a: 0,
            b: 1,
            rest,
            stiffness: k,
        };
        let mut body = Body::new(
            vec![Vec3::ZERO, Vec3::new(0.0, -rest, 0.0)],
            mass,
            vec![(spring, SpringKind::Structural)],
            Vec::new(),
        );
        body.pinned[0] = true;
        let gravity = Vec3::new(0.0, -9.82, 0.0);
        for _ in 0..(4.0 / dt) as usize {
            dynamics::springs(&mut body, gravity, false);
            dynamics::xpbd(&mut body, dt, 5.0, iterations);
        }
        let stretch = (body.position[1] - body.position[0]).length() - rest;
        let expected = mass * 9.82 / k;
        assert!(
            (stretch / expected - 1.0).abs() < 1e-3,
            "dt {dt}, {iterations} iterations: stretch {stretch} m, expected {expected} m"
        );
        assert!(body.velocity[1].length() < 1e-4, "{}", body.velocity[1]);
    }
}

/// XPBD keeps Δ and λ in the body (`Body::displacement`, `Body::lambda`) rather than
/// allocating them every substep, and what an earlier substep left there changes nothing: a
/// cloth whose scratch holds stale values (or none at all) steps bit for bit as a fresh one,
/// and the buffers stay where they are from substep to substep.
#[test]
fn xpbd_reuses_the_bodys_scratch_and_starts_every_substep_from_zero() {
    let mut fresh = Body::cloth(6, 1.0, Vec3::Y, Vec3::NEG_Y, 0.1, [200.0, 100.0, 10.0]);
    fresh.pinned[0] = true;
    let mut stale = fresh.clone();
    stale.displacement.fill(Vec3::splat(0.25));
    stale.lambda.fill(1.0e3);
    let mut empty = fresh.clone();
    (empty.displacement, empty.lambda) = (Vec::new(), Vec::new());
    let (dt, gravity) = (1.0f32 / 240.0, Vec3::new(0.0, -9.82, 0.0));
    let step = |body: &mut Body| {
        dynamics::springs(body, gravity, false);
        dynamics::xpbd(body, dt, 0.2, 3);
    };
    let buffers = |b: &Body| (b.displacement.as_ptr(), b.lambda.as_ptr());
    let mut first = None;
    for _ in 0..6 {
        for body in [&mut fresh, &mut stale, &mut empty] {
            step(body);
        }
        let now = (buffers(&stale), buffers(&empty));
        assert_eq!(
            *first.get_or_insert(now),
            now,
            "a substep moved the scratch"
        );
    }
    for (name, other) in [("stale", &stale), ("empty", &empty)] {
        assert!(
            fresh.position == other.position && fresh.velocity == other.velocity,
            "{name} scratch changed the motion"
        );
    }
    assert!(fresh.position[35].y < 0.0, "the cloth falls");
}

/// A node that went through the ground comes back onto it, loses its velocity into the ground
/// (2 m/s) and Coulomb friction (μ = 0.25) takes at most μ·2 = 0.5 m/s of its sliding: sliding
/// at (1, 0, 0.5) m/s (1.118 m/s) it keeps (1, 0, 0.5)·(1 − 0.5/1.118) = (0.553, 0, 0.276)
/// (kinetic); sliding at (0.2, 0, 0.1) it stops (static); one already moving up is not pressed
/// and keeps its whole velocity. The node also goes back by the removed sliding times dt (from
/// (0.3, ·, 0.2)), and `previous` follows, so Verlet's implied velocity is the same. The old law
/// (a fraction 0.25 of the sliding per substep) gave (0.75, 0, 0.375), (0.15, 0, 0.075) and
/// (0.75, 2, 0.375).
#[test]
fn the_ground_stops_the_fall_and_coulomb_friction_takes_mu_times_the_normal_velocity() {
    let dt = 0.01;
    let kinetic = 1.0 - 0.5 / 1.25f32.sqrt();
    for (velocity, expected) in [
        (
            Vec3::new(1.0, -2.0, 0.5),
            Vec3::new(kinetic, 0.0, 0.5 * kinetic),
        ),
        (Vec3::new(0.2, -2.0, 0.1), Vec3::ZERO),
        (Vec3::new(1.0, 2.0, 0.5), Vec3::new(1.0, 2.0, 0.5)),
    ] {
        let mut body = Body::new(
            vec![Vec3::new(0.3, -0.01, 0.2)],
            0.1,
            Vec::new(),
            Vec::new(),
        );
        body.velocity[0] = velocity;
        dynamics::collide(&mut body, &surroundings(Vec3::ZERO, 0.0, false, 0.25), dt);
        let sliding = Vec3::new(velocity.x, 0.0, velocity.z);
        let removed = sliding - Vec3::new(expected.x, 0.0, expected.z);
        let back = Vec3::new(0.3, 0.0, 0.2) - removed * dt;
        assert!(
            (body.position[0] - back).length() < 1e-7,
            "{}",
            body.position[0]
        );
        assert!(
            (body.velocity[0] - expected).length() < 1e-6,
            "{}",
            body.velocity[0]
        );
        let implied = (body.position[0] - body.previous[0]) / dt;
        assert!((implied - expected).length() < 1e-4, "{implied}");
    }
}

/// The fountain emits rate · dt particles a step, the fraction carried: 100 /s at 60 steps/s
/// (1⅔ a step) makes 100 in a second (99 where the fraction's float round-off falls short),
/// not 60.
#[test]
fn the_fountain_emits_its_rate_carrying_the_fraction() {
    let mut fountain = Fountain::new(FountainParams {
        rate: 100.0,
        ..FountainParams::default()
    });
    let emitted: usize = (0..60).map(|_| fountain.emission(1.0 / 60.0, 0)).sum();
    assert!((99..=100).contains(&emitted), "{emitted} in a second");
}

/// A drop falling onto the cube's top is put on it and thrown back up with `cut` of its
/// vertical speed, its horizontal speed times `boost` (the spec's first bounce) plus `sheet`
/// times its fall along its horizontal direction (the jet spreading into a sheet); the next
/// hit keeps `bounce` of the vertical speed.
#[test]
fn the_first_bounce_on_the_cube_cuts_the_fall_and_boosts_the_slide() {
    let params = FountainParams::default();
    let mut fountain = Fountain::new(params);
    let top = params.cube;
    let dt = 0.01;
    fountain.push(Vec3::new(0.1, top - 0.01, 0.1), Vec3::new(0.2, -3.0, 0.1));
    fountain.collide(dt);
    // Along (0.2, 0.1)/|(0.2, 0.1)|: ×boost, plus sheet × the 3 m/s fall.
    let slide = 0.2f32.hypot(0.1);
    let factor = params.boost + params.sheet * 3.0 / slide;
    let expected = Vec3::new(0.2 * factor, 3.0 * params.cut, 0.1 * factor);
    assert_eq!(fountain.position[0].y, top);
    assert!(
        (fountain.velocity[0] - expected).length() < 1e-6,
        "{}",
        fountain.velocity[0]
    );
    // Falling back onto it: the second hit.
    fountain.position[0].y = top - 0.005;
    fountain.velocity[0].y = -1.0;
    fountain.collide(dt);
    assert!(
        (fountain.velocity[0].y - params.bounce).abs() < 1e-6,
        "{}",
        fountain.velocity[0]
    );
}

/// `springs` computes each spring's pull once and gathers the pulls per node (through
/// [`Body::link_pulls`]: spring index and which end): on a disturbed 12² cloth, the bench's
/// 64² cloth (four rayon tasks a gather), a 5³ jelly and three nodes whose springs name their
/// ends in either order, every node's force is, bit for bit (tolerance 0), its weight plus its
/// own links' pulls computed from its end (what the stage did before, and what the kernel's
/// thread per node does).
#[test]
fn springs_once_a_spring_equal_each_nodes_own_links() {
    let gravity = Vec3::new(0.0, -9.82, 0.0);
    let spring = |a, b, rest| Spring {
        a,
        b,
        rest,
        stiffness: 30.0,
    };
    let triple = Body::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::new(0.3, 1.2, 0.1)],
        0.2,
        vec![
            (spring(2, 0, 1.0), SpringKind::Structural),
            (spring(0, 1, 0.8), SpringKind::Structural),
            (spring(2, 1, 1.1), SpringKind::Shear),
        ],
        Vec::new(),
    );
    let cloth = Body::cloth(12, 1.0, Vec3::Y, Vec3::NEG_Y, 0.3, [200.0, 100.0, 10.0]);
    let jelly = Body::jelly(5, 1.0, Vec3::ZERO, 2.0, [40.0, 20.0, 12.0]);
    let bench = Body::cloth(64, 2.0, Vec3::Y, Vec3::NEG_Y, 0.4, [200.0, 100.0, 10.0]);
    for (name, mut body) in [
        ("three nodes", triple),
        ("cloth", cloth),
        ("64² cloth", bench),
        ("jelly", jelly),
    ] {
        for (k, p) in body.position.iter_mut().enumerate() {
            let r = (k as f32 * 12.9898).sin() * 43758.547;
            *p += 0.02 * Vec3::new(r.fract(), (r * 1.7).fract(), (r * 2.3).fract());
        }
        dynamics::springs(&mut body, gravity, true);
        let mut largest = 0.0f32;
        for k in 0..body.len() {
            let mut own = gravity * body.mass;
            let links = &body.links[body.node_start[k] as usize..body.node_start[k + 1] as usize];
            for link in links {
                let d = body.position[link.other as usize] - body.position[k];
                let length = d.length();
                own += d * (link.stiffness * (length - link.rest) / length);
            }
            assert_eq!(body.force[k], own, "{name}, node {k}");
            largest = largest.max((own - gravity * body.mass).length());
        }
        assert!(
            largest > 0.1,
            "{name}: the springs pull ({largest} N at most)"
        );
    }
}
