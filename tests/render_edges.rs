//! Headless renders (Mesa llvmpipe in CI) of the container's edges: a line drawn once, 1 px
//! wide, came out dashed after FXAA (some columns dark, some nearly blank); the `edges` pass's
//! supersampled copies keep its ink even along it.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::render::{RenderSettings, Renderer};
use fluidlab::sims::pbf::scene::Scene;
use glam::{Vec3, Vec4};

mod gl_probe;

use gl_probe::{FixedParticles, BLOCK};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 360;

fn luminance(p: &[u8]) -> f64 {
    0.2126 * p[0] as f64 + 0.7152 * p[1] as f64 + 0.0722 * p[2] as f64
}

/// The spread of the ink along the container's top back edge: per image column along it, the
/// darkening summed over the 7 pixels across the line (against the brightest of them), and
/// the coefficient of variation of that over the columns.
#[test]
fn the_containers_edges_are_even_lines() {
    let scene = Scene::parse(BLOCK, "block", "edges test").expect("valid scene");
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        Renderer::new(headless.gl(), &scene, PassClock::Finish).expect("the PBF renderer");
    let camera = Camera::framing(&scene.container);
    let settings = RenderSettings::default();
    let image = headless
        .capture(|output| {
            renderer.update_particles(&mut FixedParticles::empty(&scene), &settings)?;
            renderer.draw(&camera, &settings, output)
        })
        .expect("render without GL errors");
    let clip = camera.projection(WIDTH as f32 / HEIGHT as f32) * camera.view();
    let pixel = |p: Vec3| {
        let c = clip * Vec4::from((p, 1.0));
        let ndc = c.truncate() / c.w;
        (
            (ndc.x * 0.5 + 0.5) * WIDTH as f32,
            (0.5 - ndc.y * 0.5) * HEIGHT as f32,
        )
    };
    let (min, max) = (scene.container.min, scene.container.max);
    let mut inks = Vec::new();
    for (a, b) in [
        (
            Vec3::new(min.x, max.y, min.z),
            Vec3::new(max.x, max.y, min.z),
        ),
        (
            Vec3::new(min.x, max.y, max.z),
            Vec3::new(max.x, max.y, max.z),
        ),
    ] {
        let (a, b) = (pixel(a), pixel(b));
        assert!((b.0 - a.0).abs() > 100.0, "the edge spans {a:?} to {b:?}");
        let (left, right) = if a.0 < b.0 { (a, b) } else { (b, a) };
        // Leave the corners' 10 px out.
        for x in (left.0 as i32 + 10)..(right.0 as i32 - 10) {
            let t = (x as f32 + 0.5 - left.0) / (right.0 - left.0);
            let y = (left.1 + t * (right.1 - left.1)) as i32;
            let column: Vec<f64> = (y - 3..=y + 3)
                .map(|row| luminance(&image.get_pixel(x as u32, row as u32).0))
                .collect();
            let background = column.iter().cloned().fold(f64::MIN, f64::max);
            inks.push(column.iter().map(|l| background - l).sum::<f64>());
        }
    }
    let n = inks.len() as f64;
    let mean = inks.iter().sum::<f64>() / n;
    let spread = (inks.iter().map(|i| (i - mean).powi(2)).sum::<f64>() / n).sqrt();
    let variation = spread / mean;
    eprintln!(
        "{} columns, ink {mean:.1} levels, spread {spread:.1}: variation {variation:.2}",
        inks.len()
    );
    // Measured: 0.16 with the four copies, 0.23 with the line drawn once (as before issue
    // 14's audit; the floor's checker behind the line adds to both).
    assert!(
        variation < EDGE_VARIATION_BOUND,
        "the edge's ink varies by {variation:.2} of its mean along it"
    );
}

/// The largest coefficient of variation of the edge's ink along it.
const EDGE_VARIATION_BOUND: f64 = 0.2;
