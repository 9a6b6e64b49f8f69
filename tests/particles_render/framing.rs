//! The kind's default cameras (`fluidlab render`'s and the viewer's) show every preset's sky,
//! sun and lens flare over its bodies: the kind frames its box from lower than the other kinds'
//! 0.55 rad, which saw only the ground (issue 13's audit).

use super::*;
use fluidlab::gfx::camera::Orientation;

const PRESETS: [&str; 4] = ["fountain", "cloth", "cloth-sphere", "jelly"];

fn preset(name: &str) -> Fixture {
    let source = Source::load(name).expect("a preset");
    let headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut sim = ParticlesSim::open(&source, &OpenOptions::default()).expect("open");
    sim.attach_gl(headless.gl(), PassClock::Finish)
        .expect("the particles renderer");
    Fixture { sim, headless }
}

/// The points that must be in the picture: a body's nodes, or the fountain's cube and the
/// emitter on its top.
fn bodies(fixture: &mut Fixture) -> Vec<Vec3> {
    match &fixture.sim.state {
        State::Body(body) => body.position.clone(),
        State::Fountain(_) => {
            let half = 0.5 * fixture.sim.scene.fountain.cube;
            let mut points = vec![Vec3::new(0.0, 2.0 * half, 0.0)];
            for corner in 0..8 {
                let pick = |bit: usize, low: f32, high: f32| {
                    if corner >> bit & 1 == 0 {
                        low
                    } else {
                        high
                    }
                };
                points.push(Vec3::new(
                    pick(0, -half, half),
                    pick(1, 0.0, 2.0 * half),
                    pick(2, -half, half),
                ));
            }
            points
        }
    }
}

/// NDC of `p` seen by `camera` in an output of `aspect`.
fn ndc(camera: &Camera, aspect: f32, p: Vec3) -> Vec2 {
    let q = (camera.projection(aspect) * camera.view()).project_point3(p);
    Vec2::new(q.x, q.y)
}

#[test]
fn every_preset_shows_its_sun_and_flare_over_its_bodies_by_default() {
    let (window_width, window_height) = fluidlab::viewer::panel::WINDOW_SIZE;
    let panel_edge = 2.0 * fluidlab::viewer::panel::PANEL_RIGHT / window_width - 1.0;
    for name in PRESETS {
        let mut fixture = preset(name);
        assert_ne!(fixture.sim.orientation(), Orientation::FRONT, "{name}");
        let sun = fixture.sun();
        let rendered = Camera::oriented_framing(&fixture.sim.bounds(), fixture.sim.orientation());
        let viewed = fluidlab::viewer::state::framing(&fixture.sim);
        // `fluidlab render`'s camera in its 16:9 picture, the viewer's beside its panel.
        for (camera, aspect, left) in [
            (rendered, 16.0 / 9.0, -1.0),
            (viewed, window_width / window_height, panel_edge),
        ] {
            let at = render::sun_on_screen(camera.view(), camera.projection(aspect), sun)
                .unwrap_or_else(|| panic!("{name}: the sun behind the camera or far off"));
            assert!(
                at.x > left + 0.05 && at.x < 0.9 && at.y.abs() < 0.9,
                "{name}: the sun at {at}, the picture right of {left}"
            );
            for p in bodies(&mut fixture) {
                let q = ndc(&camera, aspect, p);
                assert!(
                    q.x > left && q.x < 1.0 && q.y.abs() < 1.0,
                    "{name}: {p} out of the picture at {q}"
                );
            }
        }
        // The sun is drawn where it projects, not hidden by the scene, and the flare pass runs.
        let at = render::sun_on_screen(rendered.view(), rendered.projection(16.0 / 9.0), sun)
            .expect("the sun");
        let (on, off) = fixture.with_and_without_flare(&rendered);
        let times = fixture.sim.pass_times();
        fixture.sim.render.flare = true;
        let _ = fixture.render(&rendered);
        let flare_times = fixture.sim.pass_times();
        assert!(
            !times
                .iter()
                .any(|(pass, seconds)| *pass == "flare" && seconds.is_some()),
            "{name}: {times:?} with the flare off"
        );
        assert!(
            flare_times
                .iter()
                .any(|(pass, seconds)| *pass == "flare" && seconds.is_some()),
            "{name}: no flare pass in {flare_times:?}"
        );
        let pixel = to_pixel(at);
        let sun_pixel = off.get_pixel(pixel.x as u32, pixel.y as u32);
        assert!(
            sun_pixel.0[..3].iter().all(|&c| c > 230),
            "{name}: the sun's pixel {sun_pixel:?} at {pixel}"
        );
        let changed: usize = on
            .pixels()
            .zip(off.pixels())
            .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > 8))
            .count();
        eprintln!("{name}: the sun at {at}, the flare changed {changed} pixels");
        assert!(
            changed > (WIDTH * HEIGHT / 200) as usize,
            "{name}: the flare changed {changed} pixels"
        );
    }
}
