//! `simulate` with export (CSV, binary PLY with stable ids) and stats; `scenes`.

use super::*;

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

/// `--seconds` that is a whole number of steps runs that many: 0.0332 s of 0.0166 s steps is 2,
/// though the f32 step widened to f64 makes the ratio 2.0000000312 (it once ran 3); 0.0333 s
/// (2.006 steps) still runs the 3 that cover it.
#[test]
fn simulate_seconds_that_are_whole_steps_run_that_many() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("dt.toml");
    std::fs::write(
        &scene,
        SCENE.replace("spacing = 0.02", "spacing = 0.02\ndt = 0.0166"),
    )
    .unwrap();
    for (seconds, steps) in [("0.0332", 2), ("0.0333", 3), ("0.0166", 1)] {
        let out = dir.path().join(format!("run-{seconds}"));
        ok(&fluidlab(&[
            "simulate",
            scene.to_str().unwrap(),
            "--seconds",
            seconds,
            "--export",
            out.to_str().unwrap(),
            "-q",
        ]));
        assert_eq!(
            frame_files(&out, ".csv").len(),
            steps + 1,
            "--seconds {seconds}"
        );
    }
}

/// A second run into an export directory that holds frames is refused before anything is
/// written (it once overwrote frames 0–1 and left the first run's later ones beside them);
/// `--overwrite` removes the old frames first and keeps every other file.
#[test]
fn simulate_refuses_to_mix_two_runs_frames_unless_told_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let out = dir.path().join("frames");
    let run = |steps: &str, extra: &[&str]| {
        let mut args = vec![
            "simulate",
            &scene,
            "--steps",
            steps,
            "--export",
            out.to_str().unwrap(),
            "-q",
        ];
        args.extend_from_slice(extra);
        fluidlab(&args)
    };
    ok(&run("5", &[]));
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let before = std::fs::read(out.join("frame_00001.csv")).unwrap();
    let refused = run("1", &[]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("holds 6 frame file(s) of an earlier run (frame_00000.csv …)")
            && stderr.contains("--overwrite"),
        "{stderr}"
    );
    assert_eq!(frame_files(&out, ".csv").len(), 6);
    assert_eq!(std::fs::read(out.join("frame_00001.csv")).unwrap(), before);
    ok(&run("1", &["--overwrite", "--format", "ply"]));
    assert_eq!(frame_files(&out, ".csv").len(), 0);
    assert_eq!(
        frame_files(&out, ".ply"),
        ["frame_00000.ply", "frame_00001.ply"]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}
