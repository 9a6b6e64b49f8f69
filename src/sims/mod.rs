//! The simulation kinds, each in its own room (`src/sims/<kind>/`), and the door every command
//! uses: the object-safe [`Sim`] trait, the [`Kind`] enum and [`open`], the one `match` over
//! kinds. A kind owns its parameters and scene section, its CPU and CUDA solvers (behind its
//! own typed solver trait), its renderer passes and its panel; everything here is
//! kind-agnostic. Adding a kind: its room, its `kernels/<kind>.cu` and `shaders/<kind>/`, its
//! `scenes/<kind>/` presets, and one line in [`Kind`] (docs/architecture.md walks it through).

pub mod doctor;
pub mod ink;
pub mod particles;
pub mod pbf;
pub mod pool;
#[cfg(test)]
pub mod probe;

use crate::gfx::camera::{Camera, Orientation};
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::output::{Grid, Table};
use crate::scene::{Aabb, SceneError, Source};
use anyhow::Result;
use serde_json::value::RawValue;
use std::any::Any;
use std::fmt;
use std::rc::Rc;
use winit::keyboard::KeyCode;

/// The simulation kinds. The name is the scene files' `kind` key and the `scenes/` folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// 3D Position Based Fluids (Macklin & Müller 2013).
    Pbf,
    /// 2D stable fluids carrying ink (Stam 1999).
    Ink,
    /// A height-field water surface (Müller 2008) or a spring lattice, with drops and islands.
    Pool,
    /// Particle systems: a fountain rippling its basin, a spring-mass cloth, a jelly cube.
    Particles,
    /// A test-only kind (a 1D heat rod), proving the seams; not shipped.
    #[cfg(test)]
    Probe,
}

impl Kind {
    /// Every kind, in the order `fluidlab scenes` lists them.
    pub const ALL: &[Kind] = &[
        Kind::Pbf,
        Kind::Ink,
        Kind::Pool,
        Kind::Particles,
        #[cfg(test)]
        Kind::Probe,
    ];

    /// The kind's name in scene files and folders.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pbf => pbf::KIND,
            Kind::Ink => ink::KIND,
            Kind::Pool => pool::KIND,
            Kind::Particles => particles::KIND,
            #[cfg(test)]
            Kind::Probe => probe::KIND,
        }
    }

    /// The kind called `name`.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|kind| kind.name() == name)
    }

    /// The kind a scene source names; an unknown `kind` is an error at that key.
    pub fn of(source: &Source) -> Result<Kind, SceneError> {
        Kind::from_name(&source.kind).ok_or_else(|| {
            let known: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            source.error_at_kind(format!(
                "unknown simulation kind \"{}\" (kinds: {})",
                source.kind,
                known.join(", ")
            ))
        })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which solver implementation runs the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Backend {
    /// CUDA when a driver and device are present, else the CPU solver.
    #[default]
    Auto,
    /// The rayon CPU reference solver.
    Cpu,
    /// The CUDA solver (needs an NVIDIA GPU and driver).
    Cuda,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        })
    }
}

/// Which solver a backend asked for runs: [`Backend::choose`]'s answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chosen {
    /// Try the CUDA solver (with `auto`, the CPU's if it cannot start).
    Cuda,
    /// The CPU solver; the note says why ("cpu", or "cpu (REASON CUDA cannot run)").
    Cpu(String),
}

impl Backend {
    /// What this backend runs on a machine where CUDA cannot run for `unavailable`'s reason
    /// (`crate::cuda::unavailable()`), or can (`None`): every kind's one decision. `cuda` where
    /// CUDA cannot run is refused, naming the reason and the other backends.
    pub fn choose(self, unavailable: Option<String>) -> Result<Chosen> {
        match (self, unavailable) {
            (Backend::Cpu, _) => Ok(Chosen::Cpu("cpu".into())),
            (Backend::Cuda, Some(reason)) => anyhow::bail!(
                "--backend cuda cannot run on this machine: {reason}; use --backend cpu or \
                 --backend auto"
            ),
            (Backend::Auto, Some(reason)) => Ok(Chosen::Cpu(format!("cpu ({reason})"))),
            (_, None) => Ok(Chosen::Cuda),
        }
    }
}

