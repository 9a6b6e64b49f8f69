//! The `foam` stage on the GPU (`kernels/foam.cuh`; the method and the CPU reference are
//! [`crate::sims::pbf::foam`]): the diffuse particles live in a pool on the device, the stage
//! runs on the solver's stream after a frame's last step from the step's sorted particles and
//! grid, and one copy of a few words per frame ([`FOAM_STATE_WORDS`]) brings back how many are
//! alive, how many were born and the three counts. The renderer's foam buffer is written by
//! `foam_records` through CUDA–GL interop (the solver's second `GlInterop`).

use super::params::{GpuObstacle, GpuParams};
use super::pbf::{scan_levels, PbfKernels};
use super::{CudaSolver, Float4};
use crate::cuda::CudaError;
use crate::sims::pbf::foam::{Diffuse, DiffuseKind, FoamSettings};
use crate::sims::pbf::{Aabb, SolverError};
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use glam::Vec3A;
use std::sync::Arc;

/// Words of the stage's state (`FOAM_STATE_WORDS` in foam.cuh): alive, the displacement bound,
/// born, spray, foam, bubbles.
pub const FOAM_STATE_WORDS: usize = 6;
const ALIVE: usize = 0;
const BORN: usize = 2;
const SPRAY: usize = 3;

/// One stage's settings, mirrored field for field by `struct FoamParams` in foam.cuh.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuFoamParams {
    pub dt: f32,
    pub trapped_air_rate: f32,
    pub wave_crest_rate: f32,
    pub lifetime: f32,
    pub particle_radius: f32,
    pub capacity: u32,
    pub seed: [u32; 2],
    pub step: [u32; 2],
    pub container_lo: [f32; 3],
    pub container_hi: [f32; 3],
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for GpuFoamParams {}

/// A u64 as the kernels' [low, high] words.
fn words(value: u64) -> [u32; 2] {
    [value as u32, (value >> 32) as u32]
}

impl GpuFoamParams {
    /// Step `step` (1 for the first) of `settings` over a frame of `dt` inside `container`.
    pub fn new(
        settings: &FoamSettings,
        dt: f32,
        particle_radius: f32,
        container: &Aabb,
        step: u64,
    ) -> Self {
        GpuFoamParams {
            dt,
            trapped_air_rate: settings.trapped_air_rate,
            wave_crest_rate: settings.wave_crest_rate,
            lifetime: settings.lifetime,
            particle_radius,
            capacity: settings.max_count,
            seed: words(settings.seed),
            step: words(step),
            container_lo: container.min.to_array(),
            container_hi: container.max.to_array(),
        }
    }
}

/// A diffuse particle from its two pool records ([x, y, z, life], [vx, vy, vz, kind]).
pub fn diffuse_from_pool(position: &Float4, velocity: &Float4) -> Diffuse {
    Diffuse {
        position: Vec3A::new(position[0], position[1], position[2]),
        velocity: Vec3A::new(velocity[0], velocity[1], velocity[2]),
        life: position[3],
        kind: match velocity[3] as u32 {
            0 => DiffuseKind::Spray,
            1 => DiffuseKind::Foam,
            _ => DiffuseKind::Bubble,
        },
    }
}

/// A multi-level exclusive scan in place: its arrays' lengths and the block totals above.
struct Scan {
    levels: Vec<usize>,
    sums: Vec<CudaSlice<u32>>,
}

impl Scan {
    fn new(stream: &Arc<CudaStream>, count: usize) -> Result<Scan, cudarc::driver::DriverError> {
        let levels = scan_levels(count);
        let sums = levels[1..]
            .iter()
            .map(|&len| stream.alloc_zeros(len))
            .collect::<Result<_, _>>()?;
        Ok(Scan { levels, sums })
    }

