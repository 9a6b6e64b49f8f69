//! The kernels without a GPU: `kernels/pbf.cu` compiled as plain C++ (`tests/emulation/`) and
//! run on the CPU thread by thread, compared with the CPU reference solver. This checks the
//! kernels' math, indexing, sort and launch sequence on machines with no CUDA at all; what it
//! cannot check is the host's cudarc plumbing and real parallel execution (the device check
//! does). Skips when no C++ compiler is found (`CXX`, else `c++`).

use super::params::{GpuObstacle, GpuParams};
use super::parity::{self, ONE_STEP_MAX_ERROR, ONE_STEP_MEAN_ERROR};
use crate::scene::Scene;
use crate::sim::cpu::CpuSolver;
use crate::sim::{InitialState, Solver};
use glam::Vec3A;
use std::path::{Path, PathBuf};
use std::process::Command;

fn compile(source: &str, output: &Path) -> Option<PathBuf> {
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let result = Command::new(&compiler)
        .args([
            "-std=c++20",
            "-O2",
            "-ffp-contract=off",
            "-pthread",
            "-x",
            "c++",
        ])
        .arg("-I")
        .arg(root.join("kernels"))
        .arg(root.join("tests/emulation").join(source))
        .arg("-o")
        .arg(output)
        .output();
    match result {
        Ok(out) if out.status.success() => Some(output.to_path_buf()),
        Ok(out) => panic!(
            "{compiler} failed on tests/emulation/{source}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            println!("SKIP: no C++ compiler ({compiler}: {e})");
            None
        }
    }
}

/// One frame of the emulated kernels from `state`, by id: positions, velocities, densities,
/// neighbour counts, and the non-finite flag.
struct Frame {
    positions: Vec<Vec3A>,
    velocities: Vec<Vec3A>,
    densities: Vec<f32>,
    neighbor_counts: Vec<u32>,
    non_finite: u32,
}

fn emulate_frame(program: &Path, scene: &Scene, state: &InitialState, reverse: bool) -> Frame {
    let (params, world) = (&scene.params, scene.world());
    let n = state.len();
    // The CFL substep count the CPU solver and the CUDA solver both take for this state.
    let substeps = params.substeps_for(state.max_speed());
    let dt = params.dt / substeps as f32;
    let mut input = bytemuck::bytes_of(&GpuParams::new(params, &world, n as u32, dt)).to_vec();
    let header = [
        world.obstacles.len() as u32,
        params.iterations,
        substeps,
        (params.vorticity != 0.0).into(),
        (params.xsph_c > 0.0).into(),
    ];
    input.extend_from_slice(bytemuck::cast_slice(&header));
    for obstacle in &world.obstacles {
        input.extend_from_slice(bytemuck::bytes_of(&GpuObstacle::from(obstacle)));
    }
    for v in state.positions.iter().chain(&state.velocities) {
        input.extend_from_slice(bytemuck::cast_slice(&[v.x, v.y, v.z, 0.0]));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (input_path, output_path) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
    std::fs::write(&input_path, input).expect("write input");
    let mut command = Command::new(program);
    command.arg(&input_path).arg(&output_path);
    if reverse {
        command.arg("reverse");
    }
    assert!(command.status().expect("run the emulation").success());
    let output = std::fs::read(&output_path).expect("read output");
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
        positions: (0..n).map(|i| vector(1, i)).collect(),
        velocities: (0..n).map(|i| vector(1 + 4 * n, i)).collect(),
        densities: (0..n).map(|i| float(1 + 8 * n + i)).collect(),
        neighbor_counts: words[1 + 9 * n..1 + 10 * n].to_vec(),
    }
}

fn max_difference(a: &[Vec3A], b: &[Vec3A]) -> (f32, f32) {
    let errors: Vec<f32> = a.iter().zip(b).map(|(p, q)| (*p - *q).length()).collect();
    let max = errors.iter().copied().fold(0.0, f32::max);
    (max, errors.iter().sum::<f32>() / errors.len().max(1) as f32)
}

#[test]
fn the_kernels_run_on_the_cpu_match_the_reference_solver() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(program) = compile("frame.cpp", &dir.path().join("frame")) else {
        return;
    };
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
        let reference = cpu.snapshot();

        // Threads in order: the sort is stable like the CPU's, sums run in the same order.
        let frame = emulate_frame(&program, &scene, &state, false);
        assert_eq!(frame.non_finite, 0, "{name}");
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
        assert!(max <= 1e-4 * spacing, "{name}: positions differ by {max} m");
        for (id, (a, b)) in frame.densities.iter().zip(&reference.densities).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * b,
                "{name}: particle {id} density {a} vs {b}"
            );
        }

        // Threads in reverse: every cell's order flips, as unordered GPU atomics may do.
        let frame = emulate_frame(&program, &scene, &state, true);
        let (max, mean) = max_difference(&frame.positions, &reference.positions);
        println!("{name}, reversed: max |Δx| {max:.2e} m, mean {mean:.2e} m");
        assert!(max <= ONE_STEP_MAX_ERROR * spacing, "{name}: {max} m");
        assert!(
            mean <= ONE_STEP_MEAN_ERROR * spacing,
            "{name}: mean {mean} m"
        );
    }
}

#[test]
fn the_multi_level_scan_kernel_is_an_exclusive_scan() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(program) = compile("scan_test.cpp", &dir.path().join("scan_test")) else {
        return;
    };
    let output = Command::new(program).output().expect("run scan_test");
    let report = String::from_utf8_lossy(&output.stdout);
    println!("{report}");
    if report.starts_with("SKIP") {
        return;
    }
    assert!(output.status.success(), "{report}");
    assert_eq!(report.lines().count(), 6, "{report}");
}
