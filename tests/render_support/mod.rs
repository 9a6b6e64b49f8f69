//! What the PBF render tests share (each includes it with `mod render_support;`): the headless
//! context, one frame drawn with the CPU solver's particles, and a pixel's depth back to the
//! world. The dam break stepped to `fluidlab render`'s frame 1 is in `dam_break.rs`.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::render::{RenderSettings, Renderer};
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::Solver;
use glam::{Mat4, Vec3, Vec4};

/// A headless OpenGL context of `width` × `height` (Mesa llvmpipe in CI).
pub fn headless(width: u32, height: u32) -> Headless {
    Headless::new(width, height).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    )
}

/// A new renderer for `scene` that draws `solver`'s particles once from `camera` with
/// `settings`: the renderer (its buffers hold the frame) and the picture.
pub fn draw(
    headless: &mut Headless,
    scene: &Scene,
    solver: &mut dyn Solver,
    camera: &Camera,
    settings: &RenderSettings,
) -> (Renderer, Image) {
    let mut renderer =
        Renderer::new(headless.gl(), scene, PassClock::Finish).expect("the PBF renderer");
    let image = headless
        .capture(|output| {
            renderer.update_particles(solver, settings)?;
            renderer.draw(camera, settings, output)
        })
        .expect("render without GL errors");
    (renderer, image)
}

/// A pixel's eye depth back to the world for `camera` at `width` × `height`.
pub struct Unprojection {
    width: f32,
    height: f32,
    projection: Mat4,
    to_world: Mat4,
}

impl Unprojection {
    pub fn new(camera: &Camera, width: u32, height: u32) -> Self {
        Unprojection {
            width: width as f32,
            height: height as f32,
            projection: camera.projection(width as f32 / height as f32),
            to_world: camera.view().inverse(),
        }
    }

    /// The world point at eye depth `depth` (m) on the ray through the centre of pixel
    /// (`x`, `y`), rows bottom to top as GL reads them.
    pub fn world(&self, x: usize, y: usize, depth: f32) -> Vec3 {
        let ndc_x = (x as f32 + 0.5) / self.width * 2.0 - 1.0;
        let ndc_y = (y as f32 + 0.5) / self.height * 2.0 - 1.0;
        let eye = Vec3::new(
            ndc_x / self.projection.x_axis.x * depth,
            ndc_y / self.projection.y_axis.y * depth,
            -depth,
        );
        (self.to_world * Vec4::from((eye, 1.0))).truncate()
    }
}
