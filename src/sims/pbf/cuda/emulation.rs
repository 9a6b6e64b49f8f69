//! The kernels without a GPU: `kernels/pbf.cu` compiled as plain C++ (`tests/emulation/`) and
//! run on the CPU thread by thread, compared with the CPU reference solver. This checks the
//! kernels' math, indexing, sort and launch sequence on machines with no CUDA at all; what it
//! cannot check is the host's cudarc plumbing and real parallel execution (the device check
//! does). Needs a C++20 compiler (`CXX`, else `c++`): where build.rs finds none, the tests are
//! marked ignored with the reason.
//!
//! The GPU-like build ([`Rounding::Gpu`]) contracts a·b + c into fused multiply-adds as nvcc
//! does, and runs every launch's threads in a random order: 200-frame runs of it against the
//! CPU solver check the long-run parity tolerances against the kind of rounding a GPU adds at
//! every step (rather than once, as the salted CPU runs of tests/cuda.rs do).

use super::params::{GpuObstacle, GpuParams};
use super::parity::{self, ONE_STEP_MAX_ERROR, ONE_STEP_MEAN_ERROR};
use crate::cuda::emulation;
pub(super) use crate::cuda::emulation::Rounding;
use crate::sims::pbf::cpu::CpuSolver;
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::{InitialState, Params, Snapshot, Solver, SolverError, StageTimes};
use glam::Vec3A;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles tests/emulation/`source` (the PBF kernels' emulations) into `output`.
pub(super) fn compile(source: &str, output: &Path, rounding: Rounding) -> PathBuf {
    emulation::compile(source, output, rounding, None)
}

/// One frame of the emulated kernels from `state`, by id: positions, velocities, densities,
/// neighbour counts; the non-finite flag and the largest speed from `find_non_finite`; and the
/// substeps it took.
pub(super) struct Frame {
    pub(super) positions: Vec<Vec3A>,
    velocities: Vec<Vec3A>,
    densities: Vec<f32>,
    neighbor_counts: Vec<u32>,
    pub(super) non_finite: u32,
    max_speed: f32,
    /// Constraint iterations over the frame's steps.
    iterations: u32,
    /// The mean compression the last measuring compute_lambda found.
    compression: f32,
    substeps: u32,
}

/// The order in which every launch runs its threads.
#[derive(Clone, Copy, Debug)]
pub(super) enum Order {
    /// First to last: the counting sort is stable, like the CPU's.
    Forward,
    /// Last to first: every cell's order flips.
    Reverse,
    /// A random permutation per launch, drawn from this seed.
    Random(u32),
}

pub(super) fn emulate_frame(
    program: &Path,
    scene: &Scene,
    state: &InitialState,
    order: Order,
) -> Frame {
    let (params, world) = (&scene.params, scene.world());
    let n = state.len();
    // The CFL substep count the CPU solver and the CUDA solver both take for this state.
    let substeps = params.substeps_for(state.max_speed());
    let dt = params.dt / substeps as f32;
    let constants = GpuParams::new(params, &world, n as u32, dt);
    let mut input = bytemuck::bytes_of(&constants).to_vec();
    let dims = constants.grid_dims.map(|d| d as usize);
    let (levels, tail) = super::coarse::hierarchy(&world, dims);
    let (fewest, most, tolerance) = params.iteration_rule();
    let header = [
        world.obstacles.len() as u32,
        substeps,
        (params.vorticity != 0.0).into(),
        (params.xsph_c > 0.0).into(),
        params.coarse_correction.into(),
        fewest,
        most,
        tolerance.unwrap_or(-1.0).to_bits(),
        crate::sims::pbf::coarse::CG_ITERATIONS as u32,
        crate::sims::pbf::coarse::CG_ITERATIONS_COLD as u32,
        levels.len() as u32,
        tail as u32,
    ];
    input.extend_from_slice(bytemuck::cast_slice(&header));
    for obstacle in &world.obstacles {
        input.extend_from_slice(bytemuck::bytes_of(&GpuObstacle::from(obstacle)));
    }
    input.extend_from_slice(bytemuck::cast_slice(&levels));
    let mut solid: Vec<u8> = crate::sims::pbf::coarse::CoarseCorrection::solid_cells(&world, dims)
        .into_iter()
        .map(u8::from)
        .collect();
    solid.resize(solid.len().div_ceil(4) * 4, 0);
    input.extend_from_slice(&solid);
    for v in state.positions.iter().chain(&state.velocities) {
        input.extend_from_slice(bytemuck::cast_slice(&[v.x, v.y, v.z, 0.0]));
    }
    let args: Vec<String> = match order {
        Order::Forward => Vec::new(),
        Order::Reverse => vec!["reverse".into()],
        Order::Random(seed) => vec![format!("random={seed}")],
    };
    let output = emulation::run(program, &input, &args);
    let words: Vec<u32> = output
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let float = |k: usize| f32::from_bits(words[k]);
    let vector = |base: usize, i: usize| {
        Vec3A::new(
            float(base + 4 * i),
            float(base + 4 * i + 1),
            float(base + 4 * i + 2),
        )
    };
    Frame {
        non_finite: words[0],
        max_speed: float(1),
        iterations: words[2],
        compression: float(3),
        positions: (0..n).map(|i| vector(4, i)).collect(),
        velocities: (0..n).map(|i| vector(4 + 4 * n, i)).collect(),
        densities: (0..n).map(|i| float(4 + 8 * n + i)).collect(),
        neighbor_counts: words[4 + 9 * n..4 + 10 * n].to_vec(),
        substeps,
    }
}

/// The emulated kernels as a [`Solver`], frame by frame, every launch in a random order (a new
/// permutation each frame): what `compare_runs` needs to hold them against the CPU solver.
struct EmulatedSolver<'a> {
    program: &'a Path,
    scene: Scene,
    state: InitialState,
    densities: Vec<f32>,
    neighbor_counts: Vec<u32>,
    seed: u32,
    frames: u32,
    steps: u64,
}

