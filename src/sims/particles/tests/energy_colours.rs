//! **P**'s colours: a body's nodes by their kinetic energy ½mv², its springs by their elastic
//! energy ½k(l − l₀)², on one logarithmic scale (red at the kinetic energy of a node moving
//! at `speed_scale`, 3 m/s; blue-grey `energy_decades`, 5, decades below).

use super::super::body::{Body, Spring, SpringKind};
use super::super::render::nodes::{body_points, energy_color, Point};
use super::super::render::RenderSettings;
use super::super::sim::{ParticlesSim, State};
use super::scene;
use crate::sims::Sim;
use glam::Vec3;

/// The ramp position the docs state: 1 + log₁₀(E / (½·m·(3 m/s)²)) / 5, written out here
/// apart from `nodes.rs`.
fn stated_level(energy: f32, mass: f32) -> f32 {
    1.0 + (energy / (0.5 * mass * 9.0)).log10() / 5.0
}

fn colours(body: &Body) -> (Vec<Point>, Vec<Point>) {
    let (mut points, mut lines) = (Vec::new(), Vec::new());
    body_points(body, &RenderSettings::default(), &mut points, &mut lines);
    (points, lines)
}

/// The ramp position a colour lies at (the ramp's green falls from 0.85 to 0.1 over its upper
/// half and rises from 0.65 over its lower one; its blue falls all along): recovered from blue.
fn level_of(color: [f32; 3]) -> f32 {
    let b = color[2];
    if b >= 0.2 {
        (0.85 - b) / (0.85 - 0.2) * 0.5
    } else {
        0.5 + (0.2 - b) / (0.2 - 0.05) * 0.5
    }
}

/// A cloth hanging from its two top corners, damped to rest without wind: the springs at the
/// pins carry the cloth's weight and are drawn hot, those along the free bottom edge carry
/// almost nothing and are drawn cold, each at the level its own ½k(l − l₀)² gives.
#[test]
fn a_resting_hanging_cloth_draws_the_springs_at_its_pins_hotter_than_its_free_edge() {
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\nsize = 1.5\nmass = 0.3\n\
         stiffness = 200.0\ndamping = 4.0\npins = \"corners\"\nsubsteps = 24\n\
         [world]\nwind = [0.0, 0.0, 0.0]\n",
    ));
    let bottom = |b: &Body| {
        let lowest = b.position.iter().map(|p| p.y).fold(f32::MAX, f32::min);
        (0..b.len())
            .map(|k| b.position[k].y == lowest)
            .collect::<Vec<_>>()
    };
    let State::Body(start) = &sim.state else {
        panic!("a body scene")
    };
    let free = bottom(start);
    for _ in 0..600 {
        sim.step().unwrap();
    }
    let State::Body(b) = &sim.state else {
        panic!("a body scene")
    };
    let (kinetic, _, _) = b.energy(Vec3::new(0.0, -9.82, 0.0));
    assert!(kinetic < 1e-6, "not at rest: {kinetic} J");
    let (_, lines) = colours(b);
    let (mut pinned, mut edge) = (Vec::new(), Vec::new());
    for (s, spring) in b.springs.iter().enumerate() {
        let (x, y) = (spring.a as usize, spring.b as usize);
        let stretch = b.position[x].distance(b.position[y]) - spring.rest;
        let level = stated_level(0.5 * spring.stiffness * stretch * stretch, b.mass);
        let drawn = lines[2 * s].color;
        let expected: [f32; 3] = energy_color(level).into();
        for c in 0..3 {
            assert!(
                (drawn[c] - expected[c]).abs() < 1e-5,
                "spring {s}: {drawn:?}, its energy's {expected:?} (level {level})"
            );
        }
        if b.pinned[x] || b.pinned[y] {
            pinned.push(level_of(drawn));
        } else if free[x] && free[y] {
            edge.push(level_of(drawn));
        }
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    let coolest_pinned = pinned.iter().cloned().fold(f32::MAX, f32::min);
    let hottest_edge = edge.iter().cloned().fold(0.0, f32::max);
    println!(
        "the pins' springs at {pinned:?}, the free edge's at {} on average (at most {hottest_edge})",
        mean(&edge),
    );
    assert!(pinned.len() == 6 && edge.len() == 15, "{pinned:?} {edge:?}");
    // Measured: the pins' 0.71–0.94, the edge's 0.036 on average, at most 0.13.
    assert!(coolest_pinned > 0.6, "the pins' springs at {pinned:?}");
    assert!(
        mean(&edge) < 0.1 && hottest_edge < 0.25,
        "the free edge at {edge:?}"
    );
}

