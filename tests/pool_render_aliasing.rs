//! Aliasing on the pool seen at grazing angles, through the headless EGL context (Mesa
//! llvmpipe in CI): the picture at a low resolution against the same picture rendered at four
//! times its resolution and box-downsampled (16 samples a pixel: what the pixel should show).
//! Their difference over the water is the aliasing energy: thin lines (the tiles' grout seen
//! through the water, the caustics on the floor) and glints (the fine-detail ripples) that a
//! pixel samples at one point instead of averaging what it covers, so they shimmer as the water
//! or the camera moves.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer};
use glam::Vec3;

const WIDTH: u32 = 160;
const HEIGHT: u32 = 90;
/// The reference's samples per pixel along each axis.
const SUPER: u32 = 4;
const NODES: usize = 256;
const SIZE: f32 = 2.0;

/// Eye 8 cm above the water in a corner of the pool, looking across it 20° down: the far
/// floor is seen through the water at a few degrees.
fn grazing() -> Camera {
    Camera {
        target: Vec3::new(0.8, -0.6, 0.2),
        yaw: 30f32.to_radians(),
        pitch: 20f32.to_radians(),
        distance: 2.0,
    }
}

/// Calm water, or a few waves 15 to 31 cm long, 4 mm high (their caustics are lines on the
/// floor).
fn texels(waves: bool) -> Vec<[f32; 4]> {
    let h = SIZE / (NODES - 1) as f32;
    let mut texels = Vec::with_capacity(NODES * NODES);
    for j in 0..NODES {
        for i in 0..NODES {
            let (x, z) = (i as f32 * h, j as f32 * h);
            let mut u = 0.0;
            if waves {
                for (k, (length, angle)) in [(0.15f32, 0.3f32), (0.22, 1.9), (0.31, 4.0)]
                    .into_iter()
                    .enumerate()
                {
                    let phase = (x * angle.cos() + z * angle.sin()) / length;
                    u += 0.004 * (std::f32::consts::TAU * phase + k as f32).sin();
                }
            }
            texels.push([0.0, u, 0.0, 0.0]);
        }
    }
    texels
}

fn render(width: u32, height: u32, waves: bool, detail: bool) -> Image {
    let mut headless = Headless::new(width, height).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        PoolRenderer::new(headless.gl(), PassClock::Finish, NODES).expect("the pool renderer");
    renderer.upload(&texels(waves));
    let scene = DrawScene {
        nodes: NODES,
        size: SIZE,
        depth: 1.0,
        light: Vec3::new(2.0, 2.0, -1.0).normalize().to_array(),
        detail,
        view: 0,
        time: 0.3,
        open: false,
    };
    let image = headless
        .capture(|output| renderer.draw(&grazing(), output, &scene))
        .expect("render without GL errors");
    renderer.delete();
    image
}

/// The mean over the pixels that see the water (all four corners' rays meet the rest level
/// inside the pool, 2 cm in from its walls) of |low − reference| summed over the colour
/// channels, the reference the 4× picture averaged over each pixel's 16 samples.
fn aliasing(waves: bool, detail: bool) -> f64 {
    let low = render(WIDTH, HEIGHT, waves, detail);
    let high = render(SUPER * WIDTH, SUPER * HEIGHT, waves, detail);
    let camera = grazing();
    let eye = camera.eye();
    let on_water = |x: f32, y: f32| {
        let ray = camera.ray([x, y], [WIDTH, HEIGHT]).1;
        if ray.y >= 0.0 {
            return false;
        }
        let hit = eye + ray * (-eye.y / ray.y);
        let inside = 0.02..SIZE - 0.02;
        inside.contains(&hit.x) && inside.contains(&hit.z)
    };
    let (mut sum, mut pixels) = (0.0, 0usize);
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let (fx, fy) = (x as f32, y as f32);
            if ![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
                .iter()
                .all(|&(dx, dy)| on_water(fx + dx, fy + dy))
            {
                continue;
            }
            let mut reference = [0.0f64; 3];
            for sy in 0..SUPER {
                for sx in 0..SUPER {
                    let p = high.get_pixel(SUPER * x + sx, SUPER * y + sy);
                    for c in 0..3 {
                        reference[c] += f64::from(p[c]);
                    }
                }
            }
            let p = low.get_pixel(x, y);
            sum += (0..3)
                .map(|c| (f64::from(p[c]) - reference[c] / f64::from(SUPER * SUPER)).abs())
                .sum::<f64>();
            pixels += 1;
        }
    }
    assert!(
        pixels > (WIDTH * HEIGHT / 3) as usize,
        "only {pixels} pixels see the water"
    );
    sum / pixels as f64
}

/// Calm water: the floor's grout lines, seen through the water, and the walls' mirrored in it,
/// averaged over each pixel's footprint where they reach (measured 4.6 per pixel; 11.7 when
/// the grout was a step function sampled at the pixel's centre).
#[test]
fn grout_seen_at_grazing_angles_is_filtered() {
    let a = aliasing(false, false);
    println!("calm water: aliasing {a:.2} per pixel");
    assert!(a < 7.0, "aliasing {a:.2} per pixel");
}

/// Waves 15 to 31 cm long: besides the grout, caustic lines on the floor (the caustics texture
/// mipmapped and read over the footprint of the refracted ray's end) and the sun's glints (the
/// highlight widened by how much the reflected ray turns across the pixel) (measured 21.2;
/// 27.1 before); with the fine detail on 25.9 (34.5 before).
#[test]
fn caustics_and_glints_at_grazing_angles_are_filtered() {
    let waves = aliasing(true, false);
    let detail = aliasing(true, true);
    println!("waves: aliasing {waves:.2} per pixel, with the fine detail {detail:.2}");
    assert!(waves < 24.0, "waves: aliasing {waves:.2} per pixel");
    assert!(
        detail < 29.5,
        "with the fine detail: aliasing {detail:.2} per pixel"
    );
}
