//! Ink's grids: a MAC (staggered) grid for the flow — horizontal velocity on the vertical cell
//! faces, vertical velocity on the horizontal faces, pressure at the centres — and the ink at
//! the centres of a grid that may be finer. The staggering makes divergence, pressure Laplacian
//! and gradient one consistent discretisation, so the projection can remove the divergence to
//! the solver's tolerance; on a collocated grid with central differences (the original's, and
//! GPU Gems ch. 38) the 5-point Laplacian does not match the wide divergence-of-gradient stencil
//! and the projection leaves most of the divergence in place (`specs/003-ink.md`: 1.41 → 1.00).

use super::boundary::{Boundary, MovingDisc, Poisson, BOTTOM, LEFT, RIGHT, TOP};
use rayon::prelude::*;

#[path = "fields_sampler.rs"]
mod sampler;
#[path = "fields_view.rs"]
mod view;
#[path = "fields_walls.rs"]
mod walls;
pub use sampler::VelocitySampler;
pub use view::{FlowCopy, FlowView};

/// Values on a regular lattice of `nx × ny` points, point (i, j) at ((i + ox)·h, (j + oy)·h).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Points along x.
    pub nx: usize,
    /// Points along y.
    pub ny: usize,
    /// Offset of point (0, 0) from the origin, in spacings.
    pub offset: [f32; 2],
    /// Spacing, m.
    pub h: f32,
    /// Values, x fastest.
    pub data: Vec<f32>,
}

impl Field {
    /// A zero field.
    pub fn new(nx: usize, ny: usize, offset: [f32; 2], h: f32) -> Field {
        Field {
            nx,
            ny,
            offset,
            h,
            data: vec![0.0; nx * ny],
        }
    }

    /// Index of point (i, j).
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> usize {
        j * self.nx + i
    }

    /// The value at (i, j).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f32 {
        self.data[j * self.nx + i]
    }

    /// Where (x, y) m falls on this lattice, for [`Field::sample`] and friends.
    #[inline]
    pub fn lattice(&self) -> Lattice {
        Lattice {
            nx: self.nx,
            ny: self.ny,
            offset: self.offset,
            h: self.h,
            inverse_h: 1.0 / self.h,
        }
    }

    /// Bilinear interpolation at (x, y) m, clamped to the lattice.
    #[inline]
    pub fn sample(&self, x: f32, y: f32) -> f32 {
        self.interpolate(self.lattice().bilinear(x, y))
    }

    /// The value a [`Bilinear`] stencil of this lattice weighs.
    #[inline]
    pub fn interpolate(&self, at: Bilinear) -> f32 {
        bilinear(&self.data, self.nx, at)
    }

    /// [`Field::interpolate`], and the smallest and largest of the four values it weighs
    /// (MacCormack's clamp).
    #[inline]
    pub fn interpolate_with_bounds(&self, at: Bilinear) -> (f32, f32, f32) {
        let nx = self.nx;
        let q = &self.data[at.k..at.k + nx + 2];
        let (a, b, c, d) = (q[0], q[1], q[nx], q[nx + 1]);
        let (tx, ty) = (at.tx, at.ty);
        let value = (a + (b - a) * tx) * (1.0 - ty) + (c + (d - c) * tx) * ty;
        (value, a.min(b).min(c.min(d)), a.max(b).max(c.max(d)))
    }

    /// Position of point (i, j), m.
    #[inline]
    pub fn position(&self, i: usize, j: usize) -> (f32, f32) {
        (
            (i as f32 + self.offset[0]) * self.h,
            (j as f32 + self.offset[1]) * self.h,
        )
    }

    /// Σ values.
    pub fn sum(&self) -> f64 {
        self.data.iter().map(|&v| f64::from(v)).sum()
    }
}

/// Bilinear interpolation of `values` (a lattice `nx` points wide) with stencil `at`.
#[inline(always)]
pub fn bilinear(values: &[f32], nx: usize, at: Bilinear) -> f32 {
    // One bounds check for the four values.
    let q = &values[at.k..at.k + nx + 2];
    let (a, b, c, d) = (q[0], q[1], q[nx], q[nx + 1]);
    (a + (b - a) * at.tx) * (1.0 - at.ty) + (c + (d - c) * at.tx) * at.ty
}

