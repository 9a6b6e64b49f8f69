//! The multigrid's host hierarchy (`multigrid.rs`'s `Hierarchy`) set again by the patches of
//! changed cells that `plan_walls` hands over (`walls.rs`), without a GPU: it must equal the
//! hierarchy built anew, and far-apart runs must leave the rows between them alone.

use super::hierarchy::{Hierarchy, JOIN_BYTES, JOIN_DEVICE_BYTES};
use super::walls::{plan_walls, Mirror};
use super::walls_tests::{changed_cells, check_patch, draw, plan_rows, rows_of, small_box, union};
use crate::sims::ink::boundary::{Boundary, MovingDisc};
use crate::sims::ink::fields::Flow;
use crate::sims::ink::patch::Patch;
use std::ops::Range;

/// The multigrid's host hierarchy set again by the plans' patches of changed cells
/// (`Hierarchy::update_cells`, as `set_walls_rows` does) over 40 substeps of two discs
/// crossing a painted strip on a grid of odd sides (the coarse levels' last cells have one
/// child along them), one jumping past its diameter, then stopping: after every substep its
/// levels (fluid counts, offsets) and every fifth its pooled bytes and masks, brought up to
/// date, are the hierarchy built anew from the cells.
#[test]
fn a_hierarchy_set_by_patches_over_many_substeps_is_the_one_built_anew() {
    let mut cpu = Flow::new(157, 93, 0.01, Boundary::default());
    let (nx, ny) = (cpu.nx, cpu.ny);
    let painted: Vec<bool> = (0..nx * ny)
        .map(|k| (70..73).contains(&(k % nx)) && (10..80).contains(&(k / nx)))
        .collect();
    let discs = |step: usize| {
        let s = step.min(30) as f32;
        let moving = step < 30;
        [
            MovingDisc {
                center: [0.2 + 0.037 * s, 0.3 + 0.013 * s],
                radius: 0.107,
                velocity: if moving { [2.2, 0.8] } else { [0.0; 2] },
            },
            MovingDisc {
                center: [1.3 - 0.03 * s, 0.1 + 0.29 * (step % 3) as f32],
                radius: 0.061,
                velocity: if moving { [-1.8, 17.4] } else { [0.0; 2] },
            },
        ]
    };
    cpu.set_solid(draw(&cpu, &painted, &discs(0), &(0..ny)));
    let mut mirror = Mirror::new(&cpu);
    let mut hierarchy = Hierarchy::new(&cpu);
    let mut blocks = 0;
    for step in 1..=40 {
        let (old, new) = (discs(step - 1), discs(step));
        let rows = (old.iter().chain(&new)).fold(0..0, |r, d| union(r, rows_of(&cpu, d)));
        let cells = draw(&cpu, &painted, &new, &rows);
        let moving: Vec<MovingDisc> = (new.iter())
            .filter(|d| d.velocity != [0.0; 2])
            .copied()
            .collect();
        let changed = changed_cells(&cpu, rows.clone(), &cells);
        cpu.moving = moving.clone();
        cpu.set_solid_rows(rows.clone(), &cells);
        let plan = plan_rows(&mut mirror, rows, &cells, moving);
        check_patch(&plan.cells, &changed, &format!("step {step}"));
        blocks += plan.cells.row_blocks().len();
        hierarchy.update_cells(mirror.flow_unguarded(), plan.cells);
        let anew = Hierarchy::new(&cpu);
        assert_eq!(hierarchy.levels, anew.levels, "step {step}: the levels");
        if step % 5 == 0 {
            assert!(
                hierarchy.is_anew(&cpu),
                "step {step}: the pooled bytes or masks"
            );
        }
    }
    assert!(
        blocks > 40,
        "{blocks} blocks of rows changed in 40 substeps"
    );
}

/// Two runs of rows handed over at once, far apart, with cells changed in a few columns of
/// each: the plan's patch is those cells' two rectangles; the rows between them are in none,
/// and the multigrid's levels, set again by it at once, touch no row between (on each level,
/// the rows under the gap stay out of its patch but where a coarse cell's children span both).
/// Copied in blocks of rows joined: on the finest level (on the device) within
/// [`JOIN_DEVICE_BYTES`], so its two blocks 42 rows of 96 cells apart are one; on the coarser
/// levels (from the host) within [`JOIN_BYTES`] and only where the cells between are at most
/// the larger block: level 1's two blocks stay two; from level 2 on, where the gaps shrink
/// below the blocks, they join.
#[test]
fn far_apart_runs_change_cells_in_two_rectangles_not_the_rows_between() {
    let cpu = small_box();
    let nx = cpu.nx;
    let mut mirror = Mirror::new(&cpu);
    let mut hierarchy = Hierarchy::new(&cpu);
    let strip = |rows: Range<usize>, columns: Range<usize>| -> Vec<bool> {
        (0..rows.len() * nx)
            .map(|k| columns.contains(&(k % nx)))
            .collect()
    };
    let (low, high) = (strip(4..6, 10..20), strip(50..53, 70..81));
    let plan = plan_walls(&mut mirror, &[(4..6, &low), (50..53, &high)], Vec::new());
    let mut want = Patch::rectangle(4..6, 10..20);
    want.spans.extend(Patch::rectangle(50..53, 70..81).spans);
    assert_eq!(plan.cells, want);
    let levels = hierarchy.update_cells(mirror.flow_unguarded(), plan.cells);
    // The finest level: the cells and one around them.
    let mut around = Patch::rectangle(3..7, 9..21);
    around.spans.extend(Patch::rectangle(49..54, 69..82).spans);
    assert_eq!(levels[0], around);
    for (l, patch) in levels.iter().enumerate().skip(1) {
        let blocks = patch.row_blocks();
        assert!(blocks.len() == 2 || l >= 4, "level {l}: {patch:?}");
    }
    let l = &hierarchy.levels;
    let at = |k: usize, j: usize| l[k].offset as usize + j * l[k].nx as usize;
    let finest = Hierarchy::pooled_blocks(&l[..1], &levels[..1], JOIN_DEVICE_BYTES, false);
    assert_eq!(finest, vec![at(0, 3)..at(0, 54)]);
    let coarser = Hierarchy::pooled_blocks(&l[1..], &levels[1..], JOIN_BYTES, true);
    // Level 1's blocks (rows 1–3, 24–27 of 48 cells) 960 cells apart stay two; its second
    // joins level 2's first (rows 0–2 of 24: the rest of level 1, 192 cells, between); level 2's
    // second (rows 11–14), 192 cells past its first, starts a block that takes level 3's (rows
    // 0–1, 5–7 of 12: 24 and 36 cells between) and level 4's (rows 0–3).
    let levels_rows: Vec<_> = levels[1..].iter().map(Patch::row_blocks).collect();
    // Level 4's one block of rows is meant: a one-range array (clippy's lint suspects a range).
    #[allow(clippy::single_range_in_vec_init)]
    let want_rows: [&[Range<usize>]; 4] =
        [&[1..4, 24..28], &[0..3, 11..15], &[0..2, 5..8], &[0..4]];
    assert_eq!(levels_rows, want_rows);
    let want = vec![at(1, 1)..at(1, 4), at(1, 24)..at(2, 3), at(2, 11)..at(4, 4)];
    assert_eq!(coarser, want);
    assert!(hierarchy.is_anew(mirror.flow_unguarded()));
}

