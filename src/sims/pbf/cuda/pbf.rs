//! Host side of `kernels/pbf.cu`: its module, and one typed launch per kernel (the coarse
//! correction's in `coarse.rs`, beside their host code), each a call of the shared launch
//! helper with the kernel's parameters in order, so a stage reads as a short list of calls.

use super::params::{GpuObstacle, GpuParams};
use super::Float4;
use crate::cuda::launch::{self, KernelArgs, OrNull};
use crate::cuda::Module;
use crate::sims::pbf::SolverError;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchConfig};
use std::sync::Arc;

/// The module's name: `kernels/pbf.cu` (with `coarse.cuh`).
pub const MODULE: &str = "pbf";

/// Threads per block of the per-particle kernels (`PBF_BLOCK` in pbf.cu).
pub const BLOCK: u32 = 256;
/// Threads per block of `scan_blocks` (`SCAN_THREADS`).
pub const SCAN_THREADS: u32 = 512;
/// Values one `scan_blocks` block scans (`SCAN_ITEMS_PER_BLOCK`).
pub const SCAN_ITEMS_PER_BLOCK: usize = 2048;

/// The kernels of `kernels/pbf.cu`, loaded on one device.
pub struct PbfKernels {
    module: Module,
}

impl PbfKernels {
    /// The names of the kernels the host launches (each must be an `.entry` of the PTX), each
    /// launched by the method of the same name.
    pub const NAMES: &'static [&'static str] = &[
        "predict_positions",
        "compute_cell_ids",
        "scan_blocks",
        "add_block_offsets",
        "reorder_particles",
        "boundary_density",
        "compute_lambda",
        "check_density_error",
        "apply_delta",
        "update_velocity",
        "vorticity_curl",
        "vorticity_confinement",
        "xsph",
        "write_render_buffer",
        "anisotropy",
        "frame_stats",
        "frame_stats_finish",
        "foam_normals",
        "foam_potentials",
        "foam_advect",
        "foam_compact",
        "foam_emit",
        "foam_finish",
        "foam_count",
        "foam_records",
        "find_non_finite",
        "coarse_gather",
        "coarse_classify",
        "coarse_prepare",
        "mg_coarsen",
        "mg_smooth",
        "mg_residual",
        "mg_restrict",
        "mg_prolongate",
        "mg_tail",
        "mg_load",
        "pcg_operator",
        "pcg_dot",
        "pcg_scalars",
        "pcg_step",
        "pcg_direction",
        "coarse_faces",
        "coarse_apply",
    ];

    /// Loads the module on `context` and looks every kernel up. With `sync_check`, every launch
    /// is followed by a synchronisation of its stream and a check ([`crate::cuda::SYNC_CHECK_VARIABLE`]).
    pub fn load(context: &Arc<CudaContext>, sync_check: bool) -> Result<Self, SolverError> {
        let module = Module::load(context, MODULE, Self::NAMES, sync_check)?;
        Ok(Self { module })
    }

    /// Where the kernels' code came from (the cubin, PTX from nvcc at build time, or NVRTC),
    /// and why.
    pub fn origin(&self) -> &str {
        self.module.origin()
    }

    /// Whether every launch is synchronised and checked.
    pub fn sync_check(&self) -> bool {
        self.module.sync_check()
    }

    /// Launches `kernel` of the module ([`Module::launch`]).
    ///
    /// # Safety
    /// As [`Module::launch`]: `args` are the kernel's parameters, every buffer holds what it
    /// indexes over `config`.
    pub(super) unsafe fn launch<'a>(
        &'a self,
        kernel: &'static str,
        stream: &'a CudaStream,
        config: LaunchConfig,
        args: impl KernelArgs<'a>,
    ) -> Result<(), SolverError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.module.launch(kernel, stream, config, args) }.map_err(SolverError::from)
    }
}

/// The particle kernels, one method per kernel taking the kernel's parameters in order (hence
/// the long parameter lists). Each launches one thread per particle of `p`
/// (`p.particle_count`) unless it says otherwise; every particle array holds at least that many
/// elements (`CudaSolver::allocate`), and the SAFETY comments name what else a launch relies on.
#[allow(clippy::too_many_arguments)]
impl PbfKernels {
    /// v += dt·g; x* = x + dt·v, projected out of obstacles and into the container.
    pub(super) fn predict_positions(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        obstacles: &CudaSlice<GpuObstacle>,
        positions: &CudaSlice<Float4>,
        velocities: &mut CudaSlice<Float4>,
        predicted: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (p, obstacles, positions, velocities, predicted);
        // SAFETY: pbf.cu's parameters; obstacles holds p.obstacle_count records.
        unsafe { self.launch("predict_positions", stream, per_particle(p), args) }
    }

