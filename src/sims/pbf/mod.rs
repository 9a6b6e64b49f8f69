//! The simulation core: parameters, the container and obstacles, particle state, and the
//! [`Solver`] seam every backend (CPU reference, CUDA) implements.
//!
//! One call of [`Solver::step`] advances one frame: `substeps` PBF steps of `dt / substeps`,
//! each made of the stages named in [`Stage`] (the same names as the CUDA kernels and the docs).

pub mod anisotropy;
pub mod backend;
pub mod boundary;
pub mod coarse;
pub mod constants;
pub mod cpu;
pub mod cuda;
pub mod doctor;
pub mod foam;
pub mod grid;
pub mod kernel;
pub mod multigrid;
pub mod panel;
mod params;
pub mod render;
pub mod scene;
mod scene_file;
pub mod setup;
mod sim;
pub mod stats;
pub mod validation;
mod world;

pub use crate::sims::Backend;
pub use sim::{ParticleFrame, PbfEdit, PbfSim, SolverFactory};

/// The name of this kind in scene files (`kind = "pbf"`) and in `scenes/pbf/`.
pub const KIND: &str = "pbf";

pub use params::{ParamError, Params};
pub use world::{Aabb, Obstacle, World};

use glam::Vec3A;

/// The stages of one PBF step, in order. Each backend times them under these names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// v += dt·g, x* = x + dt·v, then projection onto walls and obstacles.
    PredictPositions,
    /// Cell id per particle, counting sort, reorder of every particle array, cell ranges.
    BuildGrid,
    /// CPU only: neighbour lists (CSR) from the grid, reused by every later stage.
    FindNeighbors,
    /// Density ρᵢ (walls and obstacles included) and the constraint multiplier λᵢ (Macklin &
    /// Müller 2013, eq. 11).
    ComputeLambda,
    /// Once per step, after the first compute_lambda: the constraint's long wavelengths solved
    /// on the neighbour grid (multigrid), every particle moved by the resulting displacement.
    CoarseCorrection,
    /// Position correction Δpᵢ with s_corr (eq. 12–14), then wall and obstacle projection.
    ApplyDelta,
    /// v = (x* − x) / dt.
    UpdateVelocity,
    /// Vorticity confinement (eq. 15–16).
    Vorticity,
    /// XSPH viscosity (eq. 17), then x = x*.
    Xsph,
}

impl Stage {
    /// Every stage in execution order.
    pub const ALL: [Stage; 9] = [
        Stage::PredictPositions,
        Stage::BuildGrid,
        Stage::FindNeighbors,
        Stage::ComputeLambda,
        Stage::CoarseCorrection,
        Stage::ApplyDelta,
        Stage::UpdateVelocity,
        Stage::Vorticity,
        Stage::Xsph,
    ];

    /// The stage's name as used by kernels, docs, the UI and `bench` output.
    pub const fn name(self) -> &'static str {
        match self.c_name().to_str() {
            Ok(name) => name,
            Err(_) => "stage",
        }
    }

    /// The name as a C string (for NVTX ranges), the one spelling of every stage name.
    pub const fn c_name(self) -> &'static std::ffi::CStr {
        match self {
            Stage::PredictPositions => c"predict_positions",
            Stage::BuildGrid => c"build_grid",
            Stage::FindNeighbors => c"find_neighbors",
            Stage::ComputeLambda => c"compute_lambda",
            Stage::CoarseCorrection => c"coarse_correction",
            Stage::ApplyDelta => c"apply_delta",
            Stage::UpdateVelocity => c"update_velocity",
            Stage::Vorticity => c"vorticity",
            Stage::Xsph => c"xsph",
        }
    }

    fn index(self) -> usize {
        Stage::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// Accumulated time per stage, in seconds, since the last [`StageTimes::clear`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    seconds: [f64; Stage::ALL.len()],
}

impl StageTimes {
    /// Adds `seconds` to `stage`.
    pub fn add(&mut self, stage: Stage, seconds: f64) {
        self.seconds[stage.index()] += seconds;
    }

    /// Seconds spent in `stage`.
    pub fn get(&self, stage: Stage) -> f64 {
        self.seconds[stage.index()]
    }

    /// Seconds spent in all stages together.
    pub fn total(&self) -> f64 {
        self.seconds.iter().sum()
    }

    /// Resets every stage to zero.
    pub fn clear(&mut self) {
        self.seconds = Default::default();
    }
}

/// The particles a scene starts with, in id order (particle `i` has id `i`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InitialState {
    /// Positions, metres.
    pub positions: Vec<Vec3A>,
    /// Velocities, m/s.
    pub velocities: Vec<Vec3A>,
}

