//! The wind arrow through the door: a drag from its head or its handle sets the wind, and only
//! moving does; the nearer of the arrow and a node is grabbed; the fountain's arrow on its jet.

use super::*;

/// A drag that starts on the wind arrow's head sets the scene's wind (the head under the
/// pointer on the base's horizontal plane) and holds no node; letting go ends it. The cloth's
/// arrow and the fountain's.
#[test]
fn dragging_the_wind_arrow_sets_the_wind() {
    for which in ["cloth\"\n[cloth]\nn = 8", "fountain\""] {
        drag_the_wind_arrow(&format!(
            "kind = \"particles\"\nscene = \"{which}\n[world]\nwind = [0.0, 0.0, 3.0]\n"
        ));
    }
}

fn drag_the_wind_arrow(text: &str) {
    use crate::sims::particles::grab::{arrow_head, to_pixel};
    let mut sim = ParticlesSim::with_scene(scene(text));
    let camera = Camera::framing(&Aabb::new([-1.0, 0.0, -1.0], [2.0, 3.0, 2.0]));
    sim.set_camera(camera);
    let size = [800, 600];
    let base = sim.arrow_base();
    let head = arrow_head(base, Vec3::new(0.0, 0.0, 3.0));
    let (at_head, _) = to_pixel(&camera, head, size).expect("in view");
    assert!(sim.pointer(at_head, size, true));
    assert!(sim.grabber.arrow && sim.grabber.held.is_none());
    let goal = base + Vec3::new(1.0, 0.0, 0.3);
    let (pixel, _) = to_pixel(&camera, goal, size).expect("in view");
    assert!(sim.pointer(pixel, size, true));
    let wind = Vec3::from(sim.scene.world.wind);
    let now = arrow_head(base, wind);
    assert!(now.distance(goal) < 0.02, "{now} for {goal}");
    assert!(wind.x > 2.0 * wind.z.abs() && wind.y == 0.0, "{wind}");
    assert!(!sim.pointer(pixel, size, false));
    assert!(!sim.grabber.arrow);
    sim.step().expect("a step with the dragged wind");
    // A second drag picks the arrow again (the fountain once kept the button down after the
    // first, so its arrow could be dragged only once), and takes it back toward +z. (The
    // cloth's arrow follows the cloth the step moved.)
    let base = sim.arrow_base();
    let (at_head, _) = to_pixel(&camera, arrow_head(base, wind), size).expect("in view");
    assert!(sim.pointer(at_head, size, true), "the second drag");
    let back = base + Vec3::new(0.0, 0.0, 1.0);
    let (pixel, _) = to_pixel(&camera, back, size).expect("in view");
    assert!(sim.pointer(pixel, size, true));
    let wind = Vec3::from(sim.scene.world.wind);
    assert!(wind.z > 2.0 * wind.x.abs(), "{wind}");
    assert!(!sim.pointer(pixel, size, false));
    // A drag that starts off the arrow (orbiting the camera) and passes over its head leaves
    // the wind alone.
    let head = arrow_head(base, wind);
    let (at_head, _) = to_pixel(&camera, head, size).expect("in view");
    assert!(!sim.pointer([5.0, 5.0], size, true));
    assert!(!sim.pointer(at_head, size, true));
    assert!(!sim.pointer(pixel, size, true));
    assert_eq!(Vec3::from(sim.scene.world.wind), wind);
    assert!(!sim.pointer(pixel, size, false));
}

