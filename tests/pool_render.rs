//! The pool's renderer through the headless EGL context (Mesa llvmpipe in CI), fed surface
//! textures made here: the caustics texture holds the light through the surface and a bump
//! focuses it, the under-water camera sees the sky only inside Snell's window and the water's
//! tint, land is drawn where fixed nodes are, every view draws, and the render command writes
//! the frames.

use fluidlab::commands::render::{self as render_command, RenderOptions};
use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::sims::pool::render::{CausticsImage, DrawScene, VIEWS};
use fluidlab::sims::Backend;
use glam::Vec3;

#[path = "support/pool_fixture.rs"]
mod pool_fixture;
use pool_fixture::*;

fn calm() -> Vec<[f32; 4]> {
    surface(|_, _| 0.0, |_, _| false)
}

/// A camera high above the pool's centre looking straight down.
fn from_above() -> Camera {
    Camera {
        target: Vec3::new(1.0, 0.0, 1.0),
        yaw: 0.0,
        pitch: 89f32.to_radians(),
        distance: 3.2,
    }
}

/// The world-space direction of the ray through pixel (x, y from the top).
fn pixel_ray(camera: &Camera, x: u32, y: u32) -> Vec3 {
    camera
        .ray([x as f32 + 0.5, y as f32 + 0.5], [WIDTH, HEIGHT])
        .1
}

fn pixel_of(camera: &Camera, point: Vec3) -> (u32, u32) {
    let clip = camera.projection(WIDTH as f32 / HEIGHT as f32) * camera.view();
    let ndc = clip.project_point3(point);
    (
        ((ndc.x * 0.5 + 0.5) * WIDTH as f32) as u32,
        ((0.5 - ndc.y * 0.5) * HEIGHT as f32) as u32,
    )
}

