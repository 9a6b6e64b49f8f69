//! The particles kind through its door: the grabber, live edits, F1–F3, bad scene input named
//! by file, line and key, and restarts with the edited set-up.

use super::*;

/// A drag that starts on a node's pixel picks it and moves it on the plane facing the camera;
/// letting go gives it its pin back; a drag that starts off the cloth picks nothing.
#[test]
fn the_grabber_drags_the_node_under_the_pointer() {
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 8\nsize = 1.5\n",
    ));
    let camera = Camera::framing(&Aabb::new([-1.0, 1.0, -1.0], [1.0, 3.0, 1.0]));
    sim.set_camera(camera);
    let size = [800, 600];
    let node = 8 * 7 + 4;
    let target = body(&mut sim).position[node];
    let clip = camera.projection(800.0 / 600.0) * camera.view() * target.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    let pixel = [(ndc.x + 1.0) * 400.0, (1.0 - ndc.y) * 300.0];
    assert!(!sim.pointer([5.0, 5.0], size, true));
    assert!(!sim.pointer([pixel[0] + 1.0, pixel[1]], size, true));
    assert!(!sim.pointer(pixel, size, false));
    assert!(sim.pointer(pixel, size, true));
    assert_eq!(sim.grabber.held.map(|h| h.node), Some(node));
    assert!(sim.pointer([pixel[0], pixel[1] - 60.0], size, true));
    let b = body(&mut sim);
    let moved = b.position[node];
    assert!(moved.y > target.y + 0.05, "{target} → {moved}");
    let forward = (camera.target - camera.eye()).normalize();
    let depth = |p: Vec3| (p - camera.eye()).dot(forward);
    assert!((depth(moved) - depth(target)).abs() < 1e-4);
    sim.step().unwrap();
    assert_eq!(body(&mut sim).position[node], moved);
    assert!(!sim.pointer([pixel[0], pixel[1] - 60.0], size, false));
    assert!(!body(&mut sim).pinned[node]);
    assert!(body(&mut sim).pinned[7]);
}

/// The grabber works on the jelly too: a drag that starts on its front-most node picks that
/// node, moves it on the plane facing the camera, holds it there while the jelly steps (its
/// springs pull its neighbours after it: no gravity here, so nothing else moves them), and
/// letting go leaves it free (the jelly has no pins).
#[test]
fn the_grabber_drags_a_jelly_node() {
    use crate::sims::particles::grab::to_pixel;
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nn = 4\n[world]\ngravity = [0.0, 0.0, 0.0]\n",
    ));
    let camera = Camera::oriented_framing(&sim.bounds(), sim.orientation());
    sim.set_camera(camera);
    let size = [800, 600];
    let forward = (camera.target - camera.eye()).normalize();
    let depth = |p: Vec3| (p - camera.eye()).dot(forward);
    let start = body(&mut sim).position.clone();
    let node = (0..start.len())
        .min_by(|&a, &b| depth(start[a]).total_cmp(&depth(start[b])))
        .unwrap();
    let target = start[node];
    let neighbour = (0..start.len())
        .filter(|&k| k != node)
        .min_by(|&a, &b| {
            let (da, db) = (start[a].distance(target), start[b].distance(target));
            da.total_cmp(&db)
        })
        .unwrap();
    let (pixel, _) = to_pixel(&camera, target, size).expect("in view");
    assert!(sim.pointer(pixel, size, true));
    assert_eq!(sim.grabber.held.map(|h| h.node), Some(node));
    assert!(sim.pointer([pixel[0], pixel[1] - 80.0], size, true));
    let moved = body(&mut sim).position[node];
    assert!(moved.y > target.y + 0.1, "{target} → {moved}");
    assert!((depth(moved) - depth(target)).abs() < 1e-4);
    for _ in 0..10 {
        sim.step().unwrap();
    }
    let b = body(&mut sim);
    assert_eq!(b.position[node], moved);
    let lifted = b.position[neighbour].y - start[neighbour].y;
    assert!(lifted > 0.01, "the neighbour rose {lifted} m");
    assert!(!sim.pointer([pixel[0], pixel[1] - 80.0], size, false));
    assert!(sim.grabber.held.is_none());
    assert!(!body(&mut sim).pinned[node]);
    sim.step().unwrap();
    assert_ne!(
        body(&mut sim).position[node],
        moved,
        "let go, the node moves again"
    );
}