/// How to open a scene: the backend, the CUDA device, and an optional size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    /// Which implementation runs the simulation.
    pub backend: Backend,
    /// CUDA device ordinal (front ends that draw pass their GL context's device).
    pub device: usize,
    /// Rescale the scene so it holds about this many elements (particles, cells), keeping its
    /// geometry; `bench --particles` uses it.
    pub elements: Option<u64>,
    /// A front end draws it (the viewer, `render`): memory checks count what drawing takes.
    pub drawn: bool,
}

impl Default for OpenOptions {
    /// Auto backend on [`crate::cuda::DEFAULT_DEVICE`], the scene's own size.
    fn default() -> Self {
        OpenOptions {
            backend: Backend::Auto,
            device: crate::cuda::DEFAULT_DEVICE,
            elements: None,
            drawn: false,
        }
    }
}

/// Opens the scene `source` as a running simulation of its kind: the one `match` over kinds.
pub fn open(source: &Source, options: &OpenOptions) -> Result<Box<dyn Sim>> {
    Ok(match Kind::of(source)? {
        Kind::Pbf => Box::new(pbf::PbfSim::open(source, options)?),
        Kind::Ink => Box::new(ink::InkSim::open(source, options)?),
        Kind::Pool => Box::new(pool::PoolSim::open(source, options)?),
        Kind::Particles => Box::new(particles::ParticlesSim::open(source, options)?),
        #[cfg(test)]
        Kind::Probe => Box::new(probe::ProbeSim::open(source, options)?),
    })
}

/// The one-line description of a scene source, read without opening it (`fluidlab scenes`).
pub fn describe(source: &Source) -> Result<String> {
    Ok(match Kind::of(source)? {
        Kind::Pbf => pbf::scene::Scene::from_source(source)?.description,
        Kind::Ink => ink::scene::InkScene::from_source(source)?.description,
        Kind::Pool => pool::scene::PoolScene::from_source(source)?.description,
        Kind::Particles => particles::scene::ParticlesScene::from_source(source)?.description,
        #[cfg(test)]
        Kind::Probe => probe::Rod::from_source(source)?.description,
    })
}

/// A state read back from a simulation: what `simulate` exports and measures.
pub trait Frame {
    /// The state as a table, one row per element, for CSV/PLY export.
    fn table(&self) -> Table;

    /// The kind's statistics of this state as one JSON object (a `--stats` line), serialised by
    /// the kind so its fields keep their order and their precision; `step`, `time` and
    /// `step_ms` say when it was taken and how long steps took.
    fn stats(&self, step: u64, time: f64, step_ms: f64) -> Box<RawValue>;

    /// A few human-readable lines summing the state up (printed after a run).
    fn summary(&self) -> Vec<String>;

    /// The state as named 2D fields, for `simulate --format npy` (one `.npy` file each). A kind
    /// not on a grid keeps this default, none, and `--format npy` refuses it before writing.
    fn fields(&self) -> Vec<Grid> {
        Vec::new()
    }

    /// Pictures of the state, for `simulate --pictures` (one PNG each), drawn on the CPU. A
    /// kind without keeps this default, none, and `--pictures` refuses it before writing.
    fn pictures(&self) -> Vec<Picture> {
        Vec::new()
    }
}

/// A picture of a [`Frame`]: its name (the file's suffix, `frame_STEP_NAME.png`) and the image.
#[derive(Clone, Debug, PartialEq)]
pub struct Picture {
    /// Lower-case letters, digits and `_`.
    pub name: &'static str,
    /// RGBA8, rows top to bottom.
    pub image: crate::gfx::capture::Image,
}

/// `row` as a JSON object for [`Frame::stats`].
pub fn stats_row(row: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(row).expect("statistics rows serialise to JSON")
}

/// How the iterative part of a solver went over the last frame, for `bench`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveSummary {
    /// Iterations per solver step (0 for a kind without an iterative solve).
    pub iterations: f64,
    /// The iteration rule in words ("4 iterations", "until compression ≤ 0.001 (2–100)").
    pub rule: String,
    /// Further figures by name (pbf: `compression`), written into bench's JSON as they are.
    pub figures: Vec<(&'static str, f64)>,
}