    /// `values` (levels[0] of them) replaced by their exclusive scan, as `build_grid` scans
    /// the cell counts: up the levels in blocks, then each level's block totals added below.
    fn run(
        &mut self,
        k: &PbfKernels,
        stream: &CudaStream,
        values: &mut CudaSlice<u32>,
    ) -> Result<(), SolverError> {
        let levels = &self.levels;
        for level in 0..levels.len() {
            let (lower, upper) = self.sums.split_at_mut(level);
            let input = lower.last_mut().unwrap_or(&mut *values);
            let block_sums = upper.first_mut().filter(|_| level + 1 < levels.len());
            k.scan_blocks(stream, input, None, block_sums, levels[level], false)?;
        }
        for level in (0..levels.len() - 1).rev() {
            let (lower, upper) = self.sums.split_at_mut(level);
            let target = lower.last_mut().unwrap_or(&mut *values);
            k.add_block_offsets(stream, target, &upper[0], levels[level])?;
        }
        Ok(())
    }
}

/// The stage's device memory for `capacity` diffuse particles over `particles` fluid particles.
pub struct DeviceFoam {
    capacity: usize,
    normals: CudaSlice<Float4>,
    /// Emission counts, scanned in place into starts (particles + 1).
    counts: CudaSlice<u32>,
    count_scan: Scan,
    /// Two records per diffuse particle; `next` is the compaction's and emission's output.
    pool: CudaSlice<Float4>,
    next: CudaSlice<Float4>,
    /// foam_advect's keep flags, scanned in place into the survivors' slots (capacity + 1).
    slots: CudaSlice<u32>,
    slot_scan: Scan,
    state: CudaSlice<u32>,
    /// `state` as last copied back, after the last stage.
    last: [u32; FOAM_STATE_WORDS],
}

/// Bytes of GPU memory per diffuse particle of the capacity (two pools of two float4 and a
/// slot) and per fluid particle (a normal and a count).
pub const BYTES_PER_DIFFUSE: u64 = 2 * 32 + 4;
/// See [`BYTES_PER_DIFFUSE`].
pub const BYTES_PER_FLUID: u64 = 16 + 4;

impl DeviceFoam {
    /// The pool for `capacity`, empty, over `particles` fluid particles.
    pub fn new(
        stream: &Arc<CudaStream>,
        capacity: usize,
        particles: usize,
    ) -> Result<DeviceFoam, cudarc::driver::DriverError> {
        let (n, cap) = (particles.max(1), capacity.max(1));
        Ok(DeviceFoam {
            capacity,
            normals: stream.alloc_zeros(n)?,
            counts: stream.alloc_zeros(n + 1)?,
            count_scan: Scan::new(stream, particles + 1)?,
            pool: stream.alloc_zeros(2 * cap)?,
            next: stream.alloc_zeros(2 * cap)?,
            slots: stream.alloc_zeros(cap + 1)?,
            slot_scan: Scan::new(stream, capacity + 1)?,
            state: stream.alloc_zeros(FOAM_STATE_WORDS)?,
            last: [0; FOAM_STATE_WORDS],
        })
    }

    /// The capacity it was made for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Alive after the last stage.
    pub fn alive(&self) -> usize {
        self.last[ALIVE] as usize
    }

    /// [spray, foam, bubbles] after the last stage.
    pub fn counts(&self) -> [usize; 3] {
        [0, 1, 2].map(|k| self.last[SPRAY + k] as usize)
    }

    /// Takes over the first `count` diffuse particles of `other` (a pool of another capacity):
    /// those beyond the new capacity are dropped (the youngest), as the CPU stage cuts its pool
    /// at a lowered cap.
    pub fn adopt(
        &mut self,
        stream: &Arc<CudaStream>,
        other: &DeviceFoam,
        count: usize,
    ) -> Result<(), SolverError> {
        let count = count.min(self.capacity);
        if count > 0 {
            stream
                .memcpy_dtod(
                    &other.pool.slice(..2 * count),
                    &mut self.pool.slice_mut(..2 * count),
                )
                .map_err(CudaError::driver("copying the diffuse particles"))?;
        }
        self.set_alive(stream, count)
    }

