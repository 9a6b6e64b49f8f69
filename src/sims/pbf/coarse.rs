//! The coarse-grid correction: the density constraint's long wavelengths, solved once per step
//! on a grid with as many cells as the neighbour grid, each a little smaller than h so that they
//! tile the container exactly (its walls are the grid's faces).
//!
//! Jacobi PBF iterations move information about 2h per iteration, so a deep column's
//! hydrostatic pressure, the longest wavelength of all, is out of their reach: without help the
//! fluid compresses until the compression itself holds it up (19 % at 30 layers at the default
//! 4 iterations × 2 substeps), and under that compression the Jacobi update overshoots and the
//! pool erupts (docs/solver.md has the measurements). This stage supplies the long wavelengths
//! the iterations lack, as the coarse-grid correction of a two-level method whose smoother is
//! the PBF iteration itself:
//!
//! 1. gather: each cell's fluid volume V_c = Σ V w and compression Σ V C w over the particles
//!    within a cell of its centre (trilinear weights w, folded back at the grid's walls);
//! 2. cells are solid (centre inside an obstacle), fluid (V_c ≥ ½ the cell) or air;
//! 3. solve −∇²φ = b, b = C̄ · min(V_c / cell volume, 1) with C̄ = Σ V C w / V_c the cell's mean
//!    constraint, with φ = 0 in air and no flux through walls and obstacles
//!    (multigrid-preconditioned CG, `multigrid.rs`): the potential of the displacement
//!    u = −∇φ whose divergence removes the cells' mean compression (moving fluid by u changes
//!    ρ/ρ₀ by −∇·u);
//! 4. every particle moves by u, interpolated trilinearly from the cell faces (u = 0 on faces
//!    of walls and obstacles), then is projected out of walls and obstacles.
//!
//! The particles' own constraint iterations then remove what is left, which is short-range.
//! The constraint is averaged per cell before anything is clamped: particles below ρ₀ next to
//! compressed ones (disorder) offset them, or the fluid inflates. A cell's mean expansion
//! (C̄ < 0) counts only in the fluid's interior (no air among the 26 neighbour cells): where the
//! unilateral particle constraint lets a disordered packing open up, this closes it again (a
//! 100-layer column otherwise rises 3.7 mm in 3 s); at the free surface a deficit is only the
//! neighbours the surface lacks. A grid with no air cell (a full, closed container) has no
//! free surface to push towards; the stage then does nothing.
//!
//! `kernels/coarse.cuh` runs the same stage on the GPU.

use super::grid::UniformGrid;
use super::multigrid::{CellKind, Multigrid};
use super::{Obstacle, World};
use glam::Vec3A;
use rayon::prelude::*;

/// Conjugate gradient iterations after the first preconditioned step, from the last step's φ:
/// the residual falls 20–500× (`multigrid.rs` tests); the PBF iterations that follow handle
/// what remains.
pub const CG_ITERATIONS: usize = 2;

/// The same from φ = 0, on a solver's first step: there is no earlier solution to refine, and a
/// half-solved first step makes a fluid at rest sag and ring. (A step with no air leaves φ = 0
/// but not the count: the CUDA host decides it without knowing whether the grid had air.)
pub const CG_ITERATIONS_COLD: usize = 8;

/// A cell is fluid when the particles' volume in it is at least this fraction of the cell.
pub const FLUID_FRACTION: f32 = 0.5;

/// Bytes either backend holds per grid cell for the correction: its fields (volume, mean
/// constraint, right-hand side, φ, solid flag), the face displacements, the conjugate
/// gradient's vectors and the multigrid levels (x, b, r and the kind of 8/7 as many cells).
pub const BYTES_PER_CELL: u64 = 4 * 4 + 1 + 3 * 4 + 4 * 4 + 10 * (3 * 4 + 1) / 7 + 1;

/// Trilinear weight along one axis of a point `g` cells from the centre of cell `index` of
/// `count`, folded back into the border cells (a partition of unity over the grid).
#[inline(always)]
fn axis_weight(g: f32, index: usize, count: usize) -> f32 {
    if (index == 0 && g < 0.0) || (index + 1 == count && g > 0.0) {
        1.0
    } else {
        (1.0 - g.abs()).max(0.0)
    }
}

