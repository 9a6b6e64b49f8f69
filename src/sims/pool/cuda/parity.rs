//! The CUDA solver (or the kernels run on the CPU, `emulation.rs`) against the CPU solver,
//! stage by stage and over a run: each stage starts from the same state — the CPU solver's
//! after 13 frames of drops on a small grid with an island, walls, a shore or open edges,
//! on both models — and every field (height, velocity, accel, offset, velocity_h, accel_h) must
//! agree, and so must the statistics the GPU reduces.
//!
//! Tolerances, relative to the field's largest magnitude (statistics: to the sum of the
//! magnitudes of their terms, the scale of a sum's rounding):
//!
//! - [`EMULATION_TOLERANCE`]: the kernels compiled as C++ without contraction evaluate the CPU
//!   solver's operations in its order, so the fields come out equal to the bit (measured: 0).
//!   The allowance is 4 units in the last place of an f32 (4 × 2⁻²³ ≈ 4.8e-7) for a compiler
//!   that rounds a conversion differently. The statistics are f64 sums in another order (a tree
//!   per block against the CPU's running sum): n·2⁻⁵³ of the terms' magnitudes for n ≈ 1600
//!   nodes, 2e-13; allowed 1e-11.
//! - [`GPU_TOLERANCE`]: nvcc contracts a·b + c into fused multiply-adds (one rounding instead
//!   of two): the spring's squared length, the pulls' sums, v + a·dt, u + v·dt, u − v·dt at the
//!   edges. (Not a node's position i·h + offset: pool.cu rounds it as the CPU does, `__fmul_rn`
//!   and `__fadd_rn`, because the springs' forces are differences of large tensions, which turn
//!   a position's last bit into 3·10⁻⁵ of the largest force; rounded as the CPU, 8·10⁻⁷.) The
//!   GPU-like emulation (contraction on, FMA; `GPU_LIKE_MEASURED` in emulation.rs, a bound on
//!   it) measures what that does to one stage; the allowance is ten times the bound, rounded up.
//! - Over a run, differences of a stage feed the next: [`RUN_TOLERANCE`] (heights, velocities,
//!   accelerations, statistics) and [`RUN_HORIZONTAL_TOLERANCE`] (the spring lattice's
//!   horizontal offsets, velocities and accelerations: second-order motion, small beside the
//!   rounding of the tensions that drive it) are ten times the GPU-like emulation's run
//!   (`RUN_MEASURED`, `RUN_HORIZONTAL_MEASURED`), rounded up.

use super::{stats_from_slots, CudaPool};
use crate::cuda::parity::relative;
pub use crate::cuda::parity::Difference;
use crate::sims::pool::cpu::StepConstants;
use crate::sims::pool::drops::{Drop, Target};
use crate::sims::pool::frame::PoolStats;
use crate::sims::pool::memory::{grid_bytes, Drawing, Solver};
use crate::sims::pool::params::{Edges, Model, PoolParams};
use crate::sims::pool::solver::CpuPool;
use crate::sims::pool::surface::Surface;
use crate::sims::pool::{cpu, drops, PoolStage};

/// The emulation's allowance, relative (see the module's comment).
pub const EMULATION_TOLERANCE: f32 = 4.0 / 8_388_608.0;
/// The emulation's allowance for statistics, relative to the terms' magnitudes.
pub const STATISTICS_TOLERANCE: f64 = 1e-11;
/// The GPU's allowance for one stage, relative (see the module's comment).
pub const GPU_TOLERANCE: f32 = 2e-5;
/// The GPU's allowance for statistics, relative to the terms' magnitudes (the GPU-like
/// emulation: 9.5e-9).
pub const GPU_STATISTICS_TOLERANCE: f64 = 1e-6;
/// The GPU's allowance after [`RUN_FRAMES`] frames, relative: heights, velocities,
/// accelerations and the statistics.
pub const RUN_TOLERANCE: f32 = 1.5e-3;
/// The GPU's allowance after [`RUN_FRAMES`] frames for the horizontal fields, relative.
pub const RUN_HORIZONTAL_TOLERANCE: f32 = 2e-2;
/// Frames of the run comparison.
pub const RUN_FRAMES: u32 = 30;
/// Frames of drops before the stages are compared (the next frame has drops).
pub const STIRRED_FRAMES: u32 = 13;

