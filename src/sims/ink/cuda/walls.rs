//! Obstacles changed on CUDA — cells painted, a disc moved (docs/ink-walls.md): the rows
//! that may have changed are found from what is known, the cells that differ and the rows near
//! a disc moving before or now ([`plan_walls`]); the host mirror takes the cells and marks
//! those rows' masks stale ([`Mirror`]: brought up to date when something reads them); their
//! solid bytes and the moving discs' records are sent up, the kernel `wall_rows` derives the
//! rows' open masks, stencil and closed faces' fixed velocities from them on the GPU (the
//! CPU's `Flow::wall_rows`, the same formulas), and `close_walls` closes the rows' faces and
//! zeroes their solid cells' pressure. No velocity comes back and nothing is waited for
//! explicitly: a disc moving every substep keeps the frame's one synchronisation
//! (`end_frame`).
//!
//! The copies (`cuMemcpyHtoDAsync`) are from pageable host memory. The driver stages such a
//! buffer's bytes before the call returns, so a buffer may be changed or freed as soon as the
//! call is back; [`WallRows`] holds its vectors only to reuse their allocations. The price: CUDA
//! documents a pageable copy as possibly synchronous with respect to the host ("API
//! synchronization behavior"), so a large one can block until the stream reaches it. When
//! cells change the multigrid's masks follow by the changed cells
//! (`GpuMultigrid::update_cells`: the finest level copied on the GPU from the rows' masks, the
//! coarser levels' rows under the changed cells sent: about 0.17 MB a substep for the `stir`
//! disc at 1414 × 707, where the whole hierarchy was 2 × 1.33 bytes a cell, 2.67 MB). The
//! flow's rows are 1 byte a cell (about 0.25 MB a substep there; the host's masks, stencil and
//! fixed velocities, 12 bytes a cell, were about 2.95 MB).

use super::kernels::{per_point, InkGrid, InkKernels};
use super::CudaInk;
use crate::cuda::CudaError;
use crate::sims::ink::boundary::{MovingDisc, BOTTOM, LEFT, RIGHT, TOP};
use crate::sims::ink::fields::Flow;
use crate::sims::ink::params::PressureSolver;
use crate::sims::ink::patch::Patch;
use cudarc::driver::{CudaSlice, CudaStream};
use std::cell::{Cell, Ref, RefCell};
use std::ops::Range;

/// The host side of what `set_walls` sends (the rows' solid bytes, the moving discs' records),
/// kept between calls only so that their allocations are reused.
#[derive(Default)]
pub(super) struct WallRows {
    solid: Vec<u8>,
    discs: Vec<f32>,
}

