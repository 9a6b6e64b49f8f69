//! CPU-vs-CUDA parity: the checks `cargo test` (tests/cuda.rs) and `fluidlab doctor` run.
//!
//! The CUDA kernels implement the CPU reference's formulas in the same operation order, over the
//! same neighbour sets; what differs is the order of neighbour sums (the GPU's counting sort is
//! not stable within a cell) and FMA contraction. One step therefore agrees to far below a
//! particle spacing; over hundreds of frames single particles diverge (the flow is chaotic), so
//! long runs are compared through statistics.

use crate::output::FrameStats;
use crate::scene::Scene;
use crate::sim::cpu::CpuSolver;
use crate::sim::cuda::CudaSolver;
use crate::sim::{InitialState, Solver, SolverError};

/// A small dam break (4 500 particles) that meets a sphere and a box: every stage, both
/// obstacle kinds and the walls take part. h is 2.05 spacings, not 2, so the seeded lattice
/// has no pairs at exactly h, whose membership rounding would decide.
pub const PARITY_SCENE: &str = r#"
description = "Parity check: a dam break into a sphere and a box"
[container]
min = [0.0, 0.0, 0.0]
max = [0.8, 0.6, 0.3]
[[fluid]]
shape = "box"
min = [0.0, 0.0, 0.0]
max = [0.3, 0.4, 0.3]
[[obstacle]]
shape = "sphere"
center = [0.45, 0.0, 0.15]
radius = 0.08
[[obstacle]]
shape = "box"
min = [0.65, 0.0, 0.05]
max = [0.7, 0.2, 0.15]
[params]
spacing = 0.02
kernel_radius = 0.041
iterations = 4
substeps = 2
dt = 0.0166
xsph_c = 0.01
vorticity = 0.01
"#;

/// Frames the CPU runs before the one-step comparison, so the state is in motion (the column
/// is collapsing) rather than a lattice at rest.
pub const ONE_STEP_WARMUP_FRAMES: usize = 20;
/// Frames of the long comparison, and the interval of its recorded frames.
pub const RUN_FRAMES: u64 = 200;
/// Recorded-frame interval of the long comparison.
pub const RUN_EVERY: u64 = 10;

/// One-step tolerance on any particle's position, as a fraction of the particle spacing.
/// Reassociating a float32 sum of ~40 terms moves λ and Δp by ~1e-6 relative; Δp is at most
/// ~0.1 spacing per iteration and a frame has 8 iterations. Measured without a GPU: the kernel
/// source compiled as C++ with FMA contraction and every cell's order reversed differs from the
/// CPU by at most 4.6e-5 spacing after a frame from a moving state (9e-7 m), as do two CPU runs
/// one unit in the last place apart. 1e-3 leaves a factor of 20 while catching any formula slip
/// (turning s_corr off moves particles by far more; a test checks it).
pub const ONE_STEP_MAX_ERROR: f32 = 1e-3;
/// One-step tolerance on the mean position error, fraction of the spacing.
pub const ONE_STEP_MEAN_ERROR: f32 = 1e-4;

/// Long-run tolerances, set from CPU-vs-CPU runs whose initial positions differ by one unit in
/// the last place (six such runs of [`PARITY_SCENE`]: worst mean-density-error difference 6.1%,
/// kinetic energy 20% of the run's peak, centre of mass 0.4% of the container). The energy
/// allowance is wide because the reference solver itself ejects particles along the
/// container's bottom edges at 5–15 m/s at moments that depend on rounding (docs/cuda.md);
/// tests/cuda.rs keeps the worst of those runs as a test.
pub const RUN_TOLERANCE: RunTolerance = RunTolerance {
    density_relative: 0.10,
    density_floor: 0.002,
    energy_of_peak: 0.30,
    center_of_mass_of_extent: 0.01,
};

/// How far the statistics of two runs may drift apart at any recorded frame.
#[derive(Clone, Copy, Debug)]
pub struct RunTolerance {
    /// Relative difference allowed in the mean of |ρ/ρ₀ − 1|.
    pub density_relative: f64,
    /// Absolute allowance added to it.
    pub density_floor: f64,
    /// Kinetic-energy difference allowed, as a fraction of the run's peak kinetic energy.
    pub energy_of_peak: f64,
    /// Centre-of-mass difference allowed per axis, fraction of the container's extent.
    pub center_of_mass_of_extent: f64,
}

/// The outcome of one parity check.
#[derive(Clone, Debug)]
pub struct ParityCheck {
    /// Whether the candidate stayed within tolerance.
    pub passed: bool,
    /// The measured figures and the tolerance, in words.
    pub detail: String,
}

/// The parity scene, parsed.
pub fn parity_scene() -> Scene {
    Scene::parse(PARITY_SCENE, "parity", "built-in parity scene")
        .expect("the parity scene is valid")
}

/// The CPU state after [`ONE_STEP_WARMUP_FRAMES`] frames of `scene`, in id order.
pub fn moving_state(scene: &Scene) -> Result<InitialState, SolverError> {
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &scene.seed())?;
    for _ in 0..ONE_STEP_WARMUP_FRAMES {
        cpu.step()?;
    }
    let snapshot = cpu.snapshot();
    Ok(InitialState {
        positions: snapshot.positions,
        velocities: snapshot.velocities,
    })
}

