//! The CUDA solver: the CPU reference's stages as kernels (`kernels/pbf.cu`), launched through
//! cudarc on one stream with no host synchronisation inside a frame.
//!
//! One frame: `substeps` (or more, as the CFL condition asks) × { predict_positions →
//! build_grid (compute_cell_ids, scan_blocks, add_block_offsets, reorder_particles) →
//! iterations × { compute_lambda (boundary_density, compute_lambda, check_density_error),
//! coarse_correction after the first, apply_delta } → update_velocity → vorticity
//! (vorticity_curl, vorticity_confinement) → xsph }, then `find_non_finite` (which also measures
//! the largest speed for the next frame's CFL substeps) and one 8-byte copy back: the only
//! synchronisation of the frame (the density-error rule adds one read every
//! [`ITERATIONS_PER_CHECK`] iterations).
//!
//! There is no find_neighbors stage: every neighbour loop walks the 27 grid cells around the
//! particle. The neighbour set is the CPU's: particles within h at the positions the grid was
//! built from (kept in `grid_positions`), fixed for the step while the kernels evaluate W and
//! ∇W at the current positions.
//!
//! Here: the solver, its construction and the `Solver` trait; `buffers.rs` holds its GPU
//! arrays, `stages.rs` runs each stage as a short list of kernel launches, `pbf.rs` launches
//! each kernel of `pbf.cu` (typed, one method per kernel), `coarse.rs` the coarse correction
//! and its kernels, `foam.rs` the `foam` stage (kernels in `foam_kernels.rs`) and `interop.rs`
//! writes the renderer's GL buffers. Finding the
//! device, loading the module, launching, timing and GL interop are the shared CUDA layer's
//! (`src/cuda/`).

#[cfg(test)]
mod anisotropy_emulation;
mod buffers;
pub mod coarse;
mod coarse_kernels;
#[cfg(test)]
mod emulation;
#[cfg(test)]
mod emulation_mutants;
mod foam;
#[cfg(test)]
mod foam_emulation;
mod foam_kernels;
pub mod foam_parity;
mod frame_graph;
mod interop;
mod params;
pub mod parity;
pub mod pbf;
mod run_spread;
mod stages;
pub mod stats;
#[cfg(test)]
mod stats_emulation;

use super::grid::UniformGrid;
use super::stats::FrameStats;
use super::{
    InitialState, Params, RenderScalar, Snapshot, SolveReport, Solver, SolverError, Stage,
    StageTimes, World,
};
use crate::cuda::interop::GlInterop;
use crate::cuda::{CudaError, EventTimer, DEFAULT_DEVICE};
use buffers::Buffers;
use coarse::GpuCoarse;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use foam::DeviceFoam;
use frame_graph::FrameGraphs;
use glam::Vec3A;
use params::GpuParams;
use pbf::PbfKernels;
use std::sync::Arc;

type Float4 = [f32; 4];

/// Bytes of GPU memory per particle: positions, predicted positions and velocities (float4,
/// double-buffered for the sort), grid positions (float4), ids (double-buffered), λ, ρ,
/// neighbour count, the walls' Σ ∇W then ω (float4, one array), cell and rank.
pub const BYTES_PER_PARTICLE: u64 = 7 * 16 + 2 * 4 + 3 * 4 + 16 + 2 * 4;

/// Bytes of GPU memory per grid cell: the counting sort's counts and starts, and the coarse
/// correction (`crate::sims::pbf::coarse::BYTES_PER_CELL`).
pub const BYTES_PER_CELL: u64 = 2 * 4 + crate::sims::pbf::coarse::BYTES_PER_CELL;

