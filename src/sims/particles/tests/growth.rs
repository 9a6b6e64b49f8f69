//! Springs switched on live grow in (`growth.rs`): no jolt the frame after, no blow-up after,
//! and the rest shape's rest lengths once grown.

use super::*;
use crate::sims::particles::body::Spring;
use crate::sims::particles::growth::Growth;
use crate::sims::particles::scene::GROW_SECONDS;

/// `text`'s body after 3 s (180 frames): sagging, or collapsed without some springs.
fn settled(text: &str) -> ParticlesSim {
    let mut sim = ParticlesSim::with_scene(scene(text));
    for _ in 0..180 {
        sim.step().unwrap();
    }
    sim
}

fn total(b: &Body) -> f64 {
    let (kinetic, potential, elastic) = b.energy(GRAVITY);
    kinetic + potential + elastic
}

fn fastest(b: &Body) -> f32 {
    b.velocity.iter().map(|v| v.length()).fold(0.0, f32::max)
}

/// An 8³ jelly that fell 3 s without its shear and bending springs and its volume term
/// (folded onto the floor) gets them back. Over the growth (0.5 s, 30 frames) and the 11 frames
/// after it, the kinetic energy peaks under 0.2 of what the same springs switched on at once
/// give and the fastest node under 0.7 of it (measured, growth against at once: Verlet 51.9 J
/// against 531 J, 20.0 against 80.3 m/s; Euler 57.6 / 518 J, 26.0 / 102 m/s; XPBD 15.9 / 113 J,
/// 19.6 / 33.3 m/s); once grown, every rest length is the rest shape's (a jelly built with
/// them) and the growth over. The bounds were absolute (3 J, XPBD 15 J; 15 m/s) while the floor's
/// friction took 10 % of every grounded node's sliding each substep (a damping of 76 /s at
/// the preset's 12 substeps); on the Coulomb floor (μ = 0.1) the growth's peak is 52 J and
/// 20 m/s, and 57.7 J and 20 m/s at μ = 0, where the old law and the new coincide: the old
/// figures were the floor's damping, so the growth is now measured against the switch at once
/// on the same floor.
#[test]
fn springs_switched_on_in_a_collapsed_jelly_grow_in_without_a_jolt() {
    let mut jolts = Vec::new();
    for integrator in Integrator::ALL {
        let (at_once_kinetic, at_once_fast) = peak_after_switch(integrator, 0.0).0;
        let (peak, mut sim) = peak_after_switch(integrator, GROW_SECONDS);
        let (kinetic, fast) = peak;
        let rest = ParticlesSim::with_scene(sim.scene.clone());
        let State::Body(rest) = &rest.state else {
            unreachable!()
        };
        let b = body(&mut sim);
        println!(
            "jelly {integrator:?}: over 41 frames at most {kinetic:.3} J kinetic, {fast:.2} m/s \
             ({at_once_kinetic:.1} J, {at_once_fast:.1} m/s switched on at once); {:.3} J after",
            total(b)
        );
        jolts.extend(
            (fast >= 0.7 * at_once_fast)
                .then(|| format!("{integrator:?}: {fast} m/s ({at_once_fast})")),
        );
        jolts.extend(
            (kinetic >= 0.2 * at_once_kinetic)
                .then(|| format!("{integrator:?}: {kinetic} J kinetic ({at_once_kinetic})")),
        );
        assert!(b.growth.springs.is_empty(), "{integrator:?}: still growing");
        assert_eq!(b.springs, rest.springs, "{integrator:?}");
        assert!(b.links.iter().zip(&rest.links).all(|(l, r)| l == r));
    }
    assert!(jolts.is_empty(), "{jolts:?}");
}

