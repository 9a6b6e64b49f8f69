//! `self_collide`'s kernels through the emulation (particles.cpp stage `SELF_COLLIDE`: the
//! launch sequence of `self_collide.rs`, the scatter run last thread first) on
//! `self_collide_check.rs`' folded cloth against the CPU over its substeps: bit for bit
//! without FMA contraction (lists in the CPU's order, the same substeps rebuilding), within
//! [`SELF_TOLERANCE`] with it, mutated kernels caught, overflowing lists reported.

use super::emulation::{compile, run, Drawing};
use super::kernels::{
    BasinStep, FountainStep, Topology, SC_BUILDS, SC_LARGEST, SC_NEEDED, SC_OVERFLOW, SC_STATE,
};
use super::parity::BodyArrays;
use super::self_collide::ROOM_PER_NODE;
use super::self_collide_check::{
    coincident_case, compare, cpu_run, cpu_substep, self_case, self_case_of, SelfCase,
    SelfDifference, SelfRun, SELF_TOLERANCE, SUBSTEPS,
};
use glam::Vec3;
use std::path::Path;

/// particles.cpp's stage number.
const SELF_COLLIDE: u32 = 17;

/// The case through the emulation `program` with room for `capacity` candidates: the run and
/// the state it ended with (`SC_*`).
fn emulate(program: &Path, case: &SelfCase, capacity: usize) -> (SelfRun, Vec<u32>) {
    let topology = Topology::of(&case.case.body);
    let c = case.self_step(capacity);
    let drawing = Drawing {
        skin: None,
        scales: vec![c.h, c.friction, c.radius, c.limit],
    };
    let n = case.case.body.len() as u32;
    let out = run(
        program,
        SELF_COLLIDE,
        (
            &FountainStep::default(),
            &BasinStep::default(),
            &case.step(),
        ),
        [n, capacity as u32, 0, 0, SUBSTEPS as u32, 0, 0, 0],
        None,
        Some((&case.case, &topology)),
        Some(&drawing),
    );
    let state = out.tally[..SC_STATE].to_vec();
    let run = SelfRun {
        arrays: BodyArrays {
            position: out.position,
            previous: out.previous,
            velocity: out.velocity,
            force: out.force,
        },
        first: out.tag,
        candidates: out.order,
        builds: state[SC_BUILDS],
        rebuilt: out.tally[SC_STATE..].iter().map(|&f| f != 0).collect(),
    };
    (run, state)
}

/// The emulation of `program` on `case` against the CPU: the difference, the CPU's rebuilding
/// substeps, the kernels' run.
fn against_the_cpu(program: &Path, case: &SelfCase) -> (SelfDifference, Vec<bool>, SelfRun) {
    let (cpu, rebuilt) = cpu_run(case);
    let n = case.case.body.len();
    let (other, _) = emulate(program, case, ROOM_PER_NODE * n);
    (compare(&cpu, &other), rebuilt, other)
}

/// Without contraction the kernels do the CPU's operations in its order: after 24 substeps of
/// the folded cloth (its top layer landing: 346 contacts at the last; the lists built at the
/// first and rebuilt by drift at the 15th and 23rd) positions, velocities, `previous` and
/// forces are the CPU's bit for bit, the lists the CPU's in its order, the same substeps
/// rebuilt; and coincident nodes ([`coincident_case`]) go apart as on the CPU: the stacked
/// pair along ŷ, the higher index rising h and the lower falling as the pair that met from
/// either side along x (the old kernel: pushed h/2 down, 2.6e-2 m below it), that pair each
/// back on its own side, and the free node of a stacked pair rising h above its pinned
/// partner of higher index.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn self_collide_matches_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let (d, cpu, other) = against_the_cpu(&program, &self_case());
    println!("{d:?}\nrebuilt: CPU {cpu:?}\n  kernels {:?}", other.rebuilt);
    assert!(d.arrays.bitwise, "{d:?}");
    assert!(d.lists_exact, "{d:?}");
    assert_eq!(cpu, other.rebuilt);
    let by_drift = cpu.iter().skip(1).filter(|&&r| r).count();
    assert!(by_drift >= 2, "{by_drift} rebuilds by drift: {cpu:?}");
    assert!(d.contacts >= 300, "{} contacts", d.contacts);

    let case = coincident_case();
    let (d, _, other) = against_the_cpu(&program, &case);
    let x = &other.arrays.position;
    println!("coincident: {d:?}\n{x:?}");
    assert!(d.arrays.bitwise && d.lists_exact, "{d:?}");
    let (rest, met) = (x[1] - x[0], x[3] - x[2]);
    assert!(
        rest.y >= 0.9 * case.h && rest.x == 0.0 && rest.z == 0.0,
        "{rest}"
    );
    assert!(
        met.x >= 0.9 * case.h && met.y == 0.0 && met.z == 0.0,
        "{met}"
    );
    assert!(x[2].x < 0.0 && x[3].x > 0.0, "{x:?}");
    let below = x[2].y - x[0].y;
    assert!(below.abs() < 1e-3 * case.h, "node 0 {below} m below node 2");
    let held = x[4] - x[5];
    assert!(
        held.y >= 0.9 * case.h && held.x == 0.0 && held.z == 0.0,
        "node 4 against the pinned node 5: {held}"
    );
    assert_eq!(x[5], case.case.body.position[5], "the pinned node moved");
}

