//! The end of a frame's reductions without a GPU (`reduce_fountain` for the fountain, then
//! `reduce_finish`, as `end_frame` launches them after the basin's stage; `reduce_nodes` for a
//! body after its collision stage), compiled as C++ (`tests/emulation/particles.cpp`), against
//! the CPU's figures of the same state (`frame.rs`: the fountain line's largest |height|, the
//! non-finite nodes and particles the step's check counts): on the frame's basin, on basins with
//! a deep trough in the last block, a NaN node, an infinite node and a NaN spread by the
//! substeps; on particles with a NaN or infinite position or velocity (first, middle, last),
//! dead slots past the alive holding garbage, more particles than basin nodes and far fewer;
//! and on the bodies of `figure_cases` with a NaN node and a node at y = ∞ (their count and the box
//! around the finite nodes, `body::bounds`, equal to the bit); mutated kernels
//! caught. The frame end's launch size is the host's (`kernels::reduce_fountain_threads`, which
//! `end_frame` calls, passed to the emulation rather than worked out there again), so a slip in
//! it is caught too (its mutants: over the nodes alone, over the particles alone).
//!
//! The bounds: the largest |height| is a maximum of the same f32 values widened exactly, which
//! no order changes, so it must be the CPU's to the bit; a count is a sum of 0s and 1s, whose
//! order may move it by `sum_allowance(terms, count)` (2·γₙ₋₁·Σ|term|, as `stats.rs` bounds
//! `body_stats`' sums), under 10⁻⁹ here: below 1, so the integer counts must be equal.

use super::emulation::{compile, emulate_body, run};
use super::kernels::{nodes_box, reduce_fountain_threads, BodyStep, BLOCK};
use super::parity::{body_cpu, fountain_case, fountain_cpu, BodyCase, BodyStage, FountainStage};
use super::stats::{figure_cases, sum_allowance};
use crate::sims::particles::body::bounds;
use crate::sims::particles::dynamics::Air;
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::frame::{
    basin_highest, non_finite_heights, non_finite_nodes, non_finite_particles,
};
use crate::sims::pool::drops::Drop;
use glam::Vec3;
use std::path::Path;

/// A count of non-finite elements: the GPU's against the CPU's, a sum over `terms` 0s and 1s.
#[derive(Debug)]
struct Count {
    gpu: f64,
    cpu: usize,
    terms: usize,
}

impl Count {
    fn allowance(&self) -> f64 {
        sum_allowance(self.terms, self.cpu as f64)
    }

    fn passed(&self) -> bool {
        (self.gpu - self.cpu as f64).abs() <= self.allowance()
    }

    fn line(&self) -> String {
        format!(
            "{} (CPU {}, allowance {:.1e})",
            self.gpu,
            self.cpu,
            self.allowance()
        )
    }
}

/// A body's box around its finite nodes (lowest, highest corner), if any.
type Box3 = Option<[Vec3; 2]>;

/// One comparison of the same state: the non-finite basin or body nodes, the fountain's
/// non-finite particles alive and the basin's largest |height| (GPU's, CPU's; a body has
/// neither: `None`), a body's box (GPU's, CPU's; the fountain has none: `None`).
#[derive(Debug)]
struct Check {
    name: String,
    nodes: Count,
    particles: Option<Count>,
    figure: Option<(f64, f64)>,
    bounds: Option<(Box3, Box3)>,
}

impl Check {
    fn passed(&self) -> bool {
        let figure = self.figure.is_none_or(|(g, c)| g.to_bits() == c.to_bits());
        let bounds = self.bounds.is_none_or(|(g, c)| g == c);
        self.nodes.passed() && self.particles.as_ref().is_none_or(Count::passed) && figure && bounds
    }

    fn line(&self) -> String {
        format!(
            "{}: non-finite nodes {}, particles {}, largest |height| {}, box {}: {}",
            self.name,
            self.nodes.line(),
            self.particles.as_ref().map_or("-".into(), Count::line),
            self.figure
                .map_or("-".into(), |(g, c)| format!("{g:?} (CPU {c:?})")),
            self.bounds
                .map_or("-".into(), |(g, c)| format!("{g:?} (CPU {c:?})")),
            if self.passed() { "ok" } else { "FAILS" }
        )
    }
}

