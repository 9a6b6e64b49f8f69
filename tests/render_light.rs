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
use glam::{Mat4, Vec3, Vec4};

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

/// A headless OpenGL context of the tests' size and the PBF renderer for `scene`.
fn renderer_for(scene: &Scene) -> (Headless, Renderer) {
    let headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let renderer =
        Renderer::new(headless.gl(), scene, PassClock::Finish).expect("the PBF renderer");
    (headless, renderer)
}

/// The picture of `particles` from `camera`, with the default settings.
fn picture(
    headless: &mut Headless,
    renderer: &mut Renderer,
    camera: &Camera,
    particles: &mut FixedParticles,
) -> Image {
    let settings = RenderSettings::default();
    headless
        .capture(|output| {
            renderer.update_particles(particles, &settings)?;
            renderer.draw(camera, &settings, output)
        })
        .expect("render without GL errors")
}

/// Whether pixel (x, y) (rows from the top) shows fluid or lies within 5 pixels of it (those
/// FXAA may blend with it), from the depth buffer (rows from the bottom).
fn near_fluid(depth: &[f32], x: i32, y: i32) -> bool {
    let (w, h) = (WIDTH as i32, HEIGHT as i32);
    (-5..=5).any(|dy| {
        (-5..=5).any(|dx| {
            let (u, v) = (x + dx, h - 1 - (y + dy));
            u >= 0 && v >= 0 && u < w && v < h && depth[(v * w + u) as usize] > 0.0
        })
    })
}

/// Clip space back to world space for `camera` at the tests' aspect.
fn unprojection(camera: &Camera) -> Mat4 {
    (camera.projection(WIDTH as f32 / HEIGHT as f32) * camera.view()).inverse()
}

/// The ray through the centre of pixel (x, y) (rows from the top): its point on the near
/// plane and its direction to the far plane.
fn pixel_ray(unprojection: &Mat4, x: i32, y: i32) -> (Vec3, Vec3) {
    let ndc_x = (x as f32 + 0.5) / WIDTH as f32 * 2.0 - 1.0;
    let ndc_y = 1.0 - (y as f32 + 0.5) / HEIGHT as f32 * 2.0;
    let unproject = |z: f32| {
        let p = *unprojection * Vec4::new(ndc_x, ndc_y, z, 1.0);
        p.truncate() / p.w
    };
    let (near, far) = (unproject(-1.0), unproject(1.0));
    (near, far - near)
}