impl InkKernels {
    /// From the solid cells of the rows `rows`: their open masks (the u faces of those rows, the
    /// v faces below and above them) and their cells' stencil, and the fixed velocities of the
    /// faces of the rows `fixed` (`discs`: the moving discs' records, centre, radius and
    /// velocity, `n` of them), as the CPU's `Flow::wall_rows` sets them.
    pub fn wall_rows(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        (rows, fixed): (Range<usize>, Range<usize>),
        (solid, discs, n): (&CudaSlice<u8>, &CudaSlice<f32>, usize),
        (u_open, v_open, stencil): (&mut CudaSlice<u8>, &mut CudaSlice<u8>, &mut CudaSlice<u8>),
        (u_fixed, v_fixed): (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        assert!(
            rows.start < rows.end && rows.end <= g.ny as usize,
            "{rows:?}"
        );
        assert!(discs.len() >= 5 * n, "{n} discs in {} floats", discs.len());
        let (j0, j1) = (rows.start as i32, rows.end as i32);
        let (f0, f1) = (fixed.start as i32, fixed.end as i32);
        let n = n as i32;
        let points = (g.nx as usize + 1) * (rows.len() + 1);
        let args = (
            g, &j0, &j1, &f0, &f1, solid, discs, &n, u_open, v_open, stencil, u_fixed, v_fixed,
        );
        // SAFETY: ink.cu's parameters; the face and cell arrays are the grid's, the points cover
        // rows j0..=j1 ≤ ny of the v faces, j0..j1 of the u faces and cells, and `discs` holds
        // n records of five floats.
        unsafe { self.launch("wall_rows", stream, per_point(points), args) }
    }

    /// The closed faces of the rows of cells `rows` (their u faces, the v faces below and above
    /// them) to their fixed velocities, the pressure of their solid cells to zero.
    pub fn close_walls(
        &self,
        stream: &CudaStream,
        g: &InkGrid,
        rows: Range<usize>,
        (u, v, p): (
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
        ),
        (u_open, v_open, solid): (&CudaSlice<u8>, &CudaSlice<u8>, &CudaSlice<u8>),
        (u_fixed, v_fixed): (&CudaSlice<f32>, &CudaSlice<f32>),
    ) -> Result<(), CudaError> {
        assert!(
            rows.start < rows.end && rows.end <= g.ny as usize,
            "{rows:?}"
        );
        let (j0, j1) = (rows.start as i32, rows.end as i32);
        let points = (g.nx as usize + 1) * (rows.len() + 1);
        let args = (
            g, &j0, &j1, u, v, p, u_open, v_open, solid, u_fixed, v_fixed,
        );
        // SAFETY: ink.cu's parameters; the face and cell arrays are the grid's, and the points
        // cover rows j0..=j1 ≤ ny of the v faces, j0..j1 of the u faces and cells.
        unsafe { self.launch("close_walls", stream, per_point(points), args) }
    }
}

impl CudaInk {
    /// Makes the cells where `solid` solid: the faces beside them close, the pressure there is
    /// zeroed and the stencil follows (as `CpuInk::set_solid`), through [`CudaInk::set_walls`]
    /// for every row.
    pub fn set_solid(&mut self, solid: Vec<bool>) -> Result<(), CudaError> {
        let mirror = self.mirror.flow_unguarded();
        let (ny, moving) = (mirror.ny, mirror.moving.clone());
        self.set_walls(0..ny, &solid, moving)
    }

    /// [`CudaInk::set_solid`] for the rows of cells `rows` only (`cells`: those rows' cells), with
    /// the discs `moving` moving, as `CpuInk::set_walls`: the host mirror takes the cells and marks
    /// stale the rows that may have changed ([`plan_walls`]: cells that differ, rows near a disc
    /// moving before or now); for each run of them the solid bytes (and one row either side) are
    /// sent, after the moving discs' records, `wall_rows` derives their masks, stencil and fixed
    /// velocities on the GPU and `close_walls` closes their faces. Enqueued only: nothing waits.
    pub fn set_walls(
        &mut self,
        rows: Range<usize>,
        cells: &[bool],
        moving: Vec<MovingDisc>,
    ) -> Result<(), CudaError> {
        self.set_walls_rows(&[(rows, cells)], moving)
    }

