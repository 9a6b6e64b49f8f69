//! Two doctor checks of the CUDA solver's host side, which the emulation cannot run:
//!
//! - "particles frame end": `end_frame`'s `reduce_fountain` (its launch as the step sizes it,
//!   `kernels::reduce_fountain_threads`) finds what the CPU's [`NonFinite`] finds on the same
//!   uploaded state: a NaN position, an infinite velocity (each in the last particle alive,
//!   with over twice as many particles as basin nodes, so a launch over the nodes alone misses
//!   it), a NaN basin node, a clean state, and a clean state with stale NaN slots past the
//!   alive (not counted); and the basin's largest |height| to the bit. Then a whole step on
//!   CUDA of a fountain of more particles than nodes with a NaN planted in its last particle
//!   stops with the CPU's error. Then a body's end of frame (`reduce_nodes`): a 48² cloth moved
//!   off its start with a NaN node, with its first block NaN, all NaN, and clean: the
//!   non-finite nodes the CPU counts and the box around the finite ones (`Totals::bounds`,
//!   where the wind arrow stands) the CPU's `Body::bounds`, `None` with no finite node.
//! - "particles live edits": a fountain on CUDA edited live as the panel does (nodes per side,
//!   max particles raised past the solver's capacity) and a cloth (stiffness, shear springs
//!   off and on again, pins, nodes per side) step on, on the GPU, to the CPU's sizes and
//!   counts of the same edits, the cloth's springs on the GPU the CPU's and its nodes within
//!   [`NODES_APART`] of the CPU's (a spring kind switched live keeps the motion). Then the
//!   same with a node held by the grabber ([`held_edits`]): it stays at the drag's target
//!   through bending and shear springs switched off and on, and moves once let go; then the
//!   pointer moved over the cloth with no button held downloads nothing.

use super::kernels::{basin_step, BodyStep, BLOCK};
use super::parity::fountain_case;
use super::stats::figure_cases;
use super::{CudaParticles, FrameEnd};
use crate::gfx::camera::Camera;
use crate::scene::Source;
use crate::sims::particles::body::Body;
use crate::sims::particles::frame::{basin_highest, non_finite_nodes};
use crate::sims::particles::grab::to_pixel;
use crate::sims::particles::scene::{ParticlesScene, Pins};
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
fn body_plants() -> (Body, BodyStep, Vec<BodyPlant>) {
    let (_, case) = figure_cases().pop().expect("the 48² cloth");
    let start = case.body.clone();
    let step = BodyStep::new(
        &start,
        &case.surroundings,
        case.integrator,
        case.dt,
        case.damping,
    );
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
    (start, step, plants)
}

