//! How refusals read: the kind named with its article, and no source paths of dependencies.

use super::fluidlab;
use std::process::Command;

/// `render`'s refusals of a flag the scene's kind has no use for read as English and name the
/// view list; the old code said "--spheres: a ink scene has no particles".
#[test]
fn render_refusals_name_the_kind_with_its_article() {
    for (args, expected) in [
        (
            &["--spheres"][..],
            "--spheres: an ink scene has no particles",
        ),
        (
            &["--foam"][..],
            "--foam: an ink scene has no fluid particles",
        ),
        (
            &["--view", "nodes"][..],
            "--view nodes: not a view of this scene; an ink scene shows ink, flow",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("f");
        let mut all = vec![
            "render",
            "dye",
            "--frames",
            "1",
            "--size",
            "8x8",
            "--backend",
            "cpu",
        ];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let output = fluidlab(&all);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// `fluidlab view dye --backend cpu --exit-after-frames 1` with `extra` arguments, with no
/// display in its environment.
fn view_without_a_display(extra: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .args([
            "view",
            "dye",
            "--backend",
            "cpu",
            "--exit-after-frames",
            "1",
        ])
        .args(extra)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .expect("run fluidlab")
}

/// `view` without a display says so and why, without the path and line of winit's source the
/// error was raised at (the old code printed `os error at /root/.cargo/registry/src/…/winit-
/// 0.30.13/src/platform_impl/linux/mod.rs:765: neither WAYLAND_DISPLAY …`).
#[test]
fn view_without_a_display_gives_the_reason_alone() {
    let output = view_without_a_display(&[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: cannot connect to a display (")
            && stderr.contains("works without one): neither WAYLAND_DISPLAY")
            && !stderr.contains("os error at")
            && !stderr.contains(".rs:"),
        "{stderr}"
    );
}

/// A `--screenshot` path that cannot take the screenshot is refused before the window opens,
/// naming the flag (the old code opened the window, ran the session, and failed at the last
/// frame — `cannot create the directory afile: File exists` — or silently replaced a text
/// file with a PNG). Without a display: the refusal comes first, the display's error never.
#[test]
fn a_screenshot_path_that_cannot_take_it_is_refused_before_the_window() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("afile");
    std::fs::write(&file, "notes").unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "keep me").unwrap();
    let cases = [
        (file.join("shot.png"), "afile is not a directory"),
        (notes.clone(), "the screenshot is a PNG: name a .png file"),
        (dir.path().join("shots.png"), "a directory, not a file"),
    ];
    std::fs::create_dir(dir.path().join("shots.png")).unwrap();
    for (path, expected) in cases {
        let output = view_without_a_display(&["--screenshot".as_ref(), path.as_os_str()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: --screenshot {}", path.display()))
                && stderr.contains(expected),
            "{expected:?} in {stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me");
}

/// An output under a folder that is a file is refused before the run, naming the flag: the
/// old code printed the run's header and failed at the first frame (`simulate --export`:
/// `cannot create the directory …: Not a directory`), or rendered first (`render --out`).
#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("afile");
    std::fs::write(&file, "notes").unwrap();
    let under = file.join("x");
    let under = under.to_str().unwrap();
    let shown = file.display().to_string();
    for (args, flag) in [
        (
            vec!["simulate", "drop", "--steps", "1", "--export", under],
            "--export",
        ),
        (
            vec![
                "render", "drop", "--frames", "1", "--size", "32x32", "--out", under,
            ],
            "--out",
        ),
    ] {
        let output = super::fluidlab(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("error: {flag} {under}: {shown} is not a directory"),
            "{args:?}"
        );
        assert!(output.stdout.is_empty(), "{args:?}: {:?}", output.stdout);
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "notes");
}

/// Small refusals read as English and name their value: an empty scene name says it is empty
/// (the old code said `error: : no such scene file`), `--exit-after-frames 0` gives the range
/// every other count flag gives (old: `0 is not in 1..18446744073709551615`), a pinned jelly
/// names the value it was given (old: no value), a value of the wrong type names its key
/// (old: `typed.toml:4: invalid value: integer \`-1\`, expected usize (in \`n = -1\`)`) and a
/// missing field its table (old: `shapeless.toml:5: missing field \`shape\``).
#[test]
fn small_refusals_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, section: &str| {
        let path = dir.path().join(name);
        let text = format!("kind = \"particles\"\nscene = \"jelly\"\n[jelly]\n{section}\n");
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (jelly, typed) = (
        write("jelly.toml", "pins = \"top\""),
        write("typed.toml", "n = -1"),
    );
    let shapeless = dir.path().join("shapeless.toml");
    std::fs::write(
        &shapeless,
        "kind = \"pbf\"\n[container]\nmin = [0.0, 0.0, 0.0]\nmax = [1.0, 1.0, 1.0]\n\
         [[fluid]]\nmin = [0.0, 0.0, 0.0]\nmax = [0.5, 0.5, 0.5]\n",
    )
    .unwrap();
    for (args, expected) in [
        (
            vec!["simulate", "", "--steps", "1"],
            "error: scene \"\": the name is empty: give a preset's name (dye, ",
        ),
        (
            vec!["view", "dye", "--exit-after-frames", "0"],
            "0 is not in 1..=1000000000",
        ),
        (
            vec!["simulate", &jelly, "--steps", "1"],
            "jelly.toml:4: jelly.pins: the jelly is never pinned (only \"none\"), got \"top\"",
        ),
        (
            vec!["simulate", &typed, "--steps", "1"],
            "typed.toml:4: jelly.n: invalid value: integer `-1`, expected usize (in `n = -1`)",
        ),
        (
            vec!["simulate", shapeless.to_str().unwrap(), "--steps", "1"],
            "shapeless.toml:5: fluid[0]: missing field `shape` (in `[[fluid]]`)",
        ),
    ] {
        let output = fluidlab(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: {expected:?} not in {stderr}"
        );
    }
}

/// `simulate`'s header and summary count in words: one step is "1 step", and a fountain, which
/// starts with nothing alive, has "no particles yet". The old code said "1 steps" and
/// "fountain: 0 particles".
#[test]
fn simulate_counts_read_as_english() {
    let output = fluidlab(&["simulate", "fountain", "--steps", "1", "--backend", "cpu"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("fountain: no particles yet, 1 step of 0.0167 s ("),
        "header: {stderr}"
    );
    assert!(
        stdout.starts_with("fountain: ")
            && stdout
                .lines()
                .next()
                .unwrap()
                .contains(" particles, 1 step (0.02 s simulated)"),
        "summary: {stdout}"
    );
    let output = fluidlab(&["simulate", "dye", "--steps", "2", "--backend", "cpu"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("dye: 65536 cells, 2 steps of 0.0166 s ("),
        "header: {stderr}"
    );
}
