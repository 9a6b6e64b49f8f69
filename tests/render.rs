//! Headless renders (EGL surfaceless; Mesa llvmpipe in CI) of a known block of particles, with
//! assertions on the images and buffers themselves: where the fluid is, its colour, the depth
//! smoothing, the normals and every view. The `render` command end to end is
//! tests/render_command.rs. Needs scripts/setup.sh's Mesa packages.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings, Renderer, View};
use fluidlab::sims::pbf::scene::Scene;
use glam::Vec3;

mod gl_probe;

use gl_probe::{FixedParticles, BLOCK};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;

/// Field order is drop order: the renderer's GL objects go before the context.
struct Fixture {
    scene: Scene,
    camera: Camera,
    renderer: Renderer,
    headless: Headless,
}

impl Fixture {
    fn new() -> Fixture {
        let scene = Scene::parse(BLOCK, "block", "render test").expect("valid scene");
        let headless = Headless::new(WIDTH, HEIGHT).expect(
            "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
        );
        let renderer =
            Renderer::new(headless.gl(), &scene, PassClock::Finish).expect("the PBF renderer");
        Fixture {
            camera: Camera::framing(&scene.container),
            scene,
            renderer,
            headless,
        }
    }

    fn render(&mut self, settings: &RenderSettings) -> Image {
        let mut particles = FixedParticles::of(&self.scene);
        self.render_particles(&mut particles, settings)
    }

    fn render_empty(&mut self, settings: &RenderSettings) -> Image {
        let mut particles = FixedParticles::empty(&self.scene);
        self.render_particles(&mut particles, settings)
    }

    fn render_particles(
        &mut self,
        particles: &mut FixedParticles,
        settings: &RenderSettings,
    ) -> Image {
        let (renderer, camera) = (&mut self.renderer, &self.camera);
        self.headless
            .capture(|output| {
                renderer.update_particles(particles, settings)?;
                renderer.draw(camera, settings, output)
            })
            .expect("render without GL errors")
    }

    /// Pixels (x, y from the top) covered by fluid: sphere depth > 0 in the last frame.
    fn fluid_mask(&self) -> Vec<bool> {
        let depth = self.renderer.read_buffer(Buffer::Depth).expect("depth");
        to_top_down(&depth, 1)
            .into_iter()
            .map(|d| d > 0.0)
            .collect()
    }

    /// The fluid block's corners projected to pixels (x, y from the top).
    fn projected_block(&self) -> (Vec3, [f32; 4]) {
        let clip = self.camera.projection(WIDTH as f32 / HEIGHT as f32) * self.camera.view();
        let to_pixel = |p: Vec3| {
            let ndc = clip.project_point3(p);
            Vec3::new(
                (ndc.x * 0.5 + 0.5) * WIDTH as f32,
                (0.5 - ndc.y * 0.5) * HEIGHT as f32,
                0.0,
            )
        };
        let (min, max) = (Vec3::new(0.35, 0.0, 0.35), Vec3::new(0.65, 0.3, 0.65));
        let mut bounds = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for i in 0..8 {
            let corner = Vec3::new(
                if i & 1 == 0 { min.x } else { max.x },
                if i & 2 == 0 { min.y } else { max.y },
                if i & 4 == 0 { min.z } else { max.z },
            );
            let p = to_pixel(corner);
            bounds = [
                bounds[0].min(p.x),
                bounds[1].min(p.y),
                bounds[2].max(p.x),
                bounds[3].max(p.y),
            ];
        }
        (to_pixel(0.5 * (min + max)), bounds)
    }
}

/// GL rows run bottom to top; flips to top-down like images.
fn to_top_down(values: &[f32], channels: usize) -> Vec<f32> {
    values
        .chunks(WIDTH as usize * channels)
        .rev()
        .flatten()
        .copied()
        .collect()
}

fn mean_channel(image: &Image, mask: &[bool], channel: usize) -> f64 {
    let (sum, count) = image
        .pixels()
        .zip(mask)
        .filter(|(_, m)| **m)
        .fold((0.0, 0usize), |(s, c), (p, _)| {
            (s + p[channel] as f64, c + 1)
        });
    sum / count.max(1) as f64
}

fn max_difference_outside(a: &Image, b: &Image, mask: &[bool]) -> u8 {
    a.pixels()
        .zip(b.pixels())
        .zip(mask)
        .filter(|(_, m)| !**m)
        .map(|((p, q), _)| (0..3).map(|c| p[c].abs_diff(q[c])).max().unwrap_or(0))
        .max()
        .unwrap_or(0)
}

/// How far (pixels) FXAA reaches: a pixel on an edge blends samples up to half its 8-pixel
/// search span away, plus one for bilinear filtering.
const FXAA_REACH: i32 = 5;

/// `mask` grown by `radius` pixels (a square neighbourhood): FXAA blends pixels on edges near
/// the fluid's silhouette with samples inside it, so the background that close may change.
fn dilate(mask: &[bool], radius: i32) -> Vec<bool> {
    let (w, h) = (WIDTH as i32, HEIGHT as i32);
    (0..w * h)
        .map(|index| {
            let (x, y) = (index % w, index / w);
            (-radius..=radius).any(|dy| {
                (-radius..=radius).any(|dx| {
                    let (u, v) = (x + dx, y + dy);
                    u >= 0 && v >= 0 && u < w && v < h && mask[(v * w + u) as usize]
                })
            })
        })
        .collect()
}

