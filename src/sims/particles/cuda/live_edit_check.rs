//! "particles live edits", a doctor check of the CUDA solver's host side, which the emulation
//! cannot run: a fountain on CUDA edited live as the panel does (nodes per side, max
//! particles raised past the solver's capacity) and a cloth (stiffness, shear springs off and
//! on again, pins, nodes per side; then wind, damping, gravity, self-collision on and
//! thickness, whose frames replay a CUDA graph with new records) step on, on the GPU, to the
//! CPU's sizes and counts of the
//! same edits, the cloth's springs on the GPU the CPU's, their rest lengths the host's bit
//! for bit (downloaded: springs switched on grow in, a frame's rest lengths uploaded each
//! frame, `growth.rs`) and its nodes within [`NODES_APART`] of the CPU's (a spring kind switched
//! live keeps the motion). Then the same with a node held
//! by the grabber ([`held_edits`]): it stays at the drag's target through bending and shear
//! springs switched off and on, and moves once let go; then the pointer moved over the cloth
//! with no button held downloads nothing.

use super::frame_check::on;
use crate::gfx::camera::Camera;
use crate::scene::Source;
use crate::sims::particles::body::Body;
use crate::sims::particles::grab::to_pixel;
use crate::sims::particles::scene::{ParticlesScene, Pins};
use crate::sims::particles::{ParticlesSim, State};
use crate::sims::Sim;

/// A live edit of `scene` (as the panel makes it) and how many steps follow it.
type Edit = (&'static str, fn(&mut ParticlesScene), usize);

/// How far a body's node on the GPU may be from the CPU's after the live edits, m. The check
/// compares the GPU's edit path (the solver made again from the host's state, or stiffness
/// and pins uploaded) with the CPU's, so it catches the GPU's side going wrong, not an edit
/// both sides do wrongly. Measured after the 16 frames: 0 on the emulated driver's memcheck
/// flavour (`tests/emulated_driver.rs` `doctor_passes_on_the_memcheck_driver`), 2.9e-5 m on
/// its plain flavour (contracted roundings) before springs grew in, 9.7e-5 m since (the
/// held cloth's "shear springs on", measured again there). A GPU side off after switching
/// shear springs off (the CPU's 2 frames after it, measured before the growth): its body
/// started again 5.0e-2 m, its motion lost (velocities zero) 1.4e-2 m, not stepped 3.3e-2 m.
/// 5 mm sits between: 50 times the emulation's drift (a real GPU's rounding over 16 frames
/// of a swinging cloth is unmeasured) and a third of the smallest failure.
const NODES_APART: f32 = 5e-3;

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
    // After n 16 → 20 (a new solver), edits of the constants each substep's records hold
    // (`frame_graph.rs`): the frames replay the graph captured before them, reading the new
    // records from device memory; self-collision switched on captures once (its lists).
    let cloth_edits: [Edit; 10] = [
        ("cloth stiffness × 2", |s| s.body.stiffness *= 2.0, 2),
        ("cloth shear springs off", |s| s.body.shear = 0.0, 2),
        ("cloth shear springs on", |s| s.body.shear = 0.5, 2),
        ("cloth pins: none", |s| s.body.pins = Pins::None, 2),
        ("cloth n 16 → 20", |s| s.body.n = 20, 2),
        ("cloth wind steered", |s| s.world.wind = [2.0, 0.0, 1.0], 2),
        ("cloth damping 0.2 → 0.6", |s| s.body.damping = 0.6, 2),
        (
            "cloth gravity tilted",
            |s| s.world.gravity = [0.5, -7.0, 0.0],
            2,
        ),
        (
            "cloth self-collision on",
            |s| s.body.self_collision = true,
            2,
        ),
        ("cloth thickness × 1.15", |s| s.body.thickness *= 1.15, 2),
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
        if let (State::Body(_), Some(d)) = (&gpu.state, &gpu.cuda) {
            // Since n 16 → 20: its first frame and self-collision on capture, the rest replay.
            lines.push(format!(
                "the cloth since n 16 → 20, {}",
                d.solver.graph_summary()
            ));
        }
    }
    let (ok, held) = held_edits(device)?;
    passed &= ok;
    lines.extend(held);
    Ok((passed, lines.join("; ")))
}

/// How far the held node may be from the CPU's drag target, m: the GPU's and the CPU's
/// targets differ by their picks' depths (nodes ~1e-7 m apart).
const TARGET_APART: f32 = 1e-5;

