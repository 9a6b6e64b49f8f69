//! The `foam` kernels (`kernels/foam.cuh`) compiled as C++ (`tests/emulation/foam.cpp`) and run
//! on the CPU, against the CPU stage ([`crate::sims::pbf::foam`]) over several frames of a dam
//! break just after its front hit the far wall (diffuse particles of every kind alive, more
//! born every frame, and spray stopped on two obstacles over the tank). Each frame's fluid is the CPU solver's, sorted by the container's grid,
//! with the grid built at the positions themselves (so the kernels' grid search and the CPU's
//! lists find the same neighbours in the same order), and the pool carried from frame to frame
//! by each side on its own.
//!
//! Without contraction every potential, count and diffuse particle is the CPU's bit for bit.
//! With contraction (as nvcc compiles) see [`contracted_bound`]; with the particles of every
//! cell in another order (as the GPU's atomics leave them) the pools still agree one to one.

use super::emulation::Rounding;
use super::foam::{diffuse_from_pool, GpuFoamParams, FOAM_STATE_WORDS};
use super::foam_parity::{
    allowed_flips, check_settings, compare_pools, dam_break_at_impact, obstacle_spray, SortedFluid,
};
use super::params::{GpuObstacle, GpuParams};
use crate::cuda::emulation::{self as shared, Mutation};
use crate::sims::pbf::foam::{self, Diffuse, DiffuseKind, Foam, FoamSettings};
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::Solver;
use glam::Vec3A;
use std::path::Path;
use std::sync::OnceLock;

/// Frames of the CPU stage before the compared ones (the pool they leave is both sides' start).
const WARMUP: usize = 8;
/// Frames compared.
const FRAMES: usize = 5;

type Fluid = SortedFluid;

/// The dam break, the compared frames' fluid and the pool at their start.
struct Case {
    scene: Scene,
    settings: FoamSettings,
    frames: Vec<Fluid>,
    start: Foam,
}

fn case() -> &'static Case {
    static CASE: OnceLock<Case> = OnceLock::new();
    CASE.get_or_init(|| {
        let (scene, mut solver) = dam_break_at_impact().expect("the dam break");
        // A cap the compared frames reach (some newborn are refused) and a lifetime that
        // ends some foam within them.
        let settings = check_settings();
        let mut fluid = || {
            solver.step().expect("step");
            Fluid::of(&solver.snapshot().expect("snapshot"), &scene)
        };
        let mut start = Foam::default();
        for _ in 0..WARMUP {
            fluid().cpu_frame(&scene, &settings, &mut start);
        }
        // And spray about to hit the obstacles.
        start.particles.extend(obstacle_spray(settings.lifetime));
        let frames = (0..FRAMES).map(|_| fluid()).collect();
        Case {
            scene,
            settings,
            frames,
            start,
        }
    })
}

/// What the emulation returns: per frame the raw potentials and counts, the state words and
/// the pool, then the records of the last frame.
struct Emulated {
    raw: Vec<Vec<[f32; 4]>>,
    states: Vec<[u32; FOAM_STATE_WORDS]>,
    pools: Vec<Vec<Diffuse>>,
    pool: Vec<Diffuse>,
    records: Vec<[f32; 4]>,
}

/// The emulation over the case's frames, its pool carried from frame to frame.
fn emulate(program: &Path, case: &Case) -> Emulated {
    emulate_frames(program, case, &case.frames, None)
}