    /// [`CudaInk::set_walls`] for several runs of rows at once (`pieces`: each run's rows and
    /// their cells, in order, more than two rows apart), the discs `moving` moving.
    pub fn set_walls_rows(
        &mut self,
        pieces: &[(Range<usize>, &[bool])],
        moving: Vec<MovingDisc>,
    ) -> Result<(), CudaError> {
        let plan = plan_walls(&mut self.mirror, pieces, moving);
        if plan.runs.is_empty() {
            return Ok(());
        }
        self.solved_cells = (self.solved_cells as isize + plan.solved) as usize;
        let mirror = self.mirror.flow_unguarded();
        let (nx, ny) = (mirror.nx, mirror.ny);
        // Each run's rows and one either side (the stencil beside a changed cell, the v faces
        // above the run's last row): their solid bytes, one buffer for every run.
        let sent = |run: &Range<usize>| run.start.saturating_sub(1)..(run.end + 1).min(ny);
        let host = &mut self.wall_rows;
        host.solid.clear();
        for run in &plan.runs {
            let cells = sent(run).start * nx..sent(run).end * nx;
            host.solid
                .extend(mirror.solid()[cells].iter().map(|&s| u8::from(s)));
        }
        host.discs.clear();
        for d in &mirror.moving {
            host.discs.extend([
                d.center[0],
                d.center[1],
                d.radius,
                d.velocity[0],
                d.velocity[1],
            ]);
        }
        let (s, b) = (&self.stream, &mut self.buffers);
        let up = CudaError::driver("copying the obstacles' rows to the GPU");
        if b.wall_discs.len() < host.discs.len() {
            b.wall_discs = s.alloc_zeros(host.discs.len()).map_err(&up)?;
        }
        if !host.discs.is_empty() {
            s.memcpy_htod(
                &host.discs,
                &mut b.wall_discs.slice_mut(0..host.discs.len()),
            )
            .map_err(&up)?;
        }
        let mut offset = 0;
        for run in &plan.runs {
            let rows = sent(run);
            let cells = rows.start * nx..rows.end * nx;
            let bytes = &host.solid[offset..offset + cells.len()];
            offset += cells.len();
            s.memcpy_htod(bytes, &mut b.solid.slice_mut(cells))
                .map_err(&up)?;
            // The fixed velocities the mirror set again: the run's (its u faces, the v faces
            // of run.start..=run.end); the GPU keeps its own (the mirror's) elsewhere.
            self.kernels.wall_rows(
                s,
                &self.grid,
                (rows.clone(), run.clone()),
                (&b.solid, &b.wall_discs, mirror.moving.len()),
                (&mut b.u_open, &mut b.v_open, &mut b.stencil),
                (&mut b.u_fixed, &mut b.v_fixed),
            )?;
            self.kernels.close_walls(
                s,
                &self.grid,
                rows,
                (&mut b.u, &mut b.v, &mut b.p),
                (&b.u_open, &b.v_open, &b.solid),
                (&b.u_fixed, &b.v_fixed),
            )?;
        }
        let changed = !plan.cells.spans.is_empty();
        if self.params.pressure_solver != PressureSolver::Multigrid {
            b.multigrid.current &= !changed;
        }
        if changed {
            b.multigrid
                .update_cells(s, mirror, plan.cells, (&b.solid, &b.stencil))?;
        }
        Ok(())
    }
}

/// What follows from the solid cells on one side, for the parity checks: the open masks, the
/// solid bytes and the stencil, the closed faces' fixed velocities.
#[derive(Clone, Debug, PartialEq)]
pub struct WallMasks {
    pub u_open: Vec<u8>,
    pub v_open: Vec<u8>,
    pub solid: Vec<u8>,
    pub stencil: Vec<u8>,
    pub u_fixed: Vec<f32>,
    pub v_fixed: Vec<f32>,
}

impl WallMasks {
    /// The CPU's (`flow`'s).
    pub fn of(flow: &Flow) -> WallMasks {
        let (nx, ny) = (flow.nx, flow.ny);
        let (u_fixed, v_fixed) = flow.fixed();
        WallMasks {
            u_open: (0..(nx + 1) * ny)
                .map(|k| u8::from(flow.u_open(k % (nx + 1), k / (nx + 1))))
                .collect(),
            v_open: (0..nx * (ny + 1))
                .map(|k| u8::from(flow.v_open(k % nx, k / nx)))
                .collect(),
            solid: flow.solid().iter().map(|&s| u8::from(s)).collect(),
            stencil: flow.poisson.cells.clone(),
            u_fixed: u_fixed.to_vec(),
            v_fixed: v_fixed.to_vec(),
        }
    }

    /// The names of the arrays that differ from `other`'s.
    pub fn differing(&self, other: &WallMasks) -> Vec<&'static str> {
        [
            ("u_open", self.u_open == other.u_open),
            ("v_open", self.v_open == other.v_open),
            ("solid", self.solid == other.solid),
            ("stencil", self.stencil == other.stencil),
            ("u_fixed", self.u_fixed == other.u_fixed),
            ("v_fixed", self.v_fixed == other.v_fixed),
        ]
        .into_iter()
        .filter(|&(_, equal)| !equal)
        .map(|(name, _)| name)
        .collect()
    }
}

impl CudaInk {
    /// The walls' arrays on the GPU ([`WallMasks`]).
    pub fn wall_masks(&self) -> Result<WallMasks, CudaError> {
        let (s, b) = (&self.stream, &self.buffers);
        let read = CudaError::driver("copying the walls' masks from the GPU");
        Ok(WallMasks {
            u_open: s.clone_dtoh(&b.u_open).map_err(&read)?,
            v_open: s.clone_dtoh(&b.v_open).map_err(&read)?,
            solid: s.clone_dtoh(&b.solid).map_err(&read)?,
            stencil: s.clone_dtoh(&b.stencil).map_err(&read)?,
            u_fixed: s.clone_dtoh(&b.u_fixed).map_err(&read)?,
            v_fixed: s.clone_dtoh(&b.v_fixed).map_err(&read)?,
        })
    }
}

