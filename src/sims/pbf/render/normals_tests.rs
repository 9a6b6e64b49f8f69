//! `normals` on synthetic depth images: which one-sided difference a pixel takes.

use super::surface::Targets;
use super::{FrameSetup, Renderer};
use crate::gfx::headless::Headless;
use crate::gfx::timing::PassClock;
use crate::sims::pbf::scene::Scene;
use glam::{Mat4, Vec3};
use glow::HasContext;

const SIZE: i32 = 16;
const CENTER: i32 = 8;

/// The free surface (mark 0) flat at 1 m, the face on the glass (mark 2) in the rows below the
/// centre at the same depth (the crease between them has no step), and above the centre
/// `above(rows above)`: depth and mark. The cosine between the centre's normal and the ray to
/// the eye. A sprite radius of 1 cm projects to 4 px at 1 m: a texel spans 2.5 mm at 1 m,
/// `layer_step` is 3 cm.
fn center_cosine(above: impl Fn(i32) -> (f32, u32)) -> f32 {
    let headless = Headless::new(SIZE as u32, SIZE as u32).expect("headless OpenGL");
    let gl = headless.gl();
    let scene = Scene::load("dam-break").expect("the preset");
    let mut renderer = Renderer::new(gl.clone(), &scene, PassClock::Finish).expect("the renderer");
    let targets = Targets::new(&gl, SIZE, SIZE).expect("the targets");
    std::mem::replace(&mut renderer.targets, targets).delete(&gl);
    let mark = |depth: f32, mark: u32| f32::from_bits((depth.to_bits() & !3) | mark);
    let texels: Vec<f32> = (0..SIZE)
        .flat_map(|y| {
            let (depth, m) = match y - CENTER {
                rows if rows < 0 => (1.0, 2),
                0 => (1.0, 0),
                rows => above(rows),
            };
            (0..SIZE).map(move |_| mark(depth, m))
        })
        .collect();
    let sprite_radius = 0.01;
    let scale = 4.0 / sprite_radius / (0.5 * SIZE as f32);
    let mut projection = Mat4::IDENTITY;
    projection.x_axis.x = scale;
    projection.y_axis.y = scale;
    let frame = FrameSetup {
        view: Mat4::IDENTITY,
        projection,
        clip_planes: (0.1, 10.0),
        sprite_radius,
        width: SIZE,
        height: SIZE,
        eye_distance: 1.0,
        eye_position: Vec3::ZERO,
        anisotropic: false,
        axis_scale: 1.0,
    };
    renderer
        .targets
        .sphere_depth
        .write_red_floats(&gl, SIZE, SIZE, &texels);
    // SAFETY: a GL call on this thread's current context.
    unsafe { gl.viewport(0, 0, SIZE, SIZE) };
    // The smoothed depth is the splatted one (no smoothing ran).
    renderer.normals(&frame);
    let normals = renderer.targets.normals.read_floats(&gl, SIZE, SIZE, 4);
    let k = 4 * (CENTER * SIZE + CENTER) as usize;
    let n = Vec3::new(normals[k], normals[k + 1], normals[k + 2]);
    assert_eq!(
        normals[k + 3],
        1.0,
        "the centre is free surface: {normals:?}"
    );
    let ndc = (CENTER as f32 + 0.5) / SIZE as f32 * 2.0 - 1.0;
    let center = Vec3::new(ndc / scale, ndc / scale, -1.0);
    n.dot(-center.normalize())
}

/// A sheet 10 cm nearer (over `layer_step`) above the centre, the glass below: the neighbour
/// of the centre's class is on another layer, and the step-free difference to the glass's
/// row is taken; the flat surface faces the eye. Preferring the class there took the
/// difference across the step: a grazing normal, turned by the edge rule only to the least
/// cosine of a 4-pixel sprite's rim, 0.44.
#[test]
fn a_layer_above_the_crease_does_not_bend_the_normal() {
    let cosine = center_cosine(|_| (0.9, 0));
    println!("a sheet above the crease: the centre's normal at cosine {cosine:.3} to the eye");
    assert!(
        cosine > 0.99,
        "cosine {cosine:.3} (0.44: the step's difference)"
    );
}

/// The control: the free surface rising 2 mm a texel above the centre (on its layer), the
/// glass flat below: the difference to the free surface's row is taken (the crease rule), a
/// normal tilted to cosine 2.5 / √(2.5² + 2²) = 0.78, not the glass's flat one.
#[test]
fn a_slope_on_the_layer_above_the_crease_is_followed() {
    let cosine = center_cosine(|rows| (1.0 - 0.002 * rows as f32, 0));
    println!("a slope above the crease: the centre's normal at cosine {cosine:.3} to the eye");
    assert!(
        (cosine - 0.78).abs() < 0.03,
        "cosine {cosine:.3} (0.78 expected)"
    );
}