/// The fountain's case (`parity::fountain_case`) up to its basin's stage: the state, its step's
/// air, dt, eye and forward, and the landings the basin splashes.
type Before = (Fountain, (Air, f32, Vec3, Vec3), Vec<Drop>);

fn before_basin() -> Before {
    let (mut f, air, dt, eye, forward) = fountain_case(1500.0, 200);
    let mut landings = Vec::new();
    for stage in [
        FountainStage::Emit,
        FountainStage::Advance,
        FountainStage::Collide,
    ] {
        let (_, _, next, drops) = fountain_cpu(&f, stage, (&air, dt, eye, forward), &landings);
        if stage == FountainStage::Collide {
            landings = drops;
        }
        f = next;
    }
    (f, (air, dt, eye, forward), landings)
}

/// How the host sizes the frame end's launch from the basin's nodes and the particle slots
/// before `collide` (`kernels::reduce_fountain_threads`, or a mutant of it).
type Threads = fn(usize, usize) -> usize;

/// The basin's stage of `f` through `program` (splashing `landings`; `substeps`: the step's
/// when `None`, else that many, 0 leaving the heights as they are), as `end_frame` finishes it
/// over `threads`' launch, with `dead` (position, velocity) slots past `f`'s particles, as the
/// GPU's buffers hold stale particles past the alive (the slots `collide` left): the heights
/// after it, the CPU's state after it, and the reduction's (non-finite nodes, largest |height|,
/// non-finite particles).
#[allow(clippy::too_many_arguments)]
fn emulate_basin(
    program: &Path,
    threads: Threads,
    f: &Fountain,
    (air, dt, eye, forward): &(Air, f32, Vec3, Vec3),
    landings: &[Drop],
    substeps: Option<u32>,
    dead: &[(Vec3, Vec3)],
) -> (Vec<f32>, Vec<f32>, [f64; 3]) {
    let (mut input, _, next, _) = fountain_cpu(
        f,
        FountainStage::Basin,
        (air, *dt, *eye, *forward),
        landings,
    );
    let mut cpu = next.surface.height;
    if let Some(n) = substeps {
        input.basin.1 = n;
        if n == 0 && landings.is_empty() {
            cpu = f.surface.height.clone();
        }
    }
    let mut slots = f.clone();
    for &(x, v) in dead {
        slots.push(x, v);
    }
    let header = [
        f.len() as u32,
        0,
        0,
        0,
        input.basin.1,
        0,
        input.drops.len() as u32,
        threads(f.surface.height.len(), slots.len()) as u32,
    ];
    let out = run(
        program,
        FountainStage::Basin as u32,
        (&input.step, &input.basin.0, &BodyStep::default()),
        header,
        Some((&slots, &input)),
        None,
        None,
    );
    (out.height, cpu, [out.stats[0], out.stats[1], out.stats[2]])
}

/// The fountain's check: the GPU's `gpu` against the CPU's counts of `height` and of `f`'s
/// particles (`dead` more slots summed on the GPU).
fn fountain_check(name: &str, gpu: [f64; 3], height: &[f32], f: &Fountain, dead: usize) -> Check {
    Check {
        name: name.into(),
        nodes: Count {
            gpu: gpu[0],
            cpu: non_finite_heights(height),
            terms: height.len(),
        },
        particles: Some(Count {
            gpu: gpu[2],
            cpu: non_finite_particles(&f.position, &f.velocity),
            terms: f.len() + dead,
        }),
        figure: Some((gpu[1], f64::from(basin_highest(height)))),
        bounds: None,
    }
}