/// A running simulation of any kind: the door every command goes through.
pub trait Sim {
    /// The kind.
    fn kind(&self) -> Kind;

    /// The scene's name (preset name or file stem).
    fn scene_name(&self) -> &str;

    /// The backend that runs it and why, e.g. "cpu (no CUDA driver found)".
    fn backend(&self) -> &str;

    /// How a CUDA solver's frames ran as CUDA graphs since it was made, for `bench`'s report
    /// (`cuda::GraphMode::summary`, e.g. the ink's "steps: 3 captured as CUDA graphs, 17
    /// replayed, 2 launch by launch"); `None` on the CPU and for kinds without graphs (pool).
    fn cuda_graphs(&self) -> Option<String> {
        None
    }

    /// Simulated seconds per frame.
    fn dt(&self) -> f64;

    /// Elements simulated (particles, cells): the throughput's unit count.
    fn elements(&self) -> u64;

    /// What an element is, plural ("particles", "cells").
    fn element_unit(&self) -> &'static str;

    /// How a frame is solved, in words ("≥ 2 substeps × 4 iterations").
    fn scheme(&self) -> String;

    /// Advances one frame.
    fn step(&mut self) -> Result<()>;

    /// Solver steps (substeps) taken since the start: throughput counts them.
    fn steps_taken(&self) -> u64;

