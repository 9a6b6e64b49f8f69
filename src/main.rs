//! The `fluidlab` command line.

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use fluidlab::app::headless::GlUnavailable;
use fluidlab::app::window::{self, ViewerOptions};
use fluidlab::commands::bench::{self, BenchOptions};
use fluidlab::commands::doctor;
use fluidlab::commands::render::{self, RenderOptions};
use fluidlab::commands::simulate::{self, SimulateOptions};
use fluidlab::output::FrameFormat;
use fluidlab::render::View;
use fluidlab::scene::{Scene, PRESETS};
use fluidlab::sim::Backend;
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
    /// Run a scene headless, optionally exporting particles and per-frame statistics.
    ///
    /// Example: fluidlab simulate dam-break --seconds 2 --export out --every 10 --format ply --stats out/stats.jsonl
    Simulate(SimulateArgs),
    /// List the shipped scene presets.
    Scenes,
    /// Time the solver on a scene: warm-up, then per-stage times and particle-steps per second.
    ///
    /// Example: fluidlab bench dam-break --particles 100000 --steps 50 --json
    Bench(BenchArgs),
    /// Open the viewer window: screen-space fluid rendering with imgui controls (docs/viewer.md).
    ///
    /// Example: fluidlab view dam-break --exit-after-frames 120 --screenshot shot.png
    View(ViewArgs),
    /// Render a PNG sequence headless (EGL, no display needed).
    ///
    /// Example: fluidlab render dam-break --frames 60 --size 1280x720 --out frames --timings
    Render(RenderArgs),
    /// Run the validation cases (resting pools, dam break, sloshing): CSV and PNG curves, and
    /// PASS/FAIL per check against theory and experiment (docs/validation.md).
    ///
    /// Exits non-zero when a check fails. Example: fluidlab validate dam-break --out validation
    Validate(fluidlab::commands::validate::ValidateOptions),
    /// Check the GPU, driver, CUDA kernels and CPU-vs-CUDA parity; PASS/FAIL/SKIP per check.
    ///
    /// Paste its output into bug reports. Exits non-zero when any check fails (a machine
    /// without an NVIDIA driver fails the "CUDA driver" check).
    Doctor,
}

#[derive(Args, Debug)]
struct ViewArgs {
    /// Preset name or scene file path.
    #[arg(default_value = "dam-break")]
    scene: String,
    #[command(flatten)]
    backend: BackendArg,
    /// Close the window after N frames (exit status 0).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    exit_after_frames: Option<u64>,
    /// Save the view to FILE: at the last frame with --exit-after-frames, and on the screenshot key.
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RenderArgs {
    /// Preset name or scene file path.
    scene: String,
    /// Frames to write (frame 0 is the initial state).
    #[arg(long, default_value_t = 60)]
    frames: u32,
    /// Image size.
    #[arg(long, default_value = "1280x720", value_parser = render::parse_size)]
    size: (u32, u32),
    /// Output directory.
    #[arg(long, default_value = "frames", value_name = "DIR")]
    out: PathBuf,
    /// What to draw.
    #[arg(long, value_enum, default_value_t = View::Fluid)]
    view: View,
    #[command(flatten)]
    backend: BackendArg,
    /// Simulation frames between written frames.
    #[arg(long, default_value_t = 1, value_name = "K")]
    steps_per_frame: u32,
    /// Print the mean time of each render pass (glFinish-timed) and of the simulation.
    #[arg(long)]
    timings: bool,
    /// Print nothing but errors (and the timings when asked).
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct SimulateArgs {
    /// Preset name (see `fluidlab scenes`) or path to a scene TOML file.
    #[arg(default_value = "dam-break")]
    scene: String,
    /// Number of steps (frames of the scene's dt) to run [default: 120].
    #[arg(long, conflicts_with = "seconds")]
    steps: Option<u64>,
    /// Simulated time to run, seconds (rounded up to whole steps).
    #[arg(long)]
    seconds: Option<f64>,
    #[command(flatten)]
    backend: BackendArg,
    /// Write particle frames (frame_STEP.csv or .ply) into this directory.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
    /// Record a frame and a statistics line every K steps (step 0 and the last step always).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Format of exported frames.
    #[arg(long, value_enum, default_value_t = FrameFormat::Csv)]
    format: FrameFormat,
    /// Write one JSON object of statistics per recorded frame to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// Preset name or scene file path.
    #[arg(default_value = "dam-break")]
    scene: String,
    /// Rescale the particle spacing so the scene holds about N particles; a comma-separated
    /// list (10000,40000,160000) runs one benchmark per size.
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',')]
    particles: Vec<u64>,
    /// Timed steps.
    #[arg(long, default_value_t = 30)]
    steps: u64,
    /// Untimed warm-up steps.
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    #[command(flatten)]
    backend: BackendArg,
    /// Print one JSON object per size (JSON lines) instead of the table.
    #[arg(long)]
    json: bool,
    /// Do not time each stage (CUDA: no events between kernels, for the top speed).
    #[arg(long)]
    no_stage_timing: bool,
    /// Profiler mode: after the warm-up run exactly N steps with stage timing off and print
    /// one line, so a Nsight Systems / Compute capture holds nothing else (docs/cuda.md).
    #[arg(long, value_name = "N", conflicts_with_all = ["steps", "json", "no_stage_timing"])]
    profile_steps: Option<u64>,
}