/// Live edits reach the running body: stiffness (its springs, as seen from both ends), mass,
/// pins; an explicit integrator's substeps rise to stay stable; a bad edit is undone and
/// named; a changed n starts the cloth again.
#[test]
fn live_edits_apply_before_the_next_step() {
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 8\nsize = 1.0\nsubsteps = 10\n",
    ));
    sim.step().unwrap();
    sim.scene.body.stiffness = 2000.0;
    sim.scene.body.mass = 0.8;
    sim.scene.body.pins = crate::sims::particles::scene::Pins::Top;
    sim.step().unwrap();
    let needed = sim.scene.stable_substeps();
    assert!(needed > 10 && sim.scene.body.substeps == needed);
    assert!(sim.note().unwrap().contains("substeps raised"));
    let b = body(&mut sim);
    assert_eq!(b.mass, 0.8 / 64.0);
    assert!(b
        .links
        .iter()
        .all(|l| [2000.0, 1000.0].contains(&l.stiffness)));
    assert_eq!(b.pinned.iter().filter(|&&p| p).count(), 8);
    sim.scene.body.damping = -1.0;
    let refused = sim.step().unwrap_err().to_string();
    assert!(
        refused.contains("cloth.damping: must be in [0, 1000] 1/s, got -1"),
        "{refused}"
    );
    assert_eq!(sim.scene.body.damping, 0.2);
    sim.scene.body.n = 5;
    sim.step().unwrap();
    assert_eq!(body(&mut sim).len(), 25);
}