    /// Replaces the pool's contents with `particles` (at most the capacity; the parity check
    /// starts each compared frame from the CPU's pool).
    pub fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        particles: &[Diffuse],
    ) -> Result<(), SolverError> {
        let count = particles.len().min(self.capacity);
        let records: Vec<Float4> = particles[..count]
            .iter()
            .flat_map(|d| {
                let (x, v) = (d.position, d.velocity);
                [
                    [x.x, x.y, x.z, d.life],
                    [v.x, v.y, v.z, d.kind as u32 as f32],
                ]
            })
            .collect();
        if count > 0 {
            stream
                .memcpy_htod(&records, &mut self.pool.slice_mut(..2 * count))
                .map_err(CudaError::driver("copying the diffuse particles"))?;
        }
        self.set_alive(stream, count)
    }

    /// Sets the pool's size (0: forgets every diffuse particle).
    pub fn set_alive(&mut self, stream: &Arc<CudaStream>, count: usize) -> Result<(), SolverError> {
        self.last = [0; FOAM_STATE_WORDS];
        self.last[ALIVE] = count as u32;
        stream
            .memcpy_htod(&self.last, &mut self.state)
            .map_err(CudaError::driver("setting the foam state"))?;
        Ok(())
    }

    /// One `foam` stage: the kernels of foam.cuh in order, then the state copied back (the
    /// stage's one synchronisation). Returns how many were born.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        k: &PbfKernels,
        stream: &Arc<CudaStream>,
        p: &GpuParams,
        f: &GpuFoamParams,
        obstacles: &CudaSlice<GpuObstacle>,
        positions: &CudaSlice<Float4>,
        velocities: &CudaSlice<Float4>,
        ids: &CudaSlice<u32>,
        cell_start: &CudaSlice<u32>,
        grid_positions: &CudaSlice<Float4>,
    ) -> Result<usize, SolverError> {
        let n = p.particle_count as usize;
        k.foam_normals(
            stream,
            p,
            positions,
            cell_start,
            grid_positions,
            &mut self.normals,
            &mut self.state,
        )?;
        k.foam_potentials(
            stream,
            p,
            f,
            positions,
            velocities,
            ids,
            cell_start,
            grid_positions,
            &self.normals,
            &mut self.counts,
            None,
        )?;
        k.foam_advect(
            stream,
            p,
            f,
            obstacles,
            positions,
            velocities,
            cell_start,
            &self.state,
            &mut self.pool,
            &mut self.slots,
        )?;
        self.slot_scan.run(k, stream, &mut self.slots)?;
        k.foam_compact(stream, f, &self.slots, &self.pool, &mut self.next)?;
        self.count_scan.run(k, stream, &mut self.counts)?;
        k.foam_emit(
            stream,
            p,
            f,
            positions,
            velocities,
            ids,
            &self.counts,
            &self.slots,
            &mut self.next,
        )?;
        k.foam_finish(
            stream,
            f,
            n as u32,
            &self.slots,
            &self.counts,
            &mut self.state,
        )?;
        k.foam_count(stream, f, &self.next, &mut self.state)?;
        std::mem::swap(&mut self.pool, &mut self.next);
        stream
            .memcpy_dtoh(&self.state, &mut self.last)
            .map_err(CudaError::driver("copying the foam state"))?;
        stream
            .synchronize()
            .map_err(CudaError::driver("the foam stage"))?;
        Ok(self.last[BORN] as usize)
    }

    /// The alive diffuse particles, copied back (tests, the doctor, the host-upload fallback).
    pub fn download(&self, stream: &Arc<CudaStream>) -> Result<Vec<Diffuse>, SolverError> {
        let alive = self.alive();
        if alive == 0 {
            return Ok(Vec::new());
        }
        let mut host = vec![[0.0f32; 4]; 2 * alive];
        stream
            .memcpy_dtoh(&self.pool.slice(..2 * alive), &mut host)
            .map_err(CudaError::driver("copying the diffuse particles"))?;
        stream
            .synchronize()
            .map_err(CudaError::driver("copying the diffuse particles"))?;
        Ok(host
            .chunks_exact(2)
            .map(|pair| diffuse_from_pool(&pair[0], &pair[1]))
            .collect())
    }

    /// The renderer's records of the alive diffuse particles into `out`, a mapped GL buffer.
    ///
    /// # Safety
    /// `out` points to at least [`DeviceFoam::alive`] float4 records of device memory.
    pub unsafe fn write_records(
        &self,
        k: &PbfKernels,
        stream: &CudaStream,
        out: cudarc::driver::sys::CUdeviceptr,
    ) -> Result<(), SolverError> {
        // SAFETY: the caller's promise.
        unsafe { k.foam_records(stream, self.alive(), &self.pool, out) }
    }
}