/// Steps both solvers (started from the same state) once and compares every particle's
/// position by id against [`ONE_STEP_MAX_ERROR`] and [`ONE_STEP_MEAN_ERROR`].
pub fn compare_one_step(
    reference: &mut dyn Solver,
    candidate: &mut dyn Solver,
    spacing: f32,
) -> Result<ParityCheck, SolverError> {
    reference.step()?;
    candidate.step()?;
    let (a, b) = (reference.snapshot(), candidate.snapshot());
    let mut worst = (0.0f32, 0usize);
    let mut sum = 0.0f64;
    for (id, (p, q)) in a.positions.iter().zip(&b.positions).enumerate() {
        let error = (*p - *q).length();
        if error.is_nan() || error > worst.0 {
            worst = (error, id);
        }
        sum += error as f64;
    }
    let mean = (sum / a.positions.len().max(1) as f64) as f32;
    let (max_allowed, mean_allowed) = (ONE_STEP_MAX_ERROR * spacing, ONE_STEP_MEAN_ERROR * spacing);
    Ok(ParityCheck {
        passed: worst.0 <= max_allowed && mean <= mean_allowed,
        detail: format!(
            "{} particles, one frame: max position difference {:.3e} m (particle {}), mean {:.3e} m; \
             allowed {max_allowed:.1e} / {mean_allowed:.1e} m",
            a.positions.len(),
            worst.0,
            worst.1,
            mean
        ),
    })
}

/// Runs both solvers `frames` frames and compares mean density error, kinetic energy and centre
/// of mass at every `every`-th frame (and the last) against `tolerance`.
pub fn compare_runs(
    reference: &mut dyn Solver,
    candidate: &mut dyn Solver,
    scene: &Scene,
    frames: u64,
    every: u64,
    tolerance: RunTolerance,
) -> Result<ParityCheck, SolverError> {
    let mut records = Vec::new();
    for frame in 0..=frames {
        if frame > 0 {
            reference.step()?;
            candidate.step()?;
        }
        if frame % every == 0 || frame == frames {
            let time = frame as f64 * scene.params.dt as f64;
            records.push((
                FrameStats::measure(&reference.snapshot(), frame, time, 0.0),
                FrameStats::measure(&candidate.snapshot(), frame, time, 0.0),
            ));
        }
    }
    let peak_energy = records
        .iter()
        .map(|(a, b)| a.kinetic_energy.max(b.kinetic_energy))
        .fold(0.0, f64::max);
    let extent = scene.container.size();
    let mut worst = [(0.0f64, 0u64); 3];
    let mut failures = Vec::new();
    for (a, b) in &records {
        let density = (a.density_error_mean - b.density_error_mean).abs()
            / (tolerance.density_relative * a.density_error_mean.max(b.density_error_mean)
                + tolerance.density_floor);
        let energy = (a.kinetic_energy - b.kinetic_energy).abs()
            / (tolerance.energy_of_peak * peak_energy).max(f64::MIN_POSITIVE);
        let center = (0..3)
            .map(|axis| {
                (a.center_of_mass[axis] - b.center_of_mass[axis]).abs()
                    / (tolerance.center_of_mass_of_extent * extent[axis] as f64)
            })
            .fold(0.0, f64::max);
        // Each ratio is difference / allowance: above 1 fails.
        for (slot, ratio) in worst.iter_mut().zip([density, energy, center]) {
            if ratio.is_nan() || ratio > slot.0 {
                *slot = (ratio, a.step);
            }
        }
        for (name, ratio) in [
            ("density error", density),
            ("kinetic energy", energy),
            ("centre of mass", center),
        ] {
            if ratio.is_nan() || ratio > 1.0 {
                failures.push(format!(
                    "frame {}: {name} ({:.4} vs {:.4} J, ρ err {:.4} vs {:.4}, com y {:.4} vs {:.4})",
                    a.step,
                    a.kinetic_energy,
                    b.kinetic_energy,
                    a.density_error_mean,
                    b.density_error_mean,
                    a.center_of_mass[1],
                    b.center_of_mass[1]
                ));
            }
        }
    }
    let summary = format!(
        "{} frames, {} recorded: worst difference / allowance: density error {:.2} (frame {}), \
         kinetic energy {:.2} (frame {}), centre of mass {:.2} (frame {})",
        frames,
        records.len(),
        worst[0].0,
        worst[0].1,
        worst[1].0,
        worst[1].1,
        worst[2].0,
        worst[2].1
    );
    Ok(ParityCheck {
        passed: failures.is_empty(),
        detail: if failures.is_empty() {
            summary
        } else {
            format!("{summary}; first failure: {}", failures[0])
        },
    })
}

/// CPU vs CUDA, one frame from a moving state of the parity scene.
pub fn cuda_one_step() -> Result<ParityCheck, SolverError> {
    let scene = parity_scene();
    let state = moving_state(&scene)?;
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &state)?;
    let mut cuda = CudaSolver::new(scene.world(), scene.params.clone(), &state)?;
    compare_one_step(&mut cpu, &mut cuda, scene.params.spacing)
}

/// CPU vs CUDA, [`RUN_FRAMES`] frames of the parity scene from its seed.
pub fn cuda_dam_break() -> Result<ParityCheck, SolverError> {
    let scene = parity_scene();
    let seed = scene.seed();
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &seed)?;
    let mut cuda = CudaSolver::new(scene.world(), scene.params.clone(), &seed)?;
    cuda.set_stage_timing(false);
    compare_runs(
        &mut cpu,
        &mut cuda,
        &scene,
        RUN_FRAMES,
        RUN_EVERY,
        RUN_TOLERANCE,
    )
}
