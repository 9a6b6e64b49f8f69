//! `simulate` exporting ink's fields as NumPy `.npy` files and its ink and flow-map pictures as
//! PNGs: the arrays read back equal the solver's fields and the statistics, the pictures show
//! the ink where it is, and a kind without fields or pictures is refused before anything is
//! written.

mod support;

use fluidlab::commands::simulate::{self, SimulateOptions};
use fluidlab::output::FrameFormat;
use fluidlab::scene::Source;
use fluidlab::sims::ink::InkSim;
use fluidlab::sims::{self, Backend, OpenOptions};
use std::path::Path;
use std::process::{Command, Output};
use support::read_npy;

/// 32 × 24 cells (not square, so a transposed array shows), ink twice as fine, an obstacle,
/// and one splat near the bottom left at t = 0 (stamped in the first step).
const INK: &str = r#"kind = "ink"
description = "export test"
[grid]
cells = [32, 24]
ink_scale = 2
width = 1.0
[params]
dt = 0.02
iterations = 6
pressure_solver = "multigrid"
vorticity = 2.0
[[obstacle]]
center = [0.7, 0.4]
radius = 0.08
[[splat]]
time = 0.0
position = [0.25, 0.2]
velocity = [2.0, 0.5]
radius = 0.06
ink = [1.0, 0.5, 0.2]
"#;

/// A small pbf scene: a kind with neither fields nor pictures.
const PBF: &str = r#"description = "small pbf scene"
[container]
min = [0.0, 0.0, 0.0]
max = [0.2, 0.2, 0.2]
[[fluid]]
shape = "box"
min = [0.0, 0.0, 0.0]
max = [0.08, 0.1, 0.1]
[params]
spacing = 0.02
"#;

const NX: usize = 32;
const NY: usize = 24;
const DX: f64 = 1.0 / 32.0;

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

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1e-30)
}