/// The collapsed 8³ jelly (3 s without shear, bend springs and volume term) given its shear
/// and bend springs back over `grow` s (0: at once) under `integrator`: the peak kinetic
/// energy (J) and fastest node (m/s) over 41 frames, and the sim after.
fn peak_after_switch(integrator: Integrator, grow: f32) -> ((f64, f32), ParticlesSim) {
    let mut sim = settled(&format!(
        "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nshear = 0.0\nbend = 0.0\n\
         volume_stiffness = 0.0\nintegrator = \"{}\"\ngrow_seconds = {grow}\n",
        integrator.name()
    ));
    sim.scene.body.shear = 0.5;
    sim.scene.body.bend = 0.3;
    let (mut fast, mut kinetic) = (0.0f32, 0.0f64);
    for _ in 0..41 {
        sim.step().unwrap();
        let b = body(&mut sim);
        fast = fast.max(fastest(b));
        kinetic = kinetic.max(b.energy(GRAVITY).0);
        assert!(b.position.iter().all(|p| p.is_finite()), "{integrator:?}");
    }
    ((kinetic, fast), sim)
}

/// A 32² cloth that hung 3 s without shear springs (its cells sheared flat: shear springs
/// of nearly zero length) gets them back under the explicit integrators: 2 s later its total
/// energy is bounded, under 50 J (it had 7.6 J; the shear springs switched on at once held
/// 166 J and the cloth blew up: 10⁵ J and 1 900 m/s by 2 s).
#[test]
fn shear_springs_switched_on_in_a_collapsed_cloth_do_not_blow_it_up() {
    for integrator in [Integrator::Verlet, Integrator::Euler] {
        let mut sim = settled(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nshear = 0.0\n\
             integrator = \"{}\"\n",
            integrator.name()
        ));
        let e0 = total(body(&mut sim));
        sim.scene.body.shear = 0.5;
        let mut most = 0.0f64;
        for _ in 0..120 {
            sim.step().unwrap();
            most = most.max(total(body(&mut sim)));
        }
        let b = body(&mut sim);
        println!(
            "cloth {integrator:?}: {e0:.2} J → at most {most:.2} J, {:.2} J after 2 s, {:.2} m/s",
            total(b),
            fastest(b)
        );
        assert!(most < 50.0, "{integrator:?}: {e0} J → {most} J");
        assert!(b.growth.springs.is_empty());
    }
}

/// Another kind switched while shear springs grow in (bending springs off, 10 frames into the
/// growth): the shear springs grow on from the rest lengths they had grown to, a frame's
/// growth the frame after (they went back to the lengths they found, the growth restarted).
#[test]
fn another_kind_switched_mid_growth_moves_no_rest_length_back() {
    let mut sim = settled(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\nshear = 0.0\nbend = 0.05\n",
    );
    sim.scene.body.shear = 0.5;
    for _ in 0..10 {
        sim.step().unwrap();
    }
    let rests = |b: &Body| -> std::collections::HashMap<(u32, u32), (f32, f32)> {
        (b.growth.springs.iter())
            .map(|&(k, _, to)| {
                let s = b.springs[k as usize];
                ((s.a, s.b), (s.rest, to))
            })
            .collect()
    };
    let before = rests(body(&mut sim));
    assert_eq!(before.len(), 450, "the 16² cloth's shear springs growing");
    sim.scene.body.bend = 0.0;
    sim.step().unwrap();
    let frame = sim.scene.dt / sim.scene.body.grow_seconds;
    let after = rests(body(&mut sim));
    let off = (before.iter())
        .map(|(ends, &(r0, to))| (after[ends].0 - (r0 + (to - r0) * frame)).abs())
        .fold(0.0f32, f32::max);
    let most = (before.values())
        .map(|&(r0, to)| (to - r0).abs())
        .fold(0.0f32, f32::max);
    println!("rest lengths {off:.2e} m off a frame's growth on (at most {most:.2e} m to grow)");
    assert_eq!(after.len(), 450);
    assert!(off < 1e-6, "{off} m");
}

/// A 16² cloth hung 1 s without shear springs, its shear springs just switched on to grow
/// over `seconds` (`grow_seconds`; not yet a frame grown).
fn regrowing(seconds: f32) -> ParticlesSim {
    let mut sim = ParticlesSim::with_scene(scene(&format!(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\nshear = 0.0\n\
         grow_seconds = {seconds}\n"
    )));
    for _ in 0..60 {
        sim.step().unwrap();
    }
    sim.scene.body.shear = 0.5;
    sim
}

