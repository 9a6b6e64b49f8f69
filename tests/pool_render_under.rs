//! The pool seen from under water at grazing angles, through the headless EGL context (Mesa
//! llvmpipe in CI): past the critical angle the surface mirrors the walls, and the mirrored
//! wall is lit as the wall itself is — under water, through the caustics — in every pixel,
//! not as the deck in some (a point traced to a wall lies a rounding error either side of it).

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer};
use glam::Vec3;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;
const NODES: usize = 128;
const SIZE: f32 = 2.0;

/// Calm water seen from `camera`.
fn render(camera: &Camera) -> Image {
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        PoolRenderer::new(headless.gl(), PassClock::Finish, NODES).expect("the pool renderer");
    renderer.upload(&vec![[0.0; 4]; NODES * NODES]);
    let scene = DrawScene {
        nodes: NODES,
        size: SIZE,
        depth: 1.0,
        light: Vec3::new(2.0, 2.0, -1.0).normalize().to_array(),
        detail: false,
        far_taps: true,
        view: 0,
        time: 0.0,
        open: false,
    };
    let image = headless
        .capture(|output| renderer.draw(camera, output, &scene))
        .expect("render without GL errors");
    renderer.delete();
    image
}

/// The world-space direction of the ray through pixel (x, y from the top).
fn pixel_ray(camera: &Camera, x: u32, y: u32) -> Vec3 {
    camera
        .ray([x as f32 + 0.5, y as f32 + 0.5], [WIDTH, HEIGHT])
        .1
}

/// Over the pixels that see the surface from below (at least a pixel from the picture's edge
/// and from the surface's outline), those brighter than each of their eight neighbours by more
/// than 30 (the colour channels summed; a tile's corner between the grout lines has tile around
/// it too): (speckles, pixels).
fn bright_speckles(image: &Image, camera: &Camera) -> (usize, usize) {
    let eye = camera.eye();
    let sees_surface = |x: u32, y: u32| {
        let ray = pixel_ray(camera, x, y);
        if ray.y <= 0.0 {
            return false;
        }
        let hit = eye + ray * (-eye.y / ray.y);
        hit.x > 0.0 && hit.x < SIZE && hit.z > 0.0 && hit.z < SIZE
    };
    let brightness = |x: u32, y: u32| -> i32 {
        let p = image.get_pixel(x, y);
        (0..3).map(|c| i32::from(p[c])).sum()
    };
    let (mut speckles, mut pixels) = (0, 0);
    for y in 1..HEIGHT - 1 {
        for x in 1..WIDTH - 1 {
            let around = [
                (-1i32, -1i32),
                (0, -1),
                (1, -1),
                (-1, 0),
                (0, 0),
                (1, 0),
                (-1, 1),
                (0, 1),
                (1, 1),
            ]
            .map(|(dx, dy)| ((x as i32 + dx) as u32, (y as i32 + dy) as u32));
            if !around.iter().all(|&(x, y)| sees_surface(x, y)) {
                continue;
            }
            pixels += 1;
            let brightest = around
                .iter()
                .filter(|&&(ax, ay)| (ax, ay) != (x, y))
                .map(|&(ax, ay)| brightness(ax, ay))
                .max()
                .unwrap();
            if brightness(x, y) > brightest + 30 {
                speckles += 1;
            }
        }
    }
    (speckles, pixels)
}

/// Under water near the wall at x = 2 m, looking up towards the wall at x = 0 (which faces
/// the sun) 10° above the horizontal: the calm surface above is seen 55° to 80° from the
/// vertical, past Snell's window, and mirrors that wall. Lit through the caustics in every
/// pixel it has no bright speckles (measured 0 of 37,444 pixels; 220 when the rays' ends a
/// rounding error outside the pool were lit as the deck, by the sun directly).
#[test]
fn the_mirrored_wall_does_not_speckle() {
    let eye = Vec3::new(1.7, -0.3, 1.0);
    let (yaw, pitch, distance) = (90f32.to_radians(), -10f32.to_radians(), 1.0);
    let direction = Vec3::new(
        pitch.cos() * yaw.sin(),
        pitch.sin(),
        pitch.cos() * yaw.cos(),
    );
    let camera = Camera {
        target: eye - direction * distance,
        yaw,
        pitch,
        distance,
    };
    let image = render(&camera);
    let (speckles, pixels) = bright_speckles(&image, &camera);
    println!("bright speckles: {speckles} of {pixels} pixels seeing the surface");
    assert!(
        pixels > 10_000,
        "the surface fills the picture's top: {pixels} pixels"
    );
    assert!(
        speckles * 1000 < pixels,
        "{speckles} of {pixels} pixels are bright speckles"
    );
}
