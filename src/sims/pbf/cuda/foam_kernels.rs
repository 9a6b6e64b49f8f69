//! The `foam` stage's kernels (`kernels/foam.cuh`), one typed launch per kernel; the sequence
//! that calls them is `DeviceFoam::run` in `foam.rs`.

use super::foam::GpuFoamParams;
use super::params::{GpuObstacle, GpuParams};
use super::pbf::{per_element, PbfKernels};
use super::Float4;
use crate::cuda::launch::{self, OrNull};
use crate::sims::pbf::SolverError;
use cudarc::driver::{CudaSlice, CudaStream};

/// The `foam` kernels (foam.cuh), one method per kernel taking its parameters in order. The
/// per-fluid-particle kernels run one thread per particle of `p`, the per-diffuse ones one per
/// slot of the capacity (`f.capacity`, + 1 for foam_advect, which ends the keep flags).
#[allow(clippy::too_many_arguments)]
impl PbfKernels {
    /// Surface normals and the displacement bound.
    pub(super) fn foam_normals(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        positions: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        normals: &mut CudaSlice<Float4>,
        state: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let args = (p, positions, cell_start, grid_positions, normals, state);
        let config = per_element(p.particle_count as usize);
        // SAFETY: foam.cuh's parameters; per-particle arrays of p.particle_count.
        unsafe { self.launch("foam_normals", stream, config, args) }
    }

    /// Potentials and emission counts (`raw`, if any: [I_ta, κ, I_k, count] per particle).
    pub(super) fn foam_potentials(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        f: &GpuFoamParams,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
        normals: &CudaSlice<Float4>,
        counts: &mut CudaSlice<u32>,
        raw: Option<&mut CudaSlice<Float4>>,
    ) -> Result<(), SolverError> {
        let args = (
            p,
            f,
            positions,
            velocities,
            ids,
            cell_start,
            grid_positions,
            normals,
            counts,
            OrNull(raw),
        );
        let config = per_element(p.particle_count as usize);
        // SAFETY: foam.cuh's parameters; counts holds particle_count + 1 values, indexed by
        // the ids (a permutation of 0..particle_count).
        unsafe { self.launch("foam_potentials", stream, config, args) }
    }

    /// Classes, motion and ages of the pool, stopped at the obstacles and walls; keep flags.
    pub(super) fn foam_advect(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        f: &GpuFoamParams,
        obstacles: &CudaSlice<GpuObstacle>,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        cell_start: &CudaSlice<u32>,
        state: &CudaSlice<u32>,
        pool: &mut CudaSlice<Float4>,
        keep: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let args = (
            p, f, obstacles, positions, velocities, cell_start, state, pool, keep,
        );
        let config = per_element(f.capacity as usize + 1);
        // SAFETY: foam.cuh's parameters; obstacles holds p.obstacle_count records, pool 2
        // capacity records, keep capacity + 1.
        unsafe { self.launch("foam_advect", stream, config, args) }
    }

    /// The survivors to the front of `next`.
    pub(super) fn foam_compact(
        &self,
        stream: &CudaStream,
        f: &GpuFoamParams,
        slots: &CudaSlice<u32>,
        pool: &CudaSlice<Float4>,
        next: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (f, slots, pool, next);
        let config = per_element(f.capacity as usize);
        // SAFETY: foam.cuh's parameters; slots holds capacity + 1 values, the pools 2 capacity.
        unsafe { self.launch("foam_compact", stream, config, args) }
    }

    /// The newborn after the survivors.
    pub(super) fn foam_emit(
        &self,
        stream: &CudaStream,
        p: &GpuParams,
        f: &GpuFoamParams,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        starts: &CudaSlice<u32>,
        slots: &CudaSlice<u32>,
        next: &mut CudaSlice<Float4>,
    ) -> Result<(), SolverError> {
        let args = (p, f, positions, velocities, ids, starts, slots, next);
        let config = per_element(p.particle_count as usize);
        // SAFETY: foam.cuh's parameters; slots are checked against the capacity.
        unsafe { self.launch("foam_emit", stream, config, args) }
    }

    /// The pool's new size and the counters cleared (one thread).
    pub(super) fn foam_finish(
        &self,
        stream: &CudaStream,
        f: &GpuFoamParams,
        particle_count: u32,
        slots: &CudaSlice<u32>,
        starts: &CudaSlice<u32>,
        state: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let args = (f, &particle_count, slots, starts, state);
        // SAFETY: foam.cuh's parameters; one thread.
        unsafe { self.launch("foam_finish", stream, launch::one_block(32), args) }
    }

    /// The three counts.
    pub(super) fn foam_count(
        &self,
        stream: &CudaStream,
        f: &GpuFoamParams,
        pool: &CudaSlice<Float4>,
        state: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let args = (f, pool, state);
        let config = per_element(f.capacity as usize);
        // SAFETY: foam.cuh's parameters; reads only slots below the alive count.
        unsafe { self.launch("foam_count", stream, config, args) }
    }

    /// `count` render records of the pool into `out`.
    ///
    /// # Safety
    /// `out` points to at least `count` float4 records of device memory.
    pub(super) unsafe fn foam_records(
        &self,
        stream: &CudaStream,
        count: usize,
        pool: &CudaSlice<Float4>,
        out: cudarc::driver::sys::CUdeviceptr,
    ) -> Result<(), SolverError> {
        let n = count as u32;
        let args = (&n, pool, &out);
        // SAFETY: foam.cuh's parameters; the caller vouches for `out`.
        unsafe { self.launch("foam_records", stream, per_element(count), args) }
    }
}