    /// The stages of one solver step, in order: the names kernels, docs, bench and UI use.
    fn stages(&self) -> &'static [&'static str];

    /// Seconds spent in each of [`Sim::stages`] since the last reset, in the same order.
    fn stage_seconds(&self) -> Vec<f64>;

    /// Bytes each of [`Sim::stages`] moves through memory per step, by the kind's traffic
    /// model (`bench` prints GB/s from it); `None` where not modelled. Empty by default.
    fn stage_bytes(&self) -> Vec<Option<f64>> {
        Vec::new()
    }

    /// Clears the stage times.
    fn reset_stage_times(&mut self);

    /// Turns per-stage timing on or off (off: CUDA runs without events between kernels).
    fn set_stage_timing(&mut self, enabled: bool);

    /// Reads the state back (a GPU copy for CUDA backends).
    fn frame(&self) -> Result<Box<dyn Frame>>;

    /// How the last frame's iterative solve went.
    fn solve_summary(&self) -> SolveSummary;

    // The viewer's side.

    /// The box the camera frames (a 2D kind: its domain, flat in z).
    fn bounds(&self) -> Aabb;

    /// The direction the default camera frames [`Sim::bounds`] from.
    fn orientation(&self) -> Orientation {
        Orientation::FRONT
    }

    /// Starts again from the kind's set-up (the panel's "applies on restart" choices). When
    /// the new start fails, the running scene starts again from its beginning and the error
    /// is returned.
    fn restart(&mut self) -> Result<()>;

    /// Runs CUDA work on device `device` from now on (the viewer passes its GL context's GPU,
    /// so interop can share buffers); a CUDA run on another device restarts there.
    fn use_cuda_device(&mut self, device: usize) -> Result<()>;

    /// Draws the kind's panel sections (parameters, set-up, rendering) and applies the user's
    /// edits, which reach the solver before its next step. Returns whether the user asked for
    /// a restart; an edit that cannot apply is an error (the viewer shows it).
    fn panel(&mut self, ui: &imgui::Ui) -> Result<bool>;

    /// The statistics panel's lines, refreshed twice a second while the viewer runs. Cheap on
    /// every backend: a kind on the GPU answers from statistics reduced there (a few bytes
    /// copied back), never from a read-back of its whole state, which at the GPU's sizes
    /// (4096² pool nodes, 2048² ink cells, millions of particles) would stall the frame. The
    /// default reads a frame back, for a kind with nothing cheaper.
    fn status(&mut self) -> Result<Vec<String>> {
        Ok(self.frame()?.summary())
    }

    /// The pointer over the picture: `position` in output pixels from the top-left of an
    /// output of `size` pixels (a flat picture lies where the last draw letterboxed it, beside
    /// the panels' [`Output::covered`] band), `dragging` while the left button is held. What
    /// it returns counts at the press (the call that starts `dragging`): whether the kind
    /// takes this drag (a brush, a grab); if not, the drag is the camera's until the button is
    /// let go.
    fn pointer(&mut self, position: [f32; 2], size: [u32; 2], dragging: bool) -> bool {
        let _ = (position, size, dragging);
        false
    }

    /// Handles a key the viewer's own table does not use; returns whether it did.
    fn key(&mut self, key: KeyCode) -> bool;

    /// Whether the kind draws a flat picture the camera does not move (ink): the viewer then
    /// lists no camera controls (help overlay, panel).
    fn flat(&self) -> bool {
        false
    }

    /// The kind's keys as the help overlay lists them: (keys, what they do).
    fn key_help(&self) -> &'static [(&'static str, &'static str)];

    /// What the kind can show (`--view` names, the View menu), the first the default.
    fn views(&self) -> &'static [&'static str];

    /// Index into [`Sim::views`] of the view shown.
    fn view(&self) -> usize;

    /// Shows view `view` (an index into [`Sim::views`]; others are ignored).
    fn set_view(&mut self, view: usize);

    // The GL side: the GL context is current during every call.

    /// Creates the kind's renderer on `gl`; `clock` says how pass times are measured.
    fn attach_gl(&mut self, gl: Rc<glow::Context>, clock: PassClock) -> Result<()>;

    /// What `attach_gl` chose from the GL context that the user should be told (the pool's far
    /// taps, off on a software renderer); `render` prints it unless `--quiet`, the kind's
    /// panel shows it.
    fn gl_note(&self) -> Option<&str> {
        None
    }

    /// Draws the current state seen by `camera` into `output`.
    fn draw(&mut self, camera: &Camera, output: Output) -> Result<()>;

    /// Seconds of each render pass of the latest measured frame, by pass name (`None`: not
    /// run, or its timer result has not arrived).
    fn pass_times(&self) -> Vec<(&'static str, Option<f64>)>;

    /// Lets go of every GL object (and CUDA's hold on them) while the context is current, before
    /// the front end deletes the context. A later [`Sim::attach_gl`] starts again.
    fn release_gl(&mut self);

    /// The concrete simulation, for tests and kind-specific tools.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A panel's combo box over `all`, named by `name`; returns the new choice when the user made one.
pub fn choose<T: Copy + PartialEq>(
    ui: &imgui::Ui,
    label: &str,
    all: &[T],
    current: T,
    name: impl Fn(T) -> &'static str,
) -> Option<T> {
    let names: Vec<&str> = all.iter().map(|&t| name(t)).collect();
    let mut k = all.iter().position(|&t| t == current).unwrap_or(0);
    ui.combo_simple_string(label, &mut k, &names)
        .then_some(all[k])
}

/// The running simulation as its concrete kind (`None` when it is another kind).
pub fn downcast<T: Sim + 'static>(sim: &mut dyn Sim) -> Option<&mut T> {
    sim.as_any_mut().downcast_mut::<T>()
}

#[cfg(test)]
mod backend_tests {
    use super::{Backend, Chosen};

    /// Every kind's one decision: `cpu` always runs the CPU, `auto` runs CUDA where it can and
    /// says why not where it cannot, `cuda` where it cannot is refused with the reason.
    #[test]
    fn each_backend_chooses_its_solver_and_says_why() {
        let no = || Some("no NVIDIA driver".to_string());
        assert_eq!(
            Backend::Cpu.choose(None).unwrap(),
            Chosen::Cpu("cpu".into())
        );
        assert_eq!(
            Backend::Cpu.choose(no()).unwrap(),
            Chosen::Cpu("cpu".into())
        );
        assert_eq!(Backend::Auto.choose(None).unwrap(), Chosen::Cuda);
        assert_eq!(
            Backend::Auto.choose(no()).unwrap(),
            Chosen::Cpu("cpu (no NVIDIA driver)".into())
        );
        assert_eq!(Backend::Cuda.choose(None).unwrap(), Chosen::Cuda);
        assert_eq!(
            Backend::Cuda.choose(no()).unwrap_err().to_string(),
            "--backend cuda cannot run on this machine: no NVIDIA driver; use --backend cpu or \
             --backend auto"
        );
    }
}
