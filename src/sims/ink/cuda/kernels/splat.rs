//! The `splat` stage on the GPU's side: the record of one brush stamp on one lattice (as
//! `struct InkSplat` in `kernels/ink_grid.cuh`), the stamps' boxes ([`splat_records`]), and the
//! launches of the stamps and of the ink's buoyancy.

use super::{per_point, InkGrid, InkKernels};
use crate::cuda::CudaError;
use crate::sims::ink::{splat_box, Stamp};
use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};

/// Which lattice a stamp's box lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplatLattice {
    /// The vertical faces (u).
    U = 0,
    /// The horizontal faces (v).
    V = 1,
    /// The ink cells (all three channels).
    Ink = 2,
}

/// One stamp on one lattice, as `struct InkSplat` in ink.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InkSplat {
    /// The lattice's points per row.
    pub nx: i32,
    /// The box's first column.
    pub i0: i32,
    /// The box's first row.
    pub j0: i32,
    /// Columns in the box.
    pub width: i32,
    /// Rows in the box.
    pub rows: i32,
    /// The lattice's offset, spacings.
    pub offset: [f32; 2],
    /// The lattice's spacing, m.
    pub h: f32,
    /// The stamp's centre, m.
    pub position: [f32; 2],
    /// The stamp's Gaussian radius, m.
    pub radius: f32,
    /// What is added at the centre, per field.
    pub amounts: [f32; 3],
    /// The brush's direction of motion (unit): the brush stamp's texture is turned to it.
    pub direction: [f32; 2],
    /// 1: the amounts are × the brush stamp's alpha (a brush's ink with a textured stamp).
    pub masked: i32,
}

// SAFETY: plain old data of 4-byte fields, laid out as the C struct it mirrors.
unsafe impl DeviceRepr for InkSplat {}
// SAFETY: every field is an integer or a float, for which all-zero bits are a value.
unsafe impl ValidAsZeroBits for InkSplat {}

impl InkSplat {
    /// Points in the box.
    pub fn points(&self) -> usize {
        (self.width * self.rows) as usize
    }

    /// Points the record's launch covers: the most a box of the stamp's radius can hold on its
    /// lattice wherever the stamp lies (three radii either side: ⌈6r/h⌉ + 1 points a side, one
    /// more for rounding, at most the lattice's), and at least the box's. A stamp dragged
    /// across the lattice keeps the same launch shape, so the step's CUDA graph replays with
    /// only the record changed (`step_graph.rs`); the threads beyond the box return.
    pub fn capacity(&self, lattice_rows: usize) -> usize {
        let side = (6.0 * self.radius / self.h).ceil() as usize + 2;
        let across = side.min(self.nx as usize);
        let down = side.min(lattice_rows);
        (across * down).max(self.points())
    }
}

/// The rows of `lattice` on `grid`: the second argument of [`InkSplat::capacity`].
pub fn lattice_rows(grid: &InkGrid, lattice: SplatLattice) -> usize {
    match lattice {
        SplatLattice::U => grid.ny as usize,
        SplatLattice::V => grid.ny as usize + 1,
        SplatLattice::Ink => grid.ink_ny as usize,
    }
}

/// The launches of `stamp` in a step of `dt` (the CPU's `splat` per stamp): for u, v and the
/// ink, the box of lattice points within three radii (cpu.rs `add_gaussian`'s arithmetic) and
/// the amounts; with `textured` (the brush stamp is not round) a brush's ink is masked by it.
/// Lattices with nothing to add or an empty box are left out.
pub fn splat_records(
    grid: &InkGrid,
    stamp: &Stamp,
    dt: f32,
    textured: bool,
) -> Vec<(SplatLattice, InkSplat)> {
    let scale = if stamp.per_second { dt } else { 1.0 };
    let region = stamp.region();
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let (inx, iny) = (grid.ink_nx as usize, grid.ink_ny as usize);
    let lattices = [
        (
            SplatLattice::U,
            (nx + 1, ny, [0.0, 0.5], grid.dx),
            [stamp.velocity[0] * scale, 0.0, 0.0],
        ),
        (
            SplatLattice::V,
            (nx, ny + 1, [0.5, 0.0], grid.dx),
            [stamp.velocity[1] * scale, 0.0, 0.0],
        ),
        (
            SplatLattice::Ink,
            (inx, iny, [0.5, 0.5], grid.ink_h),
            stamp.ink.map(|amount| amount * scale),
        ),
    ];
    let mut records = Vec::new();
    for (lattice, (lx, ly, offset, h), amounts) in lattices {
        if amounts.iter().all(|&a| a == 0.0) {
            continue;
        }
        let (columns, rows_range) = splat_box(region, (lx, ly), offset, h);
        let (i0, j0) = (columns.start, rows_range.start);
        let width = columns.len();
        let rows = rows_range.len();
        if width == 0 || rows == 0 {
            continue;
        }
        records.push((
            lattice,
            InkSplat {
                nx: lx as i32,
                i0: i0 as i32,
                j0: j0 as i32,
                width: width as i32,
                rows: rows as i32,
                offset,
                h,
                position: stamp.position,
                radius: stamp.radius,
                amounts,
                direction: stamp.direction.unwrap_or([1.0, 0.0]),
                masked: i32::from(
                    textured && stamp.direction.is_some() && lattice == SplatLattice::Ink,
                ),
            },
        ));
    }
    records
}

#[allow(clippy::too_many_arguments)]
impl InkKernels {
    /// One stamp's Gaussians, the records of slot `slot` of `splats` (on the device: the
    /// [`InkSplat`]s' words, `crate::cuda::Records`; three a slot, one per lattice in [`SplatLattice`]'s order), each over `capacity` threads (at
    /// least its box's points, [`InkSplat::capacity`]): the velocity's u and v (their open
    /// masks skip closed faces) and the ink's three planes (`planes` values apart); `stamp` is
    /// the brush stamp's texture (read when a record is masked).
    pub fn splat(
        &self,
        stream: &CudaStream,
        (splats, slot, capacity): (&CudaSlice<u32>, usize, usize),
        (u, v, ink): (
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
        ),
        planes: usize,
        (u_open, v_open): (&CudaSlice<u8>, &CudaSlice<u8>),
        stamp: &CudaSlice<f32>,
    ) -> Result<(), CudaError> {
        let (slot, threads) = (slot as u32, capacity as u32);
        let planes = planes as u32;
        let args = (
            splats, &slot, &threads, u, v, ink, &planes, u_open, v_open, stamp,
        );
        // SAFETY: ink.cu's parameters; `splats` holds the slot's three records (the caller
        // sent them), whose boxes lie inside their lattices (splat_records) and hold at most
        // `capacity` points; the ink holds three planes of `planes` values.
        unsafe { self.launch("splat", stream, per_point(3 * capacity), args) }
    }

    /// The ink's buoyancy on the open v faces.
    pub fn splat_buoyancy(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        ink: &CudaSlice<f32>,
        v_open: &CudaSlice<u8>,
        v: &mut CudaSlice<f32>,
        lift: f32,
    ) -> Result<(), CudaError> {
        let args = (g, ink, v_open, v, &lift);
        // SAFETY: ink.cu's parameters.
        unsafe { self.launch("splat_buoyancy", stream, per_point(g.v_faces()), args) }
    }
}
