//! `kernels/particles.cu` without a GPU: compiled as plain C++ (`tests/emulation/particles.cpp`,
//! with `cuda_shim.h` and the barrier-running `blocks.h`) and run on the CPU through the host's
//! launch sequence of each stage, against the CPU stage (`parity.rs`): bit for bit without FMA
//! contraction, within a bound derived below with it (as nvcc contracts), the sort sorted and a
//! permutation, and a mutated kernel caught. What it cannot check: the cudarc plumbing, real
//! parallel execution (races), CUDA's cosf/sinf (≤ 2 ulp from glibc's), the GL interop.
//!
//! Here: the harness (compile, the input's layout, one stage's run); `drawing_emulation.rs`
//! the drawing kernels' runs and their contracted bounds; `stages_emulation.rs` the tests,
//! every stage against the CPU.

use super::kernels::{reduce_fountain_threads, BasinStep, BodyStep, FountainStep, Topology};
use super::parity::{
    BodyArrays, BodyCase, BodyInput, BodyStage, FountainArrays, FountainInput, FountainStage,
};
use crate::cuda::emulation::{self, Mutation, Rounding};
use crate::sims::particles::body::Body;
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::render::Skin;
use glam::{Vec2, Vec3};
use std::path::{Path, PathBuf};

/// Compiles particles.cpp (`contract`: with FMA contraction, as nvcc), with `mutation` (the
/// kernel file, its text, and what replaces it) applied when given.
pub(super) fn compile(
    output: &Path,
    contract: bool,
    mutation: Option<(&str, &str, &str)>,
) -> PathBuf {
    emulation::compile(
        "particles.cpp",
        output,
        Rounding::contracted(contract),
        mutation.map(|(file, from, to)| Mutation { file, from, to }),
    )
}

fn push_array<T: bytemuck::Pod>(input: &mut Vec<u8>, values: &[T]) {
    let bytes: &[u8] = bytemuck::cast_slice(values);
    input.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    input.extend_from_slice(bytes);
}

/// What one run of the emulation returns.
pub(super) struct Output {
    pub(super) position: Vec<Vec3>,
    pub(super) velocity: Vec<Vec3>,
    pub(super) age: Vec<f32>,
    pub(super) hits: Vec<u8>,
    pub(super) drops: Vec<[f32; 3]>,
    pub(super) height: Vec<f32>,
    pub(super) basin_velocity: Vec<f32>,
    pub(super) order: Vec<u32>,
    pub(super) tally: Vec<u32>,
    pub(super) previous: Vec<Vec3>,
    pub(super) force: Vec<Vec3>,
    pub(super) stats: Vec<f64>,
    pub(super) tag: Vec<u32>,
    pub(super) vertices: Vec<f32>,
    pub(super) points: Vec<f32>,
    pub(super) lines: Vec<f32>,
}

/// What the drawing stages (and `body_stats`) read besides the state: the skin's layout, and
/// their constants (the colours' node mass, red energy and decades, the water's spacing, basin,
/// level and gain, or the node mass and gravity).
pub(super) struct Drawing<'a> {
    pub(super) skin: Option<&'a Skin>,
    pub(super) scales: Vec<f32>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    program: &Path,
    stage: u32,
    records: (&FountainStep, &BasinStep, &BodyStep),
    header: [u32; 8],
    fountain: Option<(&Fountain, &FountainInput)>,
    body: Option<(&BodyCase, &Topology)>,
    drawing: Option<&Drawing>,
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
            push_array(&mut input, &t.cell_rest);
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
            for _ in 0..3 {
                push_array(&mut input, &empty_f);
            }
        }
    }
    push_array(&mut input, fountain.map_or(&[][..], |(f, _)| &f.tag[..]));
    match drawing {
        Some(d) => {
            let empty = Skin::default();
            let skin = d.skin.unwrap_or(&empty);
            push_array(&mut input, &skin.node);
            push_array(&mut input, bytemuck::cast_slice::<Vec2, f32>(&skin.uv));
            push_array(&mut input, &skin.indices);
            push_array(&mut input, &skin.vertex_start);
            push_array(&mut input, &skin.vertex_triangles);
            push_array(&mut input, &d.scales);
        }
        None => {
            push_array(&mut input, &empty_u);
            push_array(&mut input, &empty_f);
            for _ in 0..3 {
                push_array(&mut input, &empty_u);
            }
            push_array(&mut input, &empty_f);
        }
    }
    let bytes = crate::cuda::emulation::run(program, &input, &[]);
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
        tag: bytemuck::pod_collect_to_vec(&next()),
        vertices: f32s(next()),
        points: f32s(next()),
        lines: f32s(next()),
    }
}

/// Replaces the (empty) fountain position and velocity arrays at the start of `input`'s arrays
/// with `body`'s.
fn rewrite_body_slots(input: Vec<u8>, body: &Body) -> Vec<u8> {
    let header = 4
        + std::mem::size_of::<FountainStep>()
        + std::mem::size_of::<BasinStep>()
        + std::mem::size_of::<BodyStep>()
        + 8 * 4;
    let mut out = input[..header].to_vec();
    push_array(&mut out, bytemuck::cast_slice::<Vec3, f32>(&body.position));
    push_array(&mut out, bytemuck::cast_slice::<Vec3, f32>(&body.velocity));
    // Skip the two empty arrays (8 bytes of counts) the fountain's slots held.
    out.extend_from_slice(&input[header + 8..]);
    out
}

pub(super) fn emulate_fountain(
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
        reduce_fountain_threads(f.surface.height.len(), f.len()) as u32,
    ];
    let out = run(
        program,
        stage as u32,
        (&i.step, &i.basin.0, &BodyStep::default()),
        header,
        Some((f, i)),
        None,
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
        tag: out.tag,
    }
}

pub(super) fn emulate_body(
    program: &Path,
    case: &BodyCase,
    stage: BodyStage,
    i: &BodyInput,
) -> (BodyArrays, Vec<f64>) {
    let topology = Topology::of(&case.body);
    let out = run(
        program,
        stage as u32,
        (&FountainStep::default(), &BasinStep::default(), &i.step),
        [case.body.len() as u32, 0, 0, 0, 0, i.iterations, 0, 0],
        None,
        Some((case, &topology)),
        None,
    );
    let arrays = BodyArrays {
        position: out.position,
        previous: out.previous,
        velocity: out.velocity,
        force: out.force,
    };
    (arrays, out.stats)
}
