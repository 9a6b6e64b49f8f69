//! Obstacles changed on CUDA — cells painted, a disc moved (docs/ink.md "Obstacles"): the host
//! mirror's masks are set again for the rows that changed ([`Flow::set_solid_rows`]) to know
//! which rows changed; only those rows' solid bytes and the moving discs' records are sent up,
//! the kernel `wall_rows` derives the rows' open masks, stencil and closed faces' fixed
//! velocities from them on the GPU (the CPU's `Flow::wall_rows`, the same formulas), and
//! `close_walls` closes the rows' faces and zeroes their solid cells' pressure. No velocity
//! comes back and nothing is waited for explicitly: a disc moving every substep keeps the
//! frame's one synchronisation (`end_frame`).
//!
//! The copies (`cuMemcpyHtoDAsync`) are from pageable host memory. The driver stages such a
//! buffer's bytes before the call returns, so a buffer may be changed or freed as soon as the
//! call is back; [`WallRows`] holds its vectors only to reuse their allocations. The price: CUDA
//! documents a pageable copy as possibly synchronous with respect to the host ("API
//! synchronization behavior"), so a large one can block until the stream reaches it. When
//! cells change the multigrid's masks follow by rows (`GpuMultigrid::update_rows`: the finest
//! level copied on the GPU from the rows' masks, the coarser levels' changed rows sent: about
//! 0.17 MB a substep for the `stir` disc at 1414 × 707, where the whole hierarchy was 2 × 1.33
//! bytes a cell, 2.67 MB). The flow's rows are 1 byte a cell (about 0.25 MB a substep there;
//! the host's masks, stencil and fixed velocities, 12 bytes a cell, were about 2.95 MB).

use super::kernels::{per_point, InkGrid, InkKernels};
use super::CudaInk;
use crate::cuda::CudaError;
use crate::sims::ink::boundary::{MovingDisc, DIAGONAL_SHIFT};
use crate::sims::ink::fields::Flow;
use crate::sims::ink::params::PressureSolver;
use cudarc::driver::{CudaSlice, CudaStream};
use std::ops::Range;

/// The host side of what `set_walls` sends (the rows' solid bytes, the moving discs' records),
/// kept between calls only so that their allocations are reused.
#[derive(Default)]
pub(super) struct WallRows {
    solid: Vec<u8>,
    discs: Vec<f32>,
}

impl InkKernels {
    /// From the solid cells of the rows `rows`: their open masks (the u faces of those rows, the
    /// v faces below and above them) and their cells' stencil, and the fixed velocities of the
    /// faces of the rows `fixed` (`discs`: the moving discs' records, centre, radius and
    /// velocity, `n` of them), as the CPU's `Flow::wall_rows` sets them.
    pub fn wall_rows(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (rows, fixed): (Range<usize>, Range<usize>),
        (solid, discs, n): (&CudaSlice<u8>, &CudaSlice<f32>, usize),
        (u_open, v_open, stencil): (&mut CudaSlice<u8>, &mut CudaSlice<u8>, &mut CudaSlice<u8>),
        (u_fixed, v_fixed): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        assert!(
            rows.start < rows.end && rows.end <= g.ny as usize,
            "{rows:?}"
        );
        assert!(discs.len() >= 5 * n, "{n} discs in {} floats", discs.len());
        let (j0, j1) = (rows.start as i32, rows.end as i32);
        let (f0, f1) = (fixed.start as i32, fixed.end as i32);
        let n = n as i32;
        let points = (g.nx as usize + 1) * (rows.len() + 1);
        let args = (
            g, &j0, &j1, &f0, &f1, solid, discs, &n, u_open, v_open, stencil, u_fixed, v_fixed,
        );
        // SAFETY: ink.cu's parameters; the face and cell arrays are the grid's, the points cover
        // rows j0..=j1 ≤ ny of the v faces, j0..j1 of the u faces and cells, and `discs` holds
        // n records of five floats.
        unsafe { self.launch("wall_rows", stream, per_point(points), args) }
    }

