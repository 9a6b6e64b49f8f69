//! The host side of obstacles changed on CUDA (`plan_walls`, `walls.rs`), without a GPU: the
//! host mirror, which takes the cells and marks the runs of rows the GPU is sent stale, must,
//! brought up to date after any number of substeps, equal a flow that took the change over
//! every row handed over each substep (`Flow::set_solid_rows`, the CPU's way); the plan's
//! count of cells solved for more (from the cells alone) and its rows whose cells changed (the
//! multigrid's) must be the CPU's.

use super::walls::{plan_walls, Mirror, WallMasks, WallPlan};
use crate::sims::ink::boundary::DIAGONAL_SHIFT;
use crate::sims::ink::boundary::{Boundary, MovingDisc, SideKind, BOTTOM};
use crate::sims::ink::fields::Flow;
use crate::sims::ink::patch::Patch;
use std::ops::Range;

/// The rows of cells whose centres a disc may cover, as `InkSim::rows_of` gives them.
pub(super) fn rows_of(flow: &Flow, d: &MovingDisc) -> Range<usize> {
    d.rows(flow.dx, flow.ny)
}

/// [`plan_walls`] for one run of rows.
pub(super) fn plan_rows(
    mirror: &mut Mirror,
    rows: Range<usize>,
    cells: &[bool],
    moving: Vec<MovingDisc>,
) -> WallPlan {
    plan_walls(mirror, &[(rows, cells)], moving)
}

/// The cells of the rows `rows`: painted, or covered by a disc.
pub(super) fn draw(
    flow: &Flow,
    painted: &[bool],
    discs: &[MovingDisc],
    rows: &Range<usize>,
) -> Vec<bool> {
    (rows.start * flow.nx..rows.end * flow.nx)
        .map(|k| {
            let (x, y) = flow.p.position(k % flow.nx, k / flow.nx);
            painted[k]
                || discs.iter().any(|d| {
                    let (ex, ey) = (x - d.center[0], y - d.center[1]);
                    ex * ex + ey * ey <= d.radius * d.radius
                })
        })
        .collect()
}

/// The cells (column, row) of the rows `rows` that `cells` changes in `flow`.
pub(super) fn changed_cells(
    flow: &Flow,
    rows: Range<usize>,
    cells: &[bool],
) -> Vec<(usize, usize)> {
    let nx = flow.nx;
    let was = &flow.solid()[rows.start * nx..rows.end * nx];
    (0..cells.len())
        .filter(|&k| cells[k] != was[k])
        .map(|k| (k % nx, rows.start + k / nx))
        .collect()
}

/// Every changed cell lies in `patch`, and no more: each run starts and ends on a changed cell,
/// and runs of a row are at least three cells apart.
pub(super) fn check_patch(patch: &Patch, changed: &[(usize, usize)], what: &str) {
    let spans: Vec<&(usize, Range<usize>)> = patch.spans.iter().collect();
    for &(i, j) in changed {
        assert!(
            spans.iter().any(|(row, c)| *row == j && c.contains(&i)),
            "{what}: the cell ({i}, {j}) changed outside {patch:?}"
        );
    }
    for (j, c) in &spans {
        let ends = [(c.start, *j), (c.end - 1, *j)];
        assert!(
            ends.iter().all(|end| changed.contains(end)),
            "{what}: the run {c:?} of row {j} beyond the cells that changed"
        );
    }
    for pair in spans.windows(2) {
        let ((a, c), (b, d)) = (pair[0], pair[1]);
        assert!(a < b || (a == b && c.end + 2 < d.start), "{what}: {pair:?}");
    }
}

pub(super) fn union(a: Range<usize>, b: Range<usize>) -> Range<usize> {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b,
        (_, true) => a,
        _ => a.start.min(b.start)..a.end.max(b.end),
    }
}

