//! The frame's statistics reduced on the GPU (`kernels/pbf_stats.cuh`): what the viewer's
//! statistics panel shows twice a second, from 16 doubles copied back instead of every
//! particle's position, velocity, density and neighbour count (44 bytes a particle: 44 MB at
//! 1M particles, twice a second, on the viewer's thread). The layers' figures (the bottom
//! layer's compression, the surface height) need every particle's height on the host and are
//! left out (`None`); `simulate`'s statistics measure them from a snapshot.

use super::parity::{self, ParityCheck};
use super::pbf::{per_element, PbfKernels, BLOCK};
use super::{CudaSolver, Float4};
use crate::cuda::CudaError;
use crate::sims::pbf::stats::FrameStats;
use crate::sims::pbf::{Solver, SolverError};
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};

/// The reduced quantities, in the kernel's slot order (`STATS_*` in pbf_stats.cuh).
pub const STATS_SLOTS: [&str; 16] = [
    "error_sum",
    "error_max",
    "compression_sum",
    "relative_max",
    "speed_squared",
    "x_sum",
    "y_sum",
    "z_sum",
    "x_lowest_negated",
    "y_lowest_negated",
    "z_lowest_negated",
    "x_highest",
    "y_highest",
    "z_highest",
    "neighbours_sum",
    "neighbours_max",
];

/// The reduced slots made into [`FrameStats`] of `count` particles of `particle_mass` (kg):
/// the divisions and conversions of [`FrameStats::measure`], the layers left out and the solve
/// report, step and time left for the caller.
pub fn stats_from_slots(slots: &[f64; 16], count: usize, particle_mass: f32) -> FrameStats {
    let empty = count == 0;
    let per = count.max(1) as f64;
    let corner = |first: usize, sign: f64| {
        [0, 1, 2].map(|axis| {
            if empty {
                0.0
            } else {
                (sign * slots[first + axis]) as f32
            }
        })
    };
    let either = |value: f64| if empty { 0.0 } else { value };
    FrameStats {
        step: 0,
        time: 0.0,
        particles: count,
        density_error_mean: slots[0] / per,
        density_error_max: either(slots[1]),
        kinetic_energy: 0.5 * f64::from(particle_mass) * slots[4],
        center_of_mass: [slots[5] / per, slots[6] / per, slots[7] / per],
        bbox_min: corner(8, -1.0),
        bbox_max: corner(11, 1.0),
        neighbors_mean: slots[14] / per,
        neighbors_max: either(slots[15]) as u32,
        compression_mean: slots[2] / per,
        compression_max: either(slots[3]),
        bottom_compression: None,
        surface_height: None,
        solve_iterations: 0.0,
        solve_compression: 0.0,
        coarse_residual: 0.0,
        step_ms: 0.0,
    }
}

/// How far the sums may differ, relatively, where |v|² is contracted into fused multiply-adds
/// (as nvcc compiles): two roundings of 2⁻²⁴ in f32 per term, 1.2e-7; the sums' reordering in
/// double adds nothing at that scale.
pub const CONTRACTED_BOUND: f64 = 1.2e-7;

/// The largest relative difference of the sums, and whether every maximum and extreme is
/// equal to the bit.
pub fn compare(gpu: &FrameStats, cpu: &FrameStats) -> (f64, bool) {
    let relative = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-30);
    let mut sums = [
        relative(gpu.density_error_mean, cpu.density_error_mean),
        relative(gpu.compression_mean, cpu.compression_mean),
        relative(gpu.kinetic_energy, cpu.kinetic_energy),
        relative(gpu.neighbors_mean, cpu.neighbors_mean),
    ]
    .to_vec();
    sums.extend((0..3).map(|k| relative(gpu.center_of_mass[k], cpu.center_of_mass[k])));
    let worst = sums.into_iter().fold(0.0, f64::max);
    let exact = gpu.density_error_max == cpu.density_error_max
        && gpu.compression_max == cpu.compression_max
        && gpu.bbox_min == cpu.bbox_min
        && gpu.bbox_max == cpu.bbox_max
        && gpu.neighbors_max == cpu.neighbors_max
        && gpu.particles == cpu.particles;
    (worst, exact)
}

/// Blocks `frame_stats` launches over `count` particles (at least one).
pub fn stats_blocks(count: usize) -> usize {
    count.div_ceil(BLOCK as usize).max(1)
}

