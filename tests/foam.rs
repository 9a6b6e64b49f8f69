//! The `foam` stage on the CPU solver: a dam break makes no diffuse particles before its front
//! hits the far wall and many after, near that wall (white pixels there); a calm pool
//! makes none. The stage's own rules (lifetimes, classes, the cap, the seed) are tested in
//! `src/sims/pbf/foam.rs`.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pbf::backend;
use fluidlab::sims::pbf::foam::{Foam, FoamSettings};
use fluidlab::sims::pbf::render::{RenderSettings, Renderer};
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::Backend;
use glam::{Vec3, Vec4};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 180;

fn foam_on() -> FoamSettings {
    FoamSettings {
        enabled: true,
        ..FoamSettings::default()
    }
}

/// Pixels whiter than in the render without foam (their darkest channel, the whiteness, up
/// by more than 20 levels, none darker), and their mean column. (40 levels until issue 14's
/// audit, when foam was drawn as unlit discs of radiance 1.1; lit, and fainter one by one,
/// the foam of this test raises 116 pixels by more than 20 levels with no channel darker,
/// and 5 by more than 40.)
fn white_pixels(with: &[u8], without: &[u8]) -> (usize, f64) {
    let (mut count, mut columns) = (0usize, 0.0f64);
    let whiteness = |p: &[u8]| i32::from(p[0].min(p[1]).min(p[2]));
    for (k, (a, b)) in with.chunks(4).zip(without.chunks(4)).enumerate() {
        if whiteness(a) - whiteness(b) > 20 && (0..3).all(|c| a[c] >= b[c]) {
            count += 1;
            columns += (k % WIDTH as usize) as f64;
        }
    }
    (count, columns / count.max(1) as f64)
}

#[test]
fn a_dam_break_foams_only_after_hitting_the_far_wall_and_near_it() {
    let scene = Scene::load("dam-break")
        .expect("the preset")
        .with_particle_target(6000)
        .expect("rescaled");
    let mut solver = backend::create(&scene, Backend::Cpu)
        .expect("the CPU solver")
        .solver;
    let settings = foam_on();
    let mut foam = Foam::default();
    let far_wall = scene.container.max.x - scene.params.spacing;
    let front = |solver: &dyn fluidlab::sims::pbf::Solver| {
        let s = solver.snapshot().expect("snapshot");
        s.positions.iter().map(|p| p.x).fold(f32::MIN, f32::max)
    };
    let (mut frames, mut born_before) = (0, 0);
    // Up to the step that brings the front to the far wall (about 0.4 s in), whose foam
    // stage runs after the picture below.
    loop {
        solver.step().expect("step");
        frames += 1;
        assert!(frames < 60, "the front never reached the far wall");
        if front(solver.as_ref()) >= far_wall {
            break;
        }
        born_before += solver
            .foam(&mut foam, &settings, scene.params.dt, &scene.world())
            .expect("foam");
    }
    let impact = frames as f32 * scene.params.dt;
    assert!(impact > 0.25, "impact at {impact} s");
    assert_eq!(
        (born_before, foam.particles.len()),
        (0, 0),
        "diffuse particles before the impact at {impact} s"
    );
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        Renderer::new(headless.gl(), &scene, PassClock::Finish).expect("the PBF renderer");
    let camera = Camera::framing(&scene.container);
    let render = RenderSettings::default();
    let mut picture =
        |renderer: &mut Renderer, solver: &mut dyn fluidlab::sims::pbf::Solver, foam: &Foam| {
            let mut records = Vec::new();
            foam.records(&mut records);
            let mut images = Vec::new();
            for records in [records, Vec::new()] {
                let image = headless
                    .capture(|output| {
                        renderer.update_particles(solver, &render)?;
                        renderer.update_foam(&records)?;
                        renderer.draw(&camera, &render, output)
                    })
                    .expect("render without GL errors");
                images.push(image.into_raw());
            }
            white_pixels(&images[0], &images[1])
        };
    // No picture before the impact: its pool is empty (asserted above), so a render with its
    // records and one without would be the same draw and could not differ; the stage's
    // births are the check there. After the impact the picture must show the foam.
    // A quarter of a second after it.
    for k in 0..16 {
        if k > 0 {
            solver.step().expect("step");
        }
        solver
            .foam(&mut foam, &settings, scene.params.dt, &scene.world())
            .expect("foam");
    }
    let alive = foam.particles.len();
    let mean_x = foam.particles.iter().map(|d| d.position.x).sum::<f32>() / alive.max(1) as f32;
    eprintln!(
        "impact {impact} s; 0.25 s later {alive} alive {:?}, mean x {mean_x}",
        foam.counts()
    );
    assert!(alive > 100, "{alive} alive");
    assert!(mean_x > 0.7 * scene.container.max.x, "mean x {mean_x}");
    let (white, column) = picture(&mut renderer, solver.as_mut(), &foam);
    // The columns where the near (x = 0) and far walls are seen, at mid height.
    let column_of = |x: f32| {
        let c = 0.5 * (scene.container.min + scene.container.max);
        let clip = camera.projection(WIDTH as f32 / HEIGHT as f32)
            * camera.view()
            * Vec4::from((Vec3::new(x, c.y, c.z), 1.0));
        ((clip.x / clip.w) * 0.5 + 0.5) as f64 * WIDTH as f64
    };
    let (near, far) = (
        column_of(scene.container.min.x),
        column_of(scene.container.max.x),
    );
    eprintln!("{white} white pixels, mean column {column}; walls at {near}, {far}");
    assert!(white > 50, "{white} white pixels");
    assert!(
        (column - far).abs() < (column - near).abs(),
        "mean column {column}"
    );
}