/// With no wind the arrow is a handle at its base, and a drag that starts on it starts a wind
/// towards the pointer (the head then under it), in every scene: before, no wind meant no
/// arrow, and only the keys or the panel could start one.
#[test]
fn a_drag_from_the_handle_starts_the_wind() {
    use crate::sims::particles::grab::{arrow_head, to_pixel};
    for which in ["fountain\"", "jelly\"", "cloth\"\n[cloth]\nn = 8"] {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"{which}\n[world]\nwind = [0.0, 0.0, 0.0]\n"
        )));
        let camera = Camera::framing(&Aabb::new([-1.0, 0.0, -1.0], [2.0, 3.0, 2.0]));
        sim.set_camera(camera);
        let size = [800, 600];
        let base = sim.arrow_base();
        let (at_base, _) = to_pixel(&camera, base, size).expect("in view");
        assert!(sim.pointer(at_base, size, true), "{which}: the handle");
        assert!(sim.grabber.arrow && sim.grabber.held.is_none());
        let goal = base + Vec3::new(-0.8, 0.0, 0.6);
        let (pixel, _) = to_pixel(&camera, goal, size).expect("in view");
        assert!(sim.pointer(pixel, size, true));
        let wind = Vec3::from(sim.scene.world.wind);
        let head = arrow_head(base, wind);
        assert!(head.distance(goal) < 0.02, "{which}: {head} for {goal}");
        assert!(
            wind.x < -1.0 && wind.z > 0.5 && wind.y == 0.0,
            "{which}: {wind}"
        );
        assert!(!sim.pointer(pixel, size, false));
        sim.step().expect("a step in the dragged wind");
    }
}

/// The fountain's arrow stands on its jet: along the jet's direction from the nozzle,
/// `emitter_depth` + 1.8 cube sides from it, upright or tilted (before, always straight above the cube's centre).
#[test]
fn the_fountains_arrow_follows_a_tilted_jet() {
    for direction in ["[0.0, 1.0, 0.0]", "[1.0, 1.0, 0.0]", "[0.0, 2.0, -1.0]"] {
        let sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\ndirection = {direction}\n"
        )));
        let f = &sim.scene.fountain;
        let (jet, along) = (f.jet(), sim.arrow_base() - f.nozzle());
        assert!(
            along.cross(jet).length() < 1e-5 && along.dot(jet) > 0.0,
            "{direction}: the base {along} off the nozzle, the jet {jet}"
        );
        let past_the_top = along.length() - f.emitter_depth;
        assert!(
            (past_the_top - 1.8 * f.cube).abs() < 1e-5,
            "{direction}: {past_the_top} m"
        );
    }
}

/// A plain click on the handle (8 px off it) or near a blowing arrow's head (6 px off) holds
/// the arrow but leaves the wind as it was, exactly; a drag from there moves the head by as
/// much as the pointer's point on the base's plane moved. Both with the framing camera and a
/// level one (its eye at the base's height plus 0.3 m, where a pixel spans metres of that
/// plane). Before, the press set the wind from where its ray met the plane: 0.3–9 m/s.
#[test]
fn a_click_on_the_arrow_leaves_the_wind_alone() {
    use crate::sims::particles::grab::{arrow_head, to_pixel};
    let size = [800, 450];
    for which in ["fountain\"", "jelly\"", "cloth\"\n[cloth]\nn = 8"] {
        let sim =
            ParticlesSim::with_scene(scene(&format!("kind = \"particles\"\nscene = \"{which}\n")));
        let base = sim.arrow_base();
        let framing = Camera::framing(&Aabb::new([-1.0, 0.0, -1.0], [2.0, 3.0, 2.0]));
        let level = Camera::looking_at(base + Vec3::new(0.0, 0.3, 6.0), base);
        for camera in [framing, level] {
            for (wind, off) in [
                (Vec3::ZERO, [8.0, 0.0]),
                (Vec3::new(0.0, 0.0, 3.0), [0.0, 6.0]),
            ] {
                let mut sim = ParticlesSim::with_scene(sim.scene.clone());
                sim.scene.world.wind = wind.into();
                sim.set_camera(camera);
                let (at_head, _) = to_pixel(&camera, arrow_head(base, wind), size).unwrap();
                let press = [at_head[0] + off[0], at_head[1] + off[1]];
                assert!(sim.pointer(press, size, true), "{which}: held");
                assert!(sim.grabber.arrow && sim.grabber.held.is_none());
                assert!(sim.pointer(press, size, true), "{which}: still held");
                let now = Vec3::from(sim.scene.world.wind);
                assert_eq!(now, wind, "{which}: a click set the wind {now}");
                assert!(!sim.pointer(press, size, false));
                assert_eq!(Vec3::from(sim.scene.world.wind), wind);
                // Dragged: the head moves as the pointer's point on the base's plane does.
                let on_plane = |pixel: [f32; 2]| {
                    let (origin, direction) = camera.ray(pixel, size);
                    origin + direction * ((base.y - origin.y) / direction.y)
                };
                let shift = Vec3::new(0.7, 0.0, 0.4);
                let (to, _) = to_pixel(&camera, on_plane(press) + shift, size).unwrap();
                assert!(sim.pointer(press, size, true));
                assert!(sim.pointer(to, size, true));
                let head = arrow_head(base, Vec3::from(sim.scene.world.wind));
                let expected = arrow_head(base, wind) + shift;
                assert!(
                    head.distance(expected) < 0.03,
                    "{which}: {head} for {expected}"
                );
                assert!(!sim.pointer(to, size, false));
            }
        }
    }
}