/// The shear springs' rest lengths in `b`, each with the length it found and the rest
/// shape's (NaN, its own rest length once grown).
fn shear_rests(b: &Body) -> Vec<(f32, f32, f32)> {
    (b.springs.iter().zip(&b.kinds))
        .filter(|(_, &k)| k == SpringKind::Shear)
        .map(|(s, _)| {
            let g = (b.growth.springs.iter()).find(|g| b.springs[g.0 as usize] == *s);
            (
                s.rest,
                g.map_or(f32::NAN, |g| g.1),
                g.map_or(s.rest, |g| g.2),
            )
        })
        .collect()
}

/// [`regrowing`] after `frames` frames: [`shear_rests`] and whether it is still growing.
fn shear_grown(seconds: f32, frames: usize) -> (Vec<(f32, f32, f32)>, bool) {
    let mut sim = regrowing(seconds);
    for _ in 0..frames {
        sim.step().unwrap();
    }
    let b = body(&mut sim);
    (shear_rests(b), !b.growth.springs.is_empty())
}

/// `grow_seconds` is honoured: over 1.5 s (90 frames) the shear springs are a third grown
/// after 30 frames (the default 0.5 s had them grown) and still growing after 89, grown after
/// 90, each at its length in the rest shape (taken mid-growth); 0 puts them there the first
/// frame, with no growth.
#[test]
fn springs_grow_in_over_the_scenes_grow_seconds() {
    let (target, growing) = shear_grown(1.5, 1);
    assert!(growing, "growing after a frame of 90");
    assert_eq!(target.len(), 450, "the 16² cloth's shear springs");
    let (third, growing) = shear_grown(1.5, 30);
    assert!(growing, "still growing after 30 frames of 90");
    let off = (third.iter())
        .map(|&(now, found, rest)| (now - (found + (rest - found) / 3.0)).abs())
        .fold(0.0f32, f32::max);
    let most = (third.iter())
        .map(|&(_, found, rest)| (rest - found).abs())
        .fold(0.0f32, f32::max);
    println!("grow_seconds 1.5, 30 frames: {off:.1e} m off a third grown ({most:.1e} m to grow)");
    assert!(
        most > 0.01,
        "the shear springs have something to grow: {most} m"
    );
    assert!(off < 1e-5, "{off} m off a third grown");
    assert!(
        shear_grown(1.5, 89).1,
        "still growing after 89 frames of 90"
    );
    for (seconds, frames) in [(1.5, 90), (0.0, 1)] {
        let (grown, growing) = shear_grown(seconds, frames);
        assert!(
            !growing,
            "grow_seconds {seconds}: grown after {frames} frames"
        );
        assert_eq!(grown.len(), target.len());
        assert!(
            grown.iter().zip(&target).all(|(g, t)| g.0 == t.2),
            "grow_seconds {seconds}: at the rest shape's lengths"
        );
    }
}

