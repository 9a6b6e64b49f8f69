//! `fluidlab simulate`: headless simulation with optional particle export and statistics.

use crate::output::{write_frame, FrameFormat, FrameStats, StatsWriter};
use crate::sims::pbf::backend;
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::{Backend, Solver};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Instant;

/// What to simulate and what to write.
#[derive(Clone, Debug, clap::Args)]
pub struct SimulateOptions {
    /// Preset name (see `fluidlab scenes`) or path to a scene TOML file.
    #[arg(default_value = "dam-break")]
    pub scene: String,
    /// Number of steps (frames of the scene's dt) to run [default: 120].
    #[arg(long, conflicts_with = "seconds")]
    pub steps: Option<u64>,
    /// Simulated time to run, seconds (rounded up to whole steps).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Write particle frames (frame_STEP.csv or .ply) into this directory.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// Record a frame and a statistics line every K steps (step 0 and the last step always).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub every: u64,
    /// Format of exported frames.
    #[arg(long, value_enum, default_value_t = FrameFormat::Csv)]
    pub format: FrameFormat,
    /// Write one JSON object of statistics per recorded frame to this file.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What a finished run did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Statistics of the last step.
    pub last: FrameStats,
    /// Frame files written.
    pub frames_written: usize,
    /// Wall time of the stepping, seconds.
    pub wall_seconds: f64,
}

/// Steps to run when neither `--steps` nor `--seconds` is given: two simulated seconds at 60 Hz.
pub const DEFAULT_STEPS: u64 = 120;

/// Runs the simulation described by `options`.
pub fn run(options: &SimulateOptions) -> Result<Summary> {
    let scene = Scene::load(&options.scene)?;
    let created = backend::create(&scene, options.backend)?;
    let mut solver = created.solver;
    // Nothing here reads stage times.
    solver.set_stage_timing(false);
    let dt = solver.params().dt as f64;
    let steps = match (options.steps, options.seconds) {
        (Some(steps), _) => steps,
        (None, Some(seconds)) => (seconds / dt).ceil() as u64,
        (None, None) => DEFAULT_STEPS,
    };
    let every = options.every.max(1);
    if !options.quiet {
        eprintln!(
            "{}: {} particles, {} steps of {:.4} s (≥ {} substeps × {} iterations), backend {}",
            scene.name,
            solver.particle_count(),
            steps,
            dt,
            solver.params().substeps,
            solver.params().iterations,
            created.note
        );
    }
    if let Some(directory) = &options.export {
        std::fs::create_dir_all(directory).with_context(|| {
            format!("cannot create the export directory {}", directory.display())
        })?;
    }
    let mut stats_file = match &options.stats {
        Some(path) => Some(
            StatsWriter::create(path)
                .with_context(|| format!("cannot create the stats file {}", path.display()))?,
        ),
        None => None,
    };

    let mut frames_written = 0;
    let mut record = |solver: &dyn Solver, step: u64, step_ms: f64| -> Result<FrameStats> {
        let snapshot = solver.snapshot()?;
        let stats = FrameStats::measure(&snapshot, step, step as f64 * dt, step_ms);
        if let Some(directory) = &options.export {
            write_frame(directory, step, stats.time, &snapshot, options.format)
                .with_context(|| format!("cannot write frame {step} to {}", directory.display()))?;
            frames_written += 1;
        }
        if let Some(writer) = stats_file.as_mut() {
            writer
                .write(&stats)
                .context("cannot write the stats file")?;
        }
        Ok(stats)
    };

    let mut last = record(solver.as_ref(), 0, 0.0)?;
    let bar = (!options.quiet).then(|| super::progress_bar(steps, "steps"));
    let start = Instant::now();
    let mut since_record = Instant::now();
    for step in 1..=steps {
        if super::interrupted() {
            if let Some(bar) = &bar {
                bar.abandon();
            }
            let kept = match &options.export {
                Some(directory) => format!(
                    "; the {frames_written} frames in {} are complete",
                    directory.display()
                ),
                None => String::new(),
            };
            return Err(super::Interrupted {
                step: step - 1,
                kept,
            }
            .into());
        }
        if let Err(error) = solver.step() {
            if let Some(bar) = &bar {
                bar.abandon();
            }
            let kept = match &options.export {
                Some(directory) => format!(
                    "; the {frames_written} frames already in {} are complete",
                    directory.display()
                ),
                None => String::new(),
            };
            return Err(anyhow::Error::new(error).context(format!(
                "simulation of {} stopped at step {step}{kept}",
                scene.name
            )));
        }
        if step % every == 0 || step == steps {
            let steps_since = if step % every == 0 {
                every
            } else {
                step % every
            };
            let step_ms = since_record.elapsed().as_secs_f64() * 1e3 / steps_since as f64;
            last = record(solver.as_ref(), step, step_ms)?;
            since_record = Instant::now();
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(writer) = stats_file {
        writer.finish().context("cannot write the stats file")?;
    }
    let wall_seconds = start.elapsed().as_secs_f64();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let summary = Summary {
        last,
        frames_written,
        wall_seconds,
    };
    if !options.quiet {
        print_summary(
            &scene,
            &created.note,
            solver.as_ref(),
            steps,
            &summary,
            options,
        );
    }
    Ok(summary)
}

fn print_summary(
    scene: &Scene,
    backend: &str,
    solver: &dyn Solver,
    steps: u64,
    summary: &Summary,
    options: &SimulateOptions,
) {
    let last = &summary.last;
    let ms_per_step = summary.wall_seconds * 1e3 / steps.max(1) as f64;
    let rate = last.particles as f64 * solver.steps_taken() as f64 / summary.wall_seconds.max(1e-9);
    println!(
        "{}: {} particles, {} steps ({:.2} s simulated) on {} in {:.1} s",
        scene.name, last.particles, steps, last.time, backend, summary.wall_seconds
    );
    println!(
        "  {ms_per_step:.2} ms per step, {:.1} solver steps per step (CFL), {rate:.3e} particle-steps/s",
        solver.steps_taken() as f64 / steps.max(1) as f64
    );
    println!(
        "  density error mean {:.2}% max {:.2}%, kinetic energy {:.4} J, {:.1} neighbours per particle (max {})",
        100.0 * last.density_error_mean,
        100.0 * last.density_error_max,
        last.kinetic_energy,
        last.neighbors_mean,
        last.neighbors_max
    );
    let c = last.center_of_mass;
    println!(
        "  centre of mass [{:.3}, {:.3}, {:.3}], bounds {:?}–{:?}",
        c[0], c[1], c[2], last.bbox_min, last.bbox_max
    );
    if let Some(directory) = &options.export {
        println!(
            "  wrote {} {} frames to {}",
            summary.frames_written,
            options.format.extension(),
            directory.display()
        );
    }
    if let Some(path) = &options.stats {
        println!("  wrote statistics to {}", path.display());
    }
}
