//! The CPU solver's neighbour search: the particles sorted by the cell of x* (`build_grid`),
//! CSR neighbour lists found once per step (`find_neighbors`, the 27 cells' candidates tested
//! four at a time), and the per-pair cache split into blocks for parallel writers.

use super::{CpuSolver, BLOCK};
use crate::sims::pbf::grid::{gather, UniformGrid};
use glam::{Vec3A, Vec4};
use rayon::prelude::*;

/// The particles of the 27 cells around one cell, copied into x, y, z arrays: consecutive
/// particles (sorted by cell) mostly share a cell, so the candidates are gathered once per
/// cell and each particle tests them four at a time with plain vector loads.
#[derive(Default)]
pub(super) struct Candidates {
    cell: usize,
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    index: Vec<u32>,
}

impl Candidates {
    fn gather(&mut self, grid: &UniformGrid, positions: &[Vec3A], cell: usize, p: Vec3A) {
        self.cell = cell;
        self.x.clear();
        self.y.clear();
        self.z.clear();
        self.index.clear();
        grid.for_each_neighbor_range(p, |range| {
            for j in range {
                let q = positions[j];
                self.x.push(q.x);
                self.y.push(q.y);
                self.z.push(q.z);
                self.index.push(j as u32);
            }
        });
        // Pad to whole groups of four with points that are never within reach.
        while !self.x.len().is_multiple_of(4) {
            self.x.push(f32::INFINITY);
            self.y.push(f32::INFINITY);
            self.z.push(f32::INFINITY);
            self.index.push(u32::MAX);
        }
    }

    /// Pushes the index of every candidate within √`h2` of `p`.
    #[inline(always)]
    fn push_within(&self, p: Vec3A, h2: f32, out: &mut Vec<u32>) {
        let (px, py, pz) = (Vec4::splat(p.x), Vec4::splat(p.y), Vec4::splat(p.z));
        for k in (0..self.x.len()).step_by(4) {
            let dx = Vec4::from_slice(&self.x[k..k + 4]) - px;
            let dy = Vec4::from_slice(&self.y[k..k + 4]) - py;
            let dz = Vec4::from_slice(&self.z[k..k + 4]) - pz;
            let mut inside = (dx * dx + dy * dy + dz * dz)
                .cmplt(Vec4::splat(h2))
                .bitmask();
            while inside != 0 {
                out.push(self.index[k + inside.trailing_zeros() as usize]);
                inside &= inside - 1;
            }
        }
    }
}

/// Splits the per-pair cache into one slice per block of `BLOCK` particles (the pairs of a
/// block's particles are contiguous in CSR order), so blocks can write their pairs in parallel.
pub(super) fn pair_slices<'a>(
    cache: &'a mut [Vec4],
    neighbor_start: &[u32],
    n: usize,
) -> Vec<&'a mut [Vec4]> {
    let mut slices = Vec::with_capacity(n.div_ceil(BLOCK));
    let mut rest = cache;
    for block in 0..n.div_ceil(BLOCK) {
        let first = neighbor_start[block * BLOCK];
        let last = neighbor_start[((block + 1) * BLOCK).min(n)];
        let (head, tail) = std::mem::take(&mut rest).split_at_mut((last - first) as usize);
        slices.push(head);
        rest = tail;
    }
    slices
}

impl CpuSolver {
    pub(super) fn neighbors_of(&self, i: usize) -> &[u32] {
        &self.neighbors[self.neighbor_start[i] as usize..self.neighbor_start[i + 1] as usize]
    }

    /// Sorts every particle array by the cell of x*.
    pub(super) fn build_grid(&mut self) {
        self.grid.build(&self.predicted);
        let order = self.grid.order();
        for array in [
            &mut self.positions,
            &mut self.predicted,
            &mut self.velocities,
        ] {
            gather(array, order, &mut self.scratch);
            std::mem::swap(array, &mut self.scratch);
        }
        gather(&self.ids, order, &mut self.ids_scratch);
        std::mem::swap(&mut self.ids, &mut self.ids_scratch);
    }

    /// CSR neighbour lists: every j ≠ i with |x*ᵢ − x*ⱼ| < h.
    pub(super) fn find_neighbors(&mut self) {
        let n = self.predicted.len();
        let h2 = self.params.kernel_radius * self.params.kernel_radius;
        let (grid, predicted) = (&self.grid, &self.predicted);
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .map(|chunk| {
                let range = chunk * BLOCK..((chunk + 1) * BLOCK).min(n);
                let mut counts = Vec::with_capacity(range.len());
                let mut list = Vec::with_capacity(range.len() * 40);
                let mut candidates = Candidates {
                    cell: usize::MAX,
                    ..Candidates::default()
                };
                for i in range {
                    let p = predicted[i];
                    let cell = grid.cell_of(p);
                    if cell != candidates.cell {
                        candidates.gather(grid, predicted, cell, p);
                    }
                    let before = list.len();
                    candidates.push_within(p, h2, &mut list);
                    // The particle itself passed the distance test: take it out again.
                    let own = list[before..].iter().position(|&j| j as usize == i);
                    if let Some(k) = own {
                        list.remove(before + k);
                    }
                    counts.push((list.len() - before) as u32);
                }
                (counts, list)
            })
            .collect();
        self.neighbor_start.resize(n + 1, 0);
        self.neighbors.clear();
        let mut k = 0;
        for (counts, list) in &chunks {
            for &count in counts {
                self.neighbor_start[k + 1] = self.neighbor_start[k] + count;
                k += 1;
            }
            self.neighbors.extend_from_slice(list);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::pbf::{Aabb, InitialState, Params, World};

    #[test]
    fn neighbour_lists_match_brute_force() {
        let mut seed = 11u64;
        let mut random = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 40) as f32) / (1u64 << 24) as f32
        };
        let mut positions: Vec<Vec3A> = (0..3000)
            .map(|_| Vec3A::new(random(), random() * 0.5, random() * 0.3))
            .collect();
        // Duplicates, cell faces and the domain corners.
        positions.extend([
            Vec3A::ZERO,
            Vec3A::ZERO,
            Vec3A::new(1.0, 0.5, 0.3),
            Vec3A::new(0.2, 0.2, 0.2),
        ]);
        let initial = InitialState {
            velocities: vec![Vec3A::ZERO; positions.len()],
            positions,
        };
        let world = World {
            container: Aabb::new([0.0, 0.0, 0.0], [1.0, 0.5, 0.3]),
            obstacles: vec![],
        };
        let mut params = Params::with_spacing(0.025);
        params.kernel_radius = 0.05;
        params.calibrate_mass();
        let solver = CpuSolver::new(world, params, &initial).unwrap();
        let h2 = 0.05f32 * 0.05;
        for i in 0..solver.predicted.len() {
            let mut found: Vec<u32> = solver
                .neighbors_of(i)
                .iter()
                .map(|&j| solver.ids[j as usize])
                .collect();
            found.sort_unstable();
            let p = solver.predicted[i];
            let mut expected: Vec<u32> = (0..solver.predicted.len())
                .filter(|&j| j != i && (solver.predicted[j] - p).length_squared() < h2)
                .map(|j| solver.ids[j])
                .collect();
            expected.sort_unstable();
            assert_eq!(found, expected, "particle id {}", solver.ids[i]);
        }
    }
}
