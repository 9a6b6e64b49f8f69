//! A geometric multigrid-preconditioned conjugate gradient solver (MGPCG, McAdams, Sifakis &
//! Teran 2010) for −∇²φ = b on a cell-centred grid whose cells are fluid (unknowns), air
//! (φ = 0, Dirichlet) or solid (no flux, Neumann); the grid's outer faces are solid walls.
//!
//! Levels halve the grid until it has a few cells. A coarse cell is air when any of its
//! children is, else fluid when any is, else solid (the coarse domain never reaches past the
//! fine one's free surface). The V-cycle smooths with two red-black Gauss–Seidel sweeps before
//! and after the coarse-grid correction; restriction averages the 8 children, prolongation is
//! trilinear. One V-cycle reduces the residual by about 2× on free-surface domains (coarse cells
//! overhang the walls of odd-sized grids, and rediscretised coarse levels see the free surface
//! coarsely); as the preconditioner of a (flexible, Polak–Ribière) conjugate gradient each
//! iteration gains about 10×. (Extra sweeps near the free surface, as McAdams et al. do, gained
//! nothing measurable in the simulations here and were dropped.)
//!
//! `kernels/coarse.cuh` (`mg_*`, `pcg_*`) runs the same cycle on the GPU, cell by cell
//! (red-black ordering makes every sweep independent of the order cells are visited in).

/// What a cell of a level is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CellKind {
    /// Outside the liquid: φ = 0.
    Air = 0,
    /// An unknown.
    Fluid = 1,
    /// Inside an obstacle: no flux through its faces.
    Solid = 2,
}

/// Gauss–Seidel sweeps before and after the coarse-grid correction of a V-cycle.
pub const SMOOTHING_SWEEPS: usize = 2;
/// The nearest the free surface may lie to a fluid cell's centre, as a fraction of the way to
/// the air cell's: keeps the ghost-fluid weight w/θ bounded.
pub const MIN_INTERFACE: f32 = 0.1;

/// Sweeps that solve the coarsest level (a few cells).
pub const COARSEST_SWEEPS: usize = 40;

/// One level of the hierarchy.
#[derive(Clone, Debug)]
pub struct Level {
    /// Cells per axis, x fastest.
    pub dims: [usize; 3],
    /// Edge lengths of a cell (per axis: cells tile the grid's box exactly).
    pub cell: [f32; 3],
    /// 1 / cell², per axis: the weight of a face in the Laplacian.
    weight: [f32; 3],
    /// Kind of every cell.
    pub kind: Vec<CellKind>,
    /// The finest level's fluid fraction per cell (empty on coarser levels): places the free
    /// surface between a fluid and an air cell (`Level::interface`).
    pub fraction: Vec<f32>,
    /// The unknowns φ (0 outside fluid cells).
    pub x: Vec<f32>,
    /// Right-hand side b.
    pub b: Vec<f32>,
    /// Residual b − Aφ.
    pub r: Vec<f32>,
}

impl Level {
    fn new(dims: [usize; 3], cell: [f32; 3]) -> Self {
        let n = dims.iter().product();
        Self {
            dims,
            cell,
            weight: cell.map(|h| 1.0 / (h * h)),
            kind: vec![CellKind::Air; n],
            fraction: Vec::new(),
            x: vec![0.0; n],
            b: vec![0.0; n],
            r: vec![0.0; n],
        }
    }

    /// Linear index of cell (i, j, k).
    #[inline(always)]
    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// For cell (i, j, k): Σ w φ over fluid face neighbours in `x`, and the diagonal Σ w over
    /// fluid and air face neighbours (solid ones and the grid's outer faces carry no flux), with
    /// w = 1 / h² of the face's axis.
    #[inline(always)]
    fn stencil(&self, x: &[f32], i: usize, j: usize, k: usize) -> (f32, f32) {
        let c = [i, j, k];
        let (mut sum, mut diagonal) = (0.0, 0.0);
        for axis in 0..3 {
            for up in [false, true] {
                let q = if up {
                    c[axis] + 1
                } else {
                    c[axis].wrapping_sub(1)
                };
                if q >= self.dims[axis] {
                    continue;
                }
                let mut n = c;
                n[axis] = q;
                let neighbour = self.index(n[0], n[1], n[2]);
                let w = self.weight[axis];
                match self.kind[neighbour] {
                    CellKind::Fluid => {
                        sum += w * x[neighbour];
                        diagonal += w;
                    }
                    CellKind::Air => diagonal += w / self.interface(self.index(i, j, k), neighbour),
                    CellKind::Solid => {}
                }
            }
        }
        (sum, diagonal)
    }