/// Every check through `program`, the frame's end launched over `threads`: the basin's (0–4),
/// the particles' (5–10), few particles and a NaN last node (11), the bodies'.
fn all_checks(program: &Path, threads: Threads) -> Vec<Check> {
    let (f, step, landings) = before_basin();
    let mut checks = Vec::new();
    // The frame's: the basin's stage with its splashes and substeps, then the reduction, on
    // the emulation's own heights (all_stages checks they are the CPU's).
    let (height, _, gpu) = emulate_basin(program, threads, &f, &step, &landings, None, &[]);
    checks.push(fountain_check("frame", gpu, &height, &f, 0));
    let mut g = f.clone();
    g.surface.height = height;
    let n = g.surface.height.len();
    let highest = basin_highest(&g.surface.height);
    // The reduction alone (no substeps, no splashes) on planted basins.
    let planted: [(&str, usize, f32); 3] = [
        ("trough in the last node", n - 1, -3.0 * highest),
        ("NaN node", n / 2 + 52, f32::NAN),
        ("infinite node", n / 4 - 24, f32::NEG_INFINITY),
    ];
    let alone = |p: &Fountain, name: &str, dead: &[(Vec3, Vec3)]| {
        let (height, cpu, gpu) = emulate_basin(program, threads, p, &step, &[], Some(0), dead);
        assert_eq!(
            bytemuck::cast_slice::<f32, u32>(&height),
            bytemuck::cast_slice::<f32, u32>(&cpu),
            "{name}: the heights left alone"
        );
        fountain_check(name, gpu, &cpu, p, dead.len())
    };
    for (name, node, value) in planted {
        let mut p = g.clone();
        p.surface.height[node] = value;
        checks.push(alone(&p, name, &[]));
    }
    // A NaN the step's substeps spread: counted as the CPU's state has it.
    let mut p = f.clone();
    p.surface.height[n / 2 + 52] = f32::NAN;
    let (height, _, gpu) = emulate_basin(program, threads, &p, &step, &landings, None, &[]);
    checks.push(fountain_check(
        "NaN spread by the substeps",
        gpu,
        &height,
        &p,
        0,
    ));
    // The particles alive: one planted in each case (the last, in the grid's last block; the
    // first), each component and sign.
    let k = g.len();
    type Plant = fn(&mut Fountain, usize);
    let particles: [(&str, usize, Plant); 4] = [
        ("NaN position, the last particle", k - 1, |p, k| {
            p.position[k] = Vec3::NAN
        }),
        ("y = +∞", k / 3, |p, k| p.position[k].y = f32::INFINITY),
        ("v_x = −∞", k / 2 + 1, |p, k| {
            p.velocity[k].x = f32::NEG_INFINITY
        }),
        ("NaN v_z, the first particle", 0, |p, k| {
            p.velocity[k].z = f32::NAN
        }),
    ];
    for (name, at, plant) in particles {
        let mut p = g.clone();
        plant(&mut p, at);
        checks.push(alone(&p, name, &[]));
    }
    // Dead slots past the alive (more than a block of them) holding non-finite garbage: not
    // counted.
    let garbage: Vec<(Vec3, Vec3)> = (0..300)
        .map(|j| match j % 3 {
            0 => (Vec3::NAN, Vec3::ZERO),
            1 => (Vec3::ZERO, Vec3::splat(f32::INFINITY)),
            _ => (Vec3::splat(f32::NEG_INFINITY), Vec3::NAN),
        })
        .collect();
    checks.push(alone(&g, "dead slots with garbage", &garbage));
    // Over twice as many particles as the basin's nodes (the grid sized by them), a NaN in
    // the last.
    let mut p = g.clone();
    while p.len() <= 2 * n {
        for j in 0..k {
            p.push(g.position[j], g.velocity[j]);
        }
    }
    let last = p.len() - 1;
    p.position[last].x = f32::NAN;
    checks.push(alone(
        &p,
        "more particles than nodes, a NaN in the last",
        &[],
    ));
    // Far fewer particles than nodes (a launch over the particles alone would miss the
    // nodes past the first block), a NaN in the last node.
    let mut p = g.clone();
    let few = 10.min(k);
    p.position.truncate(few);
    p.velocity.truncate(few);
    p.age.truncate(few);
    p.hits.truncate(few);
    p.tag.truncate(few);
    p.surface.height[n - 1] = f32::NAN;
    checks.push(alone(&p, "few particles, a NaN in the last node", &[]));
    // The bodies: a NaN node and one at y = ∞, through the collision stage and `reduce_nodes`;
    // then the 48² cloth with its whole first block NaN (a block with no finite node, its
    // maxima left at −10³⁰⁸), and the first small cloth with every node NaN (no box at all).
    let cases = figure_cases();
    let mut planted: Vec<(String, BodyCase)> = cases
        .iter()
        .map(|(name, case)| {
            let mut case = case.clone();
            let nodes = case.body.len();
            case.body.position[nodes / 2 + 7] = Vec3::NAN;
            case.body.position[3 * nodes / 4].y = f32::INFINITY;
            (format!("{name} with a NaN and an infinite node"), case)
        })
        .collect();
    let (name, mut large) = cases.last().cloned().expect("the 48² cloth");
    large.body.position[..BLOCK as usize].fill(Vec3::NAN);
    planted.push((format!("{name}, its first block NaN"), large));
    let (name, mut small) = cases[0].clone();
    small.body.position.fill(Vec3::NAN);
    planted.push((format!("{name}, every node NaN"), small));
    for (name, case) in planted {
        let nodes = case.body.len();
        let (input, cpu) = body_cpu(&case, BodyStage::Collide);
        let (_, stats) = emulate_body(program, &case, BodyStage::Collide, &input);
        checks.push(Check {
            name,
            nodes: Count {
                gpu: stats[2],
                cpu: non_finite_nodes(&cpu.position),
                terms: nodes,
            },
            particles: None,
            figure: None,
            bounds: Some((nodes_box(&stats[3..9]), bounds(&cpu.position))),
        });
    }
    checks
}

