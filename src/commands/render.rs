//! `fluidlab render`: a PNG sequence of a scene of any kind through the headless (EGL) context:
//! the simulation draws itself ([`Sim::draw`]) into an offscreen target that is read back.

use super::MAX_COUNT;
use crate::gfx::camera::Camera;
use crate::gfx::capture::save_png;
use crate::gfx::headless::Headless;
use crate::gfx::timing::PassClock;
use crate::output::{self, FrameNames};
use crate::scene::Source;
use crate::sims::pbf::foam::FoamSettings;
use crate::sims::pbf::render::RenderSettings;
use crate::sims::pbf::{PbfEdit, PbfSim};
use crate::sims::{self, Backend, OpenOptions, Sim};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::time::Instant;

/// What to render.
#[derive(Clone, Debug, clap::Args)]
pub struct RenderOptions {
    /// Preset name or scene file path.
    pub scene: String,
    /// Frames to write (frame 0 is the initial state), 1 or more.
    #[arg(
        long,
        default_value_t = 60,
        value_parser = clap::value_parser!(u32).range(1..=MAX_COUNT as i64),
        allow_negative_numbers = true
    )]
    pub frames: u32,
    /// Image size, WIDTHxHEIGHT pixels.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Output directory (frame_0000.png, ...). One that holds an earlier render's frames is
    /// refused unless --overwrite is given.
    #[arg(long, default_value = "frames", value_name = "DIR")]
    pub out: PathBuf,
    /// Remove the frames an earlier render left in --out (`frame_NNNN.png`, nothing else)
    /// before writing this render's.
    #[arg(long)]
    pub overwrite: bool,
    /// What to draw: one of the kind's views, the kind's first when not given. pbf: fluid,
    /// particles, density, depth, smoothed-depth, thickness, normals; ink: ink, flow,
    /// pressure, divergence, curl, side-by-side; pool: surface, wireframe, nodes, caustics;
    /// particles: the fountain scene, additive, basin-nodes, lines; cloth and jelly surface,
    /// nodes, both. An unknown view is refused with the scene's list.
    #[arg(long, value_name = "VIEW")]
    pub view: Option<String>,
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Simulation frames between written frames, 1 or more.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "K",
        value_parser = clap::value_parser!(u32).range(1..=MAX_COUNT as i64),
        allow_negative_numbers = true
    )]
    pub steps_per_frame: u32,
    /// The camera: yaw and pitch in degrees (positive pitch looks down), distance in metres
    /// from the point looked at, and optionally that point (m); the scene's framing otherwise.
    #[arg(
        long,
        value_name = "YAW,PITCH,DISTANCE[,X,Y,Z]",
        value_parser = parse_camera,
        allow_hyphen_values = true
    )]
    pub camera: Option<CameraPose>,
    /// pbf: draw the particles as spheres, without the `anisotropy` stage's ellipsoids (to
    /// compare); other kinds refuse it.
    #[arg(long)]
    pub spheres: bool,
    /// pbf: run the `foam` stage (spray, foam and bubbles) whatever the scene's `[foam]` says;
    /// other kinds refuse it.
    #[arg(long)]
    pub foam: bool,
    /// Print the mean time of each render pass (glFinish-timed) and of the simulation.
    #[arg(long)]
    pub timings: bool,
    /// Print nothing but errors (and the timings when asked).
    #[arg(long, short)]
    pub quiet: bool,
}

/// What a render run did.
#[derive(Clone, Debug)]
pub struct RenderReport {
    /// The PNG files written, in order.
    pub files: Vec<PathBuf>,
    /// EGL device and GL renderer.
    pub device: String,
    /// Solver backend note.
    pub backend: String,
    /// Elements drawn (particles, cells).
    pub elements: u64,
    /// What an element is, plural.
    pub unit: &'static str,
    /// Mean milliseconds per frame of each pass that ran (measured with `glFinish`), by pass
    /// name in the order they ran, frame 0 (shader compilation) excluded when there are more
    /// frames.
    pub pass_ms: Vec<(&'static str, f64)>,
    /// Mean milliseconds of simulation per written frame.
    pub simulate_ms: f64,
}

/// `fluidlab render`: writes the frames, then the timings when asked.
pub fn main(options: &RenderOptions) -> Result<()> {
    let report = run(options)?;
    if options.timings {
        print_timings(&report);
    }
    Ok(())
}

/// Parses `WxH` (e.g. `1280x720`).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text
        .split_once(['x', 'X', '×'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT such as 1280x720, got `{text}`"))?;
    let parse = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| (1..=16384).contains(v))
            .ok_or_else(|| format!("`{s}` is not a size between 1 and 16384 pixels"))
    };
    Ok((parse(w)?, parse(h)?))
}

/// A camera given on the command line (`--camera`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPose {
    /// Rotation around y, degrees.
    pub yaw: f32,
    /// Elevation, degrees (positive looks down on the target).
    pub pitch: f32,
    /// From the eye to the target, m.
    pub distance: f32,
    /// The point looked at, m (the framing's when not given).
    pub target: Option<[f32; 3]>,
}