#[test]
fn a_calm_pool_makes_no_foam() {
    let scene = Scene::parse(
        r#"
        [container]
        min = [0.0, 0.0, 0.0]
        max = [0.6, 0.3, 0.6]
        [[fluid]]
        shape = "box"
        min = [0.0, 0.0, 0.0]
        max = [0.6, 0.1, 0.6]
        [params]
        spacing = 0.025
        [foam]
        enabled = true
        "#,
        "calm pool",
        "foam test",
    )
    .expect("valid scene");
    assert!(scene.foam.enabled);
    let mut solver = backend::create(&scene, Backend::Cpu)
        .expect("the CPU solver")
        .solver;
    let mut foam = Foam::default();
    let mut born = 0;
    for _ in 0..40 {
        solver.step().expect("step");
        born += solver
            .foam(&mut foam, &scene.foam, scene.params.dt, &scene.world())
            .expect("foam");
    }
    assert_eq!(born, 0);
}

#[test]
fn bad_foam_keys_are_named_with_their_line() {
    let text = |foam: &str| {
        format!(
            "[container]\nmin = [0.0, 0.0, 0.0]\nmax = [0.6, 0.3, 0.6]\n[[fluid]]\nshape = \"box\"\n\
             min = [0.0, 0.0, 0.0]\nmax = [0.6, 0.1, 0.6]\n[foam]\n{foam}\n"
        )
    };
    for (foam, expected) in [
        (
            "lifetime = -1.0",
            "mine.toml:9: foam.lifetime: must lie in (0, 600] s, got -1",
        ),
        (
            "trapped_air_rate = 2e4",
            "mine.toml:9: foam.trapped_air_rate: must lie in",
        ),
        (
            "max_count = 20000000",
            "mine.toml:9: foam.max_count: must be at most",
        ),
        ("lifetme = 1.0", "unknown field `lifetme`"),
    ] {
        let error = Scene::parse(&text(foam), "mine", "mine.toml").expect_err(foam);
        let message = error.to_string();
        assert!(message.contains(expected), "{foam}: {message}");
    }
    let scene = Scene::parse(&text("lifetime = 3.5\nseed = 7"), "mine", "mine.toml").unwrap();
    assert_eq!((scene.foam.lifetime, scene.foam.seed), (3.5, 7));
    assert_eq!(scene.foam.max_count, FoamSettings::default().max_count);
}

/// The scene `scripts/device-check.sh` runs the CUDA solver under compute-sanitizer with (two
/// slabs meeting head-on under a sphere and a box, at 20 000 particles, 2 steps): its foam
/// stage must have diffuse particles to work on from the first step, or the sanitizer checks
/// the foam kernels only on an empty pool (as the dam break at rest gave it). On the CPU the
/// first step fills the pool and the second advects it, with both obstacles in the loop.
#[test]
fn the_sanitizer_scene_fills_the_foam_pool_in_its_first_step() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/foam-sanitizer.toml");
    let scene = Scene::load(path)
        .expect("the sanitizer scene")
        .with_particle_target(20_000)
        .expect("rescaled");
    assert!(scene.foam.enabled, "[foam] enabled in {path}");
    assert_eq!(scene.obstacles.len(), 2, "a sphere and a box in {path}");
    let mut solver = backend::create(&scene, Backend::Cpu)
        .expect("the CPU solver")
        .solver;
    let mut foam = Foam::default();
    let mut born = Vec::new();
    for _ in 0..2 {
        solver.step().expect("step");
        born.push(
            solver
                .foam(&mut foam, &scene.foam, scene.params.dt, &scene.world())
                .expect("foam"),
        );
    }
    let counts = foam.counts();
    eprintln!("born per step {born:?}, alive [spray, foam, bubbles] {counts:?}");
    assert!(born[0] >= 100, "born per step {born:?}");
    assert!(counts.iter().sum::<usize>() >= 100, "alive {counts:?}");
}
