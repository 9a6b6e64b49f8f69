//! A headless render (Mesa llvmpipe in CI) of the dam break 0.66 s in, where the fluid column
//! leans on the near-left glass: the fluid's face against the glass, seen nearly edge-on, shows
//! no light flecks since it is shaded as water behind glass (the wall's normal, the glass–water
//! interface's reflectance; docs/render-notes.md, "The light flecks at the glass").

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::backend;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings, Renderer};
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::Backend;
use glam::{Vec3, Vec4};

/// The dam break at `particles` after 40 steps (0.66 s, `fluidlab render`'s frame 1 at
/// `--steps-per-frame 40`), rendered at `width` × `height` with the default settings: the
/// picture's luminance (rows bottom to top, as the buffers), the splatted depth and whether
/// each pixel's splatted surface lies within a sprite radius of the near-left glass (the
/// container's x = min wall).
struct Wall {
    width: usize,
    height: usize,
    luminance: Vec<f32>,
    depth: Vec<f32>,
    at_glass: Vec<bool>,
}

fn render(particles: u64, width: u32, height: u32) -> Wall {
    let scene = Scene::load("dam-break")
        .expect("the preset")
        .with_particle_target(particles)
        .expect("rescaled");
    let mut solver = backend::create(&scene, Backend::Cpu)
        .expect("the CPU solver")
        .solver;
    for _ in 0..40 {
        solver.step().expect("step");
    }
    let mut headless = Headless::new(width, height).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        Renderer::new(headless.gl(), &scene, PassClock::Finish).expect("the PBF renderer");
    let camera = Camera::framing(&scene.container);
    let settings = RenderSettings::default();
    let image = headless
        .capture(|output| {
            renderer.update_particles(solver.as_mut(), &settings)?;
            renderer.draw(&camera, &settings, output)
        })
        .expect("render without GL errors");
    let depth = renderer.read_buffer(Buffer::Depth).expect("the depth");
    let (w, h) = (width as usize, height as usize);
    let rgba = image.into_raw();
    let projection = camera.projection(width as f32 / height as f32);
    let to_world = camera.view().inverse();
    let sprite_radius = RenderSettings::default().point_size * scene.params.particle_radius();
    let glass = scene.container.min.x;
    let mut wall = Wall {
        width: w,
        height: h,
        luminance: vec![0.0; w * h],
        depth,
        at_glass: vec![false; w * h],
    };
    for y in 0..h {
        for x in 0..w {
            let k = y * w + x;
            let p = &rgba[4 * ((h - 1 - y) * w + x)..][..3];
            wall.luminance[k] = p.iter().map(|c| f32::from(*c)).sum::<f32>() / 3.0;
            let d = wall.depth[k];
            if d <= 0.0 {
                continue;
            }
            let ndc_x = (x as f32 + 0.5) / w as f32 * 2.0 - 1.0;
            let ndc_y = (y as f32 + 0.5) / h as f32 * 2.0 - 1.0;
            let eye = Vec3::new(
                ndc_x / projection.x_axis.x * d,
                ndc_y / projection.y_axis.y * d,
                -d,
            );
            let world = to_world * Vec4::from((eye, 1.0));
            wall.at_glass[k] = world.x - glass < sprite_radius;
        }
    }
    wall
}

impl Wall {
    /// The fluid pixels at the glass, and those of them more than 15 levels lighter than the
    /// median of their 3 × 3 window: light flecks.
    fn flecks(&self) -> (usize, usize) {
        let (w, h) = (self.width, self.height);
        let (mut at_glass, mut light) = (0, 0);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let k = y * w + x;
                if !self.at_glass[k] {
                    continue;
                }
                at_glass += 1;
                let mut window = [0.0f32; 9];
                for (i, value) in window.iter_mut().enumerate() {
                    *value = self.luminance[(y + i / 3 - 1) * w + x + i % 3 - 1];
                }
                window.sort_by(f32::total_cmp);
                light += usize::from(self.luminance[k] > window[4] + 15.0);
            }
        }
        (at_glass, light)
    }
}

/// `fluidlab render dam-break --frames 3 --steps-per-frame 40 --size 1280x720`'s frame 1 (30 000
/// particles): the fluid's face on the near-left glass is seen nearly edge-on (its normal at
/// 86° from the view ray), its splatted surface 0.3–1 sprite radii off the glass (the flattened
/// ellipsoids of the particles touching it), bumpy, its depth stepping by about the filter's
/// threshold from pixel to pixel. Shaded as a water surface, its normals from those steps, some
/// pixels grazed (Fresnel 0.75, the floor reflected) among paler ones: 34 light flecks with the
/// edge rule switched, 20–21 with it faded in. `normals` now gives a pixel whose splatted surface
/// lies within 1.5 sprite radii of a near wall's plane, its normal within 60° of the wall's, the
/// wall's normal, and `composite` shades it as water behind glass (reflectance 0.004, no
/// highlight, no bend): 0.
#[test]
fn the_fluids_face_on_the_glass_shows_no_light_flecks() {
    let wall = render(30000, 1280, 720);
    let (at_glass, light) = wall.flecks();
    println!("at the glass {at_glass} fluid pixels, {light} light flecks");
    assert!(
        at_glass > 1000,
        "the fluid's face on the glass: {at_glass} px"
    );
    assert!(
        light < 5,
        "{light} light flecks at the glass (21 shaded as a water surface, the edge rule faded in)"
    );
}
