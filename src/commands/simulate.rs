//! `fluidlab simulate`: headless simulation of any kind, with optional frame export (tables,
//! or fields as `.npy`, and pictures) and statistics.

use super::MAX_COUNT;
use crate::gfx::capture::save_png;
use crate::output::{
    self, frame_part_path, is_frame_name, write_frame, write_grids, FrameFormat, FrameNames,
    StatsWriter,
};
use crate::scene::Source;
use crate::sims::{self, Backend, Frame, OpenOptions, Sim};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to simulate and what to write.
#[derive(Clone, Debug, clap::Args)]
pub struct SimulateOptions {
    /// Preset name (see `fluidlab scenes`) or path to a scene TOML file.
    #[arg(default_value = crate::scene::DEFAULT_SCENE)]
    pub scene: String,
    /// Number of steps (frames of the scene's dt) to run, 0 for the initial state alone
    /// [default: 120].
    #[arg(
        long,
        conflicts_with = "seconds",
        value_parser = clap::value_parser!(u64).range(..=MAX_COUNT),
        allow_negative_numbers = true
    )]
    pub steps: Option<u64>,
    /// Simulated time to run, seconds (rounded up to whole steps).
    #[arg(long, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Write frames into this directory (created; temporary frame files a killed run left
    /// there are removed): frame_STEP.csv or .ply, one row per particle or cell, or with
    /// --format npy one frame_STEP_NAME.npy per field.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// Record a frame and a statistics line every K steps (step 0 and the last step always).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "K",
        value_parser = clap::value_parser!(u64).range(1..=MAX_COUNT),
        allow_negative_numbers = true
    )]
    pub every: u64,
    /// Format of exported frames: a table per frame (csv, ply), or a NumPy array per field
    /// (npy: little-endian float32, row 0 at the bottom, `array[j, i]` is cell or node (i, j);
    /// ink: u, v, velocity, pressure, divergence, curl, solid, ink (docs/ink.md); pool:
    /// height, velocity, offset, fixed (docs/pool.md); the fountain: basin_height
    /// (docs/particles.md)). A scene without fields (pbf, cloth, jelly) refuses npy before
    /// anything is written.
    #[arg(long, value_enum, default_value_t = FrameFormat::Csv)]
    pub format: FrameFormat,
    /// Also write each recorded frame's pictures as PNGs, drawn on the CPU, whatever the
    /// --format (ink: frame_STEP_ink.png, the ink at one pixel per ink cell, and
    /// frame_STEP_flow.png, the flow map at one pixel per cell; pool: frame_STEP_height.png,
    /// one pixel per node). A kind without pictures (pbf, particles: see `fluidlab render`)
    /// refuses it before anything is written.
    #[arg(long, requires = "export")]
    pub pictures: bool,
    /// Write one JSON object of statistics per recorded frame to this file (its directory
    /// must exist, or be the export directory). An existing file is replaced only when it holds
    /// an earlier run's statistics; the scene file or any other file is refused.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Let --export name a directory that holds an earlier run's frames: they are removed
    /// first (only frame files; nothing else there). Without it such a directory is refused,
    /// so two runs' frames never mix.
    #[arg(long, requires = "export")]
    pub overwrite: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What a finished run did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Statistics of the last step (the kind's JSON object, as in `--stats`).
    pub last: serde_json::Value,
    /// Frames written (a table each, or a file per field).
    pub frames_written: usize,
    /// Pictures written (PNG files).
    pub pictures_written: usize,
    /// Wall time of the stepping, seconds.
    pub wall_seconds: f64,
}

/// Steps to run when neither `--steps` nor `--seconds` is given: two simulated seconds at 60 Hz.
pub const DEFAULT_STEPS: u64 = 120;

/// Parses `--seconds`: a finite number of seconds, 0 or more.
fn parse_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    check_seconds(seconds)
}

fn check_seconds(seconds: f64) -> Result<f64, String> {
    if !seconds.is_finite() {
        Err(format!("{seconds} is not a finite number of seconds"))
    } else if seconds < 0.0 {
        Err(format!("{seconds} s is negative: give 0 seconds or more"))
    } else {
        Ok(seconds)
    }
}

