//! The CUDA solver: the CPU reference's stages as kernels (`kernels/pbf.cu`), launched through
//! cudarc on one stream with no host synchronisation inside a frame.
//!
//! One frame: `substeps` (or more, as the CFL condition asks) × { predict_positions → build_grid (compute_cell_ids, scan_blocks,
//! add_block_offsets, reorder_particles) → iterations × { compute_lambda, apply_delta } →
//! update_velocity → vorticity (vorticity_curl, vorticity_confinement) → xsph }, then
//! `find_non_finite` (which also measures the largest speed for the next frame's CFL substeps)
//! and one 8-byte copy back: the only synchronisation of the frame.
//!
//! There is no find_neighbors stage: every neighbour loop walks the 27 grid cells around the
//! particle. The neighbour set is the CPU's: particles within h at the positions the grid was
//! built from (kept in `grid_positions`), fixed for the step while the kernels evaluate W and
//! ∇W at the current positions.

pub mod coarse;
pub mod egl;
#[cfg(test)]
mod emulation;
mod interop;
mod params;
pub mod parity;
pub mod pbf;
pub mod ptx;

use super::{
    InitialState, Params, RenderScalar, Snapshot, SolveReport, Solver, SolverError, Stage,
    StageTimes, World,
};
use coarse::GpuCoarse;
use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use glam::Vec3A;
pub use interop::gl_device;
use interop::GlInterop;
use params::{GpuObstacle, GpuParams};
use pbf::{per_element, PbfKernels};
use std::sync::Arc;

type Float4 = [f32; 4];

/// Bytes of GPU memory per particle: positions, predicted positions and velocities (float4,
/// double-buffered for the sort), grid positions (float4), ids (double-buffered), λ, ρ,
/// neighbour count, ω and the walls' Σ ∇W (float4), cell and rank.
pub const BYTES_PER_PARTICLE: u64 = 7 * 16 + 2 * 4 + 3 * 4 + 2 * 16 + 2 * 4;

/// Bytes of GPU memory per grid cell: the counting sort's counts and starts, and the coarse
/// correction (`crate::sim::coarse::BYTES_PER_CELL`).
pub const BYTES_PER_CELL: u64 = 2 * 4 + crate::sim::coarse::BYTES_PER_CELL;

/// Iterations launched between two reads of the convergence flag under the density-error rule.
pub const ITERATIONS_PER_CHECK: u32 = 4;

/// The oldest driver API version the backend runs on (`cuDriverGetVersion`): CUDA 13.0.
pub const MIN_DRIVER_CUDA_VERSION: i32 = 13000;

/// Why the CUDA backend cannot run on this machine, or `None` when it can.
pub fn unavailable() -> Option<String> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Some(
            "no NVIDIA CUDA driver was found (libcuda.so is not installed or not on the library path)"
                .into(),
        );
    }
    if let Err(e) = cudarc::driver::result::init() {
        return Some(format!("the CUDA driver did not initialise ({e})"));
    }
    // cudarc is bound to the CUDA 13.0 API (some entry points are 13.0's `_v2` names) and the
    // prebuilt PTX is ISA 9.0: an older driver would fail on a missing symbol, not cleanly.
    let mut version = 0;
    // SAFETY: writes one int; available in every driver version.
    if unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .is_ok()
        && version < MIN_DRIVER_CUDA_VERSION
    {
        return Some(format!(
            "the NVIDIA driver supports CUDA {}.{}, and this build needs CUDA 13.0 or newer \
             (driver 580 or newer)",
            version / 1000,
            version % 1000 / 10
        ));
    }
    match CudaContext::device_count() {
        Ok(0) => Some("the CUDA driver reports no GPU".into()),
        Ok(_) => None,
        Err(e) => Some(format!("the CUDA driver could not count GPUs ({e})")),
    }
}

/// What `fluidlab doctor` reports about the GPU.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Device name.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Total device memory, bytes.
    pub total_memory: usize,
    /// Free device memory, bytes.
    pub free_memory: usize,
    /// Driver's CUDA version, e.g. 13000 for 13.0.
    pub driver_version: i32,
}

/// Facts about GPU 0. Call only when [`unavailable`] returned `None`.
pub fn device_info() -> Result<DeviceInfo, String> {
    let context = CudaContext::new(0).map_err(|e| format!("creating a CUDA context: {e}"))?;
    let mut driver_version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .map_err(|e| format!("cuDriverGetVersion: {e}"))?;
    let (free_memory, total_memory) = context.mem_get_info().map_err(|e| e.to_string())?;
    Ok(DeviceInfo {
        name: context.name().map_err(|e| e.to_string())?,
        compute_capability: context.compute_capability().map_err(|e| e.to_string())?,
        total_memory,
        free_memory,
        driver_version,
    })
}

