//! `kernels/ink.cu` without a GPU: compiled as plain C++ (`tests/emulation/ink.cpp`, with
//! `ink_shim.h` and the barrier-running `blocks.h`) and run on the CPU through the host's launch
//! sequence of each stage, against the CPU solver (`parity.rs`). This checks the kernels' math,
//! indexing, masks, reductions and launch sequence where there is no CUDA at all; what it cannot
//! check is the cudarc plumbing, real parallel execution and the GL surface (the device check
//! does). Needs a C++20 compiler (`CXX`, else `c++`), as PBF's emulation.

use super::hierarchy::Hierarchy;
use super::kernels::{splat_records, InkGrid};
use super::parity::{self, StageComparison, EMULATION_TOLERANCE, STATISTICS_TOLERANCE};
use super::{slot, Fields};
use crate::cuda::emulation::{self, Mutation, Rounding};
use crate::sims::ink::params::{Advection, InkParams, PressureSolver};
use crate::sims::ink::scene::Background;
use crate::sims::ink::stamp::STAMP_TEXELS;
use crate::sims::ink::{InkStage, Stamp};
use std::path::{Path, PathBuf};

/// The worst relative field difference of one stage between the GPU-like emulation (FMA
/// contraction, as nvcc) and the CPU solver, measured by `gpu_like_emulation_spread` over both
/// schemes and ink scales 1 and 2 (docs/ink-cuda.md): parity.rs's GPU allowance is ten times it.
pub const GPU_LIKE_MEASURED: f32 = 2.5e-6;

/// The worst relative field difference after [`parity::RUN_STEPS`] whole steps of the GPU-like
/// emulation against the CPU solver, both schemes and ink scales 1 and 2
/// (`twenty_gpu_like_steps_stay_within_the_run_tolerance`): parity.rs's run allowance is ten
/// times it.
pub const RUN_MEASURED: f32 = 2.5e-5;

/// Compiles ink.cpp (`contract`: with FMA contraction, as nvcc).
pub(super) fn compile(output: &Path, contract: bool) -> PathBuf {
    compile_mutant(output, contract, None)
}

/// As [`compile`], the mutation (file below kernels/, text, and what replaces it) applied to
/// that file.
pub(super) fn compile_mutant(
    output: &Path,
    contract: bool,
    mutation: Option<(&str, &str, &str)>,
) -> PathBuf {
    emulation::compile(
        "ink.cpp",
        output,
        Rounding::contracted(contract),
        mutation.map(|(file, from, to)| Mutation { file, from, to }),
    )
}

/// What the emulation is asked to run (`enum Stage` in ink.cpp).
#[derive(Clone, Copy)]
pub(super) enum Command_ {
    Stage(InkStage),
    Picture {
        view: u32,
        scalar: u32,
        paper: bool,
    },
    /// A whole step; `report`: with the statistics (the frame's last step).
    Step {
        report: bool,
    },
    /// One multigrid operation on the pooled arrays (`run_multigrid_operation` in ink.cpp).
    Multigrid {
        operation: u32,
        level: u32,
    },
    /// `wall_rows` over every row from the solid cells alone (`run_walls` in ink.cpp): the
    /// open masks, stencil and fixed velocities follow the output's pooled arrays.
    Walls,
}

/// The multigrid's side of an emulation: which levels run in the one block and with how many
/// threads, and the pooled p, b, r (empty: zeros).
#[derive(Clone, Debug)]
pub(super) struct MgInput {
    /// Levels of at most this many cells run in `pressure_mg_tail`.
    pub tail_cells: usize,
    /// Its threads (1: the mean's sums in the CPU's order).
    pub tail_threads: u32,
    /// The pooled arrays.
    pub pools: [Vec<f32>; 3],
}

impl Default for MgInput {
    fn default() -> Self {
        MgInput {
            tail_cells: super::multigrid::TAIL_CELLS,
            tail_threads: 1,
            pools: Default::default(),
        }
    }
}

/// Runs `command` on `fields` with the kernels on the CPU; returns the fields after, the
/// statistics slots and (for a picture) the texels, or the walls' masks.
pub(super) fn emulate(
    program: &Path,
    params: &InkParams,
    fields: &Fields,
    command: Command_,
    dt: f32,
    stamps: &[Stamp],
) -> (Fields, Vec<f64>, Vec<u8>) {
    let (fields, stats, texels, _) = emulate_with(
        program,
        params,
        fields,
        command,
        dt,
        stamps,
        &MgInput::default(),
    );
    (fields, stats, texels)
}

