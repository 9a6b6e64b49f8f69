//! Scene files: presets load, and every kind of bad input gets a message naming file, line,
//! key and value.

use fluidlab::scene::{Shape, PRESETS};
use fluidlab::sims::pbf::cpu::{self, CpuSolver};
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::{Aabb, InitialState, Params, World};

const GOOD: &str = r#"description = "test"

[container]
min = [0.0, 0.0, 0.0]
max = [1.6, 1.0, 0.6]

[[fluid]]
shape = "box"
min = [0.0, 0.0, 0.0]
max = [0.4, 0.8, 0.6]

[[obstacle]]
shape = "sphere"
center = [0.8, 0.1, 0.3]
radius = 0.1

[params]
spacing = 0.02
rest_density = 1000.0
iterations = 4
substeps = 1
dt = 0.0166
gravity = [0.0, -9.81, 0.0]
relaxation = 1e-6
scorr_k = 0.1
scorr_n = 4
scorr_dq = 0.2
xsph_c = 0.01
vorticity = 1e-4
"#;

/// Parses GOOD with `from` replaced by `to`, expecting an error; returns its message.
fn error_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "test setup: {from:?} not in the scene");
    let text = GOOD.replacen(from, to, 1);
    match Scene::parse(&text, "bad", "bad.toml") {
        Ok(_) => panic!("accepted a scene with {to:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn the_issue_example_parses_with_every_key() {
    let scene = Scene::parse(GOOD, "good", "good.toml").unwrap();
    assert_eq!(scene.fluids.len(), 1);
    assert_eq!(scene.obstacles.len(), 1);
    assert_eq!(scene.params.substeps, 1);
    assert_eq!(scene.params.vorticity, 1e-4);
    assert_eq!(
        scene.params.kernel_radius, 0.04,
        "h defaults to 2 × spacing"
    );
    assert_eq!(scene.seed().len(), 20 * 40 * 30);
    // An obstacle inside a fluid body carves it: no particle centre within radius + s/2.
    let carved = GOOD.replacen("center = [0.8, 0.1, 0.3]", "center = [0.2, 0.3, 0.3]", 1);
    let scene = Scene::parse(&carved, "carved", "carved.toml").unwrap();
    let seeded = scene.seed();
    let hole = 4.0 / 3.0 * std::f32::consts::PI * 0.11f32.powi(3) / 0.02f32.powi(3);
    let missing = (24_000 - seeded.len()) as f32;
    assert!(
        (missing / hole - 1.0).abs() < 0.1,
        "{missing} particles carved, expected about {hole}"
    );
    assert!(seeded
        .positions
        .iter()
        .all(|p| (*p - glam::Vec3A::new(0.2, 0.3, 0.3)).length() >= 0.11));
    assert_eq!(scene.particle_count(), seeded.len() as u64);
}

#[test]
fn every_preset_is_valid_and_the_required_ones_exist() {
    for name in ["dam-break", "double-dam-break", "drop", "tall-tank"] {
        assert!(
            PRESETS.iter().any(|p| p.kind == "pbf" && p.name == name),
            "missing preset {name}"
        );
    }
    for preset in PRESETS.iter().filter(|p| p.kind == "pbf") {
        let name = preset.name;
        let scene = Scene::load(name).unwrap_or_else(|e| panic!("{e}"));
        assert!(!scene.description.is_empty(), "{name} has no description");
        assert!(scene.particle_count() > 1000, "{name}");
    }
    let drop = Scene::load("drop").unwrap();
    assert!(drop
        .fluids
        .iter()
        .any(|f| matches!(f.shape, Shape::Sphere { .. })));
}

#[test]
fn a_scene_file_loads_by_path_and_a_missing_one_lists_the_presets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, GOOD).unwrap();
    let scene = Scene::load(path.to_str().unwrap()).unwrap();
    assert_eq!(scene.name, "mine");
    let error = Scene::load("no-such-scene").unwrap_err().to_string();
    assert!(
        error.contains("no-such-scene") && error.contains("dam-break"),
        "{error}"
    );
}

