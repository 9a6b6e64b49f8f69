//! Interrupted runs (Ctrl-C, SIGTERM, SIGHUP, a killed run's leftovers) stop after a whole frame.

use super::*;

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
