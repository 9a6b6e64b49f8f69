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
use fluidlab::sims::pbf::render::{scene_mesh, Buffer, RenderSettings, REFRACTION_STRENGTH};
use glam::Vec3;

/// The dam break at `particles` after 40 steps (0.66 s, `fluidlab render`'s frame 1 at
/// `--steps-per-frame 40`), rendered at `width` × `height` with the default settings: the
/// picture's luminance (rows bottom to top, as the buffers), the splatted depth and whether
/// each pixel's splatted surface lies within a sprite radius of the near-left glass (the
/// container's x = min wall); and for the front glass (z = max): each pixel's splatted
/// surface's distance from it in particle radii, the angle of its normal from the glass's (°)
/// and whether it is shaded as behind glass; whether the refraction's lookup lands on a light
/// cell of the floor.
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
    /// The smoothed depth (its two lowest bits the pixel's mark: `sphere_depth`'s, or 3 for a
    /// seam of the face that the camera's first filter pass found).
    smoothed: Vec<f32>,
    /// The luminance of the same frame drawn with shadow and caustics off (`fluid_light`),
    /// when asked for.
    unlit: Option<Vec<f32>>,
    /// Whether the scene that `composite`'s refraction looks up for each fluid pixel is a
    /// light cell of the floor's checker (albedo 1, the dark ones 0.6): the lookup offset
    /// along the normal as `composite` takes it, the ray through that pixel to the floor.
    /// None where that ray misses the floor.
    lookup_on_light_cell: Vec<Option<bool>>,
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
        lookup_on_light_cell: vec![None; w * h],
    };
    // `composite`'s refraction: the scene looked up `bend` · min(thickness, 1) along the
    // normal's screen components (uv), `bend` its `REFRACTION_STRENGTH` times 1 − 1/n, the
    // pixel itself where it is shaded as behind glass or the scene there lies nearer than the
    // fluid (the scene taken as the floor: the lookup's ray to it). The floor's checker
    // (`scene_mesh::checker_size`), light where both axes' square waves agree (`scene.frag`).
    let thickness = renderer
        .read_buffer(Buffer::Thickness)
        .expect("the thickness");
    let bend = REFRACTION_STRENGTH * (1.0 - 1.0 / settings.refraction_index.max(1.0));
    let floor = scene_mesh::floor_height(&scene.container);
    let checker = scene_mesh::checker_size(Vec3::from(scene.container.size()).length());
    let square = |p: f32| (p / (2.0 * checker)).rem_euclid(1.0) < 0.5;
    let eye = camera.eye();
    let forward = rotation * Vec3::NEG_Z;
    // The floor's point seen through pixel `look` and its eye depth, if the ray meets it.
    let floor_hit = |look: (usize, usize)| {
        let ray = unprojection.world(look.0, look.1, 1.0) - eye;
        (ray.y < 0.0).then(|| {
            let hit = eye + ray * ((floor - eye.y) / ray.y);
            (hit, (hit - eye).dot(forward))
        })
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
            let offset = bend * thickness[k].min(1.0);
            let look_x = (x as f32 - normals[4 * k] * offset * w as f32).round();
            let look_y = (y as f32 - normals[4 * k + 1] * offset * h as f32).round();
            let look = (
                look_x.clamp(0.0, (w - 1) as f32) as usize,
                look_y.clamp(0.0, (h - 1) as f32) as usize,
            );
            let through_fluid = floor_hit(look)
                .filter(|&(_, depth)| !wall.behind_glass[k] && depth >= wall.smoothed[k]);
            wall.lookup_on_light_cell[k] = through_fluid
                .or_else(|| floor_hit((x, y)))
                .map(|(hit, _)| square(hit.x) == square(hit.z));
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
