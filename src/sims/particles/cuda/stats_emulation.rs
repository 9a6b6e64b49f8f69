//! `body_stats` (+ `reduce_finish`) without a GPU: compiled as C++ (`tests/emulation/
//! particles.cpp`, stage `BODY_STATS`, barriers run for real) on the cloths' and the jelly's
//! states against the CPU's figures of the same state (`BodyFigures::of`): the largest strain
//! equal to the bit and each sum within its order's allowance (`stats::sum_allowance`), with
//! and without FMA contraction; mutated kernels caught.

use super::emulation::{compile, run, Drawing};
use super::kernels::{BasinStep, BodyStep, FountainStep, Topology};
use super::parity::BodyCase;
use super::stats::{compare_figures, figure_cases, figures_from_slots};
use crate::sims::particles::BodyFigures;
use std::path::Path;

/// particles.cpp's stage number of `body_stats`.
const BODY_STATS: u32 = 15;

/// `case`'s figures through the emulation `program`.
fn emulate(program: &Path, case: &BodyCase) -> BodyFigures {
    let g = case.surroundings.air.gravity;
    let drawing = Drawing {
        skin: None,
        scales: vec![case.body.mass, g.x, g.y, g.z, case.body.cells.modulus],
    };
    let topology = Topology::of(&case.body);
    let out = run(
        program,
        BODY_STATS,
        (
            &FountainStep::default(),
            &BasinStep::default(),
            &BodyStep::default(),
        ),
        [
            case.body.len() as u32,
            case.body.cells.side as u32,
            0,
            0,
            0,
            0,
            0,
            0,
        ],
        None,
        Some((case, &topology)),
        Some(&drawing),
    );
    let slots: [f64; 4] = out.stats.try_into().expect("four figures");
    figures_from_slots(&slots)
}

/// Every case through `program`: (case, passed, detail).
fn all_cases(program: &Path) -> Vec<(String, bool, String)> {
    figure_cases()
        .into_iter()
        .map(|(name, case)| {
            let figures = emulate(program, &case);
            let (passed, detail) =
                compare_figures(&figures, &case.body, case.surroundings.air.gravity);
            (name, passed, detail)
        })
        .collect()
}

/// The cloths (one block, and the 48² cloth's nine) and the jelly: the emulated kernels'
/// figures are the CPU's — the strain to the bit, the sums within their allowance — whether
/// compiled with FMA contraction (as nvcc) or without: the kernel's explicitly rounded
/// operations leave nothing to contract. The cases move and stretch (no trivial zeros).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn body_figures_on_the_gpu_path_are_the_cpus() {
    for (name, case) in figure_cases() {
        let cpu = BodyFigures::of(&case.body, case.surroundings.air.gravity);
        assert!(
            cpu.kinetic > 1e-4 && cpu.elastic > 1e-6 && cpu.max_strain > 1e-4,
            "{name}: {cpu:?}"
        );
        assert!(cpu.potential != 0.0, "{name}: {cpu:?}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for contract in [false, true] {
        let program = compile(&dir.path().join(format!("stats{contract}")), contract, None);
        let results = all_cases(&program);
        assert_eq!(results.len(), 6);
        for (name, _, detail) in &results {
            println!("contract {contract}: {name}: {detail}");
        }
        let failed: Vec<_> = results.iter().filter(|(_, passed, _)| !passed).collect();
        assert!(failed.is_empty(), "contract {contract}: {failed:#?}");
    }
}

/// A kernel with one operation changed is caught: each spring counted at both ends, a spring's
/// strain over the node's first link's rest length, the potential's sign flipped, a cell's
/// volume change from 0.9 of its rest volume (the jelly's volume term); and, compiled
/// with contraction (where this CPU has FMA), a spring's length through the plain `dot`, which
/// contraction fuses (the check of the contracted build has teeth).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_body_stats_kernel_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mutations = [
        ("if (other <= k) continue;", "if (other == k) continue;"),
        (
            "fabsf(stretch) / link_rest[l]",
            "fabsf(stretch) / link_rest[node_start[k]]",
        ),
        ("__dmul_rn(-m, ", "__dmul_rn(m, "),
        (
            "(double)cell_volume_rn(q) - rest;",
            "(double)cell_volume_rn(q) - 0.9 * rest;",
        ),
    ];
    #[cfg(target_arch = "x86_64")]
    let fma = std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let fma = true;
    let mutations = mutations.into_iter().map(|(from, to)| (from, to, false));
    let fused = fma.then_some(("sqrtf(dot_rn(d, d))", "sqrtf(dot(d, d))", true));
    for (k, (from, to, contract)) in mutations.chain(fused).enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            contract,
            Some(("particles_stats.cuh", from, to)),
        );
        let results = all_cases(&program);
        assert!(
            results.iter().any(|(_, passed, _)| !passed),
            "`{to}` was not caught: {results:#?}"
        );
    }
}
