//! The multigrid's host hierarchy (`multigrid.rs`'s `Hierarchy`) set again by the patches of
//! changed cells that `plan_walls` hands over (`walls.rs`), without a GPU: it must equal the
//! hierarchy built anew, and far-apart runs must leave the rows between them alone.

use super::multigrid::Hierarchy;
use super::walls::{plan_walls, Mirror};
use super::walls_tests::{
    changed_cells, check_patches, draw, plan_rows, rows_of, small_box, union,
};
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
    let mut patches = 0;
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
        check_patches(&plan.cells, &changed, &format!("step {step}"));
        patches += plan.cells.len();
        for patch in plan.cells {
            hierarchy.update_cells(mirror.flow_unguarded(), patch);
        }
        let anew = Hierarchy::new(&cpu);
        assert_eq!(hierarchy.levels, anew.levels, "step {step}: the levels");
        if step % 5 == 0 {
            assert!(
                hierarchy.is_anew(&cpu),
                "step {step}: the pooled bytes or masks"
            );
        }
    }
    assert!(patches > 40, "{patches} patches in 40 substeps");
}

/// Two runs of rows handed over at once, far apart, with cells changed in a few columns of
/// each: the plan's patches are those cells' rectangles, one a run; the rows between them are
/// in neither, and the multigrid's levels set again by them touch no row between (on each
/// level, the rows under the gap stay out of both patches but where a coarse cell's children
/// span both).
#[test]
fn far_apart_runs_change_cells_in_two_patches_not_the_rows_between() {
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
    let want = [
        Patch::rectangle(4..6, 10..20),
        Patch::rectangle(50..53, 70..81),
    ];
    assert_eq!(plan.cells, want);
    let mut levels = Vec::new();
    for patch in plan.cells {
        levels.push(hierarchy.update_cells(mirror.flow_unguarded(), patch));
    }
    let (below, above) = (&levels[0], &levels[1]);
    // The finest level: the cells and one around them.
    assert_eq!(below[0], Patch::rectangle(3..7, 9..21));
    assert_eq!(above[0], Patch::rectangle(49..54, 69..82));
    for (l, (below, above)) in below.iter().zip(above).enumerate().skip(1) {
        let gap = below.rows().end..above.rows().start;
        assert!(!gap.is_empty() || l >= 4, "level {l}: {below:?} {above:?}");
    }
    assert!(hierarchy.is_anew(mirror.flow_unguarded()));
}
