//! The box's four sides — walls (free-slip or no-slip), inflow or outflow — and what they mean
//! for each stage, computed once per grid as masks the CPU loops and the CUDA kernels share:
//!
//! - a **wall** face carries no flow; with `no-slip` the tangential velocity also falls to zero
//!   at the wall (sampling mirrors it across the wall), with `free-slip` it slides;
//! - an **inflow** face carries `inflow_speed` into the box (a fixed normal velocity: Neumann for
//!   the pressure, as a wall, but with that flux in the divergence);
//! - an **outflow** face is open: the pressure outside is zero (Dirichlet), so the projection
//!   lets fluid leave, and the velocity there is carried by advection like any inner face.
//!
//! Obstacle faces are walls, free-slip or no-slip as the box's (the tangential velocity beyond
//! them is mirrored: `Flow::mirror_rows`); a moving disc's ([`MovingDisc`]) carry its velocity. With any
//! outflow side the pressure equation has a unique solution;
//! without one it is pure Neumann (defined up to a constant).

use super::patch::Patch;
use crate::scene::Invalid;

/// What one side of the box is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SideKind {
    /// No flow through it.
    Wall,
    /// Fluid enters at `inflow_speed`.
    Inflow,
    /// Fluid leaves freely (zero pressure outside).
    Outflow,
}

impl SideKind {
    /// Every kind, in menu order.
    pub const ALL: [SideKind; 3] = [SideKind::Wall, SideKind::Inflow, SideKind::Outflow];

    /// The scene-file and UI name.
    pub fn name(self) -> &'static str {
        match self {
            SideKind::Wall => "wall",
            SideKind::Inflow => "inflow",
            SideKind::Outflow => "outflow",
        }
    }
}

/// What walls do to the velocity along them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Walls {
    /// The fluid slides along walls (only the normal velocity is zero).
    FreeSlip,
    /// The fluid sticks to walls: the tangential velocity is zero at the wall too.
    NoSlip,
}

impl Walls {
    /// Both, in menu order.
    pub const ALL: [Walls; 2] = [Walls::FreeSlip, Walls::NoSlip];

    /// The scene-file and UI name.
    pub fn name(self) -> &'static str {
        match self {
            Walls::FreeSlip => "free-slip",
            Walls::NoSlip => "no-slip",
        }
    }
}

/// The sides in the order [`Boundary::sides`] holds them.
pub const SIDES: [&str; 4] = ["left", "right", "bottom", "top"];
/// Index of the left side in [`Boundary::sides`].
pub const LEFT: usize = 0;
/// Index of the right side.
pub const RIGHT: usize = 1;
/// Index of the bottom side.
pub const BOTTOM: usize = 2;
/// Index of the top side.
pub const TOP: usize = 3;
/// A channel's sides: an inflow on the left, an outflow on the right, walls below and above
/// (the Kármán street's box).
pub const CHANNEL: [SideKind; 4] = [
    SideKind::Inflow,
    SideKind::Outflow,
    SideKind::Wall,
    SideKind::Wall,
];

/// The box's sides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Boundary {
    /// Left, right, bottom, top.
    pub sides: [SideKind; 4],
    /// Free- or no-slip walls.
    pub walls: Walls,
    /// Speed of the fluid entering through inflow sides, m/s.
    pub inflow_speed: f32,
}

impl Default for Boundary {
    fn default() -> Self {
        Boundary {
            sides: [SideKind::Wall; 4],
            walls: Walls::FreeSlip,
            inflow_speed: 1.0,
        }
    }
}