/// The emulation over `frames`, each frame's pool replaced first by `starts[frame]` if given.
fn emulate_frames(
    program: &Path,
    case: &Case,
    frames: &[Fluid],
    starts: Option<&[Vec<Diffuse>]>,
) -> Emulated {
    let (scene, settings) = (&case.scene, &case.settings);
    let n = case.frames[0].positions.len();
    let world = scene.world();
    let constants = GpuParams::new(&scene.params, &world, n as u32, scene.params.dt);
    let f = GpuFoamParams::new(
        settings,
        scene.params.dt,
        scene.params.particle_radius(),
        &scene.container,
        0,
    );
    let float4 = |v: Vec3A, w: f32| [v.x, v.y, v.z, w];
    let mut input = bytemuck::bytes_of(&constants).to_vec();
    input.extend_from_slice(bytemuck::bytes_of(&f));
    for obstacle in &world.obstacles {
        input.extend_from_slice(bytemuck::bytes_of(&GpuObstacle::from(obstacle)));
    }
    let cells = (case.frames[0].cell_start.len() - 1) as u32;
    let alive = case.start.particles.len() as u32;
    input.extend_from_slice(bytemuck::cast_slice(&[FRAMES as u32, cells, alive]));
    let pool = |input: &mut Vec<u8>, particles: &[Diffuse]| {
        for d in particles {
            let records = [
                float4(d.position, d.life),
                float4(d.velocity, d.kind as u32 as f32),
            ];
            input.extend_from_slice(bytemuck::cast_slice(&records));
        }
    };
    pool(&mut input, &case.start.particles);
    for (k, fluid) in frames.iter().enumerate() {
        let step = case.start.steps() + 1 + k as u64;
        input.extend_from_slice(bytemuck::cast_slice(&[step as u32, (step >> 32) as u32]));
        input.extend_from_slice(bytemuck::cast_slice(&fluid.cell_start));
        for values in [&fluid.positions, &fluid.velocities, &fluid.positions] {
            let records: Vec<[f32; 4]> = values.iter().map(|&v| float4(v, 0.0)).collect();
            input.extend_from_slice(bytemuck::cast_slice(&records));
        }
        input.extend_from_slice(bytemuck::cast_slice(&fluid.ids));
        match starts {
            Some(starts) => {
                let start = &starts[k];
                input.extend_from_slice(bytemuck::cast_slice(&[1u32, start.len() as u32]));
                pool(&mut input, start);
            }
            None => input.extend_from_slice(bytemuck::cast_slice(&[0u32])),
        }
    }
    let bytes = crate::cuda::emulation::run(program, &input, &[]);
    let mut at = 0;
    let mut take = |count: usize| {
        let slice = &bytes[at..at + count];
        at += count;
        slice.to_vec()
    };
    let mut emulated = Emulated {
        raw: Vec::new(),
        states: Vec::new(),
        pools: Vec::new(),
        pool: Vec::new(),
        records: Vec::new(),
    };
    for _ in 0..FRAMES {
        emulated
            .raw
            .push(bytemuck::pod_collect_to_vec(&take(16 * n)));
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&take(4 * FOAM_STATE_WORDS));
        let alive = words[0] as usize;
        emulated
            .states
            .push(words.try_into().expect("the state words"));
        let pool: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&take(32 * alive));
        emulated.pools.push(
            pool.chunks_exact(2)
                .map(|pair| diffuse_from_pool(&pair[0], &pair[1]))
                .collect(),
        );
    }
    let alive = emulated.states[FRAMES - 1][0] as usize;
    emulated.pool = emulated.pools[FRAMES - 1].clone();
    emulated.records = bytemuck::pod_collect_to_vec(&take(16 * alive));
    assert_eq!(at, bytes.len(), "unread output");
    emulated
}

/// The CPU stage over the same frames: per frame the raw potentials, born, the counts and the
/// pool at its start, and the pool after the last.
struct Reference {
    raw: Vec<Vec<[f32; 3]>>,
    born: Vec<usize>,
    counts: Vec<[usize; 3]>,
    starts: Vec<Vec<Diffuse>>,
    pools: Vec<Vec<Diffuse>>,
    foam: Foam,
}

fn reference(case: &Case) -> Reference {
    let mut foam = case.start.clone();
    let mut reference = Reference {
        raw: Vec::new(),
        born: Vec::new(),
        counts: Vec::new(),
        starts: Vec::new(),
        pools: Vec::new(),
        foam: Foam::default(),
    };
    for fluid in &case.frames {
        reference.starts.push(foam.particles.clone());
        reference
            .raw
            .push(foam::raw_potentials(&fluid.view(&case.scene)));
        let born = fluid.cpu_frame(&case.scene, &case.settings, &mut foam);
        reference.born.push(born);
        reference.counts.push(foam.counts());
        reference.pools.push(foam.particles.clone());
    }
    reference.foam = foam;
    reference
}