/// What the CUDA solver allocates in host memory, checked before the scene is seeded: per
/// particle the seeded initial state (2 vectors) and the upload's staging copies (positions
/// and velocities as float4, ids); per cell the solid flags of the coarse grid. Its GPU memory
/// is checked against the device's free memory before any GPU allocation.
pub const HOST_FOOTPRINT: crate::sims::pbf::scene::Footprint = crate::sims::pbf::scene::Footprint {
    what: "CUDA solver's host side",
    per_particle: 2 * 16 + 2 * 16 + 4,
    per_neighbour: 0,
    per_cell: 2,
};

/// Iterations launched between two reads of the convergence flag under the density-error rule.
pub const ITERATIONS_PER_CHECK: u32 = 4;

/// The CUDA Position Based Fluids solver.
pub struct CudaSolver {
    params: Params,
    world: World,
    constants: GpuParams,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: PbfKernels,
    particle_count: usize,
    buffers: Buffers,
    scan_levels: Vec<usize>,
    steps: u64,
    /// Largest particle speed after the last frame (m/s): sets the next frame's CFL substeps.
    max_speed: f32,
    times: StageTimes,
    timer: EventTimer<Stage>,
    stage_timing: bool,
    interop: GlInterop,
    report: SolveReport,
    coarse: GpuCoarse,
    /// The `foam` stage's pool, made when the stage first runs.
    foam: Option<DeviceFoam>,
    /// The renderer's foam buffer, shared with CUDA ([`Solver::write_gl_foam`]).
    foam_interop: GlInterop,
    /// Frames kept as CUDA graphs (`frame_graph.rs`).
    graphs: FrameGraphs,
}

/// The shared layer's errors as the solver's: an unusable setting is a parameter error, the
/// rest are the backend's.
impl From<CudaError> for SolverError {
    fn from(error: CudaError) -> Self {
        match error {
            CudaError::Setting(message) => SolverError::Params(message),
            other => SolverError::Backend(other.to_string()),
        }
    }
}

fn to_float4(v: &Vec3A) -> Float4 {
    [v.x, v.y, v.z, 0.0]
}

fn to_vec3(v: &Float4) -> Vec3A {
    Vec3A::new(v[0], v[1], v[2])
}

impl CudaSolver {
    /// A solver over `initial` (particle `i` gets id `i`) on the default device
    /// ([`DEFAULT_DEVICE`], see [`CudaSolver::new_on`]).
    pub fn new(world: World, params: Params, initial: &InitialState) -> Result<Self, SolverError> {
        Self::new_on(DEFAULT_DEVICE, world, params, initial)
    }

