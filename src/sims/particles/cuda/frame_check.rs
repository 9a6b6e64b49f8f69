//! "particles frame end", a doctor check of the CUDA solver's host side, which the emulation
//! cannot run: `end_frame`'s `reduce_fountain` (its launch as the step sizes it,
//! `kernels::reduce_fountain_threads`) finds what the CPU's [`NonFinite`] finds on the same
//! uploaded state: a NaN position, an infinite velocity (each in the last particle alive, with
//! over twice as many particles as basin nodes, so a launch over the nodes alone misses it), a
//! NaN basin node, a clean state, and a clean state with stale NaN slots past the alive (not
//! counted); and the basin's largest |height| to the bit. Then a whole step on CUDA of a
//! fountain of more particles than nodes with a NaN planted in its last particle stops with
//! the CPU's error. Then a body's end of frame (`reduce_nodes`): a 48² cloth moved off its
//! start with a NaN node, with its first block NaN, all NaN, and clean: the non-finite nodes
//! the CPU counts and the box around the finite ones (`Totals::bounds`, where the wind arrow
//! stands) the CPU's `Body::bounds`, `None` with no finite node. The other host-side check,
//! "particles live edits", is in `live_edit_check.rs`.

use super::kernels::{basin_step, BLOCK};
use super::parity::fountain_case;
use super::stats::figure_cases;
use super::{CudaParticles, FrameEnd};
use crate::scene::Source;
use crate::sims::particles::body::Body;
use crate::sims::particles::frame::{basin_highest, non_finite_nodes};
use crate::sims::particles::scene::ParticlesScene;
use crate::sims::particles::{NonFinite, ParticlesSim, State};
use crate::sims::pool::drops::Stencils;
use crate::sims::{Backend, Sim};
use glam::Vec3;

/// Stale slots past the alive in the last case (more than a block of them).
const STALE: usize = 300;

/// "particles frame end" (see the module's note).
pub fn gpu_check(device: usize) -> Result<(bool, String), String> {
    let text = |e: crate::cuda::CudaError| e.to_string();
    let (mut f, _, dt, _, _) = fountain_case(1500.0, 200);
    let nodes = f.surface.height.len();
    let k = f.len();
    if k == 0 {
        return Err("the fountain's case has no particles".into());
    }
    while f.len() <= 2 * nodes {
        for j in 0..k {
            f.push(f.position[j], f.velocity[j]);
        }
    }
    let last = f.len() - 1;
    let mut stale = f.clone();
    for _ in 0..STALE {
        stale.push(Vec3::NAN, Vec3::splat(f32::INFINITY));
    }
    let basin = basin_step(&f.params, f.surface.h, dt, &mut Stencils::default()).0;
    let mut solver = CudaParticles::fountain(device, &stale).map_err(text)?;
    solver.set_stage_timing(false);
    type Plant = fn(&mut crate::sims::particles::fountain::Fountain, usize, usize);
    let cases: [(&str, Plant, NonFinite); 5] = [
        (
            "NaN position, the last particle",
            |p, last, _| p.position[last] = Vec3::NAN,
            NonFinite {
                nodes: 0,
                particles: 1,
            },
        ),
        (
            "v_y = +∞, the last particle",
            |p, last, _| p.velocity[last].y = f32::INFINITY,
            NonFinite {
                nodes: 0,
                particles: 1,
            },
        ),
        (
            "NaN basin node (the last)",
            |p, _, nodes| p.surface.height[nodes - 1] = f32::NAN,
            NonFinite {
                nodes: 1,
                particles: 0,
            },
        ),
        ("clean", |_, _, _| {}, NonFinite::default()),
        (
            "clean, stale NaN slots past the alive",
            |_, _, _| {},
            NonFinite::default(),
        ),
    ];
    let mut passed = true;
    let mut lines = vec![format!("{} particles alive, {nodes} basin nodes", f.len())];
    for (index, (name, plant, expected)) in cases.into_iter().enumerate() {
        let mut p = f.clone();
        plant(&mut p, last, nodes);
        // The last case: the stale slots past the alive hold the earlier upload's NaNs.
        let slots = if index == 4 {
            solver.upload_fountain(&stale).map_err(text)?;
            p.len() + STALE
        } else {
            p.len()
        };
        solver.upload_fountain(&p).map_err(text)?;
        solver.begin_frame().map_err(text)?;
        solver
            .end_frame(FrameEnd::Fountain {
                basin: &basin,
                particles: slots,
            })
            .map_err(text)?;
        let highest = f64::from(basin_highest(&p.surface.height));
        let t = solver.totals;
        let cpu = NonFinite::of(&State::Fountain(p));
        let ok = t.non_finite == cpu
            && cpu == expected
            && t.count == f.len()
            && t.figure.to_bits() == highest.to_bits();
        passed &= ok;
        lines.push(format!(
            "{name}: GPU {}/{} non-finite nodes/particles (CPU {}/{}), {} alive, largest \
             |height| {:.3e} (CPU {highest:.3e}): {}",
            t.non_finite.nodes,
            t.non_finite.particles,
            cpu.nodes,
            cpu.particles,
            t.count,
            t.figure,
            if ok { "ok" } else { "FAILS" }
        ));
    }
    let (ok, line) = planted_step(Some(device))?;
    passed &= ok;
    lines.push(line);
    let (ok, body_lines) = body_frame_end(device)?;
    passed &= ok;
    lines.extend(body_lines);
    Ok((passed, lines.join("; ")))
}

