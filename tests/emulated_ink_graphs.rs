//! The ink's steps as CUDA graphs (`src/sims/ink/cuda/step_graph.rs`) on the emulated driver
//! (tests/support/emulated_driver.rs): graphs on and off give the same bits, replays capture
//! nothing new, a key changed mid-run (iterations, solver, a brush stroke) captures anew and
//! still matches, and moving walls (the multigrid's fluid counts) and strokes that end (the
//! splat launches) replay nothing stale. tests/emulated_ink_replay.rs: painting and moving
//! discs replay, and the key's other fields. Needs what the emulated driver
//! needs (a C++20 compiler and cuda.h, scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

#[path = "support/ink_graph_runs.rs"]
mod ink_graph_runs;

use emulated_driver::Flavour;
use ink_graph_runs::{run, small_preset};

/// Eight frames of `dye`, `karman` and `smoke` (small grids; their multigrid, and Jacobi with
/// 5 sweeps) with CUDA graphs (the default) and with `FLUIDLAB_CUDA_GRAPHS=0` run the same
/// kernels in the same order and export the same bits. Frames 1–2 run launch by launch (keys
/// seen once: the advection's swap alternates the arrays the step starts from; `dye` also
/// frame 1's t = 0 splats, so its frames 1–3), the next two capture 2 graphs, replayed for the
/// other frames: 6 graph launches in 8 frames (`dye` 5). Fails on the code before graphs (0
/// captures) and on the code that captured a key at its first sighting (2 captures, 8 graph
/// launches; `dye` 3, 8). `karman` at 144 × 64 has one
/// multigrid level above the one-block tail and an outflow (its pressure copied back
/// device to device inside the graph); there a capture the driver refuses midway
/// (`FLUIDLAB_EMULATED_CAPTURE_LIMIT=12`) falls back to launches with the same end.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn ink_frames_replayed_as_cuda_graphs_equal_frames_launched_one_by_one() {
    let driver = emulated_driver::build(Flavour::Plain);
    let frames = 8;
    let presets = [
        ("dye", ("cells = [256, 256]", "cells = [48, 48]")),
        ("karman", ("cells = [512, 192]", "cells = [144, 64]")),
        ("smoke", ("cells = [192, 320]", "cells = [48, 80]")),
    ];
    for (name, cells) in presets {
        for solver in ["multigrid", "jacobi"] {
            let dir = tempfile::tempdir().unwrap();
            let edits: &[(&str, &str)] = match solver {
                "multigrid" => &[],
                _ => &[
                    (
                        "pressure_solver = \"multigrid\"",
                        "pressure_solver = \"jacobi\"",
                    ),
                    ("iterations = 4", "iterations = 5"),
                ],
            };
            let scene = small_preset(dir.path(), name, cells, edits);
            let graphs = run(&driver, &scene, frames, "graphs", &[]);
            let plain = run(
                &driver,
                &scene,
                frames,
                "plain",
                &[("FLUIDLAB_CUDA_GRAPHS", "0")],
            );
            let what = format!("{name} ({solver})");
            assert_eq!((plain.captures, plain.graph_launches), (0, 0), "{what}");
            // Frames 1–2 run launch by launch (keys seen once), 3–4 capture; dye's frame 1
            // lays its t = 0 splats, a key seen once more.
            let launched = if name == "dye" { 3 } else { 2 };
            assert_eq!(
                (graphs.captures, graphs.graph_launches),
                (2, frames as usize - launched),
                "{what}: (captures, graph launches) in {frames} frames"
            );
            assert!(
                graphs.graph_nodes * 2 > graphs.kernels.len(),
                "{what}: {} of {} kernels in graphs",
                graphs.graph_nodes,
                graphs.kernels.len()
            );
            if let Some(at) = (0..graphs.kernels.len().max(plain.kernels.len()))
                .find(|&i| graphs.kernels.get(i) != plain.kernels.get(i))
            {
                panic!(
                    "{what}: kernel {at} of {} (graphs) and {} (one by one) differs: {:?} against \
                     {:?}",
                    graphs.kernels.len(),
                    plain.kernels.len(),
                    graphs.kernels.get(at),
                    plain.kernels.get(at)
                );
            }
            assert_eq!(graphs.fields.len(), plain.fields.len(), "{what}");
            for ((file, a), (_, b)) in graphs.fields.iter().zip(&plain.fields) {
                assert!(a == b, "{what}: {file} differs with graphs on");
            }
            if name == "karman" {
                // A capture the driver refuses midway (after the advection's swaps): the arrays
                // go back, and the steps run launch by launch to the same end.
                let limit = [("FLUIDLAB_EMULATED_CAPTURE_LIMIT", "12")];
                let refused = run(&driver, &scene, frames, "refused", &limit);
                assert_eq!((refused.captures, refused.graph_launches), (1, 0), "{what}");
                assert!(
                    refused.kernels == plain.kernels,
                    "{what}, refused: other kernels"
                );
                assert!(
                    refused.fields == plain.fields,
                    "{what}, refused: fields differ"
                );
            }
        }
    }
}

