//! The multigrid's hierarchy on the host ([`Hierarchy`]): its levels' records and pooled masks,
//! built with the CPU's operations and set again by patches of cells, and which pooled cells a
//! change copies to the GPU ([`Hierarchy::pooled_blocks`]); `multigrid.rs` holds the arrays on
//! the GPU and the kernels.

use super::kernels::side_bits;
use super::multigrid::InkLevel;
use crate::sims::ink::boundary::Poisson;
use crate::sims::ink::fields::Flow;
use crate::sims::ink::multigrid::{level_shapes, pressure_mg_coarsen};
use crate::sims::ink::patch::Patch;
use std::ops::Range;

/// Unchanged bytes of the pooled masks sent along from the host rather than a copy more
/// ([`Hierarchy::pooled_blocks`]): a copy call costs the host a few µs (a pageable one stages
/// its bytes at several GB/s), about what sending 4 KiB more does.
pub const JOIN_BYTES: usize = 4096;
/// The same for the finest level's copies on the device, where 64 KiB take well under a µs
/// (joined however small the blocks: the bytes between cost next to nothing).
pub const JOIN_DEVICE_BYTES: usize = 65536;
/// The hierarchy of a flow's grid and masks, built on the host with the CPU's operations
/// (`level_shapes`, `Poisson::new`) and set again by patches of cells as the CPU's is by rows
/// ([`pressure_mg_coarsen`]): the levels and their pooled stencil and solid bytes.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    /// Finest first.
    pub levels: Vec<InkLevel>,
    /// Pooled stencil bytes. The finest level's cells in `finest_stale` may not be current
    /// (the GPU's are): read through [`Hierarchy::stencil`], which brings them current.
    pub(super) stencil: Vec<u8>,
    /// Pooled solid bytes (1: not fluid).
    pub solid: Vec<u8>,
    /// Each level's fluid flags and stencil, as the CPU's `Multigrid` holds them.
    masks: Vec<(Vec<bool>, Poisson)>,
    /// Per row of the finest level, the columns holding every cell whose stencil (its own and
    /// pooled) may not have taken its change (empty: none): the GPU copies that level's stencil
    /// from the flow's (`update_cells`), so the host's is set again only when read
    /// ([`Hierarchy::stencil`]). One range a row, widened in place: a substep costs its own
    /// runs however long the cells have been moving, and a read at most every cell.
    finest_stale: Vec<Range<usize>>,
}

impl Hierarchy {
    /// The hierarchy of `flow`'s grid, solid cells and sides.
    pub fn new(flow: &Flow) -> Hierarchy {
        let fluid = flow.solid().iter().map(|s| !s).collect();
        let outflow = side_bits(|side| flow.boundary.dirichlet(side));
        let (mut levels, mut stencil, mut solid) = (Vec::new(), Vec::new(), Vec::new());
        let mut masks = Vec::new();
        for (nx, ny, h, fluid) in level_shapes(flow.nx, flow.ny, flow.dx, fluid) {
            let poisson = Poisson::new(nx, ny, &fluid, &flow.boundary);
            let h2 = h * h;
            levels.push(InkLevel {
                nx: nx as i32,
                ny: ny as i32,
                offset: stencil.len() as u32,
                fluid: fluid.iter().filter(|&&f| f).count() as u32,
                h2,
                weight: 1.0 / h2,
                outflow,
                spare: 0,
            });
            stencil.extend_from_slice(&poisson.cells);
            solid.extend(fluid.iter().map(|&f| u8::from(!f)));
            masks.push((fluid, poisson));
        }
        Hierarchy {
            levels,
            stencil,
            solid,
            finest_stale: vec![0..0; flow.ny],
            masks,
        }
    }

    /// The pooled stencil bytes, the finest level's stale cells set again from its fluid flags
    /// first (`flow`: the grid's sides).
    pub fn stencil(&mut self, flow: &Flow) -> &[u8] {
        if self.finest_stale.iter().any(|c| !c.is_empty()) {
            let spans = (self.finest_stale.iter_mut().enumerate())
                .filter(|(_, c)| !Range::is_empty(c))
                .map(|(j, c)| (j, std::mem::replace(c, 0..0)))
                .collect();
            let patch = Patch { spans };
            let (fluid, poisson) = &mut self.masks[0];
            let set = poisson.update_cells(|k| fluid[k], &flow.boundary, &patch);
            let offset = self.levels[0].offset as usize;
            for (_, cells) in set.row_cells(poisson.nx) {
                self.stencil[offset + cells.start..offset + cells.end]
                    .copy_from_slice(&poisson.cells[cells]);
            }
        }
        &self.stencil
    }

