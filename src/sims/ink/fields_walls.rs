//! The flow's solid cells and what follows from them — the open-face masks, the closed faces'
//! fixed velocities, the pressure stencil — set for the whole grid or again for a band of rows
//! (a disc moved or painted: only the rows it covers change, docs/ink.md "Obstacles").

use super::super::boundary::{fixed_faces_rows, Poisson, SideKind, BOTTOM, LEFT, RIGHT, TOP};
use super::Flow;
use rayon::prelude::*;
use std::ops::Range;

impl Flow {
    /// Which cells are solid (obstacles), and the masks that follow; the velocity on closed
    /// faces becomes their fixed value (a moving disc's velocity on its cells' faces,
    /// [`Flow::moving`]), the pressure in solid cells zero.
    pub fn set_solid(&mut self, solid: Vec<bool>) {
        let (nx, ny) = (self.nx, self.ny);
        assert_eq!(solid.len(), nx * ny);
        if self.solid.len() != nx * ny {
            self.solid = vec![false; nx * ny];
            self.solid_cells = 0;
            self.u_open = vec![false; (nx + 1) * ny];
            self.v_open = vec![false; nx * (ny + 1)];
            self.u_fixed = vec![0.0; (nx + 1) * ny];
            self.v_fixed = vec![0.0; nx * (ny + 1)];
            self.poisson = Poisson::new(nx, ny, &vec![true; nx * ny], &self.boundary);
        }
        self.poisson.pure_neumann = !self.boundary.any_dirichlet();
        self.wall_rows(0..ny, &solid, true);
    }

    /// Makes the cells of the rows `rows` solid where `cells` (those rows' cells, row by row),
    /// the rest staying as they are, with the discs [`Flow::moving`] over those rows only (the
    /// faces of other rows keep their fixed velocities). When no cell changed only the rows'
    /// closed faces take their velocities again; else the masks and the stencil follow around
    /// those rows. Returns whether any cell changed.
    pub fn set_solid_rows(&mut self, rows: Range<usize>, cells: &[bool]) -> bool {
        self.wall_rows(rows, cells, false)
    }

    /// The stage `wall_rows` (CUDA's kernel of that name computes the masks and fixed
    /// velocities part from the solid rows and the moving discs, kernels/ink.cu; `close_walls`
    /// there closes the rows and zeroes the solid cells' pressure): the cells of `rows` set to `cells`; the closed
    /// faces' fixed velocities of those rows ([`fixed_faces_rows`]); when a cell changed (or
    /// `always`) the open masks of those rows' faces and the stencil around them; then the rows'
    /// closed faces closed.
    fn wall_rows(&mut self, rows: Range<usize>, cells: &[bool], always: bool) -> bool {
        let changed = self.set_cells_rows(rows.clone(), cells);
        self.derive_walls(rows.clone(), changed || always);
        if changed || always {
            self.zero_solid_pressure(rows.clone());
        }
        self.close_rows(rows);
        changed
    }

    /// The cells of the rows `rows` set to `cells` (and the count of solid cells), nothing
    /// that follows from them: CUDA's host mirror on the step path, whose masks are brought up
    /// to date when read ([`Flow::walls_again_rows`]). Returns whether any cell changed.
    pub(in crate::sims::ink) fn set_cells_rows(
        &mut self,
        rows: Range<usize>,
        cells: &[bool],
    ) -> bool {
        let (nx, ny) = (self.nx, self.ny);
        assert!(rows.end <= ny, "rows {rows:?} of {ny}");
        assert_eq!(cells.len(), rows.len() * nx, "the cells of rows {rows:?}");
        let span = rows.start * nx..rows.end * nx;
        let count = |cells: &[bool]| cells.iter().filter(|&&s| s).count();
        let mut changed = false;
        // Row by row: only a row that differs is counted and copied.
        for (was, now) in self.solid[span]
            .chunks_exact_mut(nx)
            .zip(cells.chunks_exact(nx))
        {
            if was != now {
                changed = true;
                self.solid_cells = self.solid_cells + count(now) - count(was);
                was.copy_from_slice(now);
            }
        }
        changed
    }

