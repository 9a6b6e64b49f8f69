//! The pool's fine-detail ripples (the original's bump mapping) through the headless EGL
//! context (Mesa llvmpipe in CI): on an open sea they go on past the simulated tile, so its
//! outline does not show, and far away, where a pixel covers more than half a ripple's
//! wavelength, they fade out instead of aliasing into speckles.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer};
use glam::Vec3;

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;
const NODES: usize = 64;
const SIZE: f32 = 2.0;

/// Calm water on an open sea of a `size` m tile over a floor `depth` m down, drawn by the
/// renderer with or without the fine detail.
fn draw(camera: &Camera, size: f32, depth: f32, detail: bool) -> Image {
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        PoolRenderer::new(headless.gl(), PassClock::Finish, NODES).expect("the pool renderer");
    renderer.upload(&vec![[0.0; 4]; NODES * NODES]);
    let scene = DrawScene {
        nodes: NODES,
        size,
        depth,
        light: Vec3::new(2.0, 2.0, -1.0).normalize().to_array(),
        detail,
        view: 0,
        time: 0.3,
        open: true,
    };
    let image = headless
        .capture(|output| renderer.draw(camera, output, &scene))
        .expect("render without GL errors");
    renderer.delete();
    image
}

/// Calm water drawn by the renderer with and without the fine detail: the mean over a 9 × 9
/// pixel patch around each of `points` of |with − without| (summed over the colour channels).
fn detail_difference(camera: &Camera, points: &[Vec3]) -> Vec<f64> {
    let (with, without) = (
        draw(camera, SIZE, 1.0, true),
        draw(camera, SIZE, 1.0, false),
    );
    let clip = camera.projection(WIDTH as f32 / HEIGHT as f32) * camera.view();
    points
        .iter()
        .map(|&point| {
            let ndc = clip.project_point3(point);
            let px = ((ndc.x * 0.5 + 0.5) * WIDTH as f32) as u32;
            let py = ((0.5 - ndc.y * 0.5) * HEIGHT as f32) as u32;
            assert!(
                (4..WIDTH - 4).contains(&px) && (4..HEIGHT - 4).contains(&py),
                "{point} projects to ({px}, {py}), off the {WIDTH}×{HEIGHT} picture's interior"
            );
            let mut sum = 0.0;
            for y in py - 4..=py + 4 {
                for x in px - 4..=px + 4 {
                    let (a, b) = (with.get_pixel(x, y), without.get_pixel(x, y));
                    sum += (0..3)
                        .map(|c| (f64::from(a[c]) - f64::from(b[c])).abs())
                        .sum::<f64>();
                }
            }
            sum / 81.0
        })
        .collect()
}

/// Close to the tile's edge (x = 2 m) the ripples change the picture just past it, on the calm
/// sea the `pool` pass draws, as well as just inside, on the simulated surface (measured 24.8
/// and 13.2; before the tile and the sea shared `water_at` 24.8 and 13.8, once written the other
/// way round; 0 past it when only the `surface` pass drew them). The two 9 × 9 patches see the
/// ripples at different phases and angles: their ratio is no seam measure
/// (`the_sea_past_the_tile_is_the_tiles_water` is), so only a floor is asserted.
#[test]
fn the_ripples_go_on_past_the_open_seas_tile() {
    let camera = Camera {
        target: Vec3::new(SIZE, 0.0, 0.5 * SIZE),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let d = detail_difference(
        &camera,
        &[
            Vec3::new(SIZE - 0.08, 0.0, 0.5 * SIZE),
            Vec3::new(SIZE + 0.08, 0.0, 0.5 * SIZE),
        ],
    );
    println!("detail's change: inside {:.2}, outside {:.2}", d[0], d[1]);
    assert!(d[0] > 5.0, "the ripples show on the tile: {}", d[0]);
    assert!(
        d[1] > 0.5 * d[0],
        "past the tile {} against {} on it",
        d[1],
        d[0]
    );
}

/// Far away on the sea past the tile (8 m, seen 0.6° below the horizon: a pixel covers metres
/// of water, more than the 2–7 cm ripples' half-wavelength) the ripples fade out: the picture changes there much less
/// than close by, where they are resolved (measured 0.00 against 12.9; 6.6 without the fade, before the
/// sun's glints were filtered).
#[test]
fn far_ripples_fade_instead_of_speckling() {
    let close = Camera {
        target: Vec3::new(0.5 * SIZE, 0.0, 0.5 * SIZE),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let near = detail_difference(&close, &[close.target])[0];
    let low = Camera {
        pitch: 5f32.to_radians(),
        distance: 1.0,
        ..close
    };
    let forward = (low.target - low.eye()).with_y(0.0).normalize();
    let far = detail_difference(&low, &[low.target + 7.0 * forward])[0];
    println!("detail's change: near {near:.2}, far {far:.2}");
    assert!(near > 5.0, "the ripples show close by: {near}");
    assert!(far < 0.1 * near, "far {far} against {near} close by");
}

/// The calm sea past an open sea's tile (the `pool` pass) is the same water as the tile (the
/// `surface` pass: both shade it with common.glsl's `water_at` and `water_from_above`): the
/// strip 2.02–2.18 m, past a 2 m tile, against the same strip on a 2.2 m tile, with the fine
/// detail and its glints, over a floor too deep to show (whose tiles would follow the pool's
/// size). Measured 1.52 per pixel (the horizon fog's distance follows the pool's size too);
/// 22.3 before the tile and the sea shared `water_at` (the tile drawn without the sea's fog).
#[test]
fn the_sea_past_the_tile_is_the_tiles_water() {
    let camera = Camera {
        target: Vec3::new(2.1, 0.0, 1.0),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let (sea, tile) = (
        draw(&camera, SIZE, 50.0, true),
        draw(&camera, 1.1 * SIZE, 50.0, true),
    );
    let eye = camera.eye();
    let (mut sum, mut pixels) = (0.0, 0usize);
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let ray = camera
                .ray([x as f32 + 0.5, y as f32 + 0.5], [WIDTH, HEIGHT])
                .1;
            let hit = eye + ray * (-eye.y / ray.y.min(-1e-6));
            if !(2.02..2.18).contains(&hit.x) || !(0.05..1.95).contains(&hit.z) {
                continue;
            }
            let (a, b) = (sea.get_pixel(x, y), tile.get_pixel(x, y));
            sum += (0..3)
                .map(|c| (f64::from(a[c]) - f64::from(b[c])).abs())
                .sum::<f64>();
            pixels += 1;
        }
    }
    assert!(pixels > 2000, "only {pixels} pixels see the strip");
    let difference = sum / pixels as f64;
    println!("the sea against the tile: {difference:.2} per pixel over {pixels} pixels");
    assert!(difference < 4.0, "{difference:.2} per pixel");
}