    /// A solver over `initial` (particle `i` gets id `i`) on CUDA device `device` (front ends
    /// that draw pass the device of their GL context, [`gl_device`]). Fails when CUDA is not
    /// available, on invalid parameters, or when the particles do not fit in GPU memory (checked
    /// before allocating anything).
    pub fn new_on(
        device: usize,
        world: World,
        params: Params,
        initial: &InitialState,
    ) -> Result<Self, SolverError> {
        params
            .validate()
            .map_err(|e| SolverError::Params(e.to_string()))?;
        if let Some(reason) = crate::cuda::unavailable() {
            return Err(SolverError::Backend(reason));
        }
        let n = initial.len();
        initial.check()?;
        UniformGrid::check_size(&world.container, params.kernel_radius)
            .map_err(SolverError::Params)?;
        let constants = GpuParams::new(
            &params,
            &world,
            n as u32,
            params.dt / params.substeps as f32,
        );
        let cells = constants.cell_count();
        let scan_levels = pbf::scan_levels(cells + 1);

        let sync_check = crate::cuda::sync_check_requested()?;
        let graphs = FrameGraphs::new(crate::cuda::graphs_requested()?);
        let context = crate::cuda::context(device)?;
        // Under 2³² particles and at most 2³⁰ cells (checked above): no sum nears u64's range.
        let needed = n as u64 * BYTES_PER_PARTICLE
            + scan_levels.iter().map(|&l| l as u64 * 4).sum::<u64>()
            + (cells as u64 + 1) * BYTES_PER_CELL
            + world.obstacles.len() as u64 * 32;
        let (free, _) = context
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        if needed > free as u64 {
            let name = context.name().unwrap_or_else(|_| "the GPU".into());
            return Err(SolverError::Backend(format!(
                "{n} particles need {} of GPU memory for the CUDA solver, but {name} has only {} \
                 free; use fewer particles (a larger spacing) or --backend cpu",
                crate::host::format_bytes(needed),
                crate::host::format_bytes(free as u64)
            )));
        }
        let kernels = PbfKernels::load(&context, sync_check)?;
        // One stream, used for everything: cudarc's cross-stream event tracking is not needed.
        // SAFETY: set before any allocation of this context; all work goes to `stream`.
        unsafe { context.disable_event_tracking() };
        let stream = context
            .new_stream()
            .map_err(CudaError::driver("creating a CUDA stream"))?;
        let buffers = Self::allocate(&stream, initial, &world, cells, &scan_levels)
            .map_err(CudaError::driver("allocating GPU memory"))?;
        let dims = constants.grid_dims.map(|d| d as usize);
        let coarse = GpuCoarse::new(&stream, &world, dims)
            .map_err(CudaError::driver("allocating GPU memory"))?;
        let mut solver = Self {
            params,
            world,
            constants,
            timer: EventTimer::new(context.clone()),
            context,
            stream,
            kernels,
            particle_count: n,
            buffers,
            scan_levels,
            steps: 0,
            max_speed: initial.max_speed(),
            times: StageTimes::default(),
            stage_timing: true,
            interop: GlInterop::default(),
            report: SolveReport::default(),
            coarse,
            foam: None,
            foam_interop: GlInterop::default(),
            graphs,
        };
        // Densities and neighbour counts of the seeded state, as the CPU solver has them.
        if n > 0 {
            solver.build_grid()?;
            solver.compute_lambda(true, true, false)?;
            solver.check_density_error(-1.0, 0, 0)?;
        }
        solver
            .stream
            .synchronize()
            .map_err(CudaError::driver("setting up the CUDA solver"))?;
        Ok(solver)
    }

    /// The backend's note on its kernels ([`crate::cuda::GraphMode::kernels_note`]).
    pub fn kernel_origin(&self) -> String {
        let kernels = &self.kernels;
        self.graphs
            .mode
            .kernels_note(kernels.origin(), kernels.sync_check())
    }

    /// After a frame: the smallest id with a non-finite position or velocity, if any, and the
    /// largest speed (for the next frame's CFL substeps). One small kernel and an 8-byte copy,
    /// which is also the frame's one synchronisation.
    fn check_frame(&mut self) -> Result<(Option<u32>, f32), SolverError> {
        let b = &mut self.buffers;
        self.stream
            .memset_zeros(&mut b.frame_check)
            .map_err(CudaError::driver("clearing the frame check"))?;
        self.kernels.find_non_finite(
            &self.stream,
            self.particle_count,
            &b.positions,
            &b.velocities,
            &b.ids,
            &mut b.frame_check,
        )?;
        let mut check = [0u32; 2];
        let synchronised = self.kernels.sync_check();
        let failed = crate::cuda::launch::waited("a CUDA kernel of the step failed", synchronised);
        self.stream
            .memcpy_dtoh(&b.frame_check, &mut check)
            .map_err(failed)?;
        self.stream.synchronize().map_err(failed)?;
        Ok((
            (check[0] != 0).then_some(!check[0]),
            f32::from_bits(check[1]),
        ))
    }