/// A disc circling an `n × n` box for `steps` substeps (3 turns), the host hierarchy set
/// again by each plan's patches as `set_walls_rows` does and never read until the end: the
/// finest level's stale runs then, the median ms of `Hierarchy::update_cells` a substep over
/// the first and the last 100 substeps, and the ms of the read that brings them current (the
/// hierarchy is then the one built anew).
fn circling(n: usize, steps: usize) -> (usize, f64, f64, f64) {
    let mut flow = Flow::new(n, n, 1.0 / n as f32, Boundary::default());
    let painted = vec![false; n * n];
    let (turn, dt) = (3.0 * std::f32::consts::TAU / steps as f32, 1.0 / 60.0);
    let at = |step: usize| {
        let a = turn * step as f32;
        MovingDisc {
            center: [0.5 + 0.25 * a.cos(), 0.5 + 0.25 * a.sin()],
            radius: 0.06,
            velocity: [-0.25 * turn / dt * a.sin(), 0.25 * turn / dt * a.cos()],
        }
    };
    flow.set_solid(draw(&flow, &painted, &[at(0)], &(0..n)));
    let mut mirror = Mirror::new(&flow);
    let mut hierarchy = Hierarchy::new(&flow);
    let mut times = Vec::new();
    for step in 1..=steps {
        let rows = union(rows_of(&flow, &at(step - 1)), rows_of(&flow, &at(step)));
        let cells = draw(&flow, &painted, &[at(step)], &rows);
        flow.moving = vec![at(step)];
        flow.set_solid_rows(rows.clone(), &cells);
        let plan = plan_rows(&mut mirror, rows, &cells, vec![at(step)]);
        let start = std::time::Instant::now();
        hierarchy.update_cells(&flow, plan.cells);
        times.push(start.elapsed().as_secs_f64());
    }
    let stale = hierarchy.stale_runs();
    let start = std::time::Instant::now();
    hierarchy.stencil(&flow);
    let read = start.elapsed().as_secs_f64();
    assert!(
        hierarchy.is_anew(&flow),
        "the hierarchy after {steps} substeps"
    );
    let median = |times: &[f64]| {
        let mut t = times.to_vec();
        t.sort_by(f64::total_cmp);
        1e3 * t[t.len() / 2]
    };
    let (early, late) = (median(&times[..100]), median(&times[steps - 100..]));
    (stale, early, late, 1e3 * read)
}

/// A disc circling for 1000 substeps, the host hierarchy never read: the finest level's stale
/// cells stay one run a row of the rows its path crosses (the ring's middle rows cross it twice:
/// a set of runs kept two there and grew a copy of them all each substep), and the read after
/// brings the hierarchy to the one built anew. Prints the ms (no bound).
#[test]
fn a_disc_circling_leaves_one_stale_run_a_row_its_path_crosses() {
    let n = 256;
    let (stale, early, late, read) = circling(n, 1000);
    let crossed = (2.0 * (0.25 + 0.06) * n as f32).ceil() as usize + 3;
    println!(
        "{n}²: {stale} stale runs after 1000 substeps; update_cells {early:.4} ms median over \
         the first 100, {late:.4} ms over the last 100; the read {read:.3} ms"
    );
    assert!(
        stale <= crossed,
        "{stale} stale runs, the path crosses at most {crossed} rows"
    );
}

/// [`a_disc_circling_leaves_one_stale_run_a_row_its_path_crosses`] at 2048² (`cargo test
/// --release --lib patch_tests::circling_cost -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement: prints the host's ms per circling-disc substep"]
fn circling_cost() {
    let (stale, early, late, read) = circling(2048, 1000);
    println!(
        "2048²: {stale} stale runs after 1000 substeps; update_cells {early:.3} ms median over \
         the first 100, {late:.3} ms over the last 100; the read {read:.2} ms"
    );
}
