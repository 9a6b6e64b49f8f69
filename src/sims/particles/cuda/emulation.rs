//! `kernels/particles.cu` without a GPU: compiled as plain C++ (`tests/emulation/particles.cpp`,
//! with `cuda_shim.h` and the barrier-running `blocks.h`) and run on the CPU through the host's
//! launch sequence of each stage, against the CPU stage (`parity.rs`): bit for bit without FMA
//! contraction, within a bound derived below with it (as nvcc contracts), the sort sorted and a
//! permutation, and a mutated kernel caught. What it cannot check: the cudarc plumbing, real
//! parallel execution (races), CUDA's cosf/sinf (≤ 2 ulp from glibc's), the GL interop.

use super::kernels::{reduce_fountain_threads, BasinStep, BodyStep, FountainStep, Topology};
use super::parity::{
    self, body_cases, body_cpu, body_stages, compare_body, compare_fountain, fountain_case,
    fountain_cpu, BodyArrays, BodyCase, BodyInput, FountainArrays, FountainInput, FountainStage,
    CONTRACTED_BOUND,
};
use crate::cuda::emulation::{self, Mutation, Rounding};
use crate::sims::particles::body::Body;
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::render::{nodes, surface, water, RenderSettings, Skin};
use crate::sims::particles::scene::Which;
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
    position: Vec<Vec3>,
    velocity: Vec<Vec3>,
    age: Vec<f32>,
    hits: Vec<u8>,
    drops: Vec<[f32; 3]>,
    pub(super) height: Vec<f32>,
    basin_velocity: Vec<f32>,
    order: Vec<u32>,
    tally: Vec<u32>,
    previous: Vec<Vec3>,
    force: Vec<Vec3>,
    pub(super) stats: Vec<f64>,
    tag: Vec<u32>,
    vertices: Vec<f32>,
    points: Vec<f32>,
    lines: Vec<f32>,
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
    stage: parity::BodyStage,
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

/// The contracted bound's factor for `surface`: positions and texture coordinates are copies;
/// a normal's components are crosses a·b − c·d whose contraction errs by a few roundings of
/// |a||b|, which normalising scales by |a||b|/|a × b| = 1/sin θ of the triangle (√2 for the
/// lattice's right triangles; 4 allows a deformed one down to 14°).
const SURFACE_FACTOR: f32 = 4.0;
/// The contracted bound's factor for `body_points` on `body` drawn with `settings`, derived:
/// a spring's stretch l − l₀ cancels (contraction moves l by a few roundings, ε·l per
/// rounding, [`ROUNDINGS_OF_L`]; that is ε/strain of the stretch, twice that of its energy
/// ½k(l − l₀)²), the log scale turns a relative error of the energy into 1/(decades·ln 10) of
/// the ramp, and the ramp turns that into colour with a slope of at most 2·0.75 (0.75 the
/// largest step of a component between two of its colours): 3·ROUNDINGS_OF_L·ε/(decades·ln 10
/// ·strain). Only strains above the ramp's floor count (below it the level clamps to
/// blue-grey): ½k(strain·l₀)² = red·10^−decades, strain = √(2·red·10^−decades/k)/l₀, the
/// least over the springs. Against the contracted bound (128 roundings): 26 for the 12² cloths
/// (least strain drawn 3.1·10⁻⁴; measured 7.5–8.2·10⁻⁵, 11 × the bound), 25 for the jelly
/// (`cargo test --release --lib contracted_particles -- --nocapture`). A node's ½mv² has no
/// cancellation.
fn colour_factor(body: &Body, settings: &RenderSettings) -> f32 {
    let (red, decades) = (nodes::red_energy(body, settings), settings.decades());
    let floor = 2.0 * red * 10f32.powf(-decades);
    let least_strain = body
        .springs
        .iter()
        .map(|s| (floor / s.stiffness).sqrt() / s.rest)
        .fold(f32::INFINITY, f32::min);
    let colour_error = 3.0 * ROUNDINGS_OF_L / (decades * std::f32::consts::LN_10 * least_strain);
    colour_error / 128.0
}

/// Roundings a contracted l = |a − b| may differ by (the dot product's skipped roundings and
/// the square root's; a few, with margin).
const ROUNDINGS_OF_L: f32 = 4.0;

/// The drawing stages' numbers in particles.cpp.
const SURFACE: u32 = 20;
const BODY_POINTS: u32 = 21;
const WATER: u32 = 22;

/// The `water` kernel through the emulation `program` on `f`'s basin against the CPU's
/// builder (`render::water::vertices`). `input`: any stage's input of `f` (the records).
fn water_stage(program: &Path, f: &Fountain, input: &FountainInput) -> parity::Difference {
    let drawing = Drawing {
        skin: None,
        scales: vec![
            f.surface.h,
            f.params.basin,
            f.params.level,
            water::RIPPLE_GAIN,
        ],
    };
    let out = run(
        program,
        WATER,
        (&input.step, &input.basin.0, &BodyStep::default()),
        [f.len() as u32, 0, 0, 0, 0, 0, 0, 0],
        Some((f, input)),
        None,
        Some(&drawing),
    );
    let mut cpu = Vec::new();
    water::vertices(f, &mut cpu);
    let mut d = parity::Difference::start();
    d.add("water vertices", bytemuck::cast_slice(&cpu), &out.vertices);
    d
}

