//! What the host side of obstacles changed on CUDA costs at the CUDA default grid (2048²):
//! measurements that print ms and assert only that what they time is right (ignored; run
//! each with `cargo test --release --lib walls_timing::NAME -- --ignored --nocapture`).

use super::hierarchy::Hierarchy;
use super::walls::Mirror;
use super::walls_tests::{draw, plan_rows, rows_of, union};
use crate::sims::ink::boundary::{Boundary, MovingDisc};
use crate::sims::ink::fields::{Flow, FlowCopy};
use crate::sims::ink::patch::Patch;
use std::ops::Range;

/// The CUDA default grid (2048², 1/2048 m cells) at rest, and no painted cell.
fn grid() -> (Flow, Vec<bool>) {
    let n = 2048;
    (
        Flow::new(n, n, 1.0 / n as f32, Boundary::default()),
        vec![false; n * n],
    )
}

/// The `stir` preset's disc scaled to [`grid`] (radius 0.12 m, from (0.2, `y`) at `velocity`
/// m/s, 60 substeps a second) at substep `step`.
fn stir_disc(y: f32, velocity: [f32; 2], step: usize) -> MovingDisc {
    let t = step as f32 / 60.0;
    MovingDisc {
        center: [0.2 + velocity[0] * t, y + velocity[1] * t],
        radius: 0.12,
        velocity,
    }
}

/// The host side as it was (the baseline of [`host_side_cost`]): every row handed over set
/// again on the mirror (`Flow::set_solid_rows`: its masks, stencil, fixed velocities, and its
/// values closed), its cells and fixed velocities copied before and compared after, to find
/// the rows that changed. Returns them (first..last + 1).
fn every_row(
    mirror: &mut Flow,
    rows: Range<usize>,
    cells: &[bool],
    moving: Vec<MovingDisc>,
) -> Range<usize> {
    let (nx, ny) = (mirror.nx, mirror.ny);
    let u_span = |r: &Range<usize>| r.start * (nx + 1)..r.end * (nx + 1);
    let v_span = |r: &Range<usize>| r.start * nx..(r.end + 1).min(ny + 1) * nx;
    let old_solid = mirror.solid()[rows.start * nx..rows.end * nx].to_vec();
    let (old_u, old_v) = mirror.fixed();
    let (old_u, old_v) = (old_u[u_span(&rows)].to_vec(), old_v[v_span(&rows)].to_vec());
    mirror.moving = moving;
    mirror.set_solid_rows(rows.clone(), cells);
    let (new_u, new_v) = mirror.fixed();
    let (new_u, new_v) = (&new_u[u_span(&rows)], &new_v[v_span(&rows)]);
    let changed: Vec<usize> = (0..rows.len())
        .filter(|&r| {
            let (c, u) = (r * nx..(r + 1) * nx, r * (nx + 1)..(r + 1) * (nx + 1));
            let v = r * nx..((r + 2) * nx).min(new_v.len());
            old_solid[c.clone()] != cells[c]
                || old_u[u.clone()] != new_u[u]
                || old_v[v.clone()] != new_v[v]
        })
        .collect();
    match (changed.first(), changed.last()) {
        (Some(&a), Some(&b)) => rows.start + a..rows.start + b + 1,
        _ => 0..0,
    }
}