/// The default settings without the sunlight through the fluid (no shadow, no caustics), so
/// the fluid changes nothing outside its own pixels.
fn unlit() -> RenderSettings {
    RenderSettings {
        fluid_light: false,
        ..RenderSettings::default()
    }
}

#[test]
fn fluid_pixels_lie_where_the_fluid_is_and_the_background_elsewhere() {
    let mut fixture = Fixture::new();
    let settings = unlit();
    let empty = fixture.render_empty(&settings);
    let image = fixture.render(&settings);
    let mask = fixture.fluid_mask();
    let (center, bounds) = fixture.projected_block();

    let at = |x: f32, y: f32| y as usize * WIDTH as usize + x as usize;
    assert!(
        mask[at(center.x, center.y)],
        "the block's centre {center} is not fluid"
    );
    let covered = mask.iter().filter(|m| **m).count();
    assert!(covered > 250, "only {covered} fluid pixels");
    let slack = 4.0; // the sprites' radius reaches past the particle centres
    for (index, _) in mask.iter().enumerate().filter(|(_, m)| **m) {
        let (x, y) = (
            (index % WIDTH as usize) as f32,
            (index / WIDTH as usize) as f32,
        );
        assert!(
            x >= bounds[0] - slack
                && x <= bounds[2] + slack
                && y >= bounds[1] - slack
                && y <= bounds[3] + slack,
            "fluid pixel ({x}, {y}) outside the block's projection {bounds:?}"
        );
    }
    assert_eq!(
        max_difference_outside(&image, &empty, &dilate(&mask, FXAA_REACH)),
        0,
        "background changed"
    );
    let changed = image
        .pixels()
        .zip(empty.pixels())
        .zip(&mask)
        .filter(|(_, m)| **m)
        .filter(|((p, q), _)| (0..3).any(|c| p[c].abs_diff(q[c]) > 8))
        .count();
    // Four in five: the rim of thin water along the silhouette (and the pixels FXAA blends
    // there) differs from the sky and floor behind it by fewer than 8 sRGB levels.
    assert!(
        changed * 5 > covered * 4,
        "only {changed} of {covered} fluid pixels differ from the background"
    );
    assert!(
        mean_channel(&image, &mask, 2) > mean_channel(&image, &mask, 0),
        "water is bluer than red"
    );
}

#[test]
fn a_redder_fluid_colour_reddens_the_fluid_and_not_the_background() {
    let mut fixture = Fixture::new();
    let blue = unlit();
    let red = RenderSettings {
        fluid_color: [0.9, blue.fluid_color[1], blue.fluid_color[2]],
        ..blue.clone()
    };
    let blue_image = fixture.render(&blue);
    let mask = fixture.fluid_mask();
    let red_image = fixture.render(&red);
    let (before, after) = (
        mean_channel(&blue_image, &mask, 0),
        mean_channel(&red_image, &mask, 0),
    );
    assert!(after > before + 10.0, "red {before:.1} → {after:.1}");
    assert_eq!(
        max_difference_outside(&blue_image, &red_image, &dilate(&mask, FXAA_REACH)),
        0
    );
}

#[test]
fn more_red_attenuation_removes_red_from_the_fluid_only() {
    let mut fixture = Fixture::new();
    let clear = RenderSettings {
        fluid_color: [0.0, 0.3, 0.5],
        attenuation: [0.2, 0.5, 0.5],
        ..unlit()
    };
    let absorbing = RenderSettings {
        attenuation: [12.0, 0.5, 0.5],
        ..clear.clone()
    };
    let clear_image = fixture.render(&clear);
    let mask = fixture.fluid_mask();
    let absorbing_image = fixture.render(&absorbing);
    let (before, after) = (
        mean_channel(&clear_image, &mask, 0),
        mean_channel(&absorbing_image, &mask, 0),
    );
    assert!(after < before - 10.0, "red {before:.1} → {after:.1}");
    for channel in [1, 2] {
        let (b, a) = (
            mean_channel(&clear_image, &mask, channel),
            mean_channel(&absorbing_image, &mask, channel),
        );
        assert!(
            (a - b).abs() < 1.0,
            "channel {channel} changed {b:.1} → {a:.1}"
        );
    }
    assert_eq!(
        max_difference_outside(&clear_image, &absorbing_image, &dilate(&mask, FXAA_REACH)),
        0
    );
}