/// With no wind, a press 40 px off the handle holds no arrow and leaves the wind at zero,
/// in every scene; a node drag still works in the windless cloth and jelly.
#[test]
fn off_the_handle_no_arrow_and_nodes_still_drag() {
    use crate::sims::particles::grab::{pick, to_pixel};
    let size = [800, 600];
    for which in ["fountain\"", "jelly\"", "cloth\"\n[cloth]\nn = 8"] {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"{which}\n[world]\nwind = [0.0, 0.0, 0.0]\n"
        )));
        let camera = Camera::framing(&Aabb::new([-1.0, 0.0, -1.0], [2.0, 3.0, 2.0]));
        sim.set_camera(camera);
        let (at_base, _) = to_pixel(&camera, sim.arrow_base(), size).expect("in view");
        let off = [at_base[0], at_base[1] - 40.0];
        sim.pointer(off, size, true);
        assert!(!sim.grabber.arrow, "{which}: held 40 px off");
        sim.pointer([off[0] + 30.0, off[1]], size, true);
        assert_eq!(Vec3::from(sim.scene.world.wind), Vec3::ZERO, "{which}");
        sim.pointer([off[0] + 30.0, off[1]], size, false);
        if sim.scene.which == Which::Fountain {
            continue;
        }
        let b = body(&mut sim);
        let node = b.position.len() / 2;
        let target = b.position[node];
        let (pixel, _) = to_pixel(&camera, target, size).expect("in view");
        let picked = pick(&b.position, &camera, pixel, size).expect("a node");
        assert!(sim.pointer(pixel, size, true), "{which}: a node");
        assert_eq!(sim.grabber.held.map(|h| h.node), Some(picked));
        assert!(!sim.grabber.arrow);
        let before = body(&mut sim).position[picked];
        assert!(sim.pointer([pixel[0], pixel[1] - 60.0], size, true));
        let moved = body(&mut sim).position[picked];
        assert!(moved.y > before.y + 0.05, "{which}: {before} → {moved}");
        assert!(!sim.pointer([pixel[0], pixel[1] - 60.0], size, false));
        assert_eq!(Vec3::from(sim.scene.world.wind), Vec3::ZERO, "{which}");
    }
}

/// Where a cloth node and the handle fall on the same pixel, the nearer is grabbed: the node
/// seen in front of the handle, the handle seen in front of the node (before, the handle
/// always won: it was picked before any node, depth unseen).
#[test]
fn the_nearer_of_a_node_and_the_handle_is_grabbed() {
    use crate::sims::particles::grab::{pick, to_pixel};
    let size = [800, 450];
    let text = "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 8\n[world]\nwind = [0.0, 0.0, 0.0]\n";
    for node_in_front in [true, false] {
        let mut sim = ParticlesSim::with_scene(scene(text));
        let base = sim.arrow_base();
        let node = 8 * 2 + 3;
        let at = body(&mut sim).position[node];
        let away = (at - base).normalize();
        let camera = if node_in_front {
            Camera::looking_at(at + away * 2.0, base)
        } else {
            Camera::looking_at(base - away * 2.0, at)
        };
        sim.set_camera(camera);
        let (pixel, _) = to_pixel(&camera, base, size).expect("in view");
        let front = pick(&body(&mut sim).position, &camera, pixel, size)
            .expect("the node under the handle");
        assert!(sim.pointer(pixel, size, true));
        if node_in_front {
            assert_eq!(sim.grabber.held.map(|h| h.node), Some(front));
            assert!(!sim.grabber.arrow);
        } else {
            assert!(sim.grabber.arrow && sim.grabber.held.is_none());
        }
        assert!(!sim.pointer(pixel, size, false));
    }
}