/// With FMA contraction (as nvcc compiles) the 24 substeps stay within [`SELF_TOLERANCE`]
/// (7.6e-3) of the CPU, relative to each field's largest value (worst 9.4e-5, in the forces),
/// the lists equal as sets, the same substeps rebuilding.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn contracted_self_collide_stays_within_the_tolerance() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), true, None);
    let (d, cpu, other) = against_the_cpu(&program, &self_case());
    println!("{d:?}\nrebuilt: CPU {cpu:?}\n  kernels {:?}", other.rebuilt);
    assert!(d.passes(SELF_TOLERANCE), "{d:?} over {SELF_TOLERANCE:e}");
    assert_eq!(cpu, other.rebuilt);
}

/// A kernel with one thing changed is caught, on the folded cloth or the coincident nodes,
/// each but the bucket order by the positions (worst, relative to the field's largest value,
/// as printed): a contact weighted by the node's own count (1/c_k, not 1/max(c_k, c_j)), the
/// lists never rebuilt by drift, a bucket's nodes left in the scatter's order (every list in
/// another order; the arrays may stay bitwise), the Coulomb friction dropped, its displacement
/// not undone, its sign flipped, linked pairs not excluded, a node its own candidate, the
/// stacked nodes' ±ŷ made the same for both, both pushed h/2 (the old rule), the coincident
/// nodes' `previous` fallback deleted.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_self_collide_kernel_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = "particles_self_collide.cuh";
    // (from, to, whether the positions must differ)
    let mutations = [
        (
            "1.0f / (float)max(touching[k], touching[j])",
            "1.0f / (float)touching[k]",
            true,
        ),
        (
            "state[SC_OVERFLOW] != 0u || !finite || !(widest <= c.limit * c.limit)",
            "state[SC_OVERFLOW] != 0u",
            true,
        ),
        (
            "unsigned begin = start[b], end = start[b + 1];",
            "unsigned begin = start[b], end = begin;",
            false,
        ),
        (
            "slip = add(slip, mul(removed, share));",
            "slip = add(slip, mul(removed, 0.0f));",
            true,
        ),
        (
            "x = sub(add(x, push), mul(slip, c.dt));",
            "x = add(x, push);",
            true,
        ),
        (
            "slip = add(slip, mul(removed, share));",
            "slip = add(slip, mul(removed, -share));",
            true,
        ),
        (
            "if (self_collide_linked(node_start, link_other, k, j)) continue;",
            "",
            true,
        ),
        ("if (j == k || !(dot", "if (!(dot", true),
        (
            "return v3(0.0f, pinned[j] || k > j ? 1.0f : -1.0f, 0.0f);",
            "return v3(0.0f, 1.0f, 0.0f);",
            true,
        ),
        (
            "return v3(0.0f, pinned[j] || k > j ? 1.0f : -1.0f, 0.0f);",
            "return v3(0.0f, k > j ? 1.0f : -1.0f, 0.0f);",
            true,
        ),
        (
            "if (!stacked) return mul(n, share * (h - distance));",
            "return mul(n, share * (h - distance));",
            true,
        ),
        ("if (apart > 0.0f) return divide(before, apart);", "", true),
    ];
    let cases = [self_case(), coincident_case()];
    for (k, (from, to, moves)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some((file, from, to)),
        );
        let caught = cases.iter().any(|case| {
            let (d, cpu, other) = against_the_cpu(&program, case);
            println!("`{from}` → `{to}`: {d:?}");
            if moves {
                d.arrays.worst > 0.0
            } else {
                !d.arrays.bitwise || !d.lists_exact || cpu != other.rebuilt
            }
        });
        assert!(caught, "`{from}` → `{to}` was not caught");
    }
}