/// What the host side costs a substep at the CUDA default grid (2048², 1/2048 m cells): the
/// `stir` preset's disc scaled to it (radius 0.12 m, 0.6 m/s, 60 substeps a second: 20.5
/// cells a substep, 494 rows), and a disc that jumps 1.5 diameters a substep, by
/// `plan_walls` and as it was ([`every_row`]), interleaved; then, once the disc stopped, what
/// the mirror adds to a read-back ([`Mirror::current`]) when its stale rows are kept (a copy
/// brought up to date at every read) and in place (the first read redoes them, the next none).
/// Prints ms; no bound
/// (`cargo test --release --lib walls_timing::host_side_cost -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement: prints the host's ms per moving-disc substep"]
fn host_side_cost() {
    let (flow, painted) = grid();
    for (name, velocity) in [("stir's disc", [0.6, 0.0]), ("jumping", [0.0, 21.6])] {
        let at = |step: usize| stir_disc(0.15, velocity, step);
        let (mut mirror, mut before) = (Mirror::new(&flow), flow.clone());
        // The same again, read as a read-back was (its stale rows kept).
        let mut kept_mirror = Mirror::new(&flow);
        let mut old_seconds = 0.0;
        let steps = if velocity[1] > 0.0 { 2 } else { 6 };
        let (mut seconds, mut rows_sent, mut handed) = (0.0, 0, 0);
        for step in 1..=steps {
            let (old, new) = (at(step - 1), at(step));
            let rows = union(rows_of(&flow, &old), rows_of(&flow, &new));
            let cells = draw(&flow, &painted, &[new], &rows);
            let start = std::time::Instant::now();
            every_row(&mut before, rows.clone(), &cells, vec![new]);
            old_seconds += start.elapsed().as_secs_f64();
            let start = std::time::Instant::now();
            let plan = plan_rows(&mut mirror, rows.clone(), &cells, vec![new]);
            seconds += start.elapsed().as_secs_f64();
            plan_rows(&mut kept_mirror, rows.clone(), &cells, vec![new]);
            rows_sent += plan.runs.iter().map(|r| r.len()).sum::<usize>();
            handed += rows.len();
        }
        // The disc stops where it is: its rows handed over once more, none moving.
        let last = at(steps);
        let rows = rows_of(&flow, &last);
        let cells = draw(&flow, &painted, &[last], &rows);
        plan_rows(&mut mirror, rows.clone(), &cells, Vec::new());
        plan_rows(&mut kept_mirror, rows, &cells, Vec::new());
        let stale = mirror.stale_rows();
        let timed = |mirror: &Mirror| {
            let start = std::time::Instant::now();
            let flow = mirror.current();
            (start.elapsed().as_secs_f64(), flow)
        };
        let (first_read, first) = timed(&mirror);
        // Five rounds, interleaved (the machine is shared): a read-back as it was — a copy
        // brought up to date, the mirror's stale rows kept (what `Mirror::current` does while
        // a guard is alive), so every read pays them again — and one in place after the first.
        let (mut kept, mut second_read, mut lent) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            // A read-back that lends the mirror (`CudaInk::with_read_back`) after the first.
            let start = std::time::Instant::now();
            let solid = mirror.with_values(Default::default(), |flow| flow.solid_cells());
            lent = lent.min(start.elapsed().as_secs_f64());
            assert_eq!(solid, first.solid_cells());
            let guard = kept_mirror.flow();
            let (time, copy) = timed(&kept_mirror);
            drop(guard);
            kept = kept.min(time);
            assert!(copy.solid() == first.solid());
            let (time, second) = timed(&mirror);
            second_read = second_read.min(time);
            assert!(second.solid() == first.solid());
        }
        assert_eq!(kept_mirror.stale_rows(), stale);
        // The stale rows redone alone, no copy: what each read-back paid again.
        let start = std::time::Instant::now();
        kept_mirror.up_to_date();
        let redo = start.elapsed().as_secs_f64();
        println!(
            "{name}: {:.2} ms a substep on the host setting every row handed over again, \
             {:.2} ms by plan_walls; {} rows handed over, {} in runs. After the disc stopped \
             ({stale} rows stale), the mirror's part of a read-back: {:.2} ms each time when \
             its stale rows are kept (as it was; least of 5), {:.2} ms for the first read in \
             place, {:.2} ms for the next (the flow's copy alone, {} stale rows; least of 5), \
             {:.4} ms lent instead of copied (least of 5); the stale rows redone alone: {:.2} ms",
            1e3 * old_seconds / steps as f64,
            1e3 * seconds / steps as f64,
            handed / steps,
            rows_sent / steps,
            1e3 * kept,
            1e3 * first_read,
            1e3 * second_read,
            mirror.stale_rows(),
            1e3 * lent,
            1e3 * redo
        );
    }
}