    /// Where the free surface lies between fluid cell `fluid` and air cell `air`, as a fraction
    /// θ of the distance between their centres (the ghost-fluid method, Gibou et al. 2002; φ = 0
    /// there, so the face's weight is w/θ): reading the fluid fractions as fill levels, from the
    /// fluid cell's side, θ = (f_fluid − ½) + f_air. Exact for a surface across the face's
    /// direction: a full cell under a quarter-filled one puts the surface ¾ of the way up.
    /// θ = 1 (the air cell's centre) without fractions.
    #[inline(always)]
    pub fn interface(&self, fluid: usize, air: usize) -> f32 {
        if self.fraction.is_empty() {
            return 1.0;
        }
        (self.fraction[fluid] - 0.5 + self.fraction[air]).clamp(MIN_INTERFACE, 1.0)
    }

    /// Red-black Gauss–Seidel sweeps over the fluid cells.
    fn smooth(&mut self, sweeps: usize) {
        let [nx, ny, nz] = self.dims;
        for _ in 0..sweeps {
            for colour in 0..2 {
                for k in 0..nz {
                    for j in 0..ny {
                        let start = (colour + j + k) % 2;
                        for i in (start..nx).step_by(2) {
                            let c = self.index(i, j, k);
                            if self.kind[c] != CellKind::Fluid {
                                continue;
                            }
                            let (sum, diagonal) = self.stencil(&self.x, i, j, k);
                            if diagonal > 0.0 {
                                self.x[c] = (sum + self.b[c]) / diagonal;
                            }
                        }
                    }
                }
            }
        }
    }

    /// y = A x over the fluid cells (0 elsewhere).
    fn apply(&self, x: &[f32], y: &mut [f32]) {
        let [nx, ny, nz] = self.dims;
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let c = self.index(i, j, k);
                    y[c] = if self.kind[c] == CellKind::Fluid {
                        let (sum, diagonal) = self.stencil(x, i, j, k);
                        diagonal * x[c] - sum
                    } else {
                        0.0
                    };
                }
            }
        }
    }

    /// r = b − A x.
    fn residual(&mut self) {
        let mut r = std::mem::take(&mut self.r);
        self.apply(&self.x, &mut r);
        for (r, b) in r.iter_mut().zip(&self.b) {
            *r = b - *r;
        }
        self.r = r;
    }
}

/// The hierarchy over a grid.
#[derive(Clone, Debug)]
pub struct Multigrid {
    /// Finest level first.
    pub levels: Vec<Level>,
    z: Vec<f32>,
    p: Vec<f32>,
    q: Vec<f32>,
    r_previous: Vec<f32>,
}

impl Multigrid {
    /// The cell counts and edges of the levels over `dims` cells of edges `cell`: halving
    /// (rounding up) until every axis has at most 2 cells or the level has at most 8.
    pub fn shapes(dims: [usize; 3], cell: [f32; 3]) -> Vec<([usize; 3], [f32; 3])> {
        let mut shapes = vec![(dims, cell)];
        loop {
            let (dims, cell) = shapes[shapes.len() - 1];
            if dims.iter().all(|&d| d <= 2) || dims.iter().product::<usize>() <= 8 {
                return shapes;
            }
            shapes.push((dims.map(|d| d.div_ceil(2)), cell.map(|h| h * 2.0)));
        }
    }

    /// Levels over `dims` cells of edges `cell` (see [`Multigrid::shapes`]).
    pub fn new(dims: [usize; 3], cell: [f32; 3]) -> Self {
        let levels: Vec<Level> = Self::shapes(dims, cell)
            .into_iter()
            .map(|(dims, cell)| Level::new(dims, cell))
            .collect();
        let n = levels[0].x.len();
        Self {
            levels,
            z: vec![0.0; n],
            p: vec![0.0; n],
            q: vec![0.0; n],
            r_previous: vec![0.0; n],
        }
    }

