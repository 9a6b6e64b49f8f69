//! The `fluidlab` command line.

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use fluidlab::commands::bench::{self, BenchOptions};
use fluidlab::commands::doctor;
use fluidlab::commands::simulate::{self, SimulateOptions};
use fluidlab::output::FrameFormat;
use fluidlab::scene::{Scene, PRESETS};
use fluidlab::sim::Backend;
use std::path::PathBuf;
use std::process::ExitCode;

/// fluidlab: a real-time Position Based Fluids lab (Macklin & Müller 2013).
///
/// Run with no arguments to simulate the default scene (dam-break). Scenes are presets (see
/// `fluidlab scenes`) or TOML files (see docs/scenes.md).
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
    /// Check the GPU, driver, CUDA kernels and CPU-vs-CUDA parity; PASS/FAIL/SKIP per check.
    ///
    /// Paste its output into bug reports. Exits non-zero when any check fails (a machine
    /// without an NVIDIA driver fails the "CUDA driver" check).
    Doctor,
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
    /// Rescale the particle spacing so the scene holds about N particles.
    #[arg(long, value_name = "N")]
    particles: Option<u64>,
    /// Timed steps.
    #[arg(long, default_value_t = 30)]
    steps: u64,
    /// Untimed warm-up steps.
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    #[command(flatten)]
    backend: BackendArg,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Do not time each stage (CUDA: no events between kernels, for the top speed).
    #[arg(long)]
    no_stage_timing: bool,
}

#[derive(Args, Debug)]
struct BackendArg {
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => {
            simulate::run(&SimulateOptions {
                scene: PRESETS[0].0.to_string(),
                steps: None,
                seconds: None,
                backend: Backend::Auto,
                export: None,
                every: 1,
                format: FrameFormat::Csv,
                stats: None,
                verbose: true,
            })?;
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
            let options = BenchOptions {
                scene: args.scene,
                particles: args.particles,
                steps: args.steps,
                warmup: args.warmup,
                backend: args.backend.backend,
                stage_timing: !args.no_stage_timing,
            };
            let report = bench::run(&options, !args.json)?;
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                bench::print(&report);
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