impl InitialState {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The largest particle speed (m/s): sets the first frame's CFL substeps.
    pub fn max_speed(&self) -> f32 {
        self.velocities
            .iter()
            .map(|v| v.length())
            .fold(0.0, f32::max)
    }

    /// Checks what every solver needs of an initial state: ids fit in 32 bits with
    /// `u32::MAX` left free (both backends use it as "none"), and every value is finite
    /// ([`InitialState::check_finite`]).
    pub fn check(&self) -> Result<(), SolverError> {
        let n = self.len();
        if n >= u32::MAX as usize {
            return Err(SolverError::Params(format!(
                "{n} particles exceed the 32-bit id range (at most 2³² − 2)"
            )));
        }
        self.check_finite()
    }

    /// Fails with [`SolverError::NonFinite`] naming the first particle whose position or
    /// velocity is NaN or infinite.
    fn check_finite(&self) -> Result<(), SolverError> {
        let bad = (0..self.len())
            .find(|&i| !self.positions[i].is_finite() || !self.velocities[i].is_finite());
        let Some(id) = bad else {
            return Ok(());
        };
        let (quantity, value) = if self.positions[id].is_finite() {
            ("velocity", self.velocities[id])
        } else {
            ("position", self.positions[id])
        };
        Err(SolverError::NonFinite {
            step: 0,
            particle: id as u32,
            quantity,
            value: value.to_array(),
            stage: "the initial state",
        })
    }
}

/// A copy of the particle state in id order, for export, statistics and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Positions, metres, indexed by particle id.
    pub positions: Vec<Vec3A>,
    /// Velocities, m/s, indexed by particle id.
    pub velocities: Vec<Vec3A>,
    /// Density ρ (kg/m³) from the last constraint iteration of the last step (the density the
    /// solver corrected); the seeded lattice density before the first step.
    pub densities: Vec<f32>,
    /// Neighbours within h (the particle itself excluded) found in the last step.
    pub neighbor_counts: Vec<u32>,
    /// Mass of each particle, kg.
    pub particle_mass: f32,
    /// Rest density ρ₀ the densities are compared with.
    pub rest_density: f32,
    /// Particle spacing, metres.
    pub spacing: f32,
    /// Gravity, m/s² (statistics measure heights against it).
    pub gravity: [f32; 3],
    /// How the constraint iterations of the last frame went.
    pub solve: SolveReport,
}

/// What the constraint iterations of a frame did, averaged over its solver steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolveReport {
    /// Constraint iterations per step (compute_lambda + apply_delta pairs).
    pub iterations: f32,
    /// The mean compression, mean of max(ρ/ρ₀ − 1, 0) over all particles, at the last
    /// iteration's compute_lambda of the frame's last step (the density-error rule's measure).
    pub compression: f32,
    /// The coarse correction's residual relative to its right-hand side (largest |·|), last step.
    pub coarse_residual: f32,
}

impl Snapshot {
    /// Puts particles held in a solver's internal (cell-sorted) order back in id order:
    /// `record(k)` gives the position, velocity, density and neighbour count of the particle
    /// at internal index k, whose id is `ids[k]`.
    pub fn from_sorted(
        params: &Params,
        solve: SolveReport,
        ids: &[u32],
        record: impl Fn(usize) -> (Vec3A, Vec3A, f32, u32),
    ) -> Snapshot {
        let n = ids.len();
        let mut snapshot = Snapshot {
            positions: vec![Vec3A::ZERO; n],
            velocities: vec![Vec3A::ZERO; n],
            densities: vec![0.0; n],
            neighbor_counts: vec![0; n],
            particle_mass: params.particle_mass,
            rest_density: params.rest_density,
            spacing: params.spacing,
            gravity: params.gravity,
            solve,
        };
        for (k, &id) in ids.iter().enumerate() {
            let id = id as usize;
            let (position, velocity, density, neighbors) = record(k);
            snapshot.positions[id] = position;
            snapshot.velocities[id] = velocity;
            snapshot.densities[id] = density;
            snapshot.neighbor_counts[id] = neighbors;
        }
        snapshot
    }
}