    /// Derives every coarser level's cell kinds from the finest level's (set by the caller).
    pub fn coarsen_kinds(&mut self) {
        for l in 1..self.levels.len() {
            let (fine, coarse) = self.levels.split_at_mut(l);
            let (fine, coarse) = (&fine[l - 1], &mut coarse[0]);
            let [nx, ny, nz] = coarse.dims;
            for k in 0..nz {
                for j in 0..ny {
                    for i in 0..nx {
                        let (mut air, mut fluid) = (false, false);
                        for child in children(fine, i, j, k) {
                            match fine.kind[child] {
                                CellKind::Air => air = true,
                                CellKind::Fluid => fluid = true,
                                CellKind::Solid => {}
                            }
                        }
                        let c = coarse.index(i, j, k);
                        coarse.kind[c] = if air {
                            CellKind::Air
                        } else if fluid {
                            CellKind::Fluid
                        } else {
                            CellKind::Solid
                        };
                    }
                }
            }
        }
    }

    /// One V-cycle on level `l` for its `b`, improving its `x`.
    fn v_cycle(&mut self, l: usize) {
        if l + 1 == self.levels.len() {
            self.levels[l].smooth(COARSEST_SWEEPS);
            return;
        }
        self.levels[l].smooth(SMOOTHING_SWEEPS);
        self.levels[l].residual();
        {
            let (fine, coarse) = self.levels.split_at_mut(l + 1);
            restrict(&fine[l], &mut coarse[0]);
        }
        self.v_cycle(l + 1);
        {
            let (fine, coarse) = self.levels.split_at_mut(l + 1);
            prolongate(&coarse[0], &mut fine[l]);
        }
        self.levels[l].smooth(SMOOTHING_SWEEPS);
    }

    /// z = M⁻¹ r: one V-cycle from zero.
    fn precondition(&mut self, r: &[f32], z: &mut [f32]) {
        let finest = &mut self.levels[0];
        finest.b.copy_from_slice(r);
        finest.x.fill(0.0);
        self.v_cycle(0);
        z.copy_from_slice(&self.levels[0].x);
    }

    /// Solves A x = b on the finest level (kinds set, [`Multigrid::coarsen_kinds`] called),
    /// starting from `x` (zeroed outside fluid cells), with `iterations` conjugate gradient
    /// iterations after the first preconditioned step. Returns the largest |residual| over the
    /// fluid cells afterwards.
    pub fn solve(&mut self, b: &[f32], x: &mut [f32], iterations: usize) -> f32 {
        let fluid: Vec<bool> = self.levels[0]
            .kind
            .iter()
            .map(|&k| k == CellKind::Fluid)
            .collect();
        for (x, &f) in x.iter_mut().zip(&fluid) {
            if !f {
                *x = 0.0;
            }
        }
        let mut r = vec![0.0; x.len()];
        self.levels[0].apply(x, &mut r);
        for ((r, &b), &f) in r.iter_mut().zip(b).zip(&fluid) {
            *r = if f { b - *r } else { 0.0 };
        }
        let (mut z, mut p, mut q, mut r_previous) = (
            std::mem::take(&mut self.z),
            std::mem::take(&mut self.p),
            std::mem::take(&mut self.q),
            std::mem::take(&mut self.r_previous),
        );
        self.precondition(&r, &mut z);
        p.copy_from_slice(&z);
        let mut rz = dot(&r, &z);
        for iteration in 0..=iterations {
            self.levels[0].apply(&p, &mut q);
            let pq = dot(&p, &q);
            if pq <= 0.0 || rz <= 0.0 {
                break;
            }
            let alpha = (rz / pq) as f32;
            r_previous.copy_from_slice(&r);
            for c in 0..x.len() {
                x[c] += alpha * p[c];
                r[c] -= alpha * q[c];
            }
            if iteration == iterations {
                break;
            }
            self.precondition(&r, &mut z);
            // Polak–Ribière: β = z·(r − r_previous) / (z_previous·r_previous), robust to the
            // V-cycle not being exactly symmetric.
            let beta = (dot_difference(&z, &r, &r_previous) / rz).max(0.0) as f32;
            rz = dot(&r, &z);
            for c in 0..p.len() {
                p[c] = z[c] + beta * p[c];
            }
        }
        (self.z, self.p, self.q, self.r_previous) = (z, p, q, r_previous);
        r.iter().fold(0.0f32, |m, &v| m.max(v.abs()))
    }
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(&a, &b)| a as f64 * b as f64).sum()
}