/// The mean of the values of the floor plane's points (x, z) with `inside(x, z)`, and their
/// largest relative deviation from it.
fn region_stats(caustics: &CausticsImage, inside: impl Fn(f32, f32) -> bool) -> (f64, f64) {
    let d = caustics.domain;
    let n = caustics.resolution;
    let mut values = Vec::new();
    for row in 0..n {
        for column in 0..n {
            let x = d.origin[0] + (column as f32 + 0.5) / n as f32 * d.extent[0];
            let z = d.origin[1] + (row as f32 + 0.5) / n as f32 * d.extent[1];
            if inside(x, z) {
                values.push(f64::from(caustics.values[row * n + column]));
            }
        }
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let deviation = values
        .iter()
        .map(|v| (v - mean).abs() / mean)
        .fold(0.0, f64::max);
    (mean, deviation)
}

/// Calm water lights the floor evenly at 1 (calm water's irradiance, by definition) and the
/// texture's total is the light through the surface: the pool's area, less the strips the
/// rim (0.05 · size above the water) shades from a slanting sun.
#[test]
fn calm_water_lights_the_floor_evenly_with_all_the_light_through_the_surface() {
    let mut fixture = Fixture::new();
    let camera = from_above();
    fixture.render(&calm(), &camera, &scene([0.0, 1.0, 0.0]));
    let overhead = fixture.caustics();
    let total = overhead.total();
    assert!(
        (total / f64::from(SIZE * SIZE) - 1.0).abs() < 0.01,
        "overhead sun: {total} m² of light, the pool is {} m²",
        SIZE * SIZE
    );
    let inner = |x: f32, z: f32| (0.05..1.95).contains(&x) && (0.05..1.95).contains(&z);
    let (mean, deviation) = region_stats(&overhead, inner);
    assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
    assert!(
        deviation < 0.02,
        "calm water's caustics vary by {deviation}"
    );

    let light = Vec3::new(2.0, 2.0, -1.0).normalize();
    fixture.render(&calm(), &camera, &scene(light.to_array()));
    let slanting = fixture.caustics();
    let rim = 0.05 * SIZE;
    let shaded = |along: f32| rim * along.abs() / light.y;
    let expected = f64::from((SIZE - shaded(light.x)) * (SIZE - shaded(light.z)));
    let total = slanting.total();
    assert!(
        (total / expected - 1.0).abs() < 0.02,
        "slanting sun: {total} m² of light, expected {expected}"
    );
    // Calm water's light lands displaced along the refracted beam, evenly.
    let r = refract_down(light);
    let shift = [DEPTH * r.x / -r.y, DEPTH * r.z / -r.y];
    let lit = |x: f32, z: f32| {
        let (sx, sz) = (x - shift[0], z - shift[1]);
        (0.2..1.8).contains(&sx) && (0.2..1.8).contains(&sz)
    };
    let (mean, deviation) = region_stats(&slanting, lit);
    assert!(
        (mean - 1.0).abs() < 0.01 && deviation < 0.02,
        "{mean} ± {deviation}"
    );
    // Where no light can land (beyond the shift, in the walls' shadow) it is dark.
    assert_eq!(slanting.at(1.0 + shift[0] + 1.1, 1.0), 0.0);
}

/// GLSL's refract(−light, up, 1/1.333).
fn refract_down(light: Vec3) -> Vec3 {
    let eta = 1.0 / 1.333;
    let cos = -light.y;
    let k = 1.0 - eta * eta * (1.0 - cos * cos);
    eta * -light - (eta * cos + k.sqrt()) * Vec3::Y
}

/// A bump in the surface is a lens: it gathers light into a bright spot beneath it, and the
/// total stays the light through the surface.
#[test]
fn a_bump_focuses_the_light_and_keeps_its_total() {
    let mut fixture = Fixture::new();
    let bump = surface(
        |x, z| 0.05 * (-((x - 1.0).powi(2) + (z - 1.0).powi(2)) / 0.04).exp(),
        |_, _| false,
    );
    fixture.render(&bump, &from_above(), &scene([0.0, 1.0, 0.0]));
    let caustics = fixture.caustics();
    let total = caustics.total();
    assert!(
        (total / f64::from(SIZE * SIZE) - 1.0).abs() < 0.03,
        "{total} m² of light through a 4 m² pool"
    );
    let max = caustics.values.iter().copied().fold(0.0f32, f32::max);
    let inside = |x: f32, z: f32| (0.0..SIZE).contains(&x) && (0.0..SIZE).contains(&z);
    let (mean, _) = region_stats(&caustics, inside);
    assert!(max as f64 > 4.0 * mean, "max {max}, mean {mean}");
    // The bright spot is under the bump (a paraxial lens of focal gain ≈ 7 here); the flank
    // around it gave its light away.
    assert!(caustics.at(1.0, 1.0) > 5.0, "{}", caustics.at(1.0, 1.0));
    let ring =
        |x: f32, z: f32| (0.2..0.35).contains(&((x - 1.0).powi(2) + (z - 1.0).powi(2)).sqrt());
    let (ring_mean, _) = region_stats(&caustics, ring);
    assert!(ring_mean < 0.95, "around the spot {ring_mean}");
}

/// From under water the sky shows only inside Snell's window (48.6° from the vertical); past
/// it the surface mirrors the pool (total internal reflection). Seen from the same eye in
/// pools of two depths, the window's pixels stay while the mirror's change with the floor.
/// From just above, the same view is not tinted by the water.
#[test]
fn under_water_the_sky_shows_only_inside_snells_window() {
    let mut fixture = Fixture::new();
    let eye = Vec3::new(1.0, -0.3, 1.3);
    let (pitch, distance) = (-45f32.to_radians(), 0.2);
    let direction = Vec3::new(0.0, pitch.sin(), pitch.cos());
    let camera = Camera {
        target: eye - direction * distance,
        yaw: 0.0,
        pitch,
        distance,
    };
    assert!((camera.eye() - eye).length() < 1e-5);
    let light = [0.3, 1.0, 0.2];
    let deep = fixture.render(&calm(), &camera, &scene(light));
    let shallow_scene = DrawScene {
        depth: 0.5,
        ..scene(light)
    };
    let shallow = fixture.render(&calm(), &camera, &shallow_scene);
    let (mut window, mut mirror) = (Vec::new(), Vec::new());
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let ray = pixel_ray(&camera, x, y);
            if ray.y <= 0.0 {
                continue;
            }
            let angle = ray.y.acos().to_degrees();
            let difference: f64 = (0..3)
                .map(|c| f64::from(deep.get_pixel(x, y)[c]) - f64::from(shallow.get_pixel(x, y)[c]))
                .map(f64::abs)
                .sum::<f64>()
                / 3.0;
            if angle < 35.0 {
                window.push(difference);
            } else if angle > 55.0 {
                mirror.push(difference);
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(window.len() > 500 && mirror.len() > 500);
    assert!(
        mean(&window) < 3.0,
        "the sky through the window changed with the floor: {}",
        mean(&window)
    );
    assert!(
        mean(&mirror) > 12.0,
        "past the critical angle the surface should mirror the pool: {}",
        mean(&mirror)
    );

    // Under water, looking along the pool at the far wall: the water's tint (red absorbed;
    // without it the tiles' own red / blue is 0.78).
    let along = Camera {
        target: Vec3::new(1.0, -0.5, 0.3),
        yaw: 0.0,
        pitch: 0.0,
        distance: 1.5,
    };
    let below = fixture.render(&calm(), &along, &scene(light));
    let above_camera = Camera {
        target: Vec3::new(1.0, 0.25, 0.3),
        ..along
    };
    let above = fixture.render(&calm(), &above_camera, &scene(light));
    let redness = |image: &Image| {
        let (mut red, mut blue) = (0.0, 0.0);
        for p in image.pixels() {
            red += f64::from(p[0]);
            blue += f64::from(p[2]);
        }
        red / blue
    };
    assert!(
        redness(&below) < 0.85 * redness(&above) && redness(&below) < 0.6,
        "below {} above {}",
        redness(&below),
        redness(&above)
    );
}

/// Fixed nodes are drawn as land (sand, rock: red over blue), water elsewhere (blue over red).
#[test]
fn land_is_drawn_where_the_fixed_nodes_are() {
    let mut fixture = Fixture::new();
    let (cx, cz, radius) = (0.6, 0.7, 0.25);
    let island = |x: f32, z: f32| (x - cx).powi(2) + (z - cz).powi(2) < radius * radius;
    let camera = from_above();
    let image = fixture.render(
        &surface(|_, _| 0.0, island),
        &camera,
        &scene([0.3, 1.0, 0.2]),
    );
    let warmth = |x: f32, z: f32, y: f32| {
        let (px, py) = pixel_of(&camera, Vec3::new(x, y, z));
        let p = image.get_pixel(px, py);
        f32::from(p[0]) - f32::from(p[2])
    };
    let land_y = 0.04 * SIZE;
    for (dx, dz) in [(0.0, 0.0), (0.12, 0.0), (0.0, -0.12), (-0.1, 0.08)] {
        let w = warmth(cx + dx, cz + dz, land_y);
        assert!(
            w > 20.0,
            "land at ({}, {}): red − blue {w}",
            cx + dx,
            cz + dz
        );
    }
    for (x, z) in [(1.4, 1.4), (1.0, 0.4), (0.6, 1.3), (1.5, 0.8)] {
        let w = warmth(x, z, 0.0);
        assert!(w < -20.0, "water at ({x}, {z}): red − blue {w}");
    }
}

fn spread(image: &Image) -> f64 {
    let values: Vec<f64> = image.pixels().map(|p| f64::from(p[1])).collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64).sqrt()
}

/// Every view draws without a GL error, each a picture of its own; the fine detail changes the
/// water seen close by.
#[test]
fn every_view_draws_its_own_picture() {
    let mut fixture = Fixture::new();
    let ripples = surface(
        |x, z| 0.01 * (12.0 * x).sin() * (9.0 * z).cos(),
        |x, z| (x - 1.5).powi(2) + (z - 1.5).powi(2) < 0.04,
    );
    let camera = Camera::framing(&fluidlab::scene::Aabb::new(
        [0.0, -DEPTH, 0.0],
        [SIZE, 0.1 * SIZE, SIZE],
    ));
    let mut images: Vec<Image> = Vec::new();
    for (view, name) in VIEWS.iter().enumerate() {
        let image = fixture.render(
            &ripples,
            &camera,
            &DrawScene {
                view,
                ..scene([2.0, 2.0, -1.0])
            },
        );
        assert!(spread(&image) > 5.0, "{} view: a flat picture", name);
        for (other, earlier) in images.iter().enumerate() {
            assert!(
                image != *earlier,
                "{} and {} views look the same",
                name,
                VIEWS[other]
            );
        }
        let passes: Vec<&str> = fixture
            .renderer
            .as_ref()
            .unwrap()
            .pass_times()
            .into_iter()
            .filter(|(_, time)| time.is_some())
            .map(|(name, _)| name)
            .collect();
        let expected: &[&str] = match *name {
            "surface" => &["caustics", "sky", "pool", "land", "surface", "present"],
            "wireframe" => &["caustics", "sky", "pool", "land", "wireframe", "present"],
            "nodes" => &["caustics", "sky", "pool", "land", "nodes", "present"],
            _ => &["caustics", "caustics_view"],
        };
        let mut sorted = passes.clone();
        sorted.sort_unstable();
        let mut wanted = expected.to_vec();
        wanted.sort_unstable();
        assert_eq!(sorted, wanted, "{} view's passes", name);
        images.push(image);
    }
    // Close by, where its 2–7 cm ripples span pixels (from the framing camera a pixel covers
    // about 2 cm: they fade out there, `tests/pool_render_detail.rs`).
    let close = Camera {
        target: Vec3::new(0.5, 0.0, 0.5),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let [plain, detailed] = [false, true].map(|detail| {
        fixture.render(
            &ripples,
            &close,
            &DrawScene {
                detail,
                ..scene([2.0, 2.0, -1.0])
            },
        )
    });
    assert!(detailed != plain, "the fine detail changed nothing");
}

/// `fluidlab render` on a pool scene writes its frames, with the pool's passes timed.
#[test]
fn the_render_command_writes_pool_frames() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let scene_file = directory.path().join("pool.toml");
    std::fs::write(
        &scene_file,
        "kind = \"pool\"\n[pool]\nnodes = 48\n[drops]\nrandom = 4\namplitude = 0.02\n",
    )
    .expect("scene file");
    let out = directory.path().join("frames");
    let report = render_command::run(&RenderOptions {
        scene: scene_file.display().to_string(),
        frames: 2,
        size: (96, 64),
        out: out.clone(),
        overwrite: false,
        view: None,
        backend: Backend::Cpu,
        steps_per_frame: 2,
        camera: None,
        spheres: false,
        foam: false,
        timings: false,
        quiet: true,
    })
    .expect("render command");
    assert_eq!(report.files.len(), 2);
    for file in &report.files {
        let image = image::open(file).expect("readable PNG").to_rgba8();
        assert_eq!(image.dimensions(), (96, 64));
        assert!(spread(&image) > 5.0, "{}: a flat picture", file.display());
    }
    let names: Vec<&str> = report.pass_ms.iter().map(|(pass, _)| *pass).collect();
    // No node is land: the land pass is left out.
    assert_eq!(names, ["caustics", "sky", "pool", "surface", "present"]);
}

/// `fluidlab render` with a camera orbited below the surface, its eye far enough out to be
/// under the ground (the audit's `--camera 30,-20,3.5,1,0,1` and `30,-10,2.0,1,0,1`), draws
/// the view from under water — tinted by the water, red absorbed, in every part of the
/// picture — and not the deck from beneath, the walls' outer faces or the sky below the
/// horizon.
#[test]
fn an_orbit_below_the_surface_stays_in_the_water() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let scene_file = directory.path().join("pool.toml");
    std::fs::write(&scene_file, "kind = \"pool\"\n[pool]\nnodes = 64\n").expect("scene file");
    for (index, pose) in ["30,-20,3.5,1,0,1", "30,-10,2.0,1,0,1"].iter().enumerate() {
        let out = directory.path().join(format!("frames{index}"));
        let report = render_command::run(&RenderOptions {
            scene: scene_file.display().to_string(),
            frames: 1,
            size: (96, 64),
            out,
            overwrite: false,
            view: None,
            backend: Backend::Cpu,
            steps_per_frame: 1,
            camera: Some(render_command::parse_camera(pose).unwrap()),
            spheres: false,
            foam: false,
            timings: false,
            quiet: true,
        })
        .expect("render command");
        let image = image::open(&report.files[0]).expect("PNG").to_rgba8();
        // Each quarter of the picture: under water the red is absorbed (the tiles' own red /
        // blue is 0.78, the deck's stone and the ground are redder still).
        for (qx, qy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            let (mut red, mut blue) = (0.0, 0.0);
            for y in qy * 32..qy * 32 + 32 {
                for x in qx * 48..qx * 48 + 48 {
                    let p = image.get_pixel(x, y);
                    red += f64::from(p[0]);
                    blue += f64::from(p[2]);
                }
            }
            assert!(
                red / blue < 0.6,
                "--camera {pose}, quarter ({qx}, {qy}): red / blue {} is not the water's tint",
                red / blue
            );
        }
    }
}

