//! `kernels/particles.cu` without a GPU: compiled as plain C++ (`tests/emulation/particles.cpp`,
//! with `cuda_shim.h` and the barrier-running `blocks.h`) and run on the CPU through the host's
//! launch sequence of each stage, against the CPU stage (`parity.rs`): bit for bit without FMA
//! contraction, within a bound derived below with it (as nvcc contracts), the sort sorted and a
//! permutation, and a mutated kernel caught. What it cannot check: the cudarc plumbing, real
//! parallel execution (races), CUDA's cosf/sinf (≤ 2 ulp from glibc's), the GL interop.

use super::kernels::{BasinStep, BodyStep, FountainStep, Topology};
use super::parity::{
    self, body_cases, body_cpu, body_stages, compare_body, compare_fountain, fountain_case,
    fountain_cpu, BodyArrays, BodyCase, BodyInput, FountainArrays, FountainInput, FountainStage,
    CONTRACTED_BOUND,
};
use crate::cuda::emulation::{self, Mutation, Rounding};
use crate::sims::particles::fountain::Fountain;
use glam::Vec3;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles particles.cpp (`contract`: with FMA contraction, as nvcc), with `mutation` (text, and
/// what replaces it) applied to particles.cu when given.
fn compile(output: &Path, contract: bool, mutation: Option<(&str, &str)>) -> PathBuf {
    emulation::compile(
        "particles.cpp",
        output,
        Rounding::contracted(contract),
        mutation.map(|(from, to)| Mutation {
            file: "particles.cu",
            from,
            to,
        }),
    )
}

fn push_array<T: bytemuck::Pod>(input: &mut Vec<u8>, values: &[T]) {
    let bytes: &[u8] = bytemuck::cast_slice(values);
    input.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    input.extend_from_slice(bytes);
}

/// What one run of the emulation returns.
struct Output {
    position: Vec<Vec3>,
    velocity: Vec<Vec3>,
    age: Vec<f32>,
    hits: Vec<u8>,
    drops: Vec<[f32; 3]>,
    height: Vec<f32>,
    basin_velocity: Vec<f32>,
    order: Vec<u32>,
    tally: Vec<u32>,
    previous: Vec<Vec3>,
    force: Vec<Vec3>,
    stats: Vec<f64>,
}

#[allow(clippy::too_many_arguments)]
fn run(
    program: &Path,
    stage: u32,
    records: (&FountainStep, &BasinStep, &BodyStep),
    header: [u32; 7],
    fountain: Option<(&Fountain, &FountainInput)>,
    body: Option<(&BodyCase, &Topology)>,
) -> Output {
    let mut input = stage.to_le_bytes().to_vec();
    input.extend_from_slice(bytemuck::bytes_of(records.0));
    input.extend_from_slice(bytemuck::bytes_of(records.1));
    input.extend_from_slice(bytemuck::bytes_of(records.2));
    input.extend_from_slice(bytemuck::cast_slice(&header));
    let empty_f: [f32; 0] = [];
    let empty_u: [u32; 0] = [];
    let empty_b: [u8; 0] = [];
    match fountain {
        Some((f, i)) => {
            push_array(&mut input, bytemuck::cast_slice::<Vec3, f32>(&f.position));
            push_array(&mut input, bytemuck::cast_slice::<Vec3, f32>(&f.velocity));
            push_array(&mut input, &f.age);
            push_array(&mut input, &f.hits);
            push_array(&mut input, i.drops.as_flattened());
            push_array(&mut input, &f.surface.height);
            push_array(&mut input, &f.surface.velocity);
            push_array(&mut input, &f.surface.flags);
            push_array(&mut input, &i.basin.2);
            push_array(&mut input, &i.basin.3);
        }
        None => {
            for _ in 0..3 {
                push_array(&mut input, &empty_f);
            }
            push_array(&mut input, &empty_b);
            for _ in 0..3 {
                push_array(&mut input, &empty_f);
            }
            push_array(&mut input, &empty_b);
            push_array(&mut input, &empty_f);
            push_array(&mut input, &empty_f);
        }
    }
    match body {
        Some((c, t)) => {
            let b = &c.body;
            // The body's positions and velocities take the fountain's slots.
            input = rewrite_body_slots(input, b);
            push_array(&mut input, bytemuck::cast_slice::<Vec3, f32>(&b.previous));
            push_array(&mut input, bytemuck::cast_slice::<Vec3, f32>(&b.force));
            let pinned: Vec<u8> = b.pinned.iter().map(|&p| u8::from(p)).collect();
            push_array(&mut input, &pinned);
            push_array(&mut input, &t.node_start);
            push_array(&mut input, &t.link_other);
            push_array(&mut input, &t.link_rest);
            push_array(&mut input, &t.link_stiffness);
            push_array(&mut input, &t.triangles);
            push_array(&mut input, &t.node_triangle_start);
            push_array(&mut input, &t.node_triangles);
            push_array(&mut input, &t.coloured);
            push_array(&mut input, &t.colour_start);
            push_array(&mut input, &t.spring_a);
            push_array(&mut input, &t.spring_b);
            push_array(&mut input, &t.spring_rest);
            push_array(&mut input, &t.spring_stiffness);
        }
        None => {
            for _ in 0..2 {
                push_array(&mut input, &empty_f);
            }
            push_array(&mut input, &empty_b);
            for _ in 0..2 {
                push_array(&mut input, &empty_u);
            }
            for _ in 0..2 {
                push_array(&mut input, &empty_f);
            }
            for _ in 0..7 {
                push_array(&mut input, &empty_u);
            }
            for _ in 0..2 {
                push_array(&mut input, &empty_f);
            }
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (input_path, output_path) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
    std::fs::write(&input_path, input).expect("write input");
    let status = Command::new(program)
        .arg(&input_path)
        .arg(&output_path)
        .status()
        .expect("run the emulation");
    assert!(status.success(), "the emulation failed");
    let bytes = std::fs::read(&output_path).expect("read output");
    let mut at = 0;
    let mut next = || {
        let n = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let slice = bytes[at + 4..at + 4 + n].to_vec();
        at += 4 + n;
        slice
    };
    let vec3s = |b: Vec<u8>| -> Vec<Vec3> { bytemuck::pod_collect_to_vec(&b) };
    let f32s = |b: Vec<u8>| -> Vec<f32> { bytemuck::pod_collect_to_vec(&b) };
    Output {
        position: vec3s(next()),
        velocity: vec3s(next()),
        age: f32s(next()),
        hits: next(),
        drops: bytemuck::pod_collect_to_vec::<u8, f32>(&next())
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect(),
        height: f32s(next()),
        basin_velocity: f32s(next()),
        order: bytemuck::pod_collect_to_vec(&next()),
        tally: bytemuck::pod_collect_to_vec(&next()),
        previous: vec3s(next()),
        force: vec3s(next()),
        stats: bytemuck::pod_collect_to_vec(&next()),
    }
}

/// Replaces the (empty) fountain position and velocity arrays at the start of `input`'s arrays
/// with `body`'s.
fn rewrite_body_slots(input: Vec<u8>, body: &crate::sims::particles::body::Body) -> Vec<u8> {
    let header = 4
        + std::mem::size_of::<FountainStep>()
        + std::mem::size_of::<BasinStep>()
        + std::mem::size_of::<BodyStep>()
        + 7 * 4;
    let mut out = input[..header].to_vec();
    push_array(&mut out, bytemuck::cast_slice::<Vec3, f32>(&body.position));
    push_array(&mut out, bytemuck::cast_slice::<Vec3, f32>(&body.velocity));
    // Skip the two empty arrays (8 bytes of counts) the fountain's slots held.
    out.extend_from_slice(&input[header + 8..]);
    out
}

fn emulate_fountain(
    program: &Path,
    f: &Fountain,
    stage: FountainStage,
    i: &FountainInput,
) -> FountainArrays {
    let emitted = f.emitted;
    let header = [
        f.len() as u32,
        i.emit_count as u32,
        emitted as u32,
        (emitted >> 32) as u32,
        i.basin.1,
        0,
        i.drops.len() as u32,
    ];
    let out = run(
        program,
        stage as u32,
        (&i.step, &i.basin.0, &BodyStep::default()),
        header,
        Some((f, i)),
        None,
    );
    assert_eq!(
        out.tally[0] as usize,
        out.age.len(),
        "the GPU's count of the survivors"
    );
    FountainArrays {
        position: out.position,
        velocity: out.velocity,
        age: out.age,
        hits: out.hits,
        drops: if stage == FountainStage::Collide {
            out.drops
        } else {
            Vec::new()
        },
        height: out.height,
        basin_velocity: out.basin_velocity,
        order: out.order,
    }
}

fn emulate_body(
    program: &Path,
    case: &BodyCase,
    stage: parity::BodyStage,
    i: &BodyInput,
) -> (BodyArrays, Vec<f64>) {
    let topology = Topology::of(&case.body);
    let out = run(
        program,
        stage as u32,
        (&FountainStep::default(), &BasinStep::default(), &i.step),
        [case.body.len() as u32, 0, 0, 0, 0, i.iterations, 0],
        None,
        Some((case, &topology)),
    );
    let arrays = BodyArrays {
        position: out.position,
        previous: out.previous,
        velocity: out.velocity,
        force: out.force,
    };
    (arrays, out.stats)
}

/// Every fountain stage and every body stage through the emulation `program` against the CPU:
/// (case, stage, difference).
/// `exact_order`: the sort's order must be the CPU's (without contraction the keys are).
/// Each result carries the factor its contracted bound gets ([`parity::strain_factor`] for the
/// pulls, ×10 for XPBD's sweeps and the basin's substeps, which compound theirs).
fn all_stages(program: &Path, exact_order: bool) -> Vec<(String, parity::Difference, f32)> {
    let mut results = Vec::new();
    let (mut f, air, dt, eye, forward) = fountain_case(1500.0, 200);
    assert!(f.len() > 500, "{} particles", f.len());
    let mut landings = Vec::new();
    for stage in FountainStage::ALL {
        let (input, cpu, next, drops) =
            fountain_cpu(&f, stage, (&air, dt, eye, forward), &landings);
        if stage == FountainStage::Collide {
            assert!(
                drops.len() > 3 && next.len() < f.len(),
                "{} landings",
                drops.len()
            );
        }
        let other = emulate_fountain(program, &f, stage, &input);
        let mut d = compare_fountain(&cpu, &other, exact_order);
        if stage == FountainStage::Sort
            && !parity::order_is_back_to_front(&other.order, &f.position, eye, forward, 1e-5)
        {
            d.bitwise = false;
            d.worst = f32::INFINITY;
            d.field = "order not back to front".into();
        }
        let compounding = if stage == FountainStage::Basin {
            10.0
        } else {
            1.0
        };
        results.push((format!("fountain {stage:?}"), d, compounding));
        if stage == FountainStage::Collide {
            landings = drops;
        }
        f = next;
    }
    for (name, case) in body_cases(30) {
        for stage in body_stages(case.integrator) {
            let (input, cpu) = body_cpu(&case, stage);
            let (other, stats) = emulate_body(program, &case, stage, &input);
            let mut d = compare_body(&cpu, &other);
            if stage == parity::BodyStage::Collide {
                let kinetic: f64 = cpu
                    .velocity
                    .iter()
                    .map(|v| 0.5 * f64::from(case.body.mass) * f64::from(v.length_squared()))
                    .sum();
                if stats[2] != 0.0 || (stats[3] - kinetic).abs() > 1e-6 * kinetic.max(1e-12) {
                    d.worst = f32::INFINITY;
                    d.field = format!("statistics {:?} (kinetic {kinetic})", &stats[2..]);
                }
            }
            let factor = match stage {
                parity::BodyStage::Springs => parity::strain_factor(&case.body),
                parity::BodyStage::Xpbd => 10.0 * parity::strain_factor(&case.body),
                _ => 1.0,
            };
            results.push((format!("{name} {stage:?}"), d, factor));
        }
    }
    results
}

/// Without FMA contraction the kernels do the CPU's operations in the CPU's order: every stage
/// of the fountain (emission, flight, the cube, the compaction's order, the landings, the
/// splashes and the basin's substeps, the sort's order) and of the cloth under each integrator
/// and the jelly agrees bit for bit.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn every_particles_stage_matches_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let results = all_stages(&program, true);
    let failed: Vec<_> = results.iter().filter(|(_, d, _)| !d.bitwise).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(results.len(), 5 + 4 * 4);
}

/// With FMA contraction (as nvcc compiles) every stage stays within [`CONTRACTED_BOUND`] of
/// the CPU (times the stage's factor, see `all_stages`), and the sort is still a back-to-front
/// permutation.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn contracted_particles_stages_stay_within_the_derived_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), true, None);
    let mut over = Vec::new();
    for (name, d, factor) in all_stages(&program, false) {
        let bound = CONTRACTED_BOUND * factor;
        println!(
            "{name}: worst {:.2e} in {} (bound {bound:.1e})",
            d.worst, d.field
        );
        if d.worst > bound {
            over.push(format!("{name}: {d:?} over {bound:e}"));
        }
    }
    assert!(over.is_empty(), "{over:#?}");
}

/// A kernel with one operation changed is caught: the first hit's cut applied as a bounce,
/// a spring's rest length shortened, the sort front to back.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_particles_kernel_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mutations = [
        (
            "v.y = -v.y * p.cut;",
            "v.y = -v.y * p.bounce;",
            "fountain Collide",
        ),
        (
            "(len - link_rest[l])",
            "(len - 0.9f * link_rest[l])",
            "Springs",
        ),
        (
            "keys[k] = order_key(-dot(",
            "keys[k] = order_key(dot(",
            "fountain Sort",
        ),
    ];
    for (k, (from, to, stage)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some((from, to)),
        );
        let results = all_stages(&program, true);
        let caught = results
            .iter()
            .any(|(name, d, _)| name.contains(stage) && !d.bitwise);
        assert!(caught, "`{to}` was not caught: {results:#?}");
    }
}