fn dot_difference(z: &[f32], r: &[f32], r_previous: &[f32]) -> f64 {
    z.iter()
        .zip(r.iter().zip(r_previous))
        .map(|(&z, (&r, &rp))| z as f64 * (r as f64 - rp as f64))
        .sum()
}

/// The (up to 8) children of coarse cell (i, j, k) in `fine`.
fn children(fine: &Level, i: usize, j: usize, k: usize) -> impl Iterator<Item = usize> + '_ {
    (0..8).filter_map(move |n| {
        let (x, y, z) = (2 * i + (n & 1), 2 * j + ((n >> 1) & 1), 2 * k + (n >> 2));
        (x < fine.dims[0] && y < fine.dims[1] && z < fine.dims[2]).then(|| fine.index(x, y, z))
    })
}

/// Coarse b = the mean of the fine residuals of its children (over all 8 child slots), x = 0.
fn restrict(fine: &Level, coarse: &mut Level) {
    let [nx, ny, nz] = coarse.dims;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c = coarse.index(i, j, k);
                coarse.x[c] = 0.0;
                coarse.b[c] = if coarse.kind[c] == CellKind::Fluid {
                    children(fine, i, j, k).map(|f| fine.r[f]).sum::<f32>() * 0.125
                } else {
                    0.0
                };
            }
        }
    }
}