    /// Runs of the finest level's cells whose stencil may not be current (what the next read
    /// sets again).
    #[cfg(test)]
    pub fn stale_runs(&self) -> usize {
        self.finest_stale.iter().filter(|c| !c.is_empty()).count()
    }

    /// Whether, brought up to date, it is every field of the hierarchy [`Hierarchy::new`]
    /// builds for `flow`.
    #[cfg(test)]
    pub fn is_anew(&mut self, flow: &Flow) -> bool {
        self.stencil(flow);
        let anew = Hierarchy::new(flow);
        self.levels == anew.levels
            && self.stencil == anew.stencil
            && self.solid == anew.solid
            && self.masks == anew.masks
    }

    /// The masks again after `flow`'s cells changed in the cells `patch` (runs of the finest
    /// level's rows), those cells only ([`pressure_mg_coarsen`], as the CPU's
    /// `Multigrid::update_rows` by rows): the levels' fluid counts and pooled bytes follow,
    /// but the finest level's stencil only when read ([`Hierarchy::stencil`]; its cells are
    /// marked stale). Returns, per level, the cells that may have changed.
    pub fn update_cells(&mut self, flow: &Flow, patch: Patch) -> Vec<Patch> {
        let mut masks: Vec<_> = self.masks.iter_mut().map(|(f, p)| (f, p)).collect();
        for (j, c) in &patch.spans {
            let stale = &mut self.finest_stale[*j];
            *stale = if Range::is_empty(stale) {
                c.clone()
            } else {
                stale.start.min(c.start)..stale.end.max(c.end)
            };
        }
        let spans = pressure_mg_coarsen(&mut masks, flow.solid(), &flow.boundary, patch, false);
        for (l, ((level, (fluid, poisson)), patch)) in
            (self.levels.iter_mut().zip(&self.masks).zip(&spans)).enumerate()
        {
            let (nx, offset) = (level.nx as usize, level.offset as usize);
            let (mut was, mut now) = (0, 0);
            for (_, cells) in patch.row_cells(nx) {
                let span = offset + cells.start..offset + cells.end;
                was += self.solid[span.clone()].iter().filter(|&&s| s == 0).count() as u32;
                now += fluid[cells.clone()].iter().filter(|&&f| f).count() as u32;
                if l > 0 {
                    self.stencil[span.clone()].copy_from_slice(&poisson.cells[cells.clone()]);
                }
                for (byte, &f) in self.solid[span].iter_mut().zip(&fluid[cells]) {
                    *byte = u8::from(!f);
                }
            }
            level.fluid = level.fluid + now - was;
        }
        spans
    }

    /// The pooled cells to copy for the levels' cells `patches` (one a level, in order): each
    /// level's blocks of rows ([`Patch::row_blocks`], whole rows: the pieces), in the pool's
    /// order, a piece joined to the one before it, within a level or across levels, where the
    /// cells (bytes) between them are at most `join` and, where `at_most_a_piece` (copies from
    /// the host, whose bytes cost), at most the larger of the two pieces: the unchanged bytes
    /// sent along never outnumber the changed ones, so the gap between one level's piece and
    /// the next level's, mostly the rest of the first level, is not sent for a small disc.
    pub fn pooled_blocks(
        levels: &[InkLevel],
        patches: &[Patch],
        join: usize,
        at_most_a_piece: bool,
    ) -> Vec<Range<usize>> {
        let mut blocks: Vec<Range<usize>> = Vec::new();
        let mut piece = 0;
        for (level, patch) in levels.iter().zip(patches) {
            let (nx, offset) = (level.nx as usize, level.offset as usize);
            for rows in patch.row_blocks() {
                let cells = offset + rows.start * nx..offset + rows.end * nx;
                let limit = if at_most_a_piece {
                    join.min(piece.max(cells.len()))
                } else {
                    join
                };
                piece = cells.len();
                match blocks.last_mut() {
                    Some(last) if cells.start.saturating_sub(last.end) <= limit => {
                        last.end = cells.end
                    }
                    _ => blocks.push(cells),
                }
            }
        }
        blocks
    }

    /// Pooled cells of an `nx × ny` grid's levels.
    pub fn pooled_cells(nx: usize, ny: usize) -> usize {
        level_shapes(nx, ny, 1.0, vec![true; nx * ny])
            .iter()
            .map(|(x, y, _, _)| x * y)
            .sum()
    }

    /// The first level `pressure_mg_tail` runs: the first of at most `tail_cells` cells, else
    /// the coarsest.
    pub fn tail(levels: &[InkLevel], tail_cells: usize) -> usize {
        levels
            .iter()
            .position(|l| l.cells() <= tail_cells)
            .unwrap_or(levels.len() - 1)
    }
}
