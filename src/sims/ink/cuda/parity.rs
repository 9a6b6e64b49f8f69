//! The CUDA solver (or the kernels run on the CPU, `emulation.rs`) against the CPU solver, stage
//! by stage: both start a stage from the same state — the CPU solver's after a few stirred
//! steps of a small scene with an obstacle, an inflow and an outflow side and no-slip walls —
//! and every field (u, v, p, ink, curl, divergence) and statistic each stage reports must agree.
//!
//! Tolerances, relative to the field's largest magnitude (or the statistic):
//!
//! - [`EMULATION_TOLERANCE`]: the kernels compiled as C++ without contraction evaluate the CPU
//!   solver's operations in its order, so the fields come out equal to the bit (measured: 0);
//!   the allowance is 4 units in the last place of an f32 (4 × 2⁻²³ ≈ 4.8e-7), for a compiler
//!   that evaluates `expf` or a conversion differently. Statistics: the GPU sums squares in f64
//!   per block, the CPU's divergence RMS sums each row's squares in f32 (`Flow::divergence_row`),
//!   whose rounding grows to n·2⁻²⁴ over a row of n cells (2.9e-6 for the 48-cell rows here;
//!   measured 1.1e-7): 1e-5.
//! - [`GPU_TOLERANCE`]: nvcc contracts a·b + c into fused multiply-adds (one rounding instead of
//!   two), and CUDA's `expf` is within 2 ulp. One stage then differs by a few ulp where values
//!   are added, and by ulp(x)·|∇φ|·dt/dx where a moved trace position re-weights an
//!   interpolation; 20 Jacobi sweeps carry such differences without growing them. Measured with
//!   the GPU-like emulation (contraction on, FMA; `GPU_LIKE_MEASURED` in emulation.rs, a bound
//!   on it): at worst 1.8e-6 of the field's largest value, in `advect` (2.5e-6 with the Euler
//!   trace before the midpoint one), 3.5e-7 in `splat`, 1.1e-7 in `pressure`; the allowance is
//!   ten times the bound, 2.5e-5 (about 200 ulp of the field's scale).

use super::{CudaInk, Fields};
use crate::cuda::parity::relative;
pub use crate::cuda::parity::Difference;
use crate::sims::ink::boundary::{Boundary, MovingDisc, SideKind, Walls, CHANNEL};
use crate::sims::ink::cpu::CpuInk;
use crate::sims::ink::fields::Field;
use crate::sims::ink::params::{Advection, InkParams, PressureSolver};
use crate::sims::ink::{BrushStamp, InkStage, Stamp};

/// The emulation's allowance, relative (see the module's comment).
pub const EMULATION_TOLERANCE: f32 = 4.0 / 8_388_608.0;
/// The allowance for statistics (the CPU's f32 row sums against the GPU's f64 ones), relative.
pub const STATISTICS_TOLERANCE: f64 = 1e-5;
/// The GPU's allowance, relative (see the module's comment).
pub const GPU_TOLERANCE: f32 = 2.5e-5;
/// The GPU's allowance for statistics, relative: they are sums of the fields' squares.
pub const GPU_STATISTICS_TOLERANCE: f64 = 1e-4;
/// The GPU's allowance for the residual after multigrid V-cycles, relative: four cycles leave a
/// residual near single precision's rounding of the pressure equation, so its digits are the
/// rounding's, and FMA contraction moves them — by 1.6e-4 in the GPU-like emulation
/// (`MG_RESIDUAL_MEASURED` in emulation_multigrid.rs, a bound on it); the allowance is ten
/// times the bound.
pub const MG_RESIDUAL_TOLERANCE: f64 = 2e-3;

/// The comparison scene: 48 × 40 cells of 2.5 cm, inflow at 0.5 m/s on the left, outflow on the
/// right, no-slip walls below and above, a disc in the way; vorticity, damping, fade and
/// buoyancy on; the bristle brush stamp; `ink_scale` ink cells per cell.
pub fn params(advection: Advection, ink_scale: usize) -> InkParams {
    InkParams {
        cells_x: 48,
        cells_y: 40,
        ink_scale,
        width: 1.2,
        dt: 1.0 / 60.0,
        substeps: 1,
        iterations: 20,
        pressure_solver: PressureSolver::Jacobi,
        pressure_carry_over: 0.8,
        advection,
        vorticity: 2.0,
        velocity_damping: 0.3,
        ink_fade: 0.2,
        buoyancy: 0.5,
        boundary: Boundary {
            sides: CHANNEL,
            walls: Walls::NoSlip,
            inflow_speed: 0.5,
        },
        brush_stamp: BrushStamp::Bristle,
    }
}