#[derive(Args, Debug)]
struct BackendArg {
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = fluidlab::commands::install_interrupt_handler() {
        eprintln!("warning: {error:#}");
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error)
            if error
                .downcast_ref::<fluidlab::commands::Interrupted>()
                .is_some() =>
        {
            eprintln!("{error:#}");
            ExitCode::from(130)
        }
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// No subcommand: the viewer when there is a display; else headless frames; else (no OpenGL
/// library at all) a headless simulation and how to enable rendering.
fn run_default() -> Result<()> {
    let scene = PRESETS[0].0.to_string();
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
        width: 1280,
        height: 720,
        out: out.clone(),
        view: View::Fluid,
        backend: Backend::Auto,
        steps_per_frame: 10,
        verbose: true,
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
                stats: None,
                verbose: true,
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
        None => run_default()?,
        Some(Command::View(args)) => window::run(ViewerOptions {
            scene: args.scene,
            backend: args.backend.backend,
            exit_after_frames: args.exit_after_frames,
            screenshot: args.screenshot,
        })?,
        Some(Command::Render(args)) => {
            let report = render::run(&RenderOptions {
                scene: args.scene,
                frames: args.frames,
                width: args.size.0,
                height: args.size.1,
                out: args.out,
                view: args.view,
                backend: args.backend.backend,
                steps_per_frame: args.steps_per_frame,
                verbose: !args.quiet,
            })?;
            if args.timings {
                render::print_timings(&report);
            }
        }
        Some(Command::Simulate(args)) => {
            simulate::run(&SimulateOptions {
                scene: args.scene,
                steps: args.steps,
                seconds: args.seconds,
                backend: args.backend.backend,
                export: args.export,
                every: args.every,
                format: args.format,
                stats: args.stats,
                verbose: !args.quiet,
            })?;
        }
        Some(Command::Scenes) => {
            for (name, _) in PRESETS {
                let scene = Scene::load(name)?;
                println!("{name:<18} {}", scene.description);
            }
        }
        Some(Command::Bench(args)) => {
            let sizes: Vec<Option<u64>> = if args.particles.is_empty() {
                vec![None]
            } else {
                args.particles.iter().copied().map(Some).collect()
            };
            let sizes_len = sizes.len();
            let mut failures = 0;
            for particles in sizes {
                let options = BenchOptions {
                    scene: args.scene.clone(),
                    particles,
                    steps: args.profile_steps.unwrap_or(args.steps),
                    warmup: args.warmup,
                    backend: args.backend.backend,
                    stage_timing: !args.no_stage_timing && args.profile_steps.is_none(),
                };
                let report = match bench::run(&options, !args.json && args.profile_steps.is_none())
                {
                    Ok(report) => report,
                    // With several sizes, one that does not fit (memory) is skipped, not fatal.
                    Err(error) if sizes_len > 1 => {
                        eprintln!("skipped {} particles: {error:#}", particles.unwrap_or(0));
                        failures += 1;
                        continue;
                    }
                    Err(error) => return Err(error),
                };
                if args.profile_steps.is_some() {
                    println!(
                        "profiled {} steps of {} particles on {} after {} warm-up steps ({:.3} ms per step)",
                        report.steps, report.particles, report.backend, report.warmup, report.ms_per_step
                    );
                } else if args.json {
                    println!("{}", serde_json::to_string(&report)?);
                } else {
                    bench::print(&report);
                }
            }
            if failures == sizes_len {
                anyhow::bail!("no benchmark size could run");
            }
        }
        Some(Command::Validate(options)) => {
            let checks = fluidlab::commands::validate::run(&options)?;
            let failed = checks.iter().filter(|c| !c.passed).count();
            println!(
                "validate: {} check(s), {failed} failed; curves in {}",
                checks.len(),
                options.out.display()
            );
            if failed > 0 {
                anyhow::bail!("validate: {failed} check(s) failed");
            }
        }
        Some(Command::Doctor) => {
            println!("fluidlab doctor");
            let checks = doctor::run(|check| println!("{check}"));
            let failed = doctor::failures(&checks);
            if failed > 0 {
                anyhow::bail!("doctor: {failed} check(s) failed");
            }
        }
    }
    Ok(())
}