    /// Copies an array of `particle_count` elements back.
    fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        slice: &CudaSlice<T>,
    ) -> Result<Vec<T>, SolverError> {
        let mut host = vec![T::default(); slice.len()];
        self.stream
            .memcpy_dtoh(slice, &mut host)
            .map_err(CudaError::driver("copying particles from the GPU"))?;
        self.stream
            .synchronize()
            .map_err(CudaError::driver("copying particles from the GPU"))?;
        host.truncate(self.particle_count);
        Ok(host)
    }

    fn try_snapshot(&self) -> Result<Snapshot, SolverError> {
        let b = &self.buffers;
        let positions = self.download(&b.positions)?;
        let velocities = self.download(&b.velocities)?;
        let densities = self.download(&b.densities)?;
        let counts = self.download(&b.neighbor_counts)?;
        let ids = self.download(&b.ids)?;
        Ok(Snapshot::from_sorted(
            &self.params,
            self.report,
            &ids,
            |k| {
                (
                    to_vec3(&positions[k]),
                    to_vec3(&velocities[k]),
                    densities[k],
                    counts[k],
                )
            },
        ))
    }

    /// Turns per-stage CUDA events on (the default; `bench` reads them) or off (a little faster:
    /// no event records between kernels).
    pub fn set_stage_timing(&mut self, enabled: bool) {
        self.stage_timing = enabled;
    }
}

impl Solver for CudaSolver {
    fn backend_name(&self) -> &'static str {
        "cuda"
    }

    fn particle_count(&self) -> usize {
        self.particle_count
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn set_params(&mut self, params: &Params) -> Result<(), SolverError> {
        self.params.apply_live_edit(params)
    }

    fn step(&mut self) -> Result<(), SolverError> {
        let substeps = self.params.substeps_for(self.max_speed);
        if self.particle_count == 0 {
            self.steps += substeps as u64;
            return Ok(());
        }
        let dt = self.params.dt / substeps as f32;
        self.constants = GpuParams::new(&self.params, &self.world, self.particle_count as u32, dt);
        if self.stage_timing {
            self.timer.begin(&self.stream)?;
        }
        let iterations = self.frame(substeps)?;
        self.steps += substeps as u64;
        let (bad, max_speed) = self.check_frame()?;
        self.max_speed = max_speed;
        let state = self.read_solve_state()?;
        self.report = SolveReport {
            iterations: iterations as f32 / substeps as f32,
            compression: f32::from_bits(state[2]),
            // The GPU solve runs a fixed number of CG iterations and measures no residual.
            coarse_residual: f32::NAN,
        };
        if self.stage_timing {
            let times = &mut self.times;
            self.timer
                .collect(|stage, seconds| times.add(stage, seconds))?;
        }
        let Some(particle) = bad else {
            return Ok(());
        };
        let snapshot = self.try_snapshot()?;
        let (position, velocity) = (
            snapshot.positions[particle as usize],
            snapshot.velocities[particle as usize],
        );
        let (quantity, value) = if position.is_finite() {
            ("velocity", velocity)
        } else {
            ("position", position)
        };
        Err(SolverError::NonFinite {
            step: self.steps,
            particle,
            quantity,
            value: value.to_array(),
            stage: "xsph (checked once per frame)",
        })
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn stage_times(&self) -> StageTimes {
        self.times.clone()
    }

    fn reset_stage_times(&mut self) {
        self.times.clear();
    }

    fn cuda_graphs(&self) -> Option<String> {
        Some(self.graph_summary())
    }

    fn solve_report(&self) -> SolveReport {
        self.report
    }

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        self.try_snapshot()
    }

    fn frame_stats(&self) -> Result<FrameStats, SolverError> {
        self.reduced_stats()
    }

    fn render_positions(
        &self,
        scalar: RenderScalar,
        out: &mut Vec<[f32; 4]>,
    ) -> Result<(), SolverError> {
        out.clear();
        let positions = self.download(&self.buffers.positions)?;
        let values: Vec<f32> = match scalar {
            RenderScalar::Speed => self
                .download(&self.buffers.velocities)?
                .iter()
                .map(|v| to_vec3(v).length())
                .collect(),
            RenderScalar::Density => self.download(&self.buffers.densities)?,
        };
        out.extend(
            positions
                .iter()
                .zip(&values)
                .map(|(x, value)| [x[0], x[1], x[2], *value]),
        );
        Ok(())
    }

    fn write_gl_buffer(
        &mut self,
        gl_buffer: u32,
        scalar: RenderScalar,
    ) -> Result<bool, SolverError> {
        self.gl_write_particles(gl_buffer, scalar)
    }

    fn write_gl_anisotropy(&mut self, gl_buffer: u32) -> Result<bool, SolverError> {
        self.gl_write_anisotropy(gl_buffer)
    }

    /// The `foam` stage on the GPU ([`foam`]): `foam` only counts the step (its random
    /// numbers); the diffuse particles stay in the solver's pool.
    fn foam(
        &mut self,
        foam: &mut crate::sims::pbf::foam::Foam,
        settings: &crate::sims::pbf::foam::FoamSettings,
        dt: f32,
        world: &crate::sims::pbf::World,
    ) -> Result<usize, SolverError> {
        self.foam_stage(foam.next_step(), settings, dt, &world.container)
    }

    fn foam_counts(&self, foam: &crate::sims::pbf::foam::Foam) -> [usize; 3] {
        let _ = foam;
        self.foam.as_ref().map_or([0; 3], DeviceFoam::counts)
    }

    fn foam_particles(
        &self,
        foam: &crate::sims::pbf::foam::Foam,
    ) -> Result<Vec<crate::sims::pbf::foam::Diffuse>, SolverError> {
        let _ = foam;
        match &self.foam {
            Some(pool) => pool.download(&self.stream),
            None => Ok(Vec::new()),
        }
    }

    fn foam_records(
        &self,
        foam: &crate::sims::pbf::foam::Foam,
        out: &mut Vec<[f32; 4]>,
    ) -> Result<(), SolverError> {
        crate::sims::pbf::foam::records(&self.foam_particles(foam)?, out);
        Ok(())
    }

    fn write_gl_foam(&mut self, gl_buffer: u32, buffer_bytes: usize) -> Result<bool, SolverError> {
        self.gl_write_foam(gl_buffer, buffer_bytes)
    }

    fn clear_foam(&mut self) -> Result<(), SolverError> {
        if let Some(pool) = self.foam.as_mut() {
            if pool.alive() > 0 {
                pool.set_alive(&self.stream, 0)?;
            }
        }
        Ok(())
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        CudaSolver::set_stage_timing(self, enabled);
    }

    fn release_gl(&mut self) {
        self.gl_release();
    }
}