/// The scene's obstacle: a disc of radius 0.15 m at (0.45, 0.5) m, moving ([`MOVING`]).
pub fn solid(x: f32, y: f32) -> bool {
    let (dx, dy) = (x - 0.45, y - 0.5);
    dx * dx + dy * dy <= 0.15 * 0.15
}

/// The scene's disc moves (a moving wall: its cells' closed faces carry this velocity).
pub const MOVING: MovingDisc = MovingDisc {
    center: [0.45, 0.5],
    radius: 0.15,
    velocity: [0.4, -0.25],
};

/// The brush of step `step`: a stroke (per second, its ink laid with the scene's bristle
/// stamp turned to its motion) moving up through the lower half, and on every third step a
/// splat near the top (the plain Gaussian), both reaching the walls.
pub fn stamps(step: u32) -> Vec<Stamp> {
    let t = step as f32 / 60.0;
    let mut stamps = vec![Stamp {
        position: [0.85, 0.05 + 0.5 * t],
        radius: 0.06,
        velocity: [-6.0, 12.0],
        ink: [6.0, 3.0, 0.0],
        per_second: true,
        direction: Some([-0.447_213_6, 0.894_427_2]),
    }];
    if step.is_multiple_of(3) {
        stamps.push(Stamp {
            position: [0.2, 0.9],
            radius: 0.05,
            velocity: [1.5, -0.8],
            ink: [0.2, 0.9, 1.0],
            per_second: false,
            direction: None,
        });
    }
    stamps
}

/// The CPU solver after `steps` steps of the scene: the state the stages start from.
pub fn stirred(params: &InkParams, steps: u32) -> CpuInk {
    let mut cpu = CpuInk::new(params.clone(), solid);
    let mask = cpu.flow.solid().to_vec();
    cpu.set_walls(0..params.cells_y, &mask, vec![MOVING]);
    for step in 0..steps {
        cpu.step(params.dt, &stamps(step));
    }
    cpu
}

/// The CPU solver's fields.
pub fn fields_of(cpu: &CpuInk) -> Fields {
    Fields {
        flow: cpu.flow.clone(),
        ink: cpu.ink.clone(),
        curl: cpu.curl.clone(),
        divergence: cpu.divergence.clone(),
    }
}

/// A CPU solver holding `fields`.
pub fn cpu_from(params: &InkParams, fields: &Fields) -> CpuInk {
    let mut cpu = CpuInk::new(params.clone(), solid);
    cpu.flow = fields.flow.clone();
    cpu.ink = fields.ink.clone();
    cpu.curl = fields.curl.clone();
    cpu.divergence = fields.divergence.clone();
    cpu
}

/// Runs `stage` of the CPU solver.
pub fn run_cpu_stage(cpu: &mut CpuInk, stage: InkStage, dt: f32, stamps: &[Stamp]) {
    match stage {
        InkStage::Advect => cpu.advect(dt),
        InkStage::Splat => cpu.splat(dt, stamps),
        InkStage::Curl => cpu.compute_curl(),
        InkStage::Vorticity => cpu.vorticity(dt),
        InkStage::Divergence => cpu.compute_divergence(),
        InkStage::Pressure => cpu.pressure(),
        InkStage::SubtractGradient => cpu.subtract_gradient(),
    }
}