/// [`emulate`] with the multigrid's input `mg`; also returns the pooled p, b, r after.
pub(super) fn emulate_with(
    program: &Path,
    params: &InkParams,
    fields: &Fields,
    command: Command_,
    dt: f32,
    stamps: &[Stamp],
    mg: &MgInput,
) -> (Fields, Vec<f64>, Vec<u8>, [Vec<f32>; 3]) {
    let g = InkGrid::new(params);
    let nx = g.nx as usize;
    let stage = match command {
        Command_::Stage(stage) => stage as u32,
        Command_::Picture { .. } => 8,
        Command_::Step { .. } => 9,
        Command_::Multigrid { .. } => 10,
        Command_::Walls => 11,
    };
    let (view, scalar, paper) = match command {
        Command_::Picture {
            view,
            scalar,
            paper,
        } => (view, scalar, paper),
        _ => (0, 0, false),
    };
    let texture = params.brush_stamp.texture();
    let records: Vec<_> = stamps
        .iter()
        .flat_map(|s| splat_records(&g, s, dt, texture.is_some()))
        .collect();
    let lift = if params.buoyancy != 0.0 {
        params.buoyancy * dt / 3.0
    } else {
        0.0
    };
    let mut input = bytemuck::bytes_of(&g).to_vec();
    let header = [
        stage,
        u32::from(params.advection == Advection::Maccormack),
        params.iterations,
        records.len() as u32,
        view,
        u32::from(paper),
        u32::from(!matches!(command, Command_::Step { report: false })),
        scalar,
    ];
    input.extend_from_slice(bytemuck::cast_slice(&header));
    let scalars = [
        dt,
        (-params.velocity_damping * dt).exp(),
        (-params.ink_fade * dt).exp(),
        lift,
        params.vorticity * g.dx,
        params.pressure_carry_over,
        g.dx * g.dx,
        1.0 / (g.dx * g.dx),
    ];
    input.extend_from_slice(bytemuck::cast_slice(&scalars));
    for (lattice, record) in &records {
        input.extend_from_slice(&(*lattice as u32).to_le_bytes());
        input.extend_from_slice(bytemuck::bytes_of(record));
    }
    let texels = texture.unwrap_or_else(|| vec![0.0; STAMP_TEXELS * STAMP_TEXELS]);
    input.extend_from_slice(bytemuck::cast_slice(&texels));
    let flow = &fields.flow;
    for data in [&flow.u.data, &flow.v.data, &flow.p.data] {
        input.extend_from_slice(bytemuck::cast_slice(data));
    }
    for channel in &fields.ink.channels {
        input.extend_from_slice(bytemuck::cast_slice(&channel.data));
    }
    input.extend_from_slice(bytemuck::cast_slice(&fields.curl.data));
    input.extend_from_slice(bytemuck::cast_slice(&fields.divergence.data));
    input.extend((0..g.u_faces()).map(|k| u8::from(flow.u_open(k % (nx + 1), k / (nx + 1)))));
    input.extend((0..g.v_faces()).map(|k| u8::from(flow.v_open(k % nx, k / nx))));
    input.extend(flow.solid().iter().map(|&s| u8::from(s)));
    input.extend_from_slice(&flow.poisson.cells);
    let (u_fixed, v_fixed) = flow.fixed();
    input.extend_from_slice(bytemuck::cast_slice(u_fixed));
    input.extend_from_slice(bytemuck::cast_slice(v_fixed));
    let mut hierarchy = Hierarchy::new(flow);
    let (operation, level) = match command {
        Command_::Multigrid { operation, level } => (operation, level),
        _ => (0, 0),
    };
    let mg_header = [
        u32::from(params.pressure_solver == PressureSolver::Multigrid),
        hierarchy.levels.len() as u32,
        Hierarchy::tail(&hierarchy.levels, mg.tail_cells) as u32,
        mg.tail_threads,
        operation,
        level,
        0,
        0,
    ];
    input.extend_from_slice(bytemuck::cast_slice(&mg_header));
    input.extend_from_slice(bytemuck::cast_slice(&hierarchy.levels));
    input.extend_from_slice(hierarchy.stencil(flow));
    input.extend_from_slice(&hierarchy.solid);
    let pooled = hierarchy.solid.len();
    for pool in &mg.pools {
        if pool.is_empty() {
            input.extend(std::iter::repeat_n(0u8, 4 * pooled));
        } else {
            assert_eq!(pool.len(), pooled, "a pooled array");
            input.extend_from_slice(bytemuck::cast_slice(pool));
        }
    }
    let output = crate::cuda::emulation::run(program, &input, &[]);
    let mut at = 0;
    let mut floats = |n: usize| -> Vec<f32> {
        let values = bytemuck::pod_collect_to_vec(&output[at..at + 4 * n]);
        at += 4 * n;
        values
    };
    let mut after = fields.clone();
    after.flow.u.data = floats(g.u_faces());
    after.flow.v.data = floats(g.v_faces());
    after.flow.p.data = floats(g.cells());
    for channel in &mut after.ink.channels {
        channel.data = floats(g.ink_cells());
    }
    after.curl.data = floats(g.cells());
    after.divergence.data = floats(g.cells());
    let stats: Vec<f64> = bytemuck::pod_collect_to_vec(&output[at..at + 8 * slot::COUNT]);
    at += 8 * slot::COUNT;
    let mut pool = || -> Vec<f32> {
        let values = bytemuck::pod_collect_to_vec(&output[at..at + 4 * pooled]);
        at += 4 * pooled;
        values
    };
    let pools = [pool(), pool(), pool()];
    (after, stats, output[at..].to_vec(), pools)
}