/// The steps `options` asks for with time step `dt`; refuses what the command line would
/// (options built in code skip its parsers).
fn steps_to_run(options: &SimulateOptions, dt: f64) -> Result<u64> {
    let steps = match (options.steps, options.seconds) {
        (Some(steps), _) => steps,
        (None, Some(seconds)) => {
            let seconds = check_seconds(seconds)
                .map_err(|reason| anyhow::anyhow!("--seconds {seconds:?}: {reason}"))?;
            // The whole steps that cover `seconds`, less a thousandth of a step: 0.0332 s of
            // 0.0166 s steps is 2 steps, though the f32 step widened to f64 makes the ratio
            // 2.0000000312 (a relative allowance would pass half a step from 5·10⁵ steps on).
            let steps = (seconds / dt - 1e-3).ceil().max(0.0);
            if steps > MAX_COUNT as f64 {
                bail!(
                    "--seconds {seconds:?}: {steps:.3e} steps of {dt:.4} s, more than the \
                     {MAX_COUNT} a run may take"
                );
            }
            steps as u64
        }
        (None, None) => DEFAULT_STEPS,
    };
    if steps > MAX_COUNT {
        bail!("--steps {steps}: more than the {MAX_COUNT} a run may take");
    }
    Ok(steps)
}

/// Checks the places `--export` and `--stats` name before anything is created: the export
/// directory is not a file; the stats file is not a directory, lives in an existing directory
/// (or the export directory), and is not the export directory, above it, or one of its frame
/// files (which would overwrite it), nor the scene file, nor any other file that is not an
/// earlier run's statistics ([`earlier_statistics`]): the run replaces the file it names. Paths
/// are compared resolved, so `d/./frame_00000.csv` or a symbolic link to `d` is seen for what it
/// is.
fn check_outputs(options: &SimulateOptions, source: &Source) -> Result<()> {
    let resolve = |path: &Path| {
        output::resolved(path).with_context(|| format!("cannot resolve {}", path.display()))
    };
    let export = match &options.export {
        Some(directory) => {
            let resolved = resolve(directory)?;
            if resolved.exists() && !resolved.is_dir() {
                bail!("--export {}: not a directory", directory.display());
            }
            output::check_writable("--export", directory, true)?;
            if resolved.is_dir() && !options.overwrite {
                let frames = output::frame_files(&resolved, FrameNames::Export)
                    .with_context(|| format!("--export {}: cannot list it", directory.display()))?;
                if let Some(first) = frames.first() {
                    bail!(
                        "--export {}: holds {} frame file(s) of an earlier run ({first} …), \
                         which this run's frames would mix with; give --overwrite to remove \
                         them first, or another directory",
                        directory.display(),
                        frames.len()
                    );
                }
            }
            Some(resolved)
        }
        None => None,
    };
    let Some(stats) = &options.stats else {
        return Ok(());
    };
    let resolved = resolve(stats)?;
    if resolved.is_dir() {
        bail!("--stats {}: a directory, not a file", stats.display());
    }
    if !source.preset && resolve(Path::new(&source.origin))? == resolved {
        bail!(
            "--stats {}: is the scene file {}, which the statistics would replace; name the \
             stats file otherwise",
            stats.display(),
            source.origin
        );
    }
    if resolved.is_file() && !earlier_statistics(&resolved) {
        bail!(
            "--stats {}: the file exists and does not hold an earlier run's statistics (JSON \
             lines with a \"step\"), so this run would destroy it; remove it or name another file",
            stats.display()
        );
    }
    let directory = resolved.parent().unwrap_or(Path::new("/"));
    if let Some(export) = &export {
        let flag = options.export.as_deref().unwrap_or(export).display();
        if export.starts_with(&resolved) {
            bail!(
                "--stats {} and --export {flag} collide: the stats file would be the export \
                 directory or above it",
                stats.display()
            );
        }
        if directory == export {
            let name = resolved.file_name().unwrap_or_default().to_string_lossy();
            if is_frame_name(&name) {
                bail!(
                    "--stats {} and --export {flag} collide: {name} is a frame file name \
                     there, which a frame would overwrite; name the stats file otherwise",
                    stats.display()
                );
            }
            // The export directory is created before the stats file.
            return Ok(());
        }
    }
    if !directory.is_dir() {
        bail!(
            "--stats {}: {} is not an existing directory",
            stats.display(),
            directory.display()
        );
    }
    output::check_writable("--stats", stats, false)
}

