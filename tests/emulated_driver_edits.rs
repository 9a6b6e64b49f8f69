//! Live edits of a running fountain, cloth and jelly through the program's CUDA host code on
//! the emulated driver (tests/support/emulated_driver.rs): the bytes each edit's frame copies
//! between the host and the GPU (`sims::particles::edit_reach`), and the state after every
//! edit class against the CPU's. Needs what the emulated driver needs (a C++20 compiler and
//! cuda.h, scripts/setup.sh).

#[path = "support/copies.rs"]
mod copies;
#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

use copies::{bits, rerun, Copies};
use emulated_driver::{succeeds, worst, Flavour};
use fluidlab::sims::particles::cuda::kernels::{
    BasinStep, BodyStep, EmitStep, FountainStep, SelfStep, SC_BUILDS,
};
use fluidlab::sims::particles::dynamics::Integrator;
use fluidlab::sims::particles::edit_reach::EditReach;
use fluidlab::sims::particles::scene::{ParticlesScene, Pins};
use std::mem::size_of;

/// Set in the processes [`live_edits_send_what_they_change`] starts: the scene
/// [`edit_frames_on_the_driver`] runs ("fountain", "cloth", "jelly").
const EDIT_SCENE: &str = "FLUIDLAB_TEST_EDIT_SCENE";
/// Set there to "cpu": the backend (else CUDA).
const EDIT_BACKEND: &str = "FLUIDLAB_TEST_EDIT_BACKEND";

/// The fountain: [`FOUNTAIN_FRAMES`] of 0.04 s fill it to its 320 particles (400 a second
/// living 1.2 s) and its 24² basin, before the edits.
const FOUNTAIN: &str = "kind = \"particles\"\nscene = \"fountain\"\ndt = 0.04\n\
     [fountain]\nrate = 400.0\nlifetime = 1.2\nmax_particles = 320\nsurface_nodes = 24\n\
     speed = [3.0, 3.5]\n";
/// A 12² cloth hanging from its corners in a wind, self-colliding, 8 substeps a frame.
const CLOTH: &str = "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 12\nsize = 1.0\n\
     substeps = 8\nself_collision = true\nstart = [-0.5, 1.5, 0.0]\n\
     [world]\nwind = [1.0, 0.0, 0.0]\n";
/// A folded 12² cloth under XPBD (2 iterations, 4 substeps), self-colliding: after
/// [`FOLDED_FRAMES`] it has landed, its layers resting on each other, so that its contacts
/// depend on the thickness (as in tests/emulated_driver_particles.rs' "cloth").
const FOLDED: &str = "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 12\nsize = 1.0\n\
     integrator = \"xpbd\"\niterations = 2\nsubsteps = 4\npins = \"none\"\n\
     orientation = \"folded\"\nstart = [-0.5, 0.2, -0.5]\nself_collision = true\n\
     [world]\nfriction = 0.2\n";
/// A 4³ jelly dropped, its volume term on, 6 substeps a frame.
const JELLY: &str = "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nn = 4\nsubsteps = 6\n\
     volume_stiffness = 100.0\nstart = [-0.5, 0.5, -0.5]\n";

/// Frames before the edits.
const FOUNTAIN_FRAMES: usize = 30;
const BODY_FRAMES: usize = 6;
const FOLDED_FRAMES: usize = 30;