pub(super) fn stage_comparisons(program: &Path, params: &InkParams) -> Vec<StageComparison> {
    let mut other = |stage, before: &Fields, dt, stamps: &[Stamp]| {
        let (after, stats, _) =
            emulate(program, params, before, Command_::Stage(stage), dt, stamps);
        Ok((after, stats))
    };
    parity::compare_stages(params, 12, &mut other).expect("the emulation runs")
}

fn check_all(comparisons: &[StageComparison], tolerance: f32, statistics: f64, what: &str) {
    let failures: Vec<String> = comparisons
        .iter()
        .filter_map(|c| c.check(tolerance, statistics).err())
        .collect();
    assert!(failures.is_empty(), "{what}:\n{}", failures.join("\n"));
}

/// Every stage of both advection schemes, on ink grids equal to and twice as fine as the flow's
/// (exact centre velocities, sampled ones), run by the kernels on the CPU from the CPU solver's
/// state, equals the CPU solver's stage within [`EMULATION_TOLERANCE`] of each field's largest
/// value (statistics within [`STATISTICS_TOLERANCE`]).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn every_ink_kernel_run_on_the_cpu_matches_the_cpu_solver_stage_by_stage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    for advection in Advection::ALL {
        for ink_scale in [1, 2] {
            let params = parity::params(advection, ink_scale);
            let comparisons = stage_comparisons(&program, &params);
            for c in &comparisons {
                println!(
                    "{} ×{ink_scale} {:<18} worst {:.2e} {:?}",
                    advection.name(),
                    c.stage.name(),
                    c.worst(),
                    c.statistic
                );
            }
            let what = format!("{} ×{ink_scale}", advection.name());
            check_all(
                &comparisons,
                EMULATION_TOLERANCE,
                STATISTICS_TOLERANCE,
                &what,
            );
        }
    }
}

/// The worst relative field difference over every stage of both schemes and both ink scales,
/// and the worst relative difference of a statistic.
fn worst_over_configurations(program: &Path) -> (f32, f64) {
    let (mut worst, mut statistics) = (0.0f32, 0.0f64);
    for advection in Advection::ALL {
        for ink_scale in [1, 2] {
            let comparisons = stage_comparisons(program, &parity::params(advection, ink_scale));
            for c in &comparisons {
                println!(
                    "{} ×{ink_scale} {:<18} worst {:.2e}",
                    advection.name(),
                    c.stage.name(),
                    c.worst()
                );
                worst = worst.max(c.worst());
                if let Some((_, cpu, other)) = c.statistic {
                    statistics = statistics.max((cpu - other).abs() / cpu.abs());
                }
            }
        }
    }
    (worst, statistics)
}