/// With and without FMA contraction, every reduction is the CPU's: the frame's basin (finite,
/// moving), the deep trough (3× its largest |height|, in the last block), one NaN node and one
/// −∞ node counted once each (the figure passing over the NaN, the −∞ its ∞), the NaN spread by
/// the substeps counted node for node; each planted particle counted once, the dead slots'
/// garbage not at all, the last of over twice as many particles as nodes; the last node's NaN
/// under ten particles; and each body's two planted nodes counted.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn end_of_frame_reductions_are_the_cpus() {
    let dir = tempfile::tempdir().expect("temp dir");
    for contract in [false, true] {
        let program = compile(&dir.path().join(format!("basin{contract}")), contract, None);
        let checks = all_checks(&program, reduce_fountain_threads);
        for c in &checks {
            println!("contract {contract}: {}", c.line());
        }
        let nodes = |k: usize| checks[k].nodes.cpu;
        let particles = |k: usize| checks[k].particles.as_ref().map(|p| p.cpu);
        let figure = |k: usize| checks[k].figure.map(|f| f.1);
        assert_eq!((nodes(0), particles(0)), (0, Some(0)));
        assert!(figure(0).unwrap() > 1e-5, "a still basin: {:?}", checks[0]);
        assert!(checks[0].particles.as_ref().unwrap().terms > 500);
        let crest = figure(0).unwrap() as f32;
        assert_eq!(figure(1), Some(f64::from(3.0 * crest)));
        assert_eq!((nodes(2), figure(2)), (1, figure(0)));
        assert_eq!((nodes(3), figure(3)), (1, Some(f64::INFINITY)));
        assert!(nodes(4) > 1, "the NaN did not spread: {:?}", checks[4]);
        assert!((1..5).all(|k| particles(k) == Some(0)), "{checks:#?}");
        for (k, c) in checks.iter().enumerate().take(11).skip(5) {
            // One planted particle each, but the dead slots' garbage (9).
            let expected = if k == 9 { 0 } else { 1 };
            assert_eq!((nodes(k), particles(k)), (0, Some(expected)), "{c:?}");
            assert_eq!(figure(k), figure(0), "{c:?}");
        }
        assert_eq!((nodes(11), particles(11)), (1, Some(0)), "{:?}", checks[11]);
        assert_eq!(checks.len(), 12 + 6 + 2);
        assert!(
            checks[12..18].iter().all(|c| c.nodes.cpu == 2),
            "{checks:#?}"
        );
        assert_eq!(checks[18].nodes.cpu, 256, "{:?}", checks[18]);
        assert!(checks[18].bounds.unwrap().1.is_some(), "{:?}", checks[18]);
        assert_eq!(checks[19].nodes.cpu, 144, "{:?}", checks[19]);
        assert_eq!(checks[19].bounds, Some((None, None)), "{:?}", checks[19]);
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
        assert!(failed.is_empty(), "contract {contract}: {failed:#?}");
    }
}