/// Every recorded frame's arrays have their documented shapes, agree with one another (the
/// divergence and the centre velocity are those of the faces) and with the statistics line
/// (the ink's amount to 1e-4, the RMS divergence after the projection), and the last frame's
/// arrays are the solver's own fields, value for value, after the same steps.
#[test]
fn npy_fields_are_the_solvers_fields_and_agree_with_the_stats() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "ink.toml", INK);
    let out = dir.path().join("out");
    let summary = simulate::run(&SimulateOptions {
        scene: scene.clone(),
        steps: Some(12),
        seconds: None,
        backend: Backend::Auto,
        export: Some(out.clone()),
        every: 5,
        format: FrameFormat::Npy,
        pictures: false,
        stats: Some(out.join("stats.jsonl")),
        overwrite: false,
        quiet: true,
    })
    .unwrap();
    assert_eq!((summary.frames_written, summary.pictures_written), (4, 0));
    let names = [
        "u",
        "v",
        "velocity",
        "pressure",
        "divergence",
        "curl",
        "ink",
        "solid",
    ];
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = [0, 5, 10, 12]
        .iter()
        .flat_map(|step| names.map(|name| format!("frame_{step:05}_{name}.npy")))
        .collect();
    expected.push("stats.jsonl".into());
    expected.sort();
    assert_eq!(files, expected);

    let stats = std::fs::read_to_string(out.join("stats.jsonl")).unwrap();
    let mut inked = false;
    for line in stats.lines() {
        let stats: serde_json::Value = serde_json::from_str(line).unwrap();
        let step = stats["step"].as_u64().unwrap();
        let read = |name: &str| read_npy(&out.join(format!("frame_{step:05}_{name}.npy")));
        let (shape, u) = read("u");
        assert_eq!(shape, [NY, NX + 1]);
        let (shape, v) = read("v");
        assert_eq!(shape, [NY + 1, NX]);
        let (shape, velocity) = read("velocity");
        assert_eq!(shape, [NY, NX, 2]);
        let (shape, divergence) = read("divergence");
        assert_eq!(shape, [NY, NX]);
        let (shape, solid) = read("solid");
        assert_eq!(shape, [NY, NX]);
        let (shape, ink) = read("ink");
        assert_eq!(shape, [2 * NY, 2 * NX, 3]);
        for name in ["pressure", "curl"] {
            assert_eq!(read(name).0, [NY, NX], "{name}");
        }

        // The CFL number: the fastest cell centre × the step (dt 0.02 s, one substep) / dx.
        let fastest = velocity
            .chunks(2)
            .map(|c| f64::from(c[0]).hypot(f64::from(c[1])))
            .fold(0.0, f64::max);
        let cfl = stats["cfl"].as_f64().expect("cfl in the stats");
        assert!(
            (cfl - fastest * 0.02 / DX).abs() <= 1e-5 * (1.0 + cfl),
            "step {step}: cfl {cfl}, fastest {fastest} m/s"
        );
        assert_eq!(step == 0, cfl == 0.0, "step {step}: cfl {cfl}");

        // The ink's amount: Σ over the ink cells (dx/2 wide) and channels.
        let total = ink.iter().map(|&c| f64::from(c)).sum::<f64>() * (DX / 2.0).powi(2);
        let said = stats["ink"].as_f64().unwrap();
        if step == 0 {
            assert_eq!((total, said), (0.0, 0.0));
        } else {
            assert!(said > 1e-4, "step {step}: ink {said}");
            assert!(
                relative(total, said) < 1e-4,
                "step {step}: {total} vs {said}"
            );
            inked = true;
        }

        // Divergence and centre velocity from the faces; the RMS over fluid cells is the
        // statistics' divergence after the projection.
        let (mut sum, mut fluid) = (0.0f64, 0usize);
        for j in 0..NY {
            for i in 0..NX {
                let c = j * NX + i;
                let (u0, u1) = (u[j * (NX + 1) + i], u[j * (NX + 1) + i + 1]);
                let (v0, v1) = (v[j * NX + i], v[(j + 1) * NX + i]);
                assert_eq!(velocity[2 * c], 0.5 * (u0 + u1), "step {step} ({i}, {j})");
                assert_eq!(
                    velocity[2 * c + 1],
                    0.5 * (v0 + v1),
                    "step {step} ({i}, {j})"
                );
                if solid[c] == 1.0 {
                    assert_eq!(divergence[c], 0.0);
                    continue;
                }
                assert_eq!(solid[c], 0.0);
                let expected = (u1 - u0 + v1 - v0) / DX as f32;
                assert!(
                    (divergence[c] - expected).abs() <= 1e-6 * (1.0 + expected.abs()),
                    "step {step} ({i}, {j}): {} vs {expected}",
                    divergence[c]
                );
                sum += f64::from(divergence[c]).powi(2);
                fluid += 1;
            }
        }
        let rms = (sum / fluid as f64).sqrt();
        let said = stats["divergence_after"].as_f64().unwrap();
        assert!(
            relative(rms, said) < 1e-4 || (rms - said).abs() < 1e-9,
            "step {step}: {rms} vs {said}"
        );
        // The obstacle: a disc of radius 0.08 m, about π·0.08²/dx² ≈ 20 cells.
        let solids = solid.iter().filter(|&&s| s == 1.0).count();
        assert!((12..=30).contains(&solids), "{solids} solid cells");
    }
    assert!(inked);

    // The same steps again, in this process: the last frame's arrays are the solver's fields.
    let source = Source::parse(INK, "ink", &scene).unwrap();
    let mut sim = sims::open(&source, &OpenOptions::default()).unwrap();
    for _ in 0..12 {
        sim.step().unwrap();
    }
    let ink_sim = sims::downcast::<InkSim>(sim.as_mut()).unwrap();
    let (flow, ink_field) = ink_sim.solver.state().unwrap();
    let flow = flow.view();
    let read = |name: &str| read_npy(&out.join(format!("frame_00012_{name}.npy"))).1;
    assert_eq!(read("pressure"), flow.p.data);
    assert!(flow.p.data.iter().any(|&p| p != 0.0));
    assert_eq!(read("u"), flow.u.data);
    assert_eq!(read("v"), flow.v.data);
    let ink = read("ink");
    for (k, channel) in ink_field.channels.iter().enumerate() {
        let exported: Vec<f32> = ink.iter().skip(k).step_by(3).copied().collect();
        assert_eq!(exported, channel.data, "ink channel {k}");
    }
    let solid: Vec<bool> = read("solid").iter().map(|&s| s == 1.0).collect();
    assert_eq!(solid, flow.solid);
}