/// Mean |discrete Laplacian| of the depth (metres) over pixels whose four neighbours are fluid:
/// how bumpy the surface is at pixel scale.
fn roughness(depth: &[f32]) -> f64 {
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    let mut sum = 0.0;
    let mut count = 0;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let d = |dx: isize, dy: isize| {
                depth[(y as isize + dy) as usize * w + (x as isize + dx) as usize]
            };
            let around = [d(-1, 0), d(1, 0), d(0, -1), d(0, 1)];
            if d(0, 0) <= 0.0 || around.iter().any(|v| *v <= 0.0) {
                continue;
            }
            sum += (around.iter().sum::<f32>() - 4.0 * d(0, 0)).abs() as f64;
            count += 1;
        }
    }
    assert!(count > 200, "only {count} interior fluid pixels");
    sum / count as f64
}

#[test]
fn more_smoothing_iterations_lower_the_depth_roughness() {
    let mut fixture = Fixture::new();
    let mut measured = Vec::new();
    for iterations in [0, 2, 8] {
        let settings = RenderSettings {
            smoothing_iterations: iterations,
            ..RenderSettings::default()
        };
        fixture.render(&settings);
        let depth = fixture
            .renderer
            .read_buffer(Buffer::SmoothedDepth)
            .expect("depth");
        measured.push((iterations, roughness(&depth)));
    }
    for pair in measured.windows(2) {
        assert!(
            pair[1].1 < pair[0].1,
            "roughness did not drop: {measured:?}"
        );
    }
    assert!(measured[2].1 < 0.5 * measured[0].1, "{measured:?}");
}

#[test]
fn the_bilateral_filter_also_smooths() {
    let mut fixture = Fixture::new();
    let mut measured = Vec::new();
    for iterations in [0, 4] {
        let settings = RenderSettings {
            smoothing_iterations: iterations,
            smoothing_filter: fluidlab::sims::pbf::render::SmoothingFilter::Bilateral,
            ..RenderSettings::default()
        };
        fixture.render(&settings);
        let depth = fixture
            .renderer
            .read_buffer(Buffer::SmoothedDepth)
            .expect("depth");
        measured.push(roughness(&depth));
    }
    assert!(measured[1] < measured[0], "{measured:?}");
}

#[test]
fn normals_are_unit_length_inside_the_fluid() {
    let mut fixture = Fixture::new();
    let image = fixture.render(&RenderSettings {
        view: View::Normals,
        ..RenderSettings::default()
    });
    let normals = to_top_down(
        &fixture
            .renderer
            .read_buffer(Buffer::Normals)
            .expect("normals"),
        4,
    );
    let mask = fixture.fluid_mask();
    let mut inside = 0;
    for (index, normal) in normals.chunks(4).enumerate() {
        assert_eq!(
            normal[3] > 0.0,
            mask[index],
            "normal coverage differs from the fluid at {index}"
        );
        if normal[3] == 0.0 {
            continue;
        }
        inside += 1;
        let length = Vec3::new(normal[0], normal[1], normal[2]).length();
        assert!(
            (length - 1.0).abs() < 1e-3,
            "|n| = {length} at pixel {index}"
        );
        assert!(
            normal[2] > 0.0,
            "normal {normal:?} faces away from the camera"
        );
        // The normals view encodes n · 0.5 + 0.5 in 8 bits.
        let pixel = image.get_pixel(index as u32 % WIDTH, index as u32 / WIDTH);
        let decoded = Vec3::new(
            pixel[0] as f32 / 255.0 * 2.0 - 1.0,
            pixel[1] as f32 / 255.0 * 2.0 - 1.0,
            pixel[2] as f32 / 255.0 * 2.0 - 1.0,
        );
        assert!(
            (decoded.length() - 1.0).abs() < 0.03,
            "decoded |n| = {}",
            decoded.length()
        );
    }
    assert!(inside > 250, "only {inside} fluid pixels");
}

#[test]
fn every_view_renders_without_gl_errors_and_shows_the_fluid() {
    let mut fixture = Fixture::new();
    for view in View::ALL {
        let settings = RenderSettings {
            view,
            ..RenderSettings::default()
        };
        let empty = fixture.render_empty(&settings);
        let image = fixture.render(&settings);
        let differing = image
            .pixels()
            .zip(empty.pixels())
            .filter(|(p, q)| (0..3).any(|c| p[c] != q[c]))
            .count();
        assert!(
            differing > 250,
            "{}: only {differing} pixels show particles",
            view.name()
        );
    }
}

#[test]
fn the_particle_views_colour_by_speed_and_by_density() {
    let mut fixture = Fixture::new();
    let mut mean_colour = |view: View| {
        let settings = RenderSettings {
            view,
            ..RenderSettings::default()
        };
        let empty = fixture.render_empty(&settings);
        let image = fixture.render(&settings);
        let mask: Vec<bool> = image
            .pixels()
            .zip(empty.pixels())
            .map(|(p, q)| p != q)
            .collect();
        [0, 1, 2].map(|c| mean_channel(&image, &mask, c))
    };
    // Speed 0: the blue end of the ramp; 1.1 ρ₀: the orange end.
    let by_speed = mean_colour(View::Particles);
    let by_density = mean_colour(View::Density);
    assert!(
        by_speed[2] > by_speed[0] + 40.0,
        "at rest the particles are blue: {by_speed:?}"
    );
    assert!(
        by_density[0] > by_density[2] + 40.0,
        "dense particles are orange: {by_density:?}"
    );
}
