//! The `fluidlab` binary end to end: simulate with export in both formats, stats, scenes, bench.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SCENE: &str = r#"description = "small test scene"
[container]
min = [0.0, 0.0, 0.0]
max = [0.4, 0.4, 0.2]
[[fluid]]
shape = "box"
min = [0.0, 0.0, 0.0]
max = [0.16, 0.2, 0.2]
[[fluid]]
shape = "sphere"
center = [0.3, 0.25, 0.1]
radius = 0.06
velocity = [0.0, -1.0, 0.0]
[params]
spacing = 0.02
"#;

fn fluidlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .args(args)
        .output()
        .expect("run fluidlab")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write_scene(dir: &Path) -> String {
    let path = dir.join("small.toml");
    std::fs::write(&path, SCENE).unwrap();
    path.to_string_lossy().into_owned()
}

fn frame_files(dir: &Path, extension: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(extension))
        .collect();
    names.sort();
    names
}

/// Reads a binary PLY written by `simulate`: (ids, x, y, z, vx, vy, vz, density) per vertex.
fn read_ply(path: &Path) -> Vec<(u32, [f32; 7])> {
    let bytes = std::fs::read(path).unwrap();
    let end = bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .expect("header")
        + 11;
    let header = std::str::from_utf8(&bytes[..end]).unwrap();
    assert!(
        header.starts_with("ply\nformat binary_little_endian 1.0\n"),
        "{header}"
    );
    let properties: Vec<&str> = header
        .lines()
        .filter(|l| l.starts_with("property"))
        .collect();
    assert_eq!(
        properties,
        [
            "property uint id",
            "property float x",
            "property float y",
            "property float z",
            "property float vx",
            "property float vy",
            "property float vz",
            "property float density"
        ]
    );
    let count: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element vertex "))
        .unwrap()
        .parse()
        .unwrap();
    let body = &bytes[end..];
    assert_eq!(body.len(), count * 32, "body size");
    body.chunks(32)
        .map(|r| {
            let f = |k: usize| f32::from_le_bytes(r[4 + 4 * k..8 + 4 * k].try_into().unwrap());
            (
                u32::from_le_bytes(r[..4].try_into().unwrap()),
                [f(0), f(1), f(2), f(3), f(4), f(5), f(6)],
            )
        })
        .collect()
}