/// A lattice's shape, for locating points on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lattice {
    /// Points along x.
    pub nx: usize,
    /// Points along y.
    pub ny: usize,
    /// Offset of point (0, 0), in spacings.
    pub offset: [f32; 2],
    /// Spacing, m.
    pub h: f32,
    /// 1 / spacing, 1/m.
    pub inverse_h: f32,
}

/// A point's bilinear stencil on a lattice: the lower-left point's index and the weights.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bilinear {
    /// Index of the lower-left point.
    pub k: usize,
    /// Fraction towards the right neighbour.
    pub tx: f32,
    /// Fraction towards the upper neighbour.
    pub ty: f32,
    /// What the interpolated value is multiplied by: 1, except for a tangential velocity
    /// within half a cell of a no-slip wall (see [`VelocitySampler::u_factor`]); only
    /// advection applies it.
    pub w: f32,
}

impl Lattice {
    /// The stencil of (x, y) m, clamped to the lattice (values beyond its edge are its edge's).
    #[inline]
    pub fn bilinear(&self, x: f32, y: f32) -> Bilinear {
        // (clamp and usize casts measured faster here than max/min and i32 casts: advect 20 ms
        // against 24 at 512²; the same values as the kernels' fmaxf/fminf for every finite
        // position — a NaN one, which a failed run has already reported, keeps its NaN here.)
        let fx = (x * self.inverse_h - self.offset[0]).clamp(0.0, (self.nx - 1) as f32);
        let fy = (y * self.inverse_h - self.offset[1]).clamp(0.0, (self.ny - 1) as f32);
        let i = (fx as usize).min(self.nx - 2);
        let j = (fy as usize).min(self.ny - 2);
        Bilinear {
            k: j * self.nx + i,
            tx: fx - i as f32,
            ty: fy - j as f32,
            w: 1.0,
        }
    }

    /// Position of point (i, j), m.
    #[inline]
    pub fn position(&self, i: usize, j: usize) -> (f32, f32) {
        (
            (i as f32 + self.offset[0]) * self.h,
            (j as f32 + self.offset[1]) * self.h,
        )
    }
}

/// The flow on its MAC grid, which cells are solid, and the masks the boundary makes of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Cell size, m.
    pub dx: f32,
    /// Horizontal velocity on the vertical faces: (nx + 1) × ny, m/s.
    pub u: Field,
    /// Vertical velocity on the horizontal faces: nx × (ny + 1), m/s.
    pub v: Field,
    /// Pressure (times dt/ρ: what the gradient step subtracts), cell centres.
    pub p: Field,
    /// The box's sides.
    pub boundary: Boundary,
    pub(in crate::sims::ink) solid: Vec<bool>,
    /// How many of [`Flow::solid`] are solid (kept where cells change, `Flow::wall_rows`).
    solid_cells: usize,
    /// Per vertical face: whether fluid passes (open), else its velocity is fixed.
    pub(in crate::sims::ink) u_open: Vec<bool>,
    /// Per horizontal face: whether fluid passes.
    pub(in crate::sims::ink) v_open: Vec<bool>,
    /// The discs moving now: their cells' closed faces carry their velocity.
    pub moving: Vec<MovingDisc>,
    /// The velocity of each vertical face while closed ([`fixed_faces`]).
    u_fixed: Vec<f32>,
    /// The velocity of each horizontal face while closed.
    v_fixed: Vec<f32>,
    /// The pressure equation's stencil.
    pub poisson: Poisson,
}

impl Flow {
    /// A copy of everything but the values (velocity and pressure: empty): the shape, the
    /// cells, the masks, the moving discs and the stencil. CUDA's host mirror.
    pub fn without_values(&self) -> Flow {
        let empty = |f: &Field| Field {
            data: Vec::new(),
            ..*f
        };
        Flow {
            nx: self.nx,
            ny: self.ny,
            dx: self.dx,
            u: empty(&self.u),
            v: empty(&self.v),
            p: empty(&self.p),
            boundary: self.boundary,
            solid: self.solid.clone(),
            solid_cells: self.solid_cells,
            u_open: self.u_open.clone(),
            v_open: self.v_open.clone(),
            moving: self.moving.clone(),
            u_fixed: self.u_fixed.clone(),
            v_fixed: self.v_fixed.clone(),
            poisson: self.poisson.clone(),
        }
    }

