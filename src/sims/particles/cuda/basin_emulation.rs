//! The end of a frame's reductions without a GPU (`reduce_basin` for the fountain, then
//! `reduce_finish`, as `end_frame` launches them after the basin's stage; `reduce_nodes` for a
//! body after its collision stage), compiled as C++ (`tests/emulation/particles.cpp`), against
//! the CPU's figures of the same state (`frame.rs`: the fountain line's largest |height|, the
//! non-finite nodes the step's check counts): on the frame's basin, on basins with a deep trough
//! in the last block, a NaN node, an infinite node and a NaN spread by the substeps, and on the
//! bodies of `figure_cases` with a NaN node and a node at y = ∞; mutated kernels caught.
//!
//! The bounds: the largest |height| is a maximum of the same f32 values widened exactly, which
//! no order changes, so it must be the CPU's to the bit; a count is a sum of 0s and 1s, whose
//! order may move it by `sum_allowance(nodes, count)` (2·γₙ₋₁·Σ|term|, as `stats.rs` bounds
//! `body_stats`' sums), under 10⁻⁹ here: below 1, so the integer counts must be equal.

use super::emulation::{compile, emulate_body, run};
use super::kernels::BodyStep;
use super::parity::{body_cpu, fountain_case, fountain_cpu, BodyStage, FountainStage};
use super::stats::{figure_cases, sum_allowance};
use crate::sims::particles::dynamics::Air;
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::frame::{basin_highest, non_finite_heights, non_finite_nodes};
use crate::sims::pool::drops::Drop;
use glam::Vec3;
use std::path::Path;

/// One comparison: the GPU's (non-finite count, largest |height|) against the CPU's of the
/// same state, over `terms` nodes (a body has no figure: `None` on both sides).
#[derive(Debug)]
struct Check {
    name: String,
    gpu: (f64, Option<f64>),
    cpu: (usize, Option<f64>),
    terms: usize,
}

impl Check {
    fn passed(&self) -> bool {
        let allowance = sum_allowance(self.terms, self.cpu.0 as f64);
        let count = (self.gpu.0 - self.cpu.0 as f64).abs() <= allowance;
        let figure = self.gpu.1.map(f64::to_bits) == self.cpu.1.map(f64::to_bits);
        count && figure
    }