/// The arrow stands over the body as it is, not where it started: over the middle of the
/// nodes' box, 0.8 m above the jelly's top once it has fallen and 0.6 m above the cloth's
/// once the wind has swung it, and a drag from the handle there starts a wind. Before, the
/// base stayed over the starting place: 2.4 m above the landed jelly, 0.8 m upwind of the
/// blown cloth's middle.
#[test]
fn the_arrow_follows_a_falling_jelly_and_a_swinging_cloth() {
    use crate::sims::particles::grab::{arrow_head, to_pixel};
    let size = [800, 450];
    for (which, wind, frames, above) in [
        ("cloth", [0.0, 0.0, 3.0], 120, 0.6),
        ("jelly", [0.0, 0.0, 0.0], 60, 0.8),
    ] {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"{which}\"\n[world]\nwind = {wind:?}\n"
        )));
        let [lo0, hi0] = body(&mut sim).bounds().expect("finite");
        for _ in 0..frames {
            sim.step().expect("a step");
        }
        // The box from the nodes' coordinates here, not from `Body::bounds` (which
        // `arrow_base` uses): every node is finite after these steps.
        let position = &body(&mut sim).position;
        assert!(position.iter().all(|p| p.is_finite()), "{which}");
        let extreme = |axis: usize, f: fn(f32, f32) -> f32, start: f32| {
            position.iter().map(|p| p[axis]).fold(start, f)
        };
        let (low, high) = (f32::INFINITY, f32::NEG_INFINITY);
        let middle = Vec3::new(
            0.5 * (extreme(0, f32::min, low) + extreme(0, f32::max, high)),
            0.0,
            0.5 * (extreme(2, f32::min, low) + extreme(2, f32::max, high)),
        );
        let top = extreme(1, f32::max, high);
        let middle0 = 0.5 * (lo0 + hi0);
        // The body did move: the jelly fell, the cloth swung downwind.
        let moved = if which == "jelly" {
            hi0.y - top
        } else {
            middle.z - middle0.z
        };
        assert!(moved > 0.5, "{which}: moved {moved} m");
        let base = sim.arrow_base();
        let aside = Vec3::new(base.x - middle.x, 0.0, base.z - middle.z).length();
        let over = base.y - top;
        assert!(
            aside < 1e-4 && (over - above).abs() < 1e-4,
            "{which}: the base {base}, {aside} m aside of the box's middle {middle}, {over} m \
             over its top"
        );
        // The handle (the jelly's) or the head (the cloth's) is grabbed where it now is.
        let camera = Camera::looking_at(base + Vec3::new(1.0, 1.5, 5.0), base);
        sim.set_camera(camera);
        let blowing = Vec3::from(wind);
        let (at, _) = to_pixel(&camera, arrow_head(base, blowing), size).expect("in view");
        assert!(sim.pointer(at, size, true), "{which}: held");
        assert!(sim.grabber.arrow && sim.grabber.held.is_none(), "{which}");
        let goal = arrow_head(base, blowing) + Vec3::new(0.8, 0.0, -0.4);
        let (pixel, _) = to_pixel(&camera, goal, size).expect("in view");
        assert!(sim.pointer(pixel, size, true));
        let head = arrow_head(base, Vec3::from(sim.scene.world.wind));
        assert!(head.distance(goal) < 0.02, "{which}: {head} for {goal}");
        assert!(!sim.pointer(pixel, size, false));
    }
}

