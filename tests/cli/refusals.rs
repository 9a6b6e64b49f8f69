//! Bad input is refused at once, naming the problem, and nothing is written.

use super::*;

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

/// `validate --out` that cannot be made names the path and what is wrong with it.
#[test]
fn validate_names_an_output_directory_it_cannot_make() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "kept").unwrap();
    let out = file.to_str().unwrap();
    let output = fluidlab(&["validate", "rest", "--quick", "--out", out]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("--out {out}: cannot create the output directory")),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
}