impl Boundary {
    /// Checks the inflow speed, naming the key.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !(self.inflow_speed.is_finite() && (0.0..=1000.0).contains(&self.inflow_speed)) {
            return Err(Invalid::new(
                "boundary.inflow_speed",
                format!("must be in [0, 1000] m/s, got {}", self.inflow_speed),
            ));
        }
        Ok(())
    }

    /// Whether the pressure is zero outside side `side` (an outflow).
    pub fn dirichlet(&self, side: usize) -> bool {
        self.sides[side] == SideKind::Outflow
    }

    /// Whether any side is an outflow (the pressure equation is then not pure Neumann).
    pub fn any_dirichlet(&self) -> bool {
        (0..4).any(|side| self.dirichlet(side))
    }

    /// The fixed normal velocity of a closed face on side `side`, m/s (+x or +y positive).
    pub fn fixed_velocity(&self, side: usize) -> f32 {
        match (self.sides[side], side) {
            (SideKind::Inflow, LEFT | BOTTOM) => self.inflow_speed,
            (SideKind::Inflow, _) => -self.inflow_speed,
            _ => 0.0,
        }
    }

    /// Whether the tangential velocity along side `side` is zero at the side.
    pub fn sticks(&self, side: usize) -> bool {
        self.walls == Walls::NoSlip && self.sides[side] == SideKind::Wall
    }

    /// Whether the tangential velocity at obstacles' faces is the obstacle's (no-slip); else
    /// the fluid slides along them.
    pub fn obstacles_stick(&self) -> bool {
        self.walls == Walls::NoSlip
    }
}

/// A disc moving through the fluid (scripted or dragged): the solid cells whose centres it
/// covers move with it, so their closed faces carry its velocity — a moving wall. The fluid
/// beside it then sees that velocity as the normal flux through the face (no flow through the
/// disc relative to it), the divergence counts it, and the projection makes the fluid ahead
/// give way and the fluid behind follow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MovingDisc {
    /// Centre, m.
    pub center: [f32; 2],
    /// Radius, m.
    pub radius: f32,
    /// Velocity, m/s.
    pub velocity: [f32; 2],
}

impl MovingDisc {
    /// The rows of cells of an `ny`-row grid of cells of size `dx` whose centres the disc may
    /// cover ([`disc_rows`]).
    pub fn rows(&self, dx: f32, ny: usize) -> std::ops::Range<usize> {
        disc_rows(self.center[1], self.radius.abs(), dx, ny)
    }
}

/// The rows of cells of an `ny`-row grid of cells of size `dx` whose centres a disc of
/// `radius` centred at height `y` (m) may cover: from the row below its lowest covered centre
/// or that row, to the row above its highest (a margin for f32 rounding). What `InkSim` hands
/// over for a disc moved or moving, and what `plan_walls` (CUDA) counts as near it.
pub fn disc_rows(y: f32, radius: f32, dx: f32, ny: usize) -> std::ops::Range<usize> {
    let row = |y: f32| (y / dx - 0.5).clamp(0.0, ny as f32);
    let j0 = row(y - radius).floor() as usize;
    let j1 = (row(y + radius).ceil() as usize + 1).min(ny);
    j0..j1.max(j0)
}

/// The velocity every face holds while closed, u faces ((nx + 1) × ny) then v faces (nx ×
/// (ny + 1)): on the box's sides the side's fixed normal velocity
/// ([`Boundary::fixed_velocity`]); inside, the mean velocity of the solid cells beside the face
/// (a cell's: the first of `moving` whose disc covers its centre, else zero); zero between two
/// fluid cells (an open face: unused).
pub fn fixed_faces(
    grid: (usize, usize, f32),
    solid: &[bool],
    boundary: &Boundary,
    moving: &[MovingDisc],
) -> (Vec<f32>, Vec<f32>) {
    let (nx, ny, _) = grid;
    let (mut u, mut v) = (vec![0.0; (nx + 1) * ny], vec![0.0; nx * (ny + 1)]);
    fixed_faces_rows(grid, solid, boundary, moving, 0..ny, (&mut u, &mut v));
    (u, v)
}

