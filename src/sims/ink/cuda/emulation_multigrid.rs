//! The multigrid kernels (`kernels/ink_multigrid.cuh`) run on the CPU by the emulation
//! (`emulation.rs`, `tests/emulation/ink.cpp`) against the CPU's `Multigrid`: each operation on
//! every level, whole V-cycles, the `pressure` stage, and frames of the `dye` and `karman`
//! presets on small grids; bitwise where the operations and their order are the same, with FMA
//! contraction (as nvcc compiles) within the GPU's allowances; mutants caught.
//!
//! The one sum whose order differs is a closed box's mean (pure Neumann): the CPU adds the fluid
//! cells one after another in f64, the GPU per block of 256 and then the blocks' sums
//! (`pressure_mg_sum`, `reduce_finish`) on the levels launched kernel by kernel, and per thread
//! then across the block in `pressure_mg_tail` (with one thread: the CPU's order). Its f64 sum
//! rounds to the same f32 mean but for a rounding within ~1e-16 of the sum's value; such a
//! difference moves every cell of a level by one ulp of the mean, far below the comparisons'
//! allowance (4 ulp of the field's largest value).

use super::emulation::{compile, compile_mutant, emulate_with, Command_, MgInput};
use super::hierarchy::Hierarchy;
use super::multigrid::TAIL_CELLS;
use super::parity::{
    self, differences, fields_of, StageComparison, EMULATION_TOLERANCE, GPU_STATISTICS_TOLERANCE,
    GPU_TOLERANCE, MG_RESIDUAL_TOLERANCE, RUN_TOLERANCE, STATISTICS_TOLERANCE,
};
use super::Fields;
use crate::sims::ink::cpu::CpuInk;
use crate::sims::ink::multigrid::Multigrid;
use crate::sims::ink::params::{InkParams, PressureSolver};
use crate::sims::ink::scene::InkScene;
use crate::sims::ink::{InkStage, Stamp};
use std::path::Path;

/// The worst relative difference of a multigrid stage or V-cycle of the GPU-like emulation (FMA
/// contraction) against the CPU (`gpu_like_multigrid_stays_within_the_gpu_tolerances`): the GPU
/// allowance [`GPU_TOLERANCE`] is at least ten times it.
pub const MG_GPU_LIKE_MEASURED: f32 = 2.5e-6;
/// The worst relative difference of the residual after 4 V-cycles of the GPU-like emulation:
/// [`MG_RESIDUAL_TOLERANCE`] is at least ten times it.
pub const MG_RESIDUAL_MEASURED: f64 = 2e-4;
/// The worst relative difference after 20 frames of `dye` or `karman` of the GPU-like emulation:
/// [`RUN_TOLERANCE`] is at least ten times it.
pub const MG_RUN_MEASURED: f32 = 2.5e-5;

/// The largest |a − b| relative to a's largest magnitude, and how many values differ in bits.
fn compare(a: &[f32], b: &[f32]) -> (f32, usize) {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let (mut worst, mut differ) = (0.0f32, 0);
    for (x, y) in a.iter().zip(b) {
        if x.to_bits() != y.to_bits() {
            differ += 1;
            let d = (x - y).abs();
            worst = worst.max(if d.is_nan() { f32::INFINITY } else { d });
        }
    }
    (worst / scale.max(f32::MIN_POSITIVE), differ)
}

/// The CPU hierarchy of `fields`' flow.
fn cpu_multigrid(fields: &Fields) -> Multigrid {
    let flow = &fields.flow;
    let fluid = flow.solid().iter().map(|s| !s).collect();
    Multigrid::new(flow.nx, flow.ny, flow.dx, fluid, &flow.boundary)
}