/// What the multigrid's host copy of its hierarchy costs a substep at 2048² with the `stir`
/// disc scaled to it (as [`host_side_cost`]): `Hierarchy::update_cells` over the plan's
/// patches of changed cells (about 40 columns of each of the disc's rows), as `set_walls_rows`
/// calls it, and over whole rows (the rows whose cells changed, every column: as it was),
/// interleaved, each substep (least and median of 12 substeps); at the end both equal the
/// hierarchy built anew. Prints ms; no bound (`cargo test --release --lib
/// walls_timing::multigrid_host_cost -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement: prints the host's ms per moving-disc substep"]
fn multigrid_host_cost() {
    let (mut flow, painted) = grid();
    let n = flow.nx;
    let at = |step: usize| stir_disc(0.5, [0.6, 0.0], step);
    flow.set_solid(draw(&flow, &painted, &[at(0)], &(0..n)));
    let mut mirror = Mirror::new(&flow);
    let (mut by_cells, mut by_rows) = (Hierarchy::new(&flow), Hierarchy::new(&flow));
    let (mut cells_times, mut rows_times, mut columns) = (Vec::new(), Vec::new(), 0);
    for step in 1..=12 {
        let rows = union(rows_of(&flow, &at(step - 1)), rows_of(&flow, &at(step)));
        let cells = draw(&flow, &painted, &[at(step)], &rows);
        flow.moving = vec![at(step)];
        assert!(flow.set_solid_rows(rows.clone(), &cells));
        let plan = plan_rows(&mut mirror, rows, &cells, vec![at(step)]);
        columns += plan.cells.spans.iter().map(|(_, c)| c.len()).sum::<usize>();
        let start = std::time::Instant::now();
        by_cells.update_cells(&flow, plan.cells.clone());
        cells_times.push(start.elapsed().as_secs_f64());
        let start = std::time::Instant::now();
        by_rows.update_cells(&flow, Patch::rectangle(plan.cells.rows(), 0..n));
        rows_times.push(start.elapsed().as_secs_f64());
    }
    let start = std::time::Instant::now();
    by_cells.stencil(&flow);
    let read = start.elapsed().as_secs_f64();
    assert!(
        by_cells.is_anew(&flow),
        "the hierarchy set by patches, then read"
    );
    assert!(
        by_rows.is_anew(&flow),
        "the hierarchy set by rows, then read"
    );
    let ms = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        (1e3 * times[0], 1e3 * times[times.len() / 2])
    };
    let (cells, rows) = (ms(&mut cells_times), ms(&mut rows_times));
    println!(
        "the multigrid's host hierarchy, stir's disc at 2048² ({} cells changed a substep): by \
         the changed cells {:.3} ms least, {:.3} ms median a substep; by whole rows {:.2} ms least, \
         {:.2} ms median; its finest stencil brought up to date after the 12: {:.2} ms",
        columns / 12,
        cells.0,
        cells.1,
        rows.0,
        rows.1,
        1e3 * read
    );
}

