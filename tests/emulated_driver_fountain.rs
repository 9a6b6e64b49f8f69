//! The fountain's frames run by the CUDA host code on the emulated driver
//! (tests/support/emulated_driver.rs): as CUDA graphs against launch by launch and the CPU,
//! across reaches, a grown splash and refused captures. Needs what the emulated driver needs
//! (a C++20 compiler and cuda.h, scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

use emulated_driver::{succeeds, worst, Flavour};
use std::process::Command;

/// The fountain [`fountain_frames_on_the_driver`] runs: 320 particles at most (two blocks and a
/// half), 400 a second living 1.2 s (the capacity is reached from frame 20 on, `emit` clamped),
/// shot 3–3.5 m/s onto the cube, over it and into a basin of 24² nodes, frames of 0.04 s.
const FOUNTAIN_SCENE: &str = "kind = \"particles\"\nscene = \"fountain\"\ndt = 0.04\n\
     [fountain]\nrate = 400.0\nlifetime = 1.2\nmax_particles = 320\nsurface_nodes = 24\n\
     speed = [3.0, 3.5]\n";

/// Frames [`fountain_frames_on_the_driver`] runs.
const FOUNTAIN_FRAMES: usize = 40;

/// Set in the processes [`fountain_frames_as_cuda_graphs_equal_frames_launched_one_by_one`]
/// starts: the backend (`cuda` or `cpu`) [`fountain_frames_on_the_driver`] runs.
const FOUNTAIN_BACKEND: &str = "FLUIDLAB_TEST_FOUNTAIN_BACKEND";
/// Set there: the splash's radius grown before frame 30, ×1.5 (its stencils grow; "1") or
/// nudged ×1.02 (the stencils' sizes kept, their weights new; "nudge").
const FOUNTAIN_SPLASH: &str = "FLUIDLAB_TEST_FOUNTAIN_SPLASH";

/// Set (to a number) there: the fewest particles a graph's launches cover, lowered from 4,096
/// (`ParticlesSim::set_graph_reach_least`) so this small fountain crosses several reaches.
const FOUNTAIN_REACH_LEAST: &str = "FLUIDLAB_TEST_FOUNTAIN_REACH_LEAST";

/// What a run of [`fountain_frames_on_the_driver`] printed and the emulated driver traced.
struct FountainRun {
    /// The particles' positions, velocities, ages (as bits), hits and tags.
    particles: Vec<u32>,
    /// The basin's heights and velocities, as bits.
    basin: Vec<u32>,
    /// The drawing order.
    order: String,
    /// Particles alive, emitted and landed in the last frame.
    counts: String,
    /// Particles alive after each frame.
    alive: String,
    kernels: Vec<String>,
    captured: usize,
    launched: usize,
    in_graphs: usize,
    /// cuMemcpyHtoD(Async) calls.
    uploads: usize,
}

/// Runs [`fountain_frames_on_the_driver`] in a process of its own on `driver`, with
/// `environment`.
fn fountain_run(driver: &emulated_driver::Driver, environment: &[(&str, &str)]) -> FountainRun {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "fountain_frames_on_the_driver", "--ignored"])
        .args(["--nocapture", "--test-threads", "1"])
        .env(FOUNTAIN_BACKEND, "cuda")
        .envs(environment.iter().copied())
        .env("FLUIDLAB_EMULATED_TRACE", "1");
    let (stdout, stderr) = succeeds(command, driver);
    let line = |what: &str| emulated_driver::line(&stdout, what);
    let words = |what: &str| -> Vec<u32> {
        line(what)
            .split_whitespace()
            .map(|word| u32::from_str_radix(word, 16).unwrap())
            .collect()
    };
    let count = |what: &str| stderr.matches(what).count();
    FountainRun {
        particles: words("particles: "),
        basin: words("basin: "),
        order: line("order: "),
        counts: line("counts: "),
        alive: line("alive: "),
        kernels: stderr
            .lines()
            .filter_map(|line| line.strip_prefix("emulated CUDA driver: kernel `"))
            .map(|rest| rest.split('`').next().unwrap_or_default().to_string())
            .collect(),
        captured: count("emulated CUDA driver: cuGraphInstantiate "),
        launched: count("emulated CUDA driver: cuGraphLaunch "),
        in_graphs: count("(graph node)"),
        uploads: count("emulated CUDA driver: cuMemcpyHtoD"),
    }
}