/// Fine x += the coarse correction, interpolated trilinearly between coarse cell centres: per
/// axis ¾ of the parent and ¼ of the parent's neighbour on the child's side. A neighbour that
/// is air contributes 0; one that is solid or beyond the grid contributes the parent's value.
fn prolongate(coarse: &Level, fine: &mut Level) {
    let [nx, ny, nz] = fine.dims;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c = fine.index(i, j, k);
                if fine.kind[c] != CellKind::Fluid {
                    continue;
                }
                let child = [i, j, k];
                let parent = [i / 2, j / 2, k / 2];
                let own = coarse.x[coarse.index(parent[0], parent[1], parent[2])];
                let mut value = 0.0;
                for n in 0..8usize {
                    let mut weight = 1.0;
                    let mut q = parent;
                    let mut beyond = false;
                    for axis in 0..3 {
                        if (n >> axis) & 1 == 1 {
                            weight *= 0.25;
                            let step = if child[axis] % 2 == 0 {
                                q[axis].wrapping_sub(1)
                            } else {
                                q[axis] + 1
                            };
                            if step >= coarse.dims[axis] {
                                beyond = true;
                            } else {
                                q[axis] = step;
                            }
                        } else {
                            weight *= 0.75;
                        }
                    }
                    let v = if beyond {
                        own
                    } else {
                        let neighbour = coarse.index(q[0], q[1], q[2]);
                        match coarse.kind[neighbour] {
                            CellKind::Fluid => coarse.x[neighbour],
                            CellKind::Air => 0.0,
                            CellKind::Solid => own,
                        }
                    };
                    value += weight * v;
                }
                fine.x[c] += value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tank of `dims` cells filled to `depth` cells (air above), b = 1 in the bottom layer
    /// (the compression one time step of gravity leaves there) plus a rough field.
    fn tank(dims: [usize; 3], depth: usize) -> (Multigrid, Vec<f32>) {
        let mut mg = Multigrid::new(dims, [0.02; 3]);
        let finest = &mut mg.levels[0];
        let mut b = vec![0.0; finest.x.len()];
        for k in 0..dims[2] {
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let c = finest.index(i, j, k);
                    finest.kind[c] = if j < depth {
                        CellKind::Fluid
                    } else {
                        CellKind::Air
                    };
                    if j < depth {
                        b[c] = if j == 0 {
                            1.0
                        } else {
                            0.01 * ((i * 7 + j * 3 + k * 5) % 11) as f32
                        };
                    }
                }
            }
        }
        mg.coarsen_kinds();
        (mg, b)
    }

    fn max_abs(v: &[f32]) -> f32 {
        v.iter().fold(0.0, |m, &x| m.max(x.abs()))
    }

    #[test]
    fn three_cg_iterations_reduce_the_residual_twentyfold_on_tanks_of_any_shape() {
        for (dims, depth) in [
            ([20, 30, 10], 15),
            ([10, 75, 5], 50),
            ([40, 25, 15], 20),
            ([8, 64, 4], 42),
            ([33, 33, 33], 20),
        ] {
            let (mut mg, b) = tank(dims, depth);
            let mut x = vec![0.0; b.len()];
            // From x = 0: grids of even size converge fastest (below 2e-3 after 3 iterations); odd sizes
            // leave coarse cells overhanging the walls (worst here: 10 × 75 × 5, 3.4e-2).
            let residual = mg.solve(&b, &mut x, 3);
            let ratio = residual / max_abs(&b);
            assert!(ratio < 0.05, "{dims:?}: residual ratio {ratio}");
            // More iterations keep converging.
            x.fill(0.0);
            let residual = mg.solve(&b, &mut x, 6);
            assert!(residual / max_abs(&b) < 1e-3, "{dims:?}");
        }
    }

    #[test]
    fn a_warm_start_from_the_last_solution_finishes_it() {
        // Two iterations from zero leave the residual of the worst shape here at a few 1e-2;
        // two more from that solution (as the next time step starts) bring it near 1e-3.
        let (mut mg, b) = tank([10, 75, 5], 50);
        let mut x = vec![0.0; b.len()];
        let cold = mg.solve(&b, &mut x, 2);
        let warm = mg.solve(&b, &mut x, 2);
        assert!(warm < 0.1 * cold, "{warm} vs {cold}");
    }

    #[test]
    fn the_solution_is_the_hydrostatic_profile() {
        // Unit source in the bottom layer of a column of n fluid cells under air: the flux
        // through every face above is 1·h (all of the source), so φ falls linearly to the
        // surface, by h² per cell, from n·h² at the bottom (the air cell's centre is φ = 0).
        let (n, h) = (30usize, 0.02f32);
        let mut mg = Multigrid::new([4, n + 5, 3], [h; 3]);
        let finest = &mut mg.levels[0];
        let mut b = vec![0.0; finest.x.len()];
        for k in 0..3 {
            for j in 0..n + 5 {
                for i in 0..4 {
                    let c = finest.index(i, j, k);
                    finest.kind[c] = if j < n {
                        CellKind::Fluid
                    } else {
                        CellKind::Air
                    };
                    if j == 0 {
                        b[c] = 1.0;
                    }
                }
            }
        }
        mg.coarsen_kinds();
        let mut x = vec![0.0; b.len()];
        mg.solve(&b, &mut x, 8);
        let finest = &mg.levels[0];
        for j in 0..n {
            let expected = (n - j) as f32 * h * h;
            let got = x[finest.index(1, j, 1)];
            assert!(
                (got / expected - 1.0).abs() < 1e-3,
                "cell {j}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn solid_cells_block_the_flux() {
        // A tank with a solid slab across it: the fluid sealed below it gets no source, and
        // whatever φ the coarse levels (which see through a one-cell slab) leave there must be
        // uniform, giving no displacement (−∇φ = 0).
        let (mut mg, b) = tank([6, 20, 6], 15);
        let mut x = vec![0.0; b.len()];
        mg.solve(&b, &mut x, 4);
        let open = x[mg.levels[0].index(3, 0, 3)];
        let finest = &mut mg.levels[0];
        for k in 0..6 {
            for i in 0..6 {
                let c = finest.index(i, 7, k);
                finest.kind[c] = CellKind::Solid;
            }
        }
        let mut b2 = b.clone();
        // Only the cells above the slab keep a source, so the system stays solvable.
        for k in 0..6 {
            for j in 0..8 {
                for i in 0..6 {
                    b2[finest.index(i, j, k)] = 0.0;
                }
            }
        }
        mg.coarsen_kinds();
        x.fill(0.0);
        mg.solve(&b2, &mut x, 4);
        assert!(x.iter().all(|v| v.is_finite()));
        let finest = &mg.levels[0];
        let below: Vec<f32> = (0..7)
            .flat_map(|j| (0..6).flat_map(move |k| (0..6).map(move |i| (i, j, k))))
            .map(|(i, j, k)| x[finest.index(i, j, k)])
            .collect();
        let spread = below.iter().fold(f32::MIN, |m, &v| m.max(v))
            - below.iter().fold(f32::MAX, |m, &v| m.min(v));
        assert!(
            spread < 1e-3 * open,
            "φ varies by {spread} below the slab ({open} above)"
        );
    }
}