#[test]
fn an_unknown_key_names_its_line() {
    let error = error_with("xsph_c = 0.01", "xsph_c = 0.01\nviscosity = 0.2");
    assert!(error.starts_with("bad.toml:29:"), "{error}");
    assert!(error.contains("unknown field `viscosity`"), "{error}");
    let error = error_with("radius = 0.1", "radius = 0.1\ncolour = 3");
    assert!(
        error.starts_with("bad.toml:16:") && error.contains("colour"),
        "{error}"
    );
}

#[test]
fn a_wrong_type_names_its_line_and_value() {
    let error = error_with("iterations = 4", "iterations = \"four\"");
    assert!(error.starts_with("bad.toml:20:"), "{error}");
    assert!(
        error.contains("four") && error.contains("iterations"),
        "{error}"
    );
    let error = error_with("max = [0.4, 0.8, 0.6]", "max = [0.4, 0.8]");
    assert!(error.starts_with("bad.toml:10:"), "{error}");
}

#[test]
fn negative_or_zero_sizes_are_refused() {
    let error = error_with("radius = 0.1", "radius = -0.1");
    assert_eq!(
        error,
        "bad.toml:15: obstacle[0].radius: must be positive, got -0.1"
    );
    let error = error_with("spacing = 0.02", "spacing = 0.0");
    assert_eq!(
        error,
        "bad.toml:18: params.spacing: must be between 0.0001 and 1 m, got 0.0"
    );
    let error = error_with("dt = 0.0166", "dt = -0.01");
    assert!(
        error.starts_with("bad.toml:22: params.dt:") && error.contains("-0.01"),
        "{error}"
    );
    let error = error_with("max = [1.6, 1.0, 0.6]", "max = [1.6, 0.0, 0.6]");
    assert!(
        error.starts_with("bad.toml:5: container.max: must exceed container.min"),
        "{error}"
    );
    let error = error_with("max = [0.4, 0.8, 0.6]", "max = [0.0, 0.8, 0.6]");
    assert!(
        error.starts_with("bad.toml:10: fluid[0].max: must exceed min"),
        "{error}"
    );
    let error = error_with("iterations = 4", "iterations = 0");
    assert!(
        error.contains("params.iterations") && error.contains("got 0"),
        "{error}"
    );
}

#[test]
fn fluid_outside_the_container_is_refused() {
    let error = error_with("max = [0.4, 0.8, 0.6]", "max = [0.4, 1.2, 0.6]");
    assert!(
        error.starts_with("bad.toml:7: fluid[0]: the box spans"),
        "{error}"
    );
    assert!(
        error.contains("outside the container") && error.contains("1.2"),
        "{error}"
    );
}

#[test]
fn overlapping_fluid_bodies_are_refused() {
    let second =
        "[[fluid]]\nshape = \"sphere\"\ncenter = [0.45, 0.5, 0.3]\nradius = 0.1\n\n[params]";
    let error = error_with("[params]", second);
    assert!(
        error.starts_with("bad.toml:17: fluid[1]: this sphere overlaps fluid[0]"),
        "{error}"
    );
    // Touching bodies are fine.
    let touching = GOOD.replacen(
        "[params]",
        "[[fluid]]\nshape = \"box\"\nmin = [0.4, 0.0, 0.0]\nmax = [0.6, 0.2, 0.6]\n\n[params]",
        1,
    );
    Scene::parse(&touching, "ok", "ok.toml").unwrap();
}