impl CameraPose {
    /// `framing` with this pose.
    pub fn apply(&self, framing: Camera) -> Camera {
        Camera {
            target: self.target.map_or(framing.target, glam::Vec3::from),
            yaw: self.yaw.to_radians(),
            pitch: self.pitch.to_radians(),
            distance: self.distance,
        }
    }
}

/// Parses `YAW,PITCH,DISTANCE[,X,Y,Z]` (degrees, degrees, metres, metres).
pub fn parse_camera(text: &str) -> Result<CameraPose, String> {
    let numbers = text
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{s}` is not a number"))
        })
        .collect::<Result<Vec<f32>, String>>()?;
    let [yaw, pitch, distance, ref rest @ ..] = numbers[..] else {
        return Err(format!("expected YAW,PITCH,DISTANCE[,X,Y,Z], got `{text}`"));
    };
    if !(-89.0..=89.0).contains(&pitch) {
        return Err(format!("pitch {pitch}° is not in [−89, 89]"));
    }
    if !(0.01..=500.0).contains(&distance) {
        return Err(format!("distance {distance} m is not in [0.01, 500]"));
    }
    let target = match rest {
        [] => None,
        [x, y, z] => Some([*x, *y, *z]),
        _ => return Err(format!("expected YAW,PITCH,DISTANCE[,X,Y,Z], got `{text}`")),
    };
    Ok(CameraPose {
        yaw,
        pitch,
        distance,
        target,
    })
}

/// Renders the frames `options` asks for.
pub fn run(options: &RenderOptions) -> Result<RenderReport> {
    run_with(options, sims::open)
}

/// Renders the frames `options` asks for with the simulation `open` makes of the scene; it is
/// called with the GL context current and told that context's CUDA device, so interop can
/// share buffers.
///
/// GL comes first and goes last: the simulation is opened after the context and lets go of its
/// GL objects ([`Sim::release_gl`]) while the context is still current, and on an early error
/// it is dropped before the context is.
pub fn run_with(
    options: &RenderOptions,
    open: impl FnOnce(&Source, &OpenOptions) -> Result<Box<dyn Sim>>,
) -> Result<RenderReport> {
    // The command line refuses these; options built in code skip its parsers.
    if options.frames == 0 {
        bail!("--frames must be at least 1");
    }
    if options.steps_per_frame == 0 {
        bail!("--steps-per-frame must be at least 1");
    }
    check_out(options)?;
    let source = Source::load(&options.scene)?;
    // Fail on a bad scene before any GL work.
    sims::describe(&source)?;
    let mut headless = Headless::new(options.size.0, options.size.1)?;
    let device = crate::cuda::gl_device().unwrap_or(crate::cuda::DEFAULT_DEVICE);
    let mut sim = open(
        &source,
        &OpenOptions {
            backend: options.backend,
            device,
            elements: None,
            drawn: true,
        },
    )?;
    // No stage times are reported (--timings gives the passes' and the simulation's): without
    // their events PBF's frames run as CUDA graphs.
    sim.set_stage_timing(false);
    let report = render_frames(options, &mut headless, sim.as_mut());
    sim.release_gl();
    drop(sim);
    drop(headless);
    report
}

/// Refuses an `--out` that is no directory, or holds an earlier render's frames (which this
/// render's would replace in part and mix with) unless `--overwrite`; before any work.
fn check_out(options: &RenderOptions) -> Result<()> {
    let out = &options.out;
    if out.exists() && !out.is_dir() {
        bail!("--out {}: not a directory", out.display());
    }
    output::check_writable("--out", out, true)?;
    if out.is_dir() && !options.overwrite {
        let frames = output::frame_files(out, FrameNames::Render)
            .with_context(|| format!("--out {}: cannot list it", out.display()))?;
        if let Some(first) = frames.first() {
            bail!(
                "--out {}: holds {} frame(s) of an earlier render ({first} …), which this \
                 render's would replace or mix with; give --overwrite to remove them first, or \
                 another directory",
                out.display(),
                frames.len()
            );
        }
    }
    Ok(())
}

fn render_frames(
    options: &RenderOptions,
    headless: &mut Headless,
    sim: &mut dyn Sim,
) -> Result<RenderReport> {
    if let Some(view) = &options.view {
        let index = sim
            .views()
            .iter()
            .position(|v| v == view)
            .with_context(|| {
                format!(
                    "--view {view}: not a view of this scene; {} {} scene shows {}",
                    article(sim.kind()),
                    sim.kind(),
                    sim.views().join(", ")
                )
            })?;
        sim.set_view(index);
    }
    if options.spheres {
        let kind = sim.kind();
        let pbf = sims::downcast::<PbfSim>(sim).with_context(|| {
            format!("--spheres: {} {kind} scene has no particles", article(kind))
        })?;
        let render = RenderSettings {
            anisotropy: false,
            ..pbf.render.clone()
        };
        pbf.apply(PbfEdit::Render(render))?;
    }
    if options.foam {
        let kind = sim.kind();
        let pbf = sims::downcast::<PbfSim>(sim).with_context(|| {
            format!(
                "--foam: {} {kind} scene has no fluid particles",
                article(kind)
            )
        })?;
        let foam = FoamSettings {
            enabled: true,
            ..pbf.foam.clone()
        };
        pbf.apply(PbfEdit::Foam(foam))?;
    }
    output::prepare_frame_directory(
        &options.out,
        FrameNames::Render,
        options.overwrite,
        options.quiet,
    )?;
    if !options.quiet {
        eprintln!(
            "{}: {} {}, {} frames of {}×{} ({} view), backend {}, {}",
            sim.scene_name(),
            sim.elements(),
            sim.element_unit(),
            options.frames,
            options.size.0,
            options.size.1,
            sim.views().get(sim.view()).copied().unwrap_or("-"),
            sim.backend(),
            headless.description()
        );
    }
    sim.attach_gl(headless.gl(), PassClock::Finish)?;
    if let Some(note) = sim.gl_note().filter(|_| !options.quiet) {
        eprintln!("{note}");
    }
    let framing = Camera::oriented_framing(&sim.bounds(), sim.orientation());
    let camera = options.camera.map_or(framing, |pose| pose.apply(framing));
    let mut files = Vec::new();
    let mut pass_totals: Vec<(&'static str, f64)> = Vec::new();
    let mut simulate_seconds = 0.0;
    for frame in 0..options.frames {
        if frame > 0 {
            let started = Instant::now();
            for _ in 0..options.steps_per_frame {
                sim.step().context("simulation step")?;
            }
            simulate_seconds += started.elapsed().as_secs_f64();
        }
        let image = headless
            .capture(|output| sim.draw(&camera, output))
            .with_context(|| format!("rendering frame {frame}"))?;
        // Frame 0 includes shader compilation (llvmpipe compiles at first draw): it is left out
        // of the averages when there are later frames.
        if frame > 0 || options.frames == 1 {
            for (pass, seconds) in sim.pass_times() {
                match pass_totals.iter_mut().find(|(name, _)| *name == pass) {
                    Some((_, total)) => *total += seconds.unwrap_or(0.0),
                    None => pass_totals.push((pass, seconds.unwrap_or(0.0))),
                }
            }
        }
        let path = options.out.join(format!("frame_{frame:04}.png"));
        save_png(&image, &path)?;
        if !options.quiet {
            eprintln!("wrote {}", path.display());
        }
        files.push(path);
    }
    let frames = f64::from(options.frames);
    let timed_frames = f64::from(options.frames.saturating_sub(1).max(1));
    let pass_ms = pass_totals
        .into_iter()
        .filter(|(_, total)| *total > 0.0)
        .map(|(pass, total)| (pass, total / timed_frames * 1e3))
        .collect();
    Ok(RenderReport {
        files,
        device: headless.description().to_string(),
        backend: sim.backend().to_string(),
        elements: sim.elements(),
        unit: sim.element_unit(),
        pass_ms,
        simulate_ms: if options.frames > 1 {
            simulate_seconds / (frames - 1.0) * 1e3
        } else {
            0.0
        },
    })
}

/// Prints the per-pass table of a report.
pub fn print_timings(report: &RenderReport) {
    println!("{} {}; {}", report.elements, report.unit, report.device);
    println!("{:<16} {:>10}", "pass", "ms/frame");
    let mut total = 0.0;
    for (pass, ms) in &report.pass_ms {
        println!("{pass:<16} {ms:>10.2}");
        total += ms;
    }
    println!("{:<16} {total:>10.2}", "total render");
    println!("{:<16} {:>10.2}", "simulation", report.simulate_ms);
}

/// "an" before a kind's name that starts with a vowel (ink), "a" otherwise.
fn article(kind: impl std::fmt::Display) -> &'static str {
    match kind.to_string().chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_camera, parse_size};

    #[test]
    fn sizes_parse_and_bad_ones_say_why() {
        assert_eq!(parse_size("1280x720"), Ok((1280, 720)));
        assert_eq!(parse_size("160X120"), Ok((160, 120)));
        assert!(parse_size("1280").unwrap_err().contains("WIDTHxHEIGHT"));
        assert!(parse_size("0x10").unwrap_err().contains("between 1"));
    }

    #[test]
    fn cameras_parse_and_bad_ones_say_why() {
        let pose = parse_camera("30,-20,1.5").unwrap();
        assert_eq!(
            (pose.yaw, pose.pitch, pose.distance, pose.target),
            (30.0, -20.0, 1.5, None)
        );
        let pose = parse_camera("0, 10, 2, 1, -0.5, 1").unwrap();
        assert_eq!(pose.target, Some([1.0, -0.5, 1.0]));
        assert!(parse_camera("1,2")
            .unwrap_err()
            .contains("YAW,PITCH,DISTANCE"));
        assert!(parse_camera("0,95,1").unwrap_err().contains("pitch"));
        assert!(parse_camera("0,0,0").unwrap_err().contains("distance"));
        assert!(parse_camera("0,0,x").unwrap_err().contains("`x`"));
    }
}
