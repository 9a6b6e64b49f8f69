//! `kernels/pool.cu` without a GPU: compiled as plain C++ (`tests/emulation/pool.cpp`, with
//! `pool_shim.h` and the barrier-running `blocks.h`) and run on the CPU through the host's
//! launch sequence of each stage, against the CPU solver (`parity.rs`). This checks the
//! kernels' math, indexing, flags, reductions and launch sequence where there is no CUDA at
//! all; what it cannot check is the cudarc plumbing, real parallel execution and the GL surface
//! (the device check does). Needs a C++20 compiler (`CXX`, else `c++`), as ink's emulation.

use super::kernels::{PoolDrop, PoolGrid};
use super::parity::{
    self, Comparison, Ran, Work, CONFIGURATIONS, EMULATION_TOLERANCE, STATISTICS_TOLERANCE,
};
use super::{slot, stats_from_slots};
use crate::cuda::emulation::{self, Mutation, Rounding};
use crate::sims::pool::cpu::StepConstants;
use crate::sims::pool::drops::{Stencil, Target};
use crate::sims::pool::params::PoolParams;
use crate::sims::pool::surface::Surface;
use crate::sims::pool::PoolStage;
use std::path::{Path, PathBuf};

/// The worst relative field difference of one stage between the GPU-like emulation (FMA
/// contraction, as nvcc) and the CPU solver over every configuration
/// (`pool_kernels_with_fused_multiply_adds_stay_within_the_gpu_tolerance`; measured 1.01e-6,
/// in `forces` on the spring lattice): parity.rs's GPU allowance is at least ten times it.
pub const GPU_LIKE_MEASURED: f32 = 1.5e-6;

/// The worst relative difference of the heights, velocities, accelerations and statistics
/// after [`parity::RUN_FRAMES`] frames of the GPU-like emulation against the CPU solver over
/// every configuration (measured 6.9e-5, accel on the spring lattice): parity.rs's run
/// allowance is at least ten times it.
pub const RUN_MEASURED: f32 = 1e-4;

/// The same for the spring lattice's horizontal fields (measured 8.7e-4, velocity_h with open
/// edges; 1.13e-3 before their horizontal sponge).
pub const RUN_HORIZONTAL_MEASURED: f32 = 1.5e-3;

/// Compiles pool.cpp (`contract`: with FMA contraction, as nvcc), with `mutation` (text, and
/// what replaces it) applied to pool.cu when given.
fn compile(output: &Path, contract: bool, mutation: Option<(&str, &str)>) -> PathBuf {
    emulation::compile(
        "pool.cpp",
        output,
        Rounding::contracted(contract),
        mutation.map(|(from, to)| Mutation {
            file: "pool.cu",
            from,
            to,
        }),
    )
}

/// What the emulation is asked to run (`enum Work` in pool.cpp).
#[derive(Clone, Copy)]
enum Job<'a> {
    Work(Work<'a>),
    Texels,
    Settle,
}