    /// The closed faces of the rows of cells `rows` (their u faces, the v faces below and above
    /// them) to their fixed velocities, the pressure of their solid cells to zero.
    pub fn close_walls(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        rows: Range<usize>,
        (u, v, p): (
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
        ),
        (u_open, v_open, solid): (&CudaSlice<u8>, &CudaSlice<u8>, &CudaSlice<u8>),
        (u_fixed, v_fixed): (&CudaSlice<f32>, &CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        assert!(
            rows.start < rows.end && rows.end <= g.ny as usize,
            "{rows:?}"
        );
        let (j0, j1) = (rows.start as i32, rows.end as i32);
        let points = (g.nx as usize + 1) * (rows.len() + 1);
        let args = (
            g, &j0, &j1, u, v, p, u_open, v_open, solid, u_fixed, v_fixed,
        );
        // SAFETY: ink.cu's parameters; the face and cell arrays are the grid's, and the points
        // cover rows j0..=j1 ≤ ny of the v faces, j0..j1 of the u faces and cells.
        unsafe { self.launch("close_walls", stream, per_point(points), args) }
    }
}

impl CudaInk {
    /// Makes the cells where `solid` solid: the faces beside them close, the pressure there is
    /// zeroed and the stencil follows (as `CpuInk::set_solid`), through [`CudaInk::set_walls`]
    /// for every row.
    pub fn set_solid(&mut self, solid: Vec<bool>) -> Result<(), CudaError> {
        let moving = self.mirror.moving.clone();
        self.set_walls(0..self.mirror.ny, &solid, moving)
    }

    /// [`CudaInk::set_solid`] for the rows of cells `rows` only (`cells`: those rows' cells),
    /// with the discs `moving` moving, as `CpuInk::set_walls`: the host mirror's masks are set
    /// again in those rows ([`Flow::set_solid_rows`]); of the rows among them whose cells or
    /// whose closed faces' velocities changed (and one either side) the solid bytes are sent
    /// with the moving discs' records, `wall_rows` derives their masks, stencil and fixed
    /// velocities on the GPU and `close_walls` closes their faces. Enqueued only: nothing
    /// waits.
    pub fn set_walls(
        &mut self,
        rows: Range<usize>,
        cells: &[bool],
        moving: Vec<MovingDisc>,
    ) -> Result<(), CudaError> {
        let (nx, ny) = (self.mirror.nx, self.mirror.ny);
        let mirror = &mut self.mirror;
        let near = rows.start.saturating_sub(1)..(rows.end + 1).min(ny);
        let before = solved(mirror, near.clone());
        let u_span = |r: &Range<usize>| r.start * (nx + 1)..r.end * (nx + 1);
        let v_span = |r: &Range<usize>| r.start * nx..(r.end + 1).min(ny + 1) * nx;
        let old_solid = mirror.solid()[rows.start * nx..rows.end * nx].to_vec();
        let (old_u, old_v) = mirror.fixed();
        let (old_u, old_v) = (old_u[u_span(&rows)].to_vec(), old_v[v_span(&rows)].to_vec());
        mirror.moving = moving;
        let cells_changed = mirror.set_solid_rows(rows.clone(), cells);
        let (new_u, new_v) = mirror.fixed();
        let (new_u, new_v) = (&new_u[u_span(&rows)], &new_v[v_span(&rows)]);
        let changed: Vec<usize> = (0..rows.len())
            .filter(|&r| {
                let (c, u, v) = (
                    r * nx..(r + 1) * nx,
                    r * (nx + 1)..(r + 1) * (nx + 1),
                    r * nx..(r + 2) * nx,
                );
                let v = v.start..v.end.min(new_v.len());
                old_solid[c.clone()] != cells[c]
                    || old_u[u.clone()] != new_u[u]
                    || old_v[v.clone()] != new_v[v]
            })
            .map(|r| rows.start + r)
            .collect();
        let (Some(&first), Some(&last)) = (changed.first(), changed.last()) else {
            return Ok(());
        };
        self.solved_cells = self.solved_cells + solved(mirror, near.clone()) - before;
        let sent = first.saturating_sub(1)..(last + 2).min(ny);
        let cells = sent.start * nx..sent.end * nx;
        // The fixed velocities the mirror set again: the u faces of `rows`, the v faces of
        // rows.start..=rows.end; the GPU keeps its own (the mirror's) elsewhere.
        let fixed = sent.start.max(rows.start)..sent.end.min(rows.end);
        let host = &mut self.wall_rows;
        host.solid.clear();
        host.solid
            .extend(mirror.solid()[cells.clone()].iter().map(|&s| u8::from(s)));
        host.discs.clear();
        for d in &mirror.moving {
            host.discs.extend([
                d.center[0],
                d.center[1],
                d.radius,
                d.velocity[0],
                d.velocity[1],
            ]);
        }
        let s = &self.stream;
        let b = &mut self.buffers;
        let up = CudaError::driver("copying the obstacles' rows to the GPU");
        s.memcpy_htod(&host.solid, &mut b.solid.slice_mut(cells))
            .map_err(&up)?;
        if b.wall_discs.len() < host.discs.len() {
            b.wall_discs = s.alloc_zeros(host.discs.len()).map_err(&up)?;
        }
        if !host.discs.is_empty() {
            s.memcpy_htod(
                &host.discs,
                &mut b.wall_discs.slice_mut(0..host.discs.len()),
            )
            .map_err(&up)?;
        }
        self.kernels.wall_rows(
            s,
            &self.grid,
            (sent.clone(), fixed),
            (&b.solid, &b.wall_discs, mirror.moving.len()),
            (&mut b.u_open, &mut b.v_open, &mut b.stencil),
            (&mut b.u_fixed, &mut b.v_fixed),
        )?;
        self.kernels.close_walls(
            s,
            &self.grid,
            sent,
            (&mut b.u, &mut b.v, &mut b.p),
            (&b.u_open, &b.v_open, &b.solid),
            (&b.u_fixed, &b.v_fixed),
        )?;
        if cells_changed {
            if self.params.pressure_solver == PressureSolver::Multigrid {
                b.multigrid
                    .update_rows(s, mirror, rows, (&b.solid, &b.stencil))?;
            } else {
                b.multigrid.current = false;
            }
        }
        Ok(())
    }
}

/// What follows from the solid cells on one side, for the parity checks: the open masks, the
/// solid bytes and the stencil, the closed faces' fixed velocities.
#[derive(Clone, Debug, PartialEq)]
pub struct WallMasks {
    pub u_open: Vec<u8>,
    pub v_open: Vec<u8>,
    pub solid: Vec<u8>,
    pub stencil: Vec<u8>,
    pub u_fixed: Vec<f32>,
    pub v_fixed: Vec<f32>,
}

impl WallMasks {
    /// The CPU's (`flow`'s).
    pub fn of(flow: &Flow) -> WallMasks {
        let (nx, ny) = (flow.nx, flow.ny);
        let (u_fixed, v_fixed) = flow.fixed();
        WallMasks {
            u_open: (0..(nx + 1) * ny)
                .map(|k| u8::from(flow.u_open(k % (nx + 1), k / (nx + 1))))
                .collect(),
            v_open: (0..nx * (ny + 1))
                .map(|k| u8::from(flow.v_open(k % nx, k / nx)))
                .collect(),
            solid: flow.solid().iter().map(|&s| u8::from(s)).collect(),
            stencil: flow.poisson.cells.clone(),
            u_fixed: u_fixed.to_vec(),
            v_fixed: v_fixed.to_vec(),
        }
    }

