//! Uniform neighbour grid with cell size h, built each step by a counting sort of the
//! particles by cell (count → exclusive scan → stable scatter). No cap on particles per cell.
//!
//! Cells are numbered x fastest, so the three cells x−1, x, x+1 of one row are contiguous in
//! sorted order: a 27-cell neighbourhood is 9 contiguous index ranges.

use super::Aabb;
use glam::Vec3A;
use rayon::prelude::*;
use std::ops::Range;

/// Most cells a neighbour grid may have. Cell indices are computed in `i32` here and held in
/// `u32` on the GPU, with one entry past the last cell for the scan; 2³⁰ leaves both room.
pub const MAX_CELLS: u64 = 1 << 30;

/// The grid over a box, with the particle order and cell ranges of the last [`UniformGrid::build`].
#[derive(Clone, Debug)]
pub struct UniformGrid {
    origin: Vec3A,
    inverse_cell_size: f32,
    dims: [i32; 3],
    /// Exclusive scan of cell counts: cell c holds sorted particles `cell_start[c]..cell_start[c + 1]`.
    cell_start: Vec<u32>,
    /// `order[k]` is the unsorted index of the particle that goes to sorted position `k`.
    order: Vec<u32>,
    cell_of: Vec<u32>,
    /// The scatter's next free slot per cell (kept between builds: no allocation per step).
    next: Vec<u32>,
}

impl UniformGrid {
    /// Number of cells a grid of `cell_size` over `bounds` has, per axis (at least 1 each).
    pub fn dims_for(bounds: &Aabb, cell_size: f32) -> [u64; 3] {
        let size = bounds.size() / cell_size;
        [size.x, size.y, size.z].map(|n| (n.ceil() as u64).max(1))
    }

    /// The cell count of a grid of `cell_size` over `bounds`, exactly; `None` beyond `u128`
    /// (each axis saturates at `u64::MAX`, so no product wraps around to a small number).
    pub fn cell_count(bounds: &Aabb, cell_size: f32) -> Option<u128> {
        Self::dims_for(bounds, cell_size)
            .iter()
            .try_fold(1u128, |product, &n| product.checked_mul(u128::from(n)))
    }

    /// Fails unless a grid of `cell_size` over `bounds` has at most [`MAX_CELLS`] cells, saying
    /// how many it would have; on success returns that count.
    pub fn check_size(bounds: &Aabb, cell_size: f32) -> Result<u64, String> {
        match Self::cell_count(bounds, cell_size) {
            Some(cells) if cells <= u128::from(MAX_CELLS) => Ok(cells as u64),
            cells => Err(format!(
                "the container holds {} grid cells at kernel_radius {cell_size} (the neighbour \
                 grid's cell size), beyond the limit of {MAX_CELLS}; enlarge kernel_radius or \
                 shrink the container",
                cells.map_or_else(|| "more than 2¹²⁸".to_string(), |n| n.to_string())
            )),
        }
    }