    fn line(&self) -> String {
        format!(
            "{}: non-finite {} (CPU {}, allowance {:.1e}), largest |height| {:?} (CPU {:?}): {}",
            self.name,
            self.gpu.0,
            self.cpu.0,
            sum_allowance(self.terms, self.cpu.0 as f64),
            self.gpu.1,
            self.cpu.1,
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

/// The basin's stage of `f` through `program` (splashing `landings`; `substeps`: the step's
/// when `None`, else that many, 0 leaving the heights as they are), as `end_frame` finishes it:
/// the heights after it, the CPU's state after it, and the reduction's (count, figure).
fn emulate_basin(
    program: &Path,
    f: &Fountain,
    (air, dt, eye, forward): &(Air, f32, Vec3, Vec3),
    landings: &[Drop],
    substeps: Option<u32>,
) -> (Vec<f32>, Vec<f32>, (f64, f64)) {
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
    let header = [
        f.len() as u32,
        0,
        0,
        0,
        input.basin.1,
        0,
        input.drops.len() as u32,
    ];
    let out = run(
        program,
        FountainStage::Basin as u32,
        (&input.step, &input.basin.0, &BodyStep::default()),
        header,
        Some((f, &input)),
        None,
        None,
    );
    (out.height, cpu, (out.stats[0], out.stats[1]))
}

fn basin_check(name: &str, gpu: (f64, f64), cpu_count: usize, height: &[f32]) -> Check {
    Check {
        name: name.into(),
        gpu: (gpu.0, Some(gpu.1)),
        cpu: (cpu_count, Some(f64::from(basin_highest(height)))),
        terms: height.len(),
    }
}

/// Every check through `program`.
fn all_checks(program: &Path) -> Vec<Check> {
    let (f, step, landings) = before_basin();
    let mut checks = Vec::new();
    // The frame's: the basin's stage with its splashes and substeps, then the reduction, on
    // the emulation's own heights (all_stages checks they are the CPU's).
    let (height, _, gpu) = emulate_basin(program, &f, &step, &landings, None);
    checks.push(basin_check(
        "frame",
        gpu,
        non_finite_heights(&height),
        &height,
    ));
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
    for (name, node, value) in planted {
        let mut p = g.clone();
        p.surface.height[node] = value;
        let (height, cpu, gpu) = emulate_basin(program, &p, &step, &[], Some(0));
        assert_eq!(
            bytemuck::cast_slice::<f32, u32>(&height),
            bytemuck::cast_slice::<f32, u32>(&cpu),
            "{name}: the heights left alone"
        );
        checks.push(basin_check(name, gpu, non_finite_heights(&cpu), &cpu));
    }
    // A NaN the step's substeps spread: counted as the CPU's state has it.
    let mut p = f.clone();
    p.surface.height[n / 2 + 52] = f32::NAN;
    let (height, cpu, gpu) = emulate_basin(program, &p, &step, &landings, None);
    checks.push(basin_check(
        "NaN spread by the substeps",
        gpu,
        non_finite_heights(&cpu),
        &height,
    ));
    // The bodies: a NaN node and one at y = ∞, through the collision stage and `reduce_nodes`.
    for (name, mut case) in figure_cases() {
        let nodes = case.body.len();
        case.body.position[nodes / 2 + 7] = Vec3::NAN;
        case.body.position[3 * nodes / 4].y = f32::INFINITY;
        let (input, cpu) = body_cpu(&case, BodyStage::Collide);
        let (_, stats) = emulate_body(program, &case, BodyStage::Collide, &input);
        checks.push(Check {
            name: format!("{name} with a NaN and an infinite node"),
            gpu: (stats[2], None),
            cpu: (non_finite_nodes(&cpu.position), None),
            terms: nodes,
        });
    }
    checks
}

/// With and without FMA contraction, every reduction is the CPU's: the frame's basin (finite,
/// moving), the deep trough (3× its largest |height|, in the last block), one NaN node and one
/// −∞ node counted once each (the figure passing over the NaN, the −∞ its ∞), the NaN spread by
/// the substeps counted node for node, and each body's two planted nodes counted.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn end_of_frame_reductions_are_the_cpus() {
    let dir = tempfile::tempdir().expect("temp dir");
    for contract in [false, true] {
        let program = compile(&dir.path().join(format!("basin{contract}")), contract, None);
        let checks = all_checks(&program);
        for c in &checks {
            println!("contract {contract}: {}", c.line());
        }
        let cpu = |k: usize| checks[k].cpu;
        assert_eq!(cpu(0).0, 0);
        assert!(cpu(0).1.unwrap() > 1e-5, "a still basin: {:?}", cpu(0));
        let crest = checks[0].cpu.1.unwrap() as f32;
        assert_eq!(cpu(1).1, Some(f64::from(3.0 * crest)));
        assert_eq!(cpu(2), (1, checks[0].cpu.1));
        assert_eq!(cpu(3), (1, Some(f64::INFINITY)));
        assert!(cpu(4).0 > 1, "the NaN did not spread: {:?}", cpu(4));
        assert_eq!(checks.len(), 5 + 5);
        assert!(checks[5..].iter().all(|c| c.cpu.0 == 2), "{checks:#?}");
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
        assert!(failed.is_empty(), "contract {contract}: {failed:#?}");
    }
}

/// A reduction with one operation changed is caught: a height's size without its absolute
/// value, an infinite height's size 0 (the kernel before), an infinite height not counted, `reduce_finish` skipping the last block's partial, a
/// node's y left out of its finiteness.
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
            "isfinite(x.x) && isfinite(x.y) && isfinite(x.z)",
            "isfinite(x.x) && isfinite(x.z)",
        ),
    ];
    for (k, (from, to)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some(("particles_stats.cuh", from, to)),
        );
        let checks = all_checks(&program);
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
        for c in &failed {
            println!("`{to}`: {}", c.line());
        }
        assert!(!failed.is_empty(), "`{to}` was not caught: {checks:#?}");
    }
}