    /// The cell of each x* and its rank among the cell's particles (atomics on the counts).
    pub(super) fn compute_cell_ids(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        predicted: &CudaSlice<Float4>,
        cell_of: &mut CudaSlice<u32>,
        rank: &mut CudaSlice<u32>,
        cell_counts: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let args = (p, predicted, cell_of, rank, cell_counts);
        // SAFETY: pbf.cu's parameters; cell ids are clamped into the grid's cells.
        unsafe { self.launch("compute_cell_ids", stream, per_particle(p), args) }
    }

    /// Exclusive scan of `count` values of `input` in blocks of [`SCAN_ITEMS_PER_BLOCK`] into
    /// `output` (`None`: in place), each block's total into `block_sums` (if any);
    /// `clear_input` zeroes the input as it is read.
    pub(super) fn scan_blocks(
        &self,
        stream: &CudaStream,
        input: &mut CudaSlice<u32>,
        output: Option<&mut CudaSlice<u32>>,
        block_sums: Option<&mut CudaSlice<u32>>,
        count: usize,
        clear_input: bool,
    ) -> Result<(), SolverError> {
        let blocks = count.div_ceil(SCAN_ITEMS_PER_BLOCK) as u32;
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (SCAN_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // The kernel reads each item before a barrier and writes it after: in place is safe.
        let input = &*input;
        let output = output.map_or(input, |output| &*output);
        let (count, clear_input) = (count as u32, i32::from(clear_input));
        let args = (input, output, OrNull(block_sums), &count, &clear_input);
        // SAFETY: input and output hold `count` values, block_sums one per block.
        unsafe { self.launch("scan_blocks", stream, config, args) }
    }

    /// Adds each block's scanned total to the `count` values of its block (one thread each).
    pub(super) fn add_block_offsets(
        &self,
        stream: &CudaStream,
        values: &mut CudaSlice<u32>,
        block_offsets: &CudaSlice<u32>,
        count: usize,
    ) -> Result<(), SolverError> {
        let args = (values, block_offsets, &(count as u32));
        // SAFETY: `count` values, one offset per block of SCAN_ITEMS_PER_BLOCK.
        unsafe { self.launch("add_block_offsets", stream, per_element(count), args) }
    }

    /// Scatters every particle array to its sorted slot cell_start[cell] + rank; x* also to
    /// `grid_positions`.
    pub(super) fn reorder_particles(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        cell_of: &CudaSlice<u32>,
        rank: &CudaSlice<u32>,
        cell_start: &CudaSlice<u32>,
        positions: &CudaSlice<Float4>,
        predicted: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        sorted_positions: &mut CudaSlice<Float4>,
        sorted_predicted: &mut CudaSlice<Float4>,
        sorted_velocities: &mut CudaSlice<Float4>,
        sorted_ids: &mut CudaSlice<u32>,
        grid_positions: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            cell_of,
            rank,
            cell_start,
            positions,
            predicted,
            velocities,
            ids,
            sorted_positions,
            sorted_predicted,
            sorted_velocities,
            sorted_ids,
            grid_positions,
        );
        // SAFETY: pbf.cu's parameters; the slots are a permutation of 0..particle_count.
        unsafe { self.launch("reorder_particles", stream, per_particle(p), args) }
    }

    /// The walls' and obstacles' [Σ_b ∇W, Σ_b W] of each particle; nothing once `solve_state`
    /// (if given) says the iterations converged.
    pub(super) fn boundary_density(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        obstacles: &CudaSlice<GpuObstacle>,
        predicted: &CudaSlice<Float4>,
        boundary: &mut CudaSlice<Float4>,
        solve_state: Option<&CudaSlice<u32>>,
    ) -> Result<(), SolverError> {
        let args = (p, obstacles, predicted, boundary, OrNull(solve_state));
        // SAFETY: pbf.cu's parameters; solve_state holds 3 values.
        unsafe { self.launch("boundary_density", stream, per_particle(p), args) }
    }