/// A spring kind's stiffness raised from 0 adds those springs and lowered to 0 leaves them
/// out (before, `sync` only set the stiffness of the springs there were, so a cloth built
/// without bending springs got none from the panel's slider), and the cloth swinging in the
/// wind goes on from where it is: every node's position, previous position and velocity kept
/// to the bit, its pins and the node held by the grabber too (before, the edit built the body
/// again at its start: the node at the free corner jumped back by tens of cm), under each
/// integrator.
#[test]
fn a_spring_kind_switched_on_or_off_live_keeps_the_motion_and_changes_only_the_springs() {
    use crate::sims::particles::grab::Held;
    for integrator in Integrator::ALL {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 8\nsize = 1.0\nbend = 0.0\n\
             integrator = \"{}\"\n[world]\nwind = [0.0, 0.0, 6.0]\n",
            integrator.name()
        )));
        let count = |sim: &mut ParticlesSim, kind| {
            let b = body(sim);
            b.kinds.iter().filter(|&&k| k == kind).count()
        };
        for _ in 0..20 {
            sim.step().unwrap();
        }
        let start = ParticlesSim::with_scene(sim.scene.clone());
        let State::Body(start) = &start.state else {
            unreachable!()
        };
        // The cloth swings: its free bottom corner is far from where it started.
        let corner = 8 * 8 - 1;
        let moved = body(&mut sim).position[corner].distance(start.position[corner]);
        assert!(moved > 0.1, "{integrator:?}: moved {moved} m");
        assert!(body(&mut sim).velocity[corner].length() > 0.1);
        // Hold a node as the grabber does: pinned while held.
        let held = 8 * 4 + 3;
        body(&mut sim).pinned[held] = true;
        sim.grabber.held = Some(Held {
            node: held,
            was_pinned: false,
            depth: 1.0,
        });
        let keep = |b: &Body| {
            (
                b.position.clone(),
                b.previous.clone(),
                b.velocity.clone(),
                b.pinned.clone(),
            )
        };
        assert_eq!(count(&mut sim, SpringKind::Bend), 0);
        let before = keep(body(&mut sim));
        sim.scene.body.bend = 0.3;
        sim.sync().unwrap();
        let after = keep(body(&mut sim));
        let jump = |a: &[Vec3], b: &[Vec3]| {
            a.iter()
                .zip(b)
                .map(|(p, q)| p.distance(*q))
                .fold(0.0, f32::max)
        };
        assert!(
            after == before,
            "{integrator:?}: bend on moved a node by {} m, changed a velocity by {} m/s",
            jump(&after.0, &before.0),
            jump(&after.2, &before.2)
        );
        assert_eq!(sim.grabber.held.map(|h| h.node), Some(held));
        // Two per node pair two apart along each axis: 2 · 8 · 6.
        assert_eq!(count(&mut sim, SpringKind::Bend), 96);
        let bend = 0.3 * sim.scene.body.stiffness;
        let b = body(&mut sim);
        let bending = |b: &Body| {
            b.springs
                .iter()
                .zip(&b.kinds)
                .filter(|(_, &k)| k == SpringKind::Bend)
                .map(|(s, _)| *s)
                .collect::<Vec<_>>()
        };
        assert!(bending(b).iter().all(|s| s.stiffness == bend));
        // Each grows in (`growth.rs`) from the length it finds to the rest shape's 2/7 m.
        assert_eq!(b.growth.springs.len(), 96);
        assert!(b.growth.springs.iter().all(|&(k, found, rest)| {
            let s = b.springs[k as usize];
            let length = b.position[s.a as usize].distance(b.position[s.b as usize]);
            b.kinds[k as usize] == SpringKind::Bend
                && s.rest == found
                && found == length
                && (rest - 2.0 / 7.0).abs() < 1e-5
        }));
        sim.step().unwrap();
        let before = keep(body(&mut sim));
        sim.scene.body.shear = 0.0;
        sim.sync().unwrap();
        assert_eq!(keep(body(&mut sim)), before, "{integrator:?}: shear off");
        assert_eq!(count(&mut sim, SpringKind::Shear), 0);
        assert_eq!(count(&mut sim, SpringKind::Bend), 96);
        // Structural: 2 · 8 · 7.
        assert_eq!(count(&mut sim, SpringKind::Structural), 112);
        sim.step().unwrap();
        assert_eq!(body(&mut sim).position[held], before.0[held]);
        assert!(body(&mut sim).position.iter().all(|p| p.is_finite()));
        // Grown (0.5 s): the rest shape's rest lengths.
        for _ in 0..30 {
            sim.step().unwrap();
        }
        let b = body(&mut sim);
        assert!(b.growth.springs.is_empty());
        assert!(bending(b).iter().all(|s| (s.rest - 2.0 / 7.0).abs() < 1e-5));
    }
}

/// The fountain's live edits that outgrow a CUDA solver's buffers (`cuda::Room`, which
/// `upload_fountain` makes them again to; before, the upload refused the edited basin and the
/// viewer paused): nodes per side gives the basin's new node count, max particles raised the
/// room for them; rate, lifetime and max particles lowered fit the buffers there are (the
/// emission is capped by max particles, the particles' room never shrinks).
#[test]
fn fountain_edits_that_outgrow_the_gpus_buffers() {
    use crate::sims::particles::cuda::Room;
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 6000.0\n\
         max_particles = 400\nsurface_nodes = 64\n",
    ));
    for _ in 0..6 {
        sim.step().unwrap();
    }
    let room = Room::of(fountain(&mut sim));
    assert_eq!(
        room,
        Room {
            particles: 400,
            nodes: 64 * 64
        }
    );
    assert_eq!(sim.alive(), 400);
    let edit = |sim: &mut ParticlesSim, change: fn(&mut ParticlesScene), room: Room| {
        change(&mut sim.scene);
        sim.step().unwrap();
        room.fitting(fountain(sim))
    };
    assert_eq!(edit(&mut sim, |s| s.fountain.rate = 60_000.0, room), room);
    assert_eq!(edit(&mut sim, |s| s.fountain.lifetime = 19.0, room), room);
    assert_eq!(
        edit(&mut sim, |s| s.fountain.max_particles = 100, room),
        room
    );
    let nodes = edit(&mut sim, |s| s.fountain.surface_nodes = 96, room);
    assert_eq!(
        nodes,
        Room {
            particles: 400,
            nodes: 96 * 96
        }
    );
    assert_eq!(fountain(&mut sim).surface.height.len(), 96 * 96);
    let raised = edit(&mut sim, |s| s.fountain.max_particles = 5000, nodes);
    assert_eq!(
        raised,
        Room {
            particles: 5000,
            nodes: 96 * 96
        }
    );
    assert!(sim.alive() > 400, "{}", sim.alive());
    // Another key of the basin's (its half-width) keeps its node count: the buffers fit.
    assert_eq!(edit(&mut sim, |s| s.fountain.basin += 0.5, raised), raised);
}