/// With a·b + c contracted into fused multiply-adds, as nvcc compiles the kernels, every stage
/// stays within the GPU allowance ([`parity::GPU_TOLERANCE`]), and within ten times the figure
/// that allowance was derived from ([`GPU_LIKE_MEASURED`] × 10 = the allowance).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn ink_kernels_with_fused_multiply_adds_stay_within_the_gpu_tolerance() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), true);
    let (worst, statistics) = worst_over_configurations(&program);
    println!(
        "GPU-like emulation: worst relative difference {worst:.3e}, statistics {statistics:.3e}"
    );
    assert!(
        statistics <= parity::GPU_STATISTICS_TOLERANCE / 10.0,
        "{statistics:.3e}"
    );
    assert!(
        worst <= GPU_LIKE_MEASURED,
        "the GPU-like emulation differs by {worst:.3e}, more than the {GPU_LIKE_MEASURED:.1e} \
         the GPU tolerance was derived from: re-derive parity::GPU_TOLERANCE"
    );
    const { assert!(GPU_LIKE_MEASURED * 10.0 <= parity::GPU_TOLERANCE) };
}

/// The comparison sees a wrong kernel: the original's `+` in subtract_gradient, or the no-slip
/// bottom wall's factor forgotten (by the sampler and the advected tangential velocity), fail it.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn a_wrong_kernel_fails_the_emulation_comparison() {
    let dir = tempfile::tempdir().expect("temp dir");
    let params = parity::params(Advection::Maccormack, 2);
    for (name, mutation) in [
        (
            "sign",
            (
                "ink.cu",
                "u[j * w + i] -= (here - left)",
                "u[j * w + i] += (here - left)",
            ),
        ),
        (
            "no-slip",
            (
                "ink_grid.cuh",
                "if ((g.sticks & STICK_BOTTOM) && y < h) return fmaxf(y / h, 0.0f);",
                "",
            ),
        ),
        (
            "moving wall ignored",
            (
                "ink_grid.cuh",
                "(i == g.nx ? g.fixed_right : wall)",
                "(i == g.nx ? g.fixed_right : 0.0f)",
            ),
        ),
        (
            "obstacles' ghost faces not mirrored",
            (
                "ink_walls.cuh",
                "if (n > 0) value = mirrored(stick, value, sum, n);\n            }\n            u[ku]",
                "}\n            u[ku]",
            ),
        ),
        (
            "stamp ignored",
            (
                "ink.cu",
                "if (s.masked) weight = weight * stamp_alpha(stamp, s, ex, ey);",
                "",
            ),
        ),
    ] {
        let program = compile_mutant(&dir.path().join(name), false, Some(mutation));
        let comparisons = stage_comparisons(&program, &params);
        let failed: Vec<_> = comparisons
            .iter()
            .filter(|c| c.check(EMULATION_TOLERANCE, STATISTICS_TOLERANCE).is_err())
            .map(|c| c.stage.name())
            .collect();
        println!("{name}: {failed:?}");
        assert!(!failed.is_empty(), "{name}: the mutant passed");
    }
}

/// Twenty whole steps (every stage, the statistics at the end) of the kernels on the CPU track
/// the CPU solver's: fields within [`EMULATION_TOLERANCE`], the ink, kinetic energy and largest
/// speed the GPU's reductions give within [`STATISTICS_TOLERANCE`] of the CPU's.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn twenty_emulated_steps_track_the_cpu_solver() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    let params = parity::params(Advection::Maccormack, 2);
    let (cpu, fields, stats) = run(&program, &params);
    for d in parity::differences(&parity::fields_of(&cpu), &fields) {
        assert!(d.relative <= EMULATION_TOLERANCE, "{d:?}");
    }
    let g = InkGrid::new(&params);
    let ink = stats[slot::TOTALS as usize] * f64::from(g.ink_h) * f64::from(g.ink_h);
    let energy = stats[slot::TOTALS as usize + 1] * f64::from(g.dx * g.dx);
    let fastest = stats[slot::TOTALS as usize + 2].sqrt();
    let (cpu_energy, cpu_fastest) =
        crate::sims::ink::picture::kinetic_energy_and_max_speed(cpu.flow.view());
    for (name, cpu, gpu) in [
        ("ink", cpu.ink.total(), ink),
        ("kinetic energy", cpu_energy, energy),
        ("largest speed", cpu_fastest, fastest),
    ] {
        assert!(cpu > 0.0, "{name} is zero: the scene does nothing");
        let error = (cpu - gpu).abs() / cpu;
        assert!(
            error <= STATISTICS_TOLERANCE,
            "{name}: CPU {cpu}, kernels {gpu}"
        );
    }
    assert_eq!(stats[slot::TOTALS as usize + 3], 0.0, "non-finite faces");
}