/// Energy, not strain: of two springs at 1 % strain the one 10 times stiffer is drawn a decade
/// (a fifth of the ramp) hotter. Nodes on the same scale: a node at 2 m/s at ½m·4 / ½m·9 of
/// the red energy, whatever the mass (the reference is a node's own ½m·(3 m/s)²: a
/// heavier body's springs, at the same energy, are drawn cooler), one at 3 m/s red, one at
/// rest and a spring at its rest length blue-grey.
#[test]
fn a_stiffer_spring_at_the_same_strain_is_hotter_on_the_nodes_kinetic_energy_scale() {
    let draw = |mass: f32, stiffness: f32| {
        let positions = vec![
            Vec3::ZERO,
            Vec3::new(0.101, 0.0, 0.0),
            Vec3::new(0.0, 0.1, 0.0),
        ];
        let springs = [(1, 0.1), (2, 0.1)].map(|(b, rest)| {
            (
                Spring {
                    a: 0,
                    b,
                    rest,
                    stiffness,
                },
                SpringKind::Structural,
            )
        });
        let mut body = Body::new(positions, mass, springs.to_vec(), Vec::new());
        body.velocity = vec![
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::ZERO,
            Vec3::new(3.0, 0.0, 0.0),
        ];
        let (points, lines) = colours(&body);
        let levels = |p: &[Point]| p.iter().map(|p| level_of(p.color)).collect::<Vec<_>>();
        (levels(&points), levels(&lines))
    };
    let (light, soft) = draw(0.01, 100.0);
    let (heavy, heavy_soft) = draw(0.1, 100.0);
    let (_, stiff) = draw(0.01, 1000.0);
    println!("light {light:?} heavy {heavy:?}; soft {soft:?} stiff {stiff:?}");
    // ½·0.01·4 = 0.02 J against red at ½·0.01·9 = 0.045 J: 1 + log₁₀(4/9)/5 = 0.930.
    let moving = 1.0 + (4.0f32 / 9.0).log10() / 5.0;
    assert!((light[0] - moving).abs() < 1e-3, "{light:?}");
    assert!(
        (heavy[0] - moving).abs() < 1e-3,
        "{heavy:?}: a node's level is mass-free"
    );
    assert_eq!((light[1], heavy[1]), (0.0, 0.0), "nodes at rest");
    assert!((light[2] - 1.0).abs() < 1e-6, "{light:?}");
    // A spring at 1 % of 0.1 m: ½·100·1e-6 = 5e-5 J, 1 + log₁₀(5e-5/0.045)/5 = 0.409, and a
    // decade (0.2) more at 10 times the stiffness; the one at rest is blue-grey.
    let strained = 1.0 + (5e-5f32 / 0.045).log10() / 5.0;
    assert!((soft[0] - strained).abs() < 2e-3, "{soft:?}");
    assert!(
        (stiff[0] - soft[0] - 0.2).abs() < 2e-3,
        "{soft:?} {stiff:?}"
    );
    assert!(
        (heavy_soft[0] - soft[0] + 0.2).abs() < 2e-3,
        "{heavy_soft:?} {soft:?}"
    );
    assert!(soft[0] == soft[1], "both ends of a spring: {soft:?}");
    assert!(soft[2] == 0.0 && stiff[3] == 0.0, "{soft:?} {stiff:?}");
}