/// What an exported frame's copy of the flow costs at 2048² with the `stir` disc scaled to it,
/// moved 6 substeps then stopped (its rows stale, as [`host_side_cost`]): the frame as it was
/// (`CudaInk::read_back`: [`Mirror::current`], the mirror brought up to date and its masks,
/// stencil and fixed velocities copied), and as it is (`CudaInk::read_back_cells`:
/// `FlowCopy::with_values`, the cells alone); on the CPU the whole flow cloned (values too) against
/// the cells and the values. Least of 5, interleaved. Prints ms and MB; no bound.
#[test]
#[ignore = "a measurement: prints a frame's ms for its copy of the flow"]
fn frame_copy_cost() {
    let (mut flow, painted) = grid();
    let n = flow.nx;
    let at = |step: usize| MovingDisc {
        velocity: if step < 6 { [0.6, 0.0] } else { [0.0; 2] },
        ..stir_disc(0.5, [0.6, 0.0], step)
    };
    flow.set_solid(draw(&flow, &painted, &[at(0)], &(0..n)));
    let mut mirror = Mirror::new(&flow);
    for step in 1..=6 {
        let rows = union(rows_of(&flow, &at(step - 1)), rows_of(&flow, &at(step)));
        let cells = draw(&flow, &painted, &[at(step)], &rows);
        let moving: Vec<MovingDisc> = [at(step)]
            .into_iter()
            .filter(|d| d.velocity != [0.0; 2])
            .collect();
        flow.moving = moving.clone();
        flow.set_solid_rows(rows.clone(), &cells);
        plan_rows(&mut mirror, rows, &cells, moving);
    }
    let stale = mirror.stale_rows();
    fn least<T>(best: &mut f64, f: &mut dyn FnMut() -> T) -> T {
        let start = std::time::Instant::now();
        let copy = f();
        *best = best.min(start.elapsed().as_secs_f64());
        copy
    }
    let mut t = [f64::INFINITY; 4];
    let mut first_read = None;
    for _ in 0..5 {
        let old = least(&mut t[0], &mut || mirror.current());
        first_read.get_or_insert(t[0]);
        // The values as downloaded (outside the timing, as the download is).
        let mut values = Some([(n + 1) * n, (n + 1) * n, n * n].map(|k| vec![0.0; k]));
        let new = least(&mut t[1], &mut || {
            FlowCopy::with_values(&mirror.flow(), values.take().expect("one copy"))
        });
        assert!(old.solid() == new.view().solid && old.solid() == flow.solid());
        let old = least(&mut t[2], &mut || flow.clone());
        let new = least(&mut t[3], &mut || FlowCopy::of(&flow));
        assert!(old.u.data == new.view().u.data && old.solid() == new.view().solid);
    }
    let (faces, cells) = ((n + 1) * n, n * n);
    // Solid, open (u, v), fixed (u, v: f32), stencil and plain rows.
    let masks = cells + 2 * faces + 2 * 4 * faces + cells + n;
    let values = 4 * (2 * faces + cells);
    println!(
        "a frame's copy of the flow at 2048² (stir's disc stopped, {stale} rows stale): CUDA \
         {:.2} ms as it was (the mirror's masks, {:.1} MB; the first read, redoing the stale \
         rows, {:.2} ms), {:.2} ms the cells alone ({:.1} MB); CPU {:.2} ms the whole flow \
         ({:.1} MB), {:.2} ms the cells and values ({:.1} MB). Least of 5.",
        1e3 * t[0],
        masks as f64 / 1e6,
        1e3 * first_read.unwrap_or(0.0),
        1e3 * t[1],
        cells as f64 / 1e6,
        1e3 * t[2],
        (masks + values) as f64 / 1e6,
        1e3 * t[3],
        (cells + values) as f64 / 1e6,
    );
}

/// What `plan_walls` costs a substep at 2048² with the `stir` disc scaled to it (494 rows handed
/// over, about 40 cells of each changed): least and median of 40 substeps. Prints ms; no bound
/// (`cargo test --release --lib walls_timing::plan_walls_cost -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement: prints plan_walls' ms per moving-disc substep"]
fn plan_walls_cost() {
    let (flow, painted) = grid();
    let at = |step: usize| stir_disc(0.5, [0.6, 0.0], step);
    let mut mirror = Mirror::new(&flow);
    let mut times = Vec::new();
    for step in 1..=40 {
        let rows = union(rows_of(&flow, &at(step - 1)), rows_of(&flow, &at(step)));
        let cells = draw(&flow, &painted, &[at(step)], &rows);
        let start = std::time::Instant::now();
        let plan = plan_rows(&mut mirror, rows, &cells, vec![at(step)]);
        times.push(start.elapsed().as_secs_f64());
        assert!(step == 1 || !plan.cells.spans.is_empty(), "step {step}");
    }
    times.sort_by(f64::total_cmp);
    println!(
        "plan_walls, stir's disc at 2048²: {:.3} ms least, {:.3} ms median a substep (40)",
        1e3 * times[0],
        1e3 * times[times.len() / 2]
    );
}
