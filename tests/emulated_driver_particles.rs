//! The particles' self-collision (`cuda/self_collide.rs`) run by the CUDA host code on the
//! emulated driver (tests/support/emulated_driver.rs; tests/emulated_driver.rs holds the
//! driver's own checks and the other kinds'): a cloth fold against the CPU, and `bench` naming
//! the stage. Needs what the emulated driver needs (a C++20 compiler and cuda.h,
//! scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

use emulated_driver::{succeeds, Flavour};
use std::process::Command;

/// A folded 16² cloth dropped on the ground (its top layer lands on the bottom one after ~6
/// frames), 12 frames of 20 substeps with `self_collision` through the program's CUDA host
/// code on the emulated driver (`cuda/self_collide.rs`: the lists kept and rebuilt on the
/// GPU): its energies at the end are the CPU's to 10⁻³ (kinetic, potential, elastic; each
/// relative to the total; measured 2.1e-6), while the CPU's run without self-collision ends
/// far from both (0.26: the layers pass through each other). `bench` on CUDA names the stage,
/// with time spent in it.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_cloth_fold_self_collides_on_the_emulated_driver_as_on_the_cpu() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    let scene = |on: bool| {
        let path = dir.path().join(format!("fold-{on}.toml"));
        std::fs::write(
            &path,
            format!(
                "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\nsize = 1.0\n\
                 bend = 0.05\nsubsteps = 20\npins = \"none\"\norientation = \"folded\"\n\
                 start = [-0.5, 0.0, -0.5]\nself_collision = {on}\n[world]\nfriction = 0.2\n"
            ),
        )
        .unwrap();
        path
    };
    let energies = |on: bool, backend: &str| {
        let stats = dir.path().join(format!("{backend}-{on}.jsonl"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .arg("simulate")
            .arg(scene(on))
            .args(["--backend", backend, "--steps", "12", "--quiet", "--stats"])
            .arg(&stats);
        let (stdout, stderr) = succeeds(command, &driver);
        let text = std::fs::read_to_string(&stats).unwrap();
        let last: serde_json::Value =
            serde_json::from_str(text.lines().last().expect("a stats line")).unwrap();
        let parts: Vec<f64> = ["kinetic", "potential", "elastic"]
            .iter()
            .map(|k| {
                last[k]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{k}: {stdout}{stderr}"))
            })
            .collect();
        parts
    };
    let (cuda, cpu, without) = (
        energies(true, "cuda"),
        energies(true, "cpu"),
        energies(false, "cpu"),
    );
    let scale: f64 = cpu.iter().map(|e| e.abs()).sum();
    let apart = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs() / scale)
            .fold(0.0, f64::max)
    };
    println!(
        "cuda {cuda:?}\ncpu {cpu:?}\nwithout {without:?}\ncuda–cpu {:.2e}, cpu–without {:.2e}",
        apart(&cuda, &cpu),
        apart(&cpu, &without)
    );
    assert!(apart(&cuda, &cpu) < 1e-3, "{cuda:?} against {cpu:?}");
    assert!(apart(&cpu, &without) > 1e-2, "{cpu:?} against {without:?}");
    let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
    command.arg("bench").arg(scene(true)).args([
        "--backend",
        "cuda",
        "--warmup",
        "1",
        "--steps",
        "2",
        "--json",
    ]);
    let (stdout, _) = succeeds(command, &driver);
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "self_collide")
        .unwrap_or_else(|| panic!("no self_collide stage: {stdout}"))
        .clone();
    assert!(stage["ms"].as_f64().unwrap() > 0.0, "{stage}");
}

/// The frames [`body_frames_on_the_driver`] runs: the cloth's 40 let it land (it falls from
/// 0.2 m) before its thickness is grown, so that self-collision's contacts depend on it.
fn body_frames(scene: &str) -> usize {
    if scene == "cloth" {
        40
    } else {
        8
    }
}

/// Set in the processes [`body_frames_as_cuda_graphs_equal_frames_launched_one_by_one`] starts
/// (on the emulated driver): the scene [`body_frames_on_the_driver`] runs.
const BODY_FRAMES_SCENE: &str = "FLUIDLAB_TEST_BODY_FRAMES_SCENE";