fn run(rounding: Rounding, mutation: Option<Mutation>) -> (Emulated, Reference) {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = shared::compile("foam.cpp", &dir.path().join("foam"), rounding, mutation);
    let case = case();
    (emulate(&program, case), reference(case))
}

/// How many of the CPU's survivors (each frame's pool before its newborn) lie on an obstacle's
/// surface (within 10 µm of it, and not inside: the stage put them there), over the frames.
fn on_obstacles(case: &Case, reference: &Reference) -> usize {
    let world = case.scene.world();
    let (lo, hi) = (world.container.min, world.container.max);
    let shell = |d: &&Diffuse| {
        world.obstacles.iter().any(|o| {
            o.push_out(d.position, 1e-5, lo, hi).is_some()
                && o.push_out(d.position, 0.0, lo, hi).is_none()
        })
    };
    reference
        .pools
        .iter()
        .zip(&reference.born)
        .map(|(pool, &born)| pool[..pool.len() - born].iter().filter(shell).count())
        .sum()
}

/// Whether the pool and records of the emulation are the CPU's bit for bit, or the first
/// difference.
fn same_bits(emulated: &Emulated, reference: &Reference) -> Result<(), String> {
    for (frame, (gpu, cpu)) in emulated.raw.iter().zip(&reference.raw).enumerate() {
        for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
            if (0..3).any(|k| g[k].to_bits() != c[k].to_bits()) {
                return Err(format!(
                    "frame {frame}, particle {i}: potentials {g:?} vs {c:?}"
                ));
            }
        }
    }
    for (frame, state) in emulated.states.iter().enumerate() {
        let counts = reference.counts[frame];
        let expected = [
            counts.iter().sum::<usize>(),
            0,
            reference.born[frame],
            counts[0],
            counts[1],
            counts[2],
        ];
        if state.map(|w| w as usize) != expected {
            return Err(format!("frame {frame}: state {state:?} vs {expected:?}"));
        }
    }
    let cpu = &reference.foam.particles;
    if emulated.pool.len() != cpu.len() {
        return Err(format!("{} alive vs {}", emulated.pool.len(), cpu.len()));
    }
    let bits = |d: &Diffuse| {
        let mut b: Vec<u32> = d.position.to_array().map(f32::to_bits).to_vec();
        b.extend(d.velocity.to_array().map(f32::to_bits));
        b.push(d.life.to_bits());
        (b, d.kind)
    };
    for (k, (g, c)) in emulated.pool.iter().zip(cpu).enumerate() {
        if bits(g) != bits(c) {
            return Err(format!("diffuse particle {k}: {g:?} vs {c:?}"));
        }
    }
    let mut records = Vec::new();
    reference.foam.records(&mut records);
    let record_bits =
        |r: &[[f32; 4]]| -> Vec<u32> { r.iter().flatten().map(|v| v.to_bits()).collect() };
    if record_bits(&records) != record_bits(&emulated.records) {
        return Err("the render records differ".into());
    }
    Ok(())
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_foam_kernels_run_on_the_cpu_match_the_cpu_stage_bit_for_bit() {
    let (emulated, reference) = run(Rounding::Separate, None);
    let asked: f32 = emulated.raw.iter().flatten().map(|r| r[3]).sum();
    eprintln!(
        "start {} alive {:?}, asked {asked}, born {:?}, end {:?}: {:?}",
        case().start.particles.len(),
        case().start.counts(),
        reference.born,
        reference.foam.counts(),
        same_bits(&emulated, &reference)
    );
    // The frames exercise every rule: all three kinds alive, newborn in most frames, the cap
    // reached (fewer kept than the potentials asked for), and deaths (by age or escape).
    let case = case();
    let counts = reference.foam.counts();
    assert!(counts.iter().all(|&c| c > 0), "kinds {counts:?}");
    let frames_born = reference.born.iter().filter(|&&b| b > 0).count();
    assert!(frames_born >= 3, "born {:?}", reference.born);
    let born: usize = reference.born.iter().sum();
    assert!(
        asked as usize > born,
        "the cap never held: {asked} asked, {born} born"
    );
    let alive = reference.foam.particles.len();
    assert!(
        case.start.particles.len() + born > alive,
        "none died: {} + {born} → {alive}",
        case.start.particles.len()
    );
    // Some survivors lie on an obstacle (`stop_at_obstacles` put them there).
    let stopped = on_obstacles(case, &reference);
    eprintln!("{stopped} survivors on an obstacle over the frames");
    assert!(stopped >= 5, "{stopped} diffuse particles on an obstacle");
    if let Err(difference) = same_bits(&emulated, &reference) {
        panic!("the kernels differ from the CPU stage: {difference}");
    }
}