/// Whether the file at `path` is one `--stats` may replace: empty, or an earlier run's
/// statistics, whose first line is a JSON object with a `step` and a `time`.
fn earlier_statistics(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(file) = std::fs::File::open(path) else {
        // Unreadable: creating the file will say what is wrong.
        return true;
    };
    // A stats line is a few hundred bytes; a megabyte without a line break is not one.
    let mut first = String::new();
    if std::io::BufReader::new(file.take(1 << 20))
        .read_line(&mut first)
        .is_err()
    {
        return false;
    }
    first.is_empty()
        || serde_json::from_str::<serde_json::Value>(&first).is_ok_and(|line| {
            line.get("step").is_some_and(|step| step.is_u64()) && line.get("time").is_some()
        })
}

/// What a frame of the run exports besides its table: the names of its fields (with
/// `--format npy`) and of its pictures (with `--pictures`).
#[derive(Default)]
struct Parts {
    fields: Vec<&'static str>,
    pictures: Vec<&'static str>,
}

/// Checks, on the run's first frame, that the kind has the fields `--format npy` and the
/// pictures `--pictures` ask for, before anything is written; returns their names.
fn check_parts(sim: &dyn Sim, frame: &dyn Frame, options: &SimulateOptions) -> Result<Parts> {
    let mut parts = Parts::default();
    if options.export.is_none() {
        return Ok(parts);
    }
    if !options.format.is_table() {
        parts.fields = frame.fields().iter().map(|grid| grid.name).collect();
        if parts.fields.is_empty() {
            bail!(
                "--format {}: the {} kind (scene {}) has no fields to write as .{}; use --format \
                 csv or ply",
                options.format.extension(),
                sim.kind(),
                sim.scene_name(),
                options.format.extension()
            );
        }
    }
    if options.pictures {
        parts.pictures = frame
            .pictures()
            .iter()
            .map(|picture| picture.name)
            .collect();
        if parts.pictures.is_empty() {
            bail!(
                "--pictures: the {} kind (scene {}) draws no pictures for simulate; `fluidlab \
                 render {}` renders its frames",
                sim.kind(),
                sim.scene_name(),
                options.scene
            );
        }
    }
    Ok(parts)
}

/// Creates what `options` writes, once [`check_outputs`] has passed: the export directory
/// (emptied of a killed run's temporary frames) and the stats file. The stats file comes first
/// when its directory exists, so failing to create it leaves no new export directory behind.
fn create_outputs(options: &SimulateOptions) -> Result<Option<StatsWriter>> {
    let create_stats = |path: &Path| {
        StatsWriter::create(path)
            .with_context(|| format!("cannot create the stats file {}", path.display()))
    };
    let in_existing_directory = |path: &Path| match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.is_dir(),
        _ => true,
    };
    let mut stats = match &options.stats {
        Some(path) if in_existing_directory(path) => Some(create_stats(path)?),
        _ => None,
    };
    if let Some(directory) = &options.export {
        output::prepare_frame_directory(
            directory,
            FrameNames::Export,
            options.overwrite,
            options.quiet,
        )?;
    }
    if let (None, Some(path)) = (&stats, &options.stats) {
        stats = Some(create_stats(path)?);
    }
    Ok(stats)
}