    /// A fluid at rest in an `nx × ny` box of cells of size `dx` with sides `boundary`.
    pub fn new(nx: usize, ny: usize, dx: f32, boundary: Boundary) -> Flow {
        let mut flow = Flow {
            nx,
            ny,
            dx,
            u: Field::new(nx + 1, ny, [0.0, 0.5], dx),
            v: Field::new(nx, ny + 1, [0.5, 0.0], dx),
            p: Field::new(nx, ny, [0.5, 0.5], dx),
            boundary,
            solid: Vec::new(),
            solid_cells: 0,
            u_open: Vec::new(),
            v_open: Vec::new(),
            moving: Vec::new(),
            u_fixed: Vec::new(),
            v_fixed: Vec::new(),
            poisson: Poisson::new(0, 0, &[], &boundary),
        };
        flow.set_solid(vec![false; nx * ny]);
        flow
    }

    /// Which cells are solid.
    pub fn solid(&self) -> &[bool] {
        &self.solid
    }

    /// How many cells are solid (a count kept where cells change, not a scan).
    pub fn solid_cells(&self) -> usize {
        self.solid_cells
    }

    /// Whether any cell is solid (obstacles).
    pub fn has_obstacles(&self) -> bool {
        self.solid_cells > 0
    }

    /// Whether cell (i, j) is fluid; cells outside the box are not.
    #[inline]
    pub fn fluid(&self, i: isize, j: isize) -> bool {
        i >= 0
            && j >= 0
            && (i as usize) < self.nx
            && (j as usize) < self.ny
            && !self.solid[j as usize * self.nx + i as usize]
    }

    /// Whether the vertical face left of cell (i, j) lets fluid through.
    #[inline]
    pub fn u_open(&self, i: usize, j: usize) -> bool {
        self.u_open[j * (self.nx + 1) + i]
    }

    /// Whether the horizontal face below cell (i, j) lets fluid through.
    #[inline]
    pub fn v_open(&self, i: usize, j: usize) -> bool {
        self.v_open[j * self.nx + i]
    }

    /// The velocity each vertical face holds while closed, then each horizontal face's.
    pub fn fixed(&self) -> (&[f32], &[f32]) {
        (&self.u_fixed, &self.v_fixed)
    }

