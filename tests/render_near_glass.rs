//! Headless renders (Mesa llvmpipe in CI) of the other side of the glass rule (render_wall.rs):
//! a drop near the glass and a calm pool's top under the lid and at the front glass keep their
//! own surface (w = 1), while the pool's face on the glass is shaded as water behind glass.

mod render_support;

use fluidlab::gfx::camera::Camera;
use fluidlab::sims::pbf::backend;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings};
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::Backend;
use glam::Vec3;
use render_support::{draw, headless, Unprojection};

/// A scene seeded (no step) or settled, rendered at 480 × 270 from `camera` with the default
/// settings: the splatted depth, the normals' w and each fluid pixel's world position.
struct Marked {
    depth: Vec<f32>,
    w: Vec<f32>,
    world: Vec<Vec3>,
}

fn render_marked(scene: &Scene, steps: usize, camera: &Camera) -> Marked {
    let (width, height) = (480u32, 270u32);
    let mut solver = backend::create(scene, Backend::Cpu)
        .expect("the CPU solver")
        .solver;
    for _ in 0..steps {
        solver.step().expect("step");
    }
    let mut headless = headless(width, height);
    let settings = RenderSettings::default();
    let (renderer, _) = draw(&mut headless, scene, solver.as_mut(), camera, &settings);
    let depth = renderer.read_buffer(Buffer::Depth).expect("the depth");
    let normals = renderer.read_buffer(Buffer::Normals).expect("the normals");
    let w = width as usize;
    let unprojection = Unprojection::new(camera, width, height);
    let world = (0..depth.len())
        .map(|k| unprojection.world(k % w, k / w, depth[k]))
        .collect();
    Marked {
        w: normals.chunks(4).map(|n| n[3]).collect(),
        depth,
        world,
    }
}

impl Marked {
    /// The fluid pixels that pass `keep`, and those of them shaded as water behind glass.
    fn behind_glass(&self, keep: impl Fn(Vec3) -> bool) -> (usize, usize) {
        let (mut fluid, mut glass) = (0, 0);
        for k in 0..self.depth.len() {
            if self.depth[k] > 0.0 && keep(self.world[k]) {
                fluid += 1;
                glass += usize::from(self.w[k] > 1.5);
            }
        }
        (fluid, glass)
    }
}

/// A drop (the particles within 3.5 cm of a point) in a 1 m box, its front particles' centres
/// 3 particle radii (3.75 cm) from the front glass (z = 1), as seeded: a gap of a particle
/// diameter between the drop and the glass.
const DROP: &str = r#"
    description = "a drop near the glass"
    [container]
    min = [0.0, 0.0, 0.0]
    max = [1.0, 1.0, 0.9955]
    [[fluid]]
    shape = "sphere"
    center = [0.5, 0.5, 0.935]
    radius = 0.05
    [params]
    spacing = 0.025
"#;

/// A drop a few particle radii from the near glass, seen through it, is a free surface: it
/// keeps its own normal, Fresnel and highlight (w = 1), although its surface faces the eye as
/// the wall does. Its splatted surface lies 1.8 particle radii off the glass: 105 of its 1 057
/// pixels were behind glass with the band 1.5 sprite radii (1.95 particle radii) and 60°; 0
/// with a particle radius and half a sprite radius (1.65) and 45°.
#[test]
fn a_drop_near_the_glass_keeps_its_own_surface() {
    let scene = Scene::parse(DROP, "drop near the glass", "render test").expect("valid scene");
    let radius = scene.params.particle_radius();
    let camera = Camera {
        target: Vec3::new(0.5, 0.5, 0.9),
        yaw: 0.2,
        pitch: 0.2,
        distance: 0.6,
    };
    let marked = render_marked(&scene, 0, &camera);
    let nearest = marked
        .world
        .iter()
        .zip(&marked.depth)
        .filter(|(_, d)| **d > 0.0)
        .map(|(p, _)| scene.container.max.z - p.z)
        .fold(f32::INFINITY, f32::min);
    let (fluid, glass) = marked.behind_glass(|_| true);
    println!(
        "the drop: {fluid} px, {glass} shaded as behind glass; its splatted surface {:.2} \
         particle radii from the glass at the nearest",
        nearest / radius
    );
    assert!(fluid > 200, "the drop: {fluid} px");
    assert!(
        glass < fluid / 50,
        "{glass} of {fluid} drop pixels behind glass"
    );
}