/// Runs the simulation described by `options`. Every check (scene, numbers, paths) passes
/// before a file or directory is created.
pub fn run(options: &SimulateOptions) -> Result<Summary> {
    let source = Source::load(&options.scene)?;
    let open = OpenOptions {
        backend: options.backend,
        ..OpenOptions::default()
    };
    let mut sim = sims::open(&source, &open)?;
    // Nothing here reads stage times.
    sim.set_stage_timing(false);
    let dt = sim.dt();
    let steps = steps_to_run(options, dt)?;
    check_outputs(options, &source)?;
    let first = sim.frame()?;
    let parts = check_parts(sim.as_ref(), first.as_ref(), options)?;
    let every = options.every.max(1);
    if !options.quiet {
        eprintln!(
            "{}: {}, {} of {:.4} s ({}), backend {}",
            sim.scene_name(),
            elements_at_start(sim.elements(), sim.element_unit()),
            super::counted(steps, "step"),
            dt,
            sim.scheme(),
            sim.backend()
        );
    }
    let mut stats_file = create_outputs(options)?;

    let mut frames_written = 0;
    let mut pictures_written = 0;
    let mut record = |frame: Box<dyn Frame>, step: u64, step_ms: f64| -> Result<Box<dyn Frame>> {
        let time = step as f64 * dt;
        let stats = frame.stats(step, time, step_ms);
        if let Some(directory) = &options.export {
            let written = if options.format.is_table() {
                write_frame(directory, step, time, &frame.table(), options.format).map(|_| ())
            } else {
                write_grids(directory, step, &frame.fields()).map(|_| ())
            };
            written
                .with_context(|| format!("cannot write frame {step} to {}", directory.display()))?;
            frames_written += 1;
            if options.pictures {
                for picture in frame.pictures() {
                    let path = frame_part_path(directory, step, picture.name, "png");
                    save_png(&picture.image, &path)?;
                    pictures_written += 1;
                }
            }
        }
        if let Some(writer) = stats_file.as_mut() {
            writer
                .write(&stats)
                .context("cannot write the stats file")?;
        }
        Ok(frame)
    };

    let mut last = record(first, 0, 0.0)?;
    let bar = (!options.quiet).then(|| super::progress_bar(steps, "steps"));
    let start = Instant::now();
    let mut since_record = Instant::now();
    for step in 1..=steps {
        if let Some(signal) = super::interrupted() {
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
                signal,
                step: step - 1,
                kept,
            }
            .into());
        }
        if let Err(error) = sim.step() {
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
            return Err(error.context(format!(
                "simulation of {} stopped at step {step}{kept}",
                sim.scene_name()
            )));
        }
        if step % every == 0 || step == steps {
            let steps_since = if step % every == 0 {
                every
            } else {
                step % every
            };
            let step_ms = since_record.elapsed().as_secs_f64() * 1e3 / steps_since as f64;
            last = record(sim.frame()?, step, step_ms)?;
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
        last: serde_json::from_str(last.stats(steps, steps as f64 * dt, 0.0).get())?,
        frames_written,
        pictures_written,
        wall_seconds,
    };
    if !options.quiet {
        print_summary(
            sim.as_ref(),
            last.as_ref(),
            steps,
            &summary,
            &parts,
            options,
        );
    }
    Ok(summary)
}

/// What the header says of the elements at the start: a fountain starts with none alive
/// ("no particles yet"), not "0 particles".
fn elements_at_start(elements: u64, unit: &str) -> String {
    if elements == 0 {
        format!("no {unit} yet")
    } else {
        format!("{elements} {unit}")
    }
}

fn print_summary(
    sim: &dyn Sim,
    last: &dyn Frame,
    steps: u64,
    summary: &Summary,
    parts: &Parts,
    options: &SimulateOptions,
) {
    let ms_per_step = summary.wall_seconds * 1e3 / steps.max(1) as f64;
    let rate = sim.elements() as f64 * sim.steps_taken() as f64 / summary.wall_seconds.max(1e-9);
    let unit = sim.element_unit();
    println!(
        "{}: {} {unit}, {} ({:.2} s simulated) on {} in {:.1} s",
        sim.scene_name(),
        sim.elements(),
        super::counted(steps, "step"),
        steps as f64 * sim.dt(),
        sim.backend(),
        summary.wall_seconds
    );
    let singular = unit.strip_suffix('s').unwrap_or(unit);
    println!(
        "  {ms_per_step:.2} ms per step, {:.1} substeps per step, {rate:.3e} {singular}-steps/s",
        sim.steps_taken() as f64 / steps.max(1) as f64
    );
    for line in last.summary() {
        println!("  {line}");
    }
    if let Some(directory) = &options.export {
        let fields = if parts.fields.is_empty() {
            String::new()
        } else {
            format!(" (frame_STEP_NAME.npy: {})", parts.fields.join(", "))
        };
        println!(
            "  wrote {} {} frames to {}{fields}",
            summary.frames_written,
            options.format.extension(),
            directory.display()
        );
        if !parts.pictures.is_empty() {
            println!(
                "  wrote {} pictures to {} (frame_STEP_NAME.png: {})",
                summary.pictures_written,
                directory.display(),
                parts.pictures.join(", ")
            );
        }
    }
    if let Some(path) = &options.stats {
        println!("  wrote statistics to {}", path.display());
    }
}
