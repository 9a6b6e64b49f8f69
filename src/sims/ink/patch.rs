//! Cells of a grid level as runs of columns in rows ([`Patch`]): what changed when obstacles
//! move, carried down the multigrid's levels (`pressure_mg_coarsen`) so that a disc changing
//! ~40 cells of each row it covers costs those cells, not its rows.

use std::ops::Range;

/// Cells of a level, as runs of columns in rows: (row, columns), by row then column, the runs
/// of a row apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Patch {
    /// (row, columns) per run.
    pub spans: Vec<(usize, Range<usize>)>,
}

impl Patch {
    /// Every cell of an `nx × ny` level.
    pub fn whole(nx: usize, ny: usize) -> Patch {
        Patch::rectangle(0..ny, 0..nx)
    }

    /// The columns `columns` of the rows `rows`.
    pub fn rectangle(rows: Range<usize>, columns: Range<usize>) -> Patch {
        let spans = rows.map(|j| (j, columns.clone())).collect();
        Patch { spans }
    }

    /// From its first row to its last (empty when it holds no cell).
    pub fn rows(&self) -> Range<usize> {
        match (self.spans.first(), self.spans.last()) {
            (Some((a, _)), Some((b, _))) => *a..b + 1,
            _ => 0..0,
        }
    }

    /// Its rows in blocks of consecutive rows, in order (a patch of runs far apart, as the
    /// changes of several discs, has several).
    pub fn row_blocks(&self) -> Vec<Range<usize>> {
        let mut blocks: Vec<Range<usize>> = Vec::new();
        for (j, _) in &self.spans {
            match blocks.last_mut() {
                Some(block) if *j <= block.end => {
                    debug_assert!(j + 1 >= block.start, "the runs are by row");
                    block.end = block.end.max(j + 1);
                }
                _ => blocks.push(*j..j + 1),
            }
        }
        blocks
    }

    /// Its cells and those beside them (a row and a column either side), within an `nx × ny`
    /// level.
    pub fn around(&self, nx: usize, ny: usize) -> Patch {
        let rows = self.rows();
        let mut spans = Vec::with_capacity(2 * self.spans.len());
        let (mut scratch, mut first) = (Vec::new(), 0);
        for row in rows.start.saturating_sub(1)..(rows.end + 1).min(ny) {
            // The runs of the rows row − 1 ..= row + 1, grown by a column either side.
            while first < self.spans.len() && self.spans[first].0 + 1 < row {
                first += 1;
            }
            let near = self.spans[first..]
                .iter()
                .take_while(|(j, _)| *j <= row + 1);
            scratch.extend(near.map(|(_, c)| c.start.saturating_sub(1)..(c.end + 1).min(nx)));
            join_row(row, &mut scratch, &mut spans);
        }
        Patch { spans }
    }

    /// The coarse cells (the level halved, rounding up) whose children it holds.
    pub fn coarse(&self) -> Patch {
        let mut spans = Vec::with_capacity(self.spans.len());
        let mut scratch = Vec::new();
        for (k, (j, c)) in self.spans.iter().enumerate() {
            scratch.push(c.start / 2..c.end.div_ceil(2));
            if self
                .spans
                .get(k + 1)
                .is_none_or(|(next, _)| next / 2 != j / 2)
            {
                join_row(j / 2, &mut scratch, &mut spans);
            }
        }
        Patch { spans }
    }

    /// Each run's cells in a level `nx` wide: (row, the cells' indices).
    pub fn row_cells(&self, nx: usize) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
        (self.spans.iter()).map(move |(j, c)| (*j, j * nx + c.start..j * nx + c.end))
    }
}

/// The runs `scratch` of row `row` (any order; a few) appended to `spans` in order, overlapping
/// or touching ones joined; `scratch` left empty.
fn join_row(row: usize, scratch: &mut Vec<Range<usize>>, spans: &mut Vec<(usize, Range<usize>)>) {
    scratch.sort_unstable_by_key(|c| c.start);
    for c in scratch.drain(..).filter(|c| !c.is_empty()) {
        match spans.last_mut() {
            Some((j, last)) if *j == row && c.start <= last.end => last.end = last.end.max(c.end),
            _ => spans.push((row, c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Patch`'s operations against the same on a grid of flags: its cells around and coarse,
    /// for made-up runs (touching, overlapping, at the edges, rows apart) on an odd grid; the
    /// results in order, runs of a row apart.
    #[test]
    fn a_patch_around_and_coarse_holds_the_cells_a_grid_of_flags_does() {
        let (nx, ny) = (23, 15);
        let flags = |p: &Patch, nx: usize, ny: usize| {
            let mut f = vec![false; nx * ny];
            for (_, cells) in p.row_cells(nx) {
                f[cells].fill(true);
            }
            f
        };
        let tidy = |p: &Patch| {
            p.spans.windows(2).all(|w| {
                let ((a, c), (b, d)) = (&w[0], &w[1]);
                a < b || (a == b && c.end < d.start)
            })
        };
        let a = Patch {
            spans: vec![
                (0, 0..3),
                (0, 5..6),
                (1, 4..9),
                (2, 20..23),
                (7, 10..12),
                (14, 0..23),
            ],
        };
        let b = Patch {
            spans: vec![(0, 3..5), (2, 0..1), (7, 11..15), (8, 2..4)],
        };
        let fa = flags(&a, nx, ny);
        let around = a.around(nx, ny);
        assert!(tidy(&around), "{around:?}");
        let want: Vec<bool> = (0..nx * ny)
            .map(|k| {
                let (i, j) = ((k % nx) as isize, (k / nx) as isize);
                (-1..=1).any(|dj| {
                    (-1..=1).any(|di| {
                        let (x, y) = (i + di, j + dj);
                        (0..nx as isize).contains(&x)
                            && (0..ny as isize).contains(&y)
                            && fa[(y * nx as isize + x) as usize]
                    })
                })
            })
            .collect();
        assert_eq!(flags(&around, nx, ny), want);
        let (cx, cy) = (nx.div_ceil(2), ny.div_ceil(2));
        for fine in [&a, &b] {
            let coarse = fine.coarse();
            assert!(tidy(&coarse), "{coarse:?}");
            let ff = flags(fine, nx, ny);
            let want: Vec<bool> = (0..cx * cy)
                .map(|k| {
                    let (ci, cj) = (k % cx, k / cx);
                    (2 * cj..(2 * cj + 2).min(ny))
                        .any(|j| (2 * ci..(2 * ci + 2).min(nx)).any(|i| ff[j * nx + i]))
                })
                .collect();
            assert_eq!(flags(&coarse, cx, cy), want);
        }
    }
}