#[test]
fn simulate_exports_csv_frames_and_json_stats() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let out = dir.path().join("csv");
    let stats = dir.path().join("stats.jsonl");
    let stdout = ok(&fluidlab(&[
        "simulate",
        &scene,
        "--steps",
        "5",
        "--export",
        out.to_str().unwrap(),
        "--every",
        "2",
        "--stats",
        stats.to_str().unwrap(),
    ]));
    assert!(stdout.contains("wrote 4 csv frames"), "{stdout}");
    // Step 0, every 2nd step, and the last step.
    assert_eq!(
        frame_files(&out, ".csv"),
        [
            "frame_00000.csv",
            "frame_00002.csv",
            "frame_00004.csv",
            "frame_00005.csv"
        ]
    );
    assert!(
        frame_files(&out, ".partial").is_empty(),
        "temporary files left behind"
    );

    let mut particle_count = None;
    for name in frame_files(&out, ".csv") {
        let text = std::fs::read_to_string(out.join(&name)).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("id,x,y,z,vx,vy,vz,density"));
        let rows: Vec<Vec<f64>> = lines
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        assert!(rows
            .iter()
            .all(|r| r.len() == 8 && r.iter().all(|v| v.is_finite())));
        // Ids are 0..N in order in every frame.
        assert!(
            rows.iter().enumerate().all(|(k, r)| r[0] == k as f64),
            "{name}: ids out of order"
        );
        assert!(rows
            .iter()
            .all(|r| (0.0..=0.4).contains(&r[1]) && r[7] > 0.0));
        assert_eq!(*particle_count.get_or_insert(rows.len()), rows.len());
    }
    // 8 × 10 × 10 lattice box + the sphere's lattice points: its bounds hold 6 points per
    // axis at ±0.5, ±1.5, ±2.5 spacings from the centre, kept within 3 spacings.
    let half = [-2.5f32, -1.5, -0.5, 0.5, 1.5, 2.5];
    let mut inside = 0;
    for a in half {
        for b in half {
            inside += half
                .iter()
                .filter(|&&c| a * a + b * b + c * c <= 9.0)
                .count();
        }
    }
    let expected = 800 + inside;
    assert_eq!(particle_count, Some(expected));

    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&stats)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON"))
        .collect();
    assert_eq!(lines.len(), 4);
    let keys = [
        "step",
        "time",
        "particles",
        "density_error_mean",
        "density_error_max",
        "kinetic_energy",
        "center_of_mass",
        "bbox_min",
        "bbox_max",
        "neighbors_mean",
        "neighbors_max",
        "compression_mean",
        "compression_max",
        "bottom_compression",
        "surface_height",
        "solve_iterations",
        "solve_compression",
        "coarse_residual",
        "step_ms",
    ];
    for line in &lines {
        for key in keys {
            assert!(line.get(key).is_some(), "stats line lacks {key}: {line}");
        }
        assert_eq!(line["particles"].as_u64(), particle_count.map(|n| n as u64));
        assert_eq!(line["center_of_mass"].as_array().unwrap().len(), 3);
    }
    assert_eq!(
        lines
            .iter()
            .map(|l| l["step"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [0, 2, 4, 5]
    );
    // The falling sphere has kinetic energy from the start; the box gains it as it collapses.
    assert!(lines[0]["kinetic_energy"].as_f64().unwrap() > 0.0);
    assert!(
        lines[3]["kinetic_energy"].as_f64().unwrap() > lines[0]["kinetic_energy"].as_f64().unwrap()
    );
    assert!(lines[3]["neighbors_mean"].as_f64().unwrap() > 10.0);
}

#[test]
fn simulate_exports_binary_ply_with_stable_ids() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let out = dir.path().join("ply");
    ok(&fluidlab(&[
        "simulate",
        &scene,
        "--seconds",
        "0.05",
        "--export",
        out.to_str().unwrap(),
        "--format",
        "ply",
        "-q",
    ]));
    // 0.05 s at dt 1/60 → 3 steps (rounded up), all recorded.
    let files = frame_files(&out, ".ply");
    assert_eq!(
        files,
        [
            "frame_00000.ply",
            "frame_00001.ply",
            "frame_00002.ply",
            "frame_00003.ply"
        ]
    );
    let first = read_ply(&out.join(&files[0]));
    let last = read_ply(&out.join(&files[3]));
    assert_eq!(first.len(), last.len());
    for (k, ((id0, a), (id1, b))) in first.iter().zip(&last).enumerate() {
        assert_eq!((*id0, *id1), (k as u32, k as u32));
        // One particle moves at most ~|v|·t: ids follow the same particle.
        let moved = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        assert!(
            moved < 0.1,
            "particle {k} jumped {moved} m: ids are not stable"
        );
    }
    // Sphere particles (the last ids) start falling at 1 m/s.
    assert_eq!(first.last().unwrap().1[4], -1.0);
}