/// Deterministic rough values for the pooled arrays (p, b, r), zero outside fluid cells of b.
fn rough_pools(hierarchy: &Hierarchy) -> [Vec<f32>; 3] {
    let n = hierarchy.solid.len();
    let value = |k: usize, seed: usize| (((k * 7919 + seed * 104_729) % 1009) as f32 / 504.5) - 1.0;
    [
        (0..n).map(|k| value(k, 1)).collect(),
        (0..n).map(|k| value(k, 2) * 40.0).collect(),
        (0..n).map(|k| value(k, 3) * 40.0).collect(),
    ]
}

/// Loads the pooled arrays into the CPU's levels.
fn load(mg: &mut Multigrid, pools: &[Vec<f32>; 3]) {
    let mut offset = 0;
    for level in &mut mg.levels {
        let n = level.p.len();
        level.p.copy_from_slice(&pools[0][offset..offset + n]);
        level.b.copy_from_slice(&pools[1][offset..offset + n]);
        level.r.copy_from_slice(&pools[2][offset..offset + n]);
        offset += n;
    }
}

/// The CPU's levels as pooled arrays.
fn pools_of(mg: &Multigrid) -> [Vec<f32>; 3] {
    let gather = |f: &dyn Fn(&crate::sims::ink::multigrid::Level) -> &Vec<f32>| {
        mg.levels
            .iter()
            .flat_map(|l| f(l).iter().copied())
            .collect()
    };
    [gather(&|l| &l.p), gather(&|l| &l.b), gather(&|l| &l.r)]
}

/// The operations `run_multigrid_operation` in ink.cpp runs, on the CPU.
fn cpu_operation(mg: &mut Multigrid, operation: u32, level: usize) {
    match operation {
        0 => mg.levels[level].smooth(),
        1 => mg.levels[level].residual(),
        2 => mg.restrict(level),
        3 => mg.prolong(level),
        4 | 5 => mg.v_cycle(level),
        _ => unreachable!(),
    }
}

/// The two boxes: the comparison scene (outflow: Dirichlet levels) and the same box closed (pure
/// Neumann), after 12 stirred steps.
fn boxes() -> Vec<(&'static str, InkParams, Fields)> {
    [("channel", false), ("closed", true)]
        .into_iter()
        .map(|(name, closed)| {
            let params = parity::multigrid_params(closed);
            let fields = fields_of(&parity::stirred(&params, 12));
            (name, params, fields)
        })
        .collect()
}

/// One multigrid operation by the emulation and by the CPU from the same pooled arrays: the
/// pooled arrays' (worst relative difference, values differing in bits).
fn operation_difference(
    program: &Path,
    params: &InkParams,
    fields: &Fields,
    (operation, level): (u32, usize),
    tail: (usize, u32),
) -> (f32, usize) {
    let hierarchy = Hierarchy::new(&fields.flow);
    let pools = rough_pools(&hierarchy);
    let mut cpu = cpu_multigrid(fields);
    load(&mut cpu, &pools);
    cpu_operation(&mut cpu, operation, level);
    let mg = MgInput {
        tail_cells: tail.0,
        tail_threads: tail.1,
        pools,
    };
    let command = Command_::Multigrid {
        operation,
        level: level as u32,
    };
    let (_, _, _, theirs) = emulate_with(program, params, fields, command, params.dt, &[], &mg);
    let ours = pools_of(&cpu);
    (0..3).fold((0.0f32, 0), |(w, d), a| {
        let (worst, differ) = compare(&ours[a], &theirs[a]);
        (w.max(worst), d + differ)
    })
}