/// A reduction with one operation changed is caught: a height's size without its absolute
/// value, an infinite height's size 0 (the kernel before), an infinite height not counted,
/// `reduce_finish` skipping the last block's partial, a vector's y left out of its finiteness
/// (a body's node, a particle), a particle's velocity left out, every slot launched counted,
/// the landings' count taken for the alive, the particles past the basin's nodes left out, a
/// body's box with its lowest corner not negated, the maxima started from 0 (as before the box).
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_reduction_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mutations = [
        (
            "highest = isnan(u) ? 0.0 : fabs((double)u);",
            "highest = isnan(u) ? 0.0 : (double)u;",
        ),
        // What the kernel did before: an infinite node's size 0, the figure finite (the
        // CPU's is ∞).
        (
            "highest = isnan(u) ? 0.0 : fabs((double)u);",
            "highest = isfinite(u) ? fabs((double)u) : 0.0;",
        ),
        (
            "bad = isfinite(u) ? 0.0 : 1.0;",
            "bad = isnan(u) ? 1.0 : 0.0;",
        ),
        (
            "k < blocks; k += PARTICLES_BLOCK",
            "k + 1 < blocks; k += PARTICLES_BLOCK",
        ),
        (
            "isfinite(a.x) && isfinite(a.y) && isfinite(a.z)",
            "isfinite(a.x) && isfinite(a.z)",
        ),
        (
            "finite3(load3(position, m)) && finite3(load3(velocity, m))",
            "finite3(load3(position, m))",
        ),
        (
            "if (m < stats[STAT_ALIVE]) {",
            "if (m < gridDim.x * blockDim.x) {",
        ),
        (
            "if (m < stats[STAT_ALIVE]) {",
            "if (m < stats[STAT_LANDED]) {",
        ),
        (
            "if (m < stats[STAT_ALIVE]) {",
            "if (m < stats[STAT_ALIVE] && m < (unsigned)(s.n * s.n)) {",
        ),
        // The box: its lowest corner not negated; the maxima from 0 (as `reduce_finish` was).
        ("box[1] = -(double)x.y", "box[1] = (double)x.y"),
        (
            "double value = largest ? NO_LARGEST : 0.0;",
            "double value = 0.0;",
        ),
    ];
    for (k, (from, to)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some(("particles_stats.cuh", from, to)),
        );
        let checks = all_checks(&program, reduce_fountain_threads);
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
        for c in &failed {
            println!("`{to}`: {}", c.line());
        }
        assert!(!failed.is_empty(), "`{to}` was not caught: {checks:#?}");
    }
}

/// A slip in the host's launch size is caught: `end_frame`'s threads come from
/// `kernels::reduce_fountain_threads`, which the emulation is given rather than working out its
/// own; over the basin's nodes alone (the particles past them left out) or over the particles
/// alone (the nodes past them), the reduction misses what the CPU counts.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_launch_size_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("host"), false, None);
    let mutants: [(&str, Threads); 2] = [
        ("over the nodes only", |nodes, _| nodes),
        ("over the particles only", |_, particles| particles),
    ];
    for (name, threads) in mutants {
        let checks = all_checks(&program, threads);
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
        for c in &failed {
            println!("{name}: {}", c.line());
        }
        assert!(!failed.is_empty(), "{name} was not caught: {checks:#?}");
    }
}
