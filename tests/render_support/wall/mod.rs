//! `render_wall.rs`'s frame: the dam break's frame 1 at 1280 × 720 drawn once (and once more
//! without shadow and caustics when asked), each pixel's splatted surface placed against the
//! near-left and the front glass. The measures on it, by what they check: the light flecks on
//! the near-left glass (`flecks.rs`), the light line where the top meets the front glass
//! (`rim.rs`), the smoothed depth at the crease and on the face (`crease.rs`), the top's last
//! rows brightening towards the front glass (`top_rise.rs`).

mod crease;
mod flecks;
mod rim;
mod top_rise;

use crate::dam_break::dam_break_stepped;
use crate::render_support::{draw, headless, Unprojection};
use fluidlab::gfx::camera::Camera;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings};
use glam::Vec3;

/// The dam break at `particles` after 40 steps (0.66 s, `fluidlab render`'s frame 1 at
/// `--steps-per-frame 40`), rendered at `width` × `height` with the default settings: the
/// picture's luminance (rows bottom to top, as the buffers), the splatted depth and whether
/// each pixel's splatted surface lies within a sprite radius of the near-left glass (the
/// container's x = min wall); and for the front glass (z = max): each pixel's splatted
/// surface's distance from it in particle radii, the angle of its normal from the glass's (°)
/// and whether it is shaded as behind glass.
#[derive(Clone)]
pub struct Wall {
    width: usize,
    height: usize,
    luminance: Vec<f32>,
    depth: Vec<f32>,
    at_glass: Vec<bool>,
    off_front: Vec<f32>,
    tilt: Vec<f32>,
    behind_glass: Vec<bool>,
    /// The smoothed depth (its two lowest bits the mark `sphere_depth` gave the pixel).
    smoothed: Vec<f32>,
    /// The luminance of the same frame drawn with shadow and caustics off (`fluid_light`),
    /// when asked for.
    unlit: Option<Vec<f32>>,
}

pub fn render(particles: u64, width: u32, height: u32, unlit: bool) -> Wall {
    let (scene, mut solver) = dam_break_stepped(particles);
    let mut headless = headless(width, height);
    let camera = Camera::framing(&scene.container);
    let settings = RenderSettings::default();
    let unlit = unlit.then(|| {
        let settings = RenderSettings {
            fluid_light: false,
            ..RenderSettings::default()
        };
        let (_, image) = draw(&mut headless, &scene, solver.as_mut(), &camera, &settings);
        luminance(&image.into_raw(), width as usize, height as usize)
    });
    let (renderer, image) = draw(&mut headless, &scene, solver.as_mut(), &camera, &settings);
    let depth = renderer.read_buffer(Buffer::Depth).expect("the depth");
    let smoothed = renderer
        .read_buffer(Buffer::SmoothedDepth)
        .expect("the smoothed depth");
    let normals = renderer.read_buffer(Buffer::Normals).expect("the normals");
    let (w, h) = (width as usize, height as usize);
    let luminance = luminance(&image.into_raw(), w, h);
    let unprojection = Unprojection::new(&camera, width, height);
    let sprite_radius = RenderSettings::default().point_size * scene.params.particle_radius();
    let glass = scene.container.min.x;
    let front = scene.container.max.z;
    let radius = scene.params.particle_radius();
    let rotation = glam::Mat3::from_mat4(camera.view().inverse());
    let mut wall = Wall {
        width: w,
        height: h,
        luminance,
        depth,
        at_glass: vec![false; w * h],
        off_front: vec![f32::INFINITY; w * h],
        tilt: vec![0.0; w * h],
        behind_glass: normals.chunks(4).map(|n| n[3] > 1.5).collect(),
        smoothed,
        unlit,
    };
    for y in 0..h {
        for x in 0..w {
            let k = y * w + x;
            let d = wall.depth[k];
            if d <= 0.0 {
                continue;
            }
            let world = unprojection.world(x, y, d);
            wall.at_glass[k] = world.x - glass < sprite_radius;
            wall.off_front[k] = (front - world.z) / radius;
            let normal = rotation * Vec3::from_slice(&normals[4 * k..4 * k + 3]);
            wall.tilt[k] = normal.z.clamp(-1.0, 1.0).acos().to_degrees();
        }
    }
    wall
}

/// The mean of R, G and B of an RGBA picture (rows top to bottom), rows bottom to top.
fn luminance(rgba: &[u8], w: usize, h: usize) -> Vec<f32> {
    let mut luminance = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let p = &rgba[4 * ((h - 1 - y) * w + x)..][..3];
            luminance[y * w + x] = p.iter().map(|c| f32::from(*c)).sum::<f32>() / 3.0;
        }
    }
    luminance
}