/// Runs `job` of `params` on `surface` with the kernels on the CPU: the surface after, the
/// statistics slots and (for the texels) the texels.
fn emulate(
    program: &Path,
    params: &PoolParams,
    job: Job,
    surface: &Surface,
) -> (Surface, Vec<f64>, Vec<f32>) {
    let g = PoolGrid::new(&StepConstants::new(params));
    let (work, drops, centre) = match job {
        Job::Work(Work::Stage(stage, drops)) => (stage as u32, drops, None),
        Job::Work(Work::Stats(centre)) => (4, &[][..], centre),
        Job::Work(Work::Frame(drops, centre, true)) => (5, drops, centre),
        Job::Work(Work::Frame(drops, centre, false)) => (8, drops, centre),
        Job::Texels => (6, &[][..], None),
        Job::Settle => (7, &[][..], None),
    };
    let mut input = bytemuck::bytes_of(&g).to_vec();
    let header = [
        work,
        drops.len() as u32,
        u32::from(centre.is_some()),
        params.substeps(),
    ];
    input.extend_from_slice(bytemuck::cast_slice(&header));
    input.extend_from_slice(bytemuck::cast_slice(&centre.unwrap_or([0.0; 2])));
    for drop in drops {
        // As CudaPool::disturb: the stencil of the drop's radius in nodes, its box.
        let stencil = Stencil::new(drop.radius / surface.h);
        let record = PoolDrop::new(
            drop.position,
            drop.amplitude,
            stencil.reach,
            (surface.n, surface.h),
        );
        input.extend_from_slice(bytemuck::bytes_of(&record));
        let target = match drop.target {
            Target::Height => 0u32,
            Target::Velocity => 1,
        };
        input.extend_from_slice(&target.to_le_bytes());
        input.extend_from_slice(&(stencil.weights.len() as u32).to_le_bytes());
        input.extend_from_slice(bytemuck::cast_slice(&stencil.weights));
    }
    for data in [&surface.height, &surface.velocity, &surface.accel] {
        input.extend_from_slice(bytemuck::cast_slice(data));
    }
    for data in [&surface.offset, &surface.velocity_h, &surface.accel_h] {
        input.extend_from_slice(bytemuck::cast_slice(data));
    }
    input.extend_from_slice(&surface.flags);
    let output = crate::cuda::emulation::run(program, &input, &[]);
    let count = surface.n * surface.n;
    let mut at = 0;
    let mut floats = |n: usize| -> Vec<f32> {
        let values = bytemuck::pod_collect_to_vec(&output[at..at + 4 * n]);
        at += 4 * n;
        values
    };
    let mut after = surface.clone();
    after.height = floats(count);
    after.velocity = floats(count);
    after.accel = floats(count);
    after.offset = bytemuck::pod_collect_to_vec(&floats(2 * count));
    after.velocity_h = bytemuck::pod_collect_to_vec(&floats(2 * count));
    after.accel_h = bytemuck::pod_collect_to_vec(&floats(2 * count));
    let stats: Vec<f64> = bytemuck::pod_collect_to_vec(&output[at..at + 8 * slot::COUNT]);
    at += 8 * slot::COUNT;
    let texels = bytemuck::pod_collect_to_vec(&output[at..]);
    (after, stats, texels)
}

/// The emulation as parity.rs's runner.
fn runner(program: &Path) -> impl FnMut(&PoolParams, Work, &Surface) -> Ran + '_ {
    move |params: &PoolParams, work: Work, before: &Surface| {
        let (after, slots, _) = emulate(program, params, Job::Work(work), before);
        let stats = match work {
            Work::Stage(..) => None,
            Work::Frame(_, _, false) => None,
            Work::Stats(centre) | Work::Frame(_, centre, true) => {
                Some(stats_from_slots(&slots, before.h, centre))
            }
        };
        Ok((after, stats))
    }
}

/// Every configuration's stage comparisons by `program`, printed.
fn all_stages(program: &Path) -> Vec<(String, Comparison)> {
    let mut out = Vec::new();
    for (model, edges, shear) in CONFIGURATIONS {
        let params = parity::params(model, edges, shear);
        let comparisons =
            parity::compare_stages(&params, &mut runner(program)).expect("the emulation runs");
        for c in comparisons {
            let what = format!("{} {} shear {shear}", model.name(), edges.name());
            println!(
                "{what:<24} {:<10} worst {:.2e}, statistics {:.1e}",
                c.name(),
                c.worst(),
                c.worst_stat()
            );
            out.push((what, c));
        }
    }
    out
}

