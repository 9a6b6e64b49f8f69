//! The `fluidlab` command line.

use anyhow::Result;
use clap::{Parser, Subcommand};
use fluidlab::commands::bench::{self, BenchArgs};
use fluidlab::commands::render::{self, RenderOptions};
use fluidlab::commands::simulate::{self, SimulateOptions};
use fluidlab::commands::validate::{self, ValidateOptions};
use fluidlab::commands::{self, doctor};
use fluidlab::gfx::context::GlUnavailable;
use fluidlab::output::FrameFormat;
use fluidlab::scene::DEFAULT_SCENE;
use fluidlab::sims::Backend;
use fluidlab::viewer::window::{self, ViewerOptions};
use nix::sys::signal::{self, SigHandler, Signal};
use std::path::PathBuf;
use std::process::ExitCode;

/// fluidlab: a real-time Position Based Fluids lab (Macklin & Müller 2013).
///
/// Run with no arguments to open the viewer on the default scene (dam-break) when a display is
/// available, else to render a few frames of it headless to PNG (or, with no OpenGL library at
/// all, to simulate it). Scenes are presets (see `fluidlab scenes`) or TOML files (see
/// docs/scenes.md).
#[derive(Parser, Debug)]
#[command(version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene headless, optionally exporting frames (tables, or fields as NumPy .npy, and
    /// PNG pictures) and per-frame statistics.
    ///
    /// Examples: fluidlab simulate dam-break --seconds 2 --export out --every 10 --format ply --stats out/stats.jsonl
    ///
    /// fluidlab simulate dye --seconds 2 --export out --every 30 --format npy --pictures
    Simulate(SimulateOptions),
    /// List the shipped scene presets.
    Scenes,
    /// Time the solver on a scene: warm-up, then per-stage times and particle-steps per second.
    ///
    /// Example: fluidlab bench dam-break --particles 100000 --steps 50 --json
    Bench(BenchArgs),
    /// Open the viewer window: screen-space fluid rendering with imgui controls (docs/viewer.md).
    ///
    /// Example: fluidlab view dam-break --exit-after-frames 120 --screenshot shot.png
    View(ViewerOptions),
    /// Render a PNG sequence headless (EGL, no display needed).
    ///
    /// Example: fluidlab render dam-break --frames 60 --size 1280x720 --out frames --timings
    Render(RenderOptions),
    /// Run the validation cases (resting pools, dam break, sloshing): CSV and PNG curves, and
    /// PASS/FAIL per check against theory and experiment (docs/validation.md).
    ///
    /// Exits non-zero when a check fails. Example: fluidlab validate dam-break --out validation
    Validate(ValidateOptions),
    /// Check the GPU, driver, CUDA kernels and CPU-vs-CUDA parity; PASS/FAIL/SKIP per check.
    ///
    /// Paste its output into bug reports. Exits non-zero when any check fails (a machine
    /// without an NVIDIA driver fails the "CUDA driver" check).
    Doctor,
}

fn main() -> ExitCode {
    // A closed pipe on stdout (`fluidlab doctor | head -n1`) ends the process quietly, as it
    // ends any Unix filter, instead of the Rust runtime's ignored SIGPIPE turning the next
    // `println!` into a panic. `simulate` prints only after its files are complete.
    // SAFETY: restores the default action before any thread starts; no handler is involved.
    let _ = unsafe { signal::signal(Signal::SIGPIPE, SigHandler::SigDfl) };
    let cli = Cli::parse();
    // Only `simulate` looks for a stop signal between steps; the other commands keep the
    // default action, so Ctrl-C and SIGTERM end them at once.
    if matches!(cli.command, Some(Command::Simulate(_))) {
        if let Err(error) = fluidlab::commands::install_interrupt_handler() {
            eprintln!("warning: {error:#}");
        }
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => match error.downcast_ref::<fluidlab::commands::Interrupted>() {
            Some(interrupted) => {
                eprintln!("{error:#}");
                ExitCode::from(interrupted.exit_status())
            }
            None => {
                eprintln!("error: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// No subcommand: the viewer when there is a display; else headless frames; else (no OpenGL
/// library at all) a headless simulation and how to enable rendering.
fn run_default() -> Result<()> {
    let scene = DEFAULT_SCENE.to_string();
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if has_display {
        return window::run(ViewerOptions {
            scene,
            backend: Backend::Auto,
            exit_after_frames: None,
            screenshot: None,
        });
    }
    let out = PathBuf::from("fluidlab-frames");
    eprintln!("no display ($DISPLAY / $WAYLAND_DISPLAY unset): rendering {scene} headless");
    let rendered = render::run(&RenderOptions {
        scene: scene.clone(),
        frames: 6,
        size: (1280, 720),
        out: out.clone(),
        // Its own directory: each run without arguments replaces the last one's frames.
        overwrite: true,
        view: None,
        backend: Backend::Auto,
        steps_per_frame: 10,
        camera: None,
        spheres: false,
        foam: false,
        timings: false,
        quiet: false,
    });
    match rendered {
        Ok(report) => {
            println!(
                "wrote {} frames to {}/ (frame_0000.png … frame_{:04}.png); `fluidlab render --help` for more",
                report.files.len(),
                out.display(),
                report.files.len() - 1
            );
            Ok(())
        }
        Err(error) if error.downcast_ref::<GlUnavailable>().is_some() => {
            eprintln!("{error:#}");
            eprintln!("simulating instead (no images)");
            simulate::run(&SimulateOptions {
                scene,
                steps: None,
                seconds: None,
                backend: Backend::Auto,
                export: None,
                every: 1,
                format: FrameFormat::Csv,
                pictures: false,
                stats: None,
                overwrite: false,
                quiet: false,
            })?;
            eprintln!(
                "to render images, install the Debian packages libegl1 libegl-mesa0 libgl1-mesa-dri \
                 (scripts/setup.sh does), then run `fluidlab` again"
            );
            Ok(())
        }
        Err(error) => Err(error),
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => run_default(),
        Some(Command::View(options)) => window::run(options),
        Some(Command::Render(options)) => render::main(&options),
        Some(Command::Simulate(options)) => simulate::run(&options).map(|_| ()),
        Some(Command::Scenes) => commands::scenes(),
        Some(Command::Bench(args)) => bench::main(&args),
        Some(Command::Validate(options)) => validate::main(&options),
        Some(Command::Doctor) => doctor::main(),
    }
}