/// Every operation of every level (a sweep, the residual, the restriction, the prolongation,
/// the one-block V-cycle from the level) and a whole V-cycle launched as the host does, in a box
/// with an outflow side and in a closed one, equal the CPU's bit for bit — but for the closed
/// box's means summed in another order (the restriction and V-cycles launched kernel by kernel),
/// which stay within [`EMULATION_TOLERANCE`].
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn every_multigrid_kernel_matches_the_cpu_operation() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    for (name, params, fields) in boxes() {
        let levels = Hierarchy::new(&fields.flow).levels.len();
        assert!(levels >= 3, "{name}: {levels} levels");
        let mut cases = Vec::new();
        for level in 0..levels {
            cases.push(("sweep", 0, level, TAIL_CELLS));
            cases.push(("residual", 1, level, TAIL_CELLS));
            if level + 1 < levels {
                cases.push(("restrict", 2, level, TAIL_CELLS));
                cases.push(("prolong", 3, level, TAIL_CELLS));
            }
            cases.push(("tail", 4, level, TAIL_CELLS));
        }
        cases.push(("V-cycle, levels launched one by one", 5, 0, 0));
        cases.push(("V-cycle, all levels in one block", 5, 0, TAIL_CELLS));
        for (what, operation, level, tail_cells) in cases {
            let (worst, differ) = operation_difference(
                &program,
                &params,
                &fields,
                (operation, level),
                (tail_cells, 1),
            );
            println!("{name} level {level} {what}: {differ} values differ, worst {worst:.2e}");
            let reordered =
                name == "closed" && (operation == 2 || (operation == 5 && tail_cells == 0));
            if reordered {
                assert!(
                    worst <= EMULATION_TOLERANCE,
                    "{name} level {level} {what}: {worst:.2e}"
                );
            } else {
                assert_eq!(differ, 0, "{name} level {level} {what}: worst {worst:.2e}");
            }
        }
    }
}

/// `pressure_mg_tail` with 256 threads (its barriers run for real, blocks.h) gives the CPU's
/// V-cycle: bit for bit in the box with an outflow side, within [`EMULATION_TOLERANCE`] in the
/// closed box (the means' sums in the block's order).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_one_block_v_cycle_with_many_threads_matches_the_cpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    for (name, params, fields) in boxes() {
        let (worst, differ) =
            operation_difference(&program, &params, &fields, (5, 0), (TAIL_CELLS, 256));
        println!("{name}: {differ} values differ, worst {worst:.2e}");
        if name == "channel" {
            assert_eq!(differ, 0, "{name}: worst {worst:.2e}");
        }
        assert!(worst <= EMULATION_TOLERANCE, "{name}: {worst:.2e}");
    }
}

/// Every stage of a step with multigrid pressure, emulated from the CPU solver's state.
fn stage_comparisons(program: &Path, params: &InkParams, mg: &MgInput) -> Vec<StageComparison> {
    let mut other = |stage, before: &Fields, dt, stamps: &[Stamp]| {
        let (after, stats, _, _) = emulate_with(
            program,
            params,
            before,
            Command_::Stage(stage),
            dt,
            stamps,
            mg,
        );
        Ok((after, stats))
    };
    parity::compare_stages(params, 12, &mut other).expect("the emulation runs")
}

/// The multigrid configurations: both boxes, the small levels in one block or every level but
/// the coarsest launched kernel by kernel.
fn configurations() -> Vec<(String, InkParams, MgInput)> {
    let mut out = Vec::new();
    for (closed, tail_cells) in parity::MULTIGRID_CONFIGURATIONS {
        let mg = MgInput {
            tail_cells,
            ..MgInput::default()
        };
        let name = format!(
            "{} tail {tail_cells}",
            if closed { "closed" } else { "channel" }
        );
        out.push((name, parity::multigrid_params(closed), mg));
    }
    out
}

/// The `pressure` stage with 4 V-cycles (and every other stage of its step) emulated from the
/// CPU solver's state equals the CPU's within [`EMULATION_TOLERANCE`] (measured: bit for bit),
/// the residual within [`STATISTICS_TOLERANCE`].
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_multigrid_pressure_stage_matches_the_cpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    for (name, params, mg) in configurations() {
        for c in stage_comparisons(&program, &params, &mg) {
            println!(
                "{name} {:<18} worst {:.2e} {:?}",
                c.stage.name(),
                c.worst(),
                c.statistic
            );
            if let Err(failure) = c.check(EMULATION_TOLERANCE, STATISTICS_TOLERANCE) {
                panic!("{name}: {failure}");
            }
            if c.stage == InkStage::Pressure {
                let (_, cpu, _) = c.statistic.expect("the residual");
                assert!(cpu > 0.0, "{name}: no residual");
            }
        }
    }
}