    /// The names of the arrays that differ from `other`'s.
    pub fn differing(&self, other: &WallMasks) -> Vec<&'static str> {
        [
            ("u_open", self.u_open == other.u_open),
            ("v_open", self.v_open == other.v_open),
            ("solid", self.solid == other.solid),
            ("stencil", self.stencil == other.stencil),
            ("u_fixed", self.u_fixed == other.u_fixed),
            ("v_fixed", self.v_fixed == other.v_fixed),
        ]
        .into_iter()
        .filter(|&(_, equal)| !equal)
        .map(|(name, _)| name)
        .collect()
    }
}

impl CudaInk {
    /// The walls' arrays on the GPU ([`WallMasks`]).
    pub fn wall_masks(&self) -> Result<WallMasks, CudaError> {
        let (s, b) = (&self.stream, &self.buffers);
        let read = CudaError::driver("copying the walls' masks from the GPU");
        Ok(WallMasks {
            u_open: s.clone_dtoh(&b.u_open).map_err(&read)?,
            v_open: s.clone_dtoh(&b.v_open).map_err(&read)?,
            solid: s.clone_dtoh(&b.solid).map_err(&read)?,
            stencil: s.clone_dtoh(&b.stencil).map_err(&read)?,
            u_fixed: s.clone_dtoh(&b.u_fixed).map_err(&read)?,
            v_fixed: s.clone_dtoh(&b.v_fixed).map_err(&read)?,
        })
    }
}

/// The solved cells of the rows `rows`.
fn solved(flow: &Flow, rows: Range<usize>) -> usize {
    flow.poisson.cells[rows.start * flow.nx..rows.end * flow.nx]
        .iter()
        .filter(|&&c| c >> DIAGONAL_SHIFT != 0)
        .count()
}
