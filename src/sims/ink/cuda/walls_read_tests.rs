//! A read-back of the CUDA host mirror (`walls.rs`'s `Mirror`): brought up to date in place,
//! lent without a copy, its values taken out again.

use super::walls::{Mirror, WallMasks};
use super::walls_tests::{draw, plan_rows, rows_of, small_box, union};
use crate::sims::ink::boundary::MovingDisc;

/// A read-back (`CudaInk::read_back`, through [`Mirror::current`]) after a disc moved and
/// stopped brings the mirror itself up to date: no row stays stale, and a second read-back
/// redoes no row. (The mirror once brought a copy up to date and kept its stale rows, so every
/// read-back redid every row any disc had touched since the start.)
#[test]
fn a_read_back_leaves_no_row_stale() {
    let flow = small_box();
    let painted = vec![false; flow.nx * flow.ny];
    let mut cpu = flow.clone();
    let mut mirror = Mirror::new(&flow);
    let disc = |step: usize| MovingDisc {
        center: [0.3 + 0.02 * step.min(3) as f32, 0.3],
        radius: 0.05,
        velocity: if step < 3 { [1.2, 0.0] } else { [0.0; 2] },
    };
    for step in 0..=4 {
        let d = disc(step);
        let rows = rows_of(&cpu, &d);
        let rows = union(rows, rows_of(&cpu, &disc(step.saturating_sub(1))));
        let cells = draw(&cpu, &painted, &[d], &rows);
        let moving: Vec<MovingDisc> = [d].into_iter().filter(|d| d.velocity != [0.0; 2]).collect();
        cpu.moving = moving.clone();
        cpu.set_solid_rows(rows.clone(), &cells);
        plan_rows(&mut mirror, rows, &cells, moving);
    }
    assert!(
        mirror.stale_rows() > 10,
        "the disc's rows are stale before the read"
    );
    let first = mirror.current();
    assert!(WallMasks::of(&first)
        .differing(&WallMasks::of(&cpu))
        .is_empty());
    assert_eq!(mirror.stale_rows(), 0, "rows left stale by a read-back");
    let second = mirror.current();
    assert_eq!(mirror.stale_rows(), 0);
    assert!(WallMasks::of(&second)
        .differing(&WallMasks::of(&cpu))
        .is_empty());
}

/// A read-back that lends the mirror (`Mirror::with_values`, as `CudaInk::with_read_back`)
/// after a disc moved: the flow it lends is the mirror's own (its cells' memory, not a copy),
/// brought up to date in place with the values handed in, no copy counted, and the values
/// leave after; a guard of `Mirror::flow` taken inside is fine; a read-back while a guard is
/// alive reads a copy (counted), no panic.
#[test]
fn a_read_back_lends_the_mirror_without_a_copy() {
    let flow = small_box();
    let mut cpu = flow.clone();
    let mut mirror = Mirror::new(&flow);
    let painted = vec![false; flow.nx * flow.ny];
    for step in 0..3 {
        let d = MovingDisc {
            center: [0.3 + 0.02 * step as f32, 0.3],
            radius: 0.05,
            velocity: [1.2, 0.0],
        };
        let rows = union(
            rows_of(&cpu, &d),
            rows_of(
                &cpu,
                &MovingDisc {
                    center: [0.3, 0.3],
                    ..d
                },
            ),
        );
        let cells = draw(&cpu, &painted, &[d], &rows);
        cpu.moving = vec![d];
        cpu.set_solid_rows(rows.clone(), &cells);
        plan_rows(&mut mirror, rows, &cells, vec![d]);
    }
    assert!(mirror.stale_rows() > 10);
    let values = [
        vec![1.0; cpu.u.data.len()],
        vec![2.0; cpu.v.data.len()],
        vec![3.0; cpu.p.data.len()],
    ];
    let copies = mirror.copies();
    let (current, own, with_values) = mirror.with_values(values.clone(), |lent| {
        let guard = mirror.flow();
        (
            WallMasks::of(lent)
                .differing(&WallMasks::of(&cpu))
                .is_empty(),
            std::ptr::eq(lent.solid().as_ptr(), guard.solid().as_ptr()),
            [&lent.u.data, &lent.v.data, &lent.p.data] == [&values[0], &values[1], &values[2]],
        )
    });
    assert_eq!(
        (current, own, with_values),
        (true, true, true),
        "(masks current, the mirror's own, the values in)"
    );
    assert_eq!((mirror.copies(), mirror.stale_rows()), (copies, 0));
    assert!(
        mirror.flow().u.data.is_empty() && mirror.flow().p.data.is_empty(),
        "the values left"
    );
    let guard = mirror.flow();
    let copy = mirror.with_values(values.clone(), |lent| {
        (!std::ptr::eq(lent.solid().as_ptr(), guard.solid().as_ptr())) && lent.p.data == values[2]
    });
    drop(guard);
    assert!(copy, "a copy with the values, under a guard");
    assert_eq!(mirror.copies(), copies + 1);
}

/// The values lent into the mirror (`Mirror::with_values`) leave it when `f` panics (caught),
/// and when `f` hands out a guard that outlives the call, at the next `Mirror::current`: no
/// read after copies them (u, v, p: ~48 MB at 2048²).
#[test]
fn the_values_leave_the_mirror_after_a_panic_and_a_kept_guard() {
    let flow = small_box();
    let mirror = Mirror::new(&flow);
    let values = || {
        [
            vec![1.0; flow.u.data.len()],
            vec![2.0; flow.v.data.len()],
            vec![3.0; flow.p.data.len()],
        ]
    };
    let held = |m: &Mirror| {
        let f = m.flow();
        [f.u.data.len(), f.v.data.len(), f.p.data.len()]
    };
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mirror.with_values(values(), |_| panic!("a reader that fails"))
    }));
    assert!(panicked.is_err());
    assert_eq!(held(&mirror), [0; 3], "values held after a panic");
    let guard = mirror.with_values(values(), |_| mirror.flow());
    assert_eq!(
        guard.p.data.len(),
        flow.p.data.len(),
        "lent while the guard lives"
    );
    drop(guard);
    let copy = mirror.current();
    assert_eq!(
        [copy.u.data.len(), copy.v.data.len(), copy.p.data.len()],
        [0; 3],
        "values copied after a kept guard"
    );
    assert_eq!(held(&mirror), [0; 3], "values held after a kept guard");
}