/// While the arrow is held its drag plane stays at the base of the press, though the base
/// follows the falling jelly step by step: a pointer held still keeps the wind.
#[test]
fn a_held_arrow_keeps_its_plane_while_the_body_moves() {
    use crate::sims::particles::grab::to_pixel;
    let size = [800, 450];
    let mut sim = ParticlesSim::with_scene(scene(
        "kind = \"particles\"\nscene = \"jelly\"\n[world]\nwind = [2.0, 0.0, 0.0]\n",
    ));
    let base = sim.arrow_base();
    let camera = Camera::looking_at(base + Vec3::new(1.0, 1.5, 5.0), base);
    sim.set_camera(camera);
    let head = crate::sims::particles::grab::arrow_head(base, Vec3::new(2.0, 0.0, 0.0));
    let (at, _) = to_pixel(&camera, head, size).expect("in view");
    assert!(sim.pointer(at, size, true));
    let pixel = [at[0] + 30.0, at[1] + 10.0];
    assert!(sim.pointer(pixel, size, true));
    let wind = Vec3::from(sim.scene.world.wind);
    for _ in 0..30 {
        sim.step().expect("a step");
    }
    assert!(sim.arrow_base().y < base.y - 0.3, "the jelly fell");
    assert!(sim.pointer(pixel, size, true));
    assert_eq!(Vec3::from(sim.scene.world.wind), wind);
    assert!(!sim.pointer(pixel, size, false));
}

/// A drag under way when the scene is replaced (F1–F3, a restart; a shape edit rebuilds the
/// same way) grabs nothing of the new one: moved with the button still down over a node and
/// over the arrow's head, it holds neither and leaves the wind; the next press grabs. Before,
/// the grabber forgot the button too, so the first event after the change counted as a press
/// and picked whatever was under the pointer.
#[test]
fn a_drag_across_a_scene_change_grabs_nothing() {
    use crate::sims::particles::grab::{arrow_head, to_pixel};
    use winit::keyboard::KeyCode;
    let size = [800, 600];
    for (change, held_before) in [(KeyCode::F3, false), (KeyCode::Backspace, true)] {
        let mut sim = ParticlesSim::with_scene(scene(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 8\n[world]\nwind = [0.0, 0.0, 3.0]\n",
        ));
        let camera = Camera::framing(&Aabb::new([-1.0, 0.0, -1.0], [2.0, 3.0, 2.0]));
        sim.set_camera(camera);
        let node_pixel = |sim: &mut ParticlesSim| {
            let b = body(sim);
            let k = b.len() / 2;
            to_pixel(&camera, b.position[k], size).expect("in view").0
        };
        // The drag starts off everything (orbiting), or on a node (holding it).
        let start = if held_before {
            node_pixel(&mut sim)
        } else {
            [5.0, 5.0]
        };
        assert_eq!(sim.pointer(start, size, true), held_before, "{change:?}");
        assert_eq!(sim.grabber.held.is_some(), held_before, "{change:?}");
        if change == KeyCode::Backspace {
            sim.restart().expect("a restart");
        } else {
            assert!(sim.key(change));
        }
        sim.set_camera(camera);
        assert!(
            sim.grabber.held.is_none() && !sim.grabber.arrow,
            "{change:?}"
        );
        let wind = Vec3::from(sim.scene.world.wind);
        let on_node = node_pixel(&mut sim);
        let (on_head, _) =
            to_pixel(&camera, arrow_head(sim.arrow_base(), wind), size).expect("in view");
        for at in [on_node, on_head] {
            assert!(
                !sim.pointer(at, size, true),
                "{change:?}: grabbed at {at:?}"
            );
            assert!(
                sim.grabber.held.is_none() && !sim.grabber.arrow,
                "{change:?}"
            );
        }
        assert_eq!(Vec3::from(sim.scene.world.wind), wind, "{change:?}");
        assert!(!sim.pointer(on_head, size, false));
        // The next press grabs.
        assert!(
            sim.pointer(on_node, size, true),
            "{change:?}: the next press"
        );
        assert!(sim.grabber.held.is_some(), "{change:?}");
        assert!(!sim.pointer(on_node, size, false));
    }
}