/// The coarse grid, its static solid cells, the solver and the last solution.
#[derive(Clone, Debug)]
pub struct CoarseCorrection {
    origin: Vec3A,
    cell: Vec3A,
    dims: [usize; 3],
    /// Cells whose centre lies inside an obstacle.
    solid: Vec<bool>,
    multigrid: Multigrid,
    /// Particle volume gathered by each cell, m³.
    volume: Vec<f32>,
    /// The cell's weighted mean of ρ/ρ₀ − 1.
    mean_constraint: Vec<f32>,
    rhs: Vec<f32>,
    phi: Vec<f32>,
    /// Displacement on the cell faces, per axis: face f of axis a lies between cells f − 1 and f.
    faces: [Vec<f32>; 3],
    /// Largest |residual| of the last solve, relative to the largest |b|.
    pub relative_residual: f32,
    /// The step length the last φ was solved for.
    last_dt: f32,
}

impl CoarseCorrection {
    /// The edges of a cell of the grid with `dims` cells over `world`'s container.
    pub fn cell_size(world: &World, dims: [usize; 3]) -> Vec3A {
        world.container.size() / Vec3A::new(dims[0] as f32, dims[1] as f32, dims[2] as f32)
    }

    /// Whether each cell's centre lies inside an obstacle (x fastest).
    pub fn solid_cells(world: &World, dims: [usize; 3]) -> Vec<bool> {
        let (origin, cell) = (world.container.min, Self::cell_size(world, dims));
        let mut solid = vec![false; dims.iter().product()];
        for k in 0..dims[2] {
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let centre = origin + (Vec3A::new(i as f32, j as f32, k as f32) + 0.5) * cell;
                    solid[i + dims[0] * (j + dims[1] * k)] =
                        world.obstacles.iter().any(|o| contains(o, centre));
                }
            }
        }
        solid
    }

    /// The correction over `world`'s container, with the cell counts of `grid` (the neighbour
    /// grid, cells of h): cells of container size / count ≤ h per axis.
    pub fn new(world: &World, grid: &UniformGrid) -> Self {
        let origin = world.container.min;
        let dims = grid.dims().map(|d| d as usize);
        let cell = Self::cell_size(world, dims);
        let n = dims.iter().product();
        let solid = Self::solid_cells(world, dims);
        let face_count = |a: usize| {
            let mut d = dims;
            d[a] += 1;
            d.iter().product()
        };
        Self {
            origin,
            cell,
            dims,
            solid,
            multigrid: Multigrid::new(dims, cell.to_array()),
            volume: vec![0.0; n],
            mean_constraint: vec![0.0; n],
            rhs: vec![0.0; n],
            phi: vec![0.0; n],
            faces: [face_count(0), face_count(1), face_count(2)].map(|n| vec![0.0; n]),
            relative_residual: 0.0,
            last_dt: 0.0,
        }
    }

    fn index(&self, [i, j, k]: [usize; 3]) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Solves for the displacement from the particles at `positions` (sorted as `grid` was
    /// built) with constraint values `constraint` (ρ/ρ₀ − 1) and volume `particle_volume`, for a
    /// step of length `dt`. Returns false (and leaves a zero displacement) when the grid holds
    /// no air.
    ///
    /// The solve starts from the last step's φ, scaled by (dt / last dt)² (the compression one
    /// step of gravity leaves scales with dt²): most of a resting fluid's potential is the same
    /// from step to step, so [`CG_ITERATIONS`] only refine it. From zero they would leave a few
    /// per cent of it on odd-sized grids, and the column would bounce on that error.
    pub fn solve(
        &mut self,
        grid: &UniformGrid,
        positions: &[Vec3A],
        constraint: &[f32],
        particle_volume: f32,
        dt: f32,
    ) -> bool {
        self.gather(grid, positions, constraint, particle_volume);
        let finest = &mut self.multigrid.levels[0];
        let cell_volume = self.cell.x * self.cell.y * self.cell.z;
        finest.fraction.clear();
        finest
            .fraction
            .extend(self.volume.iter().map(|v| v / cell_volume));
        let mut any_air = false;
        for c in 0..self.volume.len() {
            let fraction = self.volume[c] / cell_volume;
            finest.kind[c] = if self.solid[c] {
                CellKind::Solid
            } else if fraction >= FLUID_FRACTION {
                CellKind::Fluid
            } else {
                any_air = true;
                CellKind::Air
            };
        }
        // b = the cell's mean compression times its fluid fraction; expansion (a negative mean)
        // counts only in cells with no air among their 26 neighbours, the fluid's interior:
        // there it is fluid pulled apart, at the free surface it is the missing neighbours.
        let dims = self.dims;
        for k in 0..dims[2] {
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let c = i + dims[0] * (j + dims[1] * k);
                    let mean = self.mean_constraint[c];
                    self.rhs[c] = if finest.kind[c] != CellKind::Fluid {
                        0.0
                    } else if mean >= 0.0 || !touches_air(&finest.kind, dims, [i, j, k]) {
                        mean * (self.volume[c] / cell_volume).min(1.0)
                    } else {
                        0.0
                    };
                }
            }
        }
        if !any_air {
            self.phi.fill(0.0);
            self.faces.iter_mut().for_each(|f| f.fill(0.0));
            self.relative_residual = 0.0;
            return false;
        }
        self.multigrid.coarsen_kinds();
        let scale = if self.last_dt > 0.0 {
            (dt / self.last_dt).powi(2)
        } else {
            0.0
        };
        self.last_dt = dt;
        self.phi.iter_mut().for_each(|phi| *phi *= scale);
        let largest = self.rhs.iter().fold(0.0f32, |m, &v| m.max(v));
        let iterations = if scale > 0.0 {
            CG_ITERATIONS
        } else {
            CG_ITERATIONS_COLD
        };
        let residual = self.multigrid.solve(&self.rhs, &mut self.phi, iterations);
        self.relative_residual = if largest > 0.0 {
            residual / largest
        } else {
            0.0
        };
        self.face_displacements();
        true
    }

    /// Volume and mean constraint of every cell from the particles around its centre.
    fn gather(
        &mut self,
        grid: &UniformGrid,
        positions: &[Vec3A],
        constraint: &[f32],
        particle_volume: f32,
    ) {
        let (origin, cell, dims) = (self.origin, self.cell, self.dims);
        let inverse_cell = 1.0 / cell;
        self.volume
            .par_iter_mut()
            .zip(self.mean_constraint.par_iter_mut())
            .enumerate()
            .for_each(|(c, (volume, mean))| {
                let ijk = [
                    c % dims[0],
                    (c / dims[0]) % dims[1],
                    c / (dims[0] * dims[1]),
                ];
                let centre =
                    origin + (Vec3A::new(ijk[0] as f32, ijk[1] as f32, ijk[2] as f32) + 0.5) * cell;
                let (mut v, mut compression) = (0.0f32, 0.0f32);
                // Cells are at most h, so every particle within a cell of the centre lies in
                // the 27 neighbour-grid cells around the one holding the centre.
                grid.for_each_range_around(grid.cell_coords(centre), |range| {
                    for p in range {
                        let g = (positions[p] - centre) * inverse_cell;
                        let w = axis_weight(g.x, ijk[0], dims[0])
                            * axis_weight(g.y, ijk[1], dims[1])
                            * axis_weight(g.z, ijk[2], dims[2]);
                        v += w;
                        compression += w * constraint[p];
                    }
                });
                *volume = v * particle_volume;
                *mean = if v > 0.0 { compression / v } else { 0.0 };
            });
    }

    /// u = −∇φ on every face between two cells that are not solid; 0 on the grid's outer faces
    /// and on faces of solid cells.
    fn face_displacements(&mut self) {
        let dims = self.dims;
        let finest = &self.multigrid.levels[0];
        let phi = &self.phi;
        for (axis, faces) in self.faces.iter_mut().enumerate() {
            let inverse_cell = 1.0 / self.cell[axis];
            let mut face_dims = dims;
            face_dims[axis] += 1;
            faces.par_iter_mut().enumerate().for_each(|(f, u)| {
                let ijk = [
                    f % face_dims[0],
                    (f / face_dims[0]) % face_dims[1],
                    f / (face_dims[0] * face_dims[1]),
                ];
                *u = 0.0;
                if ijk[axis] == 0 || ijk[axis] == dims[axis] {
                    return;
                }
                let mut below = ijk;
                below[axis] -= 1;
                let (a, b) = (
                    below[0] + dims[0] * (below[1] + dims[1] * below[2]),
                    ijk[0] + dims[0] * (ijk[1] + dims[1] * ijk[2]),
                );
                let (kind_a, kind_b) = (finest.kind[a], finest.kind[b]);
                if kind_a == CellKind::Solid || kind_b == CellKind::Solid {
                    return;
                }
                // Between a fluid and an air cell: the gradient to the free surface (φ = 0 at
                // θ of the way, `Level::interface`), as the solve saw it.
                let theta = match (kind_a, kind_b) {
                    (CellKind::Fluid, CellKind::Air) => finest.interface(a, b),
                    (CellKind::Air, CellKind::Fluid) => finest.interface(b, a),
                    _ => 1.0,
                };
                *u = -(phi[b] - phi[a]) * inverse_cell / theta;
            });
        }
    }

    /// The displacement at `point`: each component interpolated trilinearly from its faces
    /// (along the component's axis faces sit at whole cells, across it at cell centres).
    pub fn displacement(&self, point: Vec3A) -> Vec3A {
        let g = (point - self.origin) / self.cell;
        let dims = self.dims;
        let whole: [FaceSample; 3] = std::array::from_fn(|a| FaceSample::new(g[a], dims[a] + 1));
        let centre: [FaceSample; 3] = std::array::from_fn(|a| FaceSample::new(g[a] - 0.5, dims[a]));
        let mut u = Vec3A::ZERO;
        for axis in 0..3 {
            let s: [FaceSample; 3] =
                std::array::from_fn(|a| if a == axis { whole[a] } else { centre[a] });
            let (nx, ny) = (
                dims[0] + usize::from(axis == 0),
                dims[1] + usize::from(axis == 1),
            );
            let faces = &self.faces[axis];
            let mut value = 0.0;
            for n in 0..8usize {
                let mut index = [0usize; 3];
                let mut weight = 1.0;
                for a in 0..3 {
                    if (n >> a) & 1 == 1 {
                        index[a] = s[a].next;
                        weight *= s[a].fraction;
                    } else {
                        index[a] = s[a].base;
                        weight *= 1.0 - s[a].fraction;
                    }
                }
                if weight > 0.0 {
                    value += weight * faces[index[0] + nx * (index[1] + ny * index[2])];
                }
            }
            u[axis] = value;
        }
        u
    }

    /// The cell kinds of the last solve (finest level), for tests and debug views.
    pub fn kinds(&self) -> &[CellKind] {
        &self.multigrid.levels[0].kind
    }

    /// φ of cell (i, j, k) from the last solve.
    pub fn potential(&self, cell: [usize; 3]) -> f32 {
        self.phi[self.index(cell)]
    }
}