/// Set in the child process that runs [`changed_settings_child`] on the emulated driver.
const CHILD: &str = "FLUIDLAB_INK_GRAPHS_CHILD";

/// Settings changed mid-run as the panel changes them (`karman` at 144 × 64: V-cycles 4 → 2,
/// then the Jacobi solver with 5 sweeps, a brush dragged through for two frames, vorticity
/// confinement switched on, then the preset's settings again): a CUDA solver with graphs stays
/// bit for bit equal to one without at every frame (u, v, p, the ink, the totals). Each new
/// setting (four frames each), and the dragged brush's extra splat launches, run launch by
/// launch for two frames (keys seen once) and capture anew for the next two (2 graphs: the
/// step's two arrangements); the preset's settings at the end replay the graphs of frames
/// 3–4, capturing nothing: 10 captured, 4 replayed, 10 launch by launch. Fails on the code
/// before graphs (0 captures), on the code that captured a key at its first sighting (10
/// captured, 14 replayed, 0 launched), and with the splat
/// launches left out of the key (the brush frames replay the preset's graphs, without the
/// brush: "u differs with graphs on", checked with phases of two frames).
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn ink_settings_changed_mid_run_capture_anew_and_match_launches_one_by_one() {
    if std::env::var_os(CHILD).is_some() {
        changed_settings_child();
        return;
    }
    ink_graph_runs::in_child(
        "ink_settings_changed_mid_run_capture_anew_and_match_launches_one_by_one",
        CHILD,
        "karman, settings changed",
    );
}

/// The run [`ink_settings_changed_mid_run_capture_anew_and_match_launches_one_by_one`] checks,
/// in a process on the emulated driver.
fn changed_settings_child() {
    use fluidlab::sims::ink::{PressureSolver, Stamp};
    let (scene, params, mut graphs, mut plain) = karman_graphed_and_plain();
    let dt = params.dt;
    let mut captured_before_the_end = 0;
    for frame in 0..24u32 {
        let mut p = params.clone();
        match frame {
            4..=7 => p.iterations = 2,
            8..=11 => (p.pressure_solver, p.iterations) = (PressureSolver::Jacobi, 5),
            16..=19 => p.vorticity = 2.0,
            _ => {}
        }
        let t = frame as f32 * dt;
        let mut stamps = scene.stamps(t, t + dt);
        if (12..=15).contains(&frame) {
            stamps.push(Stamp {
                position: [0.8 + 0.02 * (frame - 12) as f32, 0.35],
                radius: 0.03,
                velocity: [0.0, 40.0],
                ink: [5.0, 5.0, 5.0],
                per_second: true,
                direction: Some([1.0, 0.0]),
            });
        }
        if frame == 20 {
            captured_before_the_end = graphs.graph_counts().0;
        }
        for cuda in [&mut graphs, &mut plain] {
            cuda.params = p.clone();
            cuda.step(dt, &stamps, true).unwrap();
            cuda.end_frame().unwrap();
        }
        let (a, b) = (graphs.read_back().unwrap(), plain.read_back().unwrap());
        let bits = |f: &fluidlab::sims::ink::fields::Field| {
            f.data.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        };
        for (name, x, y) in [
            ("u", &a.flow.u, &b.flow.u),
            ("v", &a.flow.v, &b.flow.v),
            ("p", &a.flow.p, &b.flow.p),
            ("ink 0", &a.ink.channels[0], &b.ink.channels[0]),
            ("ink 2", &a.ink.channels[2], &b.ink.channels[2]),
        ] {
            assert!(
                bits(x) == bits(y),
                "frame {frame}: {name} differs with graphs on"
            );
        }
        assert_eq!(graphs.totals, plain.totals, "frame {frame}");
        assert_eq!(graphs.report, plain.report, "frame {frame}");
    }
    let (captured, replayed, launched) = graphs.graph_counts();
    println!("karman, settings changed: {}", graphs.graph_summary());
    assert_eq!(plain.graph_counts(), (0, 0, 24));
    // Each setting's first two frames run launch by launch (their keys seen once: the
    // advection's swap alternates the step's start) and its next two capture: frames 2–3,
    // 6–7, 10–11, 14–15 (the brush's splat launches), 18–19 (vorticity); frames 20–23 replay
    // frames 2–3's.
    assert_eq!(
        (captured, replayed, launched),
        (10, 4, 10),
        "{}",
        graphs.graph_summary()
    );
    assert_eq!(
        captured, captured_before_the_end,
        "frames 20–23 captured anew"
    );
}