/// Loads the PBF module: the prebuilt cubin when the GPU runs it (no JIT compilation), else the
/// prebuilt PTX when the build had nvcc and the driver accepts it (the driver compiles it for
/// this GPU), else the embedded source compiled by NVRTC for this GPU. Returns the module and a
/// sentence saying where its code came from and why.
pub fn load_module(context: &Arc<CudaContext>) -> Result<(Arc<CudaModule>, String), SolverError> {
    let compute_capability = context
        .compute_capability()
        .map_err(|e| SolverError::Backend(e.to_string()))?;
    let (major, minor) = compute_capability;
    let mut passed_over = Vec::new();
    if let (Some(cubin), Some(arch)) = (ptx::PBF_CUBIN, ptx::CUBIN_ARCH) {
        let runs = ptx::compute_capability_of(arch)
            .is_some_and(|built| ptx::cubin_runs_on(built, compute_capability));
        if runs {
            match context.load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec())) {
                Ok(module) => {
                    let origin = ptx::CUBIN_ORIGIN.unwrap_or("nvcc at build time");
                    return Ok((module, format!("the {arch} cubin ({origin}; no JIT)")));
                }
                Err(e) => passed_over.push(format!("the driver refused the {arch} cubin ({e})")),
            }
        } else {
            passed_over.push(format!(
                "the {arch} cubin does not run on compute capability {major}.{minor}"
            ));
        }
    }
    match (ptx::PBF_PTX, ptx::PREBUILT_ORIGIN) {
        (Some(source), origin) => match context.load_module(cudarc::nvrtc::Ptx::from_src(source)) {
            Ok(module) => {
                let mut note = format!(
                    "PTX from {}, compiled by the driver for compute_{major}{minor}",
                    origin.unwrap_or("nvcc at build time")
                );
                if !passed_over.is_empty() {
                    note += &format!(" ({})", passed_over.join("; "));
                }
                return Ok((module, note));
            }
            Err(e) => passed_over.push(format!("the driver refused the prebuilt PTX ({e})")),
        },
        (None, _) => passed_over.push("the build found no nvcc".to_string()),
    }
    let fallback_reason = passed_over.join("; ");
    let ptx = compile_with_nvrtc(compute_capability).map_err(|e| {
        SolverError::Backend(format!(
            "cannot load the CUDA kernels: {fallback_reason}; {e}"
        ))
    })?;
    let module = context
        .load_module(ptx)
        .map_err(|e| SolverError::Backend(format!("loading the NVRTC-compiled PTX: {e}")))?;
    Ok((
        module,
        format!("NVRTC at run time for compute_{major}{minor} ({fallback_reason})"),
    ))
}

/// Compiles the embedded kernel source with NVRTC for a GPU of `compute_capability` (needs
/// libnvrtc, not a GPU), with the options build.rs gives nvcc.
pub fn compile_with_nvrtc((major, minor): (i32, i32)) -> Result<cudarc::nvrtc::Ptx, String> {
    // SAFETY: only tries to open the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("NVRTC (libnvrtc.so) was not found to compile them at run time".into());
    }
    let options = cudarc::nvrtc::CompileOptions {
        options: vec![
            format!("--gpu-architecture=compute_{major}{minor}"),
            "-std=c++17".into(),
            "-lineinfo".into(),
        ],
        name: Some("pbf.cu".into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(ptx::pbf_source(), options)
        .map_err(|e| format!("NVRTC failed on kernels/pbf.cu: {e:?}"))
}

/// CUDA events around each stage of a frame, read after the frame's synchronisation.
struct StageTimer {
    events: Vec<CudaEvent>,
    stages: Vec<Stage>,
}

impl StageTimer {
    fn new() -> Self {
        Self {
            events: Vec::new(),
            stages: Vec::new(),
        }
    }

    fn record(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
        slot: usize,
    ) -> Result<(), SolverError> {
        if self.events.len() <= slot {
            let event = context
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_error("creating a CUDA event"))?;
            self.events.push(event);
        }
        self.events[slot]
            .record(stream)
            .map_err(driver_error("recording a CUDA event"))
    }

    /// Starts a frame: the event every stage time is measured from.
    fn begin(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
    ) -> Result<(), SolverError> {
        self.stages.clear();
        self.record(context, stream, 0)
    }

    /// Marks the end of `stage` (begun where the previous stage ended).
    fn end(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
        stage: Stage,
    ) -> Result<(), SolverError> {
        self.stages.push(stage);
        self.record(context, stream, self.stages.len())
    }

    /// Adds the frame's stage times to `times` (the stream must have reached the last event).
    fn collect(&self, times: &mut StageTimes) -> Result<(), SolverError> {
        for (k, &stage) in self.stages.iter().enumerate() {
            let ms = self.events[k]
                .elapsed_ms(&self.events[k + 1])
                .map_err(driver_error("reading a CUDA event"))?;
            times.add(stage, ms as f64 * 1e-3);
        }
        Ok(())
    }
}