    /// ρᵢ and λᵢ (eq. 11); optionally the neighbour counts and Σ Cᵢ into `compression`;
    /// nothing once `solve_state` (if given) says the iterations converged.
    pub(super) fn compute_lambda(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        predicted: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        boundary: &CudaSlice<Float4>,
        lambdas: &mut CudaSlice<f32>,
        densities: &mut CudaSlice<f32>,
        neighbor_counts: Option<&mut CudaSlice<u32>>,
        compression: Option<&mut CudaSlice<f64>>,
        solve_state: Option<&CudaSlice<u32>>,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            predicted,
            ids,
            cell_start,
            grid_positions,
            boundary,
            lambdas,
            densities,
            OrNull(neighbor_counts),
            OrNull(compression),
            OrNull(solve_state),
        );
        // SAFETY: pbf.cu's parameters; cell_start holds a start per cell and one past the last.
        unsafe { self.launch("compute_lambda", stream, per_particle(p), args) }
    }

    /// One thread: the mean compression of `compression` into solve_state[2] (and the sum
    /// cleared); from iteration `fewest` on, a mean at most `tolerance` marks convergence.
    pub(super) fn check_density_error(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        compression: &mut CudaSlice<f64>,
        solve_state: &mut CudaSlice<u32>,
        tolerance: f32,
        iteration: u32,
        fewest: u32,
    ) -> Result<(), SolverError> {
        let args = (p, compression, solve_state, &tolerance, &iteration, &fewest);
        // SAFETY: pbf.cu's parameters; one value and 3 values.
        unsafe { self.launch("check_density_error", stream, launch::one_block(1), args) }
    }

    /// Δpᵢ (eq. 12–14) with the pair terms at `evaluated_at`, x* + Δp projected into
    /// `corrected`; counts the iteration in (or, converged, copies x* given) `solve_state`.
    pub(super) fn apply_delta(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        obstacles: &CudaSlice<GpuObstacle>,
        predicted: &CudaSlice<Float4>,
        evaluated_at: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        lambdas: &CudaSlice<f32>,
        boundary: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        corrected: &mut CudaSlice<Float4>,
        solve_state: Option<&mut CudaSlice<u32>>,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            obstacles,
            predicted,
            evaluated_at,
            ids,
            lambdas,
            boundary,
            cell_start,
            grid_positions,
            corrected,
            OrNull(solve_state),
        );
        // SAFETY: pbf.cu's parameters; as compute_lambda.
        unsafe { self.launch("apply_delta", stream, per_particle(p), args) }
    }

    /// v = (x* − x) / dt.
    pub(super) fn update_velocity(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        positions: &CudaSlice<Float4>,
        predicted: &CudaSlice<Float4>,
        velocities: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (p, positions, predicted, velocities);
        // SAFETY: pbf.cu's parameters.
        unsafe { self.launch("update_velocity", stream, per_particle(p), args) }
    }

    /// ωᵢ, the SPH curl of v (eq. 15), |ωᵢ| in the 4th lane.
    pub(super) fn vorticity_curl(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        predicted: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        omegas: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (p, predicted, velocities, cell_start, grid_positions, omegas);
        // SAFETY: pbf.cu's parameters; as compute_lambda.
        unsafe { self.launch("vorticity_curl", stream, per_particle(p), args) }
    }

    /// The confinement force of ω (eq. 16) added to v.
    pub(super) fn vorticity_confinement(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        predicted: &CudaSlice<Float4>,
        omegas: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        velocities: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (p, predicted, omegas, cell_start, grid_positions, velocities);
        // SAFETY: pbf.cu's parameters; as compute_lambda.
        unsafe { self.launch("vorticity_confinement", stream, per_particle(p), args) }
    }

    /// XSPH viscosity (eq. 17) into `smoothed`.
    pub(super) fn xsph(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        predicted: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        smoothed: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            predicted,
            velocities,
            cell_start,
            grid_positions,
            smoothed,
        );
        // SAFETY: pbf.cu's parameters; as compute_lambda.
        unsafe { self.launch("xsph", stream, per_particle(p), args) }
    }

    /// The render records [x, y, z, scalar] of `count` particles into `out`, a mapped GL buffer.
    ///
    /// # Safety
    /// `out` points to at least `count` float4 records of device memory.
    pub(super) unsafe fn write_render_buffer(
        &self,
        stream: &CudaStream,
        count: usize,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        densities: &CudaSlice<f32>,
        scalar_kind: u32,
        out: cudarc::driver::sys::CUdeviceptr,
    ) -> Result<(), SolverError> {
        let n = count as u32;
        let args = (&n, positions, velocities, densities, &scalar_kind, &out);
        // SAFETY: pbf.cu's parameters; the caller vouches for `out`.
        unsafe { self.launch("write_render_buffer", stream, per_element(count), args) }
    }

    /// The `anisotropy` stage: three ellipsoid records per particle of `p` into `out`, a mapped
    /// GL buffer ([`crate::sims::pbf::anisotropy`]).
    ///
    /// # Safety
    /// `out` points to at least 3 × `p.particle_count` float4 records of device memory.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn anisotropy(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        positions: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        particle_radius: f32,
        out: cudarc::driver::sys::CUdeviceptr,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            positions,
            cell_start,
            grid_positions,
            &particle_radius,
            &out,
        );
        // SAFETY: pbf.cu's parameters; the caller vouches for `out`.
        unsafe { self.launch("anisotropy", stream, per_particle(p), args) }
    }

    /// The smallest id of a particle with a non-finite position or velocity (complemented)
    /// and the largest speed (float bits) of `count` particles, into `frame_check`.
    pub(super) fn find_non_finite(
        &self,
        stream: &CudaStream,
        count: usize,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        frame_check: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let n = count as u32;
        let args = (&n, positions, velocities, ids, frame_check);
        // SAFETY: pbf.cu's parameters; frame_check holds 2 values.
        unsafe { self.launch("find_non_finite", stream, per_element(count), args) }
    }
}