/// F1–F3 switch to the fountain, cloth and jelly presets; the box the camera frames follows.
#[test]
fn f_keys_switch_scenes() {
    let mut sim = ParticlesSim::with_scene(scene("kind = \"particles\"\nscene = \"cloth\"\n"));
    use winit::keyboard::KeyCode;
    let mut bounds = Vec::new();
    for (key, which) in [
        (KeyCode::F3, Which::Jelly),
        (KeyCode::F1, Which::Fountain),
        (KeyCode::F2, Which::Cloth),
    ] {
        assert!(sim.key(key));
        assert_eq!(
            (sim.scene.which, sim.scene.name.as_str()),
            (which, which.name())
        );
        sim.step().unwrap();
        bounds.push(sim.bounds());
    }
    assert!(bounds[0] != bounds[1] && bounds[1] != bounds[2]);
    assert!(sim.key(KeyCode::ArrowRight));
    assert_eq!(sim.scene.world.wind[0], 0.5);
}

/// **P**'s scale is per scene: a file starts from its own `red_speed` and `energy_decades`,
/// F1–F3 set the preset's (the jelly red at 5.4 m/s over 4 decades, the cloth at 3 m/s over
/// 5), and a restart keeps what the user set on the panel.
#[test]
fn p_scale_starts_from_the_scene_and_restart_keeps_the_users() {
    use winit::keyboard::KeyCode;
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 8\nred_speed = 7.5\n\
         energy_decades = 6\n",
    ));
    let scale = |sim: &ParticlesSim| (sim.render.speed_scale, sim.render.energy_decades);
    assert_eq!(scale(&sim), (7.5, 6.0));
    sim.render.speed_scale = 10.0;
    sim.restart().unwrap();
    assert_eq!(scale(&sim), (10.0, 6.0));
    assert!(sim.key(KeyCode::F3));
    assert_eq!(scale(&sim), (5.4, 4.0));
    sim.render.energy_decades = 2.5;
    sim.restart().unwrap();
    assert_eq!(scale(&sim), (5.4, 2.5));
    assert!(sim.key(KeyCode::F2));
    assert_eq!(scale(&sim), (3.0, 5.0));
}

