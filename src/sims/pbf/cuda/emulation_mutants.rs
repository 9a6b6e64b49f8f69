//! Mutants of the PBF kernels (kernels/pbf.cu, kernels/pbf_common.cuh): each slip in one term,
//! compiled as plain C++ in place of the real kernel, fails the one-frame comparison with the CPU
//! solver that the real kernels pass (`emulation.rs`). Needs a C++20 compiler, as there.

use super::emulation::{emulate_frame, max_difference, Order, Rounding, SAME_ORDER_MAX_ERROR};
use super::parity;
use crate::cuda::emulation;
use crate::sims::pbf::cpu::CpuSolver;
use crate::sims::pbf::{InitialState, Solver};

/// Slips in the kernels' terms, as `(file below kernels/, text, replacement)`.
const MUTANTS: [(&str, &str, &str); 12] = [
    // s_corr pulling instead of pushing, without its exponent, without its reference W(Δq),
    // left out.
    ("pbf.cu", "scorr = -p.scorr_scale", "scorr = p.scorr_scale"),
    ("pbf.cu", "powi(ratio, p.scorr_n)", "ratio"),
    ("pbf.cu", "(p, r2) * p.inverse_scorr_reference", "(p, r2)"),
    (
        "pbf.cu",
        "(lambda_i + lambdas[j] + scorr)",
        "(lambda_i + lambdas[j])",
    ),
    // Gravity's x and z swapped.
    (
        "pbf.cu",
        "(p.gravity_x, p.gravity_y, p.gravity_z)",
        "(p.gravity_z, p.gravity_y, p.gravity_x)",
    ),
    // Vorticity confinement turning the other way; XSPH driving velocities apart.
    (
        "pbf.cu",
        "v += cross3(n, make3(omega_i)) * p.vorticity_scale;",
        "v = v - cross3(n, make3(omega_i)) * p.vorticity_scale;",
    ),
    (
        "pbf.cu",
        "make4(v + sum * p.xsph_scale)",
        "make4(v - sum * p.xsph_scale)",
    ),
    // The sphere's margin forgotten; the box's or the sphere's density left out.
    (
        "pbf_common.cuh",
        "reach = o.radius + margin;",
        "reach = o.radius;",
    ),
    (
        "pbf_common.cuh",
        "PBF_OBSTACLE_BOX) add_box_layers(p, obstacles[k], x, sums);",
        "PBF_OBSTACLE_BOX) {}",
    ),
    (
        "pbf_common.cuh",
        "else add_sphere_layers(p, obstacles[k], x, sums);",
        "else {}",
    ),
    // The walls beyond z left out of the density; the container open at high x.
    (
        "pbf_common.cuh",
        "if (has_solid(axes[2])) add_product",
        "if (false) add_product",
    ),
    (
        "pbf_common.cuh",
        "fminf(fmaxf(point.x, p.container_lo_x), p.container_hi_x)",
        "fmaxf(point.x, p.container_lo_x)",
    ),
];

/// A slip in any term of the kernels fails the one-frame comparison the real kernels pass
/// (above; the doctor's one-frame tolerance, `ONE_STEP_MAX_ERROR`, is tighter still): each of
/// [`MUTANTS`] moves some particle by more than [`SAME_ORDER_MAX_ERROR`] spacings in a frame from
/// the moving state (the front has reached both obstacles). The parity scene leaves no term at
/// zero for this: with its `scorr_k` at 0 the four s_corr mutants passed, with gravity along y
/// the swapped components did.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn a_wrong_pbf_kernel_fails_the_one_frame_comparison() {
    let scene = parity::parity_scene();
    let state = parity::moving_state(&scene).expect("CPU warm-up");
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
    cpu.step().unwrap();
    let reference = cpu.snapshot().unwrap();
    let dir = tempfile::tempdir().expect("temp dir");
    let passed = surviving(&MUTANTS, dir.path(), &scene, &state, &reference.positions);
    assert!(passed.is_empty(), "mutants passed: {passed:#?}");
}

