//! A measurement, not a test: where the far taps start on a grid drawn with a strided mesh
//! (over 513 nodes a side), a pixel taking one tap is shaded with the mesh's interpolated
//! normal and position, one taking 2–4 with the nodes' own (bilinear, every node). Does the
//! switch leave a seam? The same picture is drawn with and without the taps: pixels equal in
//! both took one tap. Across each boundary between a one-tap pixel and a tapped one (along a
//! column), |with − without| on the tapped side is the step the switch adds; it is printed
//! beside the same 3 rows deeper in the tapped region and the no-taps picture's row-to-row
//! variation there (brightness: channels summed, 0–765). docs/pool.md "Grids over 513 nodes".
//!
//! `cargo test --release --test pool_render_strided -- --ignored --nocapture` draws waves
//! 15–31 cm long at 513² (no stride) and 1025² (stride 2); with `FLUIDLAB_POOL_HEIGHTS=DIR`, a
//! `fluidlab simulate ... --format npy` export's `frame_00045_height.npy` from DIR instead (the
//! grid's size from the file).
#[path = "support/pool_waves.rs"]
mod pool_waves;

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer};
use glam::Vec3;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 540;
const SIZE: f32 = 2.0;

fn camera(yaw: f32, pitch: f32, distance: f32, target: [f32; 3]) -> Camera {
    Camera {
        target: Vec3::from(target),
        yaw: yaw.to_radians(),
        pitch: pitch.to_radians(),
        distance,
    }
}

/// A simulate export's heights (`.npy`, little-endian f32, N × N) and N.
fn exported(dir: &str) -> (usize, Vec<[f32; 4]>) {
    let bytes = std::fs::read(format!("{dir}/frame_00045_height.npy")).expect("the export");
    let data = bytes
        .iter()
        .position(|&b| b == b'\n')
        .expect("the npy header")
        + 1;
    let texels: Vec<[f32; 4]> = bytes[data..]
        .chunks(4)
        .map(|c| [0.0, f32::from_le_bytes([c[0], c[1], c[2], c[3]]), 0.0, 0.0])
        .collect();
    ((texels.len() as f64).sqrt() as usize, texels)
}

fn render(camera: &Camera, nodes: usize, texels: &[[f32; 4]], far_taps: bool) -> Image {
    let mut headless = Headless::new(WIDTH, HEIGHT).expect("headless OpenGL (EGL) context");
    let mut renderer =
        PoolRenderer::new(headless.gl(), PassClock::Finish, nodes).expect("the pool renderer");
    renderer.upload(texels);
    let scene = DrawScene {
        nodes,
        size: SIZE,
        depth: 1.0,
        light: Vec3::new(2.0, 2.0, -1.0).normalize().to_array(),
        detail: false,
        far_taps,
        view: 0,
        time: 0.3,
        open: false,
    };
    let image = headless
        .capture(|output| renderer.draw(camera, output, &scene))
        .expect("render without GL errors");
    renderer.delete();
    image
}

fn brightness(image: &Image, x: u32, y: u32) -> f64 {
    let p = image.get_pixel(x, y);
    (0..3).map(|c| f64::from(p[c])).sum()
}

fn measure(name: &str, camera: &Camera, nodes: usize, texels: &[[f32; 4]]) {
    let taps = render(camera, nodes, texels, true);
    let once = render(camera, nodes, texels, false);
    let eye = camera.eye();
    // The pixel's centre meets the rest level 5 cm or more inside the walls.
    let water = |x: u32, y: u32| {
        let ray = camera.ray([x as f32, y as f32], [WIDTH, HEIGHT]).1;
        let hit = eye + ray * (-eye.y / ray.y);
        let inside = 0.05..SIZE - 0.05;
        ray.y < 0.0 && inside.contains(&hit.x) && inside.contains(&hit.z)
    };
    let tapped = |x: u32, y: u32| taps.get_pixel(x, y) != once.get_pixel(x, y);
    let step = |x: u32, y: u32| (brightness(&taps, x, y) - brightness(&once, x, y)).abs();
    let (mut pixels, mut tapped_pixels) = (0usize, 0usize);
    let (mut edge, mut deeper, mut variation, mut boundaries) = (0.0, 0.0, 0.0, 0usize);
    for x in 0..WIDTH {
        for y in 0..HEIGHT {
            if water(x, y) {
                pixels += 1;
                tapped_pixels += usize::from(tapped(x, y));
            }
            if y < 4 || y + 6 > HEIGHT || !(y - 4..y + 6).all(|r| water(x, r)) {
                continue;
            }
            let (above, below) = (tapped(x, y), tapped(x, y + 1));
            if above == below {
                continue;
            }
            let (side, inner) = if below { (y + 1, y + 4) } else { (y, y - 3) };
            edge += step(x, side);
            deeper += step(x, inner);
            variation += [y - 2, y - 1, y + 1, y + 2]
                .iter()
                .map(|&r| (brightness(&once, x, r) - brightness(&once, x, r + 1)).abs())
                .sum::<f64>()
                / 4.0;
            boundaries += 1;
        }
    }
    let n = boundaries.max(1) as f64;
    println!(
        "{name}, {nodes}²: {tapped_pixels} of {pixels} water pixels tapped; {boundaries} \
         boundaries: the step at the switch {:.2}, 3 rows in {:.2}; row-to-row variation {:.2}",
        edge / n,
        deeper / n,
        variation / n
    );
}

#[test]
#[ignore = "a measurement: prints the step where the far taps start on a strided mesh"]
fn far_taps_seam_on_a_strided_mesh() {
    let cameras = [
        ("docs camera", camera(30.0, 38.0, 2.7, [1.0, -0.35, 1.0])),
        ("grazing", camera(30.0, 20.0, 2.0, [0.8, -0.6, 0.2])),
    ];
    let grids: Vec<(usize, Vec<[f32; 4]>)> = match std::env::var("FLUIDLAB_POOL_HEIGHTS") {
        Ok(dir) => vec![exported(&dir)],
        Err(_) => [513, 1025].map(|n| (n, pool_waves::waves(n, SIZE))).into(),
    };
    for (name, camera) in &cameras {
        for (nodes, texels) in &grids {
            measure(name, camera, *nodes, texels);
        }
    }
}