/// `grow_seconds` edited mid-growth changes the rate, not the rest lengths reached: a third
/// grown over 1.5 s (30 frames), set to 0.5 s, the next frame moves each rest length by at
/// most a frame's growth over 0.5 s and the growth ends 20 frames on (the ⅔ left over 0.5 s);
/// half grown over 0.5 s (15 frames), set to 5 s, the next frame moves each on by a frame's
/// growth over 5 s and the growth ends 150 frames on (a growth of seconds elapsed over the
/// seconds set jumped the rest lengths to a third grown and back to a tenth); set to 0 they are the
/// rest shape's at once.
#[test]
fn a_grow_seconds_edit_mid_growth_changes_the_rate_not_the_rest_lengths() {
    for (from, frames, to, left) in [(1.5f32, 30, 0.5f32, 20), (0.5, 15, 5.0, 150)] {
        let mut sim = regrowing(from);
        for _ in 0..frames {
            sim.step().unwrap();
        }
        let before = shear_rests(body(&mut sim));
        sim.scene.body.grow_seconds = to;
        sim.step().unwrap();
        let after = shear_rests(body(&mut sim));
        let frame = sim.scene.dt / to;
        // Each rest length moved by a frame's growth toward the rest shape's (f32 rounding).
        let off = (before.iter().zip(&after))
            .map(|(b, a)| (a.0 - b.0 - (b.2 - b.1) * frame).abs())
            .fold(0.0f32, f32::max);
        let most = (before.iter())
            .map(|b| (b.2 - b.1).abs())
            .fold(0.0f32, f32::max);
        println!(
            "grow_seconds {from} → {to} after {frames} frames: rest lengths {off:.1e} m off a frame's growth ({:.1e} m; {most:.1e} m to grow in all)",
            most * frame
        );
        assert!(most > 0.01, "{most} m to grow");
        assert!(off < 1e-6, "{from} → {to}: {off} m off a frame's growth");
        let mut ended = 1;
        while !body(&mut sim).growth.springs.is_empty() {
            sim.step().unwrap();
            ended += 1;
        }
        assert_eq!(ended, left, "{from} → {to}: frames to grown after the edit");
    }
    let mut sim = regrowing(1.5);
    for _ in 0..30 {
        sim.step().unwrap();
    }
    let target = shear_rests(body(&mut sim));
    sim.scene.body.grow_seconds = 0.0;
    sim.step().unwrap();
    let b = body(&mut sim);
    assert!(b.growth.springs.is_empty(), "grow_seconds 0: grown at once");
    assert!((shear_rests(b).iter().zip(&target)).all(|(g, t)| g.0 == t.2));
}

/// A growth ends on its last frame however long it is against the frame: two nodes 0.25 m
/// apart, their spring (1 m in the rest shape) switched on over 60 s in frames of 1 ms, is
/// still growing after 59 999 frames, on the line from 0.25 to 1 m each frame (within 1e-6 m),
/// and grown after 60 000 (seconds summed in f32 fell 21 ms short of 60 s, past a
/// 0.1 %-of-a-frame end rule: still growing, 2.7e-4 m off the line).
#[test]
fn a_long_growth_ends_on_its_last_frame() {
    let (dt, seconds, frames) = (0.001f32, 60.0f32, 60_000);
    let spring = Spring {
        a: 0,
        b: 1,
        rest: 1.0,
        stiffness: 1.0,
    };
    let mut b = Body::new(
        vec![Vec3::ZERO, Vec3::new(0.25, 0.0, 0.0)],
        1.0,
        vec![(spring, SpringKind::Structural)],
        Vec::new(),
    );
    b.grow_in([true; 3], &Growth::default(), &[], seconds);
    assert_eq!(b.springs[0].rest, 0.25, "starts at the length it found");
    let mut off = 0.0f32;
    for frame in 1..frames {
        assert!(b.grow(dt, seconds));
        assert!(!b.growth.springs.is_empty(), "grown after {frame} frames");
        let expected = 0.25 + 0.75 * frame as f32 / frames as f32;
        off = off.max((b.springs[0].rest - expected).abs());
    }
    println!("{frames} frames: rest length at most {off:.1e} m off the line");
    b.grow(dt, seconds);
    assert!(b.growth.springs.is_empty(), "grown after {frames} frames");
    assert!(off < 1e-6, "{off} m");
    assert_eq!((b.springs[0].rest, b.links[0].rest), (1.0, 1.0));
}

/// A bad `grow_seconds` is named by file, line, key and value, in a file and from the panel.
#[test]
fn a_bad_grow_seconds_is_named_by_file_key_and_value() {
    for (value, got) in [("-0.5", "-0.5"), ("61.0", "61"), ("nan", "NaN")] {
        let message = error(&format!(
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\ngrow_seconds = {value}\n"
        ));
        let expected = format!("test.toml:4: jelly.grow_seconds: must be in [0, 60] s, got {got}");
        assert!(
            message.starts_with(&expected),
            "{message:?} is not {expected:?}"
        );
    }
    let mut sim = ParticlesSim::with_scene(scene("kind = \"particles\"\nscene = \"cloth\"\n"));
    sim.scene.body.grow_seconds = -1.0;
    let message = sim.step().expect_err("refused").to_string();
    assert_eq!(message, "cloth.grow_seconds: must be in [0, 60] s, got -1");
    assert_eq!(sim.scene.body.grow_seconds, 0.5, "the edit undone");
}