/// With contraction the kernels round a·b + c once where the CPU rounds twice. The bound, for
/// a potential summed over m neighbours: each term (a speed, a dot product, a division and a
/// product, or a dot product and a product) carries at most 16 roundings of ε = 2⁻²⁴ relative to
/// its size, the sum m more; trapped-air terms are at most 2 |vᵢⱼ| ≤ 4 max |v|, crest terms at
/// most 2, so |ΔI_ta| ≤ (16 + m) ε · m · 4 max|v| and |Δκ| ≤ (16 + m) ε · 2m; |ΔI_k| ≤ 4 ε I_k.
/// Discrete decisions near their thresholds (a normal or none at 0.1 h, below or not, a crest
/// or not at 0.6, a neighbour within h or not, the emission count's rounding against its random
/// number) may go the other way; those particles are counted, not bounded, and must be few
/// (under 1 % of the fluid). The pools, each frame from the CPU's start, agree one to one
/// within [`super::foam_parity::PoolBound`], the flips within [`allowed_flips`].
fn contracted_bound(m: usize, max_speed: f32, kinetic: f32) -> [f32; 3] {
    let e = f32::EPSILON / 2.0 * (16 + m) as f32;
    [
        e * m as f32 * 4.0 * max_speed,
        e * 2.0 * m as f32,
        4.0 * f32::EPSILON * kinetic,
    ]
}

/// The emulated pools of `frames`, each frame started from the CPU's pool, against the CPU's:
/// (matched, flips, mismatched, worst) over the frames, or the first frame that failed.
fn pools_one_to_one(
    emulated: &Emulated,
    reference: &Reference,
    case: &Case,
) -> Result<String, String> {
    let (mut matched, mut flips, mut worst) = (0, 0, 0.0f32);
    for frame in 0..FRAMES {
        let bound = case.frames[frame].bound(&case.scene, &reference.starts[frame]);
        let cpu = &reference.pools[frame];
        let c = compare_pools(&emulated.pools[frame], cpu, &bound);
        if c.mismatched > 0 || c.flips > allowed_flips(cpu.len()) {
            return Err(format!(
                "frame {frame}: {c:?} ({} alive, {bound:?})",
                cpu.len()
            ));
        }
        (matched, flips, worst) = (matched + c.matched, flips + c.flips, worst.max(c.worst));
    }
    Ok(format!(
        "{matched} matched, {flips} flips, worst {worst:.3} of the bound"
    ))
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_foam_kernels_with_contraction_stay_within_the_derived_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = shared::compile("foam.cpp", &dir.path().join("foam"), Rounding::Gpu, None);
    let case = case();
    let reference = reference(case);
    let emulated = emulate_frames(&program, case, &case.frames, Some(&reference.starts));
    let mut outside = 0;
    for (frame, fluid) in case.frames.iter().enumerate() {
        let max_speed = fluid
            .velocities
            .iter()
            .map(|v| v.length())
            .fold(0.0f32, f32::max);
        for (i, (g, c)) in emulated.raw[frame]
            .iter()
            .zip(&reference.raw[frame])
            .enumerate()
        {
            let m = (fluid.start[i + 1] - fluid.start[i]) as usize;
            let bound = contracted_bound(m, max_speed, c[2]);
            if (0..3).any(|k| (g[k] - c[k]).abs() > bound[k]) {
                outside += 1;
            }
        }
    }
    let n = case.frames[0].positions.len();
    assert!(
        outside * 100 < n * FRAMES,
        "{outside} of {} potentials outside the bound",
        n * FRAMES
    );
    match pools_one_to_one(&emulated, &reference, case) {
        Ok(detail) => eprintln!("contracted: {outside} potentials outside the bound; {detail}"),
        Err(failure) => panic!("contracted pools differ: {failure}"),
    }
}