/// Where a coordinate (in cells) falls among `count` face positions along one axis: the lower
/// and upper sample and the fraction between them, clamped to the ends.
#[derive(Clone, Copy)]
struct FaceSample {
    base: usize,
    next: usize,
    fraction: f32,
}

impl FaceSample {
    #[inline(always)]
    fn new(coordinate: f32, count: usize) -> Self {
        let clamped = coordinate.clamp(0.0, (count - 1) as f32);
        let floor = clamped.floor().min((count.max(2) - 2) as f32);
        let base = floor as usize;
        FaceSample {
            base,
            next: (base + 1).min(count - 1),
            fraction: if count == 1 { 0.0 } else { clamped - floor },
        }
    }
}

/// Whether any of the 26 cells around `cell` is air.
fn touches_air(kind: &[CellKind], dims: [usize; 3], [i, j, k]: [usize; 3]) -> bool {
    for z in k.saturating_sub(1)..(k + 2).min(dims[2]) {
        for y in j.saturating_sub(1)..(j + 2).min(dims[1]) {
            for x in i.saturating_sub(1)..(i + 2).min(dims[0]) {
                if kind[x + dims[0] * (y + dims[1] * z)] == CellKind::Air {
                    return true;
                }
            }
        }
    }
    false
}

/// Whether `point` lies inside the obstacle.
fn contains(obstacle: &Obstacle, point: Vec3A) -> bool {
    match *obstacle {
        Obstacle::Box(b) => point.cmpge(b.min).all() && point.cmple(b.max).all(),
        Obstacle::Sphere { center, radius } => (point - center).length_squared() < radius * radius,
    }
}

#[cfg(test)]
#[path = "coarse_tests.rs"]
mod tests;
