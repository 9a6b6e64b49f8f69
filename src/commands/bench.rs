//! `fluidlab bench`: warm-up, then timed steps with per-stage times and throughput (elements ×
//! solver steps per second), for any kind.

use super::MAX_COUNT;
use crate::scene::Source;
use crate::sims::{self, Backend, OpenOptions};
use anyhow::{bail, Result};
use serde::Serialize;
use std::time::Instant;

/// `fluidlab bench`'s command line: one benchmark per particle count asked for.
#[derive(Clone, Debug, clap::Args)]
pub struct BenchArgs {
    /// Preset name or scene file path.
    #[arg(default_value = crate::scene::DEFAULT_SCENE)]
    pub scene: String,
    /// Rescale the scene so it holds about N elements (particles, cells); a comma-separated
    /// list (10000,40000,160000) runs one benchmark per size.
    #[arg(
        long,
        alias = "elements",
        value_name = "N[,N...]",
        value_delimiter = ','
    )]
    pub particles: Vec<u64>,
    /// Timed steps (1 or more).
    #[arg(
        long,
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=MAX_COUNT),
        allow_negative_numbers = true
    )]
    pub steps: u64,
    /// Untimed warm-up steps.
    #[arg(
        long,
        default_value_t = 5,
        value_parser = clap::value_parser!(u64).range(..=MAX_COUNT),
        allow_negative_numbers = true
    )]
    pub warmup: u64,
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Print one JSON object per size (JSON lines) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Do not time or print each stage (CUDA: no events between kernels, for the top speed).
    #[arg(long)]
    pub no_stage_timing: bool,
    /// Profiler mode: after the warm-up run exactly N steps with stage timing off and print
    /// one line, so a Nsight Systems / Compute capture holds nothing else (docs/cuda.md).
    #[arg(
        long,
        value_name = "N",
        conflicts_with_all = ["steps", "json", "no_stage_timing"],
        value_parser = clap::value_parser!(u64).range(1..=MAX_COUNT),
        allow_negative_numbers = true
    )]
    pub profile_steps: Option<u64>,
}

/// `fluidlab bench`: a table, JSON lines or the profiler line per size. With several sizes, one
/// that cannot run (memory) is skipped and said; it fails only when none ran.
pub fn main(args: &BenchArgs) -> Result<()> {
    let sizes: Vec<Option<u64>> = if args.particles.is_empty() {
        vec![None]
    } else {
        args.particles.iter().copied().map(Some).collect()
    };
    let mut failures = 0;
    for &particles in &sizes {
        let options = BenchOptions {
            scene: args.scene.clone(),
            particles,
            steps: args.profile_steps.unwrap_or(args.steps),
            warmup: args.warmup,
            backend: args.backend,
            stage_timing: !args.no_stage_timing && args.profile_steps.is_none(),
        };
        let report = match run(&options, !args.json && args.profile_steps.is_none()) {
            Ok(report) => report,
            Err(error) if sizes.len() > 1 => {
                eprintln!("skipped size {}: {error:#}", particles.unwrap_or(0));
                failures += 1;
                continue;
            }
            Err(error) => return Err(error),
        };
        if args.profile_steps.is_some() {
            println!(
                "profiled {} of {} {} on {} after {} ({:.3} ms per step)",
                super::counted(report.steps, "step"),
                report.elements,
                report.unit,
                report.backend,
                super::counted(report.warmup, "warm-up step"),
                report.ms_per_step
            );
        } else if args.json {
            println!("{}", serde_json::to_string(&report.json())?);
        } else {
            print(&report);
        }
    }
    if failures == sizes.len() {
        anyhow::bail!("no benchmark size could run");
    }
    Ok(())
}

/// One benchmark: what to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Preset name or scene file path.
    pub scene: String,
    /// Rescale the spacing so the scene seeds about this many particles.
    pub particles: Option<u64>,
    /// Timed steps.
    pub steps: u64,
    /// Untimed steps before timing.
    pub warmup: u64,
    /// Solver backend.
    pub backend: Backend,
    /// Time each stage (CUDA: events between kernels).
    pub stage_timing: bool,
}