/// The particle arrays and grid on the GPU.
struct Buffers {
    positions: CudaSlice<Float4>,
    predicted: CudaSlice<Float4>,
    velocities: CudaSlice<Float4>,
    ids: CudaSlice<u32>,
    /// Second copies: the sort's destination, apply_delta's and xsph's output.
    positions_next: CudaSlice<Float4>,
    predicted_next: CudaSlice<Float4>,
    velocities_next: CudaSlice<Float4>,
    ids_next: CudaSlice<u32>,
    /// x* when the grid was built (sorted): neighbour sets are defined by these for the step.
    grid_positions: CudaSlice<Float4>,
    lambdas: CudaSlice<f32>,
    densities: CudaSlice<f32>,
    neighbor_counts: CudaSlice<u32>,
    omegas: CudaSlice<Float4>,
    cell_of: CudaSlice<u32>,
    rank: CudaSlice<u32>,
    /// Particles per cell, counted by compute_cell_ids and zeroed again by the scan (cells + 1).
    cell_counts: CudaSlice<u32>,
    /// Exclusive scan of the counts: cell c holds sorted particles cell_start[c]..cell_start[c + 1].
    cell_start: CudaSlice<u32>,
    /// Block totals of each scan level above the first.
    scan_sums: Vec<CudaSlice<u32>>,
    obstacles: CudaSlice<GpuObstacle>,
    /// [first non-finite id (complemented), largest speed (float bits)], see `find_non_finite`.
    frame_check: CudaSlice<u32>,
    /// The walls' and obstacles' [Σ_b ∇W, Σ_b W] per particle (`boundary_density`), for
    /// compute_lambda and apply_delta.
    boundary: CudaSlice<Float4>,
    /// Σ Cᵢ of the compute_lambda that measures the compression (`check_density_error`).
    compression: CudaSlice<f64>,
    /// [converged, iterations applied, mean compression (float bits)] of the step's
    /// constraint iterations (`check_density_error`, `apply_delta`).
    solve_state: CudaSlice<u32>,
}

/// The CUDA Position Based Fluids solver.
pub struct CudaSolver {
    params: Params,
    world: World,
    constants: GpuParams,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: PbfKernels,
    kernel_origin: String,
    /// `FLUIDLAB_CUDA_SYNC_CHECK`: every launch is synchronised and checked.
    sync_check: bool,
    particle_count: usize,
    buffers: Buffers,
    scan_levels: Vec<usize>,
    steps: u64,
    /// Largest particle speed after the last frame (m/s): sets the next frame's CFL substeps.
    max_speed: f32,
    times: StageTimes,
    timer: StageTimer,
    stage_timing: bool,
    interop: GlInterop,
    report: SolveReport,
    coarse: GpuCoarse,
}