/// The mutants among `mutants` whose one-frame emulation from `state` stays within
/// [`SAME_ORDER_MAX_ERROR`] spacings of the CPU's `reference` positions (built in `dir`).
fn surviving(
    mutants: &[(&'static str, &'static str, &'static str)],
    dir: &std::path::Path,
    scene: &crate::sims::pbf::scene::Scene,
    state: &InitialState,
    reference: &[glam::Vec3A],
) -> Vec<String> {
    let spacing = scene.params.spacing;
    let mut passed = Vec::new();
    for (k, &(file, from, to)) in mutants.iter().enumerate() {
        let mutation = emulation::Mutation { file, from, to };
        let output = dir.join(format!("mutant{k}"));
        let program = emulation::compile("frame.cpp", &output, Rounding::Separate, Some(mutation));
        let frame = emulate_frame(&program, scene, state, Order::Forward);
        let (max, _) = max_difference(&frame.positions, reference);
        println!("{from:?} → {to:?}: max |Δx| {:.2e} spacings", max / spacing);
        if frame.non_finite == 0 && max <= SAME_ORDER_MAX_ERROR * spacing {
            passed.push(format!("{file}: {from:?} → {to:?}"));
        }
    }
    passed
}

/// Slips in the coincident-pair branch of `pair_gradient` (pbf_common.cuh), which only pairs
/// closer than 1e-4 h take: the direction hashed from the ids the other way round, the branch's
/// sign flipped for both orders, another hash.
const COINCIDENT_MUTANTS: [(&str, &str, &str); 3] = [
    (
        "pbf_common.cuh",
        "pair_direction(ordered ? id_i : id_j, ordered ? id_j : id_i)",
        "pair_direction(ordered ? id_j : id_i, ordered ? id_i : id_j)",
    ),
    (
        "pbf_common.cuh",
        "((ordered ? 1.0f : -1.0f) * p.gradient_peak)",
        "((ordered ? -1.0f : 1.0f) * p.gradient_peak)",
    ),
    ("pbf_common.cuh", "x ^= x >> 15;", "x ^= x >> 14;"),
];

/// The moving state with a copy of every 300th particle at its exact position (same velocity,
/// a new id): each pair is coincident, so its gradient is `pair_direction`'s.
fn coincident_state(state: &InitialState) -> InitialState {
    let mut state = state.clone();
    let copies: Vec<usize> = (0..state.len()).step_by(300).collect();
    for i in copies {
        let (x, v) = (state.positions[i], state.velocities[i]);
        state.positions.push(x);
        state.velocities.push(v);
    }
    state
}

/// Coincident particles are pushed apart along the CPU's direction: the real kernels match the
/// CPU solver's frame, and each of [`COINCIDENT_MUTANTS`] (which the parity scene, with no
/// coincident pair, cannot see) moves a particle by more than [`SAME_ORDER_MAX_ERROR`] spacings.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn coincident_pairs_are_pushed_apart_as_the_cpu_pushes_them() {
    let scene = parity::parity_scene();
    let spacing = scene.params.spacing;
    let moving = parity::moving_state(&scene).expect("CPU warm-up");
    let state = coincident_state(&moving);
    assert!(state.len() > moving.len() + 10);
    let mut cpu = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
    cpu.step().unwrap();
    let reference = cpu.snapshot().unwrap();
    // The copies were pushed off their originals (by more than the rounding tolerance).
    let apart = (0..state.len() - moving.len())
        .map(|k| (reference.positions[moving.len() + k] - reference.positions[300 * k]).length())
        .fold(f32::INFINITY, f32::min);
    println!(
        "coincident pairs after a frame: at least {:.2} spacings apart",
        apart / spacing
    );
    assert!(
        apart > SAME_ORDER_MAX_ERROR * spacing,
        "a pair {apart} m apart"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let real =
        super::emulation::compile("frame.cpp", &dir.path().join("frame"), Rounding::Separate);
    let frame = emulate_frame(&real, &scene, &state, Order::Forward);
    let (max, _) = max_difference(&frame.positions, &reference.positions);
    println!("the real kernels: max |Δx| {:.2e} spacings", max / spacing);
    assert!(
        frame.non_finite == 0 && max <= SAME_ORDER_MAX_ERROR * spacing,
        "the real kernels: max |Δx| {} spacings",
        max / spacing
    );
    let passed = surviving(
        &COINCIDENT_MUTANTS,
        dir.path(),
        &scene,
        &state,
        &reference.positions,
    );
    assert!(passed.is_empty(), "mutants passed: {passed:#?}");
}