/// What [`CudaInk::set_walls`] sends once the host mirror has taken a change
/// ([`plan_walls`]).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct WallPlan {
    /// The runs of rows whose masks or closed faces' velocities may have changed, in order,
    /// apart.
    pub runs: Vec<Range<usize>>,
    /// The cells that changed (runs of columns less than three cells apart joined), every run
    /// handed over in one patch, so the multigrid's levels follow once a substep however
    /// scattered the changes (`GpuMultigrid::update_cells`); rows between runs are in none.
    pub cells: Patch,
    /// How many more cells the pressure is solved for.
    pub solved: isize,
}

/// CUDA's host mirror of the flow: its shape, its solid cells (and their count) and its moving
/// discs are current, its values (velocity, pressure) are not kept; what follows from the cells —
/// the open masks, the stencil, the closed faces' fixed velocities, which the GPU derives for
/// itself (`wall_rows`) — is taken by the rows `stale` only when read: [`Mirror::current`]
/// (`read_back`, the parity checks'; `with_state` lends the mirror: the picture's host-copy
/// fallback, the panels; a frame copies only the cells, `FlowCopy`) or
/// [`Mirror::up_to_date`], which set those rows again in the mirror itself and clear their
/// marks, so a row is redone once
/// after it changed, not at every read. A moving disc's substep then costs the host its rows'
/// cells, not their masks (docs/ink-walls.md, "The host mirror's masks are taken when read").
/// The stale rows are set again from the cells and the discs moving when read; as
/// [`plan_walls`] marks every row a disc moving before or now covers, that is what setting them
/// at once would have left (`walls_tests.rs` checks it after several substeps).  The flow sits
/// in a `RefCell` so that a read through `&self` (`InkSolver::with_state`) updates it in place;
/// [`Mirror::flow`] lends it behind a guard, and a read made while such a guard is alive brings
/// a copy up to date instead (slower, never a panic).
pub(super) struct Mirror {
    inner: RefCell<Inner>,
    /// How many reads brought a copy up to date (a guard of [`Mirror::flow`] alive): each such
    /// read redoes the stale rows again. The first is logged.
    copies: Cell<usize>,
}

struct Inner {
    flow: Flow,
    /// Rows whose masks, stencil and fixed velocities have not taken their cells' change.
    stale: Vec<bool>,
}

impl Inner {
    /// The values (u, v, p) taken out: they live on the GPU and are only lent in for a
    /// read-back ([`Mirror::with_values`]).
    fn drop_values(&mut self) {
        let flow = &mut self.flow;
        for field in [&mut flow.u, &mut flow.v, &mut flow.p] {
            field.data = Vec::new();
        }
    }

    /// The stale rows' masks, stencil and fixed velocities taken from their cells now.
    fn up_to_date(&mut self) {
        let ny = self.flow.ny;
        let mut j = 0;
        while j < ny {
            if !self.stale[j] {
                j += 1;
                continue;
            }
            let start = j;
            while j < ny && self.stale[j] {
                self.stale[j] = false;
                j += 1;
            }
            self.flow.walls_again_rows(start..j);
        }
    }
}

impl Mirror {
    /// A mirror of `flow`, its masks current, its values not copied (they live on the GPU: a
    /// read-back downloads them into the copy, which then need not copy stale ones first).
    pub fn new(flow: &Flow) -> Mirror {
        let flow = flow.without_values();
        let stale = vec![false; flow.ny];
        Mirror {
            inner: RefCell::new(Inner { flow, stale }),
            copies: Cell::new(0),
        }
    }