/// `--pictures` writes each recorded frame's ink (one pixel per ink cell) and flow map (one per
/// cell) beside the table: blank before the splat; after it, inked pixels where the splat is
/// (bottom left, rows counted from the top) and paper elsewhere, and flow moving right there.
#[test]
fn pictures_show_the_ink_and_the_flow_where_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "ink.toml", INK);
    let out = dir.path().join("out");
    let output = fluidlab(&[
        "simulate",
        &scene,
        "--steps",
        "1",
        "--export",
        out.to_str().unwrap(),
        "--pictures",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("wrote 2 csv frames") && stdout.contains("wrote 4 pictures"),
        "{stdout}"
    );
    assert!(out.join("frame_00001.csv").is_file());
    let open = |name: &str| image::open(out.join(name)).unwrap().to_rgba8();
    let paper = [255, 255, 255, 255];
    let rest = [128, 128, 255, 255];
    // The obstacle is drawn grey in every view, about 20 cells (80 ink pixels) of it.
    let grey = [115, 115, 115, 255];

    let ink = open("frame_00000_ink.png");
    assert_eq!(ink.dimensions(), (2 * NX as u32, 2 * NY as u32));
    assert!(ink.pixels().all(|p| p.0 == paper || p.0 == grey));
    let solid = ink.pixels().filter(|p| p.0 == grey).count();
    assert!((60..=110).contains(&solid), "{solid} obstacle pixels");
    let flow = open("frame_00000_flow.png");
    assert_eq!(flow.dimensions(), (NX as u32, NY as u32));
    assert!(flow.pixels().all(|p| p.0 == rest || p.0 == grey));

    // The splat's centre (0.25, 0.2) m: ink pixel (16, 48 − 12.8), flow pixel (8, 24 − 6.4).
    let ink = open("frame_00001_ink.png");
    assert_eq!(ink.dimensions(), (2 * NX as u32, 2 * NY as u32));
    let centre = ink.get_pixel(16, 35).0;
    assert!(
        centre[0] < 60 && centre[1] < 160 && centre[2] < 230,
        "{centre:?}"
    );
    let inked = ink.pixels().filter(|p| p.0 != paper && p.0 != grey).count();
    assert!(inked > 50, "{inked} inked pixels");
    // Three radii (0.18 m) from the splat no ink is stamped: the top and the right stay paper
    // (or the obstacle's grey).
    for (x, y, p) in ink.enumerate_pixels() {
        if x >= 32 || y < 12 {
            assert!(p.0 == paper || p.0 == grey, "({x}, {y}): {:?}", p.0);
        }
    }
    let flow = open("frame_00001_flow.png");
    let moving = flow.get_pixel(8, 17).0;
    assert!(moving[0] > 150, "red above ½ where u > 0: {moving:?}");
    assert!(flow.pixels().filter(|p| p.0 != rest).count() > 10);
}

/// `--format npy` and `--pictures` on a kind without fields or pictures (pbf) fail at once,
/// naming the option and the kind, and create nothing; `--pictures` needs `--export`; a stats
/// file named like a field file in the export directory is refused.
#[test]
fn npy_and_pictures_are_refused_for_a_kind_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let pbf = write(dir.path(), "pbf.toml", PBF);
    let ink = write(dir.path(), "ink.toml", INK);
    let out = dir.path().join("out");
    let stats = dir.path().join("stats.jsonl");
    let export = out.to_str().unwrap();
    for (args, said) in [
        (
            &["--format", "npy"][..],
            "--format npy: the pbf kind (scene pbf) has no fields to write as .npy",
        ),
        (
            &["--pictures"],
            "--pictures: the pbf kind (scene pbf) draws no pictures",
        ),
    ] {
        let output = fluidlab(
            &[
                &["simulate", &pbf, "--steps", "1", "--export", export][..],
                &["--stats", stats.to_str().unwrap(), "-q"],
                args,
            ]
            .concat(),
        );
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(!out.exists() && !stats.exists(), "{args:?} wrote something");
    }
    let output = fluidlab(&["simulate", &ink, "--steps", "1", "--pictures"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--export <DIR>"));
    let output = fluidlab(&[
        "simulate",
        &ink,
        "--steps",
        "1",
        "--format",
        "npy",
        "--export",
        export,
        "--stats",
        out.join("frame_00001_pressure.npy").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("frame_00001_pressure.npy is a frame file name there"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// `bench` on an ink scene gives each modelled stage's effective bandwidth: the bytes the
/// kernels' traffic model says it moves per step (`sims::ink::bandwidth`) over its time; the
/// multigrid pressure and a splat without buoyancy are not modelled and carry none.
#[test]
fn bench_gives_each_modelled_stage_its_bandwidth() {
    use fluidlab::commands::bench::{self, BenchOptions};
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "ink.toml", INK);
    let report = bench::run(
        &BenchOptions {
            scene,
            particles: None,
            steps: 3,
            warmup: 1,
            backend: Backend::Cpu,
            stage_timing: true,
        },
        false,
    )
    .unwrap();
    let n = (NX * NY) as f64;
    // Per velocity cell (ink ×2: 4 ink cells per cell): advect (MacCormack) 60 + 60 × 4, curl
    // 12, vorticity 22, divergence 13, subtract_gradient 22 + the divergence after, 13; the
    // scene's obstacle adds `close_walls`' three masks, 3, to curl and subtract_gradient.
    let bytes = [
        ("advect", 300.0),
        ("curl", 12.0 + 3.0),
        ("vorticity", 22.0),
        ("divergence", 13.0),
        ("subtract_gradient", 35.0 + 3.0),
    ];
    for (name, per_cell) in bytes {
        let stage = report.stages.iter().find(|s| s.stage == name).unwrap();
        let expected = per_cell * n / (stage.ms * 1e-3) / 1e9;
        let said = stage.gb_per_s.expect(name);
        assert!(
            (said - expected).abs() < 1e-9 * expected,
            "{name}: {said} GB/s, {expected} expected"
        );
    }
    for name in ["splat", "pressure"] {
        let stage = report.stages.iter().find(|s| s.stage == name).unwrap();
        assert_eq!(stage.gb_per_s, None, "{name}");
    }
    let json = report.json();
    assert!(
        json["stages"][0]["gb_per_s"].as_f64().unwrap() > 0.0,
        "{json}"
    );
}