/// A node gone NaN does not freeze the lists: its drift makes the mean NaN and every node's
/// distance from it NaN, which the max of the drifts ignored, so the lists were kept (the old
/// code: rebuilt at the first substep only, 1 build of 24). Now a non-finite mean rebuilds,
/// every substep while it lasts, on the CPU and in the kernels alike.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_nan_node_rebuilds_the_lists() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let mut case = self_case();
    case.case.body.position[7] = Vec3::NAN;
    let (cpu, rebuilt) = cpu_run(&case);
    let n = case.case.body.len();
    let (other, _) = emulate(&program, &case, ROOM_PER_NODE * n);
    println!("rebuilt: CPU {rebuilt:?}\n  kernels {:?}", other.rebuilt);
    assert_eq!(cpu.contacts.builds, SUBSTEPS as u64);
    assert_eq!(rebuilt, other.rebuilt);
    assert_eq!(other.builds, SUBSTEPS as u32);
}

/// Lists that do not fit their room are reported and the contacts still found: with room for
/// 100 candidates every substep rebuilds (the overflow forces it), the state says how many were
/// needed (3,364 at the last build), no list is written, and `touching` and `gather` walk the
/// sorted cells instead: the run is the CPU's bit for bit (positions, velocities, `previous`),
/// as with room. (Before, an overflowed build's substeps ran without contacts: the run was the
/// one without the stage, bit for bit: its worst node 1.5e-2 m from the CPU's, 3,506 needed.)
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn overflowing_lists_are_reported_and_the_cells_walked_instead() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let case = self_case();
    let (other, state) = emulate(&program, &case, 100);
    println!("state {state:?}");
    assert_eq!(state[SC_BUILDS], SUBSTEPS as u32);
    assert!(state[SC_OVERFLOW] > 100 && state[SC_OVERFLOW] == state[SC_NEEDED]);
    assert!(state[SC_NEEDED] >= 2000, "{state:?}");
    let (cpu, _) = cpu_run(&case);
    let worst = cpu
        .position
        .iter()
        .zip(&other.arrays.position)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    println!("worst node from the CPU's: {worst:e} m");
    assert!(
        other.arrays.position == cpu.position
            && other.arrays.velocity == cpu.velocity
            && other.arrays.previous == cpu.previous,
        "worst node {worst} m from the CPU's"
    );
}