fn check_all(comparisons: &[(String, Comparison)], tolerance: f32, statistics: f64) {
    let failures: Vec<String> = comparisons
        .iter()
        .filter_map(|(what, c)| {
            c.check(tolerance, statistics)
                .err()
                .map(|e| format!("{what}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every stage of both models with walls, a shore and open edges (and an island), and the
/// statistics, run by the kernels on the CPU from the CPU solver's state, equal the CPU
/// solver's within [`EMULATION_TOLERANCE`] (measured: to the bit) and
/// [`STATISTICS_TOLERANCE`].
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn every_pool_kernel_run_on_the_cpu_matches_the_cpu_solver_stage_by_stage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("pool"), false, None);
    let comparisons = all_stages(&program);
    check_all(&comparisons, EMULATION_TOLERANCE, STATISTICS_TOLERANCE);
    let bitwise = comparisons.iter().filter(|(_, c)| c.worst() == 0.0).count();
    println!(
        "{bitwise} of {} comparisons equal to the bit",
        comparisons.len()
    );
    // Every stage did something on the CPU (the edges only where they are open): the
    // comparison saw work.
    for (what, c) in &comparisons {
        let idle =
            c.stage.is_none() || (c.stage == Some(PoolStage::Edges) && !what.contains("open"));
        assert!(
            idle || c.changed,
            "{what} {}: the CPU's stage changed nothing",
            c.name()
        );
    }
}

/// With a·b + c contracted into fused multiply-adds, as nvcc compiles the kernels, every stage
/// stays within [`GPU_LIKE_MEASURED`], ten times which is at most the GPU allowance.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn pool_kernels_with_fused_multiply_adds_stay_within_the_gpu_tolerance() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("pool"), true, None);
    let comparisons = all_stages(&program);
    let worst = comparisons
        .iter()
        .fold(0.0f32, |m, (_, c)| m.max(c.worst()));
    let stats = comparisons
        .iter()
        .fold(0.0f64, |m, (_, c)| m.max(c.worst_stat()));
    println!("GPU-like emulation: worst relative difference {worst:.3e}, statistics {stats:.3e}");
    assert!(
        worst <= GPU_LIKE_MEASURED,
        "the GPU-like emulation differs by {worst:.3e}, more than the {GPU_LIKE_MEASURED:.1e} \
         the GPU tolerance was derived from: re-derive parity::GPU_TOLERANCE"
    );
    assert!(
        stats <= parity::GPU_STATISTICS_TOLERANCE / 10.0,
        "{stats:.3e}"
    );
    const { assert!(GPU_LIKE_MEASURED * 10.0 <= parity::GPU_TOLERANCE) };
}

/// The comparison sees a wrong kernel: Mur's coefficient with the wrong sign, the shear
/// springs at the structural rest length, a wall that does not mirror, integrate that lets
/// fixed nodes move or leaves the open edges' horizontal sponge out, a drop that moves the
/// island's nodes: each fails some stage.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn a_wrong_pool_kernel_fails_the_emulation_comparison() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, mutation) in [
        (
            "mur",
            ("g.mur * (height[a] - old)", "g.mur * (old - height[a])"),
        ),
        (
            "shear rest",
            ("s >= 4 ? g.diagonal_rest : g.rest", "g.rest"),
        ),
        (
            "mirror",
            ("here[i > 0 ? i - 1 : 0]", "here[i > 0 ? i - 1 : 1]"),
        ),
        ("fixed", ("(f & FIXED) ? 0.0f : 1.0f", "1.0f")),
        (
            "no sponge",
            ("g.decay * (1.0f - g.sponge * r * r)", "g.decay"),
        ),
        (
            "fixed drops",
            ("if (flags[m] & FIXED) return;\n    int a", "int a"),
        ),
    ] {
        let program = compile(
            &dir.path().join(name.replace(' ', "-")),
            false,
            Some(mutation),
        );
        let failed: Vec<String> = all_stages(&program)
            .iter()
            .filter(|(_, c)| c.check(EMULATION_TOLERANCE, STATISTICS_TOLERANCE).is_err())
            .map(|(what, c)| format!("{what} {}", c.name()))
            .collect();
        println!("{name}: {failed:?}");
        assert!(!failed.is_empty(), "{name}: the mutant passed");
    }
}