/// [`fixed_faces`] for the u faces of the rows of cells `rows` and the v faces below and above
/// them (rows `rows.start..=rows.end`), written into the whole grid's `u` and `v`: what
/// changes when only those rows' cells, or the discs moving over them, change.
pub fn fixed_faces_rows(
    (nx, ny, dx): (usize, usize, f32),
    solid: &[bool],
    boundary: &Boundary,
    moving: &[MovingDisc],
    rows: std::ops::Range<usize>,
    (u, v): (&mut [f32], &mut [f32]),
) {
    let cell = |i: usize, j: usize| -> Option<[f32; 2]> {
        if !solid[j * nx + i] {
            return None;
        }
        let (x, y) = ((i as f32 + 0.5) * dx, (j as f32 + 0.5) * dx);
        let disc = moving.iter().find(|d| {
            let (ex, ey) = (x - d.center[0], y - d.center[1]);
            ex * ex + ey * ey <= d.radius * d.radius
        });
        Some(disc.map_or([0.0; 2], |d| d.velocity))
    };
    let mean = |a: Option<[f32; 2]>, b: Option<[f32; 2]>, axis: usize| match (a, b) {
        (Some(a), Some(b)) => 0.5 * (a[axis] + b[axis]),
        (Some(a), None) | (None, Some(a)) => a[axis],
        (None, None) => 0.0,
    };
    // Each cell's velocity worked out once a row (a row's u faces, then the v faces below it
    // from the row below's, kept).
    let (mut below, mut here) = (Vec::new(), Vec::new());
    let cells_of = |j: usize, row: &mut Vec<Option<[f32; 2]>>| {
        row.clear();
        if !moving.is_empty() && j < ny {
            row.extend((0..nx).map(|i| cell(i, j)));
        }
    };
    if rows.start > 0 {
        cells_of(rows.start - 1, &mut below);
    }
    for j in rows.start..(rows.end + 1).min(ny + 1) {
        cells_of(j, &mut here);
        if j < rows.end {
            for (i, face) in u[j * (nx + 1)..(j + 1) * (nx + 1)].iter_mut().enumerate() {
                *face = match i {
                    0 => boundary.fixed_velocity(LEFT),
                    i if i == nx => boundary.fixed_velocity(RIGHT),
                    _ if moving.is_empty() => 0.0,
                    _ => mean(here[i - 1], here[i], 0),
                };
            }
        }
        for (i, face) in v[j * nx..(j + 1) * nx].iter_mut().enumerate() {
            *face = match j {
                0 => boundary.fixed_velocity(BOTTOM),
                j if j == ny => boundary.fixed_velocity(TOP),
                _ if moving.is_empty() => 0.0,
                _ => mean(below[i], here[i], 1),
            };
        }
        std::mem::swap(&mut below, &mut here);
    }
}

/// Bits of a [`Poisson::cells`] entry: which of a cell's neighbours are fluid cells in the box;
/// the bits above [`DIAGONAL_SHIFT`] hold the diagonal (fluid neighbours plus outflow
/// neighbours beyond the box, 0–4; 0: the cell is not solved for).
pub const LEFT_BIT: u8 = 1;
/// The right neighbour is fluid.
pub const RIGHT_BIT: u8 = 2;
/// The neighbour below is fluid.
pub const BELOW_BIT: u8 = 4;
/// The neighbour above is fluid.
pub const ABOVE_BIT: u8 = 8;
/// Where a cell's diagonal starts in its [`Poisson::cells`] byte.
pub const DIAGONAL_SHIFT: u8 = 4;
/// 1 / diagonal, indexed by the diagonal.
pub const INVERSE_DIAGONAL: [f32; 5] = [0.0, 1.0, 0.5, 1.0 / 3.0, 0.25];

/// The pressure equation's stencil on one grid, one byte per cell (fluid-neighbour bits and
/// the diagonal). A sweep is p = (Σ fluid neighbours' p − h²·b) / diagonal; beyond an outflow
/// side p = 0, so such a neighbour adds to the diagonal and nothing to the sum.
#[derive(Clone, Debug, PartialEq)]
pub struct Poisson {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Per cell: neighbour bits | diagonal << [`DIAGONAL_SHIFT`].
    pub cells: Vec<u8>,
    /// Rows whose every cell, and the rows' neighbours, are fluid, away from the box's edges:
    /// their inner cells take the plain five-point stencil (diagonal 4).
    pub plain_rows: Vec<bool>,
    /// Whether the solution is only defined up to a constant (no outflow side).
    pub pure_neumann: bool,
}