/// A folded 12² cloth under XPBD (2 iterations, 4 substeps) with self-collision and a wind,
/// and a 4³ jelly (Verlet, its volume term on, 6 substeps), run 40 and 8 frames on CUDA through
/// the program's host code on the emulated driver, with graphs (`FLUIDLAB_CUDA_GRAPHS`, the
/// default) and without: the same kernels run in the same order and the nodes end equal bit
/// for bit, though the wind (after frame 3) and the substeps (after frame 5) change as the
/// panel changes them, and the cloth's thickness grows ×1.15 before frames 30 and 31 (landed,
/// its layers resting on each other). A graph is captured for each kind of frame, every frame
/// is one graph launch: the cloth captures its first frame (its lists' build forced), the
/// second (the lists kept; frame 3 replays it), after the wind and substeps edits two more each
/// (the edit uploads the body, which forces a build; then the lists kept; the substeps' first
/// frame also has the substep before it the old one), and after the thickness edits 3 (frame
/// 30's, 31's, and the lists kept with the new h): 9 (8,075 kernels, 7,995 in graphs, 40 graph
/// launches); the jelly (no lists) its first frame, the wind's, and the substeps'
/// first and second: 4 (traced by the emulated driver: `cuGraphInstantiate`, `cuGraphLaunch`).
/// A capture the driver refuses (`FLUIDLAB_EMULATED_CAPTURE_LIMIT=20`) runs the frames launch by
/// launch to the same end.
/// The old code launched every kernel by itself: 0 captures, 0 graph launches. A key without
/// the wind (a mutant) replays the old wind's graph after the wind's edit: the cloth's nodes
/// differ; one without the lists' state captures 4 for the cloth (its nodes the same: a build
/// forced where the drift would not have rebuilt finds the same contacts). One without
/// self_collide's thickness replays frame 30's graph, with the old, smaller h, at frame 31:
/// "cloth: the nodes differ" (with 8 frames and no thickness edit, the cloth still falling,
/// that mutant passed).
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn body_frames_as_cuda_graphs_equal_frames_launched_one_by_one() {
    let driver = emulated_driver::build(Flavour::Plain);
    let run = |scene: &str, environment: &[(&str, &str)]| {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "body_frames_on_the_driver", "--ignored"])
            .args(["--nocapture", "--test-threads", "1"])
            .env(BODY_FRAMES_SCENE, scene)
            .envs(environment.iter().copied())
            .env("FLUIDLAB_EMULATED_TRACE", "1");
        let (stdout, stderr) = succeeds(command, &driver);
        // After libtest's "test body_frames_on_the_driver ... ", on its line.
        let nodes = stdout
            .split_once("nodes: ")
            .and_then(|(_, rest)| rest.lines().next())
            .unwrap_or_else(|| panic!("no nodes line: {stdout}"))
            .to_string();
        let kernels: Vec<String> = stderr
            .lines()
            .filter_map(|line| line.strip_prefix("emulated CUDA driver: kernel `"))
            .map(|rest| rest.split('`').next().unwrap_or_default().to_string())
            .collect();
        let count = |what: &str| stderr.matches(what).count();
        let captured = count("emulated CUDA driver: cuGraphInstantiate ");
        let launched = count("emulated CUDA driver: cuGraphLaunch ");
        let in_graphs = count("(graph node)");
        (nodes, kernels, captured, launched, in_graphs)
    };
    for (scene, captures) in [("cloth", 9), ("jelly", 4)] {
        let frames = body_frames(scene);
        let (nodes, kernels, captured, launched, in_graphs) = run(scene, &[]);
        let (plain_nodes, plain_kernels, plain_captured, plain_launched, _) =
            run(scene, &[("FLUIDLAB_CUDA_GRAPHS", "0")]);
        // A capture the driver refuses in the middle of the first frame: the lists' state goes
        // back, and the frames run launch by launch, the same kernels to the same end.
        let (refused_nodes, refused_kernels, refused_captured, refused_launched, _) =
            run(scene, &[("FLUIDLAB_EMULATED_CAPTURE_LIMIT", "20")]);
        assert_eq!((refused_captured, refused_launched), (0, 0), "{scene}");
        assert!(
            refused_kernels == plain_kernels,
            "{scene}: refused: other kernels ran"
        );
        assert!(
            refused_nodes == plain_nodes,
            "{scene}: refused: the nodes differ"
        );
        println!(
            "{scene}: {} kernels, {in_graphs} in graphs; {captured} captured, {launched} graph \
             launches",
            kernels.len()
        );
        if let Some(at) = (0..kernels.len().max(plain_kernels.len()))
            .find(|&i| kernels.get(i) != plain_kernels.get(i))
        {
            panic!(
                "{scene}: kernel {at} of {} (graphs) and {} (one by one) differs: {:?} against {:?}",
                kernels.len(),
                plain_kernels.len(),
                kernels.get(at),
                plain_kernels.get(at)
            );
        }
        assert!(nodes == plain_nodes, "{scene}: the nodes differ");
        assert_eq!((plain_captured, plain_launched), (0, 0), "{scene}");
        assert_eq!(
            (captured, launched),
            (captures, frames),
            "{scene}: captures, graph launches"
        );
        // All but the frames' ends (reduce_nodes, reduce_finish) ran in graphs.
        assert_eq!(in_graphs + 2 * frames, kernels.len(), "{scene}");
    }
}

