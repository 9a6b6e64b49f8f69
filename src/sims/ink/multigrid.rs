//! A geometric multigrid V-cycle for ink's pressure equation Σₙ (pₙ − p)/h² = b over the fluid
//! cells (walls and solids: no flux), cell-centred: levels halve the grid while both sides stay
//! at least 4 cells; a coarse cell is fluid when any of its children is; two red-black
//! Gauss–Seidel sweeps before and after the coarse correction; restriction sums the fluid
//! children's residuals over four (a partly fluid coarse cell — beside a solid, or the last
//! column of an odd side — takes only its fluid children's share: their mean made the V-cycle
//! diverge there, `v_cycles_converge_on_odd_sides_around_a_disc`), prolongation interpolates
//! the coarse correction bilinearly (with zero pressure beyond outflow sides).
//!
//! Why: Jacobi (the original's solver) shrinks the slowest mode by cos(π/n) per sweep — 20
//! sweeps on 512² remove a third of the divergence — and over-relaxed SOR first amplifies the
//! residual (it grew ninefold in 10 sweeps on 64², enough to make a 20-sweep projection add
//! divergence and the flow blow up). A V-cycle costs about 5 sweeps' work and removes most of
//! the residual at every scale.

use super::boundary::{Boundary, Poisson, DIAGONAL_SHIFT, INVERSE_DIAGONAL};
use super::patch::Patch;
use rayon::prelude::*;
use std::ops::Range;

/// Levels of fewer cells are smoothed on the calling thread.
const PARALLEL_CELLS: usize = 16384;

/// One level.
pub(crate) struct Level {
    /// The stencil (neighbours, diagonal with outflow sides).
    pub(crate) poisson: Poisson,
    /// h², m².
    pub(crate) h2: f32,
    pub(crate) fluid: Vec<bool>,
    pub(crate) p: Vec<f32>,
    pub(crate) b: Vec<f32>,
    pub(crate) r: Vec<f32>,
    /// The red-black sweep's second buffer: a colour's pass writes every cell here from `p`
    /// (the colour's cells relaxed, the others copied), and the two swap.
    spare: Vec<f32>,
}

impl Level {
    fn new(nx: usize, ny: usize, h: f32, fluid: Vec<bool>, boundary: &Boundary) -> Level {
        Level {
            poisson: Poisson::new(nx, ny, &fluid, boundary),
            h2: h * h,
            fluid,
            p: vec![0.0; nx * ny],
            b: vec![0.0; nx * ny],
            r: vec![0.0; nx * ny],
            spare: vec![0.0; nx * ny],
        }
    }

    pub(crate) fn nx(&self) -> usize {
        self.poisson.nx
    }

    pub(crate) fn ny(&self) -> usize {
        self.poisson.ny
    }

    /// One red-black Gauss–Seidel sweep: colour 0 (i + j even), then colour 1, rows in
    /// parallel. A colour's cells read only the other colour's, which its pass leaves as they
    /// are, so a pass from `p` into `spare` (the other colour copied) is the in-place sweep bit
    /// for bit, with no cell read by one thread while another writes it.
    pub(crate) fn smooth(&mut self) {
        for colour in 0..2 {
            let (nx, ny, h2) = (self.nx(), self.ny(), self.h2);
            let (poisson, p, b) = (&self.poisson, &self.p, &self.b);
            let row = |(j, out): (usize, &mut [f32])| relax_row(poisson, p, b, h2, j, colour, out);
            // Small levels sweep on this thread: waking the pool costs more than their cells.
            if nx * ny < PARALLEL_CELLS {
                self.spare.chunks_mut(nx).enumerate().for_each(row);
            } else {
                self.spare
                    .par_chunks_mut(nx)
                    .enumerate()
                    .with_min_len(8)
                    .for_each(row);
            }
            std::mem::swap(&mut self.p, &mut self.spare);
        }
    }

    /// r = b − Σₙ (pₙ − p)/h² on the solved cells (0 elsewhere).
    pub(crate) fn residual(&mut self) {
        let nx = self.nx();
        let weight = 1.0 / self.h2;
        let (poisson, p, b) = (&self.poisson, &self.p, &self.b);
        self.r
            .par_chunks_mut(nx)
            .enumerate()
            .with_min_len(8)
            .for_each(|(j, row)| {
                for (i, r) in row.iter_mut().enumerate() {
                    let k = j * nx + i;
                    *r = if poisson.solved(k) {
                        b[k] - poisson.laplacian(p, k) * weight
                    } else {
                        0.0
                    };
                }
            });
    }
}

