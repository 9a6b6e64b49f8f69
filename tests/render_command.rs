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