    /// What samples the velocity at any point, honouring no-slip walls.
    #[inline]
    pub fn sampler(&self) -> VelocitySampler<'_> {
        let sticks = |side| self.boundary.sticks(side);
        VelocitySampler {
            u: &self.u,
            v: &self.v,
            ul: self.u.lattice(),
            vl: self.v.lattice(),
            half_cell: 0.5 * self.dx,
            width: self.nx as f32 * self.dx,
            height: self.ny as f32 * self.dx,
            sticks: [sticks(LEFT), sticks(RIGHT), sticks(BOTTOM), sticks(TOP)],
            any_sticks: (0..4).any(sticks),
        }
    }

    /// The velocity at (x, y) m.
    #[inline]
    pub fn velocity(&self, x: f32, y: f32) -> (f32, f32) {
        self.sampler().velocity(x, y)
    }

    /// The divergence of cell (i, j), 1/s (0 in solids).
    #[inline]
    pub fn divergence(&self, i: usize, j: usize) -> f32 {
        self.view().divergence(i, j)
    }

    /// The velocity at the centre of cell (i, j), m/s.
    #[inline]
    pub fn center_velocity(&self, i: usize, j: usize) -> (f32, f32) {
        self.view().center_velocity(i, j)
    }

    /// Root mean square of the divergence over the fluid cells, 1/s.
    pub fn divergence_rms(&self) -> f64 {
        let (sum, count) = (0..self.ny)
            .into_par_iter()
            .with_min_len(8)
            .map_init(Vec::new, |row, j| {
                row.resize(self.nx, 0.0);
                self.divergence_row(j, row)
            })
            .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (sum / count.max(1) as f64).sqrt()
    }

    /// Writes ∇·u of every cell of row `j` into `out` (0 in solids; a plain loop over the row's
    /// slices, vectorised) and returns the sum of the squares over the row (in order, in f32)
    /// and the number of its fluid cells.
    #[inline]
    pub fn divergence_row(&self, j: usize, out: &mut [f32]) -> (f64, usize) {
        let nx = self.nx;
        let u = &self.u.data[j * (nx + 1)..(j + 1) * (nx + 1)];
        let (below, above) = (
            &self.v.data[j * nx..(j + 1) * nx],
            &self.v.data[(j + 1) * nx..(j + 2) * nx],
        );
        let solid = &self.solid[j * nx..(j + 1) * nx];
        let out = &mut out[..nx];
        for ((d, u), ((below, above), &solid)) in out
            .iter_mut()
            .zip(u.windows(2))
            .zip(below.iter().zip(above).zip(solid))
        {
            let value = (u[1] - u[0] + above - below) / self.dx;
            *d = if solid { 0.0 } else { value };
        }
        let sum = out.iter().fold(0.0f32, |sum, d| sum + d * d);
        let count = solid.iter().filter(|&&s| !s).count();
        (f64::from(sum), count)
    }

    /// u −= ∇p on every open face (p = 0 beyond outflow sides). Rows of faces in parallel,
    /// each a plain loop over row slices (vectorised; a closed face keeps its value).
    pub fn subtract_gradient(&mut self) {
        let (nx, ny, dx) = (self.nx, self.ny, self.dx);
        let p = &self.p.data;
        let u_open = &self.u_open;
        self.u
            .data
            .par_chunks_mut(nx + 1)
            .zip(u_open.par_chunks(nx + 1))
            .zip(p.par_chunks(nx))
            .with_min_len(8)
            .for_each(|((row, open), p)| {
                // Beyond the box's left and right sides the pressure is zero.
                if open[0] {
                    row[0] -= (p[0] - 0.0) / dx;
                }
                if open[nx] {
                    row[nx] -= (0.0 - p[nx - 1]) / dx;
                }
                for ((u, &open), w) in row[1..nx].iter_mut().zip(&open[1..nx]).zip(p.windows(2)) {
                    let changed = *u - (w[1] - w[0]) / dx;
                    *u = if open { changed } else { *u };
                }
            });
        let v_open = &self.v_open;
        self.v
            .data
            .par_chunks_mut(nx)
            .zip(v_open.par_chunks(nx))
            .enumerate()
            .with_min_len(8)
            .for_each(|(j, (row, open))| {
                let zero = [0.0];
                let zeros = zero.iter().cycle();
                let here = if j < ny {
                    &p[j * nx..(j + 1) * nx]
                } else {
                    &[]
                };
                let below = if j > 0 { &p[(j - 1) * nx..j * nx] } else { &[] };
                let subtract = |v: &mut f32, open: bool, here: f32, below: f32| {
                    let changed = *v - (here - below) / dx;
                    *v = if open { changed } else { *v };
                };
                match (here.is_empty(), below.is_empty()) {
                    (false, false) => {
                        for (((v, &open), &here), &below) in
                            row.iter_mut().zip(open).zip(here).zip(below)
                        {
                            subtract(v, open, here, below);
                        }
                    }
                    (false, true) => {
                        for (((v, &open), &here), &below) in
                            row.iter_mut().zip(open).zip(here).zip(zeros)
                        {
                            subtract(v, open, here, below);
                        }
                    }
                    _ => {
                        for (((v, &open), &here), &below) in
                            row.iter_mut().zip(open).zip(zeros).zip(below)
                        {
                            subtract(v, open, here, below);
                        }
                    }
                }
            });
    }

    /// ω = ∂v/∂x − ∂u/∂y at the cell centres into `out` ([`FlowView::curl`]).
    pub fn curl(&self, out: &mut Field) {
        self.view().curl(out);
    }
}

/// The ink: red, green and blue amounts at the centres of the ink grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Ink {
    /// One field per channel.
    pub channels: [Field; 3],
}

impl Ink {
    /// No ink on an `nx × ny` grid of cell size `h`.
    pub fn new(nx: usize, ny: usize, h: f32) -> Ink {
        let field = Field::new(nx, ny, [0.5, 0.5], h);
        Ink {
            channels: [field.clone(), field.clone(), field],
        }
    }

    /// Σ over cells of every channel times the cell area: the amount of ink, m².
    pub fn total(&self) -> f64 {
        let h = f64::from(self.channels[0].h);
        self.channels.iter().map(Field::sum).sum::<f64>() * h * h
    }
}