/// The `foam` stage of the CUDA solver: its pool and one run of the stage.
impl CudaSolver {
    /// Step `step` of the `foam` stage ([`crate::sims::pbf::Solver::foam`]): the kernels on the
    /// solver's sorted particles and grid, inside `container` and around the obstacles of the
    /// world the solver was made with (already on the GPU); returns how many were born.
    pub(super) fn foam_stage(
        &mut self,
        step: u64,
        settings: &FoamSettings,
        dt: f32,
        container: &Aabb,
    ) -> Result<usize, SolverError> {
        let f = GpuFoamParams::new(settings, dt, self.params.particle_radius(), container, step);
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        let mut p = self.constants;
        p.particle_count = self.particle_count as u32;
        self.foam_pool(settings.max_count as usize)?;
        let (pool, k, b) = (
            self.foam.as_mut().expect("made above"),
            &self.kernels,
            &self.buffers,
        );
        pool.run(
            k,
            &self.stream,
            &p,
            &f,
            &b.obstacles,
            &b.positions,
            &b.velocities,
            &b.ids,
            &b.cell_start,
            &b.grid_positions,
        )
    }

    /// The `foam` stage's pool for `capacity` diffuse particles: the one there, or a new one
    /// (after checking the GPU's free memory) holding the first of the old one's particles.
    pub(super) fn foam_pool(&mut self, capacity: usize) -> Result<&mut DeviceFoam, SolverError> {
        if self.foam.as_ref().is_some_and(|f| f.capacity() == capacity) {
            return Ok(self.foam.as_mut().expect("checked"));
        }
        let needed =
            capacity as u64 * BYTES_PER_DIFFUSE + self.particle_count as u64 * BYTES_PER_FLUID;
        let (free, _) = self
            .context
            .mem_get_info()
            .map_err(CudaError::driver("cuMemGetInfo"))?;
        if needed > free as u64 {
            return Err(SolverError::Backend(format!(
                "the foam stage's {capacity} diffuse particles need {} of GPU memory, {} is \
                 free; lower foam.max_count",
                crate::host::format_bytes(needed),
                crate::host::format_bytes(free as u64)
            )));
        }
        let mut pool = DeviceFoam::new(&self.stream, capacity, self.particle_count)
            .map_err(CudaError::driver("allocating the foam stage's GPU memory"))?;
        match self.foam.take() {
            Some(old) => pool.adopt(&self.stream, &old, old.alive())?,
            None => pool.set_alive(&self.stream, 0)?,
        }
        Ok(self.foam.insert(pool))
    }

    /// The `foam` stage's pool for `capacity` holding `particles` (the parity check's start).
    pub(super) fn set_foam_pool(
        &mut self,
        capacity: usize,
        particles: &[Diffuse],
    ) -> Result<(), SolverError> {
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        let stream = self.stream.clone();
        self.foam_pool(capacity)?.upload(&stream, particles)
    }
}
