//! The flow's velocity sampled anywhere ([`VelocitySampler`]): bilinear on each face lattice of
//! the MAC grid, with the no-slip walls' ramp — what the advection's back-traces read.

use super::super::boundary::{BOTTOM, LEFT, RIGHT, TOP};
use super::{Field, Lattice};

/// Samples the flow's velocity anywhere (bilinear on each face lattice); beside a no-slip wall
/// the tangential component falls linearly to zero at the wall over the half cell between the
/// wall and the nearest face row.
#[derive(Clone, Copy)]
pub struct VelocitySampler<'a> {
    pub(in crate::sims::ink) u: &'a Field,
    pub(in crate::sims::ink) v: &'a Field,
    pub(in crate::sims::ink) ul: Lattice,
    pub(in crate::sims::ink) vl: Lattice,
    pub(in crate::sims::ink) half_cell: f32,
    pub(in crate::sims::ink) width: f32,
    pub(in crate::sims::ink) height: f32,
    pub(in crate::sims::ink) sticks: [bool; 4],
    pub(in crate::sims::ink) any_sticks: bool,
}

impl VelocitySampler<'_> {
    /// The velocity at vertical face (i, j), a point of u's lattice: u there and the mean of
    /// the four v faces around — exactly [`VelocitySampler::velocity`] at that point.
    #[inline(always)]
    pub fn at_u_face(&self, i: usize, j: usize) -> (f32, f32) {
        let (nx, v) = (self.v.nx, &self.v.data);
        let (il, ir) = (i.saturating_sub(1), i.min(nx - 1));
        let (below, above) = (&v[j * nx..(j + 1) * nx], &v[(j + 1) * nx..(j + 2) * nx]);
        let mut mean = 0.25 * (below[il] + below[ir] + above[il] + above[ir]);
        if (i == 0 && self.sticks[LEFT]) || (i == nx && self.sticks[RIGHT]) {
            mean = 0.0;
        }
        (self.u.data[j * (nx + 1) + i], mean)
    }

    /// The velocity at horizontal face (i, j), a point of v's lattice.
    #[inline(always)]
    pub fn at_v_face(&self, i: usize, j: usize) -> (f32, f32) {
        let (nx, ny, u) = (self.v.nx, self.u.ny, &self.u.data);
        let (jb, jt) = (j.saturating_sub(1), j.min(ny - 1));
        let w = nx + 1;
        let (lo, hi) = (
            &u[jb * w + i..jb * w + i + 2],
            &u[jt * w + i..jt * w + i + 2],
        );
        let mut mean = 0.25 * (lo[0] + lo[1] + hi[0] + hi[1]);
        if (j == 0 && self.sticks[BOTTOM]) || (j == ny && self.sticks[TOP]) {
            mean = 0.0;
        }
        (mean, self.v.data[j * nx + i])
    }

    /// The velocity at the centre of cell (i, j).
    #[inline(always)]
    pub fn at_centre(&self, i: usize, j: usize) -> (f32, f32) {
        let nx = self.v.nx;
        let u = &self.u.data[j * (nx + 1) + i..j * (nx + 1) + i + 2];
        (
            0.5 * (u[0] + u[1]),
            0.5 * (self.v.data[j * nx + i] + self.v.data[(j + 1) * nx + i]),
        )
    }

    /// The velocity at (x, y) m.
    #[inline(always)]
    pub fn velocity(&self, x: f32, y: f32) -> (f32, f32) {
        let u = self.u.interpolate(self.ul.bilinear(x, y));
        let v = self.v.interpolate(self.vl.bilinear(x, y));
        if self.any_sticks {
            (u * self.u_factor(y), v * self.v_factor(x))
        } else {
            (u, v)
        }
    }

    /// What a horizontal velocity sampled at height y is multiplied by: below the lowest row
    /// of u faces (half a cell from the bottom) it falls linearly to zero at a no-slip bottom
    /// wall — the mirror image −u beyond the wall (GPU Gems ch. 38's no-slip) — and likewise at
    /// the top; 1 elsewhere.
    #[inline(always)]
    pub fn u_factor(&self, y: f32) -> f32 {
        self.stick(y, self.height, self.sticks[BOTTOM], self.sticks[TOP])
    }

    /// What a vertical velocity sampled at x is multiplied by (no-slip left and right walls).
    #[inline(always)]
    pub fn v_factor(&self, x: f32) -> f32 {
        self.stick(x, self.width, self.sticks[LEFT], self.sticks[RIGHT])
    }

    /// The no-slip factor at `s` along an axis of the box `extent` long, with sticking walls
    /// at 0 (`low`) and at `extent` (`high`).
    #[inline(always)]
    fn stick(&self, s: f32, extent: f32, low: bool, high: bool) -> f32 {
        let h = self.half_cell;
        if low && s < h {
            (s / h).max(0.0)
        } else if high && s > extent - h {
            ((extent - s) / h).max(0.0)
        } else {
            1.0
        }
    }

    /// Whether any wall is no-slip.
    #[inline(always)]
    pub fn any_sticks(&self) -> bool {
        self.any_sticks
    }

    /// Whether side `side` (boundary::LEFT…TOP) is a no-slip wall.
    #[inline(always)]
    pub fn sticks(&self, side: usize) -> bool {
        self.sticks[side]
    }
}