/// Benchmark results (the `--json` output, through [`BenchReport::json`]).
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// Scene name.
    pub scene: String,
    /// Simulation kind.
    pub kind: &'static str,
    /// Backend that ran.
    pub backend: String,
    /// Worker threads (CPU) used.
    pub threads: usize,
    /// Elements simulated.
    pub elements: u64,
    /// What an element is, plural ("particles").
    pub unit: &'static str,
    /// Iterations per solver step, mean over the timed steps (fixed, or as the kind's rule
    /// needed; 0 for a kind without an iterative solve).
    pub iterations: f64,
    /// The iteration rule: "4 iterations" or "until compression ≤ 0.001 (1–100)".
    pub rule: String,
    /// The kind's further figures after the last step (pbf: `compression`, the mean of
    /// max(ρ/ρ₀ − 1, 0) the last step's iterations reached).
    pub figures: Vec<(&'static str, f64)>,
    /// Solver steps per step (frame), mean over the timed steps (the CFL condition may add
    /// steps to the scene's `substeps`).
    pub substeps: f64,
    /// Timed steps.
    pub steps: u64,
    /// Warm-up steps.
    pub warmup: u64,
    /// Median wall time of one step (frame), ms.
    pub ms_per_step: f64,
    /// Mean wall time of one step, ms.
    pub ms_per_step_mean: f64,
    /// Wall time of one solver step (substep), ms: the median step over the mean substeps.
    pub ms_per_substep: f64,
    /// Elements × solver steps per second, from the median.
    pub element_steps_per_second: f64,
    /// Mean ms per step spent in each stage, in execution order.
    pub stages: Vec<StageTime>,
    /// CUDA kernels run per timed step (0 on the CPU), those of replayed CUDA graphs included.
    pub kernel_launches_per_step: f64,
    /// Launch calls the host made per timed step: kernels queued one by one plus CUDA graphs
    /// launched (equal to the kernels when no graph ran; ~1 when a frame is one graph).
    pub launch_calls_per_step: f64,
    /// GPU memory the run took on a CUDA backend, bytes: the device's free memory
    /// (`cuMemGetInfo`) before the simulation opened less after the warm-up, the context
    /// held throughout (so its own reservation is not counted). `None` on the CPU.
    pub gpu_memory_bytes: Option<u64>,
    /// How a CUDA solver's frames (ink: steps) ran: captured as CUDA graphs, replayed, launched
    /// one by one, and why the last ran launch by launch (`cuda::GraphMode::summary`, through
    /// `Sim::cuda_graphs`); `None` where the kind does not say.
    pub cuda_graphs: Option<String>,
}

impl BenchReport {
    /// The JSON line: the fields by name, the count under the kind's unit (`"particles"`),
    /// the throughput as `particle_steps_per_second` (unit singular), the figures as keys.
    pub fn json(&self) -> serde_json::Value {
        let singular = self.unit.strip_suffix('s').unwrap_or(self.unit);
        let mut map = serde_json::Map::new();
        let mut put = |key: &str, value: serde_json::Value| {
            map.insert(key.to_string(), value);
        };
        put("scene", self.scene.clone().into());
        put("kind", self.kind.into());
        put("backend", self.backend.clone().into());
        put("threads", self.threads.into());
        put(self.unit, self.elements.into());
        put("iterations", self.iterations.into());
        put("rule", self.rule.clone().into());
        for (name, value) in &self.figures {
            put(name, (*value).into());
        }
        put("substeps", self.substeps.into());
        put("steps", self.steps.into());
        put("warmup", self.warmup.into());
        put("ms_per_step", self.ms_per_step.into());
        put("ms_per_step_mean", self.ms_per_step_mean.into());
        put("ms_per_substep", self.ms_per_substep.into());
        put(
            &format!("{singular}_steps_per_second"),
            self.element_steps_per_second.into(),
        );
        put(
            "stages",
            serde_json::to_value(&self.stages).unwrap_or_default(),
        );
        put(
            "kernel_launches_per_step",
            self.kernel_launches_per_step.into(),
        );
        put("launch_calls_per_step", self.launch_calls_per_step.into());
        if let Some(graphs) = &self.cuda_graphs {
            put("cuda_graphs", graphs.clone().into());
        }
        if let Some(bytes) = self.gpu_memory_bytes {
            put("gpu_memory_bytes", bytes.into());
            put(
                &format!("gpu_bytes_per_{singular}"),
                (bytes as f64 / self.elements.max(1) as f64).into(),
            );
        }
        serde_json::Value::Object(map)
    }
}