/// Row `j` of one colour's pass of the red-black sweep into `out`: a cell of `colour`
/// ((i + j) % 2) that is solved for takes (Σ fluid neighbours' p − h²b) / diagonal, the sum
/// in the order left, right, below, above from 0; every other cell keeps its p. A plain row's
/// inner cells (every neighbour fluid) in a plain loop over the row's slices (vectorised; the
/// same operations: the missing neighbours' skipped additions never occur there).
fn relax_row(
    poisson: &Poisson,
    p: &[f32],
    b: &[f32],
    h2: f32,
    j: usize,
    colour: usize,
    out: &mut [f32],
) {
    use super::boundary::{ABOVE_BIT, BELOW_BIT, LEFT_BIT, RIGHT_BIT};
    let (nx, ny) = (poisson.nx, poisson.ny);
    let start = j * nx;
    let here = &p[start..start + nx];
    let below = if j > 0 { &p[start - nx..start] } else { &[] };
    let above = if j + 1 < ny {
        &p[start + nx..start + 2 * nx]
    } else {
        &[]
    };
    let (b, cells) = (&b[start..start + nx], &poisson.cells[start..start + nx]);
    let relaxed = |i: usize| {
        let cell = cells[i];
        let inverse = INVERSE_DIAGONAL[usize::from(cell >> DIAGONAL_SHIFT)];
        if inverse == 0.0 {
            return here[i];
        }
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
        (sum - h2 * b[i]) * inverse
    };
    // The colour's first cell in the row.
    let first = (j + colour) % 2;
    if poisson.plain_rows[j] && nx > 2 {
        out[0] = if first == 0 { relaxed(0) } else { here[0] };
        out[nx - 1] = if (nx - 1) % 2 == first {
            relaxed(nx - 1)
        } else {
            here[nx - 1]
        };
        let inner = 1..nx - 1;
        // Every inner cell relaxed (the loop vectorises), then the other colour's put back.
        for ((((value, w), lo), hi), b) in out[inner.clone()]
            .iter_mut()
            .zip(here.windows(3))
            .zip(&below[inner.clone()])
            .zip(&above[inner.clone()])
            .zip(&b[inner])
        {
            // `0.0 +` as the scalar sum starts: it turns a −0 first term into +0.
            *value = (0.0 + w[0] + w[2] + lo + hi - h2 * b) * 0.25;
        }
        for i in (1 + first..nx - 1).step_by(2) {
            out[i] = here[i];
        }
    } else {
        out.copy_from_slice(here);
        for i in (first..nx).step_by(2) {
            out[i] = relaxed(i);
        }
    }
}

/// Subtracts the mean over the fluid cells: the pure Neumann problem determines p up to a
/// constant and needs a right-hand side of zero mean on every level.
pub(crate) fn remove_mean(values: &mut [f32], fluid: &[bool]) {
    let (mut sum, mut count) = (0.0f64, 0usize);
    for (v, &f) in values.iter().zip(fluid) {
        if f {
            sum += f64::from(*v);
            count += 1;
        }
    }
    let mean = (sum / count.max(1) as f64) as f32;
    for (v, &f) in values.iter_mut().zip(fluid) {
        if f {
            *v -= mean;
        }
    }
}

/// Cycles of the coarsest level's sweeps: its few cells converge in them.
pub const COARSEST_SWEEPS: usize = 40;
/// Red-black sweeps before and after the coarse correction.
pub const SMOOTHING_SWEEPS: usize = 2;

/// The levels' shapes for an `nx × ny` grid of cell size `h` whose cells are fluid where
/// `fluid`: (cells along x and y, cell size, fluid cells), finest first. A level halves the
/// one above (rounding up) while both its sides stay at least 4 cells; a coarse cell is fluid
/// when any of its children is.
pub fn level_shapes(
    nx: usize,
    ny: usize,
    h: f32,
    fluid: Vec<bool>,
) -> Vec<(usize, usize, f32, Vec<bool>)> {
    let mut levels = vec![(nx, ny, h, fluid)];
    loop {
        let (fx, fy, h, fine) = levels.last().expect("a level");
        let (fx, fy, h) = (*fx, *fy, *h);
        if fx < 8 || fy < 8 {
            break;
        }
        let (cx, cy) = (fx.div_ceil(2), fy.div_ceil(2));
        let mut fluid = vec![false; cx * cy];
        coarsen_cells(fine, (fx, fy), &mut fluid, cx, &Patch::whole(fx, fy));
        levels.push((cx, cy, h * 2.0, fluid));
    }
    levels
}