/// The configurations compared: both models with walls, a shore and open edges (the spring
/// lattice free to move in three dimensions, with shear springs; and once without them).
pub const CONFIGURATIONS: [(Model, Edges, bool); 7] = [
    (Model::Wave, Edges::Pool, true),
    (Model::Wave, Edges::Shore, true),
    (Model::Wave, Edges::Open, true),
    (Model::Springs, Edges::Pool, true),
    (Model::Springs, Edges::Shore, true),
    (Model::Springs, Edges::Open, true),
    (Model::Springs, Edges::Pool, false),
];

/// The comparison grid: 40² nodes over 1 m, c = 0.5 m/s, damping 0.3 /s, pre-tension 1.5,
/// nodes free to move horizontally; `shear`: the diagonal springs.
pub fn params(model: Model, edges: Edges, shear: bool) -> PoolParams {
    PoolParams {
        nodes: 40,
        size: 1.0,
        depth: 0.5,
        dt: 1.0 / 60.0,
        model,
        edges,
        wave_speed: 0.5,
        damping: 0.3,
        tension: 1.5,
        horizontal: true,
        shear,
    }
}

/// The island: a disc of radius 0.12 m at (0.65, 0.4).
pub fn land(x: f32, z: f32) -> bool {
    let (dx, dz) = (x - 0.65, z - 0.4);
    dx * dx + dz * dz <= 0.12 * 0.12
}

/// The drops of frame `frame`: a height drop in the open water on the first, then on every
/// third a velocity drop near a corner (its stencil clipped by two edges) and one on the
/// island's shore (its fixed nodes skipped), another radius each.
pub fn drops(frame: u32) -> Vec<Drop> {
    let mut drops = Vec::new();
    if frame == 0 {
        drops.push(Drop {
            position: [0.3, 0.6],
            radius: 0.06,
            amplitude: 0.02,
            target: Target::Height,
        });
    }
    if frame % 3 == 1 {
        drops.push(Drop {
            position: [0.05, 0.93],
            radius: 0.04,
            amplitude: -0.3,
            target: Target::Velocity,
        });
        drops.push(Drop {
            position: [0.55, 0.45],
            radius: 0.05,
            amplitude: 0.01,
            target: Target::Height,
        });
    }
    drops
}

/// Where the last of `drops(0..frames)` fell (the front's centre).
pub fn last_drop(frames: u32) -> Option<[f32; 2]> {
    (0..frames)
        .rev()
        .find_map(|f| drops(f).last().map(|d| d.position))
}

/// The CPU solver after `frames` frames of the scene: the state the stages start from.
pub fn stirred(params: &PoolParams, frames: u32) -> CpuPool {
    let mut cpu = CpuPool::new(params, land);
    for frame in 0..frames {
        cpu.step(params, &drops(frame));
    }
    cpu
}

/// Every field's difference between `cpu` and `other` (and the flags, which must be equal:
/// a difference of one flag counts as infinite).
pub fn differences(cpu: &Surface, other: &Surface) -> Vec<Difference> {
    let pairs = |v: &[[f32; 2]]| -> Vec<f32> { v.iter().flatten().copied().collect() };
    let flags = cpu.flags.iter().zip(&other.flags).position(|(a, b)| a != b);
    vec![
        relative("height", &cpu.height, &other.height),
        relative("velocity", &cpu.velocity, &other.velocity),
        relative("accel", &cpu.accel, &other.accel),
        relative("offset", &pairs(&cpu.offset), &pairs(&other.offset)),
        relative(
            "velocity_h",
            &pairs(&cpu.velocity_h),
            &pairs(&other.velocity_h),
        ),
        relative("accel_h", &pairs(&cpu.accel_h), &pairs(&other.accel_h)),
        Difference {
            field: "flags",
            relative: if flags.is_some() { f32::INFINITY } else { 0.0 },
            at: flags.unwrap_or(0),
        },
    ]
}

