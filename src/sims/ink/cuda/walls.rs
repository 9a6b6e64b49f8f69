//! Obstacles changed on CUDA — cells painted, a disc moved (docs/ink.md "Obstacles"): the host
//! mirror's masks are set again for the rows that changed ([`Flow::set_solid_rows`]), those
//! rows' masks, stencil and closed faces' fixed velocities are sent up, and the kernel
//! `close_walls` closes the rows' faces and zeroes their solid cells' pressure on the GPU. No
//! velocity comes back and nothing is waited for explicitly: a disc moving every substep keeps
//! the frame's one synchronisation (`end_frame`).
//!
//! The copies (`cuMemcpyHtoDAsync`) are from pageable host memory. The driver stages such a
//! buffer's bytes before the call returns, so a buffer may be changed or freed as soon as the
//! call is back; [`WallRows`] holds its vectors only to reuse their allocations. The price: CUDA
//! documents a pageable copy as possibly synchronous with respect to the host ("API
//! synchronization behavior"), so a large one can block until the stream reaches it. When
//! cells change the multigrid's masks follow by rows (`GpuMultigrid::update_rows`: the finest
//! level copied on the GPU from the rows sent here, the coarser levels' changed rows sent:
//! about 0.17 MB a substep for the `stir` disc at 1414 × 707, where the whole hierarchy was
//! 2 × 1.33 bytes a cell, 2.67 MB). The
//! rows sent here are now the larger copy: 12 bytes a cell of the rows (masks, stencil and
//! the fixed velocities), about 3 MB a substep for the `stir` disc at 1414 × 707; deriving the
//! masks and fixed velocities on the GPU from the solid rows (1 byte a cell) would shrink it
//! (docs/ink.md, "Not done yet").

use super::kernels::{per_point, InkGrid, InkKernels};
use super::CudaInk;
use crate::cuda::CudaError;
use crate::sims::ink::boundary::{MovingDisc, DIAGONAL_SHIFT};
use crate::sims::ink::fields::Flow;
use crate::sims::ink::params::PressureSolver;
use cudarc::driver::{CudaSlice, CudaStream};
use std::ops::Range;

/// The host side of the rows `set_walls` sends (the open masks, the solid cells and the closed
/// faces' fixed velocities), kept between calls only so that their allocations are reused.
#[derive(Default)]
pub(super) struct WallRows {
    u_open: Vec<u8>,
    v_open: Vec<u8>,
    solid: Vec<u8>,
    u_fixed: Vec<f32>,
    v_fixed: Vec<f32>,
}

impl InkKernels {
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
    /// whose closed faces' velocities changed (and one either side) the masks, stencil and
    /// fixed velocities are sent and `close_walls` closes their faces on the GPU. Enqueued
    /// only: nothing waits.
    pub fn set_walls(
        &mut self,
        rows: Range<usize>,
        cells: &[bool],
        moving: Vec<MovingDisc>,
    ) -> Result<(), CudaError> {
        let (nx, ny) = (self.mirror.nx, self.mirror.ny);
        let mirror = &mut self.mirror;
        let near = rows.start.saturating_sub(1)..(rows.end + 1).min(ny);
        let before = counts(mirror, near.clone());
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
        let after = counts(mirror, near);
        self.fluid_cells = self.fluid_cells + after.0 - before.0;
        self.solved_cells = self.solved_cells + after.1 - before.1;
        let sent = first.saturating_sub(1)..(last + 2).min(ny);
        let (cells, u_faces, v_faces) =
            (sent.start * nx..sent.end * nx, u_span(&sent), v_span(&sent));
        let host = &mut self.wall_rows;
        let bytes = |mask: &mut Vec<u8>, open: &dyn Fn(usize) -> bool, span: Range<usize>| {
            mask.clear();
            mask.extend(span.map(|k| u8::from(open(k))));
        };
        bytes(
            &mut host.u_open,
            &|k| mirror.u_open(k % (nx + 1), k / (nx + 1)),
            u_faces.clone(),
        );
        bytes(
            &mut host.v_open,
            &|k| mirror.v_open(k % nx, k / nx),
            v_faces.clone(),
        );
        bytes(&mut host.solid, &|k| mirror.solid()[k], cells.clone());
        let (u_fixed, v_fixed) = mirror.fixed();
        host.u_fixed.clear();
        host.u_fixed.extend_from_slice(&u_fixed[u_faces.clone()]);
        host.v_fixed.clear();
        host.v_fixed.extend_from_slice(&v_fixed[v_faces.clone()]);
        let s = &self.stream;
        let b = &mut self.buffers;
        let up = CudaError::driver("copying the obstacles' rows to the GPU");
        s.memcpy_htod(&host.u_open, &mut b.u_open.slice_mut(u_faces.clone()))
            .map_err(&up)?;
        s.memcpy_htod(&host.v_open, &mut b.v_open.slice_mut(v_faces.clone()))
            .map_err(&up)?;
        s.memcpy_htod(&host.solid, &mut b.solid.slice_mut(cells.clone()))
            .map_err(&up)?;
        s.memcpy_htod(&host.u_fixed, &mut b.u_fixed.slice_mut(u_faces))
            .map_err(&up)?;
        s.memcpy_htod(&host.v_fixed, &mut b.v_fixed.slice_mut(v_faces))
            .map_err(&up)?;
        s.memcpy_htod(
            &mirror.poisson.cells[cells.clone()],
            &mut b.stencil.slice_mut(cells),
        )
        .map_err(&up)?;
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

/// The fluid cells and the solved cells of the rows `rows`.
fn counts(flow: &Flow, rows: Range<usize>) -> (usize, usize) {
    let cells = rows.start * flow.nx..rows.end * flow.nx;
    let fluid = flow.solid()[cells.clone()].iter().filter(|&&s| !s).count();
    let solved = flow.poisson.cells[cells]
        .iter()
        .filter(|&&c| c >> DIAGONAL_SHIFT != 0)
        .count();
    (fluid, solved)
}
