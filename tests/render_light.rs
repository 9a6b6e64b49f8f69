//! Headless renders (Mesa llvmpipe in CI) of the sunlight through the fluid: the shadow of a
//! fixed block of particles on the floor, where geometry says it falls and nowhere else.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::skybox::sun_direction;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::render::scene_mesh::floor_height;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings, Renderer};
use fluidlab::sims::pbf::scene::Scene;
use glam::{Vec3, Vec4};

mod gl_probe;

use gl_probe::{FixedParticles, BLOCK};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

/// `BLOCK`'s footprint (x, z) and height, m.
const BLOCK_MIN: [f32; 2] = [0.35, 0.35];
const BLOCK_MAX: [f32; 2] = [0.65, 0.65];
const BLOCK_HEIGHT: f32 = 0.3;

/// Whether the sunlight reaching floor point `p` passes through the block's box grown by
/// `margin` metres on every side (negative: shrunk).
fn under_block(p: Vec3, margin: f32) -> bool {
    let sun = sun_direction();
    (0..=100).any(|k| {
        let height = -margin + (BLOCK_HEIGHT + 2.0 * margin) * k as f32 / 100.0;
        let q = p + sun * ((height - p.y) / sun.y);
        q.x > BLOCK_MIN[0] - margin
            && q.x < BLOCK_MAX[0] + margin
            && q.z > BLOCK_MIN[1] - margin
            && q.z < BLOCK_MAX[1] + margin
    })
}

fn luminance(p: &[u8]) -> f64 {
    0.2126 * p[0] as f64 + 0.7152 * p[1] as f64 + 0.0722 * p[2] as f64
}

#[test]
fn the_fluid_shadows_the_floor_under_it_and_nowhere_else() {
    let scene = Scene::parse(BLOCK, "block", "shadow test").expect("valid scene");
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        Renderer::new(headless.gl(), &scene, PassClock::Finish).expect("the PBF renderer");
    let camera = Camera::framing(&scene.container);
    let settings = RenderSettings::default();
    let mut render = |particles: &mut FixedParticles, renderer: &mut Renderer| -> Image {
        headless
            .capture(|output| {
                renderer.update_particles(particles, &settings)?;
                renderer.draw(&camera, &settings, output)
            })
            .expect("render without GL errors")
    };
    let empty = render(&mut FixedParticles::empty(&scene), &mut renderer);
    let lit = render(&mut FixedParticles::of(&scene), &mut renderer);
    // Fluid pixels (and those FXAA may blend with them, up to 5 pixels away) are not floor.
    let depth = renderer.read_buffer(Buffer::Depth).expect("depth");
    let fluid = |x: i32, y: i32| {
        (-5..=5).any(|dy| {
            (-5..=5).any(|dx| {
                let (u, v) = (x + dx, HEIGHT as i32 - 1 - (y + dy));
                u >= 0
                    && v >= 0
                    && u < WIDTH as i32
                    && v < HEIGHT as i32
                    && depth[(v * WIDTH as i32 + u) as usize] > 0.0
            })
        })
    };
    let inverse = (camera.projection(WIDTH as f32 / HEIGHT as f32) * camera.view()).inverse();
    let floor = floor_height(&scene.container);
    let (mut shadowed, mut darkening, mut elsewhere) = (0, 0.0, 0);
    let mut largest_change = (0.0f64, 0, 0);
    for y in 0..HEIGHT as i32 {
        for x in 0..WIDTH as i32 {
            if fluid(x, y) {
                continue;
            }
            let ndc_x = (x as f32 + 0.5) / WIDTH as f32 * 2.0 - 1.0;
            let ndc_y = 1.0 - (y as f32 + 0.5) / HEIGHT as f32 * 2.0;
            let unproject = |z: f32| {
                let p = inverse * Vec4::new(ndc_x, ndc_y, z, 1.0);
                p.truncate() / p.w
            };
            let (near, far) = (unproject(-1.0), unproject(1.0));
            let direction = far - near;
            if direction.y >= 0.0 {
                continue; // sky
            }
            let hit = near + direction * ((floor - near.y) / direction.y);
            let change = luminance(&empty.get_pixel(x as u32, y as u32).0)
                - luminance(&lit.get_pixel(x as u32, y as u32).0);
            if under_block(hit, -0.03) {
                shadowed += 1;
                darkening += change;
            } else if !under_block(hit, 0.08) {
                elsewhere += 1;
                if change.abs() > largest_change.0 {
                    largest_change = (change.abs(), x, y);
                }
            }
        }
    }
    assert!(shadowed > 200, "only {shadowed} floor pixels in the shadow");
    assert!(
        elsewhere > 20_000,
        "only {elsewhere} floor pixels outside it"
    );
    let mean = darkening / shadowed as f64;
    assert!(
        mean > 8.0,
        "the floor in the shadow is only {mean:.1} levels darker"
    );
    assert!(
        largest_change.0 <= 1.0,
        "the floor outside the shadow changed by {largest_change:?} (levels, x, y)"
    );
}