/// Discs moved as `InkSim::move_discs` hands them over: each substep the discs (`moving`, a
/// velocity of zero: resting) go from where they were to `path(step)`, and the rows of the
/// last substep's moving discs, the old and the new rows of each moved disc, and the rows of
/// the discs moving now are handed over at once (one range, so rows between far discs too).
/// After each: the mirror's cells, and its walls brought up to date (even substeps in a copy,
/// read while a guard of `Mirror::flow` is alive: the mirror's own stale rows pile up; odd
/// ones in place, its marks cleared, as a frame reads), equal the CPU flow's, the cells solved for
/// (counted from the start by the plans' `solved`) and the rows whose cells changed (`cells`)
/// are the CPU's; at the end the mirror brought up to date in place equals the CPU's too.
/// Returns the plans.
fn walk(
    flow: Flow,
    painted: &[bool],
    steps: usize,
    path: impl Fn(usize) -> Vec<MovingDisc>,
) -> Vec<WallPlan> {
    let mut discs = path(0);
    let mut flow = flow;
    flow.set_solid(draw(&flow, painted, &discs, &(0..flow.ny)));
    let solved = |flow: &Flow| {
        let cells = flow.poisson.cells.iter();
        cells.filter(|&&c| c >> DIAGONAL_SHIFT != 0).count() as isize
    };
    let mut solved_count = solved(&flow);
    let mut cpu = flow.clone();
    let mut mirror = Mirror::new(&flow);
    let mut last_moving = 0..0;
    let mut plans = Vec::new();
    for step in 1..=steps {
        let next = path(step);
        let mut rows = last_moving.clone();
        last_moving = 0..0;
        for (old, new) in discs.iter().zip(&next) {
            if old.center != new.center {
                rows = union(rows, rows_of(&cpu, old));
                rows = union(rows, rows_of(&cpu, new));
            }
            if new.velocity != [0.0; 2] {
                last_moving = union(last_moving, rows_of(&cpu, new));
            }
        }
        rows = union(rows, last_moving.clone());
        discs = next;
        let moving: Vec<MovingDisc> = discs
            .iter()
            .filter(|d| d.velocity != [0.0; 2])
            .copied()
            .collect();
        if rows.is_empty() {
            continue;
        }
        let cells = draw(&cpu, painted, &discs, &rows);
        let differ = changed_cells(&cpu, rows.clone(), &cells);
        cpu.moving = moving.clone();
        cpu.set_solid_rows(rows.clone(), &cells);
        let plan = plan_rows(&mut mirror, rows.clone(), &cells, moving);
        let want = WallMasks::of(&cpu);
        assert_eq!(
            mirror.flow_unguarded().solid(),
            cpu.solid(),
            "step {step}: the mirror's cells"
        );
        // Even substeps read while a guard is alive: a copy is brought up to date, the
        // mirror's stale rows stay (and pile up). Odd ones read as production does: in
        // place, the marks cleared, and the next substeps' plans must mark what they need.
        let mirrored = if step % 2 == 0 {
            let (guard, copies) = (mirror.flow(), mirror.copies());
            let read = WallMasks::of(&mirror.current()).differing(&want);
            drop(guard);
            assert_eq!(mirror.copies(), copies + 1, "step {step}: a copy read");
            read
        } else {
            let read = WallMasks::of(&mirror.current()).differing(&want);
            assert_eq!(mirror.stale_rows(), 0, "step {step}: read in place");
            read
        };
        assert!(
            mirrored.is_empty(),
            "step {step}, rows {rows:?}, runs {:?}: the mirror's {mirrored:?} differ from the \
             CPU's (a changed row not in a run)",
            plan.runs
        );
        assert_eq!(
            mirror.flow_unguarded().solid_cells(),
            cpu.solid_cells(),
            "step {step}"
        );
        solved_count += plan.solved;
        assert_eq!(solved_count, solved(&cpu), "step {step}: cells solved for");
        check_patch(&plan.cells, &differ, &format!("step {step}"));
        plans.push(plan);
    }
    let mirrored = WallMasks::of(mirror.up_to_date()).differing(&WallMasks::of(&cpu));
    assert!(mirrored.is_empty(), "at the end: the mirror's {mirrored:?}");
    plans
}

/// A disc stops high in the box while a brush paints low, handed over as `InkSim` does
/// (`with_discs_rows`: the brush's run, then the disc's): the disc's run is sent and its faces
/// rest though the brush's run came first (every run takes the discs moving before the
/// first), and the mirror brought up to date equals the CPU's.
#[test]
fn a_disc_stopping_far_from_a_brush_rests_its_faces_in_its_own_run() {
    let mut cpu = small_box();
    let (nx, ny) = (cpu.nx, cpu.ny);
    let disc = MovingDisc {
        center: [0.5, 0.45],
        radius: 0.06,
        velocity: [1.5, -0.8],
    };
    cpu.moving = vec![disc];
    cpu.set_solid(draw(&cpu, &vec![false; nx * ny], &[disc], &(0..ny)));
    let moving_faces = WallMasks::of(&cpu)
        .u_fixed
        .iter()
        .filter(|&&u| u != 0.0)
        .count();
    assert!(moving_faces > 10, "{moving_faces} faces move with the disc");
    let mut mirror = Mirror::new(&cpu);
    let brush = 4..6;
    let cells: Vec<bool> = (0..brush.len() * nx)
        .map(|k| (10..20).contains(&(k % nx)))
        .collect();
    let pieces = crate::sims::ink::solver::with_discs_rows(&cpu, brush.clone(), &cells, &[]);
    let pieces: Vec<(Range<usize>, &[bool])> = (pieces.iter())
        .map(|(rows, own)| (rows.clone(), own.as_deref().unwrap_or(&cells)))
        .collect();
    let disc_rows = rows_of(&cpu, &disc);
    let ranges: Vec<_> = pieces.iter().map(|(r, _)| r.clone()).collect();
    assert_eq!(ranges, vec![brush, disc_rows.clone()]);
    let plan = plan_walls(&mut mirror, &pieces, Vec::new());
    cpu.moving = Vec::new();
    for (rows, cells) in &pieces {
        cpu.set_solid_rows(rows.clone(), cells);
    }
    assert_eq!(plan.runs.last(), Some(&disc_rows), "{:?}", plan.runs);
    let mirrored = WallMasks::of(&mirror.current()).differing(&WallMasks::of(&cpu));
    assert!(mirrored.is_empty(), "the mirror's {mirrored:?} differ");
    let moving_faces = WallMasks::of(&cpu)
        .u_fixed
        .iter()
        .filter(|&&u| u != 0.0)
        .count();
    assert_eq!(moving_faces, 0, "the disc's faces rest");
}