/// The run [`body_frames_as_cuda_graphs_equal_frames_launched_one_by_one`] starts in a process
/// of its own on the emulated driver (nothing without [`BODY_FRAMES_SCENE`]): 3 frames, the
/// wind changed, 2 frames, a substep more, the rest (the cloth's thickness grown before frames
/// 30 and 31); prints the nodes' positions as bits.
#[test]
#[ignore = "run on the emulated driver by body_frames_as_cuda_graphs_equal_frames_launched_one_by_one"]
fn body_frames_on_the_driver() {
    use fluidlab::scene::Source;
    use fluidlab::sims::particles::scene::ParticlesScene;
    use fluidlab::sims::particles::{ParticlesSim, State};
    use fluidlab::sims::{Backend, Sim};
    let Ok(which) = std::env::var(BODY_FRAMES_SCENE) else {
        return;
    };
    let text = match which.as_str() {
        "cloth" => {
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 12\nsize = 1.0\n\
             integrator = \"xpbd\"\niterations = 2\nsubsteps = 4\npins = \"none\"\n\
             orientation = \"folded\"\nstart = [-0.5, 0.2, -0.5]\nself_collision = true\n\
             [world]\nfriction = 0.2\nwind = [1.0, 0.0, 0.0]\n"
        }
        _ => {
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nn = 4\nsubsteps = 6\n\
             volume_stiffness = 100.0\nstart = [-0.5, 0.5, -0.5]\n"
        }
    };
    let source = Source::parse(text, "graphs", "graphs.toml").unwrap();
    let scene = ParticlesScene::from_source(&source).unwrap();
    let mut sim = ParticlesSim::with_scene(scene);
    sim.choose_backend(Backend::Cuda, 0).unwrap();
    sim.set_stage_timing(false);
    for frame in 0..body_frames(&which) {
        if frame == 3 {
            sim.scene.world.wind = [-0.5, 0.0, 2.0];
        }
        if frame == 5 {
            sim.scene.body.substeps += 1;
        }
        // The cloth has landed, its layers resting on each other: a thicker h pushes them.
        if frame == 30 || frame == 31 {
            sim.scene.body.thickness *= 1.15;
        }
        sim.step().unwrap();
    }
    sim.pull().unwrap();
    let State::Body(body) = &sim.state else {
        panic!("not a body");
    };
    let bits: Vec<String> = body
        .position
        .iter()
        .flat_map(|p| p.to_array())
        .map(|x| format!("{:08x}", x.to_bits()))
        .collect();
    println!("nodes: {}", bits.join(" "));
}