impl Poisson {
    /// The stencil for an `nx × ny` grid whose cells are fluid where `fluid`, with outflow
    /// (zero pressure outside) on the sides `boundary` says.
    pub fn new(nx: usize, ny: usize, fluid: &[bool], boundary: &Boundary) -> Poisson {
        let mut poisson = Poisson {
            nx,
            ny,
            cells: vec![0; nx * ny],
            plain_rows: vec![false; ny],
            pure_neumann: !boundary.any_dirichlet(),
        };
        poisson.update_rows(|k| fluid[k], boundary, 0..ny);
        poisson
    }

    /// The stencil again where the cells of the rows `changed` may have changed (fluid where
    /// `fluid(k)`): those rows' cells and one row either side, and the plain rows one either
    /// side (a plain row's rows either side are fluid too).
    pub fn update_rows(
        &mut self,
        fluid: impl Fn(usize) -> bool,
        boundary: &Boundary,
        changed: std::ops::Range<usize>,
    ) {
        let (nx, ny) = (self.nx, self.ny);
        for j in changed.start.saturating_sub(1)..(changed.end + 1).min(ny) {
            self.stencil_cells(&fluid, boundary, j, 0..nx);
        }
        self.plain_rows_again(&fluid, changed);
    }

    /// [`Poisson::update_rows`] where only the cells `changed` may have changed: the stencil
    /// of those cells and of the cells beside them ([`Patch::around`]), and the plain rows one
    /// either side of their rows (a plain row's whole neighbourhood is fluid: its rows are
    /// looked at whole). Returns the cells whose stencil it set.
    pub fn update_cells(
        &mut self,
        fluid: impl Fn(usize) -> bool,
        boundary: &Boundary,
        changed: &Patch,
    ) -> Patch {
        let around = changed.around(self.nx, self.ny);
        for (j, columns) in &around.spans {
            self.stencil_cells(&fluid, boundary, *j, columns.clone());
        }
        // Block by block: the rows between far-apart changes are not looked at.
        for rows in changed.row_blocks() {
            self.plain_rows_again(&fluid, rows);
        }
        around
    }

    /// The stencil of the cells `columns` of row `j`, from the cells (fluid where `fluid(k)`).
    fn stencil_cells(
        &mut self,
        fluid: &impl Fn(usize) -> bool,
        boundary: &Boundary,
        j: usize,
        columns: std::ops::Range<usize>,
    ) {
        let (nx, ny) = (self.nx, self.ny);
        for i in columns {
            let k = j * nx + i;
            if !fluid(k) {
                self.cells[k] = 0;
                continue;
            }
            let mut bits = 0u8;
            let mut diagonal = 0u8;
            let mut side = |inside: bool, n: usize, bit: u8, side: usize| {
                if inside {
                    if fluid(n) {
                        bits |= bit;
                        diagonal += 1;
                    }
                } else if boundary.dirichlet(side) {
                    diagonal += 1;
                }
            };
            side(i > 0, k.wrapping_sub(1), LEFT_BIT, LEFT);
            side(i + 1 < nx, k + 1, RIGHT_BIT, RIGHT);
            side(j > 0, k.wrapping_sub(nx), BELOW_BIT, BOTTOM);
            side(j + 1 < ny, k + nx, ABOVE_BIT, TOP);
            self.cells[k] = bits | diagonal << DIAGONAL_SHIFT;
        }
    }

    /// The plain rows of the rows `changed` and one either side again (a row is plain when it
    /// and the rows either side of it are fluid: a changed row changes its neighbours' only).
    fn plain_rows_again(
        &mut self,
        fluid: &impl Fn(usize) -> bool,
        changed: std::ops::Range<usize>,
    ) {
        let (nx, ny) = (self.nx, self.ny);
        let all_fluid = |j: usize| (j * nx..(j + 1) * nx).all(fluid);
        // Each row's cells looked at once: from one row below the first set to one above the
        // last.
        let plain = changed.start.saturating_sub(1)..(changed.end + 1).min(ny);
        let looked = plain.start.saturating_sub(1)..(plain.end + 1).min(ny);
        let fluid_rows: Vec<bool> = looked.clone().map(all_fluid).collect();
        let row_fluid = |j: usize| fluid_rows[j - looked.start];
        for j in plain {
            self.plain_rows[j] =
                j > 0 && j + 1 < ny && row_fluid(j - 1) && row_fluid(j) && row_fluid(j + 1);
        }
    }