/// Errors a solver reports from a step.
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    /// A position or velocity became NaN or infinite.
    #[error(
        "step {step}: particle id {particle} has a non-finite {quantity} {value:?} after {stage}; \
         the time step may be too large for the scene (try more substeps or a smaller dt)"
    )]
    NonFinite {
        /// Solver step (substep count since start) at which it was found.
        step: u64,
        /// Stable particle id.
        particle: u32,
        /// "position" or "velocity".
        quantity: &'static str,
        /// The offending value.
        value: [f32; 3],
        /// Name of the stage after which it was detected.
        stage: &'static str,
    },
    /// Parameters that cannot be changed while running, or that are invalid.
    #[error("{0}")]
    Params(String),
    /// A backend-specific failure (CUDA launch error, out of memory, ...).
    #[error("{0}")]
    Backend(String),
}

/// What the fourth lane of a render record `[x, y, z, scalar]` carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RenderScalar {
    /// |v|, m/s.
    #[default]
    Speed,
    /// ρ from the last constraint iteration, kg/m³.
    Density,
}

impl RenderScalar {
    /// The code the `write_render_buffer` kernel takes (0 speed, 1 density).
    pub fn code(self) -> u32 {
        match self {
            RenderScalar::Speed => 0,
            RenderScalar::Density => 1,
        }
    }
}

/// The seam between the front ends (CLI, viewer, benchmarks) and a PBF implementation.
pub trait Solver {
    /// Short name of the backend ("cpu", "cuda").
    fn backend_name(&self) -> &'static str;

    /// Number of particles simulated.
    fn particle_count(&self) -> usize;

    /// The parameters in force.
    fn params(&self) -> &Params;

    /// Replaces the parameters from the next step on. Only the live-editable ones
    /// (see [`Params::check_live_edit`]) may differ from the current ones.
    fn set_params(&mut self, params: &Params) -> Result<(), SolverError>;

    /// Advances one frame of `dt`: `params().substeps` solver steps, or more when the CFL
    /// condition asks for them (see [`Params::substeps_for`]).
    fn step(&mut self) -> Result<(), SolverError>;

    /// Solver steps (substeps) taken since the start.
    fn steps_taken(&self) -> u64;

    /// Time per stage accumulated since the last [`Solver::reset_stage_times`].
    fn stage_times(&self) -> StageTimes;

    /// Clears the accumulated stage times.
    fn reset_stage_times(&mut self);

    /// The particle state in id order. Fails when the backend cannot read its state back (a
    /// CUDA copy error), never with made-up values.
    fn snapshot(&self) -> Result<Snapshot, SolverError>;

    /// The statistics of the state as it is, for the viewer's panel (twice a second): this
    /// default measures a [`Solver::snapshot`]; the CUDA solver reduces them on the GPU and
    /// copies 128 bytes back, leaving out the layers' figures (`bottom_compression`,
    /// `surface_height`: `None`). Step, time and step time are the caller's to fill in.
    fn frame_stats(&self) -> Result<stats::FrameStats, SolverError> {
        Ok(stats::FrameStats::measure(&self.snapshot()?, 0, 0.0, 0.0))
    }

    /// How the last frame's constraint iterations went (cheap: no particle data copied).
    fn solve_report(&self) -> SolveReport;

    /// How a CUDA solver's frames ran as CUDA graphs ([`crate::cuda::GraphMode::summary`]);
    /// `None` on the CPU.
    fn cuda_graphs(&self) -> Option<String> {
        None
    }

    /// Writes one `[x, y, z, scalar]` per particle (in the solver's internal order) for
    /// drawing; `scalar` says what the fourth lane carries.
    fn render_positions(
        &self,
        scalar: RenderScalar,
        out: &mut Vec<[f32; 4]>,
    ) -> Result<(), SolverError>;

    /// Writes the same `[x, y, z, scalar]` records straight into the OpenGL buffer object
    /// `gl_buffer` (at least `particle_count() * 16` bytes) with no host round trip, when the
    /// backend can (CUDA–GL interop). Returns `Ok(false)` when it cannot; the caller then
    /// uploads [`Solver::render_positions`] itself. The GL context must be current.
    fn write_gl_buffer(
        &mut self,
        gl_buffer: u32,
        scalar: RenderScalar,
    ) -> Result<bool, SolverError> {
        let _ = (gl_buffer, scalar);
        Ok(false)
    }

    /// The `anisotropy` stage ([`anisotropy`]): three records per particle
    /// ([`anisotropy::Ellipsoid::records`]), in the order of [`Solver::render_positions`]. This
    /// default finds its own neighbour lists on the host from the render positions; the CPU
    /// solver uses its step's lists.
    fn anisotropy(&self, out: &mut Vec<[f32; 4]>) -> Result<(), SolverError> {
        let mut records = Vec::new();
        self.render_positions(RenderScalar::Speed, &mut records)?;
        let positions: Vec<glam::Vec3A> = records
            .iter()
            .map(|r| glam::Vec3A::new(r[0], r[1], r[2]))
            .collect();
        let params = self.params();
        anisotropy::anisotropy_records(
            &positions,
            params.kernel_radius,
            params.particle_radius(),
            out,
        );
        Ok(())
    }