/// Bad values are named by file, line and key, with the range.
#[test]
fn bad_scene_input_is_named_by_file_line_and_key() {
    let base = "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 100.0\n";
    let cases = [
        (
            base.replace("100.0", "-5.0"),
            "test.toml:4: fountain.rate: must be in [0, 100000000] particles/s, got -5",
        ),
        (
            format!("{base}speed = [5.0, 4.0]\n"),
            "test.toml:5: fountain.speed: must be in [5, 1000] m/s (max ≥ min), got 4",
        ),
        (
            format!("{base}basin = 0.2\n"),
            "test.toml:5: fountain.basin: must be in (0.5, 1000] m",
        ),
        (
            format!("{base}direction = [0.0, -1.0, 0.0]\n"),
            "test.toml:5: fountain.direction: must point upwards, out through the cube's top \
             (its axis from the nozzle, 0.05 m below the top, must reach the top within the \
             cube's half side, 0.5 m, of its centre), got [0, -1, 0]",
        ),
        (
            format!("{base}emitter_depth = 0.5\ndirection = [1.0, 0.9, 0.0]\n"),
            "test.toml:6: fountain.direction: must point upwards, out through the cube's top",
        ),
        (
            format!("{base}nozzle = 1\n"),
            "test.toml:5: fountain.nozzle: unknown field `nozzle`",
        ),
        (
            format!("{base}[cloth]\nn = 4\n"),
            "test.toml:5: cloth: this is a fountain scene; its section is [fountain]",
        ),
        (
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nred_speed = 0.0\n".into(),
            "test.toml:4: jelly.red_speed: must be in [0.1, 20] m/s, got 0",
        ),
        (
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nenergy_decades = 12.0\n".into(),
            "test.toml:4: cloth.energy_decades: must be in [1, 10], got 12",
        ),
        (
            "kind = \"particles\"\nscene = \"cloth\"\ndt = 0.5\n".into(),
            "test.toml:3: dt: must be in (0, 0.1] s, got 0.5",
        ),
        (
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nstiffness = 1e5\n".into(),
            "test.toml:3: cloth.substeps: verlet springs of 100000 N/m on nodes of",
        ),
        (
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\npins = \"top\"\n".into(),
            "test.toml:4: jelly.pins: the jelly is never pinned (only \"none\"), got \"top\"",
        ),
        (
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\norientation = \"flat\"\n".into(),
            "test.toml:4: jelly.orientation: is the cloth's: the jelly is a cube and always \
             starts upright, got \"flat\"",
        ),
        // An inline table and a dotted key: each error at its key's line.
        (
            "kind = \"particles\"\nscene = \"cloth\"\n\nworld = { wind = [1, 0, 0], friction = 2 }\n"
                .into(),
            "test.toml:4: world.friction: must be in [0, 1], got 2",
        ),
        (
            "kind = \"particles\"\nscene = \"jelly\"\n\njelly.n = 65\n".into(),
            "test.toml:4: jelly.n: must be 2 to 64 nodes per side, got 65",
        ),
        (
            "kind = \"particles\"\nscene = \"smoke\"\n".into(),
            "test.toml:2: scene: unknown variant `smoke`",
        ),
        (
            "kind = \"particles\"\nscene = \"cloth\"\n[world]\nfriction = 2\n".into(),
            "test.toml:4: world.friction: must be in [0, 1], got 2",
        ),
        // The panel's gravity spans ±100 (`MAX_GRAVITY`), the wind 100 m/s whatever its
        // direction (`MAX_WIND`, the arrow's longest): a file past them is refused, not
        // loaded and then clamped by the panel, or drawn shorter than it blows.
        (
            "kind = \"particles\"\nscene = \"cloth\"\n[world]\nwind = [0, 0, 150]\n".into(),
            "test.toml:4: world.wind: must be finite with a speed of at most 100 m/s, got \
             [0, 0, 150] (150 m/s)",
        ),
        (
            "kind = \"particles\"\nscene = \"fountain\"\n[world]\nwind = [100, 0, 100]\n"
                .into(),
            "test.toml:4: world.wind: must be finite with a speed of at most 100 m/s, got \
             [100, 0, 100] (141.42136 m/s)",
        ),
        (
            "kind = \"particles\"\nscene = \"jelly\"\n[world]\nwind = [-60, 60, 60]\n".into(),
            "test.toml:4: world.wind: must be finite with a speed of at most 100 m/s, got \
             [-60, 60, 60] (103.92305 m/s)",
        ),
        (
            "kind = \"particles\"\nscene = \"fountain\"\n\n[world]\ngravity = [0, -101, 0]\n"
                .into(),
            "test.toml:5: world.gravity: components must be finite and at most 100 m/s² in \
             size, got [0, -101, 0]",
        ),
    ];
    for (text, expected) in cases {
        let message = error(&text);
        assert!(
            message.starts_with(expected),
            "{message:?} is not {expected:?}"
        );
    }
}