/// One thread per element, [`BLOCK`] threads per block.
pub fn per_element(count: usize) -> LaunchConfig {
    launch::per_element(count, BLOCK)
}

/// One thread per particle of `p`.
fn per_particle(p: &GpuParams) -> LaunchConfig {
    per_element(p.particle_count as usize)
}

/// Lengths of the arrays of a multi-level scan of `count` values: the values, then each
/// level's block totals, down to a level that fits in one block.
pub fn scan_levels(count: usize) -> Vec<usize> {
    let mut levels = vec![count];
    while let Some(&last) = levels.last() {
        if last <= SCAN_ITEMS_PER_BLOCK {
            break;
        }
        levels.push(last.div_ceil(SCAN_ITEMS_PER_BLOCK));
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_levels_shrink_to_one_block() {
        assert_eq!(scan_levels(5), vec![5]);
        assert_eq!(scan_levels(2048), vec![2048]);
        assert_eq!(scan_levels(2049), vec![2049, 2]);
        assert_eq!(scan_levels(10_000_000), vec![10_000_000, 4883, 3]);
    }

    /// Every kernel looked up has one typed launch, the method of its name (here, in
    /// coarse_kernels.rs or foam.rs), and every launch is of a kernel looked up.
    #[test]
    fn every_kernel_has_one_typed_launch() {
        let without_tests = |source: &'static str| source.split("#[cfg(test)]").next().unwrap();
        let host = [
            include_str!("pbf.rs"),
            include_str!("coarse_kernels.rs"),
            include_str!("stats.rs"),
            include_str!("foam_kernels.rs"),
        ]
        .map(without_tests)
        .concat();
        let mut launched: Vec<&str> = host
            .split("self.launch(")
            .skip(1)
            .filter_map(|rest| rest.trim_start().strip_prefix('"'))
            .map(|rest| rest.split('"').next().unwrap())
            .collect();
        launched.sort_unstable();
        let mut names = PbfKernels::NAMES.to_vec();
        names.sort_unstable();
        assert_eq!(launched, names);
        for name in names {
            assert!(host.contains(&format!("fn {name}(")), "no method {name}");
        }
    }

    /// The launch constants mirror the kernel source's #defines.
    #[test]
    fn block_sizes_match_the_kernel_source() {
        let source = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/pbf.cu"));
        assert!(source.contains(&format!("#define PBF_BLOCK {BLOCK}\n")));
        assert!(source.contains(&format!("#define SCAN_THREADS {SCAN_THREADS}\n")));
        assert!(source.contains(&format!(
            "#define SCAN_ITEMS_PER_THREAD {}\n",
            SCAN_ITEMS_PER_BLOCK / SCAN_THREADS as usize
        )));
    }
}