/// 40 fountain frames ([`FOUNTAIN_SCENE`]: particles emitted, dying of age, landing in the
/// basin and splashing it, the capacity reached from frame ~20; the wind steered before each
/// of the first 20 frames, the last 20 left on the GPU) through the program's CUDA host code on the
/// emulated driver, as CUDA graphs (the default) and launch by launch
/// (`FLUIDLAB_CUDA_GRAPHS=0`): the same kernels in the same order, and the particles
/// (positions, velocities, ages, hits, tags), the basin's heights and velocities, the drawing
/// order and the counts equal bit for bit. Every frame is one graph launch, of two graphs
/// captured (the compaction swaps the particles' arrays every frame: even and odd frames start
/// from the other pair); the frame's end (`reduce_fountain`, `reduce_finish`) runs outside.
/// The old code ran every fountain frame launch by launch: 0 captures, 0 graph launches. A
/// key without the arrays' pointers (a mutant) replays frame 0's graph at frame 1, on the
/// arrays the compaction swapped: "counts differ: 16 alive, 491 emitted, 466 landed"; so does
/// a replay that does not swap them on the host as the recording did.
///
/// Both are the CPU's run (the same edits): the same particles alive, emitted and landed, the
/// drawing order, the particles' floats to 10⁻⁵ and the basin's to 10⁻⁶ (measured 4.8e-7 and 3.0e-8). A record the host forgets to upload
/// shows there, though graphs and launches share it (mutants of `fountain_records`): without
/// the emission's upload the kernels read a zeroed `EmitStep` ("counts differ from the CPU's:
/// 0 alive, 640 emitted, 0 landed" against 257, 488, 225); with the fountain's record's wind
/// never steered "303 alive, 464 emitted, 9 landed"; without the basin's record the splash and
/// wave step read zeros: "0.228 m from the CPU's basin".
///
/// With the least reach lowered from 4,096 to 64 ([`FOUNTAIN_REACH_LEAST`]) the particles
/// after `emit` cross 64 (frame 4), 128 (frame 8) and 256 (frame 16) and reach the capacity
/// (320): 8 captures (each reach's even and odd frames), still bit-equal. A key without the
/// reach (a mutant) replays a smaller reach's graph on more particles: "reach from 64: counts
/// differ: 193 alive, 640 emitted, 225 landed" against 257, 488, 225.
///
/// The splash's radius nudged ×1.02 before frame 30 (`FOUNTAIN_SPLASH=nudge`: the stencils'
/// sizes kept, their weights new) captures nothing more and stays bit-equal to launch by launch
/// and within 10⁻⁶ m of the CPU's basin (measured 7.5e-8); stencils re-uploaded only on a new
/// size (a mutant) leave the old weights: "splash nudged: 0.02953571 m from the CPU's basin".
///
/// The splash's radius grown before frame 30 ([`FOUNTAIN_SPLASH`]; larger stencils, uploaded
/// before the frame into a new allocation) captures 2 more graphs (frames 30 and 31), still
/// equal to its run launch by launch. A capture the driver refuses runs every frame from it on
/// launch by launch to the same bits: the first midway (`FLUIDLAB_EMULATED_CAPTURE_LIMIT=9`,
/// in `basin`), the third at its end (`FLUIDLAB_EMULATED_REFUSE_CAPTURE=3`: frame 30 of the
/// grown splash, the recording's compaction having swapped the particles' arrays on the host).
/// Without that swap undone (a mutant) frame 30 runs on the arrays before frame 29's
/// compaction: "third capture refused: counts differ: 241 alive, 488 emitted, 241 landed".
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn fountain_frames_as_cuda_graphs_equal_frames_launched_one_by_one() {
    let driver = emulated_driver::build(Flavour::Plain);
    let graphs = fountain_run(&driver, &[]);
    let plain = fountain_run(&driver, &[("FLUIDLAB_CUDA_GRAPHS", "0")]);
    let cpu = fountain_run(&driver, &[(FOUNTAIN_BACKEND, "cpu")]);
    let frames = FOUNTAIN_FRAMES;
    println!(
        "fountain: {} kernels, {} in graphs ({} launched one by one); {} captured, {} graph \
         launches; {} uploads ({} one by one); counts {}; {:.3e} from the CPU's particles, \
         {:.3e} m from its basin",
        graphs.kernels.len(),
        graphs.in_graphs,
        plain.kernels.len(),
        graphs.captured,
        graphs.launched,
        graphs.uploads,
        plain.uploads,
        graphs.counts,
        worst(&graphs.particles, &cpu.particles),
        worst(&graphs.basin, &cpu.basin),
    );
    if let Some(at) = (0..graphs.kernels.len().max(plain.kernels.len()))
        .find(|&i| graphs.kernels.get(i) != plain.kernels.get(i))
    {
        panic!(
            "kernel {at} of {} (graphs) and {} (one by one) differs: {:?} against {:?}",
            graphs.kernels.len(),
            plain.kernels.len(),
            graphs.kernels.get(at),
            plain.kernels.get(at)
        );
    }
    assert_eq!(graphs.counts, plain.counts, "counts differ");
    assert!(graphs.particles == plain.particles, "the particles differ");
    assert!(graphs.basin == plain.basin, "the basin differs");
    assert_eq!(graphs.order, plain.order, "the drawing order differs");
    assert_eq!((plain.captured, plain.launched), (0, 0));
    assert_eq!((graphs.captured, graphs.launched), (2, frames));
    // All but the frames' ends (reduce_fountain, reduce_finish) ran in graphs.
    assert_eq!(graphs.in_graphs + 2 * frames, graphs.kernels.len());
    // Against the CPU: the same counts and order, the particles and the basin close.
    assert_eq!(graphs.counts, cpu.counts, "counts differ from the CPU's");
    assert_eq!(
        graphs.order, cpu.order,
        "the drawing order differs from the CPU's"
    );
    assert_eq!(graphs.particles.len(), cpu.particles.len());
    assert!(
        worst(&graphs.particles, &cpu.particles) < 1e-5,
        "{} from the CPU's particles",
        worst(&graphs.particles, &cpu.particles)
    );
    assert!(
        worst(&graphs.basin, &cpu.basin) < 1e-6,
        "{} m from the CPU's basin",
        worst(&graphs.basin, &cpu.basin)
    );
    // The reach lowered to 64: the particles cross 64, 128 and 256 and reach the capacity
    // (320), each reach capturing its even and odd frames' graphs, every frame bit-equal to
    // its launches one by one.
    let low = fountain_run(&driver, &[(FOUNTAIN_REACH_LEAST, "64")]);
    println!("reach from 64: alive {}", low.alive);
    assert!(
        low.kernels == plain.kernels,
        "reach from 64: other kernels ran"
    );
    assert_eq!(low.counts, plain.counts, "reach from 64: counts differ");
    assert!(
        low.particles == plain.particles,
        "reach from 64: the particles differ"
    );
    assert!(low.basin == plain.basin, "reach from 64: the basin differs");
    assert_eq!(
        low.order, plain.order,
        "reach from 64: the drawing order differs"
    );
    assert_eq!((low.captured, low.launched), (8, frames), "reach from 64");
    // The splash grown before frame 30: new stencils (uploaded before the frame, a new
    // allocation), so frames 30 and 31 capture anew.
    let splash = (FOUNTAIN_SPLASH, "1");
    let grown = fountain_run(&driver, &[splash]);
    let grown_plain = fountain_run(&driver, &[splash, ("FLUIDLAB_CUDA_GRAPHS", "0")]);
    assert_eq!(
        (grown.captured, grown.launched),
        (4, frames),
        "splash grown"
    );
    assert!(
        grown.kernels == grown_plain.kernels,
        "splash grown: other kernels ran"
    );
    assert_eq!(
        grown.counts, grown_plain.counts,
        "splash grown: counts differ"
    );
    assert!(
        grown.particles == grown_plain.particles,
        "splash grown: the particles differ"
    );
    assert!(
        grown.basin == grown_plain.basin,
        "splash grown: the basin differs"
    );
    assert!(
        grown.basin != plain.basin,
        "the splash's growth changed nothing"
    );
    // The splash nudged before frame 30: the stencils keep their sizes (no new allocation, the
    // same key: no capture) but their weights change, uploaded before the frame.
    let nudge = (FOUNTAIN_SPLASH, "nudge");
    let nudged = fountain_run(&driver, &[nudge]);
    let nudged_plain = fountain_run(&driver, &[nudge, ("FLUIDLAB_CUDA_GRAPHS", "0")]);
    assert_eq!(
        (nudged.captured, nudged.launched),
        (2, frames),
        "splash nudged"
    );
    assert!(
        nudged.basin == nudged_plain.basin,
        "splash nudged: the basin differs"
    );
    assert!(
        nudged.particles == nudged_plain.particles,
        "splash nudged: the particles differ"
    );
    assert!(
        nudged.basin != plain.basin,
        "the splash's nudge changed nothing"
    );
    // Graphs and launches share the stencils' upload: the CPU's run tells a missed one.
    let nudged_cpu = fountain_run(&driver, &[nudge, (FOUNTAIN_BACKEND, "cpu")]);
    println!(
        "splash nudged: {:.3e} m from the CPU's basin",
        worst(&nudged.basin, &nudged_cpu.basin)
    );
    assert_eq!(
        nudged.counts, nudged_cpu.counts,
        "splash nudged: counts differ from the CPU's"
    );
    assert!(
        worst(&nudged.basin, &nudged_cpu.basin) < 1e-6,
        "splash nudged: {} m from the CPU's basin",
        worst(&nudged.basin, &nudged_cpu.basin)
    );
    for (what, environment, launched, against) in [
        (
            "first",
            ("FLUIDLAB_EMULATED_CAPTURE_LIMIT", "9"),
            (0, 0),
            &plain,
        ),
        (
            "third",
            ("FLUIDLAB_EMULATED_REFUSE_CAPTURE", "3"),
            (2, 30),
            &grown_plain,
        ),
    ] {
        let mut environment = vec![environment];
        if what == "third" {
            environment.push(splash);
        }
        let refused = fountain_run(&driver, &environment);
        let plain = against;
        let why = format!("{what} capture refused");
        assert_eq!((refused.captured, refused.launched), launched, "{why}");
        assert!(refused.kernels == plain.kernels, "{why}: other kernels ran");
        assert_eq!(refused.counts, plain.counts, "{why}: counts differ");
        assert!(
            refused.particles == plain.particles,
            "{why}: the particles differ"
        );
        assert!(refused.basin == plain.basin, "{why}: the basin differs");
        assert_eq!(
            refused.order, plain.order,
            "{why}: the drawing order differs"
        );
    }
}

