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

/// `--stats` replaces the file it names, so it must not name the scene file (by any spelling)
/// or any other file that is not an earlier run's statistics; those are refused before anything
/// is written and stay as they were. An empty file and an earlier run's statistics are replaced.
/// The old code replaced every one: `--stats small.toml` turned the scene into JSON lines
/// (800 particles, `{"step":0,…}`), and `--stats notes.txt` lost the notes.
#[test]
fn a_stats_file_that_is_not_statistics_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let at = |path: &str| dir.path().join(path).to_string_lossy().into_owned();
    std::fs::write(at("notes.txt"), "my notes\n").unwrap();
    std::fs::create_dir(at("sub")).unwrap();
    for (stats, reason) in [
        (scene.clone(), "is the scene file"),
        (at("sub/../small.toml"), "is the scene file"),
        (at("notes.txt"), "does not hold an earlier run's statistics"),
    ] {
        let output = fluidlab(&["simulate", &scene, "--steps", "1", "--stats", &stats, "-q"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "--stats {stats}: {stderr}");
        assert!(
            stderr.contains(&format!("--stats {stats}")) && stderr.contains(reason),
            "--stats {stats}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&scene).unwrap(), SCENE);
    assert_eq!(
        std::fs::read_to_string(at("notes.txt")).unwrap(),
        "my notes\n"
    );
    // An empty file, then that run's statistics, are replaced.
    std::fs::write(at("s.jsonl"), "").unwrap();
    for _ in 0..2 {
        ok(&fluidlab(&[
            "simulate",
            &scene,
            "--steps",
            "1",
            "--stats",
            &at("s.jsonl"),
            "-q",
        ]));
        let text = std::fs::read_to_string(at("s.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.starts_with("{\"step\":0,"), "{text}");
    }
}

/// A scene file is read up to 16 MiB and refused beyond, naming the file and the bound: a path
/// to the wrong file (a frame export, `/dev/zero`) no longer makes the program read it whole.
/// The old code read all of this 17 MiB file (a comment, then a valid scene) and ran it, exit
/// status 0 (and read `/dev/zero` until the memory ran out).
#[test]
fn a_scene_file_beyond_16_mib_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.toml");
    let text = format!("{}\n{SCENE}", "#".repeat(17 << 20));
    std::fs::write(&path, text).unwrap();
    let path = path.to_string_lossy().into_owned();
    let output = fluidlab(&["simulate", &path, "--steps", "0", "-q"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: {path}: cannot read the scene file: it holds more than 16.0 MiB"
        )),
        "{stderr}"
    );
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
        stderr.contains(&format!("--out {out}: not a directory")),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
    // Under it, the directory cannot be made. (The old code said "cannot create the output
    // directory: File exists" for the file itself, which is not what is wrong.)
    let under = format!("{out}/v");
    let output = fluidlab(&["validate", "rest", "--quick", "--out", &under]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "--out {under}: cannot create the output directory"
        )),
        "{stderr}"
    );
}