    /// The flow: its shape, solid cells and moving discs current, its masks maybe not
    /// ([`Mirror::current`]), behind a guard.
    pub fn flow(&self) -> Ref<'_, Flow> {
        Ref::map(self.inner.borrow(), |inner| &inner.flow)
    }

    /// [`Mirror::flow`] through `&mut self`: no guard.
    pub fn flow_unguarded(&mut self) -> &Flow {
        &self.inner.get_mut().flow
    }

    /// The stale rows' masks, stencil and fixed velocities taken from their cells now.
    #[cfg(test)]
    pub fn up_to_date(&mut self) -> &Flow {
        let inner = self.inner.get_mut();
        inner.up_to_date();
        &inner.flow
    }

    /// How many reads brought a copy up to date ([`Mirror::current`] while a guard was alive).
    #[cfg(test)]
    pub fn copies(&self) -> usize {
        self.copies.get()
    }

    /// How many rows' masks have not taken their cells' change (what the next read redoes).
    #[cfg(test)]
    pub fn stale_rows(&self) -> usize {
        self.inner.borrow().stale.iter().filter(|&&s| s).count()
    }

    /// A copy of the flow with its masks current: the mirror brought up to date first, in
    /// place, unless a guard of [`Mirror::flow`] is alive (then a copy is brought up to date).
    pub fn current(&self) -> Flow {
        match self.inner.try_borrow_mut() {
            Ok(mut inner) => {
                inner.drop_values();
                inner.up_to_date();
                inner.flow.clone()
            }
            Err(_) => {
                let copies = self.copies.get() + 1;
                self.copies.set(copies);
                if copies == 1 {
                    eprintln!("{}", super::MIRROR_COPIED);
                }
                let inner = self.inner.borrow();
                let mut copy = Inner {
                    flow: inner.flow.clone(),
                    stale: inner.stale.clone(),
                };
                copy.up_to_date();
                copy.flow
            }
        }
    }
}

impl Mirror {
    /// Calls `f` with the flow, its masks current and the values `values` (u, v, p, as
    /// downloaded) in it for the call: the mirror itself brought up to date and lent, no copy
    /// (`read_back` copied its ~50 MB of masks at 2048² every time), unless a guard of
    /// [`Mirror::flow`] is alive (then [`Mirror::current`]'s copy, counted). During `f` the
    /// mirror is lent shared: a guard taken there is fine, and a read-back there reads a copy.
    pub fn with_values<R>(&self, values: [Vec<f32>; 3], f: impl FnOnce(&Flow) -> R) -> R {
        let [u, v, p] = values;
        let Ok(mut inner) = self.inner.try_borrow_mut() else {
            let mut copy = self.current();
            (copy.u.data, copy.v.data, copy.p.data) = (u, v, p);
            return f(&copy);
        };
        inner.up_to_date();
        (inner.flow.u.data, inner.flow.v.data, inner.flow.p.data) = (u, v, p);
        drop(inner);
        // The values leave when the call ends, also by a panic; a guard `f` handed out and kept
        // keeps them in until the next `current` drops them.
        let _leave = ValuesLeave(&self.inner);
        let lent = self.inner.borrow();
        let result = f(&lent.flow);
        drop(lent);
        result
    }
}

/// Takes the values (u, v, p) out of the mirror's flow when dropped, unless it is lent.
struct ValuesLeave<'a>(&'a RefCell<Inner>);

impl Drop for ValuesLeave<'_> {
    fn drop(&mut self) {
        if let Ok(mut inner) = self.0.try_borrow_mut() {
            inner.drop_values();
        }
    }
}

/// The host side of [`CudaInk::set_walls_rows`], for runs of rows `pieces` (each run's rows and
/// their cells, in order, more than two rows apart: the rows sent one beyond each run stay apart,
/// and so do the rows whose solved cells each run counts; the discs moving before are the mirror's
/// before the first run, for every run): which rows handed over may have changed is found from what
/// is known, without working out any row's masks — a row whose cells differ from the mirror's, and
/// a row a disc moving before (the mirror's `moving`) or now (`moving`) may cover
/// ([`MovingDisc::rows`]: a face's fixed velocity follows the cells beside it, and the v faces
/// above a run's last row and the stencil a row either side are set with the run, as on the CPU).
/// The mirror takes the rows' cells; those rows' masks are marked stale ([`Mirror`]); a row handed
/// over whose cells are the same and that no moving disc covers, before or now, keeps its masks and
/// its fixed velocities, which follow from its cells and the discs over it (rows between a disc's
/// old and new place when it jumps, rows between far discs). The runs of those rows (gaps of at
/// most two rows filled: the rows sent go one beyond a run) are what is sent. The change in the
/// cells solved for is counted from the cells alone, over the cells that changed and those
/// beside them ([`solved_in`], [`Patch::around`]).
pub(super) fn plan_walls(
    mirror: &mut Mirror,
    pieces: &[(Range<usize>, &[bool])],
    moving: Vec<MovingDisc>,
) -> WallPlan {
    let Inner { flow, stale } = mirror.inner.get_mut();
    let before = std::mem::replace(&mut flow.moving, moving);
    let mut plan = WallPlan {
        runs: Vec::new(),
        cells: Patch::default(),
        solved: 0,
    };
    let mut last_end = None;
    for (rows, cells) in pieces {
        if let Some(end) = last_end {
            assert!(rows.start > end + 2, "runs of rows {pieces:?} not apart");
        }
        last_end = Some(rows.end);
        plan_run(flow, stale, &before, rows.clone(), cells, &mut plan);
    }
    plan
}