/// A body planted for the frame's end: its name, its nodes and the non-finite nodes among
/// them.
type BodyPlant = (&'static str, Body, u64);

/// The body cases of "particles frame end": the 48² cloth of `figure_cases` (9 blocks of
/// nodes) moved 1.5 m up and 0.7 m along x off where the solver started it, a NaN in its last
/// node; that and its first block NaN and a node at y = ∞; every node NaN (no box); back where it
/// started, clean. Each box differs from the one before, so a box left from an earlier frame
/// (or the starting one) fails.
fn body_plants() -> (Body, Vec<BodyPlant>) {
    let (_, case) = figure_cases().pop().expect("the 48² cloth");
    let start = case.body.clone();
    let nodes = start.len();
    let mut moved = start.clone();
    for p in &mut moved.position {
        *p += Vec3::new(0.7, 1.5, 0.0);
    }
    moved.position[nodes - 1] = Vec3::NAN;
    let mut block = moved.clone();
    block.position[..BLOCK as usize].fill(Vec3::NAN);
    block.position[nodes / 2].y = f32::INFINITY;
    let mut all = start.clone();
    all.position.fill(Vec3::NAN);
    let plants = vec![
        ("moved, a NaN in the last node", moved, 1),
        (
            "its first block NaN, a node at y = ∞ too",
            block,
            BLOCK as u64 + 2,
        ),
        ("every node NaN", all, nodes as u64),
        ("back at the start, clean", start.clone(), 0),
    ];
    (start, plants)
}

/// The body's end of frame on CUDA (`reduce_nodes` and `reduce_finish` as `end_frame` launches
/// them, the box from their stats): on each of [`body_plants`] uploaded, the non-finite nodes
/// the CPU counts and `Totals::bounds` the CPU's `Body::bounds` (`None` where no node is
/// finite), where the wind arrow stands.
fn body_frame_end(device: usize) -> Result<(bool, Vec<String>), String> {
    let text = |e: crate::cuda::CudaError| e.to_string();
    let (start, plants) = body_plants();
    let mut solver = CudaParticles::body(device, &start).map_err(text)?;
    solver.set_stage_timing(false);
    let mut passed = true;
    let mut lines = Vec::new();
    for (name, body, expected) in plants {
        solver.upload_body(&body).map_err(text)?;
        solver.begin_frame().map_err(text)?;
        solver.end_frame(FrameEnd::Body).map_err(text)?;
        let t = solver.totals;
        let cpu = non_finite_nodes(&body.position) as u64;
        let ok = t.non_finite.nodes == cpu
            && cpu == expected
            && t.non_finite.particles == 0
            && t.count == body.len()
            && t.bounds == body.bounds();
        passed &= ok;
        lines.push(format!(
            "48² cloth {name}: GPU {} non-finite nodes (CPU {cpu}), box {:?} (CPU {:?}): {}",
            t.non_finite.nodes,
            t.bounds,
            body.bounds(),
            if ok { "ok" } else { "FAILS" }
        ));
    }
    Ok((passed, lines))
}

/// The whole step on CUDA (`step_device`, which passes `end_frame` the particles before
/// `collide`): a fountain of more particles than its 8² basin's nodes with a NaN planted in its
/// last particle stops with the CPU's error for the same state. (`device` `None`: both on the
/// CPU, the check's own test.)
fn planted_step(device: Option<usize>) -> Result<(bool, String), String> {
    let text = "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 6000.0\n\
                surface_nodes = 8\n";
    let source = Source::parse(text, "doctor", "doctor.toml").map_err(|e| e.to_string())?;
    let scene = ParticlesScene::from_source(&source).map_err(|e| e.to_string())?;
    let mut gpu = on(device, scene.clone())?;
    let mut cpu = ParticlesSim::with_scene(scene);
    let mut errors = Vec::new();
    for sim in [&mut gpu, &mut cpu] {
        for _ in 0..3 {
            sim.step().map_err(|e| format!("before the NaN: {e:#}"))?;
        }
        sim.edited().map_err(|e| format!("{e:#}"))?;
        let State::Fountain(f) = &mut sim.state else {
            return Err("not a fountain".into());
        };
        let last = f.len() - 1;
        f.position[last] = Vec3::NAN;
        errors.push(match sim.step() {
            Ok(()) => String::from("no error"),
            Err(e) => format!("{e:#}"),
        });
    }
    let alive = gpu.alive();
    let ok = gpu.cuda.is_some() == device.is_some()
        && errors[0] == errors[1]
        && errors[0].contains("(1 particle not finite)")
        && alive > 64;
    Ok((
        ok,
        format!(
            "a step of {alive} particles on 8² nodes, a NaN in the last: \"{}\" (CPU \"{}\"): {}",
            errors[0],
            errors[1],
            if ok { "ok" } else { "FAILS" }
        ),
    ))
}

/// A sim of `scene` on CUDA device `device` (`None`: on the CPU), without stage timing (as
/// `simulate` runs it: a body's frames as CUDA graphs).
pub(super) fn on(device: Option<usize>, scene: ParticlesScene) -> Result<ParticlesSim, String> {
    let mut sim = ParticlesSim::with_scene(scene);
    sim.set_stage_timing(false);
    if let Some(device) = device {
        sim.choose_backend(Backend::Cuda, device)
            .map_err(|e| format!("{e:#}"))?;
    }
    Ok(sim)
}

/// The planted step's expectation holds where both sides are the CPU (what the GPU must
/// match): it stops with the one particle's error. A check that failed a right solver would
/// read as a GPU bug.
#[test]
fn the_planted_step_stops_on_the_cpu() {
    let (ok, line) = planted_step(None).unwrap();
    assert!(ok, "{line}");
    assert!(line.contains("particles on 8² nodes"), "{line}");
    println!("{line}");
}

/// The body cases' expectations hold on the CPU: the planted counts, a box for each but the
/// all-NaN body's, and each box unlike the one before (the solver starts with the start's, so
/// the first differs from it too), so a stale box cannot pass.
#[test]
fn the_body_plants_have_distinct_boxes() {
    let (start, plants) = body_plants();
    let mut before = start.bounds();
    assert!(before.is_some());
    for (k, (name, body, expected)) in plants.iter().enumerate() {
        assert_eq!(non_finite_nodes(&body.position) as u64, *expected, "{name}");
        let now = body.bounds();
        assert_eq!(now.is_none(), k == 2, "{name}: {now:?}");
        assert_ne!(now, before, "{name}");
        before = now;
    }
    let [lo, hi] = plants[0].1.bounds().unwrap();
    let [lo0, hi0] = start.bounds().unwrap();
    assert!((lo.y - lo0.y - 1.5).abs() < 1e-4 && (hi.x - hi0.x - 0.7).abs() < 1e-4);
}