/// The 8³ jelly folded 3 s without shear and genbo springs and without the volume term (the
/// spring net alone; with it: `volume.rs`) (Verlet and Euler at the preset's
/// 12 substeps: collapsed, its highest node under 0.1 m), each node lifted by up to `lift` m,
/// then 2.5 s with the springs back: (its spring energy, J; its highest node, m).
fn regrown_folded_jelly(integrator: Integrator, lift: f32) -> (f64, f32) {
    let mut sim = settled(&format!(
        "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nshear = 0.0\nbend = 0.0\n\
         volume_stiffness = 0.0\nintegrator = \"{}\"\n",
        integrator.name()
    ));
    let top = |b: &Body| b.position.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    let b = body(&mut sim);
    assert!(
        top(b) < 0.1,
        "{integrator:?}: collapsed, highest node {} m",
        top(b)
    );
    lift_and_switch_springs_on(&mut sim, lift);
    for _ in 0..150 {
        sim.step().unwrap();
    }
    let b = body(&mut sim);
    (b.energy(GRAVITY).2, top(b))
}

/// A folded jelly springs back up as its springs regrow (Verlet and Euler): folded 3 s
/// without shear and genbo springs, each node lifted by at most 0.1 mm, 2.5 s after they are
/// switched on it stands 1.03 m tall (Verlet and Euler) with 20 and 30 J of strain left (some
/// cells inside out: the spring net's own limit, `tangles.rs`). Folded exactly flat (every node
/// at y = 0) it stays flat, a balance of the exact symmetry: measured in `tangles.rs`
/// `folded_jelly`, docs/particles/physics.md. Lifted by at most 10 µm (this test's lift while
/// the floor took 10 % of every grounded node's sliding each substep: then 0.58 and 0.59 m
/// tall) it now stays flat (Verlet 0.00 m, 239 J), as it does at μ = 0 on the old code too (the
/// laws coincide there: 0.00 m, 247 J): 10 µm broke the balance only through the old floor's
/// damping.
#[test]
fn a_folded_jelly_springs_back_up_as_its_springs_regrow() {
    for integrator in [Integrator::Verlet, Integrator::Euler] {
        let (strain, up) = regrown_folded_jelly(integrator, 1e-4);
        println!("{integrator:?}: lifted 0.1 mm, {strain:.1} J, {up:.2} m tall");
        assert!(
            up > 0.4 && strain < 60.0,
            "{integrator:?}: {up} m, {strain} J"
        );
    }
}

/// The cloth tangled without shear springs, its shear springs regrown (0.5 s): heavier damping
/// rings its motion down, 2 s on under 0.1 J at 2 /s (the preset's 0.2 /s leaves 3.04 J,
/// `tangles.rs` `regrown_cloth`); and over the growth the step is not the cause of its motion:
/// 24 and 96 substeps end the growth (frame 30) with kinetic energies within a quarter of
/// each other (plus 0.05 J; 3.94 and 4.10 J).
#[test]
fn the_regrown_cloth_rings_down_under_heavier_damping() {
    let kinetic = |substeps: u32, damping: f32, frames: usize| {
        let mut sim = settled(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nshear = 0.0\n\
             substeps = {substeps}\ndamping = {damping}\n"
        ));
        sim.scene.body.shear = 0.5;
        for _ in 0..frames {
            sim.step().unwrap();
        }
        body(&mut sim).energy(GRAVITY).0
    };
    let (coarse, fine, damped) = (
        kinetic(24, 0.2, 30),
        kinetic(96, 0.2, 30),
        kinetic(24, 2.0, 120),
    );
    println!(
        "kinetic once grown: 24 substeps {coarse:.3} J, 96 {fine:.3} J; 2 s on at damping 2 /s \
         {damped:.3} J"
    );
    assert!(
        (coarse - fine).abs() < 0.25 * coarse.max(fine) + 0.05,
        "{coarse} J vs {fine} J"
    );
    assert!(damped < 0.1, "{damped} J");
}
