//! The CUDA solver's particle arrays and grid on the GPU, and their allocation from the seeded
//! state.

use super::params::GpuObstacle;
use super::{to_float4, CudaSolver, Float4};
use crate::sims::pbf::{InitialState, World};
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// The particle arrays and grid on the GPU.
pub(super) struct Buffers {
    pub(super) positions: CudaSlice<Float4>,
    pub(super) predicted: CudaSlice<Float4>,
    pub(super) velocities: CudaSlice<Float4>,
    pub(super) ids: CudaSlice<u32>,
    /// Second copies: the sort's destination, apply_delta's and xsph's output.
    pub(super) positions_next: CudaSlice<Float4>,
    pub(super) predicted_next: CudaSlice<Float4>,
    pub(super) velocities_next: CudaSlice<Float4>,
    pub(super) ids_next: CudaSlice<u32>,
    /// x* when the grid was built (sorted): neighbour sets are defined by these for the step.
    pub(super) grid_positions: CudaSlice<Float4>,
    pub(super) lambdas: CudaSlice<f32>,
    pub(super) densities: CudaSlice<f32>,
    pub(super) neighbor_counts: CudaSlice<u32>,
    pub(super) cell_of: CudaSlice<u32>,
    pub(super) rank: CudaSlice<u32>,
    /// Particles per cell, counted by compute_cell_ids and zeroed again by the scan (cells + 1).
    pub(super) cell_counts: CudaSlice<u32>,
    /// Exclusive scan of the counts: cell c holds sorted particles cell_start[c]..cell_start[c + 1].
    pub(super) cell_start: CudaSlice<u32>,
    /// Block totals of each scan level above the first.
    pub(super) scan_sums: Vec<CudaSlice<u32>>,
    pub(super) obstacles: CudaSlice<GpuObstacle>,
    /// [first non-finite id (complemented), largest speed (float bits)], see `find_non_finite`.
    pub(super) frame_check: CudaSlice<u32>,
    /// The walls' and obstacles' [Σ_b ∇W, Σ_b W] per particle (`boundary_density`), for
    /// compute_lambda and apply_delta; then, free until the next step's boundary_density, each
    /// particle's vorticity ω (`vorticity_curl`, for `vorticity_confinement`): one array for
    /// both saves 16 bytes per particle.
    pub(super) boundary: CudaSlice<Float4>,
    /// Σ Cᵢ of the compute_lambda that measures the compression (`check_density_error`).
    pub(super) compression: CudaSlice<f64>,
    /// [converged, iterations applied, mean compression (float bits)] of the step's
    /// constraint iterations (`check_density_error`, `apply_delta`).
    pub(super) solve_state: CudaSlice<u32>,
}

impl CudaSolver {
    pub(super) fn allocate(
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
}
