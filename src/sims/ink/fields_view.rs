//! What a frame reads of the flow — its values (velocity, pressure) and its solid cells — as a
//! borrowed [`FlowView`] of a whole [`Flow`] or of a [`FlowCopy`], the frame's own copy. Neither
//! has masks, fixed velocities or a stencil, so neither can be stepped: what is drawn, exported
//! or summed takes a view.

use super::{Field, Flow};
use crate::sims::ink::boundary::{Boundary, BOTTOM, LEFT, RIGHT, TOP};
use rayon::prelude::*;

/// The flow's values and cells, borrowed from a [`Flow`] ([`Flow::view`]) or a [`FlowCopy`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowView<'a> {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Cell size, m.
    pub dx: f32,
    /// Horizontal velocity on the vertical faces, m/s.
    pub u: &'a Field,
    /// Vertical velocity on the horizontal faces, m/s.
    pub v: &'a Field,
    /// Pressure at the cell centres.
    pub p: &'a Field,
    /// The box's sides.
    pub boundary: Boundary,
    /// Which cells are solid.
    pub solid: &'a [bool],
    /// How many of them are.
    pub solid_cells: usize,
}

/// A frame's copy of the flow: its values and solid cells, owned (≈ 4 MB of cells at 2048²
/// besides the values, where the masks a step needs are ≈ 50 MB). Read through
/// [`FlowCopy::view`]; it cannot be stepped.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowCopy {
    nx: usize,
    ny: usize,
    dx: f32,
    u: Field,
    v: Field,
    p: Field,
    boundary: Boundary,
    solid: Vec<bool>,
    solid_cells: usize,
}

impl FlowCopy {
    /// A copy of `flow`'s values and cells.
    pub fn of(flow: &Flow) -> FlowCopy {
        let values = [&flow.u, &flow.v, &flow.p].map(|f| f.data.clone());
        FlowCopy::with_values(flow, values)
    }

    /// A copy of `flow`'s cells with the values `[u, v, p]` (read back from the GPU) in place
    /// of its own; each as long as the flow's.
    pub fn with_values(flow: &Flow, [u, v, p]: [Vec<f32>; 3]) -> FlowCopy {
        let field = |f: &Field, data: Vec<f32>| {
            assert_eq!(data.len(), f.nx * f.ny, "a field of {} × {}", f.nx, f.ny);
            Field { data, ..*f }
        };
        FlowCopy {
            nx: flow.nx,
            ny: flow.ny,
            dx: flow.dx,
            u: field(&flow.u, u),
            v: field(&flow.v, v),
            p: field(&flow.p, p),
            boundary: flow.boundary,
            solid: flow.solid().to_vec(),
            solid_cells: flow.solid_cells(),
        }
    }

    /// What the frame reads.
    pub fn view(&self) -> FlowView<'_> {
        FlowView {
            nx: self.nx,
            ny: self.ny,
            dx: self.dx,
            u: &self.u,
            v: &self.v,
            p: &self.p,
            boundary: self.boundary,
            solid: &self.solid,
            solid_cells: self.solid_cells,
        }
    }
}

impl Flow {
    /// The values and cells, borrowed: what pictures, exports and totals read.
    #[inline]
    pub fn view(&self) -> FlowView<'_> {
        FlowView {
            nx: self.nx,
            ny: self.ny,
            dx: self.dx,
            u: &self.u,
            v: &self.v,
            p: &self.p,
            boundary: self.boundary,
            solid: self.solid(),
            solid_cells: self.solid_cells(),
        }
    }
}

impl FlowView<'_> {
    /// Whether any cell is solid (a count, not a scan).
    pub fn has_obstacles(&self) -> bool {
        self.solid_cells > 0
    }

    /// The divergence of cell (i, j), 1/s (0 in solids).
    #[inline]
    pub fn divergence(&self, i: usize, j: usize) -> f32 {
        if self.solid[j * self.nx + i] {
            return 0.0;
        }
        (self.u.get(i + 1, j) - self.u.get(i, j) + self.v.get(i, j + 1) - self.v.get(i, j))
            / self.dx
    }

    /// The velocity at the centre of cell (i, j), m/s.
    #[inline]
    pub fn center_velocity(&self, i: usize, j: usize) -> (f32, f32) {
        (
            0.5 * (self.u.get(i, j) + self.u.get(i + 1, j)),
            0.5 * (self.v.get(i, j) + self.v.get(i, j + 1)),
        )
    }

    /// ω = ∂v/∂x − ∂u/∂y at the cell centres into `out` (nx × ny), from the centre velocities
    /// (central differences;
    /// one-sided at a free-slip wall; at a no-slip wall against the mirror image beyond it).
    pub fn curl(&self, out: &mut Field) {
        let flow = *self;
        let (nx, ny, dx) = (flow.nx, flow.ny, flow.dx);
        let sticks = [LEFT, RIGHT, BOTTOM, TOP].map(|side| flow.boundary.sticks(side));
        // The derivative across a cell from its neighbours' values (each with whether it
        // exists): central, or one-sided where a free-slip wall leaves only one.
        let difference = |lo: (f32, bool), here: f32, hi: (f32, bool)| -> f32 {
            match (lo.1, hi.1) {
                (true, true) => (hi.0 - lo.0) / (2.0 * dx),
                (false, true) => (hi.0 - here) / dx,
                (true, false) => (here - lo.0) / dx,
                (false, false) => 0.0,
            }
        };
        let general = |i: usize, j: usize| -> f32 {
            let (u, v) = flow.center_velocity(i, j);
            let side = |inside: bool, wall: usize, value: &dyn Fn() -> f32, own: f32| {
                if inside {
                    (value(), true)
                } else if sticks[wall] {
                    (-own, true)
                } else {
                    (own, false)
                }
            };
            let left = side(i > 0, LEFT, &|| flow.center_velocity(i - 1, j).1, v);
            let right = side(i + 1 < nx, RIGHT, &|| flow.center_velocity(i + 1, j).1, v);
            let below = side(j > 0, BOTTOM, &|| flow.center_velocity(i, j - 1).0, u);
            let above = side(j + 1 < ny, TOP, &|| flow.center_velocity(i, j + 1).0, u);
            difference(left, v, right) - difference(below, u, above)
        };
        let (u, v, w) = (&flow.u.data, &flow.v.data, nx + 1);
        out.data
            .par_chunks_mut(nx)
            .enumerate()
            .with_min_len(8)
            .for_each(|(j, row)| {
                if j == 0 || j + 1 == ny || nx < 3 {
                    for (i, curl) in row.iter_mut().enumerate() {
                        *curl = general(i, j);
                    }
                    return;
                }
                row[0] = general(0, j);
                row[nx - 1] = general(nx - 1, j);
                // Inner cells: central differences of the centre velocities, the same
                // operations as `general` (bit for bit, which the kernels' parity relies on).
                let (v0, v1) = (&v[j * nx..(j + 1) * nx], &v[(j + 1) * nx..(j + 2) * nx]);
                let (ub, uh) = (&u[(j - 1) * w..j * w], &u[(j + 1) * w..(j + 2) * w]);
                for i in 1..nx - 1 {
                    let right = 0.5 * (v0[i + 1] + v1[i + 1]);
                    let left = 0.5 * (v0[i - 1] + v1[i - 1]);
                    let above = 0.5 * (uh[i] + uh[i + 1]);
                    let below = 0.5 * (ub[i] + ub[i + 1]);
                    row[i] = (right - left) / (2.0 * dx) - (above - below) / (2.0 * dx);
                }
            });
    }
}