    /// Whether cell `k` is solved for (a fluid cell with a neighbour to exchange with).
    #[inline]
    pub fn solved(&self, k: usize) -> bool {
        self.cells[k] >> DIAGONAL_SHIFT != 0
    }

    /// Σ over fluid neighbours of (pₙ − p), with p = 0 beyond outflow sides, at cell `k`: the
    /// Laplacian times h².
    #[inline]
    pub fn laplacian(&self, p: &[f32], k: usize) -> f32 {
        // Σ (pₙ − p) term by term: differences of nearby values keep single precision's
        // digits where Σ pₙ − diagonal·p would cancel them.
        let cell = self.cells[k];
        let here = p[k];
        let mut sum = 0.0;
        let mut fluid = 0u8;
        for (bit, n) in [
            (LEFT_BIT, k.wrapping_sub(1)),
            (RIGHT_BIT, k + 1),
            (BELOW_BIT, k.wrapping_sub(self.nx)),
            (ABOVE_BIT, k + self.nx),
        ] {
            if cell & bit != 0 {
                sum += p[n] - here;
                fluid += 1;
            }
        }
        let outflow = (cell >> DIAGONAL_SHIFT) - fluid;
        sum - f32::from(outflow) * here
    }

    /// Row `j`'s neighbours in `p`: the rows below and above (empty beyond the box) and the
    /// row itself.
    #[inline]
    fn rows<'a>(&self, p: &'a [f32], j: usize) -> (&'a [f32], &'a [f32], &'a [f32]) {
        let nx = self.nx;
        let row = |j: usize| &p[j * nx..(j + 1) * nx];
        let below = if j > 0 { row(j - 1) } else { &[] };
        let above = if j + 1 < self.ny { row(j + 1) } else { &[] };
        (below, row(j), above)
    }

    /// One sweep of row `j` into `out`: each cell's (Σ fluid neighbours' p − h²b) / diagonal (0
    /// when the cell is not solved for), from the rows `below`, `here` and `above` of the last
    /// values (`h2b`: the row's h²·b). A plain row's inner cells take the five-point stencil in
    /// a plain loop over the slices (vectorised).
    #[inline]
    fn relax_row(
        &self,
        j: usize,
        (below, here, above): (&[f32], &[f32], &[f32]),
        h2b: &[f32],
        out: &mut [f32],
    ) {
        let nx = self.nx;
        let cells = &self.cells[j * nx..(j + 1) * nx];
        let relaxed = |i: usize| {
            let cell = cells[i];
            let mut sum = 0.0;
            if cell & LEFT_BIT != 0 {
                sum += here[i - 1];
            }
            if cell & RIGHT_BIT != 0 {
                sum += here[i + 1];
            }
            if cell & BELOW_BIT != 0 {
                sum += below[i];
            }
            if cell & ABOVE_BIT != 0 {
                sum += above[i];
            }
            (sum - h2b[i]) * INVERSE_DIAGONAL[usize::from(cell >> DIAGONAL_SHIFT)]
        };
        if self.plain_rows[j] && nx > 2 {
            out[0] = relaxed(0);
            out[nx - 1] = relaxed(nx - 1);
            let inner = 1..nx - 1;
            for ((((value, w), lo), hi), b) in out[inner.clone()]
                .iter_mut()
                .zip(here.windows(3))
                .zip(&below[inner.clone()])
                .zip(&above[inner.clone()])
                .zip(&h2b[inner])
            {
                *value = (w[0] + w[2] + lo + hi - b) * 0.25;
            }
        } else {
            for (i, value) in out.iter_mut().enumerate() {
                *value = relaxed(i);
            }
        }
    }

    /// One Jacobi sweep of Σₙ(pₙ − p) = h²·b: `out` from `p`, rows in parallel.
    pub fn jacobi(&self, p: &[f32], h2b: &[f32], out: &mut [f32]) {
        use rayon::prelude::*;
        let nx = self.nx;
        out.par_chunks_mut(nx)
            .zip(h2b.par_chunks(nx))
            .enumerate()
            .with_min_len(8)
            .for_each(|(j, (row, h2b))| self.relax_row(j, self.rows(p, j), h2b, row));
    }

    /// Two Jacobi sweeps, `out` from `p`, in one pass over memory: bands of rows in parallel,
    /// each sweeping its rows and the one beyond either edge into its part of `first` (sized
    /// here, kept between calls), then its rows again from there — the values of two
    /// [`Poisson::jacobi`] sweeps, bit for bit, with the grid read and written once.
    pub fn jacobi_twice(&self, p: &[f32], h2b: &[f32], first: &mut Vec<f32>, out: &mut [f32]) {
        use rayon::prelude::*;
        const BAND: usize = 32;
        let (nx, ny) = (self.nx, self.ny);
        let part = (BAND + 2) * nx;
        first.resize(ny.div_ceil(BAND) * part, 0.0);
        out.par_chunks_mut(BAND * nx)
            .zip(first.par_chunks_mut(part))
            .enumerate()
            .for_each(|(band, (rows, first))| {
                let (j0, j1) = (band * BAND, (band * BAND + BAND).min(ny));
                let (q0, q1) = (j0.saturating_sub(1), (j1 + 1).min(ny));
                for (j, row) in (q0..q1).zip(first.chunks_mut(nx)) {
                    self.relax_row(j, self.rows(p, j), &h2b[j * nx..(j + 1) * nx], row);
                }
                let first = &first[..];
                for (j, row) in (j0..j1).zip(rows.chunks_mut(nx)) {
                    let local = |j: usize| &first[(j - q0) * nx..(j - q0 + 1) * nx];
                    let below = if j > 0 { local(j - 1) } else { &[] };
                    let above = if j + 1 < ny { local(j + 1) } else { &[] };
                    self.relax_row(j, (below, local(j), above), &h2b[j * nx..(j + 1) * nx], row);
                }
            });
    }

    /// Root mean square over the solved cells of b − Laplacian(p)/h², in b's units. Rows in
    /// parallel; a plain row's inner cells (every neighbour fluid) in a plain loop over its
    /// slices (vectorised: `laplacian`'s operations, bit for bit), the squares summed in order.
    pub fn residual_rms(&self, p: &[f32], b: &[f32], h: f32) -> f64 {
        use rayon::prelude::*;
        let nx = self.nx;
        let weight = 1.0 / (h * h);
        let residual = |k: usize| b[k] - self.laplacian(p, k) * weight;
        let (sum, cells) = (0..self.ny)
            .into_par_iter()
            .with_min_len(8)
            .map_init(Vec::new, |r: &mut Vec<f32>, j| {
                let start = j * nx;
                if self.plain_rows[j] && nx > 2 {
                    r.resize(nx, 0.0);
                    r[0] = residual(start);
                    r[nx - 1] = residual(start + nx - 1);
                    let here = &p[start..start + nx];
                    let below = &p[start - nx + 1..start - 1];
                    let above = &p[start + nx + 1..start + 2 * nx - 1];
                    let inner = &b[start + 1..start + nx - 1];
                    for ((((r, w), lo), hi), b) in r[1..nx - 1]
                        .iter_mut()
                        .zip(here.windows(3))
                        .zip(below)
                        .zip(above)
                        .zip(inner)
                    {
                        let here = w[1];
                        let sum = 0.0 + (w[0] - here) + (w[2] - here) + (lo - here) + (hi - here);
                        *r = b - (sum - 0.0 * here) * weight;
                    }
                    let sum = r
                        .iter()
                        .fold(0.0f64, |sum, &r| sum + f64::from(r) * f64::from(r));
                    return (sum, nx);
                }
                let mut sum = 0.0f64;
                let mut cells = 0usize;
                for k in start..start + nx {
                    if !self.solved(k) {
                        continue;
                    }
                    let r = residual(k);
                    sum += f64::from(r) * f64::from(r);
                    cells += 1;
                }
                (sum, cells)
            })
            .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (sum / cells.max(1) as f64).sqrt()
    }
}
