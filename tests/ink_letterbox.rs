//! The ink picture beside the viewer's panels (headless EGL, Mesa llvmpipe in CI): drawn into
//! an output whose left and top edges are covered, the square picture is letterboxed in the
//! rest, and the pointer finds it where it was drawn.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::gfx::Output;
use fluidlab::scene::Source;
use fluidlab::sims::{self, OpenOptions};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 180;
/// The covered band: 100 pixels at the left, 20 at the top. The free part is 220 × 160, so
/// the square picture is 160 pixels across, from x = 130 to 290 and y = 20 to 180 (full
/// height, as before, it spanned x = 70 to 250).
const COVERED: [u32; 2] = [100, 20];

/// The viewer's clear colour around a flat picture (0.08, 0.08, 0.09).
const CLEAR: [u8; 3] = [20, 20, 23];

#[test]
fn the_picture_is_letterboxed_beside_the_panels_and_the_pointer_finds_it_there() {
    let source = Source::parse(
        "kind = \"ink\"\n[grid]\ncells = [32, 32]\n",
        "square",
        "test.toml",
    )
    .expect("scene");
    let mut sim = sims::open(&source, &OpenOptions::default()).expect("the ink");
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    sim.attach_gl(headless.gl(), PassClock::Finish)
        .expect("attach");
    let camera = Camera::framing(&sim.bounds());
    let image = headless
        .capture(|output| {
            sim.draw(
                &camera,
                Output {
                    covered: COVERED,
                    ..output
                },
            )
        })
        .expect("draws");
    sim.release_gl();
    let background = |x: u32, y: u32| {
        let p = image.get_pixel(x, y);
        (0..3).all(|c| p[c].abs_diff(CLEAR[c]) <= 2)
    };
    for (x, y) in [(80, 90), (120, 90), (300, 90), (200, 10)] {
        assert!(background(x, y), "({x}, {y}) is not the background");
    }
    for (x, y) in [(135, 90), (285, 90), (210, 25), (210, 175)] {
        assert!(!background(x, y), "({x}, {y}) is not the picture");
    }
    let size = [WIDTH, HEIGHT];
    assert!(!sim.pointer([80.0, 90.0], size, true), "under the panel");
    sim.pointer([80.0, 90.0], size, false);
    assert!(
        !sim.pointer([120.0, 90.0], size, true),
        "left of the picture"
    );
    sim.pointer([120.0, 90.0], size, false);
    assert!(sim.pointer([210.0, 100.0], size, true), "on the picture");
}