/// Writes `text` to `name` in `dir` and returns the stderr of `simulate` on it, which must fail.
fn refused_scene(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let args = ["simulate", path.to_str().unwrap(), "--steps", "1"];
    let output = fluidlab(&[&args[..], &["--backend", "cpu", "-q"]].concat());
    assert_eq!(output.status.code(), Some(1), "{name}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Ink, pool and particles errors name the key as the file writes it, at its line, however it
/// is written (a table's key, a dotted key, an inline table); a stiffness whose derived wave
/// speed is out of range names the stiffness and its limit; the jelly takes no orientation.
#[test]
fn ink_pool_and_particles_errors_name_the_written_key_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let ink = "kind = \"ink\"\n";
    for (name, text, expected) in [
        (
            "ink1.toml",
            format!("{ink}[grid]\ncells = [4, 64]\n"),
            "ink1.toml:3: grid.cells: must be 8 to 4096 cells each, got [4, 64]",
        ),
        (
            "ink2.toml",
            format!("{ink}[grid]\ncells = [64, 64]\nwidth = -1\n"),
            "ink2.toml:4: grid.width: must be in (0, 10000] m, got -1",
        ),
        (
            "ink3.toml",
            format!("{ink}\nparams.dt = 5\n"),
            "ink3.toml:3: params.dt: must be in (0, 1] s, got 5",
        ),
        (
            "ink4.toml",
            format!(
                "{ink}stroke = [\n  {{ duration = 1, path = [[0.5, 0.5]], radius = 0.1 }},\n  \
                     {{ duration = 1, path = [[0.5, 0.5]], radius = -1 }},\n]\n"
            ),
            "ink4.toml:4: stroke[1].radius: must be in (0, 1] m, got -1",
        ),
        (
            "ink5.toml",
            format!("{ink}[grid]\ncells = [2048, 1024]\n\nink_scale = 4\n"),
            "ink5.toml:5: grid.ink_scale: the ink grid, grid.cells [2048, 1024] × 4, would \
             exceed 4096 cells along an axis",
        ),
        (
            "pool4.toml",
            "kind = \"pool\"\n[springs]\nstiffness = 1e12\n".into(),
            "pool4.toml:3: springs.stiffness: 1000000000000 1/s² gives a wave speed \
             √(k·h²·(1 − 1/τ)) of 4528.2373 m/s on this lattice (spacing h = 0.007843138 m, \
             tension τ = 1.5), which needs 19246 substeps per frame of 0.016666668 s; at most \
             4.5298e10 1/s² keeps it within 1000 m/s and 4096 substeps",
        ),
        (
            "jelly.toml",
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\norientation = \"flat\"\n".into(),
            "jelly.toml:4: jelly.orientation: is the cloth's: the jelly is a cube and always \
             starts upright, got \"flat\"",
        ),
    ] {
        let stderr = refused_scene(dir.path(), name, &text);
        assert!(stderr.contains(expected), "{name}: {stderr}");
    }
}

/// `bench --particles` beyond what a kind's scene allows names the flag, the range in the
/// kind's own unit and the value.
#[test]
fn particle_counts_out_of_a_kinds_range_name_the_flag() {
    for (scene, particles, expected) in [
        (
            "pool",
            "1",
            "scene pool: --particles: must be 64 to 67108864 nodes (8² to 8192², a square \
             grid), got 1",
        ),
        (
            "dye",
            "1000000000",
            "scene dye: --particles: must be 64 to 4194304 cells for this scene (8 to 2048 \
             per side in grid.cells' aspect 256:256, ink ×2), got 1000000000",
        ),
        (
            "karman",
            "63",
            "scene karman: --particles: must be 171 to 6291456 cells for this scene (8 to 4096 \
             per side in grid.cells' aspect 512:192), got 63",
        ),
        (
            "fountain",
            "1000000000",
            "scene fountain: --particles: must be 1 to 67108864 particles alive (rate × \
             lifetime 4 s; fountain.rate at most 1e8/s, fountain.max_particles at most \
             67108864), got 1000000000",
        ),
        (
            "cloth",
            "3",
            "scene cloth: --particles: must be 4 to 1048576 nodes (2² to 1024², a square \
             cloth), got 3",
        ),
        (
            "jelly",
            "262145",
            "scene jelly: --particles: must be 8 to 262144 nodes (2³ to 64³, a cube), got 262145",
        ),
    ] {
        refused_at_once(
            &[
                "bench",
                scene,
                "--particles",
                particles,
                "--backend",
                "cpu",
                "--steps",
                "1",
            ],
            expected,
        );
    }
}

/// Runs fluidlab with `args` under a 1 GiB data-size limit (`ulimit -d`, which the memory
/// checks read), expecting a quick refusal that contains `expected`.
fn refused_for_memory(args: &[&str], expected: &str) {
    let output = Command::new("sh")
        .arg("-c")
        .arg("ulimit -d 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_fluidlab"))
        .args(args)
        .output()
        .expect("run fluidlab under sh");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

/// A scene file too big for the memory is refused at the line of the key that sets its size
/// (a preset, with no file, by its name; under `--particles`, naming the flag).
#[test]
fn scenes_too_big_for_the_memory_are_refused_at_the_key_setting_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let pool = write("p8k.toml", "kind = \"pool\"\n[pool]\nnodes = 8192\n");
    let ink = write(
        "i4k.toml",
        "kind = \"ink\"\n[grid]\n\ncells = [4096, 4096]\n",
    );
    let pbf = write(
        "big.toml",
        &SCENE.replace("spacing = 0.02", "spacing = 0.001"),
    );
    fn run(scene: &str) -> [&str; 7] {
        ["simulate", scene, "--steps", "1", "--backend", "cpu", "-q"]
    }
    refused_for_memory(
        &run(&pool),
        "p8k.toml:3: pool.nodes: 8192² nodes need about 2.3 GiB",
    );
    refused_for_memory(
        &run(&ink),
        "i4k.toml:4: grid.cells: 4096×4096 cells (ink ×1) need about 1.7 GiB",
    );
    refused_for_memory(&run(&pbf), "big.toml:15: params.spacing: ");
    // The fountain's droplets grow as it runs: 20 million of them (2.2 GB) are refused before
    // the first step. The old code ran it and aborted at the sixth step or so (SIGABRT,
    // "memory allocation of 120000000 bytes failed").
    let fountain = write(
        "f20m.toml",
        "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 1e8\n\
         lifetime = 1000.0\nfade = 0.0\nmax_particles = 20000000\n",
    );
    refused_for_memory(
        &[
            "simulate",
            &fountain,
            "--steps",
            "15",
            "--backend",
            "cpu",
            "-q",
        ],
        "f20m.toml:7: fountain.max_particles: 20000000 droplets alive (max_particles 20000000, \
         rate × lifetime 100000000000) need about 2.1 GiB",
    );
    refused_for_memory(
        &[
            "bench",
            "pool",
            "--particles",
            "67108864",
            "--backend",
            "cpu",
        ],
        "scene pool: --particles: 8192² nodes need about 2.3 GiB but only",
    );
}