/// [`parity::RUN_FRAMES`] whole frames (every stage, the statistics at the end) of the kernels
/// on the CPU track the CPU solver's in every configuration: without contraction within
/// [`EMULATION_TOLERANCE`]; with it within [`RUN_MEASURED`] ([`RUN_HORIZONTAL_MEASURED`] for
/// the horizontal fields), ten times which are parity.rs's run allowances.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn thirty_emulated_frames_track_the_cpu_solver() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (contract, tolerance, horizontal) in [
        (false, EMULATION_TOLERANCE, EMULATION_TOLERANCE),
        (true, RUN_MEASURED, RUN_HORIZONTAL_MEASURED),
    ] {
        let program = compile(&dir.path().join(format!("pool-{contract}")), contract, None);
        let mut worst = 0.0f32;
        let mut failures = Vec::new();
        for (model, edges, shear) in CONFIGURATIONS {
            let params = parity::params(model, edges, shear);
            let c = parity::compare_run(&params, &mut runner(&program)).expect("runs");
            let (vertical, sideways) = c.worst_split();
            println!(
                "contract {contract}: {} {} shear {shear}: worst {vertical:.3e}, horizontal \
                 {sideways:.3e}, statistics {:.1e}",
                model.name(),
                edges.name(),
                c.worst_stat()
            );
            for d in &c.fields {
                println!("    {:<10} {:.3e}", d.field, d.relative);
            }
            worst = worst.max(c.worst());
            let statistics = if contract {
                f64::from(tolerance)
            } else {
                STATISTICS_TOLERANCE
            };
            if let Err(failure) = c.check_split(tolerance, horizontal, statistics) {
                failures.push(format!("{} {}: {failure}", model.name(), edges.name()));
            }
            assert!(
                c.stats.iter().all(|s| s.1 != 0.0),
                "a statistic is zero: the run does nothing: {:?}",
                c.stats
            );
        }
        println!("contract {contract}: worst {worst:.3e}");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
    const { assert!(RUN_MEASURED * 10.0 <= parity::RUN_TOLERANCE) };
    const { assert!(RUN_HORIZONTAL_MEASURED * 10.0 <= parity::RUN_HORIZONTAL_TOLERANCE) };
}

/// The texels the kernel writes are the CPU's (surface.rs `texels`) to the bit, and
/// `settle_flags` does what `Surface::settle` does after new flags.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_texels_and_the_settling_of_new_flags_are_the_cpus() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("pool"), false, None);
    let params = parity::params(
        crate::sims::pool::Model::Springs,
        crate::sims::pool::Edges::Pool,
        true,
    );
    let cpu = parity::stirred(&params, parity::STIRRED_FRAMES);
    let (_, _, texels) = emulate(&program, &params, Job::Texels, &cpu.surface);
    let mut expected = Vec::new();
    cpu.surface.texels(&mut expected);
    let expected: Vec<f32> = expected.into_iter().flatten().collect();
    assert_eq!(texels.len(), expected.len());
    let wrong = texels
        .iter()
        .zip(&expected)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(wrong, 0, "{wrong} texel values differ");
    assert!(expected.iter().any(|&v| v != 0.0) && expected.chunks(4).any(|t| t[3] == 1.0));

    let mut moved = cpu.surface.clone();
    let shore = crate::sims::pool::PoolParams {
        edges: crate::sims::pool::Edges::Shore,
        horizontal: false,
        ..params
    };
    moved.flags = crate::sims::pool::surface::node_flags(&shore, moved.n, moved.h, parity::land);
    let (after, _, _) = emulate(&program, &params, Job::Settle, &moved);
    moved.settle();
    let d = parity::differences(&moved, &after);
    assert!(d.iter().all(|d| d.relative == 0.0), "{d:?}");
    assert!(
        moved.offset.iter().all(|o| *o == [0.0; 2]),
        "locked everywhere"
    );
    let _ = PoolStage::ALL;
}
