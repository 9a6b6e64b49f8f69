//! Scene files: presets load, and every kind of bad input gets a message naming file, line,
//! key and value.

use fluidlab::scene::{Shape, PRESETS};
use fluidlab::sims::pbf::scene::Scene;

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
    assert!(
        error.starts_with("bad.toml:18: params.spacing: must be a positive number, got 0"),
        "{error}"
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
    let error = scene.check_memory("CPU solver", 400, 1 << 20).unwrap_err();
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
    scene.check_memory("CPU solver", 400, 1 << 30).unwrap();
    // Beyond the hard limit: found from the lattice size alone, nothing seeded.
    let error = error_with("spacing = 0.02", "spacing = 0.0002");
    assert!(
        error.contains("params.spacing") && error.contains("beyond the limit"),
        "{error}"
    );
}