/// A live edit made before a frame: its name, how far it reaches, the edit.
type Edit = (&'static str, EditReach, fn(&mut ParticlesScene));

/// Nothing edited: the frames' own copies.
const NONE: Edit = ("none", EditReach::Records, |_| {});

/// The edits made before consecutive frames (after the frames before the edits; 3 frames
/// follow them), one of each class the scene has.
fn edits(scene: &str) -> Vec<Edit> {
    use EditReach::*;
    match scene {
        "fountain" => vec![
            NONE,
            ("wind", Records, |s| s.world.wind = [1.0, 0.0, 0.5]),
            ("gravity", Records, |s| s.world.gravity = [0.3, -7.0, 0.0]),
            ("rate", Records, |s| s.fountain.rate = 300.0),
            ("drag", Records, |s| s.fountain.drag = 2.0),
            NONE,
            ("seed", Records, |s| s.fountain.seed += 1),
            // A body's field: a fountain holds none (review item L7).
            ("pins (no body)", Records, |s| s.body.pins = Pins::Top),
            // Lowered below the particles alive: the emission stops, nothing is dropped.
            ("max particles lowered", Records, |s| {
                s.fountain.max_particles = 200
            }),
            ("basin size", State, |s| s.fountain.basin *= 1.25),
            ("max particles", State, |s| s.fountain.max_particles = 400),
            NONE,
        ],
        "cloth" => vec![
            NONE,
            ("wind", Records, |s| s.world.wind = [1.5, 0.0, 0.5]),
            ("gravity", Records, |s| s.world.gravity = [0.3, -7.0, 0.0]),
            ("damping", Records, |s| s.body.damping = 0.6),
            ("stiffness", Stiffness, |s| s.body.stiffness *= 0.8),
            ("mass", Records, |s| s.body.mass *= 2.0),
            ("euler", Records, |s| s.body.integrator = Integrator::Euler),
            ("xpbd", Records, |s| s.body.integrator = Integrator::Xpbd),
            ("verlet", Records, |s| {
                s.body.integrator = Integrator::Verlet
            }),
            ("sphere", Records, |s| {
                s.world.sphere_center = [0.0, 1.0, 0.2];
                s.world.sphere_radius = 0.3;
            }),
            ("thickness", Records, |s| s.body.thickness *= 1.1),
            ("substeps", Records, |s| s.body.substeps += 2),
            ("dt", Records, |s| s.dt *= 0.8),
            ("pins", State, |s| s.body.pins = Pins::Top),
            NONE,
        ],
        "folded" => vec![
            NONE,
            ("thickness", Records, |s| s.body.thickness *= 1.15),
            NONE,
            ("self-collision off", Records, |s| {
                s.body.self_collision = false
            }),
            ("self-collision on", Records, |s| {
                s.body.self_collision = true
            }),
            // The basin's field: a body holds none (review item L7).
            ("max particles (no basin)", Records, |s| {
                s.fountain.max_particles = 400
            }),
            // A spring kind off: the springs made again (not their stiffnesses sent).
            ("shear off", State, |s| s.body.shear = 0.0),
            NONE,
        ],
        _ => vec![
            NONE,
            ("gravity", Records, |s| s.world.gravity = [0.3, -7.0, 0.0]),
            ("volume stiffness", Records, |s| {
                s.body.volume_stiffness = 50.0
            }),
            ("stiffness", Stiffness, |s| s.body.stiffness *= 0.8),
            ("wind", Records, |s| s.world.wind = [2.0, 0.0, 0.0]),
            NONE,
            ("mass", Records, |s| s.body.mass *= 2.0),
            ("euler", Records, |s| s.body.integrator = Integrator::Euler),
            ("xpbd", Records, |s| s.body.integrator = Integrator::Xpbd),
            ("verlet", Records, |s| {
                s.body.integrator = Integrator::Verlet
            }),
            NONE,
        ],
    }
}

/// What a run of [`edit_frames_on_the_driver`] printed and the emulated driver traced.
struct Run {
    /// Each edit's frame's copies, in [`edits`]' order.
    copies: Vec<Copies>,
    /// The state's floats (particles and basin, or nodes) as bits.
    state: Vec<u32>,
    /// Counts: particles alive and emitted, or the body's springs.
    counts: String,
    /// Particles alive (or nodes) before each edit's frame.
    sizes: Vec<usize>,
    /// `self_collide`'s builds so far on the GPU before each edit's frame and after the last
    /// (`None` without self-collision lists or on the CPU).
    builds: Vec<Option<u32>>,
}

/// Runs [`edit_frames_on_the_driver`] on `scene` in a process of its own on `driver`.
fn run(driver: &emulated_driver::Driver, scene: &str, cpu: bool) -> Run {
    let mut command = rerun("edit_frames_on_the_driver");
    command.env(EDIT_SCENE, scene);
    if cpu {
        command.env(EDIT_BACKEND, "cpu");
    }
    let (stdout, stderr) = succeeds(command, driver);
    let line = |what: &str| emulated_driver::line(&stdout, what);
    let mut copies = Vec::new();
    let mut sizes = Vec::new();
    let mut builds = Vec::new();
    let built = |rest: &str| {
        rest.rsplit_once("builds ")
            .and_then(|(_, n)| n.parse().ok())
    };
    let mut current: Option<Copies> = None;
    for text in stderr.lines() {
        if let Some(rest) = text.strip_prefix("live edit before a frame of ") {
            copies.extend(current.take());
            let size = rest.split_whitespace().next().unwrap();
            sizes.push(size.parse().unwrap());
            builds.push(built(rest));
            current = Some(Copies::default());
        } else if let Some(rest) = text.strip_prefix("live edits end") {
            copies.extend(current.take());
            builds.push(built(rest));
        } else if let Some(c) = current.as_mut() {
            c.add(text);
        }
    }
    Run {
        copies,
        state: bits(&stdout, "state: "),
        counts: line("counts: "),
        sizes,
        builds,
    }
}

/// Live edits of every class (`EditReach`) on a running fountain, a hanging cloth, a landed
/// folded cloth and a jelly, through the program's CUDA host code on the emulated driver, one
/// before each of consecutive frames ([`edits`]; each edit's class asserted against
/// `EditReach::of` before its frame), each frame's copies counted from the driver's trace:
///
/// - an edit of constants the frames' records carry (wind, gravity, damping, mass, the
///   integrator, a sphere, substeps, dt, the emission rate and seed, the fountain's drag, a
///   body's thickness, self-collision and volume stiffness) reads back only what a frame with
///   no edit reads (its counts and statistics: 40, 76, 56 bytes) and sends only the record
///   arrays whose bits changed (`Records::set` sends an array whole): for a body exactly its
///   substeps' `BodyStep`s (108 bytes each), its `SelfStep`s (36 bytes) for the thickness,
///   both for substeps and dt, nothing for self-collision off or on; for the fountain at most
///   its three records (measured: 184 bytes, its `FountainStep` and `EmitStep`). A frame
///   with no edit sends nothing (a body; review items LOW-2 and L1) or the fountain's
///   `EmitStep` (16 bytes), but after a thickness or a state sent. The old code read the
///   state back and sent it whole: the fountain's wind 15,896 bytes back and 15,408 sent (304
///   particles, 24² nodes), the cloth's 6,988 and 14,280 (144 nodes, 506 springs), the
///   jelly's 3,128 and 10,552;
/// - a stiffness sends the springs' stiffnesses (12 bytes a spring) and reads nothing more;
/// - max particles lowered (below the particles alive: the emission stops, nothing is
///   dropped, as on the CPU) reads nothing back and sends no state (before, the whole state
///   both ways);
/// - pins, a spring kind off, the basin's size and max particles raised read the state back
///   and send it whole;
/// - a thickness on the landed folded cloth (its layers resting on each other) rebuilds the
///   self-collision lists in its frame (review item M1).
///
/// The state after the edits is the CPU's (the same edits): the fountain's counts, its
/// particles' and basin's floats to 10⁻⁵, a body's nodes to 10⁻⁵ m (measured 4.1e-7, 5.7e-6,
/// 1.0e-6, 6.8e-6). Mutants caught: pins classed as records (`edit_reach.rs`): "cloth:
/// 0.023462534 from the CPU's". A record sent only into slots never written (`Records::set`):
/// "fountain: counts differ from the CPU's". A stiffness edit that sends nothing (`sync`: no
/// `upload_stiffness`): "cloth: 0.002962429 from the CPU's". No build forced for a new
/// thickness (`self_collide.rs`: `force = c.built_for.is_none()`): "folded: thickness: ...
/// self-collision builds Some(2) → Some(2)" (the CPU's nodes are still met: the lists' reach,
/// 2h, covers the largest thickness allowed, 1.4 spacings, from the smallest, 0.75). A spring
/// kind switch classed as a stiffness (`edit_reach.rs`): "folded: shear off" (the class
/// asserted in the run). The GPU's Verlet blind to the substep before (`solver.rs`: `before
/// = h`): "cloth: 0.064534724 from the CPU's" (its dt edit). Runs in about 2 s.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn live_edits_send_what_they_change() {
    let driver = emulated_driver::build(Flavour::Plain);
    let scenes = ["fountain", "cloth", "folded", "jelly"];
    let runs: Vec<(Run, Run)> = scenes
        .iter()
        .map(|scene| (run(&driver, scene, false), run(&driver, scene, true)))
        .collect();
    // Every figure first, then the checks.
    for (scene, (cuda, cpu)) in scenes.iter().zip(&runs) {
        for ((name, _, _), (copies, n)) in
            edits(scene).iter().zip(cuda.copies.iter().zip(&cuda.sizes))
        {
            println!(
                "{scene} ({n} particles or nodes): {name}: {} bytes sent, {} read back",
                copies.up, copies.down
            );
        }
        println!(
            "{scene}: {:.3e} from the CPU's; counts {}; self-collision builds {:?}",
            worst(&cuda.state, &cpu.state),
            cuda.counts,
            cuda.builds
        );
    }
    for (scene, (cuda, cpu)) in scenes.into_iter().zip(&runs) {
        let edits = edits(scene);
        assert_eq!(cuda.copies.len(), edits.len(), "{scene}: edits traced");
        assert_eq!(
            cuda.counts, cpu.counts,
            "{scene}: counts differ from the CPU's"
        );
        let apart = worst(&cuda.state, &cpu.state);
        assert!(apart < 1e-5, "{scene}: {apart} from the CPU's");
        let quiet = cuda.copies[0];
        let springs: usize = cuda
            .counts
            .strip_prefix("springs ")
            .map_or(0, |n| n.parse().unwrap());
        let mut substeps = match scene {
            "cloth" => 8,
            "folded" => 4,
            _ => 6,
        };
        // The frame's records: BodySteps, and SelfSteps where the body collides with itself.
        let (body_step, self_step) = (size_of::<BodyStep>(), size_of::<SelfStep>());
        let self_steps = if scene == "jelly" { 0 } else { self_step };
        for (k, ((name, reach, _), (copies, &n))) in edits
            .iter()
            .zip(cuda.copies.iter().zip(&cuda.sizes))
            .enumerate()
        {
            let why = format!("{scene}: {name}: {copies:?} (no edit: {quiet:?})");
            match reach {
                EditReach::Records | EditReach::Stiffness => {
                    assert_eq!(copies.down, quiet.down, "{why}: read back");
                }
                EditReach::State => {
                    // Positions and velocities (12 bytes each) of every particle or node at
                    // least, both ways.
                    assert!(copies.down >= 24 * n && copies.up >= 24 * n, "{why}");
                }
            }
            if *name == "substeps" {
                substeps += 2;
            }
            let after = k.checked_sub(1).map(|j| edits[j]);
            let records = |record: usize| substeps * record;
            // Records::set sends a record array whole when any of its records' bits changed.
            let expected_up = match (scene, *name, reach) {
                // The fountain's emission (EmitStep) every frame after the first.
                ("fountain", "none", _) if k > 0 => Some(size_of::<EmitStep>()),
                // A state sent (and so its records) or a thickness (its first SelfStep forced
                // a build, the next one does not): the next frame sends some records again
                // (measured, not asserted).
                (_, "none", _)
                    if after.is_some_and(|(a, r, _)| a == "thickness" || r == EditReach::State) =>
                {
                    None
                }
                // LOW-2, review item L1: a frame with nothing changed sends nothing.
                (_, "none", _) => Some(0),
                ("fountain", _, EditReach::Records) => None,
                (_, "thickness", _) => Some(records(self_step)),
                // The stage on or off: another graph, the same records.
                (_, "self-collision off" | "self-collision on", _) => Some(0),
                (_, "max particles (no basin)", _) => Some(0),
                // A new substep dt: both records.
                (_, "substeps" | "dt", _) => Some(records(body_step + self_steps)),
                (_, _, EditReach::Records) => Some(records(body_step)),
                (_, _, EditReach::Stiffness) => Some(12 * springs),
                _ => None,
            };
            if let Some(expected) = expected_up {
                assert_eq!(copies.up, expected, "{why}: sent");
            }
            // Review item M1: a new thickness rebuilds the contact lists in its frame.
            if *name == "thickness" && scene == "folded" {
                let (before, after) = (cuda.builds[k], cuda.builds[k + 1]);
                assert!(
                    before.is_some() && after > before,
                    "{why}: self-collision builds {before:?} → {after:?}"
                );
            }
            if scene == "fountain" && *reach == EditReach::Records {
                let all =
                    size_of::<FountainStep>() + size_of::<BasinStep>() + size_of::<EmitStep>();
                assert!(copies.up <= all, "{why}: sent more than the records");
            }
        }
    }
}