/// A 96 × 64 box of 1 cm cells with an outflow side below (its v faces open beside fluid).
pub(super) fn small_box() -> Flow {
    let mut boundary = Boundary::default();
    boundary.sides[BOTTOM] = SideKind::Outflow;
    Flow::new(96, 64, 0.01, boundary)
}

/// A disc of 4 cm radius that jumps 16 cm a substep (twice its diameter: its old and new rows
/// are apart), upwards and across a painted strip, then stops where it is: every row it left
/// or reached has its walls sent, and once it stops the rows it rests on (no cell changes,
/// only its faces' velocities, which return to zero).
#[test]
fn a_disc_jumping_past_its_diameter_sends_every_row_that_changed() {
    let flow = small_box();
    let (nx, ny) = (flow.nx, flow.ny);
    let painted: Vec<bool> = (0..nx * ny)
        .map(|k| (40..44).contains(&(k % nx)) && k / nx > 20)
        .collect();
    let disc = |step: usize| {
        let s = step.min(3) as f32;
        vec![MovingDisc {
            center: [0.3 + 0.04 * s, 0.06 + 0.16 * s],
            radius: 0.04,
            velocity: if step < 4 { [2.4, 9.6] } else { [0.0; 2] },
        }]
    };
    let plans = walk(flow, &painted, 6, disc);
    assert_eq!(plans.len(), 4, "3 jumps and the stop");
    // The rows between the old and the new disc are not sent: two runs.
    assert!(
        plans[..3].iter().all(|p| p.runs.len() == 2),
        "{:?}",
        plans.iter().map(|p| &p.runs).collect::<Vec<_>>()
    );
}

/// Two discs whose rows overlap, moving different ways over painted cells (the cells both
/// cover take the first's velocity), then apart until rows lie between them, then one stops.
#[test]
fn two_discs_whose_rows_overlap_send_every_row_that_changed() {
    let flow = small_box();
    let (nx, ny) = (flow.nx, flow.ny);
    let painted: Vec<bool> = (0..nx * ny)
        .map(|k| (20..30).contains(&(k % nx)) && (k / nx) < 6 || k / nx == ny - 1)
        .collect();
    let discs = |step: usize| {
        let s = step as f32;
        vec![
            MovingDisc {
                center: [0.25 + 0.013 * s, 0.04 + 0.011 * s.min(3.0)],
                radius: 0.1,
                velocity: if step < 3 { [0.8, 0.66] } else { [0.0; 2] },
            },
            MovingDisc {
                center: [0.35 - 0.007 * s, 0.12 + 0.09 * s],
                radius: 0.08,
                velocity: [-0.42, 5.4],
            },
        ]
    };
    let plans = walk(flow, &painted, 5, discs);
    assert!(plans.iter().all(|p| !p.runs.is_empty()));
}

/// A cell painted that closes the last open side of a fluid cell walled in on three: that cell
/// (which did not change) is no longer solved for either, so the plan's count falls by two,
/// the CPU's; then the wall taken away again (back by two). The count is made from the cells
/// around the changed ones, not from the mirror's (stale) stencil.
#[test]
fn a_fluid_cell_walled_in_by_a_painted_cell_is_no_longer_solved_for() {
    let flow = Flow::new(16, 16, 0.01, Boundary::default());
    let nx = flow.nx;
    let solved = |flow: &Flow| {
        (0..nx * flow.ny)
            .filter(|&k| flow.poisson.solved(k))
            .count()
    };
    // The cell (5, 5) walled in left, below and above.
    let mut cells = vec![false; nx * flow.ny];
    for (i, j) in [(4, 5), (5, 4), (5, 6)] {
        cells[j * nx + i] = true;
    }
    let mut cpu = flow;
    cpu.set_solid(cells.clone());
    let mut mirror = Mirror::new(&cpu);
    for (wall, change) in [(true, -2), (false, 2)] {
        cells[5 * nx + 6] = wall;
        let rows = 5..6;
        let row = cells[5 * nx..6 * nx].to_vec();
        let was = solved(&cpu);
        cpu.set_solid_rows(rows.clone(), &row);
        assert_eq!(
            solved(&cpu) as isize - was as isize,
            change,
            "the CPU's count"
        );
        let plan = plan_rows(&mut mirror, rows, &row, Vec::new());
        assert_eq!(plan.solved, change, "wall {wall}: cells solved for more");
        let mirrored = WallMasks::of(&mirror.current()).differing(&WallMasks::of(&cpu));
        assert!(
            mirrored.is_empty(),
            "wall {wall}: the mirror's {mirrored:?}"
        );
    }
}
