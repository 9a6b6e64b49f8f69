//! The pool through the command line: `simulate` exports heights as `.npy` and a picture, its
//! statistics carry the energy, volume and the wave front; `bench` reports node-steps per
//! second and the stages; bad scenes are refused with the file, line and key.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use support::read_npy;

/// 65² nodes over 2 m, c = 0.5 m/s, no damping, walls, one drop at the centre at t = 0 and an
/// island.
const POOL: &str = r#"kind = "pool"
description = "export test"
[pool]
nodes = 65
size = 2.0
[surface]
wave_speed = 0.5
damping = 0.0
dt = 0.02
[[drop]]
time = 0.0
position = [1.0, 1.0]
radius = 0.1
amplitude = 0.02
[[island]]
center = [0.3, 1.7]
radius = 0.15
"#;

fn fluidlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .args(args)
        .output()
        .expect("run fluidlab")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// The heights read back from `.npy` hold the drop's volume (walls conserve it) and agree with
/// the statistics line; the island's nodes are fixed and flat; the picture is the grid's size.
#[test]
fn simulate_exports_heights_pictures_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "pool.toml", POOL);
    let out = dir.path().join("out");
    let stats = dir.path().join("stats.jsonl");
    let args = [
        "simulate",
        &scene,
        "--steps",
        "50",
        "--every",
        "25",
        "--export",
        out.to_str().unwrap(),
        "--format",
        "npy",
        "--pictures",
        "--stats",
        stats.to_str().unwrap(),
        "--quiet",
    ];
    let output = fluidlab(&args);
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&stats)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let (shape, height) = read_npy(&out.join("frame_00050_height.npy"));
    assert_eq!(shape, [65, 65]);
    let h = 2.0f64 / 64.0;
    let volume: f64 = height.iter().map(|&u| f64::from(u) * h * h).sum();
    let last = &lines[2];
    let stated = last["volume"].as_f64().unwrap();
    assert!((volume - stated).abs() < 1e-9, "{volume} vs {stated}");
    // The drop's volume, a·πr², stays (the island does not touch the drop's reach yet).
    let dropped = 0.02 * std::f64::consts::PI * 0.01;
    assert!(
        (stated / dropped - 1.0).abs() < 0.02,
        "{stated} vs {dropped}"
    );
    let highest = height.iter().fold(0.0f32, |m, u| m.max(u.abs()));
    assert_eq!(f64::from(highest), last["max_height"].as_f64().unwrap());
    // By t = 1 s the front has spread about c·t from the centre.
    let front = last["front_radius"].as_f64().unwrap();
    assert!((0.4..0.9).contains(&front), "front at {front} m");
    assert!(last["energy"].as_f64().unwrap() > 0.0);
    let (_, fixed) = read_npy(&out.join("frame_00050_fixed.npy"));
    let land: Vec<usize> = (0..fixed.len()).filter(|&k| fixed[k] == 1.0).collect();
    assert!(land.len() > 50, "{} island nodes", land.len());
    assert!(land.iter().all(|&k| height[k] == 0.0));
    let (shape, _) = read_npy(&out.join("frame_00050_offset.npy"));
    assert_eq!(shape, [65, 65, 2]);
    let picture = image::open(out.join("frame_00050_height.png")).unwrap();
    assert_eq!((picture.width(), picture.height()), (65, 65));
}

#[test]
fn bench_reports_node_steps_and_the_stages() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "pool.toml", POOL);
    let output = fluidlab(&[
        "bench",
        &scene,
        "--steps",
        "5",
        "--warmup",
        "1",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(output.status.success(), "{output:?}");
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&output.stdout).trim()).unwrap();
    assert_eq!(report["nodes"], 65 * 65);
    assert!(report["node_steps_per_second"].as_f64().unwrap() > 0.0);
    let stages: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["disturb", "forces", "integrate", "edges"]);
    // The table's header says what a pool frame does (it printed PBF's "3.0 substeps × 0.0
    // iterations (3 substeps, no iterations)"), the last line that the count is of substeps.
    let output = fluidlab(&[
        "bench",
        &scene,
        "--steps",
        "2",
        "--warmup",
        "0",
        "--backend",
        "cpu",
    ]);
    assert!(output.status.success(), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("substeps (forces, integrate, edges in each, c·dt/h ≤ 0.5 sets their count")
            && !table.contains("iterations (")
            && table.contains("node-substeps/s (nodes × substeps per second)"),
        "{table}"
    );
}

/// A bad value names the file, the line and the key; an unstable scene is refused with the
/// substeps it would need; an island with no area, or islands leaving no water, are refused.
#[test]
fn bad_pool_scenes_name_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            POOL.replace("wave_speed = 0.5", "wave_speed = -1"),
            ":7: surface.wave_speed: must be in (0, 1000] m/s, got -1",
        ),
        (
            POOL.replace(
                "radius = 0.15",
                "radius = 0.15\noutline = [[0, 0], [1, 0], [1, 1]]",
            ),
            ":15: island[0]: is a disc (center and radius) or a polygon (outline)",
        ),
        (
            POOL.replace("position = [1.0, 1.0]", "position = [1.0, 3.0]"),
            ":12: drop[0].position: [1, 3] lies outside the pool [0, 2] × [0, 2] m",
        ),
        (
            POOL.replace("nodes = 65", "nodes = 4096")
                .replace("wave_speed = 0.5", "wave_speed = 900"),
            "surface.wave_speed: 900 m/s over a 0.0004884005 m spacing needs",
        ),
        (
            POOL.replace("[surface]", "[surface]\nmodel = \"membrane\""),
            "unknown variant `membrane`, expected `wave` or `springs`",
        ),
        // Islands that are none, or all (the old code ran both: no island; no water).
        (
            POOL.replace(
                "center = [0.3, 1.7]\nradius = 0.15",
                "outline = [[0, 0], [1, 1], [2, 2]]",
            ),
            "island[0].outline: encloses no area: its corners lie on one line",
        ),
        (
            POOL.replace(
                "center = [0.3, 1.7]\nradius = 0.15",
                "center = [1.0, 1.0]\nradius = 1.5",
            ),
            "island[0]: the islands cover the whole 2 × 2 m pool: no water is left",
        ),
    ];
    for (text, expected) in cases {
        let scene = write(dir.path(), "bad.toml", &text);
        let output = fluidlab(&["simulate", &scene, "--steps", "1", "--quiet"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
    }
}

/// Every pool preset opens, runs a second and stays finite.
#[test]
fn pool_presets_run() {
    for preset in ["pool", "pond", "islands", "open-sea", "rain", "spring-pool"] {
        let output = fluidlab(&[
            "simulate",
            preset,
            "--seconds",
            "1",
            "--quiet",
            "--backend",
            "cpu",
        ]);
        assert!(output.status.success(), "{preset}: {output:?}");
    }
}

/// `render` says how the far taps were chosen for a scene without `[light] far_taps` (the GL
/// renderer decides) and keeps it to itself under `--quiet`, like every other line it prints.
#[test]
fn render_names_the_far_taps_choice_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "pool.toml", POOL);
    for quiet in [false, true] {
        let out = dir.path().join(format!("frames-{quiet}"));
        let mut args = vec!["render", &scene, "--frames", "1", "--size", "64x36"];
        args.extend(["--backend", "cpu", "--out", out.to_str().unwrap()]);
        if quiet {
            args.push("--quiet");
        }
        let output = fluidlab(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{output:?}");
        assert_eq!(
            stderr.contains("pool: far taps"),
            !quiet,
            "quiet {quiet}: {stderr}"
        );
    }
}
