//! The `render` command end to end on a known block of particles (EGL surfaceless; Mesa
//! llvmpipe in CI): the PNG sequence and its passes, the solver's GL hold released while GL is
//! alive, a failed read-back stopping it with its cause. Needs scripts/setup.sh's Mesa packages.

use fluidlab::commands::render::{self as render_command, RenderOptions};
use fluidlab::sims::pbf::backend::Created;
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::{Backend, PbfSim};
use fluidlab::sims::{OpenOptions, Sim};
use std::path::Path;

mod gl_probe;

use gl_probe::{FixedParticles, BLOCK};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;

/// A PBF simulation of `scene` running `created`'s solver (the render command's `open`).
fn pbf_sim(scene: Scene, open: &OpenOptions, created: Created) -> Box<dyn Sim> {
    Box::new(PbfSim::with_solver(
        scene,
        open.backend,
        open.device,
        created,
    ))
}

/// The command's options for `frames` frames of the block (written into `directory`) on the
/// CPU, into `directory`/frames.
fn options(directory: &Path, frames: u32) -> RenderOptions {
    let scene_file = directory.join("block.toml");
    std::fs::write(&scene_file, BLOCK).expect("scene file");
    RenderOptions {
        scene: scene_file.display().to_string(),
        frames,
        size: (WIDTH, HEIGHT),
        out: directory.join("frames"),
        overwrite: false,
        view: None,
        backend: Backend::Cpu,
        steps_per_frame: 1,
        camera: None,
        spheres: false,
        foam: false,
        timings: false,
        quiet: true,
    }
}

#[test]
fn the_render_command_writes_a_png_sequence() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let options = options(directory.path(), 3);
    let out = options.out.clone();
    let report = render_command::run(&options).expect("render command");
    assert_eq!(report.files.len(), 3);
    for (frame, file) in report.files.iter().enumerate() {
        assert_eq!(*file, out.join(format!("frame_{frame:04}.png")));
        let image = image::open(file).expect("readable PNG").to_rgba8();
        assert_eq!(image.dimensions(), (WIDTH, HEIGHT));
    }
    let names: Vec<&str> = report.pass_ms.iter().map(|(pass, _)| *pass).collect();
    assert_eq!(
        names,
        [
            "anisotropy",
            "light_depth",
            "light_thickness",
            "light_smooth",
            "caustics",
            "scene",
            "sphere_depth",
            "thickness",
            "smooth_thickness",
            "smooth_depth",
            "smooth_depth_2d",
            "normals",
            "composite",
            "edges",
            "post"
        ]
    );
}

/// The render command lets the solver release the particle buffer while the GL context is
/// current and the buffer exists, before either goes (issue 16: a CUDA–GL registration
/// released after GL is gone crashes or hangs at exit).
#[test]
fn the_render_command_releases_the_solver_gl_hold_before_gl_goes() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let options = options(directory.path(), 2);
    let mut log = None;
    render_command::run_with(&options, |source, open| {
        let scene = Scene::from_source(source)?;
        let (created, probe_log) = gl_probe::GlProbe::of(&scene);
        log = Some(probe_log);
        Ok(pbf_sim(scene, open, created))
    })
    .expect("render command");
    let log = log.expect("the solver was created").lock().unwrap().clone();
    log.assert_released_while_gl_was_alive();
}

/// A solver that cannot read its particles back makes the render command fail with the cause,
/// instead of drawing made-up values (issue 9: errors are values).
#[test]
fn a_failed_read_back_stops_the_render_command_with_its_cause() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let options = options(directory.path(), 2);
    let error = render_command::run_with(&options, |source, open| {
        let scene = Scene::from_source(source)?;
        let mut solver = FixedParticles::of(&scene);
        solver.unreadable = true;
        let created = Created {
            solver: Box::new(solver),
            note: "fixed".into(),
        };
        Ok(pbf_sim(scene, open, created))
    })
    .expect_err("the render must fail");
    let message = format!("{error:#}");
    assert!(
        message.contains("reading particles back")
            && message.contains("copying particles back failed"),
        "{message}"
    );
    assert!(!directory.path().join("frames/frame_0000.png").exists());
}