#[test]
fn the_fluid_shadows_the_floor_under_it_and_nowhere_else() {
    let scene = Scene::parse(BLOCK, "block", "shadow test").expect("valid scene");
    let (mut headless, mut renderer) = renderer_for(&scene);
    let camera = Camera::framing(&scene.container);
    let mut render = |particles: &mut FixedParticles, renderer: &mut Renderer| {
        picture(&mut headless, renderer, &camera, particles)
    };
    let empty = render(&mut FixedParticles::empty(&scene), &mut renderer);
    let lit = render(&mut FixedParticles::of(&scene), &mut renderer);
    // Fluid pixels (and those FXAA may blend with them, up to 5 pixels away) are not floor.
    let depth = &renderer.read_buffer(Buffer::Depth).expect("depth");
    let inverse = unprojection(&camera);
    let floor = floor_height(&scene.container);
    let (mut shadowed, mut darkening, mut elsewhere) = (0, 0.0, 0);
    let mut largest_change = (0.0f64, 0, 0);
    for y in 0..HEIGHT as i32 {
        for x in 0..WIDTH as i32 {
            if near_fluid(depth, x, y) {
                continue;
            }
            let (near, direction) = pixel_ray(&inverse, x, y);
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

/// A 2.4 m × 1 m × 2.4 m container with no fluid of its own (the slabs below are placed).
const WIDE: &str = r#"
    description = "caustics test"
    [container]
    min = [0.0, 0.0, 0.0]
    max = [2.4, 1.0, 2.4]
    [[fluid]]
    shape = "box"
    min = [0.0, 0.0, 0.0]
    max = [0.05, 0.05, 0.05]
    [params]
    spacing = 0.025
"#;

/// The slab's footprint (x, z), bottom and mean top, m; its top is y = top + A sin(2π x / L).
const SLAB_MIN: [f32; 2] = [0.6, 0.8];
const SLAB_MAX: [f32; 2] = [1.8, 1.4];
const SLAB_BOTTOM: f32 = 0.5;
const SLAB_TOP: f32 = 0.6;
/// The waves' length and amplitude: crests of curvature A (2π/L)² = 5.5 /m focus sunlight
/// through water (n = 1.33) about 0.55 m below, about the path from the surface to the floor.
const WAVELENGTH: f32 = 0.6;
const AMPLITUDE: f32 = 0.05;

/// A floating slab of particles on a lattice of `spacing`, its top wavy with `amplitude`.
fn slab(spacing: f32, amplitude: f32) -> Vec<[f32; 3]> {
    let mut positions = Vec::new();
    let columns = |min: f32, max: f32| ((max - min) / spacing).round() as usize;
    for i in 0..columns(SLAB_MIN[0], SLAB_MAX[0]) {
        for k in 0..columns(SLAB_MIN[1], SLAB_MAX[1]) {
            let x = SLAB_MIN[0] + (i as f32 + 0.5) * spacing;
            let z = SLAB_MIN[1] + (k as f32 + 0.5) * spacing;
            let top = SLAB_TOP
                + amplitude * (std::f32::consts::TAU * (x - SLAB_MIN[0]) / WAVELENGTH).sin();
            let mut y = SLAB_BOTTOM + 0.5 * spacing;
            while y < top {
                positions.push([x, y, z]);
                y += spacing;
            }
        }
    }
    positions
}

/// Whether the sunlight reaching floor point `p` passed through the slab's footprint shrunk by
/// `margin` m, at its mid-height.
fn under_slab(p: Vec3, margin: f32) -> bool {
    let sun = sun_direction();
    let height = 0.5 * (SLAB_BOTTOM + SLAB_TOP);
    let q = p + sun * ((height - p.y) / sun.y);
    q.x > SLAB_MIN[0] + margin
        && q.x < SLAB_MAX[0] - margin
        && q.z > SLAB_MIN[1] + margin
        && q.z < SLAB_MAX[1] - margin
}

/// Per floor pixel under the slab (its sunbeam through the slab shrunk by 12 cm, away from the
/// bright rim its rounded edges refract; fluid pixels
/// and those within 5 px excluded): the luminance lit minus empty, sRGB levels.
fn floor_changes(
    empty: &Image,
    lit: &Image,
    depth: &[f32],
    camera: &Camera,
    scene: &Scene,
) -> Vec<f64> {
    let inverse = unprojection(camera);
    let floor = floor_height(&scene.container);
    let mut changes = Vec::new();
    for y in 0..HEIGHT as i32 {
        for x in 0..WIDTH as i32 {
            if near_fluid(depth, x, y) {
                continue;
            }
            let (near, direction) = pixel_ray(&inverse, x, y);
            if direction.y >= 0.0 {
                continue;
            }
            let hit = near + direction * ((floor - near.y) / direction.y);
            if under_slab(hit, 0.12) {
                changes.push(
                    luminance(&lit.get_pixel(x as u32, y as u32).0)
                        - luminance(&empty.get_pixel(x as u32, y as u32).0),
                );
            }
        }
    }
    changes
}

#[test]
fn wavy_water_focuses_caustics_on_the_floor_and_a_flat_slab_does_not() {
    let scene = Scene::parse(WIDE, "wide", "caustics test").expect("valid scene");
    let (mut headless, mut renderer) = renderer_for(&scene);
    // Looking from the side away from the sun at the floor where the slab's light lands
    // (sunlight from 0.55 m up moves 0.41 m along −x and 0.32 m along −z), under the slab.
    let camera = Camera {
        target: Vec3::new(0.8, 0.0, 0.8),
        yaw: (-135f32).to_radians(),
        pitch: 40f32.to_radians(),
        distance: 1.6,
    };
    let mut render = |particles: &mut FixedParticles, renderer: &mut Renderer| {
        picture(&mut headless, renderer, &camera, particles)
    };
    let empty = render(&mut FixedParticles::empty(&scene), &mut renderer);
    let spacing = scene.params.spacing;
    let mut measured = Vec::new();
    for amplitude in [AMPLITUDE, 0.0] {
        let lit = render(
            &mut FixedParticles::at(&scene, &slab(spacing, amplitude)),
            &mut renderer,
        );
        let depth = renderer.read_buffer(Buffer::Depth).expect("depth");
        let changes = floor_changes(&empty, &lit, &depth, &camera, &scene);
        assert!(
            changes.len() > 500,
            "only {} floor pixels under the slab",
            changes.len()
        );
        let n = changes.len() as f64;
        let mean = changes.iter().sum::<f64>() / n;
        let spread = (changes.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n).sqrt();
        let brighter = changes.iter().filter(|c| **c > 4.0).count();
        measured.push((amplitude, changes.len(), mean, spread, brighter));
    }
    eprintln!(
        "(amplitude, floor pixels, mean change, its spread, pixels > 4 levels brighter): \
         {measured:?}"
    );
    // Measured: wavy 5 915 pixels, mean −11.2 levels, spread 11.0, 568 brighter than the
    // unshadowed floor; flat −10.0, spread 3.0, none brighter. At the old LIGHT_SIZE 256
    // with σ = 3 texels the wavy slab brightened 717 pixels but spread only 6.3
    // (docs/render-notes-artefacts.md).
    let (wavy, flat) = (measured[0], measured[1]);
    assert!(
        wavy.4 > 200 && wavy.3 > 7.0,
        "the wavy slab's caustics do not brighten the floor: {measured:?}"
    );
    assert!(
        flat.4 == 0 && flat.3 < 5.0 && flat.2 < -5.0,
        "the flat slab's shadow is not a uniform attenuation: {measured:?}"
    );
}

/// `BLOCK` with a 0.4 m box obstacle beside it, on the side away from the sun, so the
/// fluid's shadow falls on the obstacle's face towards it.
const BLOCK_AND_BOX: &str = r#"
    description = "render test block beside a box"
    [container]
    min = [0.0, 0.0, 0.0]
    max = [1.0, 1.0, 1.0]
    [[fluid]]
    shape = "box"
    min = [0.35, 0.0, 0.35]
    max = [0.65, 0.3, 0.65]
    [[obstacle]]
    shape = "box"
    min = [0.1, 0.0, 0.25]
    max = [0.3, 0.4, 0.5]
    [params]
    spacing = 0.025
"#;

/// Whether the sunlight reaching `p` passes through the block's box grown by `margin` metres
/// on every side (negative: shrunk).
fn beam_through_block(p: Vec3, margin: f32) -> bool {
    let sun = sun_direction();
    (0..=100).any(|k| {
        let height = p.y + (BLOCK_HEIGHT + margin - p.y) * k as f32 / 100.0;
        let q = p + sun * ((height - p.y) / sun.y);
        q.y >= -margin
            && q.x > BLOCK_MIN[0] - margin
            && q.x < BLOCK_MAX[0] + margin
            && q.z > BLOCK_MIN[1] - margin
            && q.z < BLOCK_MAX[1] + margin
    })
}

#[test]
fn the_fluid_shadows_an_obstacle_beside_it_where_its_sunbeams_pass_through() {
    let scene = Scene::parse(BLOCK_AND_BOX, "block and box", "shadow test").expect("valid scene");
    let (mut headless, mut renderer) = renderer_for(&scene);
    // From the +x, −z side, looking at the box's face at x = 0.3.
    let camera = Camera {
        target: Vec3::new(0.3, 0.2, 0.35),
        yaw: 120f32.to_radians(),
        pitch: 20f32.to_radians(),
        distance: 1.3,
    };
    let mut render = |particles: &mut FixedParticles, renderer: &mut Renderer| {
        picture(&mut headless, renderer, &camera, particles)
    };
    let empty = render(&mut FixedParticles::empty(&scene), &mut renderer);
    let lit = render(&mut FixedParticles::of(&scene), &mut renderer);
    let depth = &renderer.read_buffer(Buffer::Depth).expect("depth");
    let inverse = unprojection(&camera);
    let (mut shadowed, mut darkening, mut elsewhere, mut largest_change) = (0, 0.0, 0, 0.0f64);
    for y in 0..HEIGHT as i32 {
        for x in 0..WIDTH as i32 {
            if near_fluid(depth, x, y) {
                continue;
            }
            let (near, direction) = pixel_ray(&inverse, x, y);
            // The box's face at x = 0.3 and its top at y = 0.4, 1 cm in from their edges (what
            // FXAA may blend), whichever the ray meets first.
            let face = (-direction.x > 0.0).then(|| (0.3 - near.x) / direction.x);
            let top = (-direction.y > 0.0).then(|| (0.4 - near.y) / direction.y);
            let on_face = face
                .map(|t| near + direction * t)
                .filter(|p| (0.01..0.39).contains(&p.y) && (0.26..0.49).contains(&p.z));
            let on_top = top
                .map(|t| near + direction * t)
                .filter(|p| (0.11..0.29).contains(&p.x) && (0.26..0.49).contains(&p.z));
            let hit = match (on_face, on_top) {
                (Some(f), Some(t)) => {
                    if (f - near).length() < (t - near).length() {
                        f
                    } else {
                        t
                    }
                }
                (Some(f), None) => f,
                (None, Some(t)) => t,
                (None, None) => continue,
            };
            let change = luminance(&empty.get_pixel(x as u32, y as u32).0)
                - luminance(&lit.get_pixel(x as u32, y as u32).0);
            if beam_through_block(hit, -0.03) {
                shadowed += 1;
                darkening += change;
            } else if !beam_through_block(hit, 0.08) {
                elsewhere += 1;
                largest_change = largest_change.max(change.abs());
            }
        }
    }
    let mean = darkening / shadowed.max(1) as f64;
    eprintln!(
        "box pixels in the shadow {shadowed} (darker by {mean:.1} levels), outside \
         {elsewhere} (largest change {largest_change:.1})"
    );
    // Measured: 393 pixels darker by 15.0 levels, 244 unchanged (0.0).
    assert!(shadowed > 200, "only {shadowed} box pixels in the shadow");
    assert!(elsewhere > 150, "only {elsewhere} box pixels outside it");
    assert!(
        mean > 8.0,
        "the box in the fluid's shadow is only {mean:.1} levels darker"
    );
    assert!(
        largest_change <= 1.0,
        "the box outside the shadow changed by {largest_change} levels"
    );
}