#[test]
fn bad_scenes_fail_with_the_message_and_nonzero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, SCENE.replace("radius = 0.06", "radius = -0.06")).unwrap();
    let output = fluidlab(&["simulate", path.to_str().unwrap(), "--steps", "1"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.toml:12: fluid[1].radius: must be positive, got -0.06"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Runs `args`, expecting a quick failure whose message contains `expected` and no panic.
fn refused_at_once(args: &[&str], expected: &str) {
    let started = Instant::now();
    let output = fluidlab(args);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{args:?} succeeded");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(took < Duration::from_secs(5), "{args:?} took {took:?}");
}

#[test]
fn hostile_numbers_are_refused_at_once() {
    // A particle target beyond the limit: refused before any lattice is walked (it once walked
    // every lattice point first, silently, for over 30 s).
    refused_at_once(
        &[
            "bench",
            "drop",
            "--particles",
            "1000000000000",
            "--backend",
            "cpu",
        ],
        "--particles: must be between 1 and 1073741824 (the particle limit), got 1000000000000",
    );
    // A kernel radius of 10⁹ even with --steps 0: refused before the mass calibration, whose
    // lattice sum once looped (2·10⁹/0.02 + 1)³ times.
    let dir = tempfile::tempdir().unwrap();
    for value in ["1e9", "inf", "9223372036854775807"] {
        let path = dir.path().join("wide.toml");
        let scene = SCENE.replace(
            "spacing = 0.02",
            &format!("spacing = 0.02\nkernel_radius = {value}"),
        );
        std::fs::write(&path, scene).unwrap();
        refused_at_once(
            &[
                "simulate",
                path.to_str().unwrap(),
                "--steps",
                "0",
                "--backend",
                "cpu",
            ],
            "wide.toml:16: params.kernel_radius: must be between 1.5 and 4 × spacing",
        );
    }
    // A container of 2⁶⁴ grid cells: once an index out of bounds.
    let path = dir.path().join("huge.toml");
    let scene = SCENE
        .replace("max = [0.4, 0.4, 0.2]", "max = [262144, 131072, 131072]")
        .replace("spacing = 0.02", "spacing = 0.03125");
    std::fs::write(&path, scene).unwrap();
    refused_at_once(
        &[
            "simulate",
            path.to_str().unwrap(),
            "--steps",
            "1",
            "--backend",
            "cpu",
        ],
        "huge.toml:2: container: the container holds 18446744073709551616 grid cells",
    );
}

#[test]
fn scenes_lists_every_preset_with_its_description() {
    let stdout = ok(&fluidlab(&["scenes"]));
    assert!(stdout.starts_with("pbf:\n"), "{stdout}");
    for name in ["dam-break", "double-dam-break", "drop", "tall-tank"] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{stdout}"));
        assert!(line.len() > name.len() + 20, "{line}");
    }
}

#[test]
fn bench_reports_stages_and_throughput_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let stdout = ok(&fluidlab(&[
        "bench",
        &scene,
        "--steps",
        "3",
        "--warmup",
        "1",
        "--backend",
        "cpu",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(report["steps"], 3);
    // A fixed count: exactly the scene's iterations, and the compression they reached.
    assert_eq!(report["iterations"].as_f64(), Some(4.0), "{report}");
    assert_eq!(report["rule"], "4 iterations");
    assert!(
        (0.0..0.05).contains(&report["compression"].as_f64().unwrap()),
        "{report}"
    );
    let particles = report["particles"].as_f64().unwrap();
    let rate = report["particle_steps_per_second"].as_f64().unwrap();
    let ms = report["ms_per_substep"].as_f64().unwrap();
    assert!(
        (rate - particles / (ms * 1e-3)).abs() < 1e-6 * rate,
        "{report}"
    );
    let stages: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages[..3],
        ["predict_positions", "build_grid", "find_neighbors"]
    );
    assert!(
        stages.contains(&"compute_lambda")
            && stages.contains(&"apply_delta")
            && stages.contains(&"xsph")
    );
    // --particles rescales the spacing to reach about that many particles.
    let stdout = ok(&fluidlab(&[
        "bench",
        "dam-break",
        "--particles",
        "3000",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let n = report["particles"].as_f64().unwrap();
    assert!((n / 3000.0 - 1.0).abs() < 0.15, "{n} particles");
    // A size that does not fit in memory is skipped with the reason; the others still run.
    let output = fluidlab(&[
        "bench",
        "dam-break",
        "--particles",
        "2000,500000000",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let stdout = ok(&output);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("skipped size 500000000") && stderr.contains("GiB"),
        "{stderr}"
    );
    // Profiler mode: exactly N steps after the warm-up, one line.
    let stdout = ok(&fluidlab(&[
        "bench",
        &scene,
        "--warmup",
        "1",
        "--profile-steps",
        "2",
        "--backend",
        "cpu",
    ]));
    assert!(
        stdout.starts_with("profiled 2 steps of ") && stdout.lines().count() == 1,
        "{stdout}"
    );
}

/// Under the density-error rule, bench reports the iterations the rule needed and the error
/// they reached, at most the tolerance.
#[test]
fn bench_reports_the_iterations_the_density_error_rule_needed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rule.toml");
    std::fs::write(
        &path,
        "[container]\nmin = [0.0, 0.0, 0.0]\nmax = [0.3, 0.4, 0.2]\n[[fluid]]\nshape = \"box\"\n\
         min = [0.0, 0.0, 0.0]\nmax = [0.1, 0.3, 0.2]\n[params]\nmax_density_error = 0.0005\n\
         min_iterations = 2\nmax_iterations = 60\n",
    )
    .unwrap();
    let stdout = ok(&fluidlab(&[
        "bench",
        path.to_str().unwrap(),
        "--steps",
        "4",
        "--warmup",
        "4",
        "--backend",
        "cpu",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let iterations = report["iterations"].as_f64().unwrap();
    assert!((2.0..=60.0).contains(&iterations), "{report}");
    assert!(
        iterations > 2.0,
        "a collapsing column needs more than the minimum: {report}"
    );
    assert!(
        report["compression"].as_f64().unwrap() <= 0.0005,
        "{report}"
    );
    assert!(
        report["rule"]
            .as_str()
            .unwrap()
            .starts_with("until compression ≤ 0.0005"),
        "{report}"
    );
}

/// `fluidlab validate CASE` writes the case's CSV and PNG and prints its checks.
#[test]
fn validate_writes_curves_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("validation");
    let stdout = ok(&fluidlab(&[
        "validate",
        "dam-break",
        "--quick",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(stdout.contains("PASS dam break"), "{stdout}");
    assert!(stdout.contains("2 check(s), 0 failed"), "{stdout}");
    let csv = std::fs::read_to_string(out.join("dam-break.csv")).unwrap();
    assert!(
        csv.starts_with("T,Z\n") && csv.lines().count() > 20,
        "{csv}"
    );
    let png = image::open(out.join("dam-break.png")).expect("a PNG");
    assert_eq!((png.width(), png.height()), (800, 480));
    let output = fluidlab(&["validate", "no-such-case"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no validation case `no-such-case`"),
        "{stderr}"
    );
}

/// Starts `simulate` with export and stats, waits until frame 3 is written, sends `signal`,
/// and checks that the run stops after a whole frame with status 128 + the signal's number,
/// saying `interrupted (said)` and what is complete, leaving only whole frames and a whole
/// stats file: no temporary file.
fn stops_after_a_whole_frame_on(signal: Signal, said: &str) {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let out = dir.path().join("frames");
    let stats = dir.path().join("stats.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .args([
            "simulate",
            &scene,
            "--steps",
            "1000000",
            "--export",
            out.to_str().unwrap(),
            "--stats",
            stats.to_str().unwrap(),
            "-q",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Frame 3 exists (renamed into place whole), so the run is in its stepping loop.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !out.join("frame_00003.csv").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no frames were written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(128 + signal as i32),
        "{output:?}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("interrupted ({said}) after step"))
            && stderr.contains("are complete"),
        "{stderr}"
    );
    // Every file left is a whole frame: no temporary files, every CSV has all its rows.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("frame_") && n.ends_with(".csv")),
        "{names:?}"
    );
    let rows: Vec<usize> = names
        .iter()
        .map(|n| {
            std::fs::read_to_string(out.join(n))
                .unwrap()
                .lines()
                .count()
        })
        .collect();
    assert!(rows.iter().all(|&r| r == rows[0] && r > 100), "{rows:?}");
    let reported: usize = stderr
        .split("the ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(reported, names.len(), "{stderr}");
    // The stats file is in place, one whole JSON line per frame kept.
    assert!(!dir.path().join(".stats.jsonl.partial").exists());
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&stats)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), names.len());
}

#[test]
fn ctrl_c_stops_after_a_whole_frame_and_says_what_is_complete() {
    stops_after_a_whole_frame_on(Signal::SIGINT, "Ctrl-C");
}

/// `kill`, a service manager or a batch system's time limit send SIGTERM: the same whole-frame
/// stop as Ctrl-C, with status 143.
#[test]
fn sigterm_stops_after_a_whole_frame_like_ctrl_c() {
    stops_after_a_whole_frame_on(Signal::SIGTERM, "SIGTERM");
}

/// A closed terminal or ssh session sends SIGHUP: the same whole-frame stop, status 129.
#[test]
fn sighup_stops_after_a_whole_frame_like_ctrl_c() {
    stops_after_a_whole_frame_on(Signal::SIGHUP, "SIGHUP");
}

/// What a run killed mid-write (SIGKILL, a power cut) leaves: temporary frames in the export
/// directory and a temporary stats file. The next run into the same places removes the frames'
/// and replaces the stats file's, and keeps every other file.
#[test]
fn temporary_files_of_a_killed_run_are_removed_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let out = dir.path().join("frames");
    std::fs::create_dir(&out).unwrap();
    for name in [
        ".frame_00042.csv.partial",
        ".frame_00001.ply.partial",
        ".notes.partial",
        "notes.txt",
    ] {
        std::fs::write(out.join(name), "id,x,y\n0,0.5").unwrap();
    }
    let stats = dir.path().join("stats.jsonl");
    std::fs::write(dir.path().join(".stats.jsonl.partial"), "{\"step\":0,\"ti").unwrap();
    let output = fluidlab(&[
        "simulate",
        &scene,
        "--steps",
        "1",
        "--export",
        out.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
    ]);
    ok(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("removed 2 temporary frame file(s) a stopped run left in"),
        "{stderr}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".notes.partial",
            "frame_00000.csv",
            "frame_00001.csv",
            "notes.txt"
        ]
    );
    assert!(!dir.path().join(".stats.jsonl.partial").exists());
    let text = std::fs::read_to_string(&stats).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

/// A stats file the export would overwrite (a frame name of any step or format, or a frame's
/// temporary, in the export directory by any spelling) or that would hold the export
/// directory is refused before anything is written.
#[test]
fn a_stats_file_colliding_with_the_export_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let out = dir.path().join("d");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&out, dir.path().join("link")).unwrap();
    let at = |path: &str| dir.path().join(path).to_string_lossy().into_owned();
    for (export, stats, reason) in [
        (
            "d",
            "d/frame_00000.csv",
            "frame_00000.csv is a frame file name there",
        ),
        (
            "d",
            "d/./frame_00017.ply",
            "frame_00017.ply is a frame file name there",
        ),
        (
            "d",
            "d/../d/frame_123456.csv",
            "frame_123456.csv is a frame file name",
        ),
        (
            "d",
            "link/frame_00001.csv",
            "frame_00001.csv is a frame file name",
        ),
        (
            "link",
            "d/frame_00002.csv",
            "frame_00002.csv is a frame file name",
        ),
        ("d", "d/.frame_00000.csv.partial", "is a frame file name"),
        ("d", "d", "a directory, not a file"),
        (
            "d/new",
            "d/new",
            "would be the export directory or above it",
        ),
        (
            "new/frames",
            "new",
            "would be the export directory or above it",
        ),
    ] {
        let output = fluidlab(&[
            "simulate",
            &scene,
            "--steps",
            "1",
            "--export",
            &at(export),
            "--stats",
            &at(stats),
            "-q",
        ]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "--export {export} --stats {stats}"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("--stats {}", at(stats))) && stderr.contains(reason),
            "--export {export} --stats {stats}: {stderr}"
        );
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "{stats}");
        assert!(!dir.path().join("new").exists(), "{stats}");
    }
}

/// A run that fails any check (paths, numbers, scene) creates no directory or file.
#[test]
fn a_run_that_fails_a_check_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let file = dir.path().join("afile");
    std::fs::write(&file, "").unwrap();
    let bad_scene = dir.path().join("bad.toml");
    std::fs::write(&bad_scene, SCENE.replace("spacing = 0.02", "spacing = -1")).unwrap();
    let new = dir.path().join("newdir");
    let at = |path: &str| dir.path().join(path).to_string_lossy().into_owned();
    let cases: [(&[&str], &str); 5] = [
        (
            &[&scene, "--stats", &at("afile/x")],
            "afile is not an existing directory",
        ),
        (
            &[&scene, "--stats", &at("missing/x")],
            "missing is not an existing directory",
        ),
        (&[&scene, "--seconds", "1e300"], "--seconds 1e300"),
        (&[bad_scene.to_str().unwrap()], "spacing"),
        (
            &[&scene, "--export", &at("afile"), "--steps", "1"],
            "not a directory",
        ),
    ];
    for (args, said) in cases {
        let export = if args.contains(&"--export") {
            vec![]
        } else {
            vec!["--export", new.to_str().unwrap()]
        };
        let output = fluidlab(&[&["simulate"][..], args, &export, &["-q"]].concat());
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(!new.exists(), "{args:?} created {}", new.display());
        assert_eq!(std::fs::read(&file).unwrap(), b"", "{args:?}");
    }
}

/// Every count and duration on the command line is checked where it is parsed: non-finite,
/// negative, zero where it means nothing, and beyond 10⁹ steps or frames; the message names the
/// option and the value.
#[test]
fn bad_numbers_are_refused_naming_the_option_and_value() {
    for args in [
        &["simulate", "--seconds", "nan"][..],
        &["simulate", "--seconds", "inf"],
        &["simulate", "--seconds", "-1"],
        &["simulate", "--seconds", "two"],
        &["simulate", "--steps", "-3"],
        &["simulate", "--steps", "1000000001"],
        &["simulate", "--every", "0"],
        &["bench", "--steps", "0"],
        &["bench", "--warmup", "1000000001"],
        &["bench", "--profile-steps", "0"],
        &["render", "dam-break", "--frames", "0"],
        &["render", "dam-break", "--steps-per-frame", "0"],
        &["render", "dam-break", "--size", "0x10"],
    ] {
        let output = fluidlab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let (option, value) = (args[args.len() - 2], args[args.len() - 1]);
        assert!(
            stderr.contains(&format!("invalid value '{value}' for '{option} ")),
            "{args:?}: {stderr}"
        );
    }
    // More steps than a run may take, from a duration: refused once the scene's time step is
    // known, before any step.
    let output = fluidlab(&["simulate", "dam-break", "--seconds", "1e300"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--seconds 1e300: ") && stderr.contains("more than the 1000000000"),
        "{stderr}"
    );
}