/// Key inputs the other tests leave fixed, each changed by the scene while graphs replay, with
/// the fields bit for bit those of launches (`FLUIDLAB_CUDA_GRAPHS=0`):
/// - `stir` at 96 × 48 with its disc moving for 0.1 s from 0.2 s, 30 frames (multigrid,
///   closed box): while it moves the multigrid levels' fluid counts change, which the mean
///   removal reads from the level records on the device, so those steps replay too: 4
///   captures, 26 graph launches (a key captured at its second sighting; at its first: 4, 30).
///   The code that took the counts by value and ran steps with changed level records launch
///   by launch: 5 captures, 18 graph launches (fails the count); with the fluid counts left in
///   the key, 10 captures; with the splat launches left out of it, 2 (the steps after the
///   stripes replay the stripes' graphs; both counted when keys were captured at their first
///   sighting).
/// - `karman` at 144 × 64 with its four strokes ending at 0.1 s, 16 frames: the steps after the
///   strokes end lay no stamps: they capture anew (their key has no splat launches) rather
///   than replay the strokes' graph, whose launches would read the strokes' records still on
///   the device and keep laying their ink. Graphs on: 4 captures, 12 graph launches.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn ink_moving_walls_and_ending_strokes_replay_nothing_stale() {
    let driver = emulated_driver::build(Flavour::Plain);
    /// Preset, its cells (from, to), text edits, frames.
    type Case<'a> = (&'a str, (&'a str, &'a str), &'a [(&'a str, &'a str)], u32);
    let cases: [Case; 2] = [
        (
            "stir",
            ("cells = [256, 128]", "cells = [96, 48]"),
            &[("duration = 2.5", "duration = 0.1")],
            30,
        ),
        (
            "karman",
            ("cells = [512, 192]", "cells = [144, 64]"),
            &[("duration = 1000.0", "duration = 0.1")],
            16,
        ),
    ];
    for (name, cells, edits, frames) in cases {
        let dir = tempfile::tempdir().unwrap();
        let scene = small_preset(dir.path(), name, cells, edits);
        let graphs = run(&driver, &scene, frames, "graphs", &[]);
        let plain = run(
            &driver,
            &scene,
            frames,
            "plain",
            &[("FLUIDLAB_CUDA_GRAPHS", "0")],
        );
        println!(
            "{name}: {} captures, {} graph launches in {frames} frames",
            graphs.captures, graphs.graph_launches
        );
        assert!(graphs.graph_launches > 0, "{name}: nothing graphed");
        if name == "stir" {
            assert_eq!((graphs.captures, graphs.graph_launches), (4, 26), "{name}");
        }
        assert_eq!(graphs.fields.len(), plain.fields.len(), "{name}");
        for ((file, a), (_, b)) in graphs.fields.iter().zip(&plain.fields) {
            assert!(a == b, "{name}: {file} differs with graphs on");
        }
    }
}

/// Set in the child process that runs [`panicked_recording_child`] on the emulated driver.
const PANIC_CHILD: &str = "FLUIDLAB_INK_PANIC_CHILD";