/// One run of rows of [`plan_walls`], its runs, rows whose cells changed and cells solved
/// for added to `plan`.
fn plan_run(
    flow: &mut Flow,
    stale: &mut [bool],
    before: &[MovingDisc],
    rows: Range<usize>,
    cells: &[bool],
    plan: &mut WallPlan,
) {
    let (nx, ny) = (flow.nx, flow.ny);
    assert!(rows.end <= ny, "rows {rows:?} of {ny}");
    assert_eq!(cells.len(), rows.len() * nx, "the cells of rows {rows:?}");
    let mut near = vec![false; rows.len()];
    // The cells that changed: their solved state and their neighbours' may change.
    let mut changed = Patch::default();
    let was = &flow.solid()[rows.start * nx..rows.end * nx];
    for (r, (now, was)) in cells.chunks_exact(nx).zip(was.chunks_exact(nx)).enumerate() {
        if now != was {
            near[r] = true;
            let j = rows.start + r;
            changed
                .spans
                .extend(differing_runs(now, was).into_iter().map(|c| (j, c)));
        }
    }
    let around = changed.around(nx, ny);
    plan.cells.spans.append(&mut changed.spans);
    for d in before.iter().chain(&flow.moving) {
        let span = d.rows(flow.dx, ny);
        for j in span.start.max(rows.start)..span.end.min(rows.end) {
            near[j - rows.start] = true;
        }
    }
    let runs = &mut plan.runs;
    let first = runs.len();
    for j in (0..rows.len()).filter(|&r| near[r]).map(|r| rows.start + r) {
        match runs.last_mut() {
            Some(run) if j <= run.end + 2 => run.end = j + 1,
            _ => runs.push(j..j + 1),
        }
    }
    let solved_was = solved_in(flow, &around) as isize;
    flow.set_cells_rows(rows, cells);
    let solved_now = solved_in(flow, &around) as isize;
    for run in &runs[first..] {
        stale[run.clone()].fill(true);
    }
    plan.solved += solved_now - solved_was;
}

/// The runs of columns where the rows `now` and `was` differ, in order (runs less than three
/// cells apart joined): 32 cells compared at once, the cells of the blocks that differ one by
/// one.
fn differing_runs(now: &[bool], was: &[bool]) -> Vec<Range<usize>> {
    const BLOCK: usize = 32;
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (b, (now, was)) in now.chunks(BLOCK).zip(was.chunks(BLOCK)).enumerate() {
        if now == was {
            continue;
        }
        for i in (0..now.len()).filter(|&i| now[i] != was[i]) {
            let i = b * BLOCK + i;
            match runs.last_mut() {
                Some(run) if i <= run.end + 2 => run.end = i + 1,
                _ => runs.push(i..i + 1),
            }
        }
    }
    runs
}

/// The cells solved for (`Poisson::solved`: a fluid cell with a fluid neighbour in the box or
/// an outflow side beside it) among the cells `patch`, from the solid cells alone.
fn solved_in(flow: &Flow, patch: &Patch) -> usize {
    let (nx, ny, solid) = (flow.nx, flow.ny, flow.solid());
    let b = &flow.boundary;
    let mut count = 0;
    for (j, span) in &patch.spans {
        let j = *j;
        for i in span.clone() {
            let k = j * nx + i;
            let side = |inside: bool, n: usize, side: usize| {
                if inside {
                    !solid[n]
                } else {
                    b.dirichlet(side)
                }
            };
            let solved = !solid[k]
                && (side(i > 0, k.wrapping_sub(1), LEFT)
                    || side(i + 1 < nx, k + 1, RIGHT)
                    || side(j > 0, k.wrapping_sub(nx), BOTTOM)
                    || side(j + 1 < ny, k + nx, TOP));
            count += usize::from(solved);
        }
    }
    count
}