/// The coarse level's fluid cells over the fine level's cells `patch` (`fine`: fx × fy cells;
/// `coarse`: cx wide), set again: a coarse cell is fluid when any of its children is. Returns
/// the coarse cells set ([`Patch::coarse`]).
pub fn coarsen_cells(
    fine: &[bool],
    (fx, fy): (usize, usize),
    coarse: &mut [bool],
    cx: usize,
    patch: &Patch,
) -> Patch {
    let set = patch.coarse();
    for (cj, columns) in &set.spans {
        // An odd side's last coarse cell has one child along it: taken twice.
        let (j0, j1) = (2 * cj, (2 * cj + 1).min(fy - 1));
        let (low, high) = (&fine[j0 * fx..(j0 + 1) * fx], &fine[j1 * fx..(j1 + 1) * fx]);
        let out = &mut coarse[cj * cx..(cj + 1) * cx];
        for ci in columns.clone() {
            let (i0, i1) = (2 * ci, (2 * ci + 1).min(fx - 1));
            out[ci] = low[i0] | low[i1] | high[i0] | high[i1];
        }
    }
    set
}

/// `pressure_mg_coarsen`: after the grid's cells changed in the cells `patch` (`solid`:
/// the whole grid's solid cells), the finest level's fluid flags and stencil there, and every
/// coarser level's flags under it ([`coarsen_cells`]) and its stencil around them
/// ([`Poisson::update_cells`]), set again: the hierarchy built anew from the grid's cells (tests
/// `a_moved_disc_updates_the_hierarchy_by_rows`,
/// `a_hierarchy_set_by_patches_over_many_substeps_is_the_one_built_anew`). `levels`: each
/// level's fluid flags and stencil, finest first — the CPU's [`Multigrid`] (whole rows) and
/// the CUDA solver's host copy of its masks (the runs of cells that changed) alike;
/// `finest_stencil` false leaves the finest level's stencil as it was (the CUDA solver's copy:
/// the GPU derives that level's stencil itself). Returns, per level, the cells whose flags or
/// stencil may have changed (the cells under the patch and one either side).
pub fn pressure_mg_coarsen(
    levels: &mut [(&mut Vec<bool>, &mut Poisson)],
    solid: &[bool],
    boundary: &Boundary,
    patch: Patch,
    finest_stencil: bool,
) -> Vec<Patch> {
    let (fluid, poisson) = &mut levels[0];
    let nx = poisson.nx;
    for (_, cells) in patch.row_cells(nx) {
        for (fluid, &solid) in fluid[cells.clone()].iter_mut().zip(&solid[cells]) {
            *fluid = !solid;
        }
    }
    let fluid = &**fluid;
    let around = if finest_stencil {
        poisson.update_cells(|k| fluid[k], boundary, &patch)
    } else {
        patch.around(nx, poisson.ny)
    };
    let mut spans = vec![around];
    let mut changed = patch;
    for l in 1..levels.len() {
        let (fine, coarse) = levels.split_at_mut(l);
        let (fine_fluid, fine_poisson) = &fine[l - 1];
        let (fluid, poisson) = &mut coarse[0];
        let fine_shape = (fine_poisson.nx, fine_poisson.ny);
        changed = coarsen_cells(fine_fluid, fine_shape, fluid, poisson.nx, &changed);
        let fluid = &**fluid;
        spans.push(poisson.update_cells(|k| fluid[k], boundary, &changed));
    }
    spans
}

/// The hierarchy for one grid.
pub struct Multigrid {
    pub(crate) levels: Vec<Level>,
    /// Which sides (left, right, bottom, top) are outflows: zero pressure beyond them.
    pub(crate) dirichlet: [bool; 4],
}

impl Multigrid {
    /// Levels for an `nx × ny` grid of cell size `h` whose cells are fluid where `fluid`, in a
    /// box whose sides are `boundary` ([`level_shapes`]).
    pub fn new(nx: usize, ny: usize, h: f32, fluid: Vec<bool>, boundary: &Boundary) -> Multigrid {
        let levels = level_shapes(nx, ny, h, fluid)
            .into_iter()
            .map(|(nx, ny, h, fluid)| Level::new(nx, ny, h, fluid, boundary))
            .collect();
        Multigrid {
            levels,
            dirichlet: [0, 1, 2, 3].map(|side| boundary.dirichlet(side)),
        }
    }

    /// The masks again after the grid's cells changed in the runs of rows `rows` (in order,
    /// apart; `solid`: the whole grid's solid cells), those rows only, every run at once
    /// ([`pressure_mg_coarsen`] once): the hierarchy [`Multigrid::new`] would build from the
    /// grid's fluid cells.
    pub fn update_rows(&mut self, solid: &[bool], boundary: &Boundary, rows: &[Range<usize>]) {
        let columns = 0..self.levels[0].nx();
        let mut levels: Vec<_> = self
            .levels
            .iter_mut()
            .map(|l| (&mut l.fluid, &mut l.poisson))
            .collect();
        let spans = (rows.iter().cloned().flatten()).map(|j| (j, columns.clone()));
        let patch = Patch {
            spans: spans.collect(),
        };
        pressure_mg_coarsen(&mut levels, solid, boundary, patch, true);
    }