/// The run [`fountain_frames_as_cuda_graphs_equal_frames_launched_one_by_one`] starts in a
/// process of its own on the emulated driver (nothing without [`FOUNTAIN_BACKEND`]): the
/// frames and edits; prints the particles (positions, velocities, ages as bits, hits, tags),
/// the basin (heights, velocities as bits), the drawing order and the counts.
#[test]
#[ignore = "run on the emulated driver by fountain_frames_as_cuda_graphs_equal_frames_launched_one_by_one"]
fn fountain_frames_on_the_driver() {
    use fluidlab::scene::Source;
    use fluidlab::sims::particles::scene::ParticlesScene;
    use fluidlab::sims::particles::{ParticlesSim, State};
    use fluidlab::sims::{Backend, Sim};
    let Ok(backend) = std::env::var(FOUNTAIN_BACKEND) else {
        return;
    };
    let source = Source::parse(FOUNTAIN_SCENE, "fountain", "fountain.toml").unwrap();
    let scene = ParticlesScene::from_source(&source).unwrap();
    let mut sim = ParticlesSim::with_scene(scene);
    if backend == "cuda" {
        sim.choose_backend(Backend::Cuda, 0).unwrap();
    }
    sim.set_stage_timing(false);
    if let Ok(least) = std::env::var(FOUNTAIN_REACH_LEAST) {
        sim.set_graph_reach_least(least.parse().unwrap());
    }
    let mut landed = 0;
    let mut alive = Vec::new();
    let splash = std::env::var(FOUNTAIN_SPLASH).ok();
    for frame in 0..FOUNTAIN_FRAMES {
        if frame == 30 {
            match splash.as_deref() {
                Some("nudge") => sim.scene.fountain.splash_radius *= 1.02,
                Some(_) => sim.scene.fountain.splash_radius *= 1.5,
                None => {}
            }
        }
        if frame < 20 {
            // A live edit of the wind: its record sent, no state (`edit_reach.rs`).
            let k = frame as f32;
            sim.scene.world.wind = [0.5 + 0.1 * k, 0.0, -0.05 * k];
        }
        sim.step().unwrap();
        sim.pull().unwrap();
        let State::Fountain(f) = &sim.state else {
            panic!("not a fountain");
        };
        landed += f.landed;
        alive.push(f.len().to_string());
    }
    let State::Fountain(f) = &sim.state else {
        panic!("not a fountain");
    };
    let floats = |v: &[f32]| {
        v.iter()
            .map(|x| format!("{:08x}", x.to_bits()))
            .collect::<Vec<_>>()
    };
    let mut particles: Vec<String> = f
        .position
        .iter()
        .chain(&f.velocity)
        .flat_map(|p| p.to_array())
        .map(|x| format!("{:08x}", x.to_bits()))
        .collect();
    particles.extend(floats(&f.age));
    particles.extend(f.hits.iter().map(|h| format!("{h:08x}")));
    particles.extend(f.tag.iter().map(|t| format!("{t:08x}")));
    let mut basin = floats(&f.surface.height);
    basin.extend(floats(&f.surface.velocity));
    let order: Vec<String> = sim.order.iter().map(|k| k.to_string()).collect();
    println!("particles: {}", particles.join(" "));
    println!("basin: {}", basin.join(" "));
    println!("order: {}", order.join(" "));
    println!("alive: {}", alive.join(" "));
    println!(
        "counts: {} alive, {} emitted, {landed} landed",
        f.len(),
        f.emitted
    );
}