/// The statistics' differences, each relative to the sum of its terms' magnitudes on the CPU
/// (Σ½v², Σ|potential term| bounded by the potential of |terms|, h²Σ|u|, the largest |u|, the
/// radius): (name, CPU, other, relative).
pub fn stats_differences(
    surface: &Surface,
    params: &PoolParams,
    cpu: &PoolStats,
    other: &PoolStats,
) -> Vec<(&'static str, f64, f64, f64)> {
    let h2 = f64::from(surface.h) * f64::from(surface.h);
    let magnitude: f64 = surface.height.iter().map(|u| f64::from(u.abs())).sum();
    let k = StepConstants::new(params);
    // The structural springs' rest energies cancel in the potential: its terms are of the
    // size of a spring's energy at rest (or the potential itself when that is larger).
    let springs = 2.0 * (surface.n * surface.n) as f64;
    let rest = 0.5 * f64::from(k.spring_k) * (f64::from(k.h) - f64::from(k.rest)).powi(2);
    let potential_scale = match params.model {
        Model::Wave => cpu.potential.abs(),
        Model::Springs => cpu.potential.abs() + springs * rest,
    };
    let scales = [
        cpu.kinetic,
        potential_scale,
        h2 * magnitude,
        cpu.max_height,
        cpu.front_radius,
    ];
    let values = [
        ("kinetic", cpu.kinetic, other.kinetic),
        ("potential", cpu.potential, other.potential),
        ("volume", cpu.volume, other.volume),
        ("max_height", cpu.max_height, other.max_height),
        ("front_radius", cpu.front_radius, other.front_radius),
    ];
    values
        .into_iter()
        .zip(scales)
        .map(|((name, a, b), scale)| {
            let error = if a == b {
                0.0
            } else {
                (a - b).abs() / scale.max(1e-300)
            };
            (
                name,
                a,
                b,
                if error.is_nan() { f64::INFINITY } else { error },
            )
        })
        .collect()
}