    /// What follows from the cells of the rows `rows` as they are, with the discs
    /// [`Flow::moving`]: the rows' fixed velocities, their open masks and the stencil around
    /// them (as [`Flow::set_solid_rows`] leaves them when a cell changed; the velocity and
    /// the pressure are left as they are: CUDA's host mirror, whose values live on the GPU).
    pub(in crate::sims::ink) fn walls_again_rows(&mut self, rows: Range<usize>) {
        self.derive_walls(rows, true);
    }

    /// The fixed velocities of the rows `rows`, and when `masks` their open masks and the
    /// stencil around them, from the cells.
    fn derive_walls(&mut self, rows: Range<usize>, masks: bool) {
        let (nx, ny) = (self.nx, self.ny);
        let v_rows = rows.start..(rows.end + 1).min(ny + 1);
        let grid = (nx, ny, self.dx);
        let faces = (&mut self.u_fixed[..], &mut self.v_fixed[..]);
        fixed_faces_rows(
            grid,
            &self.solid,
            &self.boundary,
            &self.moving,
            rows.clone(),
            faces,
        );
        if masks {
            let solid = &self.solid;
            let fluid = |k: usize| !solid[k];
            self.poisson
                .update_rows(fluid, &self.boundary, rows.clone());
            let open = |side: usize| self.boundary.sides[side] == SideKind::Outflow;
            // Row by row (no division a face).
            for j in rows.clone() {
                let cells = &solid[j * nx..(j + 1) * nx];
                let faces = &mut self.u_open[j * (nx + 1)..(j + 1) * (nx + 1)];
                for (i, face) in faces.iter_mut().enumerate() {
                    let left = i > 0 && !cells[i - 1];
                    let right = i < nx && !cells[i];
                    *face = (left && right)
                        || (i == 0 && right && open(LEFT))
                        || (i == nx && left && open(RIGHT));
                }
            }
            let row = |j: usize| &solid[j * nx..(j + 1) * nx];
            for j in v_rows {
                let (below, above) = ((j > 0).then(|| row(j - 1)), (j < ny).then(|| row(j)));
                for (i, face) in self.v_open[j * nx..(j + 1) * nx].iter_mut().enumerate() {
                    let below = below.is_some_and(|r| !r[i]);
                    let above = above.is_some_and(|r| !r[i]);
                    *face = (below && above)
                        || (j == 0 && above && open(BOTTOM))
                        || (j == ny && below && open(TOP));
                }
            }
        }
    }

    /// Sets every closed face to its fixed velocity
    /// ([`fixed_faces`](super::super::boundary::fixed_faces)): zero on walls and resting
    /// solids, the inflow speed on inflow sides, a moving disc's velocity on its cells' faces.
    pub fn close_faces(&mut self) {
        let ny = self.ny;
        self.close_rows(0..ny);
    }

    /// The pressure zero in the solid cells of the rows `rows`.
    pub fn zero_solid_pressure(&mut self, rows: Range<usize>) {
        let cells = rows.start * self.nx..rows.end * self.nx;
        for (p, &s) in self.p.data[cells.clone()]
            .iter_mut()
            .zip(&self.solid[cells])
        {
            if s {
                *p = 0.0;
            }
        }
    }

    /// [`Flow::close_faces`] for the faces of the rows of cells `rows`: the u faces of those
    /// rows, the v faces below and above them.
    pub fn close_rows(&mut self, rows: Range<usize>) {
        let (nx, ny) = (self.nx, self.ny);
        let (u_rows, v_rows) = (rows.clone(), rows.start..(rows.end + 1).min(ny + 1));
        let close = |(row, (open, fixed)): (&mut [f32], (&[bool], &[f32]))| {
            for ((value, &open), &fixed) in row.iter_mut().zip(open).zip(fixed) {
                *value = if open { *value } else { fixed };
            }
        };
        let w = nx + 1;
        let us = u_rows.start * w..u_rows.end * w;
        self.u.data[us.clone()]
            .par_chunks_mut(w)
            .zip(
                self.u_open[us.clone()]
                    .par_chunks(w)
                    .zip(self.u_fixed[us].par_chunks(w)),
            )
            .with_min_len(8)
            .for_each(close);
        let vs = v_rows.start * nx..v_rows.end * nx;
        self.v.data[vs.clone()]
            .par_chunks_mut(nx)
            .zip(
                self.v_open[vs.clone()]
                    .par_chunks(nx)
                    .zip(self.v_fixed[vs].par_chunks(nx)),
            )
            .with_min_len(8)
            .for_each(close);
        self.mirror_rows(rows);
    }