/// A calm pool 0.1 m deep in a box whose lid (y = 0.11 m) lies 1 cm above its top, seen from
/// above and in front: neither the lid nor the front glass (z = 0.6 m) takes its top.
const NEAR_LID: &str = r#"
    description = "calm pool under a low lid"
    [container]
    min = [0.0, 0.0, 0.0]
    max = [0.6, 0.105, 0.6]
    [[fluid]]
    shape = "box"
    min = [0.0, 0.0, 0.0]
    max = [0.6, 0.1, 0.6]
    [params]
    spacing = 0.025
"#;

/// The top of a calm pool keeps its own surface (w = 1) under the lid seen from above (the
/// container is drawn open, with no glass on top) and where it meets the front glass (the
/// meniscus, its top more than a particle radius off the glass); the pool's face on the front
/// glass is behind glass. The top's 11 796 pixels (within half a particle radius of it) were all
/// behind glass with the lid counted; without it 760 still were, 750 of the meniscus's 2 061
/// (1.5 sprite radii, 60°); 13 and 5 then, 37 and 34 since the filters keep the face on the
/// glass apart (a pixel's own splat decides its side), 4 and 3 since the line fit across the
/// crease and the face's seams on the glass (render_wall.rs's `the_top_meets_…`), 4 and 3
/// since `normals` takes its differences on the pixel's side of the crease, 3 and 3 since the
/// first filter pass classes the face's seams (4 and 3 with `normals`' seam rule counting
/// those as on the glass: it spread one pixel further). The face: 1 142 of
/// 1 142 before that, 1 087 with it (its seams, splats more than 45° from the wall, filtered
/// with the free surface), 1 122 since a pixel `sphere_depth` marked on the glass takes the
/// wall's normal without the 45° test on its smoothed normal, 1 131 with the face's seams on
/// the glass, 1 138 with seams of five of eight neighbours, 1 140 with the seams classed by the
/// first filter pass.
#[test]
fn a_calm_pools_top_keeps_its_own_surface_near_the_lid_and_the_glass() {
    let scene = Scene::parse(NEAR_LID, "calm pool", "render test").expect("valid scene");
    let spacing = scene.params.spacing;
    let camera = Camera {
        target: Vec3::new(0.3, 0.08, 0.3),
        yaw: 0.3,
        pitch: 35f32.to_radians(),
        distance: 0.9,
    };
    let marked = render_marked(&scene, 30, &camera);
    let top = marked
        .world
        .iter()
        .zip(&marked.depth)
        .filter(|(_, d)| **d > 0.0)
        .map(|(p, _)| p.y)
        .fold(0.0, f32::max);
    let radius = 0.5 * spacing;
    let is_top = |p: Vec3| p.y > top - 0.5 * radius;
    let (top_pixels, top_glass) = marked.behind_glass(is_top);
    let meniscus = |p: Vec3| is_top(p) && p.z < 0.6 - radius && p.z > 0.6 - 2.0 * spacing;
    let (meniscus, meniscus_glass) = marked.behind_glass(meniscus);
    let on_glass = |p: Vec3| p.y < top - spacing && p.z > 0.6 - radius;
    let (face, face_glass) = marked.behind_glass(on_glass);
    println!(
        "top {top_pixels} px, {top_glass} behind glass; within 2 spacings of the front glass \
         {meniscus} px, {meniscus_glass}; the face on the front glass {face} px, {face_glass}"
    );
    assert!(
        top_pixels > 2000 && meniscus > 100 && face > 500,
        "too few pixels"
    );
    assert!(
        top_glass < top_pixels / 100,
        "{top_glass} of the top's {top_pixels} px"
    );
    assert!(
        meniscus_glass < meniscus / 20,
        "{meniscus_glass} of {meniscus} px"
    );
    // 24/25 (1 096 of 1 142): the loosest bound that fails the 1 087 of the face's seams
    // filtered with the free surface; 0.96 of today's 1 140, as near as such a bound can be.
    assert!(
        face_glass > face * 24 / 25,
        "{face_glass} of the face's {face} px behind glass (1 140; 1 087 with its seams \
         filtered with the free surface)"
    );
}