/// The body's end of frame on CUDA (`reduce_nodes` and `reduce_finish` as `end_frame` launches
/// them, the box from their stats): on each of [`body_plants`] uploaded, the non-finite nodes
/// the CPU counts and `Totals::bounds` the CPU's `Body::bounds` (`None` where no node is
/// finite), where the wind arrow stands.
fn body_frame_end(device: usize) -> Result<(bool, Vec<String>), String> {
    let text = |e: crate::cuda::CudaError| e.to_string();
    let (start, step, plants) = body_plants();
    let mut solver = CudaParticles::body(device, &start).map_err(text)?;
    solver.set_stage_timing(false);
    let mut passed = true;
    let mut lines = Vec::new();
    for (name, body, expected) in plants {
        solver.upload_body(&body).map_err(text)?;
        solver.begin_frame().map_err(text)?;
        solver.end_frame(FrameEnd::Body(&step)).map_err(text)?;
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

/// A live edit of `scene` (as the panel makes it) and how many steps follow it.
type Edit = (&'static str, fn(&mut ParticlesScene), usize);

/// How far a body's node on the GPU may be from the CPU's after the live edits, m. The check
/// compares the GPU's edit path (the solver made again from the host's state, or stiffness
/// and pins uploaded) with the CPU's, so it catches the GPU's side going wrong, not an edit
/// both sides do wrongly. Measured after the 16 frames: 0 on the emulated driver's memcheck
/// flavour (`tests/emulated_driver.rs` `doctor_passes_on_the_memcheck_driver`), 2.9e-5 m on
/// its plain flavour (contracted roundings). A GPU side off after switching shear springs off
/// (the CPU's 2 frames after it, measured there): its body started again 5.0e-2 m, its
/// motion lost (velocities zero) 1.4e-2 m, not stepped 3.3e-2 m. 5 mm sits between: 170
/// times the emulation's drift (a real GPU's rounding over 16 frames of a swinging cloth is
/// unmeasured; 1 mm left it only 35 times) and a third of the smallest failure.
const NODES_APART: f32 = 5e-3;

/// A sim of `scene` on CUDA device `device` (`None`: on the CPU).
fn on(device: Option<usize>, scene: ParticlesScene) -> Result<ParticlesSim, String> {
    let mut sim = ParticlesSim::with_scene(scene);
    if let Some(device) = device {
        sim.choose_backend(Backend::Cuda, device)
            .map_err(|e| format!("{e:#}"))?;
    }
    Ok(sim)
}

/// "particles live edits" (see the module's note).
pub fn live_edit_check(device: usize) -> Result<(bool, String), String> {
    live_edits(Some(device))
}

/// The live edits on `device` (`None`: both on the CPU, the check's own test) against the CPU.
fn live_edits(device: Option<usize>) -> Result<(bool, String), String> {
    let fountain = "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 6000.0\n\
                    lifetime = 4.0\nmax_particles = 400\nsurface_nodes = 64\n";
    let cloth = "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\n";
    let fountain_edits: [Edit; 3] = [
        (
            "nodes per side 64 → 96",
            |s| s.fountain.surface_nodes = 96,
            2,
        ),
        (
            "max particles 400 → 1000",
            |s| s.fountain.max_particles = 1000,
            4,
        ),
        (
            "nodes per side 96 → 40, max particles 1000 → 1500",
            |s| {
                s.fountain.surface_nodes = 40;
                s.fountain.max_particles = 1500;
            },
            4,
        ),
    ];
    let cloth_edits: [Edit; 5] = [
        ("cloth stiffness × 2", |s| s.body.stiffness *= 2.0, 2),
        ("cloth shear springs off", |s| s.body.shear = 0.0, 2),
        ("cloth shear springs on", |s| s.body.shear = 0.5, 2),
        ("cloth pins: none", |s| s.body.pins = Pins::None, 2),
        ("cloth n 16 → 20", |s| s.body.n = 20, 2),
    ];
    let mut passed = true;
    let mut lines = Vec::new();
    for (text, edits) in [(fountain, &fountain_edits[..]), (cloth, &cloth_edits[..])] {
        let source = Source::parse(text, "doctor", "doctor.toml").map_err(|e| e.to_string())?;
        let scene = ParticlesScene::from_source(&source).map_err(|e| e.to_string())?;
        let mut gpu = on(device, scene.clone())?;
        let mut cpu = ParticlesSim::with_scene(scene);
        for sim in [&mut gpu, &mut cpu] {
            for _ in 0..6 {
                sim.step().map_err(|e| format!("before the edits: {e:#}"))?;
            }
        }
        for &(name, edit, steps) in edits {
            let before = gpu.alive();
            let mut stepped = Ok(());
            for sim in [&mut gpu, &mut cpu] {
                edit(&mut sim.scene);
                for _ in 0..steps {
                    if let Err(e) = sim.step() {
                        stepped = Err(format!("{e:#}"));
                        break;
                    }
                }
            }
            let (ok, detail) = match stepped.and_then(|()| gpu.pull().map_err(|e| e.to_string())) {
                Ok(()) => compare(&gpu, &cpu, before, device.is_some()),
                Err(error) => (false, format!("the step failed: {error}")),
            };
            passed &= ok;
            lines.push(format!(
                "{name}: {detail}: {}",
                if ok { "ok" } else { "FAILS" }
            ));
        }
    }
    let (ok, held) = held_edits(device)?;
    passed &= ok;
    lines.extend(held);
    Ok((passed, lines.join("; ")))
}

/// Spring kinds switched while the grabber holds a node, as the viewer does it: a 16² cloth
/// swinging 6 frames, a free node picked and dragged 50 px up through [`Sim::pointer`] (the
/// same pixels on both sides), then bending springs off and on, shear springs off and on, 2
/// frames after each, and the node let go. The held cloth is chaotic (a 1e-5 m nudge of the
/// CPU's nodes grows to 4 cm over these 8 frames, measured), so before each edit the CPU
/// takes the GPU's nodes: each comparison is of one edit and its 2 frames. After each, the
/// held node is exactly where the drag put it on each side (pinned while held), the GPU's
/// springs the CPU's and its nodes within [`NODES_APART`]; once let go, the node moves on
/// both sides (a GPU that kept it pinned stays at the target, 4 cm from the CPU's).
fn held_edits(device: Option<usize>) -> Result<(bool, Vec<String>), String> {
    let text = "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\nbend = 0.05\n";
    let source = Source::parse(text, "doctor", "doctor.toml").map_err(|e| e.to_string())?;
    let scene = ParticlesScene::from_source(&source).map_err(|e| e.to_string())?;
    let mut gpu = on(device, scene.clone())?;
    let mut cpu = ParticlesSim::with_scene(scene);
    let camera = Camera::framing(&cpu.bounds());
    let size = [800, 450];
    let step = |sim: &mut ParticlesSim, frames: usize| -> Result<(), String> {
        for _ in 0..frames {
            sim.step().map_err(|e| format!("{e:#}"))?;
        }
        sim.pull().map_err(|e| format!("{e:#}"))
    };
    let bodies = |gpu: &ParticlesSim, cpu: &ParticlesSim| match (&gpu.state, &cpu.state) {
        (State::Body(g), State::Body(c)) => Ok((g.clone(), c.clone())),
        _ => Err("the cloth builds no body".to_string()),
    };
    step(&mut cpu, 6)?;
    step(&mut gpu, 6)?;
    // A free node in the cloth's lower middle (row 10 of 16 from the pinned top, column 8).
    let (_, body) = bodies(&gpu, &cpu)?;
    let Some((press, _)) = to_pixel(&camera, body.position[16 * 10 + 8], size) else {
        return Err("the node is out of the camera's view".into());
    };
    let to = [press[0], press[1] - 50.0];
    let mut targets = Vec::new();
    for sim in [&mut gpu, &mut cpu] {
        sim.set_camera(camera);
        let dragged = sim.pointer(press, size, true) && sim.pointer(to, size, true);
        let State::Body(body) = &sim.state else {
            unreachable!("a cloth")
        };
        match sim.grabber.held.filter(|_| dragged) {
            Some(held) => targets.push((held.node, body.position[held.node])),
            None => return Err("the drag picked no node".into()),
        }
    }
    if targets[0].0 != targets[1].0 {
        return Err(format!(
            "the drag picked node {} on the GPU, {} on the CPU",
            targets[0].0, targets[1].0
        ));
    }
    let held = targets[0].0;
    let edits: [Edit; 5] = [
        ("held: bending springs off", |s| s.body.bend = 0.0, 2),
        ("held: bending springs on", |s| s.body.bend = 0.05, 2),
        ("held: shear springs off", |s| s.body.shear = 0.0, 2),
        ("held: shear springs on", |s| s.body.shear = 0.5, 2),
        ("held: let go", |_| {}, 2),
    ];
    let mut passed = true;
    let mut lines = Vec::new();
    for (name, edit, frames) in edits {
        let letting_go = name.ends_with("let go");
        gpu.pull().map_err(|e| format!("{e:#}"))?;
        let (g, _) = bodies(&gpu, &cpu)?;
        cpu.state = State::Body(g);
        let mut stepped = Ok(());
        for sim in [&mut gpu, &mut cpu] {
            edit(&mut sim.scene);
            if letting_go {
                sim.pointer(to, size, false);
            }
            stepped = stepped.and_then(|()| step(sim, frames));
        }
        let (ok, detail) = match stepped {
            Ok(()) => {
                let (ok, detail) = compare(&gpu, &cpu, 0, device.is_some());
                let (g, c) = bodies(&gpu, &cpu)?;
                let off = [&g, &c].map(|b| b.position[held].distance(targets[0].1));
                // `g.pinned` is the host's mirror (uploaded, not downloaded): the GPU's pin
                // shows in its node staying at the target (`off[0]`), not in it.
                let kept = if letting_go {
                    !g.pinned[held] && !c.pinned[held] && off.iter().all(|&d| d > 0.0)
                } else {
                    g.pinned[held] && c.pinned[held] && off == [0.0; 2]
                };
                (
                    ok && kept,
                    format!(
                        "{detail}, node {held} {:.1e} m from the drag's target (CPU {:.1e})",
                        off[0], off[1]
                    ),
                )
            }
            Err(error) => (false, format!("the step failed: {error}")),
        };
        passed &= ok;
        lines.push(format!(
            "{name}: {detail}: {}",
            if ok { "ok" } else { "FAILS" }
        ));
    }
    // The pointer over the cloth with no button held, after a frame on the GPU: no download
    // (it pulled the body on every hover event, once a frame while the mouse moved).
    gpu.step().map_err(|e| format!("{e:#}"))?;
    let newer = |sim: &ParticlesSim| sim.cuda.as_ref().map(|d| d.device_newer);
    let before = newer(&gpu);
    for dx in [0.0, 3.0, 6.0] {
        gpu.pointer([press[0] + dx, press[1]], size, false);
    }
    let ok = newer(&gpu) == before && before == device.map(|_| true);
    passed &= ok;
    lines.push(format!(
        "hover: the GPU's frame {}: {}",
        if newer(&gpu) == Some(false) {
            "downloaded"
        } else {
            "not downloaded"
        },
        if ok { "ok" } else { "FAILS" }
    ));
    Ok((passed, lines))
}

/// The GPU's sim (pulled) against the CPU's after the same edits: still on CUDA, the basin's
/// nodes per side and heights and the particles alive (past `before` when max particles was
/// raised) or the body's nodes the CPU's.
fn compare(gpu: &ParticlesSim, cpu: &ParticlesSim, before: usize, cuda: bool) -> (bool, String) {
    let on_cuda = gpu.cuda.is_some() == cuda;
    match (&gpu.state, &cpu.state) {
        (State::Fountain(g), State::Fountain(c)) => {
            let n = gpu.scene.fountain.surface_nodes;
            let raised = gpu.scene.fountain.max_particles > before;
            let ok = on_cuda
                && g.surface.n == n
                && c.surface.n == n
                && g.surface.height.len() == c.surface.height.len()
                && g.len() == c.len()
                && (!raised || g.len() > before);
            (
                ok,
                format!(
                    "{} on the GPU, {n}² nodes (GPU {}, CPU {}), {} particles (CPU {}, {before} \
                     before)",
                    if on_cuda { "stepped" } else { "no longer" },
                    g.surface.height.len(),
                    c.surface.height.len(),
                    g.len(),
                    c.len()
                ),
            )
        }
        (State::Body(g), State::Body(c)) => {
            let springs = gpu
                .cuda
                .as_ref()
                .map_or(g.springs.len(), |d| d.solver.spring_count());
            let apart = g
                .position
                .iter()
                .zip(&c.position)
                .map(|(p, q)| p.distance(*q))
                .fold(0.0, f32::max);
            let ok = on_cuda
                && g.len() == c.len()
                && springs == c.springs.len()
                && g.position.iter().all(|p| p.is_finite())
                && apart <= NODES_APART;
            (
                ok,
                format!(
                    "{} on the GPU, {} nodes (CPU {}), {springs} springs (CPU {}), nodes \
                     {apart:.1e} m from the CPU's",
                    if on_cuda { "stepped" } else { "no longer" },
                    g.len(),
                    c.len(),
                    c.springs.len()
                ),
            )
        }
        _ => (false, "the GPU's and the CPU's scenes differ".into()),
    }
}

/// The checks' expectations hold where both sides are the CPU (what the GPU must match): the
/// planted step stops with the one particle's error, every live edit steps on to equal sizes
/// and counts (more alive after max particles is raised). A check that failed a right solver
/// would read as a GPU bug.
#[test]
fn the_checks_pass_on_the_cpu() {
    let (ok, line) = planted_step(None).unwrap();
    assert!(ok, "{line}");
    assert!(line.contains("particles on 8² nodes"), "{line}");
    let (ok, lines) = live_edits(None).unwrap();
    assert!(ok, "{lines}");
    assert_eq!(lines.matches(": ok").count(), 14, "{lines}");
    assert!(lines.contains("(CPU 800, 400 before)"), "{lines}");
    println!("{line}\n{lines}");
}

/// The body cases' expectations hold on the CPU: the planted counts, a box for each but the
/// all-NaN body's, and each box unlike the one before (the solver starts with the start's, so
/// the first differs from it too), so a stale box cannot pass.
#[test]
fn the_body_plants_have_distinct_boxes() {
    let (start, _, plants) = body_plants();
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