/// A panic inside a step's recording (`fluidlab::cuda::graph::panic_in_next_capture`, at its
/// 12th launch: after the advection's swaps), caught by the caller, leaves the arrays and the
/// kept graphs as before the step: the ping-pong arrays arranged as at its start (the fields
/// read back bit for bit those of a solver without graphs that did not take the step) and the
/// graphs kept. (The step's key is no longer marked seen once, so its retry runs launch by
/// launch.) `karman` at 144 × 64: frames 0–3 the preset's (launched twice, then 2 captured),
/// 4–13 with 2 V-cycles (4–5 launched; 6 panics in its capture, then runs again, launched
/// as a key seen once; 7–8 capture, 9–13 replay), 14–17 the preset's again, replaying frames
/// 2–3's graphs: 4 captured, 9 replayed, 5 launch by launch, bit for bit equal to graphs off
/// at every frame. Mutants: the arrays not put back after the panic, "after the panic: …
/// differs"; the cache not put back (the recording's empty stand-in stays), "after the panic:
/// left (0, 0, 4), right (2, 0, 4)".
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_panic_in_a_recording_leaves_the_arrays_and_the_graphs_as_before() {
    if std::env::var_os(PANIC_CHILD).is_some() {
        panicked_recording_child();
        return;
    }
    ink_graph_runs::in_child(
        "a_panic_in_a_recording_leaves_the_arrays_and_the_graphs_as_before",
        PANIC_CHILD,
        "karman, a panic in a recording",
    );
}

/// The run [`a_panic_in_a_recording_leaves_the_arrays_and_the_graphs_as_before`] checks, in a
/// process on the emulated driver.
fn panicked_recording_child() {
    let (scene, params, mut graphs, mut plain) = karman_graphed_and_plain();
    let dt = params.dt;
    let same = |a: &fluidlab::sims::ink::cuda::CudaInk,
                b: &fluidlab::sims::ink::cuda::CudaInk,
                what: &str| {
        ink_graph_runs::same_bits(&a.read_back().unwrap(), &b.read_back().unwrap(), what)
    };
    for frame in 0..18u32 {
        let mut p = params.clone();
        if (4..14).contains(&frame) {
            p.iterations = 2;
        }
        let t = frame as f32 * dt;
        let stamps = scene.stamps(t, t + dt);
        graphs.params = p.clone();
        plain.params = p;
        if frame == 6 {
            fluidlab::cuda::graph::panic_in_next_capture(12);
            let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                graphs.step(dt, &stamps, true)
            }));
            assert!(step.is_err(), "frame 6 did not panic in its capture");
            same(&graphs, &plain, "after the panic");
            assert_eq!(graphs.graph_counts(), (2, 0, 4), "after the panic");
        }
        for cuda in [&mut graphs, &mut plain] {
            cuda.step(dt, &stamps, true).unwrap();
            cuda.end_frame().unwrap();
        }
        same(&graphs, &plain, &format!("frame {frame}"));
        assert_eq!(graphs.totals, plain.totals, "frame {frame}");
    }
    println!("karman, a panic in a recording: {}", graphs.graph_summary());
    let (captured, replayed, launched) = graphs.graph_counts();
    assert!(
        (captured, replayed, launched) == (4, 9, 5),
        "({captured}, {replayed}, {launched}) captured, replayed, launched where (4, 9, 5)"
    );
}

/// `karman` at 144 × 64 (one multigrid level above the one-block tail, an outflow), its
/// parameters, and [`ink_graph_runs::graphed_and_plain`]'s two solvers of it.
fn karman_graphed_and_plain() -> (
    fluidlab::sims::ink::scene::InkScene,
    fluidlab::sims::ink::params::InkParams,
    fluidlab::sims::ink::cuda::CudaInk,
    fluidlab::sims::ink::cuda::CudaInk,
) {
    let source = fluidlab::scene::Source::load("karman").unwrap();
    let scene = fluidlab::sims::ink::scene::InkScene::from_source(&source).unwrap();
    let mut params = scene.params.clone();
    (params.cells_x, params.cells_y) = (144, 64);
    let (graphs, plain) = ink_graph_runs::graphed_and_plain(&params, &|x, y| scene.solid(x, y));
    (scene, params, graphs, plain)
}
