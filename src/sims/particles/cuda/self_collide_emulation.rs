//! `self_collide`'s kernels through the emulation (particles.cpp stage `SELF_COLLIDE`: the
//! launch sequence of `self_collide.rs`, the scatter run last thread first) on
//! `self_collide_check.rs`' folded cloth against the CPU over its substeps: bit for bit
//! without FMA contraction (lists in the CPU's order, the same substeps rebuilding), within
//! [`SELF_TOLERANCE`] with it, mutated kernels caught, overflowing lists reported.

use super::emulation::{compile, run, Drawing};
use super::kernels::{BasinStep, FountainStep, Topology, SC_BUILDS, SC_NEEDED, SC_OVERFLOW};
use super::parity::BodyArrays;
use super::self_collide::ROOM_PER_NODE;
use super::self_collide_check::{
    compare, cpu_run, self_case, SelfCase, SelfDifference, SelfRun, SELF_TOLERANCE, SUBSTEPS,
};
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
    let state = out.tally[..4].to_vec();
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
        rebuilt: out.tally[4..].iter().map(|&f| f != 0).collect(),
    };
    (run, state)
}

/// The emulation of `program` against the CPU: the difference, the CPU's and the kernels'
/// rebuilding substeps.
fn against_the_cpu(program: &Path) -> (SelfDifference, Vec<bool>, Vec<bool>) {
    let case = self_case();
    let (cpu, rebuilt) = cpu_run(&case);
    let n = case.case.body.len();
    let (other, _) = emulate(program, &case, ROOM_PER_NODE * n);
    (compare(&cpu, &other), rebuilt, other.rebuilt)
}

/// Without contraction the kernels do the CPU's operations in its order: after 24 substeps of
/// the folded cloth (its layers in contact: 46 contacts at the last on the Coulomb floor, 180
/// on the old per-substep friction; the lists built at the first and rebuilt by drift at the
/// 13th) positions, velocities, `previous` and
/// forces are the CPU's bit for bit, the lists the CPU's in its order, the same substeps
/// rebuilt.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn self_collide_matches_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let (d, cpu, other) = against_the_cpu(&program);
    println!("{d:?}\nrebuilt: CPU {cpu:?}\n  kernels {other:?}");
    assert!(d.arrays.bitwise, "{d:?}");
    assert!(d.lists_exact, "{d:?}");
    assert_eq!(cpu, other);
    let by_drift = cpu.iter().skip(1).filter(|&&r| r).count();
    assert!(by_drift >= 1, "no rebuild by drift: {cpu:?}");
    assert!(d.contacts >= 40, "{} contacts", d.contacts);
}

/// With FMA contraction (as nvcc compiles) the 24 substeps stay within [`SELF_TOLERANCE`]
/// (7.6e-3) of the CPU, relative to each field's largest value (worst 1.5e-4, in the forces),
/// the lists equal as sets, the same substeps rebuilding.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn contracted_self_collide_stays_within_the_tolerance() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), true, None);
    let (d, cpu, other) = against_the_cpu(&program);
    println!("{d:?}\nrebuilt: CPU {cpu:?}\n  kernels {other:?}");
    assert!(d.passes(SELF_TOLERANCE), "{d:?} over {SELF_TOLERANCE:e}");
    assert_eq!(cpu, other);
}

/// A kernel with one thing changed is caught: a contact weighted by the node's own count
/// (1/c_k, not 1/max(c_k, c_j): worst 0.34 in the forces, 295 nodes' lists differ, 3 builds
/// against 2), the lists never rebuilt by drift (1 build, 261 nodes' lists differ), a bucket's
/// nodes left in the scatter's order (every list in another order), the Coulomb friction
/// dropped (worst 0.41) or its displacement not undone (worst 0.23).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_self_collide_kernel_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = "particles_self_collide.cuh";
    let mutations = [
        (
            "1.0f / (float)max(touching[k], touching[j])",
            "1.0f / (float)touching[k]",
        ),
        (
            "overflowed != 0u || !(widest[0] <= c.limit * c.limit)",
            "overflowed != 0u",
        ),
        (
            "unsigned begin = start[b], end = start[b + 1];",
            "unsigned begin = start[b], end = begin;",
        ),
        (
            "slip = add(slip, mul(removed, share));",
            "slip = add(slip, mul(removed, 0.0f));",
        ),
        (
            "x = sub(add(x, push), mul(slip, c.dt));",
            "x = add(x, push);",
        ),
    ];
    for (k, (from, to)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some((file, from, to)),
        );
        let (d, cpu, other) = against_the_cpu(&program);
        println!("`{to}`: {d:?}");
        let caught = !d.arrays.bitwise || !d.lists_exact || cpu != other;
        assert!(caught, "`{to}` was not caught: {d:?}");
    }
}

/// Lists that do not fit their room are reported, not used: with room for 100 candidates
/// every substep rebuilds (the overflow forces it), the state says how many were needed
/// (3,234 at the last build), and no node moves by self-collision (the run is the one without
/// it, bit for bit).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn overflowing_lists_are_reported_not_used() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let case = self_case();
    let (other, state) = emulate(&program, &case, 100);
    println!("state {state:?}");
    assert_eq!(state[SC_BUILDS], SUBSTEPS as u32);
    assert!(state[SC_OVERFLOW] > 100 && state[SC_OVERFLOW] == state[SC_NEEDED]);
    assert!(state[SC_NEEDED] >= 2000, "{state:?}");
    // The same substeps without self_collide on the CPU.
    let mut body = case.case.body.clone();
    let c = &case.case;
    for _ in 0..SUBSTEPS {
        use crate::sims::particles::dynamics;
        dynamics::springs(&mut body, c.surroundings.air.gravity, true);
        dynamics::integrate(&mut body, c.integrator, c.dt.0, c.dt.1, c.damping);
        dynamics::collide(&mut body, &c.surroundings, c.dt.0);
    }
    assert!(other.arrays.position == body.position && other.arrays.velocity == body.velocity);
}