/// Open edges are drawn without walls: around the pool the calm sea goes on (blue over red,
/// where the walled pool has its stone deck, red over blue), and no rim shades the floor, so
/// a slanting sun's light through the surface is the whole pool's area (the walls' strips
/// take 7 % of it).
#[test]
fn open_edges_draw_the_sea_going_on_without_walls() {
    let mut fixture = Fixture::new();
    let camera = from_above();
    let light = Vec3::new(2.0, 2.0, -1.0).normalize().to_array();
    let deck = |image: &Image| {
        let (px, py) = pixel_of(&camera, Vec3::new(-0.3, 0.05 * SIZE, 1.0));
        let mut difference = 0.0;
        for y in py - 2..=py + 2 {
            for x in px - 2..=px + 2 {
                let p = image.get_pixel(x, y);
                difference += f64::from(p[0]) - f64::from(p[2]);
            }
        }
        difference / 25.0
    };
    let walled = fixture.render(&calm(), &camera, &scene(light));
    let walled_light = fixture.caustics().total();
    let open_scene = DrawScene {
        open: true,
        ..scene(light)
    };
    let open = fixture.render(&calm(), &camera, &open_scene);
    let open_light = fixture.caustics().total();
    // Measured: +2.8 on the stone (its albedo's red − blue, fogged), −84 on the sea.
    assert!(
        deck(&walled) > 0.0,
        "the deck's stone: red − blue {}",
        deck(&walled)
    );
    assert!(deck(&open) < -40.0, "the sea: red − blue {}", deck(&open));
    let area = f64::from(SIZE * SIZE);
    assert!(
        (open_light / area - 1.0).abs() < 0.02,
        "open sea: {open_light} m² of light through a {area} m² tile"
    );
    assert!(walled_light < 0.95 * area, "walls: {walled_light} m²");
}