/// What runs the pool other than the CPU solver, from a state.
#[derive(Clone, Copy, Debug)]
pub enum Work<'a> {
    /// One stage (`disturb` with the drops; the others one substep).
    Stage(PoolStage, &'a [Drop]),
    /// The statistics around the last drop.
    Stats(Option<[f32; 2]>),
    /// A whole frame with the drops, then the statistics around the last drop (`true`: they
    /// are wanted; the GPU reduces them every frame, the emulation only when asked).
    Frame(&'a [Drop], Option<[f32; 2]>, bool),
}

/// What a [`Runner`] returns: the state after the work and the statistics (when the work
/// reduced them), or what went wrong.
pub type Ran = Result<(Surface, Option<PoolStats>), String>;

/// Runs `work` of `params` from a state.
pub type Runner<'a> = dyn FnMut(&PoolParams, Work, &Surface) -> Ran + 'a;

/// Whether `field` is one of the spring lattice's horizontal fields.
fn is_horizontal(field: &str) -> bool {
    matches!(field, "offset" | "velocity_h" | "accel_h")
}

/// One stage compared (or the statistics, `stage` None).
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The stage; `None` for the statistics.
    pub stage: Option<PoolStage>,
    /// Per field.
    pub fields: Vec<Difference>,
    /// (name, CPU, other, relative).
    pub stats: Vec<(&'static str, f64, f64, f64)>,
    /// Whether the CPU's stage changed the state (its comparison saw work).
    pub changed: bool,
}

impl Comparison {
    /// The largest relative field difference.
    pub fn worst(&self) -> f32 {
        self.fields.iter().fold(0.0f32, |m, d| m.max(d.relative))
    }

    /// The largest relative difference of the vertical fields (height, velocity, accel) and
    /// of the horizontal ones (offset, velocity_h, accel_h) and the flags.
    pub fn worst_split(&self) -> (f32, f32) {
        let mut worst = (0.0f32, 0.0f32);
        for d in &self.fields {
            if is_horizontal(d.field) {
                worst.1 = worst.1.max(d.relative);
            } else {
                worst.0 = worst.0.max(d.relative);
            }
        }
        worst
    }

    /// The largest relative statistics difference.
    pub fn worst_stat(&self) -> f64 {
        self.stats.iter().fold(0.0f64, |m, s| m.max(s.3))
    }

    /// What is compared.
    pub fn name(&self) -> &'static str {
        self.stage.map_or("statistics", PoolStage::name)
    }

    /// Whether every field is within `tolerance` and every statistic within `statistics`; a
    /// sentence saying what is not, otherwise.
    pub fn check(&self, tolerance: f32, statistics: f64) -> Result<(), String> {
        self.check_split(tolerance, tolerance, statistics)
    }

    /// As [`Comparison::check`] with the horizontal fields within `horizontal` (a run's).
    pub fn check_split(
        &self,
        tolerance: f32,
        horizontal: f32,
        statistics: f64,
    ) -> Result<(), String> {
        let mut problems = Vec::new();
        for d in &self.fields {
            let tolerance = if is_horizontal(d.field) && d.field != "flags" {
                horizontal
            } else {
                tolerance
            };
            if d.relative.is_nan() || d.relative > tolerance {
                problems.push(format!(
                    "{} differs by {:.3e} of its largest value at node {} (allowed {tolerance:.1e})",
                    d.field, d.relative, d.at
                ));
            }
        }
        for &(name, cpu, other, error) in &self.stats {
            if error.is_nan() || error > statistics {
                problems.push(format!(
                    "{name}: CPU {cpu:.9e}, other {other:.9e} (relative {error:.1e}, allowed \
                     {statistics:.0e})"
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {}", self.name(), problems.join("; ")))
        }
    }
}

/// Every stage of a frame of `params`' scene from its state after [`STIRRED_FRAMES`] frames
/// (the frame's drops, then one substep), and the statistics of that state, on the CPU and by
/// `other`.
pub fn compare_stages(params: &PoolParams, other: &mut Runner) -> Result<Vec<Comparison>, String> {
    let mut cpu = stirred(params, STIRRED_FRAMES);
    let frame_drops = drops(STIRRED_FRAMES);
    let k = StepConstants::new(params);
    let centre = last_drop(STIRRED_FRAMES);
    let mut comparisons = vec![{
        let s = &cpu.surface;
        let (after, stats) = other(params, Work::Stats(centre), s)?;
        let theirs = stats.ok_or("the statistics were not reduced")?;
        Comparison {
            stage: None,
            fields: differences(s, &after),
            stats: stats_differences(s, params, &PoolStats::of(s, params, centre), &theirs),
            changed: false,
        }
    }];
    let mut stencils = drops::Stencils::default();
    for stage in PoolStage::ALL {
        let before = cpu.surface.clone();
        let s = &mut cpu.surface;
        match stage {
            PoolStage::Disturb => {
                for drop in &frame_drops {
                    drops::disturb(s, drop, &mut stencils);
                }
            }
            PoolStage::Forces => cpu::forces(s, &k),
            PoolStage::Integrate => cpu::integrate(s, &k),
            PoolStage::Edges => cpu::edges(s, &k, &mut Vec::new()),
        }
        let (after, _) = other(params, Work::Stage(stage, &frame_drops), &before)?;
        comparisons.push(Comparison {
            stage: Some(stage),
            fields: differences(&cpu.surface, &after),
            stats: Vec::new(),
            changed: cpu.surface != before,
        });
    }
    Ok(comparisons)
}

/// [`RUN_FRAMES`] frames of `params`' scene from rest on the CPU and by `other` (each frame
/// from the state the other left): the fields at the end and the last frame's statistics.
pub fn compare_run(params: &PoolParams, other: &mut Runner) -> Result<Comparison, String> {
    let mut theirs = CpuPool::new(params, land).surface;
    let mut stats = None;
    for frame in 0..RUN_FRAMES {
        let frame_drops = drops(frame);
        let work = Work::Frame(&frame_drops, last_drop(frame + 1), frame + 1 == RUN_FRAMES);
        (theirs, stats) = other(params, work, &theirs)?;
    }
    let stats = stats.ok_or("the statistics were not reduced")?;
    Ok(against_cpu_run(params, &theirs, &stats))
}

/// `theirs` and its statistics `stats` after [`RUN_FRAMES`] frames against the CPU's run of
/// the same frames from the start.
fn against_cpu_run(params: &PoolParams, theirs: &Surface, stats: &PoolStats) -> Comparison {
    let mut cpu = CpuPool::new(params, land);
    for frame in 0..RUN_FRAMES {
        cpu.step(params, &drops(frame));
    }
    let s = &cpu.surface;
    let mine = PoolStats::of(s, params, last_drop(RUN_FRAMES));
    Comparison {
        stage: None,
        fields: differences(s, theirs),
        stats: stats_differences(s, params, &mine, stats),
        changed: true,
    }
}

/// The worst differences of runs' comparisons so far and their failures, by configuration.
#[derive(Default)]
struct RunTally {
    worst: f32,
    horizontal: f32,
    stat: f64,
    failures: Vec<String>,
}

impl RunTally {
    /// Takes in `c`, the run of configuration `label`, checked against the run's tolerances.
    fn add(&mut self, c: &Comparison, label: String) {
        let (worst, horizontal) = c.worst_split();
        self.worst = self.worst.max(worst);
        self.horizontal = self.horizontal.max(horizontal);
        self.stat = self.stat.max(c.worst_stat());
        let statistics = f64::from(RUN_TOLERANCE);
        if let Err(failure) = c.check_split(RUN_TOLERANCE, RUN_HORIZONTAL_TOLERANCE, statistics) {
            self.failures.push(format!("{label}: {failure}"));
        }
    }
}

/// The CUDA solver on device `device` as a [`Runner`] for `params`' grid: the state uploaded,
/// the work run, the state read back.
fn gpu_runner(
    device: usize,
    params: &PoolParams,
) -> Result<impl FnMut(&PoolParams, Work, &Surface) -> Ran, String> {
    let mut cuda = CudaPool::new_on(
        device,
        params,
        grid_bytes(params.nodes, Solver::Cuda, Drawing::Undrawn).gpu,
        land,
    )
    .map_err(|e| e.to_string())?;
    Ok(move |params: &PoolParams, work: Work, before: &Surface| {
        let mut run = || -> Result<(Surface, Option<PoolStats>), crate::cuda::CudaError> {
            cuda.upload(before)?;
            let k = StepConstants::new(params);
            let stats = match work {
                Work::Stage(stage, drops) => {
                    cuda.run_stage(stage, &k, drops)?;
                    None
                }
                Work::Stats(centre) => {
                    cuda.reduce_statistics(params, centre)?;
                    Some(stats_from_slots(&cuda.statistics()?, before.h, centre))
                }
                Work::Frame(drops, centre, _) => {
                    cuda.step(params, drops)?;
                    Some(cuda.end_frame(params, centre)?.0)
                }
            };
            Ok((cuda.read_back()?, stats))
        };
        run().map_err(|e| e.to_string())
    })
}

/// Every stage and the statistics of every configuration on CUDA device `device` against the
/// CPU within [`GPU_TOLERANCE`] ([`GPU_STATISTICS_TOLERANCE`]): whether all passed, and a
/// sentence with the worst figures or what failed.
pub fn gpu_stages_check(device: usize) -> Result<(bool, String), String> {
    let (mut worst, mut worst_stat, mut failures) = (0.0f32, 0.0f64, Vec::new());
    for (model, edges, shear) in CONFIGURATIONS {
        let p = params(model, edges, shear);
        let mut runner = gpu_runner(device, &p)?;
        for c in compare_stages(&p, &mut runner)? {
            worst = worst.max(c.worst());
            worst_stat = worst_stat.max(c.worst_stat());
            if let Err(failure) = c.check(GPU_TOLERANCE, GPU_STATISTICS_TOLERANCE) {
                failures.push(format!("{} {}: {failure}", model.name(), edges.name()));
            }
        }
    }
    let detail = format!(
        "40² nodes, an island; 4 stages and the statistics × {} configurations: worst field \
         difference {worst:.2e} of its largest value (allowed {GPU_TOLERANCE:.0e}), statistics \
         {worst_stat:.1e}",
        CONFIGURATIONS.len()
    );
    Ok(crate::sims::doctor::verdict(detail, failures))
}

/// [`RUN_FRAMES`] frames of every configuration on CUDA device `device` against the CPU: fields
/// and statistics within [`RUN_TOLERANCE`], the horizontal fields within
/// [`RUN_HORIZONTAL_TOLERANCE`].
pub fn gpu_run_check(device: usize) -> Result<(bool, String), String> {
    let mut t = RunTally::default();
    for (model, edges, shear) in CONFIGURATIONS {
        let p = params(model, edges, shear);
        let mut runner = gpu_runner(device, &p)?;
        let c = compare_run(&p, &mut runner)?;
        t.add(&c, format!("{} {}", model.name(), edges.name()));
    }
    let detail = format!(
        "{RUN_FRAMES} frames × {} configurations: worst field difference {:.2e} (allowed \
         {RUN_TOLERANCE:.0e}), horizontal {:.2e} (allowed {RUN_HORIZONTAL_TOLERANCE:.0e}), \
         statistics {:.1e}",
        CONFIGURATIONS.len(),
        t.worst,
        t.horizontal,
        t.stat
    );
    Ok(crate::sims::doctor::verdict(detail, t.failures))
}

/// A same-size restart on CUDA device `device` (`CudaPool::reset`, the panel's restart with
/// an unchanged grid), of every configuration: the water stirred for [`RUN_FRAMES`] frames and
/// an island node painted (flags not yet sent), reset, then [`RUN_FRAMES`] frames stepped on the
/// GPU one after another (no upload between them) against a fresh CPU run, within the run's
/// tolerances. The buffers must stay what they were ([`super::gpu_bytes`]): a reset allocates
/// nothing.
pub fn gpu_restart_check(device: usize) -> Result<(bool, String), String> {
    let mut t = RunTally::default();
    for (model, edges, shear) in CONFIGURATIONS {
        let p = params(model, edges, shear);
        let ran = || -> Result<(Surface, PoolStats, u64), crate::cuda::CudaError> {
            let needed = grid_bytes(p.nodes, Solver::Cuda, Drawing::Undrawn).gpu;
            let mut cuda = CudaPool::new_on(device, &p, needed, land)?;
            let frames = |cuda: &mut CudaPool| -> Result<PoolStats, crate::cuda::CudaError> {
                let mut stats = None;
                for frame in 0..RUN_FRAMES {
                    cuda.step(&p, &drops(frame))?;
                    stats = Some(cuda.end_frame(&p, last_drop(frame + 1))?.0);
                }
                Ok(stats.expect("frames"))
            };
            frames(&mut cuda)?;
            cuda.set_island_node(&p, 5, 7, true);
            let before = cuda.buffer_bytes();
            cuda.reset(&p, land)?;
            let stats = frames(&mut cuda)?;
            let after = cuda.buffer_bytes();
            let bytes = if before == after { after } else { u64::MAX };
            Ok((cuda.read_back()?, stats, bytes))
        };
        let (theirs, stats, bytes) = ran().map_err(|e| e.to_string())?;
        if bytes != super::gpu_bytes(p.nodes) {
            t.failures.push(format!(
                "{} {}: the buffers hold {bytes} bytes after the reset, gpu_bytes says {}",
                model.name(),
                edges.name(),
                super::gpu_bytes(p.nodes)
            ));
        }
        let c = against_cpu_run(&p, &theirs, &stats);
        t.add(&c, format!("{} {}", model.name(), edges.name()));
    }
    let detail = format!(
        "{RUN_FRAMES} frames, a reset, {RUN_FRAMES} frames × {} configurations against a fresh \
         CPU run: worst field difference {:.2e} (allowed {RUN_TOLERANCE:.0e}), horizontal \
         {:.2e}, statistics {:.1e}; the buffers unchanged",
        CONFIGURATIONS.len(),
        t.worst,
        t.horizontal,
        t.stat
    );
    Ok(crate::sims::doctor::verdict(detail, t.failures))
}