impl<'a> EmulatedSolver<'a> {
    fn new(program: &'a Path, scene: &Scene, state: &InitialState, seed: u32) -> Self {
        EmulatedSolver {
            program,
            scene: scene.clone(),
            state: state.clone(),
            densities: vec![scene.params.rest_density; state.len()],
            neighbor_counts: vec![0; state.len()],
            seed,
            frames: 0,
            steps: 0,
        }
    }
}

impl Solver for EmulatedSolver<'_> {
    fn backend_name(&self) -> &'static str {
        "emulated kernels"
    }
    fn particle_count(&self) -> usize {
        self.state.len()
    }
    fn params(&self) -> &Params {
        &self.scene.params
    }
    fn set_params(&mut self, params: &Params) -> Result<(), SolverError> {
        self.scene.params = params.clone();
        Ok(())
    }
    fn step(&mut self) -> Result<(), SolverError> {
        self.frames += 1;
        let order = Order::Random(self.seed.wrapping_mul(100_003).wrapping_add(self.frames));
        let frame = emulate_frame(self.program, &self.scene, &self.state, order);
        self.steps += u64::from(frame.substeps);
        if frame.non_finite != 0 {
            let particle = !frame.non_finite;
            return Err(SolverError::NonFinite {
                step: self.steps,
                particle,
                quantity: "position or velocity",
                value: frame.positions[particle as usize].to_array(),
                stage: "the emulated frame",
            });
        }
        self.state = InitialState {
            positions: frame.positions,
            velocities: frame.velocities,
        };
        self.densities = frame.densities;
        self.neighbor_counts = frame.neighbor_counts;
        Ok(())
    }
    fn steps_taken(&self) -> u64 {
        self.steps
    }
    fn stage_times(&self) -> StageTimes {
        StageTimes::default()
    }
    fn reset_stage_times(&mut self) {}
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        Ok(Snapshot {
            positions: self.state.positions.clone(),
            velocities: self.state.velocities.clone(),
            densities: self.densities.clone(),
            neighbor_counts: self.neighbor_counts.clone(),
            particle_mass: self.scene.params.particle_mass,
            rest_density: self.scene.params.rest_density,
            spacing: self.scene.params.spacing,
            gravity: self.scene.params.gravity,
            solve: Default::default(),
        })
    }
    fn solve_report(&self) -> crate::sims::pbf::SolveReport {
        Default::default()
    }
    fn render_positions(
        &self,
        _: crate::sims::pbf::RenderScalar,
        out: &mut Vec<[f32; 4]>,
    ) -> Result<(), SolverError> {
        out.clear();
        out.extend(self.state.positions.iter().map(|p| [p.x, p.y, p.z, 0.0]));
        Ok(())
    }
}

/// The bound on any particle's position difference (a fraction of the spacing) after one frame
/// with the threads in order: the kernels sum the CPU's neighbours in the CPU's order, and
/// differ only where the CPU's SIMD lanes group a sum otherwise.
pub(super) const SAME_ORDER_MAX_ERROR: f32 = 1e-4;