/// A second render into a directory holding the first's frames is refused before anything is
/// written (its 2 frames would have replaced frames 0–1 of 3 and left frame 2 beside them);
/// with `overwrite` it removes the earlier frames and the temporary file of a stopped render,
/// and nothing else, then writes its own.
#[test]
fn a_render_refuses_an_earlier_renders_frames_unless_told_to_overwrite() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let first = options(directory.path(), 3);
    let out = first.out.clone();
    render_command::run(&first).expect("first render");
    let before: Vec<Vec<u8>> = (0..3)
        .map(|frame| std::fs::read(out.join(format!("frame_{frame:04}.png"))).unwrap())
        .collect();
    let mut second = options(directory.path(), 2);
    second.camera = Some(render_command::parse_camera("60,20,2").unwrap());
    let error = render_command::run(&second).expect_err("the frames of the first render");
    let message = format!("{error:#}");
    assert!(
        message.contains("holds 3 frame(s) of an earlier render (frame_0000.png …)")
            && message.contains("--overwrite"),
        "{message}"
    );
    for (frame, bytes) in before.iter().enumerate() {
        let path = out.join(format!("frame_{frame:04}.png"));
        assert_eq!(&std::fs::read(&path).unwrap(), bytes, "{}", path.display());
    }

    let kept = ["notes.txt", "frame_00000.csv", "frame_00000_ink.png"];
    for name in kept.iter().chain(&[".frame_0001.png.partial"]) {
        std::fs::write(out.join(name), "x").unwrap();
    }
    second.overwrite = true;
    let report = render_command::run(&second).expect("render with overwrite");
    assert_eq!(report.files.len(), 2);
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected: Vec<String> = kept.iter().map(|n| n.to_string()).collect();
    expected.extend(["frame_0000.png".into(), "frame_0001.png".into()]);
    expected.sort();
    assert_eq!(left, expected);
    // The new frames are the second render's (another camera), not the first's left behind.
    assert_ne!(
        std::fs::read(out.join("frame_0000.png")).unwrap(),
        before[0]
    );

    let file = directory.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let mut into_file = options(directory.path(), 1);
    into_file.out = file.clone();
    let message = format!("{:#}", render_command::run(&into_file).unwrap_err());
    assert!(message.contains("not a directory"), "{message}");
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

/// `--overwrite` refuses an entry of a frame's name that is a directory before it removes
/// anything (it used to remove the frames before it in name order, then stop).
#[test]
fn overwrite_refuses_a_directory_named_as_a_frame_before_removing_anything() {
    let directory = tempfile::tempdir().expect("temporary directory");
    let first = options(directory.path(), 2);
    let out = first.out.clone();
    render_command::run(&first).expect("first render");
    std::fs::create_dir(out.join("frame_0005.png")).unwrap();
    let mut again = options(directory.path(), 1);
    again.overwrite = true;
    let message = format!("{:#}", render_command::run(&again).unwrap_err());
    assert!(
        message.contains("frame_0005.png is a directory"),
        "{message}"
    );
    assert!(out.join("frame_0000.png").is_file() && out.join("frame_0001.png").is_file());
}

/// A picture too large for the memory left is an error naming its size, not an abort: `render
/// dye` at 16384×16384 under a 3.25 GB address-space limit (the GL target fits, the 1 GiB
/// read-back does not) exits 1 saying so, or, where the limit leaves room, writes the frame.
/// The old code aborted (SIGABRT, status 134: "memory allocation of 1073741824 bytes failed")
/// at limits from 3.0 to 4.5 GB; with the read-back flipped in place and the PNG encoded
/// straight into its file it writes the frame from 4.0 GB on.
#[test]
fn a_picture_too_large_for_the_memory_is_refused_naming_its_size() {
    use std::os::unix::process::CommandExt;
    let directory = tempfile::tempdir().expect("temporary directory");
    let out = directory.path().join("frames");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_fluidlab"));
    command.args(["render", "dye", "--frames", "1", "--size", "16384x16384"]);
    command.args(["--backend", "cpu", "-q", "--out"]).arg(&out);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 3_250_000_000,
                rlim_max: 3_250_000_000,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let output = command.output().expect("run fluidlab");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("memory allocation of"), "{stderr}");
    match output.status.code() {
        Some(0) => assert!(out.join("frame_0000.png").is_file(), "{stderr}"),
        Some(1) => assert!(
            stderr.contains("16384×16384") && stderr.contains("--size"),
            "{stderr}"
        ),
        other => panic!("exit {other:?} (a signal: {:?}): {stderr}", output.status),
    }
}