    /// Runs `cycles` V-cycles on Σₙ (pₙ − p)/h² = b from the initial `p` and leaves the result
    /// in `p`.
    pub fn solve(&mut self, b: &[f32], p: &mut [f32], cycles: u32) {
        let finest = &mut self.levels[0];
        finest.b.copy_from_slice(b);
        let pure_neumann = finest.poisson.pure_neumann;
        if pure_neumann {
            remove_mean(&mut finest.b, &finest.fluid);
        }
        finest.p.copy_from_slice(p);
        for _ in 0..cycles {
            self.v_cycle(0);
        }
        let finest = &mut self.levels[0];
        if pure_neumann {
            remove_mean(&mut finest.p, &finest.fluid);
        }
        p.copy_from_slice(&finest.p);
    }

    /// One V-cycle from level `level` down (its b and p set).
    pub(crate) fn v_cycle(&mut self, level: usize) {
        if level + 1 == self.levels.len() {
            for _ in 0..COARSEST_SWEEPS {
                self.levels[level].smooth();
            }
            return;
        }
        for _ in 0..SMOOTHING_SWEEPS {
            self.levels[level].smooth();
        }
        self.levels[level].residual();
        self.restrict(level);
        self.v_cycle(level + 1);
        self.prolong(level);
        for _ in 0..SMOOTHING_SWEEPS {
            self.levels[level].smooth();
        }
    }

    /// Level `level + 1`'s b: the sum of the fluid children's residuals of level `level` over
    /// four (a coarse cell's source is its fluid children's; with the mean removed in a closed
    /// box), and its p zero.
    pub(crate) fn restrict(&mut self, level: usize) {
        let (fine_levels, coarse_levels) = self.levels.split_at_mut(level + 1);
        let (fine, coarse) = (&fine_levels[level], &mut coarse_levels[0]);
        let (fx, fy, cx) = (fine.nx(), fine.ny(), coarse.nx());
        coarse
            .b
            .par_chunks_mut(cx)
            .enumerate()
            .for_each(|(cj, row)| {
                for (ci, b) in row.iter_mut().enumerate() {
                    let (mut sum, mut count) = (0.0f32, 0.0f32);
                    for j in 2 * cj..(2 * cj + 2).min(fy) {
                        for i in 2 * ci..(2 * ci + 2).min(fx) {
                            let k = j * fx + i;
                            if fine.fluid[k] {
                                sum += fine.r[k];
                                count += 1.0;
                            }
                        }
                    }
                    *b = if count > 0.0 { sum * 0.25 } else { 0.0 };
                }
            });
        if coarse.poisson.pure_neumann {
            remove_mean(&mut coarse.b, &coarse.fluid);
        }
        coarse.p.iter_mut().for_each(|p| *p = 0.0);
    }

    /// Level `level`'s p plus the correction level `level + 1` solved for, interpolated.
    pub(crate) fn prolong(&mut self, level: usize) {
        let (fine_levels, coarse_levels) = self.levels.split_at_mut(level + 1);
        let (fine, coarse) = (&mut fine_levels[level], &coarse_levels[0]);
        let (fx, cx) = (fine.nx(), coarse.nx());
        let fluid = &fine.fluid;
        let cy = coarse.ny();
        let dirichlet = self.dirichlet;
        // Bilinear prolongation: a fine cell takes 9/16 of its coarse cell, 3/16 of each of
        // the two coarse cells it is nearest to along x and y, 1/16 of the diagonal one.
        // Beyond a wall or a solid the coarse cell's own value stands in (no flux); beyond an
        // outflow side its mirror image −c (zero at the side).
        let value = |ci: isize, cj: isize, own: f32| -> f32 {
            if ci < 0 {
                return if dirichlet[0] { -own } else { own };
            }
            if ci >= cx as isize {
                return if dirichlet[1] { -own } else { own };
            }
            if cj < 0 {
                return if dirichlet[2] { -own } else { own };
            }
            if cj >= cy as isize {
                return if dirichlet[3] { -own } else { own };
            }
            let k = cj as usize * cx + ci as usize;
            if coarse.poisson.solved(k) {
                coarse.p[k]
            } else {
                own
            }
        };
        fine.p.par_chunks_mut(fx).enumerate().for_each(|(j, row)| {
            let cj = (j / 2) as isize;
            let dj = if j % 2 == 0 { -1 } else { 1 };
            for (i, p) in row.iter_mut().enumerate() {
                if fluid[j * fx + i] {
                    let ci = (i / 2) as isize;
                    let di = if i % 2 == 0 { -1 } else { 1 };
                    let own = coarse.p[cj as usize * cx + ci as usize];
                    *p += 0.5625 * own
                        + 0.1875 * (value(ci + di, cj, own) + value(ci, cj + dj, own))
                        + 0.0625 * value(ci + di, cj + dj, own);
                }
            }
        });
    }
}

#[cfg(test)]
#[path = "multigrid_tests.rs"]
mod tests;