impl Drop for CudaSolver {
    /// Front ends release the GL buffer with [`Solver::release_gl`] while their GL context is
    /// current; this is the safety net for paths that drop the solver first (an error return
    /// with the GL context still alive), where unregistering is still right.
    fn drop(&mut self) {
        self.release_gl();
    }
}

/// Free GPU memory before and after `restarts` solvers of the parity scene are created,
/// stepped and dropped (as the viewer does on every scene restart): equal when nothing leaks.
/// One solver runs first so one-time driver state is not counted.
pub fn free_memory_across_restarts(restarts: usize) -> Result<(usize, usize), SolverError> {
    // Holds the primary context for the whole check, so it is not torn down between solvers.
    let context = crate::cuda::context(DEFAULT_DEVICE)?;
    let scene = parity::parity_scene();
    let seed = scene.seed();
    let run = || -> Result<(), SolverError> {
        let mut solver = CudaSolver::new(scene.world(), scene.params.clone(), &seed)?;
        solver.step()
    };
    let free = || -> Result<usize, SolverError> {
        context
            .synchronize()
            .map_err(CudaError::driver("cuCtxSynchronize"))?;
        Ok(context
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?
            .0)
    };
    run()?;
    let before = free()?;
    for _ in 0..restarts {
        run()?;
    }
    Ok((before, free()?))
}