fn driver_error(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> SolverError {
    move |e| SolverError::Backend(format!("{what}: {e}"))
}

fn to_float4(v: &Vec3A) -> Float4 {
    [v.x, v.y, v.z, 0.0]
}

fn to_vec3(v: &Float4) -> Vec3A {
    Vec3A::new(v[0], v[1], v[2])
}

impl CudaSolver {
    /// A solver over `initial` (particle `i` gets id `i`) on GPU 0 (see [`CudaSolver::new_on`]).
    pub fn new(world: World, params: Params, initial: &InitialState) -> Result<Self, SolverError> {
        Self::new_on(0, world, params, initial)
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
        if let Some(reason) = unavailable() {
            return Err(SolverError::Backend(reason));
        }
        let n = initial.len();
        if n >= u32::MAX as usize {
            return Err(SolverError::Params(format!(
                "{n} particles exceed the 2³² id range"
            )));
        }
        initial.check_finite()?;
        let constants = GpuParams::new(
            &params,
            &world,
            n as u32,
            params.dt / params.substeps as f32,
        );
        let cells = constants.cell_count();
        if cells + 1 >= u32::MAX as usize {
            return Err(SolverError::Params(format!(
                "the grid has {cells} cells (container / kernel_radius), more than the CUDA solver's \
                 32-bit cell indices hold; use a smaller container or a larger kernel_radius"
            )));
        }
        let scan_levels = pbf::scan_levels(cells + 1);

        let sync_check = pbf::sync_check_requested()?;
        let context = CudaContext::new(device).map_err(driver_error("creating a CUDA context"))?;
        let needed = n as u64 * BYTES_PER_PARTICLE
            + scan_levels.iter().map(|&l| l as u64 * 4).sum::<u64>()
            + (cells as u64 + 1) * BYTES_PER_CELL
            + world.obstacles.len() as u64 * 32;
        let (free, _) = context
            .mem_get_info()
            .map_err(driver_error("cuMemGetInfo"))?;
        if needed > free as u64 {
            let name = context.name().unwrap_or_else(|_| "the GPU".into());
            return Err(SolverError::Backend(format!(
                "{n} particles need {} of GPU memory for the CUDA solver, but {name} has only {} \
                 free; use fewer particles (a larger spacing) or --backend cpu",
                crate::scene::format_bytes(needed),
                crate::scene::format_bytes(free as u64)
            )));
        }
        let (module, kernel_origin) = load_module(&context)?;
        // One stream, used for everything: cudarc's cross-stream event tracking is not needed.
        // SAFETY: set before any allocation of this context; all work goes to `stream`.
        unsafe { context.disable_event_tracking() };
        let stream = context
            .new_stream()
            .map_err(driver_error("creating a CUDA stream"))?;
        let kernels = PbfKernels::load(&module, sync_check.then_some(&stream))?;
        let buffers = Self::allocate(&stream, initial, &world, cells, &scan_levels)
            .map_err(driver_error("allocating GPU memory"))?;
        let dims = constants.grid_dims.map(|d| d as usize);
        let coarse =
            GpuCoarse::new(&stream, &world, dims).map_err(driver_error("allocating GPU memory"))?;
        let mut solver = Self {
            params,
            world,
            constants,
            context,
            stream,
            kernels,
            kernel_origin,
            sync_check,
            particle_count: n,
            buffers,
            scan_levels,
            steps: 0,
            max_speed: initial.max_speed(),
            times: StageTimes::default(),
            timer: StageTimer::new(),
            stage_timing: true,
            interop: GlInterop::default(),
            report: SolveReport::default(),
            coarse,
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
            .map_err(driver_error("setting up the CUDA solver"))?;
        Ok(solver)
    }

    fn allocate(
        stream: &Arc<CudaStream>,
        initial: &InitialState,
        world: &World,
        cells: usize,
        scan_levels: &[usize],
    ) -> Result<Buffers, cudarc::driver::DriverError> {
        // At least one element each: a zero-byte allocation is not portable.
        let n = initial.len().max(1);
        let mut positions: Vec<Float4> = initial.positions.iter().map(to_float4).collect();
        let mut velocities: Vec<Float4> = initial.velocities.iter().map(to_float4).collect();
        let mut ids: Vec<u32> = (0..initial.len() as u32).collect();
        positions.resize(n, [0.0; 4]);
        velocities.resize(n, [0.0; 4]);
        ids.resize(n, 0);
        let mut obstacles: Vec<GpuObstacle> =
            world.obstacles.iter().map(GpuObstacle::from).collect();
        obstacles.resize(obstacles.len().max(1), GpuObstacle::default());
        Ok(Buffers {
            positions: stream.clone_htod(&positions)?,
            predicted: stream.clone_htod(&positions)?,
            velocities: stream.clone_htod(&velocities)?,
            ids: stream.clone_htod(&ids)?,
            positions_next: stream.alloc_zeros(n)?,
            predicted_next: stream.alloc_zeros(n)?,
            velocities_next: stream.alloc_zeros(n)?,
            ids_next: stream.alloc_zeros(n)?,
            grid_positions: stream.alloc_zeros(n)?,
            lambdas: stream.alloc_zeros(n)?,
            densities: stream.alloc_zeros(n)?,
            neighbor_counts: stream.alloc_zeros(n)?,
            omegas: stream.alloc_zeros(n)?,
            cell_of: stream.alloc_zeros(n)?,
            rank: stream.alloc_zeros(n)?,
            cell_counts: stream.alloc_zeros(cells + 1)?,
            cell_start: stream.alloc_zeros(cells + 1)?,
            scan_sums: scan_levels[1..]
                .iter()
                .map(|&len| stream.alloc_zeros(len))
                .collect::<Result<_, _>>()?,
            obstacles: stream.clone_htod(&obstacles)?,
            frame_check: stream.alloc_zeros(2)?,
            boundary: stream.alloc_zeros(n)?,
            compression: stream.alloc_zeros(1)?,
            solve_state: stream.alloc_zeros(3)?,
        })
    }

    /// Where the kernels' code came from (the cubin, PTX from nvcc at build time, or NVRTC, and
    /// why), and whether every launch is checked.
    pub fn kernel_origin(&self) -> String {
        if self.sync_check {
            format!(
                "{}; {}=1: every launch synchronised and checked",
                self.kernel_origin,
                pbf::SYNC_CHECK_VARIABLE
            )
        } else {
            self.kernel_origin.clone()
        }
    }

    fn launch_config(&self) -> LaunchConfig {
        per_element(self.particle_count)
    }

    fn predict_positions(&mut self) -> Result<(), SolverError> {
        let (k, b) = (&self.kernels.predict_positions, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.obstacles)
            .arg(&b.positions)
            .arg(&mut b.velocities)
            .arg(&mut b.predicted);
        // SAFETY: arguments as in pbf.cu; every array holds particle_count elements.
        unsafe { k.launch(&mut launch, per_element(self.particle_count)) }
    }

    /// Counting sort of every particle array by the cell of x*: count (atomics), exclusive
    /// scan (which also zeroes the counts for the next step), scatter.
    fn build_grid(&mut self) -> Result<(), SolverError> {
        let config = self.launch_config();
        let b = &mut self.buffers;
        let k = &self.kernels;
        let mut launch = self.stream.launch_builder(k.compute_cell_ids.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&mut b.cell_of)
            .arg(&mut b.rank)
            .arg(&mut b.cell_counts);
        // SAFETY: arguments as in pbf.cu; cell ids are clamped into the grid.
        unsafe { k.compute_cell_ids.launch(&mut launch, config)? };

        // Up the levels: scan each level in blocks, collecting block totals into the next.
        let levels = &self.scan_levels;
        let null: u64 = 0;
        for level in 0..levels.len() {
            let count = levels[level] as u32;
            let blocks = levels[level].div_ceil(pbf::SCAN_ITEMS_PER_BLOCK) as u32;
            let config = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (pbf::SCAN_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let clear_input: i32 = (level == 0).into();
            let mut launch = self.stream.launch_builder(k.scan_blocks.function());
            let (lower, upper) = b.scan_sums.split_at_mut(level);
            if level == 0 {
                launch.arg(&mut b.cell_counts).arg(&mut b.cell_start);
            } else {
                let this = &mut lower[level - 1];
                launch.arg(&*this).arg(&*this);
            }
            match upper.first_mut() {
                Some(sums) if level + 1 < levels.len() => launch.arg(sums),
                _ => launch.arg(&null),
            };
            launch.arg(&count).arg(&clear_input);
            // SAFETY: each level's array holds `count` values; its block totals array holds
            // `blocks` (the next level's count).
            unsafe { k.scan_blocks.launch(&mut launch, config)? };
        }
        // Down again: add each level's scanned block totals to the level below.
        for level in (0..levels.len() - 1).rev() {
            let count = levels[level] as u32;
            let (lower, upper) = b.scan_sums.split_at_mut(level);
            let mut launch = self.stream.launch_builder(k.add_block_offsets.function());
            if level == 0 {
                launch.arg(&mut b.cell_start);
            } else {
                launch.arg(&mut lower[level - 1]);
            }
            launch.arg(&upper[0]).arg(&count);
            // SAFETY: `count` values, one offset per block of SCAN_ITEMS_PER_BLOCK.
            unsafe {
                k.add_block_offsets
                    .launch(&mut launch, per_element(levels[level]))?
            };
        }

        let mut launch = self.stream.launch_builder(k.reorder_particles.function());
        launch
            .arg(&self.constants)
            .arg(&b.cell_of)
            .arg(&b.rank)
            .arg(&b.cell_start)
            .arg(&b.positions)
            .arg(&b.predicted)
            .arg(&b.velocities)
            .arg(&b.ids)
            .arg(&mut b.positions_next)
            .arg(&mut b.predicted_next)
            .arg(&mut b.velocities_next)
            .arg(&mut b.ids_next)
            .arg(&mut b.grid_positions);
        // SAFETY: arguments as in pbf.cu; slots are a permutation of 0..particle_count.
        unsafe { k.reorder_particles.launch(&mut launch, config)? };
        std::mem::swap(&mut b.positions, &mut b.positions_next);
        std::mem::swap(&mut b.predicted, &mut b.predicted_next);
        std::mem::swap(&mut b.velocities, &mut b.velocities_next);
        std::mem::swap(&mut b.ids, &mut b.ids_next);
        Ok(())
    }

    /// compute_lambda; with `measure`, Σ Cᵢ goes to the compression sum; with `guarded`, it
    /// does nothing once the density-error rule has converged.
    fn compute_lambda(
        &mut self,
        count_neighbors: bool,
        measure: bool,
        guarded: bool,
    ) -> Result<(), SolverError> {
        let config = self.launch_config();
        let null: u64 = 0;
        let (k, b) = (&self.kernels.boundary_density, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.obstacles)
            .arg(&b.predicted)
            .arg(&mut b.boundary);
        if guarded {
            launch.arg(&b.solve_state);
        } else {
            launch.arg(&null);
        }
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config)? };
        let (k, b) = (&self.kernels.compute_lambda, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&b.ids)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&b.boundary)
            .arg(&mut b.lambdas)
            .arg(&mut b.densities);
        if count_neighbors {
            launch.arg(&mut b.neighbor_counts);
        } else {
            launch.arg(&null);
        }
        if measure {
            launch.arg(&mut b.compression);
        } else {
            launch.arg(&null);
        }
        if guarded {
            launch.arg(&b.solve_state);
        } else {
            launch.arg(&null);
        }
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config) }
    }

    /// The mean compression of the last measuring compute_lambda into solve_state[2] (and the
    /// sum cleared); from iteration `fewest` on, a mean at most `tolerance` marks the step
    /// converged (a negative tolerance never does).
    fn check_density_error(
        &mut self,
        tolerance: f32,
        iteration: u32,
        fewest: u32,
    ) -> Result<(), SolverError> {
        let (k, b) = (&self.kernels.check_density_error, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&mut b.compression)
            .arg(&mut b.solve_state)
            .arg(&tolerance)
            .arg(&iteration)
            .arg(&fewest);
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: arguments as in pbf.cu; one thread.
        unsafe { k.launch(&mut launch, config) }
    }

    /// apply_delta; `after_coarse` evaluates the pair terms at the positions the grid was built
    /// from (those compute_lambda saw before the coarse correction moved the particles).
    fn apply_delta(&mut self, guarded: bool, after_coarse: bool) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels.apply_delta, &mut self.buffers);
        let null: u64 = 0;
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.obstacles)
            .arg(&b.predicted);
        if after_coarse {
            launch.arg(&b.grid_positions);
        } else {
            launch.arg(&b.predicted);
        }
        launch
            .arg(&b.ids)
            .arg(&b.lambdas)
            .arg(&b.boundary)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&mut b.predicted_next);
        if guarded {
            launch.arg(&mut b.solve_state);
        } else {
            launch.arg(&null);
        }
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config)? };
        std::mem::swap(&mut b.predicted, &mut b.predicted_next);
        Ok(())
    }

    /// The coarse-grid correction (`coarse.cuh`) from the first compute_lambda's densities.
    fn coarse_correction(&mut self) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        self.coarse.run(
            &self.stream,
            &self.kernels,
            &self.constants,
            &b.obstacles,
            &mut b.predicted,
            &b.densities,
            &b.cell_start,
        )
    }

    fn update_velocity(&mut self) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels.update_velocity, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.positions)
            .arg(&b.predicted)
            .arg(&mut b.velocities);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config) }
    }

    fn vorticity(&mut self) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.vorticity_curl.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&b.velocities)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&mut b.omegas);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.vorticity_curl.launch(&mut launch, config)? };
        let mut launch = self
            .stream
            .launch_builder(k.vorticity_confinement.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&b.omegas)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&mut b.velocities);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.vorticity_confinement.launch(&mut launch, config) }
    }

    /// XSPH into the second velocity buffer, then x = x* (a swap: predict overwrites the old x).
    fn xsph(&mut self, enabled: bool) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels.xsph, &mut self.buffers);
        if enabled {
            let mut launch = self.stream.launch_builder(k.function());
            launch
                .arg(&self.constants)
                .arg(&b.predicted)
                .arg(&b.velocities)
                .arg(&b.cell_start)
                .arg(&b.grid_positions)
                .arg(&mut b.velocities_next);
            // SAFETY: arguments as in pbf.cu.
            unsafe { k.launch(&mut launch, config)? };
            std::mem::swap(&mut b.velocities, &mut b.velocities_next);
        }
        std::mem::swap(&mut b.positions, &mut b.predicted);
        Ok(())
    }

    /// Runs `stage` and, with stage timing on, marks its end with an event.
    fn timed(
        &mut self,
        stage: Stage,
        run: impl FnOnce(&mut Self) -> Result<(), SolverError>,
    ) -> Result<(), SolverError> {
        // The range spans the launches on the CPU timeline; Nsight Systems draws it over the
        // kernels they queued.
        let range = super::nvtx::range(stage.c_name());
        run(self)?;
        drop(range);
        if self.stage_timing {
            self.timer.end(&self.context, &self.stream, stage)?;
        }
        Ok(())
    }

    /// One solver step. Returns the constraint iterations it ran.
    fn substep(&mut self, last: bool) -> Result<u32, SolverError> {
        self.timed(Stage::PredictPositions, Self::predict_positions)?;
        self.timed(Stage::BuildGrid, Self::build_grid)?;
        let iterations = self.constraint_iterations(last)?;
        self.timed(Stage::UpdateVelocity, Self::update_velocity)?;
        if self.params.vorticity != 0.0 {
            self.timed(Stage::Vorticity, Self::vorticity)?;
        }
        let xsph = self.params.xsph_c > 0.0;
        self.timed(Stage::Xsph, |s| s.xsph(xsph))?;
        Ok(iterations)
    }

    /// compute_lambda and apply_delta as the iteration rule says (and the coarse correction
    /// after the first compute_lambda). Returns the iterations applied.
    fn constraint_iterations(&mut self, last: bool) -> Result<u32, SolverError> {
        let coarse = self.params.coarse_correction;
        let (fewest, most, tolerance) = self.params.iteration_rule();
        let Some(tolerance) = tolerance else {
            // A fixed count: no flag, no synchronisation; the last compute_lambda of the
            // frame's last step measures the compression for the report.
            for iteration in 0..most {
                let measure = last && iteration + 1 == most;
                self.timed(Stage::ComputeLambda, |s| {
                    s.compute_lambda(iteration == 0, measure, false)?;
                    if measure {
                        s.check_density_error(-1.0, iteration, fewest)?;
                    }
                    Ok(())
                })?;
                let after_coarse = iteration == 0 && coarse;
                if after_coarse {
                    self.timed(Stage::CoarseCorrection, Self::coarse_correction)?;
                }
                self.timed(Stage::ApplyDelta, |s| s.apply_delta(false, after_coarse))?;
            }
            return Ok(most);
        };
        // The density-error rule: after every compute_lambda, check_density_error sets the
        // converged flag on the GPU; later kernels of the step see it and do nothing. The host
        // reads the flag every ITERATIONS_PER_CHECK iterations to stop launching.
        self.stream
            .memset_zeros(&mut self.buffers.solve_state)
            .map_err(driver_error("clearing the iteration state"))?;
        self.stream
            .memset_zeros(&mut self.buffers.compression)
            .map_err(driver_error("clearing the iteration state"))?;
        let mut iteration = 0;
        loop {
            let chunk_end = (iteration + ITERATIONS_PER_CHECK).min(most);
            while iteration < chunk_end {
                self.timed(Stage::ComputeLambda, |s| {
                    s.compute_lambda(iteration == 0, true, true)?;
                    s.check_density_error(tolerance, iteration, fewest)
                })?;
                let after_coarse = iteration == 0 && coarse;
                if after_coarse {
                    self.timed(Stage::CoarseCorrection, Self::coarse_correction)?;
                }
                self.timed(Stage::ApplyDelta, |s| s.apply_delta(true, after_coarse))?;
                iteration += 1;
            }
            let state = self.read_solve_state()?;
            if state[0] != 0 || iteration >= most {
                return Ok(state[1]);
            }
        }
    }

    /// [converged, iterations applied, mean compression bits] (synchronises).
    fn read_solve_state(&self) -> Result<[u32; 3], SolverError> {
        let mut state = [0u32; 3];
        self.stream
            .memcpy_dtoh(&self.buffers.solve_state, &mut state)
            .map_err(driver_error("reading the iteration state"))?;
        self.stream
            .synchronize()
            .map_err(driver_error("reading the iteration state"))?;
        Ok(state)
    }

    /// After a frame: the smallest id with a non-finite position or velocity, if any, and the
    /// largest speed (for the next frame's CFL substeps). One small kernel and an 8-byte copy,
    /// which is also the frame's one synchronisation.
    fn check_frame(&mut self) -> Result<(Option<u32>, f32), SolverError> {
        let b = &mut self.buffers;
        self.stream
            .memset_zeros(&mut b.frame_check)
            .map_err(driver_error("clearing the frame check"))?;
        let n = self.particle_count as u32;
        let k = &self.kernels.find_non_finite;
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&n)
            .arg(&b.positions)
            .arg(&b.velocities)
            .arg(&b.ids)
            .arg(&mut b.frame_check);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, per_element(self.particle_count))? };
        let mut check = [0u32; 2];
        let synchronised = self.sync_check;
        let failed = |e: cudarc::driver::DriverError| {
            SolverError::Backend(pbf::wait_failure(
                "a CUDA kernel of the step failed",
                e.0,
                &e.to_string(),
                synchronised,
            ))
        };
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
            .map_err(driver_error("copying particles from the GPU"))?;
        self.stream
            .synchronize()
            .map_err(driver_error("copying particles from the GPU"))?;
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
        self.params
            .check_live_edit(params)
            .map_err(SolverError::Params)?;
        self.params = params.clone();
        Ok(())
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
            self.timer.begin(&self.context, &self.stream)?;
        }
        let mut iterations = 0;
        for k in 0..substeps {
            iterations += self.substep(k + 1 == substeps)?;
        }
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
            self.timer.collect(&mut self.times)?;
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

    fn solve_report(&self) -> SolveReport {
        self.report
    }

    fn snapshot(&self) -> Snapshot {
        self.try_snapshot().unwrap_or_else(|error| {
            // The trait returns no error: say why, and hand back NaNs that statistics and
            // exports make visible rather than plausible zeros.
            eprintln!("error: {error}");
            let n = self.particle_count;
            Snapshot {
                positions: vec![Vec3A::NAN; n],
                velocities: vec![Vec3A::NAN; n],
                densities: vec![f32::NAN; n],
                neighbor_counts: vec![0; n],
                particle_mass: self.params.particle_mass,
                rest_density: self.params.rest_density,
                spacing: self.params.spacing,
                gravity: self.params.gravity,
                solve: self.report,
            }
        })
    }

    fn render_positions(&self, scalar: RenderScalar, out: &mut Vec<[f32; 4]>) {
        out.clear();
        let copied = self.download(&self.buffers.positions).and_then(|p| {
            let values: Vec<f32> = match scalar {
                RenderScalar::Speed => self
                    .download(&self.buffers.velocities)?
                    .iter()
                    .map(|v| to_vec3(v).length())
                    .collect(),
                RenderScalar::Density => self.download(&self.buffers.densities)?,
            };
            Ok((p, values))
        });
        match copied {
            Ok((positions, values)) => out.extend(
                positions
                    .iter()
                    .zip(&values)
                    .map(|(x, value)| [x[0], x[1], x[2], *value]),
            ),
            Err(error) => eprintln!("error: {error}"),
        }
    }

    fn write_gl_buffer(
        &mut self,
        gl_buffer: u32,
        scalar: RenderScalar,
    ) -> Result<bool, SolverError> {
        let n = self.particle_count;
        self.context
            .bind_to_thread()
            .map_err(driver_error("binding the CUDA context"))?;
        let (stream, kernels, buffers) = (&self.stream, &self.kernels, &self.buffers);
        self.interop
            .write(stream.cu_stream(), gl_buffer, n * 16, |pointer| {
                let count = n as u32;
                let code = scalar.code();
                let k = &kernels.write_render_buffer;
                let mut launch = stream.launch_builder(k.function());
                launch
                    .arg(&count)
                    .arg(&buffers.positions)
                    .arg(&buffers.velocities)
                    .arg(&buffers.densities)
                    .arg(&code)
                    .arg(&pointer);
                // SAFETY: the mapped buffer holds at least n float4 records (checked by write).
                unsafe { k.launch(&mut launch, per_element(n)) }
            })
    }

    fn set_stage_timing(&mut self, enabled: bool) {
        CudaSolver::set_stage_timing(self, enabled);
    }

    fn release_gl(&mut self) {
        if self.interop.is_registered() && self.context.bind_to_thread().is_ok() {
            // Work queued on the buffer finishes before it is unregistered.
            let _ = self.stream.synchronize();
            self.interop.release();
        }
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
    let context = CudaContext::new(0).map_err(driver_error("creating a CUDA context"))?;
    let scene = parity::parity_scene();
    let seed = scene.seed();
    let run = || -> Result<(), SolverError> {
        let mut solver = CudaSolver::new(scene.world(), scene.params.clone(), &seed)?;
        solver.step()
    };
    let free = || -> Result<usize, SolverError> {
        context
            .synchronize()
            .map_err(driver_error("cuCtxSynchronize"))?;
        Ok(context
            .mem_get_info()
            .map_err(driver_error("cuMemGetInfo"))?
            .0)
    };
    run()?;
    let before = free()?;
    for _ in 0..restarts {
        run()?;
    }
    Ok((before, free()?))
}