pub(super) fn max_difference(a: &[Vec3A], b: &[Vec3A]) -> (f32, f32) {
    let errors: Vec<f32> = a.iter().zip(b).map(|(p, q)| (*p - *q).length()).collect();
    let max = errors.iter().copied().fold(0.0, f32::max);
    (max, errors.iter().sum::<f32>() / errors.len().max(1) as f32)
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_kernels_run_on_the_cpu_match_the_reference_solver() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile("frame.cpp", &dir.path().join("frame"), Rounding::Separate);
    let scene = parity::parity_scene();
    let spacing = scene.params.spacing;
    for (name, state) in [
        ("the seeded lattice", scene.seed()),
        (
            "a moving state",
            parity::moving_state(&scene).expect("CPU warm-up"),
        ),
    ] {
        let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
        cpu.step().unwrap();
        let reference = cpu.snapshot().unwrap();

        // Threads in order: the sort is stable like the CPU's, sums run in the same order.
        let frame = emulate_frame(&program, &scene, &state, Order::Forward);
        assert_eq!(frame.non_finite, 0, "{name}");
        // find_non_finite's warp-aggregated maximum is the largest speed of the frame.
        let fastest = frame
            .velocities
            .iter()
            .map(|v| v.length())
            .fold(0.0, f32::max);
        assert!(
            (frame.max_speed - fastest).abs() <= 1e-6 * fastest,
            "{name}: find_non_finite measured {} m/s, the fastest particle moves at {fastest} m/s",
            frame.max_speed
        );
        // The CPU sums neighbours four at a time in SIMD lanes, the kernels one by one, so
        // positions agree to rounding, not bit for bit, and a pair within rounding of h may be
        // a neighbour on one side only (W and ∇W vanish there, so it changes nothing).
        let differing = frame
            .neighbor_counts
            .iter()
            .zip(&reference.neighbor_counts)
            .filter(|(a, b)| a != b)
            .count();
        assert!(
            differing <= frame.neighbor_counts.len() / 1000,
            "{name}: {differing} particles' neighbour counts differ"
        );
        let (max, _) = max_difference(&frame.positions, &reference.positions);
        let (max_velocity, _) = max_difference(&frame.velocities, &reference.velocities);
        println!("{name}, same order: max |Δx| {max:.2e} m, max |Δv| {max_velocity:.2e} m/s");
        // The same iterations, and the compression the last of them measured.
        assert_eq!(
            frame.iterations as f32,
            reference.solve.iterations * frame.substeps as f32,
            "{name}"
        );
        assert!(
            (frame.compression - reference.solve.compression).abs()
                <= 1e-3 * reference.solve.compression.max(1e-4),
            "{name}: compression {} vs {}",
            frame.compression,
            reference.solve.compression
        );
        assert!(
            max <= SAME_ORDER_MAX_ERROR * spacing,
            "{name}: positions differ by {max} m"
        );
        for (id, (a, b)) in frame.densities.iter().zip(&reference.densities).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * b,
                "{name}: particle {id} density {a} vs {b}"
            );
        }

        // Threads in reverse: every cell's order flips, as unordered GPU atomics may do.
        let frame = emulate_frame(&program, &scene, &state, Order::Reverse);
        let (max, mean) = max_difference(&frame.positions, &reference.positions);
        println!("{name}, reversed: max |Δx| {max:.2e} m, mean {mean:.2e} m");
        assert!(max <= ONE_STEP_MAX_ERROR * spacing, "{name}: {max} m");
        assert!(
            mean <= ONE_STEP_MEAN_ERROR * spacing,
            "{name}: mean {mean} m"
        );
    }
}

/// Under the density-error rule the kernels stop where the CPU stops: the same iterations per
/// step (check_density_error's flag turns the rest of the step's launches into no-ops), the
/// same positions.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_kernels_follow_the_density_error_rule_like_the_reference_solver() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile("frame.cpp", &dir.path().join("frame"), Rounding::Separate);
    let mut scene = parity::parity_scene();
    scene.params.max_density_error = 0.0003;
    scene.params.min_iterations = 2;
    scene.params.max_iterations = 30;
    let state = parity::moving_state(&scene).expect("CPU warm-up");
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
    cpu.step().unwrap();
    let reference = cpu.snapshot().unwrap();
    let frame = emulate_frame(&program, &scene, &state, Order::Forward);
    let iterations = reference.solve.iterations * frame.substeps as f32;
    println!(
        "{} iterations over {} steps, compression {:.2e} (CPU {:.2e})",
        frame.iterations, frame.substeps, frame.compression, reference.solve.compression
    );
    assert!(
        iterations > 2.0 * frame.substeps as f32,
        "the rule ran {iterations} iterations"
    );
    assert_eq!(frame.iterations as f32, iterations);
    assert!(frame.compression <= scene.params.max_density_error);
    let (max, _) = max_difference(&frame.positions, &reference.positions);
    assert!(
        max <= 1e-4 * scene.params.spacing,
        "positions differ by {max} m"
    );
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_multi_level_scan_kernel_is_an_exclusive_scan() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(
        "scan_test.cpp",
        &dir.path().join("scan_test"),
        Rounding::Separate,
    );
    let output = Command::new(program).output().expect("run scan_test");
    let report = String::from_utf8_lossy(&output.stdout);
    println!("{report}");
    assert!(output.status.success(), "{report}");
    assert_eq!(report.lines().count(), 6, "{report}");
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn find_non_finite_reports_the_smallest_bad_id_and_the_largest_speed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(
        "find_non_finite_test.cpp",
        &dir.path().join("find_non_finite_test"),
        Rounding::Separate,
    );
    let output = Command::new(program)
        .output()
        .expect("run find_non_finite_test");
    let report = String::from_utf8_lossy(&output.stdout);
    println!("{report}");
    assert!(output.status.success(), "{report}");
    assert_eq!(report.lines().count(), 21, "{report}");
}

