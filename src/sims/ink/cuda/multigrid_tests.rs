//! The host side of the CUDA multigrid (`multigrid.rs`): its hierarchy is the CPU's levels
//! pooled, and set again by rows it is the one built anew.

use super::*;
use crate::sims::ink::boundary::{Boundary, CHANNEL};
use crate::sims::ink::multigrid::Multigrid;

/// The launch plan of a 2048² channel (outflow on the right) with a solid disc: ten levels
/// (2048² … 4²) pooled back to back, each with the CPU level's stencil bytes, fluid count,
/// h² and the outflow bit; the one-block kernel takes the five levels of at most 8192 cells
/// (64² down), its 1024 threads a power of two as its reduction needs; the smoothing
/// launches cover one colour's cells (half a row, rounded up, per row).
#[test]
fn a_multigrid_hierarchy_is_the_cpus_levels_pooled() {
    let (n, dx) = (2048, 1.0 / 2048.0);
    let boundary = Boundary {
        sides: CHANNEL,
        ..Boundary::default()
    };
    let mut flow = Flow::new(n, n, dx, boundary);
    let solid: Vec<bool> = (0..n * n)
        .map(|k| {
            let (i, j) = ((k % n) as f32 - 600.0, (k / n) as f32 - 1000.0);
            i * i + j * j < 150.0 * 150.0
        })
        .collect();
    flow.set_solid(solid.clone());
    let mut hierarchy = Hierarchy::new(&flow);
    let stencil = hierarchy.stencil(&flow).to_vec();
    let cpu = Multigrid::new(n, n, dx, solid.iter().map(|s| !s).collect(), &boundary);
    assert_eq!(hierarchy.levels.len(), 10);
    assert_eq!(hierarchy.levels.len(), cpu.levels.len());
    let mut offset = 0usize;
    for (l, (level, cpu)) in hierarchy.levels.iter().zip(&cpu.levels).enumerate() {
        let side = n >> l;
        assert_eq!(
            (level.nx, level.ny),
            (side as i32, side as i32),
            "level {l}"
        );
        assert_eq!(level.offset as usize, offset, "level {l}");
        let cells = offset..offset + level.cells();
        assert_eq!(&stencil[cells.clone()], &cpu.poisson.cells[..], "level {l}");
        let fluid = cpu.fluid.iter().filter(|&&f| f).count();
        assert_eq!(level.fluid as usize, fluid, "level {l}");
        // The disc (radius 150) holds a whole coarse cell down to 128 fine cells wide.
        assert_eq!(
            fluid < level.cells(),
            l <= 7,
            "level {l}: {fluid} fluid cells"
        );
        let solid = hierarchy.solid[cells].iter().filter(|&&s| s == 1).count();
        assert_eq!(solid + fluid, level.cells(), "level {l}");
        assert_eq!(level.h2, cpu.h2, "level {l}");
        assert_eq!(level.weight, 1.0 / cpu.h2, "level {l}");
        assert_eq!(level.outflow, 2, "level {l}: the right side");
        offset += level.cells();
    }
    assert_eq!(offset, Hierarchy::pooled_cells(n, n));
    assert_eq!(offset, stencil.len());
    assert_eq!(Hierarchy::tail(&hierarchy.levels, TAIL_CELLS), 5);
    assert_eq!(hierarchy.levels[5].cells(), 64 * 64);
    assert_eq!(Hierarchy::tail(&hierarchy.levels, 0), 9);
    assert!(TAIL_THREADS.is_power_of_two());
    let odd = InkLevel {
        nx: 5,
        ny: 3,
        ..InkLevel::default()
    };
    assert_eq!(colour_slots(odd), 9);
    assert_eq!(GpuMultigrid::bytes(n, n), offset as u64 * 14);
}

/// A disc moved by rows over a 93 × 51 channel (odd sides), the host's hierarchy set again
/// by [`Hierarchy::update_cells`] (whole rows) over the rows the sim hands the solver (the old and the
/// new disc's rows, one range; its finest stencil brought up to date when read) equals
/// [`Hierarchy::new`] of the flow, every field: across
/// row 0, across the top row, and in a jump whose old and new rows are disjoint (the hull,
/// then the old and the new rows apart).
#[test]
fn a_hierarchy_set_again_by_rows_is_the_one_built_anew() {
    let (nx, ny) = (93, 51);
    let boundary = Boundary {
        sides: CHANNEL,
        ..Boundary::default()
    };
    let radius = 7.5f32;
    let disc = |[cx, cy]: [f32; 2]| -> Vec<bool> {
        (0..nx * ny)
            .map(|k| {
                let (x, y) = ((k % nx) as f32 - cx, (k / nx) as f32 - cy);
                x * x + y * y <= radius * radius
            })
            .collect()
    };
    let rows = |[_, cy]: [f32; 2]| {
        (cy - radius).ceil().max(0.0) as usize..((cy + radius).floor() as usize + 1).min(ny)
    };
    let mut flow = Flow::new(nx, ny, 0.02, boundary);
    let mut at = [20.0, 20.0];
    flow.set_solid(disc(at));
    let mut hierarchy = Hierarchy::new(&flow);
    let moves: [([f32; 2], bool); 5] = [
        ([25.0, 2.0], false),  // across row 0
        ([60.0, 48.0], false), // a jump: rows 0..10, then 41..51 (the top row)
        ([62.0, 50.0], false), // across the top row
        ([30.0, 3.0], true),   // a jump, the old and new rows set apart
        ([31.0, 1.0], false),
    ];
    for (to, apart) in moves {
        let (old, new) = (rows(at), rows(to));
        let fresh = disc(to);
        let before = hierarchy.levels.iter().map(|l| l.fluid).collect::<Vec<_>>();
        if apart {
            for rows in [old, new] {
                flow.set_solid_rows(rows.clone(), &fresh[rows.start * nx..rows.end * nx]);
                hierarchy.update_cells(&flow, Patch::rectangle(rows, 0..nx));
            }
        } else {
            let hull = old.start.min(new.start)..old.end.max(new.end);
            flow.set_solid_rows(hull.clone(), &fresh[hull.start * nx..hull.end * nx]);
            hierarchy.update_cells(&flow, Patch::rectangle(hull, 0..nx));
        }
        assert_eq!(flow.solid(), &fresh[..]);
        let anew = Hierarchy::new(&flow);
        for (l, (a, b)) in hierarchy.levels.iter().zip(&anew.levels).enumerate() {
            assert_eq!(a, b, "disc at {to:?}: level {l}");
        }
        assert!(
            hierarchy.is_anew(&flow),
            "disc at {to:?}: the pooled bytes or masks"
        );
        let changed = (hierarchy.levels.iter().zip(&before))
            .filter(|(l, &f)| l.fluid != f)
            .count();
        assert!(changed >= 2, "disc at {to:?}: {changed} levels changed");
        at = to;
    }
}