#[test]
fn shape_keys_must_match_the_shape() {
    let error = error_with("shape = \"sphere\"", "shape = \"cone\"");
    assert!(
        error.contains("obstacle[0].shape: unknown shape \"cone\""),
        "{error}"
    );
    let error = error_with("radius = 0.1", "");
    assert!(
        error.contains("obstacle[0]: a sphere needs `radius`"),
        "{error}"
    );
    let error = error_with(
        "max = [0.4, 0.8, 0.6]",
        "max = [0.4, 0.8, 0.6]\nradius = 0.3",
    );
    assert!(
        error.contains("fluid[0].radius: a box takes min, max, not `radius`"),
        "{error}"
    );
}

#[test]
fn particle_counts_beyond_memory_are_refused_before_allocating() {
    let scene = Scene::parse(GOOD, "good", "good.toml").unwrap();
    let error = scene.check_memory(&cpu::FOOTPRINT, 1 << 20).unwrap_err();
    assert_eq!(error.key, "params.spacing");
    let count = scene.particle_count();
    assert!(
        error.message.contains(&count.to_string()),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("MiB") && error.message.contains("1.0 MiB is available"),
        "{}",
        error.message
    );
    scene.check_memory(&cpu::FOOTPRINT, 1 << 30).unwrap();
    // Beyond the hard limit: found from the lattice size alone, nothing seeded (a wide kernel
    // keeps the grid within its own limit).
    let error = error_with("spacing = 0.02", "spacing = 0.0005\nkernel_radius = 0.002");
    assert!(
        error.contains("params.spacing") && error.contains("beyond the limit"),
        "{error}"
    );
}

// The hardening table: inputs that once panicked, hung, exhausted memory, imploded or ran
// silently wrong, each now refused before any work that scales with it.

/// The dam-break preset with `from` replaced by `to`, parsed; the error message, or the time
/// it took to refuse along with it.
fn dam_break_error(from: &str, to: &str) -> (String, std::time::Duration) {
    let preset = PRESETS.iter().find(|p| p.name == "dam-break").unwrap();
    assert!(preset.source.contains(from), "test setup: {from:?}");
    let text = preset.source.replacen(from, to, 1);
    let started = std::time::Instant::now();
    let error = match Scene::parse(&text, "mine", "mine.toml") {
        Ok(_) => panic!("accepted {to:?}"),
        Err(error) => error.to_string(),
    };
    (error, started.elapsed())
}

