//! Headless renders (Mesa llvmpipe in CI) of the dam break after its impact on the far wall,
//! where the flow is broken into sheets, drops and spray: the narrow-range filter's 2-D pass
//! (`smooth_depth_2d`) removes the axis-aligned streaks its separable iterations leave, and
//! the sparse sprites' rims, whose normals graze the view ray, reflect the floor rather than
//! show as grey dots (docs/viewer.md).

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::backend;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings, Renderer};
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::{Backend, Solver};
use glam::Vec3;

const WIDTH: u32 = 480;
const HEIGHT: u32 = 270;

/// The dam break at 6 000 particles, 1.0 s in (its front hit the far wall at 0.4 s), with a
/// renderer and the default camera.
struct Fixture {
    headless: Headless,
    renderer: Renderer,
    solver: Box<dyn Solver>,
    camera: Camera,
}

impl Fixture {
    fn after_the_impact() -> Fixture {
        let scene = Scene::load("dam-break")
            .expect("the preset")
            .with_particle_target(6000)
            .expect("rescaled");
        let mut solver = backend::create(&scene, Backend::Cpu)
            .expect("the CPU solver")
            .solver;
        for _ in 0..60 {
            solver.step().expect("step");
        }
        let headless = Headless::new(WIDTH, HEIGHT).expect(
            "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
        );
        let renderer =
            Renderer::new(headless.gl(), &scene, PassClock::Finish).expect("the PBF renderer");
        Fixture {
            headless,
            renderer,
            solver,
            camera: Camera::framing(&scene.container),
        }
    }

    /// The picture (RGBA, rows top to bottom) and the smoothed depth and normals (rows bottom
    /// to top) of a frame rendered with `settings`.
    fn render(&mut self, settings: &RenderSettings) -> (Vec<u8>, Vec<f32>, Vec<f32>) {
        let (renderer, solver, camera) = (&mut self.renderer, &mut self.solver, &self.camera);
        let image = self
            .headless
            .capture(|output| {
                renderer.update_particles(solver.as_mut(), settings)?;
                renderer.draw(camera, settings, output)
            })
            .expect("render without GL errors");
        let depth = renderer.read_buffer(Buffer::SmoothedDepth).expect("depth");
        let normals = renderer.read_buffer(Buffer::Normals).expect("normals");
        (image.into_raw(), depth, normals)
    }
}

/// Mean |second difference| of the smoothed depth (m) along x and along y, over pixels whose
/// eight neighbours are fluid of the same layer (within 2 cm).
fn second_differences(depth: &[f32]) -> (f64, f64) {
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    let (mut along_x, mut along_y, mut pixels) = (0.0, 0.0, 0usize);
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let d = |dx: isize, dy: isize| {
                depth[(y as isize + dy) as usize * w + (x as isize + dx) as usize]
            };
            let center = d(0, 0);
            let around = (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (dx, dy)));
            if center <= 0.0
                || around
                    .map(|(dx, dy)| d(dx, dy))
                    .any(|v| (v - center).abs() > 0.02)
            {
                continue;
            }
            along_x += f64::from((d(-1, 0) + d(1, 0) - 2.0 * center).abs());
            along_y += f64::from((d(0, -1) + d(0, 1) - 2.0 * center).abs());
            pixels += 1;
        }
    }
    assert!(pixels > 3000, "only {pixels} interior fluid pixels");
    (along_x / pixels as f64, along_y / pixels as f64)
}

#[test]
fn the_narrow_range_filters_2d_pass_removes_the_separable_streaks() {
    let mut fixture = Fixture::after_the_impact();
    for anisotropy in [true, false] {
        let mut ratios = Vec::new();
        let mut roughness = Vec::new();
        for smooth_depth_2d in [true, false] {
            let settings = RenderSettings {
                anisotropy,
                smooth_depth_2d,
                ..RenderSettings::default()
            };
            let (_, depth, _) = fixture.render(&settings);
            let (x, y) = second_differences(&depth);
            ratios.push(x / y);
            roughness.push(x + y);
        }
        eprintln!(
            "anisotropy {anisotropy}: x/y second differences with, without smooth_depth_2d \
             {ratios:?}; their sum {roughness:?} m"
        );
        // Separable halves, the vertical last, leave the depth rough along x (measured 2.4
        // with ellipsoids, 2.5 with spheres; 0.8 and 1.0 unfiltered); the 2-D pass does not
        // (1.07 and 1.19), and the surface is smoother overall.
        assert!(ratios[0] < 1.4 && ratios[1] > 1.8, "{ratios:?}");
        assert!(roughness[0] < 0.8 * roughness[1], "{roughness:?}");
    }
}

#[test]
fn sparse_sprites_rims_reflect_the_floor_not_grey_dots() {
    let mut fixture = Fixture::after_the_impact();
    let projection = fixture.camera.projection(WIDTH as f32 / HEIGHT as f32);
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    for anisotropy in [true, false] {
        let settings = RenderSettings {
            anisotropy,
            ..RenderSettings::default()
        };
        let (image, depth, normals) = fixture.render(&settings);
        let (mut grazing, mut grey) = (0, 0);
        for y in 0..h {
            for x in 0..w {
                // Buffers are read bottom to top, the picture top to bottom.
                let k = (h - 1 - y) * w + x;
                if depth[k] <= 0.0 {
                    continue;
                }
                let ndc_x = (x as f32 + 0.5) / w as f32 * 2.0 - 1.0;
                let ndc_y = ((h - 1 - y) as f32 + 0.5) / h as f32 * 2.0 - 1.0;
                let to_eye = -Vec3::new(
                    ndc_x / projection.x_axis.x,
                    ndc_y / projection.y_axis.y,
                    -1.0,
                )
                .normalize();
                let normal = Vec3::new(normals[4 * k], normals[4 * k + 1], normals[4 * k + 2]);
                if normal.dot(to_eye) < 0.1 {
                    grazing += 1;
                }
                // Grey: no bluer than red (the fluid's absorption and colour make it blue)
                // and darker than the floor's light cells.
                let p = &image[4 * (y * w + x)..4 * (y * w + x) + 3];
                if i32::from(p[2]) - i32::from(p[0]) < 12 && *p.iter().max().unwrap() < 170 {
                    grey += 1;
                }
            }
        }
        eprintln!(
            "anisotropy {anisotropy}: {grazing} fluid pixels with grazing normals, {grey} grey"
        );
        // The sparse sprites' rims are there: normals within 6° of perpendicular to the view
        // ray (measured 643 pixels with ellipsoids, 1 729 with spheres; 1 396 and 4 113 with
        // four separable filter iterations).
        assert!(grazing > 300, "{grazing} grazing pixels");
        // Where the sky's ground was reflected there (Fresnel near 1) they were grey: 57 and
        // 67 pixels before the fix, 29 with ellipsoids with the old sky but the filter's 2-D
        // pass, 0 and 2 after it.
        assert!(grey < 20, "{grey} grey pixels");
    }
}