/// Spring kinds switched while the grabber holds a node, as the viewer does it: a 16² cloth
/// swinging 6 frames, a free node picked and dragged 50 px up through [`Sim::pointer`] (the
/// same pixels on both sides), then bending springs off and on, shear springs off and on, 2
/// frames after each, and the node let go. The held cloth is chaotic (a 1e-5 m nudge of the
/// CPU's nodes grows to 4 cm over these 8 frames, measured), so before each edit the CPU
/// takes the GPU's nodes: each comparison is of one edit and its 2 frames. After each, the
/// held node is within [`TARGET_APART`] of where the CPU's drag put it on each side (pinned
/// while held; a GPU whose mirror missed the drag's place or pin does not), the GPU's
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
                // Against the CPU's target (the GPU's own is read from its mirror, which a
                // mirror missing the drag would move too): the two picks' depths differ by
                // the nodes' ~1e-7 m.
                let off = [&g, &c].map(|b| b.position[held].distance(targets[1].1));
                // `g.pinned` is the host's mirror (uploaded, not downloaded): the GPU's pin
                // shows in its node staying at the target (`off[0]`), not in it.
                let kept = if letting_go {
                    !g.pinned[held] && !c.pinned[held] && off.iter().all(|&d| d > TARGET_APART)
                } else {
                    g.pinned[held] && c.pinned[held] && off.iter().all(|&d| d <= TARGET_APART)
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
    // How its frames ran since its solver was last made (a spring kind switched makes it
    // again; `frame_graph.rs`): the pins and nodes the grabber changes go up as device memory,
    // which no graph's key names (on the emulated driver: 1 captured, 4 replayed).
    if let Some(d) = &gpu.cuda {
        lines.push(format!(
            "the held cloth since its solver was made, {}",
            d.solver.graph_summary()
        ));
    }
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
            // The rest lengths, bit for bit: the GPU's (downloaded) the host's (the CPU's differ
            // by the nodes' rounding: springs switched on grow from the lengths they find).
            // Springs growing in (`growth.rs`) change them every frame; a GPU that missed the
            // uploads kept its nodes 2.0e-3 m from the CPU's (within NODES_APART) after the 2
            // frames of "cloth shear springs on" (emulated driver), its rest lengths not.
            let host = rest_bits(g);
            let (on_gpu, error) = match gpu.cuda.as_ref().map(|d| d.solver.download_rest()) {
                Some(Ok((links, springs))) => ((bits(&links), bits(&springs)), String::new()),
                Some(Err(e)) => (Default::default(), format!(" ({e})")),
                None => (host.clone(), String::new()),
            };
            let differ = differing(&on_gpu, &host);
            let ok = on_cuda
                && g.len() == c.len()
                && springs == c.springs.len()
                && g.position.iter().all(|p| p.is_finite())
                && apart <= NODES_APART
                && differ == 0;
            (
                ok,
                format!(
                    "{} on the GPU, {} nodes (CPU {}), {springs} springs (CPU {}), nodes \
                     {apart:.1e} m from the CPU's, {differ} rest lengths off{error} ({} \
                     springs growing)",
                    if on_cuda { "stepped" } else { "no longer" },
                    g.len(),
                    c.len(),
                    c.springs.len(),
                    g.growth.springs.len()
                ),
            )
        }
        _ => (false, "the GPU's and the CPU's scenes differ".into()),
    }
}

/// A body's links' and springs' rest lengths, as bits.
fn rest_bits(b: &Body) -> (Vec<u32>, Vec<u32>) {
    let links: Vec<f32> = b.links.iter().map(|l| l.rest).collect();
    let springs: Vec<f32> = b.springs.iter().map(|s| s.rest).collect();
    (bits(&links), bits(&springs))
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// How many of the links' and springs' rest lengths differ (all of them where the counts do).
fn differing(x: &(Vec<u32>, Vec<u32>), y: &(Vec<u32>, Vec<u32>)) -> usize {
    let count = |p: &Vec<u32>, q: &Vec<u32>| {
        if p.len() == q.len() {
            p.iter().zip(q).filter(|(a, b)| a != b).count()
        } else {
            p.len().max(q.len())
        }
    };
    count(&x.0, &y.0) + count(&x.1, &y.1)
}

/// The checks' expectations hold where both sides are the CPU (what the GPU must match): every
/// live edit steps on to equal sizes and counts (more alive after max particles is raised). A
/// check that failed a right solver would read as a GPU bug.
#[test]
fn the_checks_pass_on_the_cpu() {
    let (ok, lines) = live_edits(None).unwrap();
    assert!(ok, "{lines}");
    assert_eq!(lines.matches(": ok").count(), 19, "{lines}");
    assert!(lines.contains("(CPU 800, 400 before)"), "{lines}");
    // Shear springs switched on are checked mid-growth (their rest lengths uploaded a frame
    // at a time): the cloth's 450 shear springs; the held cloth's with its 448 bending
    // springs, switched on 2 frames before.
    let on = |name: &str| lines.split("; ").find(|l| l.starts_with(name)).unwrap();
    for (name, growing) in [
        ("cloth shear springs on", "(450 springs growing)"),
        ("held: shear springs on", "(898 springs growing)"),
    ] {
        assert!(on(name).contains(growing), "{}", on(name));
    }
    println!("{lines}");
}