/// `fluid` with the particles of every grid cell in another order (reversed, then rotated by
/// the cell's index), each keeping its id: what another run of the GPU's counting sort may
/// leave. Positions, velocities and ids move together; the grid is the same.
fn shuffled_within_cells(fluid: &Fluid) -> Fluid {
    let mut order: Vec<usize> = (0..fluid.positions.len()).collect();
    for (c, w) in fluid.cell_start.windows(2).enumerate() {
        let cell = &mut order[w[0] as usize..w[1] as usize];
        cell.reverse();
        if !cell.is_empty() {
            let len = cell.len();
            cell.rotate_left(c % len);
        }
    }
    let pick = |v: &[Vec3A]| order.iter().map(|&k| v[k]).collect::<Vec<_>>();
    Fluid {
        positions: pick(&fluid.positions),
        velocities: pick(&fluid.velocities),
        ids: order.iter().map(|&k| fluid.ids[k]).collect(),
        cell_start: fluid.cell_start.clone(),
        // Only the kernels read the shuffled fluid; the CPU's lists stay the unshuffled ones.
        start: fluid.start.clone(),
        lists: fluid.lists.clone(),
    }
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn the_foam_kernels_emit_the_same_particles_whatever_the_order_within_cells() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = shared::compile(
        "foam.cpp",
        &dir.path().join("foam"),
        Rounding::Separate,
        None,
    );
    let case = case();
    let reference = reference(case);
    let shuffled: Vec<Fluid> = case.frames.iter().map(shuffled_within_cells).collect();
    let moved = shuffled[0]
        .ids
        .iter()
        .zip(&case.frames[0].ids)
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        moved * 2 > shuffled[0].ids.len(),
        "only {moved} particles moved"
    );
    let emulated = emulate_frames(&program, case, &shuffled, Some(&reference.starts));
    let born: usize = reference.born.iter().sum();
    assert!(born > 50, "born {:?}", reference.born);
    match pools_one_to_one(&emulated, &reference, case) {
        Ok(detail) => eprintln!("shuffled within cells: {detail}"),
        Err(failure) => panic!("the order within cells changed the pool: {failure}"),
    }
}

#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler with <barrier> ($CXX, else c++; build.rs found none)"
)]
fn a_wrong_foam_kernel_fails_the_comparison() {
    for (from, to) in [
        // The crest's neighbours above instead of below.
        ("dot3(xji, n) < 0.0f", "dot3(xji, n) > 0.0f"),
        // Foam that does not age.
        ("life -= f.dt;", ""),
        // Emission counts by sorted index, not id.
        ("counts[id] = count;", "counts[i] = count;"),
        // Walls that keep the velocity into them.
        ("if (v < 0.0f) v = 0.0f;", ""),
        // Obstacles that keep the velocity into them, that do not age what lies on them, or
        // that diffuse particles pass through.
        ("if (into < 0.0f) v = v - normal * into;", ""),
        ("(on_obstacle || on_wall)", "(on_wall)"),
        (
            "bool on_obstacle = foam_stop_at_obstacles(p, f, obstacles, d, dv);",
            "bool on_obstacle = false;",
        ),
    ] {
        let mutation = Mutation {
            file: "foam.cuh",
            from,
            to,
        };
        let (emulated, reference) = run(Rounding::Separate, Some(mutation));
        assert!(
            same_bits(&emulated, &reference).is_err(),
            "the mutant `{from}` → `{to}` passed"
        );
    }
}

#[test]
fn pool_records_decode_as_the_cpu_encodes_them() {
    let d = Diffuse {
        position: Vec3A::new(1.0, 2.0, 3.0),
        velocity: Vec3A::new(-1.0, 0.5, 0.25),
        life: 0.75,
        kind: DiffuseKind::Bubble,
    };
    let decoded = diffuse_from_pool(
        &[1.0, 2.0, 3.0, 0.75],
        &[-1.0, 0.5, 0.25, DiffuseKind::Bubble as u32 as f32],
    );
    assert_eq!(decoded, d);
}