/// Restart starts the scene again from its beginning with the edited set-up; an edit that
/// cannot apply is refused and the scene starts again as it was.
#[test]
fn restart_starts_again_with_the_edited_set_up() {
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nn = 4\n",
    ));
    let start = body(&mut sim).position.clone();
    for _ in 0..10 {
        sim.step().unwrap();
    }
    assert_ne!(body(&mut sim).position, start);
    sim.restart().unwrap();
    assert_eq!((body(&mut sim).position.clone(), sim.time()), (start, 0.0));
    sim.scene.body.n = 5;
    sim.restart().unwrap();
    assert_eq!(body(&mut sim).len(), 125);
    sim.scene.body.size = f32::NAN;
    let refused = sim.restart().unwrap_err().to_string();
    assert!(
        refused.starts_with("jelly.size: must be in (0, 1000] m"),
        "{refused}"
    );
    assert_eq!((body(&mut sim).len(), sim.scene.body.size), (125, 1.0));
}

/// The largest stiffness the explicit integrators accept for a cloth of n nodes a side: the
/// scene's stability rule (`stable_substeps`) within the 4096 substeps a frame allows.
fn stiffest_accepted(base: &ParticlesScene, n: usize) -> f32 {
    let mut scene = base.clone();
    scene.body.n = n;
    let needs = |k: f32| {
        let mut s = scene.clone();
        s.body.stiffness = k;
        s.stable_substeps()
    };
    let (mut low, mut high) = (1.0f32, 1e9f32);
    for _ in 0..60 {
        let mid = (low * high).sqrt();
        if needs(mid) <= 4096 {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// "It does not explode": the explicit integrators take every n and stiffness whose stable
/// substeps (dt·ω_max < 2, Gershgorin's bound) fit in 4096 a frame — for the preset cloth
/// (2 m, 0.4 kg, shear ½, bend 0.05, 60 frames/s) n·√k ≤ 88 300 N^½/m^½, k up to 7.6·10⁶ N/m
/// at n = 32, 1.9·10⁶ at 64, 1.2·10⁵ at 256 and 7.4·10³ at 1024 — and refuse a stiffer one,
/// naming the substeps. At the edge (n = 16, k = 3.0·10⁷ N/m, 4096 substeps) a cloth struck
/// out of its plane in a 9 m/s wind stays whole; at a third of the substeps it blows up (so
/// the run can tell).
#[test]
fn the_stiffest_cloth_accepted_does_not_explode() {
    let preset = scene(&std::fs::read_to_string("scenes/particles/cloth.toml").unwrap());
    for (n, expected) in [(32, 7.6e6), (64, 1.9e6), (256, 1.19e5), (1024, 7.43e3)] {
        let k = stiffest_accepted(&preset, n);
        assert!((k / expected - 1.0).abs() < 0.01, "n = {n}: {k} N/m");
        assert!(
            (88_300.0 / n as f32).powi(2) / k < 1.01,
            "n = {n}: n·√k = {}",
            n as f32 * k.sqrt()
        );
        let mut s = preset.clone();
        (s.body.n, s.body.stiffness) = (n, k);
        s.body.substeps = s.stable_substeps();
        assert!(s.body.substeps <= 4096 && s.validate().is_ok(), "n = {n}");
        s.body.stiffness = 1.02 * k;
        s.body.substeps = 4096;
        let refused = s.validate().expect_err("too stiff");
        assert_eq!(refused.key, "cloth.substeps", "{refused:?}");
        assert!(refused.message.contains("need at least 41"), "{refused:?}");
    }
    let run = |third: bool| {
        let mut s = preset.clone();
        s.body.n = 16;
        s.body.stiffness = stiffest_accepted(&preset, 16);
        s.body.substeps = s.stable_substeps() / if third { 3 } else { 1 };
        s.world.wind = [9.0, 0.0, 9.0];
        let mut sim = ParticlesSim::with_scene(s);
        let b = body(&mut sim);
        let h = b.springs[0].rest;
        b.position[16 * 8 + 8].z += 0.2 * h;
        let mut worst = 0.0f32;
        for _ in 0..12 {
            if sim.step().is_err() {
                return f32::INFINITY;
            }
            worst = worst.max(body(&mut sim).max_strain());
        }
        worst
    };
    let (edge, third) = (run(false), run(true));
    println!("max strain at the edge {edge}, at a third of the substeps {third}");
    assert!(edge < 0.06, "at the edge: max strain {edge}");
    assert!(third > 10.0, "a third of the substeps: max strain {third}");
}