/// The `picture` kernel draws every view (on both backgrounds, ink grids equal to and finer
/// than the flow's) byte for byte as the CPU's `picture` does.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_picture_kernel_draws_every_view_as_the_cpu_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), false);
    for ink_scale in [1, 2] {
        let params = parity::params(Advection::Maccormack, ink_scale);
        let cpu = parity::stirred(&params, 12);
        let fields = parity::fields_of(&cpu);
        for (name, view, scalar) in [
            ("ink", 0, 0),
            ("flow", 1, 0),
            ("pressure", 2, 0),
            ("divergence", 2, 1),
            ("curl", 2, 2),
            ("side-by-side", 3, 0),
        ] {
            for background in [Background::Paper, Background::Dark] {
                let paper = background == Background::Paper;
                let command = Command_::Picture {
                    view,
                    scalar,
                    paper,
                };
                let (_, _, texels) = emulate(&program, &params, &fields, command, params.dt, &[]);
                let (w, h, pixels) =
                    crate::sims::ink::picture::picture(cpu.flow.view(), &cpu.ink, name, background);
                assert_eq!(texels.len(), w * h * 4, "{name} ×{ink_scale}: size");
                let wrong = pixels.iter().zip(&texels).filter(|(a, b)| a != b).count();
                assert_eq!(
                    wrong, 0,
                    "{name} ×{ink_scale} {background:?}: {wrong} bytes differ"
                );
            }
        }
    }
}

/// [`parity::RUN_STEPS`] whole steps from rest on the CPU and by `program`: the CPU solver, the
/// emulation's fields and its last statistics.
fn run(program: &Path, params: &InkParams) -> (crate::sims::ink::cpu::CpuInk, Fields, Vec<f64>) {
    let last = parity::RUN_STEPS - 1;
    let mut cpu = crate::sims::ink::cpu::CpuInk::new(params.clone(), parity::solid);
    let mask = cpu.flow.solid().to_vec();
    cpu.set_walls(0..params.cells_y, &mask, vec![parity::MOVING]);
    let mut fields = parity::fields_of(&cpu);
    let mut stats = Vec::new();
    for step in 0..parity::RUN_STEPS {
        let stamps = parity::stamps(step);
        cpu.step(params.dt, &stamps);
        let command = Command_::Step {
            report: step == last,
        };
        (fields, stats, _) = emulate(program, params, &fields, command, params.dt, &stamps);
    }
    (cpu, fields, stats)
}

/// The whole-run allowance of the GPU parity check holds for the GPU-like emulation (FMA
/// contraction) over both schemes and ink scales 1 and 2, ten times over.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn twenty_gpu_like_steps_stay_within_the_run_tolerance() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("ink"), true);
    let mut worst = 0.0f32;
    for advection in Advection::ALL {
        for ink_scale in [1, 2] {
            let params = parity::params(advection, ink_scale);
            let (cpu, fields, _) = run(&program, &params);
            for d in parity::differences(&parity::fields_of(&cpu), &fields) {
                println!(
                    "{} ×{ink_scale} {:<10} {:.3e}",
                    advection.name(),
                    d.field,
                    d.relative
                );
                worst = worst.max(d.relative);
            }
        }
    }
    println!(
        "GPU-like emulation, {} steps: worst {worst:.3e}",
        parity::RUN_STEPS
    );
    assert!(
        worst <= RUN_MEASURED,
        "{worst:.3e}: re-derive parity::RUN_TOLERANCE"
    );
    const { assert!(RUN_MEASURED * 10.0 <= parity::RUN_TOLERANCE) };
}