/// Several blocks in every grid-wide pass: the folded 40² cloth (1,600 nodes: 7 blocks in
/// each pass of the drift check; 4,097 bucket counts and 1,601 candidate counts: the scans
/// in 5 and 2 chunks of 1,024) is the CPU's bit for bit over its substeps without contraction,
/// the lists the CPU's in its order, the same substeps rebuilding (the first, and the 15th by
/// drift; 1,472 contacts at the last); and a drift check with a block's partial dropped is
/// caught by the substeps that rebuild: block 4's sum along x (the 13th and 23rd rebuild
/// instead), or every block's widest but the first's (the 16th instead of the 15th: the
/// one-block check reading a block's nodes only). (A single block's widest dropped is not:
/// here the drift passes the limit in several blocks at once.) So is a scan whose second
/// chunk is not offset by the first's sum (the lists and the arrays differ).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_40_cloth_across_blocks_matches_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let case = self_case_of(40);
    let (cpu, rebuilt) = cpu_run(&case);
    let n = case.case.body.len();
    let program = compile(&dir.path().join("particles"), false, None);
    let (other, _) = emulate(&program, &case, ROOM_PER_NODE * n);
    let d = compare(&cpu, &other);
    println!(
        "{d:?}\nrebuilt: CPU {rebuilt:?}\n  kernels {:?}",
        other.rebuilt
    );
    assert!(d.arrays.bitwise && d.lists_exact, "{d:?}");
    assert_eq!(rebuilt, other.rebuilt);
    let by_drift = rebuilt.iter().skip(1).filter(|&&r| r).count();
    assert!(by_drift >= 1, "{by_drift} rebuilds by drift: {rebuilt:?}");
    assert!(d.contacts >= 1000, "{} contacts", d.contacts);
    let file = "particles_self_collide.cuh";
    let mutations = [
        // Block 4's sum of the drift along x dropped (nodes 1,024–1,279: the top layer).
        (
            "partials[3 * blockIdx.x] = sx;",
            "partials[3 * blockIdx.x] = blockIdx.x == 4 ? 0.0 : sx;",
        ),
        // The scans' second chunk not offset by the first's sum.
        (
            "if (i < values) data[i] += sums[blockIdx.x];",
            "if (i < values) data[i] += blockIdx.x == 1 ? 0u : sums[blockIdx.x];",
        ),
        // The widest read of the first block only (the bottom layer: hardly drifting).
        (
            "unsigned blocks = (c.nodes + PARTICLES_BLOCK - 1) / PARTICLES_BLOCK;",
            "unsigned blocks = 1;",
        ),
    ];
    for (k, (from, to)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some((file, from, to)),
        );
        let (mutant, _) = emulate(&program, &case, ROOM_PER_NODE * n);
        // The lists first: a wrong scan's are not even CSR (compare would index past them).
        let lists =
            mutant.first != cpu.contacts.first || mutant.candidates != cpu.contacts.candidates;
        let arrays = !lists && !compare(&cpu, &mutant).arrays.bitwise;
        println!(
            "`{from}` → `{to}`: rebuilt {:?}, lists differ {lists}, arrays differ {arrays}",
            mutant.rebuilt
        );
        assert!(
            mutant.rebuilt != rebuilt || lists || arrays,
            "`{from}` → `{to}` was not caught"
        );
    }
}

/// The folded cloth squeezed to half its width and length about its middle and expanding
/// (every node moving away from the middle at 20/s times its distance, horizontally): its
/// lists need fewer candidates build after build.
fn expanding_case() -> SelfCase {
    let mut case = self_case();
    let dt = case.case.dt.0;
    let body = &mut case.case.body;
    let middle = body.position.iter().sum::<Vec3>() / body.len() as f32;
    for k in 0..body.len() {
        let mut out = body.position[k] - middle;
        out.y = 0.0;
        body.position[k] -= 0.5 * out;
        body.velocity[k] = 20.0 * 0.5 * out;
        body.previous[k] = body.position[k] - body.velocity[k] * dt;
    }
    case
}

/// An overflow that clears within the frame is still reported at its end: the expanding cloth
/// ([`expanding_case`]) with room for one candidate fewer than its first build needs overflows
/// there, and the builds after fit (the state at the end: no overflow, the last need below the
/// room); `SC_LARGEST` holds the first build's need for the frame's end (`contacts_end`) to
/// report and grow the room past. The old kernels kept only `SC_OVERFLOW`, which the first
/// build that fitted cleared: at the end it said 0, nothing was reported (the mutant that
/// drops the `SC_LARGEST` update gives 0 here too).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn an_overflow_that_clears_within_the_frame_is_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let case = expanding_case();
    let mut body = case.case.body.clone();
    cpu_substep(&case, &mut body);
    let first = body.contacts.first[body.len()];
    let room = first as usize - 1;
    let run = |program: &Path| emulate(program, &case, room).1;
    let state = run(&compile(&dir.path().join("particles"), false, None));
    println!("first build {first}, room {room}: state {state:?}");
    assert_eq!(state[SC_OVERFLOW], 0, "{state:?}");
    assert!((state[SC_NEEDED] as usize) <= room, "{state:?}");
    assert!(state[SC_BUILDS] >= 2, "{state:?}");
    assert_eq!(state[SC_LARGEST], first, "{state:?}");
    let mutant = compile(
        &dir.path().join("old"),
        false,
        Some((
            "particles_self_collide.cuh",
            "state[SC_LARGEST] = max(state[SC_LARGEST], total);",
            "",
        )),
    );
    let old = run(&mutant);
    println!("without SC_LARGEST: {old:?}");
    assert_eq!(old[SC_LARGEST], 0);
}