/// A preset on a small grid (`cells`), its stamps per step.
fn preset(name: &str, cells: [usize; 2]) -> InkScene {
    let source = crate::scene::Source::load(name).expect("the preset");
    let mut scene = InkScene::from_source(&source).expect("it parses");
    assert_eq!(
        scene.params.pressure_solver,
        PressureSolver::Multigrid,
        "{name}"
    );
    (scene.params.cells_x, scene.params.cells_y) = (cells[0], cells[1]);
    scene
}

/// `steps` frames of `scene` on the CPU and by `program` (one step each, the statistics on the
/// last): the fields' worst relative difference and the fields.
fn frames(program: &Path, scene: &InkScene, steps: u32, mg: &MgInput) -> (f32, CpuInk, Fields) {
    let params = &scene.params;
    let mut cpu = CpuInk::new(params.clone(), |x, y| scene.solid(x, y));
    let mut fields = fields_of(&cpu);
    for step in 0..steps {
        let t = step as f32 * params.dt;
        let stamps = scene.stamps(t, t + params.dt);
        cpu.step(params.dt, &stamps);
        let command = Command_::Step {
            report: step + 1 == steps,
        };
        (fields, _, _, _) = emulate_with(program, params, &fields, command, params.dt, &stamps, mg);
    }
    let worst = differences(&fields_of(&cpu), &fields)
        .iter()
        .fold(0.0f32, |m, d| m.max(d.relative));
    (worst, cpu, fields)
}

/// The presets that use multigrid on small grids: `dye` (closed box, MacCormack, vorticity) at
/// 48², `karman` (inflow, outflow, a cylinder) at 96 × 36.
fn small_presets() -> Vec<(&'static str, InkScene)> {
    vec![
        ("dye", preset("dye", [48, 48])),
        ("karman", preset("karman", [96, 36])),
    ]
}

/// Twenty frames of `dye` and `karman` (small grids) emulated, the small levels in one block and
/// all launched kernel by kernel, track the CPU within [`EMULATION_TOLERANCE`] (measured: bit
/// for bit), and something happened (the velocity is not zero).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn twenty_emulated_frames_of_dye_and_karman_track_the_cpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    for (name, scene) in small_presets() {
        for tail_cells in [TAIL_CELLS, 0] {
            let mg = MgInput {
                tail_cells,
                ..MgInput::default()
            };
            let (worst, cpu, _) = frames(&program, &scene, 20, &mg);
            println!("{name} tail {tail_cells}: worst {worst:.2e}");
            let fastest = cpu.flow.u.data.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(fastest > 0.1, "{name}: the flow is at rest ({fastest})");
            assert!(
                worst <= EMULATION_TOLERANCE,
                "{name} tail {tail_cells}: {worst:.2e}"
            );
        }
    }
}