/// The run [`live_edits_send_what_they_change`] starts in a process of its own on the
/// emulated driver (nothing without [`EDIT_SCENE`]): the frames and edits, a line on stderr
/// before each edit's frame (its particles or nodes) and after the last; prints the state's
/// floats as bits and the counts.
#[test]
#[ignore = "run on the emulated driver by live_edits_send_what_they_change"]
fn edit_frames_on_the_driver() {
    use fluidlab::scene::Source;
    use fluidlab::sims::particles::{ParticlesSim, State};
    use fluidlab::sims::{Backend, Sim};
    let Ok(which) = std::env::var(EDIT_SCENE) else {
        return;
    };
    let (text, before) = match which.as_str() {
        "fountain" => (FOUNTAIN, FOUNTAIN_FRAMES),
        "cloth" => (CLOTH, BODY_FRAMES),
        "folded" => (FOLDED, FOLDED_FRAMES),
        _ => (JELLY, BODY_FRAMES),
    };
    let source = Source::parse(text, "edits", "edits.toml").unwrap();
    let scene = ParticlesScene::from_source(&source).unwrap();
    let mut sim = ParticlesSim::with_scene(scene);
    if std::env::var(EDIT_BACKEND).map_or(true, |b| b != "cpu") {
        sim.choose_backend(Backend::Cuda, 0).unwrap();
    }
    sim.set_stage_timing(false);
    for _ in 0..before {
        sim.step().unwrap();
    }
    let builds = |sim: &ParticlesSim| match sim.device_contacts() {
        Some(state) => format!("builds {}", state[SC_BUILDS]),
        None => "no builds".into(),
    };
    for (name, reach, edit) in edits(&which) {
        eprintln!(
            "live edit before a frame of {} particles or nodes, {}",
            sim.alive(),
            builds(&sim)
        );
        let old = sim.scene.clone();
        edit(&mut sim.scene);
        assert_eq!(EditReach::of(&sim.scene, &old), reach, "{which}: {name}");
        sim.step().unwrap();
    }
    eprintln!("live edits end, {}", builds(&sim));
    for _ in 0..3 {
        sim.step().unwrap();
    }
    sim.pull().unwrap();
    let bits = |v: &mut dyn Iterator<Item = f32>| -> Vec<String> {
        v.map(|x| format!("{:08x}", x.to_bits())).collect()
    };
    let (state, counts) = match &sim.state {
        State::Fountain(f) => {
            let mut floats = f
                .position
                .iter()
                .chain(&f.velocity)
                .flat_map(|p| p.to_array())
                .chain(f.age.iter().copied())
                .chain(f.surface.height.iter().copied())
                .chain(f.surface.velocity.iter().copied());
            (
                bits(&mut floats),
                format!("{} alive, {} emitted", f.len(), f.emitted),
            )
        }
        State::Body(b) => (
            bits(&mut b.position.iter().flat_map(|p| p.to_array())),
            format!("springs {}", b.springs.len()),
        ),
    };
    println!("state: {}", state.join(" "));
    println!("counts: {counts}");
}