    /// A grid of `cell_size` covering `bounds`. Points outside are clamped to the border cells.
    /// The caller checks the size first ([`UniformGrid::check_size`]).
    pub fn new(bounds: &Aabb, cell_size: f32) -> Self {
        let dims = Self::dims_for(bounds, cell_size).map(|n| n as i32);
        let cells = dims.iter().map(|&n| n as usize).product::<usize>();
        Self {
            origin: bounds.min,
            inverse_cell_size: 1.0 / cell_size,
            dims,
            cell_start: vec![0; cells + 1],
            order: Vec::new(),
            cell_of: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Cells per axis.
    pub fn dims(&self) -> [i32; 3] {
        self.dims
    }

    /// Integer cell coordinates of a point, clamped into the grid.
    #[inline(always)]
    pub fn cell_coords(&self, point: Vec3A) -> [i32; 3] {
        let c = ((point - self.origin) * self.inverse_cell_size).floor();
        [
            (c.x as i32).clamp(0, self.dims[0] - 1),
            (c.y as i32).clamp(0, self.dims[1] - 1),
            (c.z as i32).clamp(0, self.dims[2] - 1),
        ]
    }

    /// Linear index of the cell containing `point` (clamped into the grid).
    #[inline(always)]
    pub fn cell_of(&self, point: Vec3A) -> usize {
        self.cell_index(self.cell_coords(point))
    }

    #[inline(always)]
    fn cell_index(&self, [x, y, z]: [i32; 3]) -> usize {
        (x + self.dims[0] * (y + self.dims[1] * z)) as usize
    }

    /// Sorts `positions` by cell: afterwards [`UniformGrid::order`] gives the permutation and
    /// the cell ranges refer to sorted positions. Stable, so equal cells keep their order.
    pub fn build(&mut self, positions: &[Vec3A]) {
        let n = positions.len();
        let mut cell_of = std::mem::take(&mut self.cell_of);
        cell_of.resize(n, 0);
        let grid = &*self;
        cell_of
            .par_iter_mut()
            .zip(positions.par_iter())
            .for_each(|(cell, &p)| *cell = grid.cell_index(grid.cell_coords(p)) as u32);
        self.cell_of = cell_of;

        self.cell_start.fill(0);
        for &cell in &self.cell_of {
            self.cell_start[cell as usize + 1] += 1;
        }
        for c in 1..self.cell_start.len() {
            self.cell_start[c] += self.cell_start[c - 1];
        }
        self.next.clone_from(&self.cell_start);
        self.order.resize(n, 0);
        for (i, &cell) in self.cell_of.iter().enumerate() {
            let slot = &mut self.next[cell as usize];
            self.order[*slot as usize] = i as u32;
            *slot += 1;
        }
    }

    /// Exclusive scan of the last build's cell counts (cells + 1 entries): the kernels' layout.
    pub fn cell_start(&self) -> &[u32] {
        &self.cell_start
    }

    /// The permutation of the last build: sorted position → unsorted index.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Calls `visit` with each of the (up to 9) contiguous sorted-index ranges covering the
    /// 27 cells around cell (x, y, z).
    #[inline(always)]
    pub fn for_each_range_around(
        &self,
        [cx, cy, cz]: [i32; 3],
        mut visit: impl FnMut(Range<usize>),
    ) {
        let x0 = (cx - 1).max(0);
        let x1 = (cx + 1).min(self.dims[0] - 1);
        for z in (cz - 1).max(0)..=(cz + 1).min(self.dims[2] - 1) {
            for y in (cy - 1).max(0)..=(cy + 1).min(self.dims[1] - 1) {
                let start = self.cell_start[self.cell_index([x0, y, z])] as usize;
                let end = self.cell_start[self.cell_index([x1, y, z]) + 1] as usize;
                if start < end {
                    visit(start..end);
                }
            }
        }
    }

    /// Calls `visit` with each of the (up to 9) contiguous sorted-index ranges covering the
    /// 27 cells around `point`.
    #[inline(always)]
    pub fn for_each_neighbor_range(&self, point: Vec3A, visit: impl FnMut(Range<usize>)) {
        self.for_each_range_around(self.cell_coords(point), visit);
    }
}

/// Applies a gather permutation: `out[k] = data[order[k]]`.
pub fn gather<T: Copy + Send + Sync>(data: &[T], order: &[u32], out: &mut Vec<T>) {
    out.clear();
    out.par_extend(order.par_iter().map(|&i| data[i as usize]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator so the test needs no extra crate.
    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32) / (1u64 << 24) as f32
    }

    #[test]
    fn neighbour_sets_match_brute_force() {
        let bounds = Aabb::new([0.0, 0.0, 0.0], [1.0, 0.5, 0.3]);
        let h = 0.1;
        let mut seed = 7;
        let mut points: Vec<Vec3A> = (0..1500)
            .map(|_| Vec3A::new(lcg(&mut seed), lcg(&mut seed) * 0.5, lcg(&mut seed) * 0.3))
            .collect();
        // Points exactly on cell faces, on the domain boundary, and at the far corner; a
        // cluster leaves most cells empty.
        points.extend([
            Vec3A::new(0.0, 0.0, 0.0),
            Vec3A::new(1.0, 0.5, 0.3),
            Vec3A::new(0.2, 0.1, 0.1),
            Vec3A::new(0.3, 0.2, 0.2),
            Vec3A::new(0.25, 0.1, 0.15),
            Vec3A::new(0.3, 0.2, 0.2),
            Vec3A::new(0.999999, 0.45, 0.0),
        ]);
        let mut grid = UniformGrid::new(&bounds, h);
        assert_eq!(grid.dims(), [10, 5, 3]);
        grid.build(&points);
        let mut sorted = Vec::new();
        gather(&points, grid.order(), &mut sorted);

        // The permutation is a permutation.
        let mut seen = grid.order().to_vec();
        seen.sort_unstable();
        assert!(seen.iter().enumerate().all(|(k, &i)| k as u32 == i));

        for (k, &p) in sorted.iter().enumerate() {
            let mut found = Vec::new();
            grid.for_each_neighbor_range(p, |range| {
                for j in range {
                    if j != k && (sorted[j] - p).length_squared() < h * h {
                        found.push(grid.order()[j]);
                    }
                }
            });
            found.sort_unstable();
            let mut expected: Vec<u32> = (0..points.len())
                .filter(|&j| {
                    j as u32 != grid.order()[k] && (points[j] - p).length_squared() < h * h
                })
                .map(|j| j as u32)
                .collect();
            expected.sort_unstable();
            assert_eq!(found, expected, "particle {}", grid.order()[k]);
        }
    }

    #[test]
    fn points_outside_the_bounds_fall_in_border_cells() {
        let bounds = Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]);
        let grid = UniformGrid::new(&bounds, 0.25);
        assert_eq!(grid.cell_coords(Vec3A::new(-5.0, 0.3, 7.0)), [0, 1, 3]);
        assert_eq!(grid.cell_coords(Vec3A::new(1.0, 0.0, 0.999)), [3, 0, 3]);
    }
}