/// Time of one stage.
#[derive(Clone, Debug, Serialize)]
pub struct StageTime {
    /// Stage name.
    pub stage: &'static str,
    /// Mean ms per step.
    pub ms: f64,
    /// Bytes moved per step by the kind's traffic model over that time, GB/s (when modelled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gb_per_s: Option<f64>,
}

/// Runs the benchmark.
pub fn run(options: &BenchOptions, progress: bool) -> Result<BenchReport> {
    // The command line refuses these; options built in code skip its parsers.
    if options.steps == 0 {
        bail!("--steps 0: a benchmark times at least one step");
    }
    if options.steps.max(options.warmup) > MAX_COUNT {
        bail!("more than {MAX_COUNT} steps (--steps, --warmup)");
    }
    let source = Source::load(&options.scene)?;
    // Held until the memory is measured, so the context's own reservation is in both figures.
    let gpu = (options.backend != Backend::Cpu)
        .then(|| crate::cuda::context(crate::cuda::DEFAULT_DEVICE).ok())
        .flatten()
        .and_then(|context| Some((context.mem_get_info().ok()?.0, context)));
    let mut sim = sims::open(
        &source,
        &OpenOptions {
            backend: options.backend,
            elements: options.particles,
            ..OpenOptions::default()
        },
    )?;
    sim.set_stage_timing(options.stage_timing);
    let bar = progress.then(|| super::progress_bar(options.warmup + options.steps, "steps"));
    for _ in 0..options.warmup {
        sim.step()?;
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    let gpu_memory_bytes = gpu.and_then(|(free_before, context)| {
        let on_gpu = sim.backend().starts_with("cuda");
        let free_after = context.mem_get_info().ok()?.0;
        on_gpu.then(|| free_before.saturating_sub(free_after) as u64)
    });
    sim.reset_stage_times();
    let steps_before = sim.steps_taken();
    let launches_before = crate::cuda::module::launch_count();
    let calls_before = crate::cuda::module::launch_call_count();
    // Grown as the steps run (outside the timed span): no count sizes an allocation up front.
    let mut step_seconds = Vec::new();
    let mut iterations = 0.0;
    for _ in 0..options.steps {
        let start = Instant::now();
        let before = sim.steps_taken();
        sim.step()?;
        step_seconds.push(start.elapsed().as_secs_f64());
        iterations += sim.solve_summary().iterations * (sim.steps_taken() - before) as f64;
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let steps = options.steps as f64;
    let kernel_launches_per_step =
        (crate::cuda::module::launch_count() - launches_before) as f64 / steps;
    let launch_calls_per_step =
        (crate::cuda::module::launch_call_count() - calls_before) as f64 / steps;
    let median = median(&mut step_seconds);
    let mean = step_seconds.iter().sum::<f64>() / steps;
    let substeps = (sim.steps_taken() - steps_before) as f64 / steps;
    let elements = sim.elements();
    let solver_steps = (sim.steps_taken() - steps_before).max(1) as f64;
    let solve = sim.solve_summary();
    Ok(BenchReport {
        scene: sim.scene_name().to_string(),
        kind: sim.kind().name(),
        backend: sim.backend().to_string(),
        threads: rayon::current_num_threads(),
        elements,
        unit: sim.element_unit(),
        iterations: iterations / solver_steps,
        rule: solve.rule,
        figures: solve.figures,
        substeps,
        steps: options.steps,
        warmup: options.warmup,
        ms_per_step: median * 1e3,
        ms_per_step_mean: mean * 1e3,
        ms_per_substep: median * 1e3 / substeps,
        element_steps_per_second: elements as f64 * substeps / median.max(1e-12),
        // Off, none is reported: the CPU's clocks run either way (they cost nothing
        // measurable), but a CUDA run without events has no figures to give.
        stages: if options.stage_timing {
            let bytes = sim.stage_bytes();
            sim.stages()
                .iter()
                .zip(sim.stage_seconds())
                .enumerate()
                .map(|(k, (&stage, seconds))| StageTime {
                    stage,
                    ms: seconds * 1e3 / steps,
                    gb_per_s: bytes
                        .get(k)
                        .copied()
                        .flatten()
                        .filter(|_| seconds > 0.0)
                        .map(|b| b * steps / seconds / 1e9),
                })
                .filter(|t| t.ms > 0.0)
                .collect()
        } else {
            Vec::new()
        },
        kernel_launches_per_step,
        launch_calls_per_step,
        gpu_memory_bytes,
        cuda_graphs: sim.cuda_graphs(),
    })
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        0.5 * (values[mid - 1] + values[mid])
    }
}

/// The human-readable table.
pub fn print(report: &BenchReport) {
    // A kind without an iterative solve (pool, particles) has no iterations to count: its
    // rule says what a frame does instead.
    let solve = if report.iterations == 0.0 {
        format!("{:.1} substeps ({})", report.substeps, report.rule)
    } else {
        format!(
            "{:.1} substeps × {:.1} iterations ({})",
            report.substeps, report.iterations, report.rule
        )
    };
    println!(
        "{} on {} ({} threads): {} {}, {solve}, {} after {} warm-up",
        report.scene,
        report.backend,
        report.threads,
        report.elements,
        report.unit,
        super::counted(report.steps, "step"),
        report.warmup
    );
    for (name, value) in &report.figures {
        println!("  {name} reached: {value:.3e}");
    }
    let total: f64 = report.stages.iter().map(|s| s.ms).sum();
    for stage in &report.stages {
        let bandwidth = stage
            .gb_per_s
            .map_or(String::new(), |g| format!("  {g:>8.1} GB/s"));
        println!(
            "  {:<18} {:>9.3} ms/step  {:>5.1}%{bandwidth}",
            stage.stage,
            stage.ms,
            100.0 * stage.ms / total.max(1e-12)
        );
    }
    if report.kernel_launches_per_step > 0.0 {
        println!(
            "  kernel launches: {:.1} per step, {:.1} per substep; {:.1} launch calls per step{}",
            report.kernel_launches_per_step,
            report.kernel_launches_per_step / report.substeps.max(1e-12),
            report.launch_calls_per_step,
            if report.launch_calls_per_step < report.kernel_launches_per_step {
                " (CUDA graphs)"
            } else {
                ""
            }
        );
    }
    if let Some(graphs) = &report.cuda_graphs {
        println!("  CUDA graphs: {graphs}");
    }
    if let Some(bytes) = report.gpu_memory_bytes {
        println!(
            "  GPU memory: {}, {:.1} bytes per {} (cuMemGetInfo before opening and after the warm-up)",
            crate::host::format_bytes(bytes),
            bytes as f64 / report.elements.max(1) as f64,
            report.unit.strip_suffix('s').unwrap_or(report.unit)
        );
    }
    // The pool's frame is named by its substeps (docs/pool.md), every other kind's by steps.
    let throughput = if report.kind == crate::sims::pool::KIND {
        "node-substeps/s (nodes × substeps per second)".to_string()
    } else {
        format!(
            "{}-steps/s",
            report.unit.strip_suffix('s').unwrap_or(report.unit)
        )
    };
    println!(
        "  step: {:.3} ms median ({:.3} mean), {:.3} ms per substep, {:.3e} {throughput}",
        report.ms_per_step,
        report.ms_per_step_mean,
        report.ms_per_substep,
        report.element_steps_per_second,
    );
}
