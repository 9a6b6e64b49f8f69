//! The statistics' reductions (`kernels/pbf_stats.cuh`) compiled as C++ (`tests/emulation/
//! pbf_stats.cpp`, blocks with real barriers) and run on the CPU against
//! [`FrameStats::measure`] of the same moving state: maxima and extremes equal to the bit, the
//! sums within their reordering's rounding; two mutants fail.

use super::emulation::Rounding;
use super::parity;
use super::stats::{compare, stats_from_slots, CONTRACTED_BOUND};
use crate::cuda::emulation::{compile, Mutation};
use crate::sims::pbf::cpu::CpuSolver;
use crate::sims::pbf::stats::FrameStats;
use crate::sims::pbf::{Snapshot, Solver};

/// A moving, splashing state of the parity scene (its particle count is not a multiple of the
/// block, so the last block's idle threads take part).
fn moving_snapshot() -> Snapshot {
    let scene = parity::parity_scene();
    let mut cpu =
        CpuSolver::new(scene.world(), scene.params.clone(), &scene.seed()).expect("the solver");
    for _ in 0..parity::ONE_STEP_WARMUP_FRAMES {
        cpu.step().expect("a step");
    }
    cpu.snapshot().expect("the snapshot")
}

/// The kernels' statistics of `snapshot` (the emulation built with `mutation`).
fn emulated(snapshot: &Snapshot, rounding: Rounding, mutation: Option<Mutation>) -> FrameStats {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(
        "pbf_stats.cpp",
        &dir.path().join("pbf_stats"),
        rounding,
        mutation,
    );
    let n = snapshot.positions.len();
    let mut input = (n as u32).to_le_bytes().to_vec();
    input.extend_from_slice(&snapshot.rest_density.to_le_bytes());
    for vectors in [&snapshot.positions, &snapshot.velocities] {
        for v in vectors.iter() {
            input.extend_from_slice(bytemuck::cast_slice(&[v.x, v.y, v.z, 0.0f32]));
        }
    }
    input.extend_from_slice(bytemuck::cast_slice(&snapshot.densities));
    input.extend_from_slice(bytemuck::cast_slice(&snapshot.neighbor_counts));
    let bytes = crate::cuda::emulation::run(&program, &input, &[]);
    let slots: [f64; 16] = bytemuck::pod_read_unaligned(&bytes);
    stats_from_slots(&slots, n, snapshot.particle_mass)
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_statistics_reductions_run_on_the_cpu_match_the_snapshots_measure() {
    let snapshot = moving_snapshot();
    let n = snapshot.positions.len();
    assert!(!n.is_multiple_of(256) && n > 2 * 256, "{n} particles");
    let cpu = FrameStats::measure(&snapshot, 0, 0.0, 0.0);
    // The state moves and is compressed somewhere: every quantity has something to measure.
    assert!(
        cpu.kinetic_energy > 0.0 && cpu.compression_max > 0.0,
        "{cpu:?}"
    );
    for rounding in [Rounding::Separate, Rounding::Gpu] {
        let gpu = emulated(&snapshot, rounding, None);
        let (worst, exact) = compare(&gpu, &cpu);
        println!("{rounding:?}: sums within {worst:.2e} (relative), extremes equal: {exact}");
        assert!(exact, "maxima or extremes differ:\n{gpu:?}\n{cpu:?}");
        // Sums of a few thousand terms in another order: ~n ε_f64; contracted, |v|²'s f32
        // rounding (see CONTRACTED_BOUND).
        let bound = match rounding {
            Rounding::Separate => 1e-12,
            Rounding::Gpu => CONTRACTED_BOUND,
        };
        assert!(worst < bound, "{rounding:?}: sums differ by {worst:e}");
        assert_eq!(gpu.bottom_compression, None);
    }
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn a_wrong_statistics_kernel_fails_the_comparison() {
    let snapshot = moving_snapshot();
    let cpu = FrameStats::measure(&snapshot, 0, 0.0, 0.0);
    let mutants = [
        // Expansion counted as compression.
        ("fmax(relative, 0.0)", "relative"),
        // The finish reads only its first partial.
        ("b < blocks; b += blockDim.x", "b < 1; b += blockDim.x"),
    ];
    for (from, to) in mutants {
        let mutation = Mutation {
            file: "pbf_stats.cuh",
            from,
            to,
        };
        let gpu = emulated(&snapshot, Rounding::Separate, Some(mutation));
        let (worst, exact) = compare(&gpu, &cpu);
        assert!(
            worst > 1e-6 || !exact,
            "the mutant {from:?} → {to:?} passed: sums within {worst:e}"
        );
    }
}

#[test]
fn no_particles_reduce_to_zeros() {
    let lowest = -1.0e308;
    let mut slots = [0.0; 16];
    for k in [1, 3, 8, 9, 10, 11, 12, 13, 15] {
        slots[k] = lowest;
    }
    let stats = stats_from_slots(&slots, 0, 0.01);
    assert_eq!(stats.bbox_min, [0.0; 3]);
    assert_eq!(stats.bbox_max, [0.0; 3]);
    assert_eq!(stats.compression_max, 0.0);
    assert_eq!(stats.neighbors_max, 0);
    assert_eq!(stats.density_error_mean, 0.0);
}
