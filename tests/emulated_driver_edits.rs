//! Live edits of a running fountain, cloth and jelly through the program's CUDA host code on
//! the emulated driver (tests/support/emulated_driver.rs): the bytes each edit's frame copies
//! between the host and the GPU (`sims::particles::edit_reach`), and the state after every
//! edit class against the CPU's. Needs what the emulated driver needs (a C++20 compiler and
//! cuda.h, scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

use emulated_driver::{succeeds, worst, Flavour};
use fluidlab::sims::particles::cuda::kernels::{
    BasinStep, BodyStep, EmitStep, FountainStep, SelfStep,
};
use fluidlab::sims::particles::edit_reach::EditReach;
use fluidlab::sims::particles::scene::{ParticlesScene, Pins};
use std::process::Command;

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
/// A 4³ jelly dropped, its volume term on, 6 substeps a frame.
const JELLY: &str = "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nn = 4\nsubsteps = 6\n\
     volume_stiffness = 100.0\nstart = [-0.5, 0.5, -0.5]\n";

/// Frames before the edits.
const FOUNTAIN_FRAMES: usize = 30;
const BODY_FRAMES: usize = 6;

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
            ("thickness", Records, |s| s.body.thickness *= 1.1),
            ("pins", State, |s| s.body.pins = Pins::Top),
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
        ],
    }
}

/// What a frame copied: bytes to the GPU and back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Copies {
    up: usize,
    down: usize,
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
}

/// Runs [`edit_frames_on_the_driver`] on `scene` in a process of its own on `driver`.
fn run(driver: &emulated_driver::Driver, scene: &str, cpu: bool) -> Run {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "edit_frames_on_the_driver", "--ignored"])
        .args(["--nocapture", "--test-threads", "1"])
        .env(EDIT_SCENE, scene)
        .env("FLUIDLAB_EMULATED_TRACE", "1");
    if cpu {
        command.env(EDIT_BACKEND, "cpu");
    }
    let (stdout, stderr) = succeeds(command, driver);
    let line = |what: &str| {
        stdout
            .split_once(what)
            .and_then(|(_, rest)| rest.lines().next())
            .unwrap_or_else(|| panic!("no {what:?} line: {stdout}"))
            .to_string()
    };
    let mut copies = Vec::new();
    let mut sizes = Vec::new();
    let mut current: Option<Copies> = None;
    for text in stderr.lines() {
        if let Some(rest) = text.strip_prefix("live edit before a frame of ") {
            copies.extend(current.take());
            let size = rest.split_whitespace().next().unwrap();
            sizes.push(size.parse().unwrap());
            current = Some(Copies::default());
        } else if text.starts_with("live edits end") {
            copies.extend(current.take());
        } else if let (Some(c), Some(rest)) = (
            current.as_mut(),
            text.strip_prefix("emulated CUDA driver: cuMemcpy"),
        ) {
            let bytes = || -> usize {
                let (_, n) = rest.split_once(' ').unwrap();
                n.trim_end_matches(" bytes").parse().unwrap()
            };
            if rest.starts_with("HtoD") {
                c.up += bytes();
            } else if rest.starts_with("DtoH") {
                c.down += bytes();
            }
        }
    }
    Run {
        copies,
        state: line("state: ")
            .split_whitespace()
            .map(|word| u32::from_str_radix(word, 16).unwrap())
            .collect(),
        counts: line("counts: "),
        sizes,
    }
}

/// Live edits of every class (`EditReach`) on a running fountain, cloth and jelly, through
/// the program's CUDA host code on the emulated driver, one before each of consecutive frames
/// ([`edits`]), each frame's copies counted from the driver's trace:
///
/// - an edit of constants the frames' records carry (wind, gravity, damping, the emission
///   rate, the fountain's drag, a body's thickness and volume stiffness) reads back only what
///   a frame with no edit reads (its counts and statistics: 40, 76, 56 bytes) and sends only
///   the records whose bits changed: for a body exactly its substeps' `BodyStep`s (108 bytes
///   each; `SelfStep`s, 36 bytes, for the thickness), and nothing at all in the first frame
///   with no edit (review item LOW-2: a body's records are sent only when changed); for the
///   fountain at most its three records (measured: 184 bytes, its `FountainStep` and
///   `EmitStep`). The old code read the state back and sent it whole: the fountain's wind
///   15,896 bytes back and 15,408 sent (304 particles, 24² nodes), the cloth's 6,988 and
///   14,280 (144 nodes, 506 springs), the jelly's 3,128 and 10,552;
/// - a stiffness sends the springs' stiffnesses (12 bytes a spring) and reads nothing more;
/// - pins, the basin's size and max particles read the state back and send it whole. (A frame
///   after a state sent sends its substeps' `SelfStep`s again: the upload forced a build.)
///
/// The state after the edits is the CPU's (the same edits): the fountain's counts, its
/// particles' and basin's floats to 10⁻⁵, a body's nodes to 10⁻⁵ m (measured 4.2e-7, 1.3e-6,
/// 4.1e-6). Pins classed as records (a mutant of `edit_reach.rs`) leave the GPU's cloth
/// pinned at its corners: "cloth: 0.023462534 from the CPU's". A record sent only into slots
/// never written (a mutant of `Records::set`) never sends an edit nor the fountain's
/// emission: "fountain: counts differ from the CPU's: 0 alive, 636 emitted" against 268, 460
/// (the cloth's and the jelly's wind frames sent 0 bytes, 3.2e-2 and 0.27 m from the CPU's).
/// A stiffness edit that sends nothing (a mutant of `sync`: no `upload_stiffness`): "cloth:
/// 0.002962429 from the CPU's" (the jelly 3.9e-4), though the cloth's pins send it two frames
/// later.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn live_edits_send_what_they_change() {
    let driver = emulated_driver::build(Flavour::Plain);
    let scenes = ["fountain", "cloth", "jelly"];
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
            "{scene}: {:.3e} from the CPU's; counts {}",
            worst(&cuda.state, &cpu.state),
            cuda.counts
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
        let substeps = if scene == "cloth" { 8 } else { 6 };
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
            let records = |record: usize| substeps * record;
            let expected_up = match (scene, *name, reach) {
                // A state sent forces the next frame's self-collision lists' build: the
                // frame after it sends the substeps' SelfSteps again.
                (_, "none", _) if k == 0 => Some(0),
                (_, "none", _) => None,
                ("fountain", _, EditReach::Records) => None,
                (_, "thickness", _) => Some(records(std::mem::size_of::<SelfStep>())),
                (_, _, EditReach::Records) => Some(records(std::mem::size_of::<BodyStep>())),
                (_, _, EditReach::Stiffness) => Some(12 * springs),
                _ => None,
            };
            if let Some(expected) = expected_up {
                assert_eq!(copies.up, expected, "{why}: sent");
            }
            if scene == "fountain" && *reach == EditReach::Records {
                let all = std::mem::size_of::<FountainStep>()
                    + std::mem::size_of::<BasinStep>()
                    + std::mem::size_of::<EmitStep>();
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
    for (_, _, edit) in edits(&which) {
        eprintln!(
            "live edit before a frame of {} particles or nodes",
            sim.alive()
        );
        edit(&mut sim.scene);
        sim.step().unwrap();
    }
    eprintln!("live edits end");
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