/// A red speed or decades typed past the panel's ends (Ctrl+click; 0, negative, huge) draw as
/// the nearest end, never NaN: before, a speed of 0 drew a resting node at 0/0 and 0 decades
/// every level at ±∞ (0/0 for a node at the red speed).
#[test]
fn energy_settings_past_the_sliders_ends_draw_as_the_nearest_end() {
    let positions = vec![Vec3::ZERO, Vec3::new(0.1, 0.0, 0.0), Vec3::Y];
    let spring = Spring {
        a: 0,
        b: 1,
        rest: 0.1,
        stiffness: 100.0,
    };
    let mut body = Body::new(
        positions,
        0.01,
        vec![(spring, SpringKind::Structural)],
        Vec::new(),
    );
    body.velocity = vec![
        Vec3::ZERO,
        Vec3::new(3.0, 0.0, 0.0),
        Vec3::new(0.0, 0.5, 0.0),
    ];
    let draw = |speed_scale: f32, energy_decades: f32| {
        let settings = RenderSettings {
            speed_scale,
            energy_decades,
            ..RenderSettings::default()
        };
        let (mut points, mut lines) = (Vec::new(), Vec::new());
        body_points(&body, &settings, &mut points, &mut lines);
        points
            .iter()
            .chain(&lines)
            .map(|p| p.color)
            .collect::<Vec<_>>()
    };
    for (typed, nearest) in [
        ((0.0, 5.0), (0.1, 5.0)),
        ((-3.0, 5.0), (0.1, 5.0)),
        ((3.0, 0.0), (3.0, 1.0)),
        ((3.0, -2.0), (3.0, 1.0)),
        ((1e9, 1e9), (20.0, 10.0)),
    ] {
        let drawn = draw(typed.0, typed.1);
        assert!(
            drawn.iter().flatten().all(|c| c.is_finite()),
            "{typed:?}: {drawn:?}"
        );
        assert_eq!(drawn, draw(nearest.0, nearest.1), "{typed:?}");
    }
}

/// The jelly preset sloshing on the floor (the 3 s after it first touches it, every third
/// frame), drawn at the scale it starts with (`[jelly] red_speed`, `energy_decades`): its
/// nodes, 0.1–4 m/s, spread over the ramp instead of reading orange. Per-node masses cancel
/// in a node's level (E_red is a node's own ½m·v_red²), so it is the speeds against v_red:
/// at the cloth's 3 m/s and 5 decades, 79 % of the node samples drew in the ramp's top third
/// (median 0.80, 10th–90th percentile 0.57–0.98); at 5.4 m/s and 4 decades 40 % (median
/// 0.62, 0.33–0.84), the springs' median at 0.26 (0.51 before: their energies are two
/// decades below the nodes', so more spread for the nodes draws the springs cooler).
#[test]
fn the_sloshing_jellys_nodes_spread_over_the_ramp() {
    use crate::scene::Source;
    use crate::sims::particles::scene::ParticlesScene;
    let source = Source::load("jelly").unwrap();
    let mut sim = ParticlesSim::with_scene(ParticlesScene::from_source(&source).unwrap());
    let (mut touched, mut nodes, mut springs) = (None, Vec::new(), Vec::new());
    for frame in 0..300 {
        sim.step().unwrap();
        let State::Body(b) = &sim.state else {
            panic!("a body scene")
        };
        let low = b.position.iter().map(|p| p.y).fold(f32::MAX, f32::min);
        if touched.is_none() && low < 0.01 {
            touched = Some(frame);
        }
        if touched.is_some_and(|t| frame - t < 180 && frame % 3 == 0) {
            let (mut points, mut lines) = (Vec::new(), Vec::new());
            body_points(b, &sim.render, &mut points, &mut lines);
            nodes.extend(points.iter().map(|p| level_of(p.color)));
            springs.extend(lines.iter().step_by(2).map(|p| level_of(p.color)));
        }
    }
    // It falls 1.5 m: √(2·1.5/9.82) = 0.55 s, frame 33.
    assert!(
        touched.is_some_and(|t| (30..40).contains(&t)),
        "{touched:?}"
    );
    for v in [&mut nodes, &mut springs] {
        v.sort_by(f32::total_cmp);
    }
    let at = |v: &[f32], f: f32| v[((v.len() - 1) as f32 * f) as usize];
    let share = |v: &[f32], range: std::ops::Range<f32>| {
        v.iter().filter(|l| range.contains(l)).count() as f32 / v.len() as f32
    };
    let (top, bottom) = (share(&nodes, 2.0 / 3.0..1.1), share(&nodes, 0.0..1.0 / 3.0));
    let (low, median, high) = (at(&nodes, 0.1), at(&nodes, 0.5), at(&nodes, 0.9));
    println!(
        "nodes: {top} in the top third, {bottom} in the bottom third, 10th–90th percentile \
         {low}–{high}, median {median}; springs' median {}",
        at(&springs, 0.5)
    );
    assert!(top < 0.5 && bottom > 0.05, "{top} {bottom}");
    assert!((0.4..0.7).contains(&median), "{median}");
    assert!(high - low > 0.45, "{low}–{high}");
    assert!(at(&springs, 0.5) > 0.15, "the springs not all blue-grey");
}