impl PbfKernels {
    /// One partial per block and quantity of `count` particles' statistics terms into
    /// `partials` (16 × [`stats_blocks`] doubles, quantity-major).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn frame_stats(
        &self,
        stream: &CudaStream,
        count: usize,
        rest_density: f32,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        densities: &CudaSlice<f32>,
        neighbor_counts: &CudaSlice<u32>,
        partials: &mut CudaSlice<f64>,
    ) -> Result<(), SolverError> {
        let n = count as u32;
        let args = (
            &n,
            &rest_density,
            positions,
            velocities,
            densities,
            neighbor_counts,
            partials,
        );
        let mut config = per_element(count);
        config.grid_dim.0 = config.grid_dim.0.max(1);
        // SAFETY: pbf_stats.cuh's parameters; the particle arrays hold `count` elements and
        // `partials` 16 per block of the launch.
        unsafe { self.launch("frame_stats", stream, config, args) }
    }

    /// The 16 quantities finished from `blocks` partials each into `out` (one block each).
    pub(super) fn frame_stats_finish(
        &self,
        stream: &CudaStream,
        blocks: usize,
        partials: &CudaSlice<f64>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), SolverError> {
        let blocks = blocks as u32;
        let config = LaunchConfig {
            grid_dim: (STATS_SLOTS.len() as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: pbf_stats.cuh's parameters; `partials` holds 16 × `blocks` doubles, `out` 16.
        unsafe {
            self.launch(
                "frame_stats_finish",
                stream,
                config,
                (&blocks, partials, out),
            )
        }
    }
}

impl CudaSolver {
    /// The frame's statistics from the GPU's reductions (see the module): two launches on the
    /// solver's stream after the frame's work, one copy of 128 bytes, one synchronisation.
    pub(super) fn reduced_stats(&self) -> Result<FrameStats, SolverError> {
        let n = self.particle_count;
        let blocks = stats_blocks(n);
        let alloc = CudaError::driver("allocating the statistics' partials on the GPU");
        let mut partials = self
            .stream
            .alloc_zeros::<f64>(STATS_SLOTS.len() * blocks)
            .map_err(&alloc)?;
        let mut out = self
            .stream
            .alloc_zeros::<f64>(STATS_SLOTS.len())
            .map_err(&alloc)?;
        let b = &self.buffers;
        self.kernels.frame_stats(
            &self.stream,
            n,
            self.params.rest_density,
            &b.positions,
            &b.velocities,
            &b.densities,
            &b.neighbor_counts,
            &mut partials,
        )?;
        self.kernels
            .frame_stats_finish(&self.stream, blocks, &partials, &mut out)?;
        let mut slots = [0.0f64; 16];
        let copy = CudaError::driver("copying the statistics from the GPU");
        crate::cuda::launch::read_back(&self.stream, &out, &mut slots, copy)?;
        let mut stats = stats_from_slots(&slots, n, self.params.particle_mass);
        stats.solve_iterations = f64::from(self.report.iterations);
        stats.solve_compression = f64::from(self.report.compression);
        stats.coarse_residual = f64::from(self.report.coarse_residual);
        Ok(stats)
    }
}

/// The GPU's reduced statistics against [`FrameStats::measure`] of the same GPU state read back,
/// after [`parity::ONE_STEP_WARMUP_FRAMES`] frames of the parity scene (the doctor's and
/// tests/cuda.rs's check).
pub fn cuda_frame_stats() -> Result<ParityCheck, SolverError> {
    let scene = parity::parity_scene();
    let mut cuda = CudaSolver::new(scene.world(), scene.params.clone(), &scene.seed())?;
    cuda.set_stage_timing(false);
    for _ in 0..parity::ONE_STEP_WARMUP_FRAMES {
        cuda.step()?;
    }
    let gpu = cuda.reduced_stats()?;
    let host = FrameStats::measure(&cuda.snapshot()?, 0, 0.0, 0.0);
    let (worst, exact) = compare(&gpu, &host);
    Ok(ParityCheck {
        passed: exact && worst <= CONTRACTED_BOUND,
        detail: format!(
            "{} particles: sums within {worst:.2e} of the snapshot's (allowed {CONTRACTED_BOUND:.1e}), \
             maxima and extremes {}",
            gpu.particles,
            if exact { "equal" } else { "DIFFERENT" }
        ),
    })
}