    /// The ghost faces of the rows of cells `rows` — the closed faces between two solid cells,
    /// the u faces of those rows and the v faces between them and the rows beside — take the
    /// mirror image of the tangential velocity across the obstacle's face, as the box's walls
    /// give it beyond the box (`fields_sampler.rs`): a u face's source is the u face above or
    /// below it not between two solid cells (the mean of both where both are), a v face's the
    /// v face left or right; a closed source counts with its fixed velocity. No-slip: twice the
    /// ghost's fixed velocity (the solid's: zero, or a moving disc's) minus the source's, so
    /// the tangential velocity interpolated across the face is the wall's at the face;
    /// free-slip: the source's, so it slides. Every reader of the velocity — the samplers
    /// (scalar, AVX2, CUDA), the advected velocity itself and the curl — then sees obstacles
    /// as the box's walls. Called by [`Flow::close_rows`] and after every projection.
    pub fn mirror_rows(&mut self, rows: Range<usize>) {
        let (nx, ny) = (self.nx, self.ny);
        let stick = self.boundary.obstacles_stick();
        let (solid, w) = (&self.solid, nx + 1);
        let ghost = |a: usize, b: usize| solid[a] && solid[b];
        let mirror = |fixed: f32, sum: f32, n: u32| {
            let fluid = sum / n as f32;
            if stick {
                2.0 * fixed - fluid
            } else {
                fluid
            }
        };
        for j in rows.clone() {
            if !solid[j * nx..(j + 1) * nx].contains(&true) {
                continue;
            }
            for i in 1..nx {
                if !ghost(j * nx + i - 1, j * nx + i) {
                    continue;
                }
                let (mut sum, mut n) = (0.0, 0);
                for s in [j.wrapping_sub(1), j + 1] {
                    if s < ny && !ghost(s * nx + i - 1, s * nx + i) {
                        let k = s * w + i;
                        sum += if self.u_open[k] {
                            self.u.data[k]
                        } else {
                            self.u_fixed[k]
                        };
                        n += 1;
                    }
                }
                if n > 0 {
                    let k = j * w + i;
                    self.u.data[k] = mirror(self.u_fixed[k], sum, n);
                }
            }
        }
        for j in rows.start.max(1)..(rows.end + 1).min(ny) {
            for i in 0..nx {
                if !ghost((j - 1) * nx + i, j * nx + i) {
                    continue;
                }
                let (mut sum, mut n) = (0.0, 0);
                for s in [i.wrapping_sub(1), i + 1] {
                    if s < nx && !ghost((j - 1) * nx + s, j * nx + s) {
                        let k = j * nx + s;
                        sum += if self.v_open[k] {
                            self.v.data[k]
                        } else {
                            self.v_fixed[k]
                        };
                        n += 1;
                    }
                }
                if n > 0 {
                    let k = j * nx + i;
                    self.v.data[k] = mirror(self.v_fixed[k], sum, n);
                }
            }
        }
    }

    /// After the advection (which wrote every face): each closed face back to the value it
    /// held before (`old_u`, `old_v`: its fixed velocity, or a ghost face's mirror image, as
    /// the CUDA kernels leave closed faces alone).
    pub fn keep_closed(&mut self, old_u: &[f32], old_v: &[f32]) {
        let keep = |(new, (old, open)): (&mut [f32], (&[f32], &[bool]))| {
            for ((value, &old), &open) in new.iter_mut().zip(old).zip(open) {
                *value = if open { *value } else { old };
            }
        };
        let w = self.nx + 1;
        self.u
            .data
            .par_chunks_mut(w)
            .zip(old_u.par_chunks(w).zip(self.u_open.par_chunks(w)))
            .with_min_len(8)
            .for_each(keep);
        let nx = self.nx;
        self.v
            .data
            .par_chunks_mut(nx)
            .zip(old_v.par_chunks(nx).zip(self.v_open.par_chunks(nx)))
            .with_min_len(8)
            .for_each(keep);
    }
}