    /// The `foam` stage ([`foam`]) over this frame's fluid: one step of `dt` for `foam`'s
    /// diffuse particles, then the new ones born; returns how many were born. This default
    /// reads the state back ([`Solver::snapshot`]) and finds its own neighbour lists; the CPU
    /// solver uses its step's lists; the CUDA solver keeps the diffuse particles on the GPU
    /// (`foam` then only counts the step) and runs the stage there. `world` is the one the
    /// solver was made with (the diffuse particles stop at its walls and obstacles).
    fn foam(
        &mut self,
        foam: &mut foam::Foam,
        settings: &foam::FoamSettings,
        dt: f32,
        world: &World,
    ) -> Result<usize, SolverError> {
        let snapshot = self.snapshot()?;
        let params = self.params();
        let (start, lists) = anisotropy::neighbour_lists(&snapshot.positions, params.kernel_radius);
        // A snapshot is in id order.
        let ids: Vec<u32> = (0..snapshot.positions.len() as u32).collect();
        let fluid = foam::FluidView {
            positions: &snapshot.positions,
            velocities: &snapshot.velocities,
            ids: &ids,
            neighbor_start: &start,
            neighbors: &lists,
            radius: params.kernel_radius,
            particle_radius: params.particle_radius(),
        };
        let gravity = glam::Vec3A::from(params.gravity);
        Ok(foam.foam(&fluid, settings, dt, gravity, world))
    }

    /// How many diffuse particles of each kind are alive, [spray, foam, bubbles], after the
    /// last [`Solver::foam`]: `foam`'s own, or the backend's (the CUDA solver's last copy of
    /// its counts, no particle read back).
    fn foam_counts(&self, foam: &foam::Foam) -> [usize; 3] {
        foam.counts()
    }

    /// The alive diffuse particles: `foam`'s, or the backend's copied back.
    fn foam_particles(&self, foam: &foam::Foam) -> Result<Vec<foam::Diffuse>, SolverError> {
        Ok(foam.particles.clone())
    }

    /// The renderer's records of the alive diffuse particles ([`foam::Foam::records`]).
    fn foam_records(&self, foam: &foam::Foam, out: &mut Vec<[f32; 4]>) -> Result<(), SolverError> {
        foam.records(out);
        Ok(())
    }

    /// Writes the [`Solver::foam_records`] (as many as [`Solver::foam_counts`] add up to) into
    /// the OpenGL buffer object `gl_buffer`, whose storage is `buffer_bytes` long, with no host
    /// round trip, when the backend keeps the diffuse particles and can (CUDA–GL interop);
    /// `Ok(false)` when it cannot. A registration that maps less than `buffer_bytes` predates
    /// the buffer's storage (the renderer re-specified it for a larger cap) and is renewed.
    fn write_gl_foam(&mut self, gl_buffer: u32, buffer_bytes: usize) -> Result<bool, SolverError> {
        let _ = (gl_buffer, buffer_bytes);
        Ok(false)
    }

    /// Forgets the backend's diffuse particles (the stage turned off).
    fn clear_foam(&mut self) -> Result<(), SolverError> {
        Ok(())
    }

    /// Writes the [`Solver::anisotropy`] records into the OpenGL buffer object `gl_buffer`
    /// after the `particle_count()` render records (bytes `16 n .. 64 n`) with no host round
    /// trip, when the backend can (CUDA–GL interop, the same registration as
    /// [`Solver::write_gl_buffer`]); `Ok(false)` when it cannot.
    fn write_gl_anisotropy(&mut self, gl_buffer: u32) -> Result<bool, SolverError> {
        let _ = gl_buffer;
        Ok(false)
    }

    /// Turns per-stage timing on or off. Backends whose timing costs something (CUDA events
    /// between kernels) skip it when off; [`Solver::stage_times`] then stays empty.
    fn set_stage_timing(&mut self, enabled: bool) {
        let _ = enabled;
    }

    /// Lets go of every OpenGL object [`Solver::write_gl_buffer`] took hold of (the CUDA
    /// solver's interop registration). Front ends call it while the GL context that owns the
    /// buffer is still current, before they delete the buffer or the context: unregistering
    /// after GL is gone is a known cause of crashes and hangs at exit. A later
    /// `write_gl_buffer` takes hold again.
    fn release_gl(&mut self) {}
}