/// What a stage reports, as RMS values: (name, CPU, other).
pub type Statistic = (&'static str, f64, f64);

/// Every field's difference between `cpu` and `other`.
pub fn differences(cpu: &Fields, other: &Fields) -> Vec<Difference> {
    let planes = |f: &Fields| -> Vec<f32> {
        f.ink
            .channels
            .iter()
            .flat_map(|c: &Field| c.data.iter().copied())
            .collect()
    };
    vec![
        relative("u", &cpu.flow.u.data, &other.flow.u.data),
        relative("v", &cpu.flow.v.data, &other.flow.v.data),
        relative("p", &cpu.flow.p.data, &other.flow.p.data),
        relative("ink", &planes(cpu), &planes(other)),
        relative("curl", &cpu.curl.data, &other.curl.data),
        relative("divergence", &cpu.divergence.data, &other.divergence.data),
    ]
}

/// The RMS statistics a stage reports from the sums of squares in `stats` (the statistics slots
/// of `CudaInk`), with the counts of `fields`: (divergence before, residual, divergence after).
pub fn report_of(fields: &Fields, stats: &[f64]) -> [f64; 3] {
    let flow = &fields.flow;
    let fluid = flow.solid().iter().filter(|&&s| !s).count();
    let solved = super::transfer::solved_cells(flow);
    let rms = |sum: f64, count: usize| (sum / count.max(1) as f64).sqrt();
    [
        rms(stats[0], fluid),
        rms(stats[2], solved),
        rms(stats[1], fluid),
    ]
}

/// The statistic `stage` reports on the CPU and from `other_stats`: divergence before
/// (`divergence`), the residual (`pressure`), the divergence after (`subtract_gradient`).
pub fn statistic(
    stage: InkStage,
    cpu: &CpuInk,
    fields: &Fields,
    other_stats: &[f64],
) -> Option<Statistic> {
    let other = report_of(fields, other_stats);
    let r = cpu.report;
    match stage {
        InkStage::Divergence => Some(("divergence_before", r.divergence_before, other[0])),
        InkStage::Pressure => Some(("residual", r.residual, other[1])),
        InkStage::SubtractGradient => Some(("divergence_after", r.divergence_after, other[2])),
        _ => None,
    }
}

/// What runs a stage other than the CPU solver: given the stage, the state before it, dt and the
/// stamps, the state after it and the statistics slots.
pub type StageRunner<'a> =
    dyn FnMut(InkStage, &Fields, f32, &[Stamp]) -> Result<(Fields, Vec<f64>), String> + 'a;

/// One stage compared: the fields' differences and the statistic, if the stage reports one.
#[derive(Clone, Debug)]
pub struct StageComparison {
    /// The stage.
    pub stage: InkStage,
    /// Per field.
    pub fields: Vec<Difference>,
    /// (name, CPU, other).
    pub statistic: Option<Statistic>,
}

impl StageComparison {
    /// The largest relative field difference.
    pub fn worst(&self) -> f32 {
        self.fields.iter().fold(0.0f32, |m, d| m.max(d.relative))
    }

    /// Whether every field is within `tolerance` and the statistic within `statistics`
    /// (relative); a sentence saying what is not, otherwise.
    pub fn check(&self, tolerance: f32, statistics: f64) -> Result<(), String> {
        let mut problems = Vec::new();
        for d in &self.fields {
            if d.relative.is_nan() || d.relative > tolerance {
                problems.push(format!(
                    "{} differs by {:.3e} of its largest value at index {} (allowed {tolerance:.1e})",
                    d.field, d.relative, d.at
                ));
            }
        }
        if let Some((name, cpu, other)) = self.statistic {
            let error = (cpu - other).abs() / cpu.abs().max(1e-300);
            if error.is_nan() || error > statistics {
                problems.push(format!(
                    "{name}: CPU {cpu:.9e}, other {other:.9e} (relative {error:.1e}, allowed {statistics:.0e})"
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {}", self.stage.name(), problems.join("; ")))
        }
    }
}

/// Every stage of a step of the scene of `params` from its state after `steps` stirred steps,
/// on the CPU and by `other` (which gets the stage, the state before it, dt and the stamps, and
/// returns the state after it and the statistics slots).
pub fn compare_stages(
    params: &InkParams,
    steps: u32,
    other: &mut StageRunner,
) -> Result<Vec<StageComparison>, String> {
    let mut cpu = stirred(params, steps);
    let dt = params.dt;
    let stamps = stamps(steps);
    let mut comparisons = Vec::new();
    for stage in InkStage::ALL {
        let before = fields_of(&cpu);
        run_cpu_stage(&mut cpu, stage, dt, &stamps);
        let after = fields_of(&cpu);
        let (theirs, stats) = other(stage, &before, dt, &stamps)?;
        comparisons.push(StageComparison {
            stage,
            fields: differences(&after, &theirs),
            statistic: statistic(stage, &cpu, &theirs, &stats),
        });
    }
    Ok(comparisons)
}

/// The multigrid's comparison scenes: the comparison scene (`closed` false: an outflow side,
/// Dirichlet levels) or the same box closed by walls (pure Neumann: the means removed), with 4
/// V-cycles per step.
pub fn multigrid_params(closed: bool) -> InkParams {
    let mut params = params(Advection::Maccormack, 2);
    params.pressure_solver = PressureSolver::Multigrid;
    params.iterations = 4;
    if closed {
        params.boundary.sides = [SideKind::Wall; 4];
    }
    params
}

/// The multigrid configurations the GPU checks run: the channel and the closed box, with the
/// small levels in one block (the default) and with every level but the coarsest launched
/// kernel by kernel (tail cells 0).
pub const MULTIGRID_CONFIGURATIONS: [(bool, usize); 4] = [
    (false, super::multigrid::TAIL_CELLS),
    (false, 0),
    (true, super::multigrid::TAIL_CELLS),
    (true, 0),
];

/// Every stage of the scene of `params` on CUDA device `device` against the CPU solver (each
/// stage from the CPU's state, uploaded).
pub fn gpu_stage_comparisons(
    device: usize,
    params: &InkParams,
) -> Result<Vec<StageComparison>, String> {
    gpu_stage_comparisons_with(device, params, super::multigrid::TAIL_CELLS)
}

/// [`gpu_stage_comparisons`] with the multigrid's levels of at most `tail_cells` cells in one
/// block.
pub fn gpu_stage_comparisons_with(
    device: usize,
    params: &InkParams,
    tail_cells: usize,
) -> Result<Vec<StageComparison>, String> {
    let mut cuda = CudaInk::new_on(device, params.clone(), &solid).map_err(|e| e.to_string())?;
    cuda.set_multigrid_tail_cells(tail_cells);
    let mut other = |stage: InkStage, before: &Fields, dt: f32, stamps: &[Stamp]| {
        let run = |cuda: &mut CudaInk| -> Result<(Fields, Vec<f64>), crate::cuda::CudaError> {
            cuda.upload_fields(before)?;
            cuda.run_stage(stage, dt, stamps, true)?;
            let stats = cuda.statistics()?;
            Ok((cuda.read_back()?, stats))
        };
        run(&mut cuda).map_err(|e| format!("{}: {e}", stage.name()))
    };
    compare_stages(params, 12, &mut other)
}

/// Relative allowance of a whole run of [`RUN_STEPS`] steps (fields, as [`differences`]): the
/// GPU-like emulation's worst over both schemes and ink scales 1 and 2 (`RUN_MEASURED` in
/// emulation.rs) × 10.
pub const RUN_TOLERANCE: f32 = 2.5e-4;
/// Steps of the whole-run comparison.
pub const RUN_STEPS: u32 = 20;

/// [`RUN_STEPS`] frames of the scene of `params` (one step each) on CUDA device `device` and on
/// the CPU, from rest: the fields' differences at the end, and the GPU's totals (ink, kinetic
/// energy, largest speed) against the CPU's.
pub fn gpu_run_comparison(
    device: usize,
    params: &InkParams,
) -> Result<(Vec<Difference>, [Statistic; 3]), String> {
    gpu_run_comparison_with(device, params, super::multigrid::TAIL_CELLS)
}

/// [`gpu_run_comparison`] with the multigrid's levels of at most `tail_cells` cells in one
/// block.
pub fn gpu_run_comparison_with(
    device: usize,
    params: &InkParams,
    tail_cells: usize,
) -> Result<(Vec<Difference>, [Statistic; 3]), String> {
    let mut cuda = CudaInk::new_on(device, params.clone(), &solid).map_err(|e| e.to_string())?;
    cuda.set_multigrid_tail_cells(tail_cells);
    let mut cpu = CpuInk::new(params.clone(), solid);
    let mask = cpu.flow.solid().to_vec();
    cuda.set_walls(0..params.cells_y, &mask, vec![MOVING])
        .map_err(|e| e.to_string())?;
    cpu.set_walls(0..params.cells_y, &mask, vec![MOVING]);
    for step in 0..RUN_STEPS {
        let stamps = stamps(step);
        cpu.step(params.dt, &stamps);
        cuda.step(params.dt, &stamps, true)
            .and_then(|()| cuda.end_frame())
            .map_err(|e| e.to_string())?;
    }
    let fields = cuda.read_back().map_err(|e| e.to_string())?;
    let (energy, fastest) =
        crate::sims::ink::picture::kinetic_energy_and_max_speed(cpu.flow.view());
    let t = cuda.totals;
    Ok((
        differences(&fields_of(&cpu), &fields),
        [
            ("ink", cpu.ink.total(), t.ink),
            ("kinetic_energy", energy, t.kinetic_energy),
            ("max_speed", fastest, t.max_speed),
        ],
    ))
}

/// The configurations the GPU checks run: both schemes, ink grids equal to and twice as fine as
/// the flow's.
pub const CONFIGURATIONS: [(Advection, usize); 4] = [
    (Advection::SemiLagrangian, 1),
    (Advection::SemiLagrangian, 2),
    (Advection::Maccormack, 1),
    (Advection::Maccormack, 2),
];

/// Every stage of every configuration on CUDA device `device` against the CPU within
/// [`GPU_TOLERANCE`] (statistics [`GPU_STATISTICS_TOLERANCE`]): whether all passed, and a
/// sentence with the worst figure or what failed.
pub fn gpu_stages_check(device: usize) -> Result<(bool, String), String> {
    let (mut worst, mut failures) = (0.0f32, Vec::new());
    for (advection, ink_scale) in CONFIGURATIONS {
        for c in gpu_stage_comparisons(device, &params(advection, ink_scale))? {
            worst = worst.max(c.worst());
            if let Err(failure) = c.check(GPU_TOLERANCE, GPU_STATISTICS_TOLERANCE) {
                failures.push(format!("{} ×{ink_scale}: {failure}", advection.name()));
            }
        }
    }
    let detail = format!(
        "48×40 cells, obstacle, inflow, outflow, no-slip walls; 7 stages × 4 configurations: \
         worst field difference {worst:.2e} of its largest value (allowed {GPU_TOLERANCE:.1e})"
    );
    Ok(crate::sims::doctor::verdict(detail, failures))
}

/// [`RUN_STEPS`] steps of every configuration on CUDA device `device` against the CPU: fields
/// within [`RUN_TOLERANCE`], the GPU's totals too.
pub fn gpu_run_check(device: usize) -> Result<(bool, String), String> {
    let (mut worst, mut totals, mut failures) = (0.0f32, 0.0f64, Vec::new());
    for (advection, ink_scale) in CONFIGURATIONS {
        let (fields, statistics) = gpu_run_comparison(device, &params(advection, ink_scale))?;
        for d in fields {
            worst = worst.max(d.relative);
            if d.relative.is_nan() || d.relative > RUN_TOLERANCE {
                failures.push(format!("{} ×{ink_scale}: {d:?}", advection.name()));
            }
        }
        for (name, cpu, gpu) in statistics {
            let error = (cpu - gpu).abs() / cpu.abs().max(1e-300);
            totals = totals.max(error);
            if error.is_nan() || error > f64::from(RUN_TOLERANCE) {
                failures.push(format!(
                    "{} ×{ink_scale}: {name} CPU {cpu:.6e}, GPU {gpu:.6e}",
                    advection.name()
                ));
            }
        }
    }
    let detail = format!(
        "{RUN_STEPS} steps × 4 configurations: worst field difference {worst:.2e}, totals \
         (ink, kinetic energy, fastest) {totals:.2e} (allowed {RUN_TOLERANCE:.1e})"
    );
    Ok(crate::sims::doctor::verdict(detail, failures))
}

/// The multigrid pressure solver on CUDA device `device` against the CPU's, in every
/// [`MULTIGRID_CONFIGURATIONS`]: every stage within [`GPU_TOLERANCE`] (statistics
/// [`GPU_STATISTICS_TOLERANCE`]) and [`RUN_STEPS`] steps within [`RUN_TOLERANCE`].
pub fn gpu_multigrid_check(device: usize) -> Result<(bool, String), String> {
    let (mut worst, mut run, mut failures) = (0.0f32, 0.0f32, Vec::new());
    for (closed, tail_cells) in MULTIGRID_CONFIGURATIONS {
        let params = multigrid_params(closed);
        let what = format!(
            "{} box, tail cells {tail_cells}",
            if closed { "closed" } else { "open" }
        );
        for c in gpu_stage_comparisons_with(device, &params, tail_cells)? {
            worst = worst.max(c.worst());
            let statistics = if c.stage == InkStage::Pressure {
                MG_RESIDUAL_TOLERANCE
            } else {
                GPU_STATISTICS_TOLERANCE
            };
            if let Err(failure) = c.check(GPU_TOLERANCE, statistics) {
                failures.push(format!("{what}: {failure}"));
            }
        }
        let (fields, statistics) = gpu_run_comparison_with(device, &params, tail_cells)?;
        for d in fields {
            run = run.max(d.relative);
            if d.relative.is_nan() || d.relative > RUN_TOLERANCE {
                failures.push(format!("{what}, {RUN_STEPS} steps: {d:?}"));
            }
        }
        for (name, cpu, gpu) in statistics {
            let error = (cpu - gpu).abs() / cpu.abs().max(1e-300);
            if error.is_nan() || error > f64::from(RUN_TOLERANCE) {
                failures.push(format!("{what}: {name} CPU {cpu:.6e}, GPU {gpu:.6e}"));
            }
        }
    }
    let detail = format!(
        "4 V-cycles, open and closed box, small levels in one block and not: worst stage \
         difference {worst:.2e} (allowed {GPU_TOLERANCE:.1e}), after {RUN_STEPS} steps {run:.2e} \
         (allowed {RUN_TOLERANCE:.1e})"
    );
    Ok(crate::sims::doctor::verdict(detail, failures))
}
