//! Clearing the ink (the B key, a restart: `InkSolver::clear`, `CudaInk::clear`) on the emulated
//! driver (tests/support/emulated_driver.rs): the state a clear leaves is a fresh solver's and
//! the CPU's, and the steps after it are too. Needs what the emulated driver needs (a C++20
//! compiler and cuda.h, scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

#[path = "support/ink_graph_runs.rs"]
mod ink_graph_runs;

use fluidlab::sims::ink::cuda::{parity, CudaInk};
use fluidlab::sims::ink::solver::InkSolver;
use fluidlab::sims::ink::Boundary;
use ink_graph_runs::same_bits;

/// Set in the child process that runs [`cleared_child`] on the emulated driver.
const CHILD: &str = "FLUIDLAB_INK_CLEAR_CHILD";

/// The ink's comparison scene (`parity::params`: 48 × 40, an inflow and an outflow side,
/// no-slip walls, a disc; MacCormack, ink ×2) on CUDA and on the CPU, both through
/// `InkSolver`, CUDA graphs on (stage timing off), stirred and painted for 5 frames, then
/// cleared three times, each time against a fresh `CudaInk` of the new parameters and the CPU
/// solver's clear:
/// - the sides changed to the default closed box with free-slip walls, the grid's size kept
///   (`CudaInk::clear`: the grid's record made again from the parameters);
/// - then 40 × 32 cells (`InkSolver::clear` makes a new `CudaInk`);
/// - then the parameters unchanged (the B key): the graphs captured before the clear are
///   replayed after it (3 of the 5 frames), bit for bit the fresh solver's.
///
/// After each clear the CUDA solver's fields (u, v, p, the ink, the curl, the divergence) and
/// masks are bit for bit the fresh solver's and the CPU's, its totals and report zero; then 5
/// frames later bit for bit the fresh solver's and within `parity::RUN_TOLERANCE` of the CPU's.
/// A clear onto another grid size in place is refused (the arrays are the old size's).
/// Mutants: `CudaInk::clear` without its grid made again, "sides changed, frame 0, fresh: u
/// differs"; `InkSolver::clear` clearing the CUDA solver in place at another grid size, the
/// clear refused ("40 × 32 cells": the totals not zeroed; before `CudaInk::clear` refused it,
/// "40 × 32 cells, fresh: u differs": 40 × 32 values in the 48 × 40 arrays); `CudaInk::clear`
/// dropping its kept graphs, "params unchanged: no graph replayed: (1, 0, 4)".
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_cleared_cuda_ink_is_a_fresh_one_and_the_cpus() {
    if std::env::var_os(CHILD).is_some() {
        cleared_child();
        return;
    }
    ink_graph_runs::in_child(
        "a_cleared_cuda_ink_is_a_fresh_one_and_the_cpus",
        CHILD,
        "ink cleared",
    );
}

/// The run [`a_cleared_cuda_ink_is_a_fresh_one_and_the_cpus`] checks, in a process on the
/// emulated driver.
fn cleared_child() {
    let source = fluidlab::scene::Source::load("karman").unwrap();
    let mut scene = fluidlab::sims::ink::scene::InkScene::from_source(&source).unwrap();
    scene.params = parity::params(fluidlab::sims::ink::Advection::Maccormack, 2);
    let backend = fluidlab::sims::Backend::Cuda;
    let (mut cuda, _) = InkSolver::create(&mut scene, None, backend, 0).unwrap();
    let mut cpu = InkSolver::cpu(scene.params.clone(), &|x, y| scene.solid(x, y));
    cuda.set_stage_timing(false);
    let mut frame = 0;
    run(&mut cuda, &mut cpu, None, &mut frame, "before");
    for what in ["sides changed", "40 × 32 cells", "params unchanged"] {
        for solver in [&mut cuda, &mut cpu] {
            let p = &mut solver.params;
            match what {
                "sides changed" => p.boundary = Boundary::default(),
                "40 × 32 cells" => (p.cells_x, p.cells_y) = (40, 32),
                _ => {}
            }
            solver.clear(&parity::solid, None);
        }
        // As the viewer before every step: a new grid is a new CUDA solver, stage timing on.
        cuda.set_stage_timing(false);
        let c = cuda.as_cuda().unwrap();
        assert_eq!(c.totals, Default::default(), "{what}");
        assert_eq!(c.report, Default::default(), "{what}");
        let mut fresh = CudaInk::new_on(0, cuda.params.clone(), &parity::solid).unwrap();
        fresh.set_stage_timing(false);
        let fields = c.read_back().unwrap();
        same_bits(
            &fields,
            &fresh.read_back().unwrap(),
            &format!("{what}, fresh"),
        );
        let cpu_fields = parity::fields_of(cpu.as_cpu().unwrap());
        same_bits(&fields, &cpu_fields, &format!("{what}, the CPU's"));
        let before = cuda.as_cuda().unwrap().graph_counts();
        run(&mut cuda, &mut cpu, Some(&mut fresh), &mut frame, what);
        let after = cuda.as_cuda().unwrap().graph_counts();
        if what == "params unchanged" {
            // The B key: the graphs captured before the clear are replayed after it.
            assert!(after.1 > before.1, "{what}: no graph replayed: {after:?}");
        }
    }
    println!("ink cleared: {}", cuda.as_cuda().unwrap().graph_summary());
    // Another grid size cleared in place would fill arrays of the old size: refused.
    let c = cuda.as_cuda_mut().unwrap();
    c.params.cells_x = 48;
    let error = c.clear(&parity::solid).unwrap_err().to_string();
    assert!(error.contains("40×32 cells (ink ×2) onto 48×32"), "{error}");
}

/// 5 frames of `cuda` and `cpu` stirred and painted (`parity::stamps`), each checked against
/// the CPU (within `parity::RUN_TOLERANCE`) and bit for bit against `fresh`, stepped alike.
fn run(
    cuda: &mut InkSolver,
    cpu: &mut InkSolver,
    mut fresh: Option<&mut CudaInk>,
    frame: &mut u32,
    what: &str,
) {
    for k in 0..5 {
        let stamps = parity::stamps(*frame);
        let dt = cuda.params.dt;
        for solver in [&mut *cuda, &mut *cpu] {
            solver.step(dt, &stamps, true).unwrap();
            assert!(solver.end_frame().unwrap(), "{what}, frame {k}: not finite");
        }
        *frame += 1;
        let fields = cuda.as_cuda().unwrap().read_back().unwrap();
        if let Some(fresh) = fresh.as_deref_mut() {
            fresh.params.clone_from(&cuda.params);
            fresh.step(dt, &stamps, true).unwrap();
            fresh.end_frame().unwrap();
            same_bits(
                &fields,
                &fresh.read_back().unwrap(),
                &format!("{what}, frame {k}, fresh"),
            );
        }
        let cpu_fields = parity::fields_of(cpu.as_cpu().unwrap());
        for d in parity::differences(&cpu_fields, &fields) {
            // What the projection leaves is noise (as the ink's other whole-run checks).
            if d.field == "divergence" {
                continue;
            }
            assert!(
                d.relative <= parity::RUN_TOLERANCE,
                "{what}, frame {k}: {} differs from the CPU's by {:.2e} of its largest value",
                d.field,
                d.relative
            );
        }
    }
    // The frames did something: ink laid and the fluid moving.
    let totals = cuda.totals();
    assert!(totals.0 > 1e-3 && totals.2 > 0.05, "{what}: {totals:?}");
}