/// Seeds of the GPU-like emulated runs `cargo test` makes (more with the measurement below).
const EMULATED_SEEDS: [u32; 1] = [1];

/// The one-frame and long-run spreads of the GPU-like emulation (FMA, random thread order drawn
/// from `seed`) against the CPU solver.
fn emulated_spread(program: &Path, seed: u32) -> (parity::OneStepSpread, parity::RunSpread) {
    let scene = parity::parity_scene();
    let state = parity::moving_state(&scene).expect("CPU warm-up");
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
    let mut emulated = EmulatedSolver::new(program, &scene, &state, seed);
    let one = parity::OneStepSpread::measure(&mut cpu, &mut emulated).expect("one frame");
    let seeded = scene.seed();
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &seeded).unwrap();
    let mut emulated = EmulatedSolver::new(program, &scene, &seeded, seed);
    let windows = parity::run_windows(
        &mut cpu,
        &mut emulated,
        parity::RUN_FRAMES,
        parity::RUN_WINDOW,
    )
    .expect("long run");
    let run = parity::RunSpread::of(
        &windows,
        scene.container.size(),
        parity::RUN_TOLERANCE.density_floor,
    );
    (one, run)
}

fn gpu_like_frame_program(dir: &Path) -> PathBuf {
    compile("frame.cpp", &dir.join("frame"), Rounding::Gpu)
}

/// The kernels with a GPU's rounding (FMA contraction, threads in a random order every launch)
/// pass both parity checks against the CPU solver: the tolerances derived from salted CPU runs
/// cover the rounding a GPU adds at every step.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn gpu_like_emulated_kernels_pass_the_parity_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = gpu_like_frame_program(dir.path());
    let spacing = parity::parity_scene().params.spacing;
    for seed in EMULATED_SEEDS {
        let (one, run) = emulated_spread(&program, seed);
        println!(
            "seed {seed}: one frame max {:.2e}, mean {:.2e} spacings; {} frames: {}",
            one.max / spacing,
            one.mean / spacing,
            parity::RUN_FRAMES,
            run.describe(&parity::RUN_TOLERANCE)
        );
        assert!(one.within(spacing), "seed {seed}: {one:?}");
        assert!(run.within(&parity::RUN_TOLERANCE), "seed {seed}: {run:?}");
    }
}

/// The GPU-like emulation's spreads for seeds 1..=N (`FLUIDLAB_PARITY_SEEDS=N`, default 8, or
/// `A-B` for A..=B), to derive the tolerances with (docs/cuda-verification.md, "Re-deriving the
/// parity tolerances").
#[test]
#[ignore = "a measurement (minutes): cargo test --release --lib gpu_like_emulation_spread -- --ignored --nocapture"]
fn gpu_like_emulation_spread() {
    let seeds = parity::numbers_from_env("FLUIDLAB_PARITY_SEEDS", 8);
    let dir = tempfile::tempdir().expect("temp dir");
    let program = gpu_like_frame_program(dir.path());
    let spacing = parity::parity_scene().params.spacing;
    let (mut worst_max, mut worst_mean) = (0.0f32, 0.0f32);
    let mut worst = parity::RunSpread::default();
    for seed in seeds.clone() {
        let (one, run) = emulated_spread(&program, seed);
        println!(
            "seed {seed:3}: one frame max {:.2e}, mean {:.2e} spacings; {}",
            one.max / spacing,
            one.mean / spacing,
            run.describe(&parity::RUN_TOLERANCE)
        );
        worst_max = worst_max.max(one.max / spacing);
        worst_mean = worst_mean.max(one.mean / spacing);
        worst = worst.max(run);
    }
    println!(
        "worst of seeds {seeds:?}: one frame max {worst_max:.3e}, mean {worst_mean:.3e} spacings; {}",
        worst.describe(&parity::RUN_TOLERANCE)
    );
    println!(
        "with margin {}: ONE_STEP_MAX_ERROR = {:e}, ONE_STEP_MEAN_ERROR = {:e}, RUN_TOLERANCE = {:?}",
        parity::MARGIN,
        parity::round_up(f64::from(worst_max) * parity::MARGIN),
        parity::round_up(f64::from(worst_mean) * parity::MARGIN),
        worst.tolerance(parity::MARGIN, parity::RUN_TOLERANCE.density_floor)
    );
}