/// The drawing kernels (`surface`, `body_points`) through the emulation `program` on `case`'s
/// body (its skin as scene `which` lays it out) against the CPU's builders
/// (`render::surface::vertices`, `render::nodes::body_points`): (stage, difference), the
/// difference of the normals' and colours' fields.
fn drawing_stages(
    program: &Path,
    name: &str,
    case: &BodyCase,
    which: Which,
) -> Vec<(String, parity::Difference)> {
    let topology = Topology::of(&case.body);
    let settings = RenderSettings::default();
    let skin = Skin::of(&case.body, which);
    let drawing = Drawing {
        skin: Some(&skin),
        scales: vec![
            case.body.mass,
            nodes::red_energy(&case.body, &settings),
            settings.decades(),
        ],
    };
    let step = BodyStep::new(
        &case.body,
        &case.surroundings,
        case.integrator,
        case.dt,
        case.damping,
    );
    let run_stage = |stage| {
        run(
            program,
            stage,
            (&FountainStep::default(), &BasinStep::default(), &step),
            [case.body.len() as u32, 0, 0, 0, 0, 0, 0, 0],
            None,
            Some((case, &topology)),
            Some(&drawing),
        )
    };
    let (mut normals, mut vertices) = (Vec::new(), Vec::new());
    surface::vertices(&skin, &case.body, &mut normals, &mut vertices);
    let out = run_stage(SURFACE);
    let mut surface = parity::Difference::start();
    surface.add(
        "skin vertices",
        bytemuck::cast_slice(&vertices),
        &out.vertices,
    );
    let (mut points, mut lines) = (Vec::new(), Vec::new());
    nodes::body_points(&case.body, &settings, &mut points, &mut lines);
    let out = run_stage(BODY_POINTS);
    let mut colours = parity::Difference::start();
    colours.add("node points", bytemuck::cast_slice(&points), &out.points);
    colours.add("spring lines", bytemuck::cast_slice(&lines), &out.lines);
    vec![
        (format!("{name} surface"), surface),
        (format!("{name} body_points"), colours),
    ]
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
        if stage == FountainStage::Basin {
            assert!(f.surface.height.iter().any(|&u| u != 0.0), "a still basin");
            results.push((
                "fountain water".into(),
                water_stage(program, &f, &input),
                1.0,
            ));
        }
    }
    for (name, case) in body_cases(30) {
        for stage in body_stages(case.integrator) {
            let (input, cpu) = body_cpu(&case, stage);
            let (other, stats) = emulate_body(program, &case, stage, &input);
            let mut d = compare_body(&cpu, &other);
            // `reduce_nodes` ran (the slot starts at −1) and counted no non-finite node.
            if stage == parity::BodyStage::Collide && stats[2] != 0.0 {
                d.worst = f32::INFINITY;
                d.field = format!("non-finite nodes {}", stats[2]);
            }
            let factor = match stage {
                parity::BodyStage::Springs => parity::strain_factor(&case.body),
                parity::BodyStage::Xpbd => 10.0 * parity::strain_factor(&case.body),
                _ => 1.0,
            };
            results.push((format!("{name} {stage:?}"), d, factor));
        }
        let which = if name.starts_with("jelly") {
            Which::Jelly
        } else {
            Which::Cloth
        };
        for (stage, d) in drawing_stages(program, &name, &case, which) {
            let factor = if stage.ends_with("surface") {
                SURFACE_FACTOR
            } else {
                colour_factor(&case.body, &RenderSettings::default())
            };
            results.push((stage, d, factor));
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
    assert_eq!(results.len(), 5 + 1 + 4 * 4 + 4 * 2);
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
/// a spring's rest length shortened, the sort front to back, a survivor's tag taken from the
/// wrong particle, a skin normal gathered from a neighbouring triangle, a water normal's
/// one-sided difference, a node coloured by the next node's kinetic energy, a spring by the
/// next spring's stiffness.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_particles_kernel_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mutations = [
        (
            "particles_fountain.cuh",
            "v.y = fall * p.cut;",
            "v.y = fall * p.bounce;",
            "fountain Collide",
        ),
        (
            "particles_bodies.cuh",
            "(len - link_rest[l])",
            "(len - 0.9f * link_rest[l])",
            "Springs",
        ),
        (
            "particles_fountain.cuh",
            "keys[k] = order_key(-dot(",
            "keys[k] = order_key(dot(",
            "fountain Sort",
        ),
        (
            "particles_fountain.cuh",
            "out_tag[to] = tag[k];",
            "out_tag[to] = tag[to];",
            "fountain Collide",
        ),
        (
            "particles_drawing.cuh",
            "unsigned t = vertex_triangles[l];",
            "unsigned t = vertex_triangles[l] ^ 1u;",
            "surface",
        ),
        (
            "particles_drawing.cuh",
            "float dz = height[up * n + i] - height[down * n + i];",
            "float dz = height[up * n + i] - height[j * n + i];",
            "fountain water",
        ),
        (
            "particles_drawing.cuh",
            "vec3 v = load3(velocity, t);",
            "vec3 v = load3(velocity, (t + 1) % nodes);",
            "body_points",
        ),
        (
            "particles_drawing.cuh",
            "0.5f * spring_stiffness[s] * stretch",
            "0.5f * spring_stiffness[(s + 1) % springs] * stretch",
            "body_points",
        ),
    ];
    for (k, (file, from, to, stage)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some((file, from, to)),
        );
        let results = all_stages(&program, true);
        let caught = results
            .iter()
            .any(|(name, d, _)| name.contains(stage) && !d.bitwise);
        assert!(caught, "`{to}` was not caught: {results:#?}");
    }
}