/// With FMA contraction (as nvcc compiles) the multigrid's stages stay within the bound
/// [`MG_GPU_LIKE_MEASURED`] (×10 ≤ [`GPU_TOLERANCE`]), its residual within
/// [`MG_RESIDUAL_MEASURED`] (×10 ≤ [`MG_RESIDUAL_TOLERANCE`]), the other statistics within a
/// tenth of [`GPU_STATISTICS_TOLERANCE`], and twenty frames of `dye` and `karman` within
/// [`MG_RUN_MEASURED`] (×10 ≤ [`RUN_TOLERANCE`]).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn gpu_like_multigrid_stays_within_the_gpu_tolerances() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), true);
    let (mut worst, mut statistics, mut residual) = (0.0f32, 0.0f64, 0.0f64);
    for (name, params, mg) in configurations() {
        for c in stage_comparisons(&program, &params, &mg) {
            println!("{name} {:<18} worst {:.2e}", c.stage.name(), c.worst());
            worst = worst.max(c.worst());
            if let Some((statistic, cpu, other)) = c.statistic {
                let error = (cpu - other).abs() / cpu.abs();
                println!("{name} {statistic}: {error:.2e}");
                if c.stage == InkStage::Pressure {
                    residual = residual.max(error);
                } else {
                    statistics = statistics.max(error);
                }
            }
        }
    }
    let mut run = 0.0f32;
    for (name, scene) in small_presets() {
        let (frames_worst, _, _) = frames(&program, &scene, 20, &MgInput::default());
        println!("{name}: 20 frames, worst {frames_worst:.2e}");
        run = run.max(frames_worst);
    }
    println!(
        "GPU-like multigrid: stages {worst:.3e}, residual {residual:.3e}, other statistics \
         {statistics:.3e}, run {run:.3e}"
    );
    assert!(
        statistics <= GPU_STATISTICS_TOLERANCE / 10.0,
        "{statistics:.3e}"
    );
    assert!(
        residual <= MG_RESIDUAL_MEASURED,
        "{residual:.3e}: re-derive MG_RESIDUAL_MEASURED"
    );
    const { assert!(MG_RESIDUAL_MEASURED * 10.0 <= MG_RESIDUAL_TOLERANCE) };
    assert!(
        worst <= MG_GPU_LIKE_MEASURED,
        "{worst:.3e}: re-derive MG_GPU_LIKE_MEASURED"
    );
    assert!(
        run <= MG_RUN_MEASURED,
        "{run:.3e}: re-derive MG_RUN_MEASURED"
    );
    const { assert!(MG_GPU_LIKE_MEASURED * 10.0 <= GPU_TOLERANCE) };
    const { assert!(MG_RUN_MEASURED * 10.0 <= RUN_TOLERANCE) };
}

/// A wrong multigrid kernel fails the comparison of one V-cycle (the small levels in one block
/// of 256 threads, and every level but the coarsest launched one by one) in one of the boxes:
/// the outflow side's mirror image dropped from the prolongation, the colours swapped, the
/// coarse p not zeroed by the restriction, a barrier of the one-block kernel missing, the closed
/// box's mean not removed.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn a_wrong_multigrid_kernel_fails_the_comparison() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = "ink_multigrid.cuh";
    let boxes = boxes();
    for (name, from, to) in [
        (
            "outflow mirror",
            "if (ci >= coarse.nx) return (o & 2u) ? -own : own;",
            "if (ci >= coarse.nx) return own;",
        ),
        (
            "colours",
            "int i = 2 * (int)(t % half) + ((j + colour) & 1);",
            "int i = 2 * (int)(t % half) + ((j + colour + 1) & 1);",
        ),
        ("coarse p", "    p[coarse.offset + c] = 0.0f;\n", "\n"),
        (
            "barrier",
            "prolong_cell(coarse, fine, stencil, solid, p, c);\n        __syncthreads();",
            "prolong_cell(coarse, fine, stencil, solid, p, c);",
        ),
        ("mean", "if (coarse.outflow == 0u) {", "if (false) {"),
    ] {
        let program = compile_mutant(&dir.path().join(name), false, Some((file, from, to)));
        let mut caught = Vec::new();
        for (box_name, params, fields) in &boxes {
            for tail in [(TAIL_CELLS, 256), (0, 1)] {
                let (worst, _) = operation_difference(&program, params, fields, (5, 0), tail);
                if worst.is_nan() || worst > EMULATION_TOLERANCE {
                    caught.push(format!("{box_name} tail {}: {worst:.2e}", tail.0));
                }
            }
        }
        println!("{name}: {caught:?}");
        assert!(!caught.is_empty(), "{name}: the mutant passed");
    }
}