#[test]
fn a_container_of_2_to_the_64_grid_cells_is_refused_not_wrapped_to_0() {
    let text = "[container]\nmin = [0.0, 0.0, 0.0]\nmax = [262144, 131072, 131072]\n\
                [[fluid]]\nshape = \"box\"\nmin = [0.0, 0.0, 0.0]\nmax = [0.5, 0.5, 0.5]\n\
                [params]\nspacing = 0.03125\n";
    let error = Scene::parse(text, "big", "big.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "big.toml:1: container: the container holds 18446744073709551616 grid cells at \
         kernel_radius 0.0625 (the neighbour grid's cell size), beyond the limit of 1073741824; \
         enlarge kernel_radius or shrink the container"
    );
    // The solver refuses such a world itself, whoever builds it.
    let world = World {
        container: Aabb::new([0.0; 3], [262144.0, 131072.0, 131072.0]),
        obstacles: vec![],
    };
    let mut params = Params::with_spacing(0.03125);
    params.calibrate_mass();
    let error = CpuSolver::new(world, params, &InitialState::default())
        .err()
        .expect("refused");
    assert!(error.to_string().contains("grid cells"), "{error}");
}

#[test]
fn a_huge_kernel_radius_is_refused_before_the_mass_calibration() {
    for value in ["1e9", "inf", "1e300", "9223372036854775807", "0.5"] {
        let (error, took) = dam_break_error(
            "spacing = 0.02",
            &format!("spacing = 0.02\nkernel_radius = {value}"),
        );
        assert!(
            error.starts_with(
                "mine.toml:14: params.kernel_radius: must be between 1.5 and 4 × spacing"
            ),
            "{error}"
        );
        assert!(took.as_secs_f64() < 0.5, "{value}: {took:?}");
    }
}

#[test]
fn kernel_radius_equal_to_spacing_is_refused_and_the_bounds_hold() {
    let (error, _) = dam_break_error("spacing = 0.02", "spacing = 0.02\nkernel_radius = 0.02");
    assert!(
        error.contains("params.kernel_radius") && error.contains("got 0.02"),
        "{error}"
    );
    // At the lower bound the fluid has most of its stiffness (zero at h = spacing); at the
    // upper bound the Jacobi relaxation is still near 0.1.
    let mut params = Params::with_spacing(0.02);
    let stiffness_at = |params: &mut Params, ratio: f32| {
        params.kernel_radius = ratio * 0.02;
        params.calibrate_mass();
        params.validate().unwrap();
        params.rest_stiffness()
    };
    let usual = stiffness_at(&mut params, 2.0);
    assert!(stiffness_at(&mut params, 1.5) > 0.85 * usual);
    stiffness_at(&mut params, 4.0);
    assert!(params.jacobi_relaxation() > 0.09);
    params.kernel_radius = 0.02 * 1.49;
    params.calibrate_mass();
    assert!(params.particle_mass.is_nan());
    assert_eq!(params.validate().unwrap_err().key, "kernel_radius");
}

#[test]
fn neighbour_lists_count_in_the_memory_estimate() {
    let scene = Scene::load("dam-break").unwrap();
    assert_eq!(
        scene.neighbour_slots(),
        45,
        "32 lattice neighbours at h = 2 spacings"
    );
    let usual = scene.memory_need(&cpu::FOOTPRINT, scene.particle_count());
    // 30000 particles × 45 entries × 20 bytes: the lists outweigh the particle state.
    assert_eq!(usual.neighbour_bytes, 30_000 * 45 * 20);
    assert!(usual.neighbour_bytes > usual.particle_bytes);
    let mut wide = scene.clone();
    wide.params.kernel_radius = 4.0 * wide.params.spacing;
    wide.params.calibrate_mass();
    wide.validate().unwrap();
    let wide_need = wide.memory_need(&cpu::FOOTPRINT, wide.particle_count());
    assert!(wide.neighbour_slots() > 350, "{}", wide.neighbour_slots());
    // What fits at h = 2 spacings but not at 4 blames the kernel radius, with the real sizes.
    let available = u64::try_from(usual.total()).unwrap() * 2;
    scene.check_memory(&cpu::FOOTPRINT, available).unwrap();
    let error = wide.check_memory(&cpu::FOOTPRINT, available).unwrap_err();
    assert_eq!(error.key, "params.kernel_radius", "{}", error.message);
    assert!(
        error.message.contains("30000 particles")
            && error
                .message
                .contains(&format!("{} neighbour entries", wide.neighbour_slots())),
        "{}",
        error.message
    );
    assert!(wide_need.total() > u128::from(available));
}

#[test]
fn vectors_must_hold_exactly_three_numbers() {
    let (error, _) = dam_break_error("gravity = [0.0, -9.81, 0.0]", "gravity = [0, -9.81, 0, 7]");
    assert_eq!(
        error,
        "mine.toml:18: params.gravity: expected 3 numbers [x, y, z], got 4: [0.0, -9.81, 0.0, 7.0]"
    );
    let (error, _) = dam_break_error("max = [1.6, 1.0, 0.6]", "max = [1.6, 1.0, 0.6, 1, 2]");
    assert!(
        error.starts_with("mine.toml:5: container.max: expected 3 numbers [x, y, z], got 5"),
        "{error}"
    );
    let error = error_with(
        "max = [0.4, 0.8, 0.6]",
        "max = [0.4, 0.8, 0.6]\nvelocity = [1.0]",
    );
    assert!(
        error.starts_with("bad.toml:11: fluid[0].velocity: expected 3 numbers"),
        "{error}"
    );
}

#[test]
fn a_fluid_body_inside_obstacles_is_refused() {
    // One obstacle covering the body: decided from the bounds.
    let covered = "[[obstacle]]\nshape = \"box\"\nmin = [0.0, 0.0, 0.0]\nmax = [0.6, 0.9, 0.6]\n";
    let (error, _) = dam_break_error("[params]", &format!("{covered}\n[params]"));
    assert_eq!(
        error,
        "mine.toml:7: fluid[0]: the box lies entirely inside obstacles: it would seed no particle"
    );
    // Two obstacles covering it together: found by the lattice walk.
    let halves = "[[obstacle]]\nshape = \"box\"\nmin = [0.0, 0.0, 0.0]\nmax = [0.3, 0.9, 0.6]\n\
                  [[obstacle]]\nshape = \"box\"\nmin = [0.25, 0.0, 0.0]\nmax = [0.6, 0.9, 0.6]\n";
    let (error, _) = dam_break_error("[params]", &format!("{halves}\n[params]"));
    assert!(
        error.contains("fluid[0]: the box lies entirely inside obstacles"),
        "{error}"
    );
}

#[test]
fn values_outside_their_physical_ranges_are_refused_by_key() {
    for (from, to, key) in [
        (
            "gravity = [0.0, -9.81, 0.0]",
            "gravity = [1e30, 1e30, 1e30]",
            "params.gravity",
        ),
        (
            "gravity = [0.0, -9.81, 0.0]",
            "gravity = [0.0, -2000.0, 0.0]",
            "params.gravity",
        ),
        ("dt = 0.0166", "dt = 1e-30", "params.dt"),
        ("dt = 0.0166", "dt = 0.5", "params.dt"),
        (
            "rest_density = 1000.0",
            "rest_density = 1e30",
            "params.rest_density",
        ),
        (
            "relaxation = 1e-6",
            "relaxation = 1e30",
            "params.relaxation",
        ),
        ("vorticity = 0.01", "vorticity = nan", "params.vorticity"),
        ("xsph_c = 0.01", "xsph_c = 1.5", "params.xsph_c"),
        ("substeps = 2", "substeps = 5000", "params.substeps"),
        (
            "iterations = 4",
            "iterations = 4\ncfl = 1e-30",
            "params.cfl",
        ),
        (
            "iterations = 4",
            "iterations = 4\nscorr_k = 7",
            "params.scorr_k",
        ),
    ] {
        let (error, _) = dam_break_error(from, to);
        let line = to.lines().last().unwrap();
        assert!(error.contains(&format!(": {key}: ")), "{line}: {error}");
        let value = line.split(" = ").nth(1).unwrap();
        let value = value.trim_start_matches('[').split(',').next().unwrap();
        let shown = value.replace("nan", "NaN");
        assert!(error.contains(&shown), "{line}: {error}");
    }
    let error = error_with(
        "max = [0.4, 0.8, 0.6]",
        "max = [0.4, 0.8, 0.6]\nvelocity = [0.0, -500.0, 0.0]",
    );
    assert!(
        error.contains("fluid[0].velocity: must be finite with a speed of at most 100 m/s"),
        "{error}"
    );
    // Cells within the limit but far from the origin for f32 positions.
    let error = error_with("min = [0.0, 0.0, 0.0]", "min = [-400.0, 0.0, 0.0]");
    assert!(
        error.starts_with("bad.toml:4: container.min: [-400, 0, 0] lies more than 16384 spacings"),
        "{error}"
    );
    // Too many tables.
    let many =
        "[[obstacle]]\nshape = \"sphere\"\ncenter = [1.2, 0.8, 0.3]\nradius = 0.01\n".repeat(65);
    let error = error_with("[params]", &format!("{many}[params]"));
    assert!(
        error.contains("obstacle[64]: a scene has at most 64 [[obstacle]] tables"),
        "{error}"
    );
}

#[test]
fn a_tiny_spacing_is_blamed_on_spacing_not_the_derived_mass() {
    let (error, _) = dam_break_error("spacing = 0.02", "spacing = 1e-9");
    assert_eq!(
        error,
        "mine.toml:13: params.spacing: must be between 0.0001 and 1 m, got 1e-9"
    );
}

#[test]
fn a_huge_container_is_blamed_on_the_container_with_its_real_size() {
    let (error, _) = dam_break_error("max = [1.6, 1.0, 0.6]", "max = [1e6, 1e6, 1e6]");
    assert!(
        error.starts_with(
            "mine.toml:3: container: the container holds 15625000000000000000000 grid cells"
        ),
        "{error}"
    );
    // Within the cell limit but beyond memory: the grid's share, not a wrapped number.
    let (text, _) = (
        PRESETS
            .iter()
            .find(|p| p.name == "dam-break")
            .unwrap()
            .source
            .replacen("max = [1.6, 1.0, 0.6]", "max = [40.0, 20.0, 20.0]", 1),
        (),
    );
    let scene = Scene::parse(&text, "wide", "wide.toml").unwrap();
    assert_eq!(scene.grid_cells(), 1000 * 500 * 500);
    let error = scene.check_memory(&cpu::FOOTPRINT, 1 << 30).unwrap_err();
    assert_eq!(error.key, "container", "{}", error.message);
    assert!(
        error.message.contains("250000000 grid cells") && error.message.contains("GiB"),
        "{}",
        error.message
    );
}

#[test]
fn a_particle_target_beyond_the_limit_is_refused_at_once() {
    let scene = Scene::load("drop").unwrap();
    let started = std::time::Instant::now();
    for particles in [0, 1_000_000_000_000, u64::MAX] {
        let error = scene.with_particle_target(particles).unwrap_err();
        assert_eq!(error.key, "--particles");
        assert!(error.message.contains("1073741824"), "{}", error.message);
    }
    assert!(started.elapsed().as_secs_f64() < 0.1);
    let rescaled = scene.with_particle_target(5000).unwrap();
    let count = rescaled.particle_count() as f64;
    assert!((count / 5000.0 - 1.0).abs() < 0.1, "{count}");
}

#[test]
fn docs_state_the_range_of_every_parameter() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scenes.md")).unwrap();
    let table_row = |key: &str| {
        docs.lines()
            .find(|l| l.starts_with(&format!("| `{key}` |")))
            .unwrap_or_else(|| panic!("docs/scenes.md has no range row for `{key}`"))
            .to_string()
    };
    // Every key of `[params]`, as the unknown-key error lists them.
    let error = error_with("xsph_c = 0.01", "xsph_c = 0.01\nnone_such = 1");
    let keys = error
        .split("expected one of ")
        .nth(1)
        .unwrap()
        .split(" (in")
        .next()
        .unwrap();
    for key in keys.split(", ") {
        table_row(key.trim_matches(|c| c == '`' || c == ' '));
    }
    for (key, low, high) in [
        ("spacing", *Params::SPACING.start(), *Params::SPACING.end()),
        (
            "kernel_radius",
            *Params::KERNEL_RATIO.start(),
            *Params::KERNEL_RATIO.end(),
        ),
        (
            "rest_density",
            *Params::REST_DENSITY.start(),
            *Params::REST_DENSITY.end(),
        ),
        ("dt", *Params::DT.start(), *Params::DT.end()),
        ("cfl", *Params::CFL.start(), *Params::CFL.end()),
        ("gravity", 0.0, Params::MAX_GRAVITY),
        (
            "vorticity",
            *Params::FRACTION.start(),
            *Params::FRACTION.end(),
        ),
    ] {
        let row = table_row(key);
        for bound in [low, high] {
            assert!(
                row.contains(&bound.to_string()),
                "{key}: {bound} not in {row}"
            );
        }
    }
}
