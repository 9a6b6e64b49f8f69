//! The ink's interactive steps replay their CUDA graphs (`src/sims/ink/cuda/step_graph.rs`) on
//! the emulated driver (tests/support/emulated_driver.rs): a brush dragged across the dye and a
//! disc moved through it replay a handful of graphs, bit for bit equal to launches
//! (`FLUIDLAB_CUDA_GRAPHS=0`), and each field of the step's key that the solver can change
//! while the parameters stay the same captures anew. Needs what the emulated driver needs (a
//! C++20 compiler and cuda.h, scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;
#[path = "support/ink_graph_runs.rs"]
mod ink_graph_runs;

use emulated_driver::Flavour;
use ink_graph_runs::{run, small_preset};

/// A brush dragged across `dye` (48 × 48) for its 20 steps (a stroke of four stamps a step,
/// three lattices each: the user's drag as `Drag::stamps` lays it) and `stir` (96 × 48) for 40
/// frames (its stripes painted for 6 frames, its disc moving from frame 12: the multigrid's
/// fluid counts change most steps). The splat records and the levels' fluid counts are data
/// the kernels read from device memory, so the steps replay: dye 4 captures (frame 1 with the
/// t = 0 splats, frames 2–3 the stroke from its two arrangements, frame 19 the t = 0.3
/// splats) and 20 graph launches, stir 4 captures and 40 graph launches; the fields are those
/// of launches bit for bit. The old code, which took the records and counts by value, ran
/// every painted step and most moving-disc steps launch by launch: dye 0 captures, 0 graph
/// launches (20 steps launched); stir 4 captures, 10 graph launches (30 steps launched). With
/// the levels' fluid counts left in the key, stir captures 15 graphs.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_dragged_brush_and_a_moving_disc_replay_their_graphs() {
    let driver = emulated_driver::build(Flavour::Plain);
    let stroke = "[[stroke]]\nduration = 0.332\npath = [[0.1, 0.2], [0.9, 0.8]]\nradius = 0.03\n\
                  ink = [20.0, 10.0, 5.0]\nforce = 30.0\n\n[display]";
    /// Preset, its cells (from, to), text edits, frames, (captures, graph launches).
    type Case<'a> = (
        &'a str,
        (&'a str, &'a str),
        Vec<(&'a str, &'a str)>,
        u32,
        (usize, usize),
    );
    let cases: [Case; 2] = [
        (
            "dye",
            ("cells = [256, 256]", "cells = [48, 48]"),
            vec![("[display]", stroke)],
            20,
            (4, 20),
        ),
        (
            "stir",
            ("cells = [256, 128]", "cells = [96, 48]"),
            vec![],
            40,
            (4, 40),
        ),
    ];
    for (name, cells, edits, frames, counts) in cases {
        let dir = tempfile::tempdir().unwrap();
        let scene = small_preset(dir.path(), name, cells, &edits);
        let graphs = run(&driver, &scene, frames, "graphs", &[]);
        let plain = run(
            &driver,
            &scene,
            frames,
            "plain",
            &[("FLUIDLAB_CUDA_GRAPHS", "0")],
        );
        println!(
            "{name}: {} captures, {} graph launches in {frames} frames; {} kernels",
            graphs.captures,
            graphs.graph_launches,
            graphs.kernels.len()
        );
        assert_eq!((plain.captures, plain.graph_launches), (0, 0), "{name}");
        assert_eq!(
            (graphs.captures, graphs.graph_launches),
            counts,
            "{name}: (captures, graph launches) in {frames} frames"
        );
        assert!(graphs.kernels == plain.kernels, "{name}: other kernels");
        assert_eq!(graphs.fields.len(), plain.fields.len(), "{name}");
        for ((file, a), (_, b)) in graphs.fields.iter().zip(&plain.fields) {
            assert!(a == b, "{name}: {file} differs with graphs on");
        }
    }
}

/// Set in the child process that runs [`key_fields_child`] on the emulated driver.
const CHILD: &str = "FLUIDLAB_INK_REPLAY_CHILD";

/// The fields of the step's key the solver changes while its parameters stay the same, each
/// changed in turn (`dye` at 48 × 48, a stationary push every step, two frames each): an
/// obstacle added to the empty box (`obstacles`), no-slip walls by `set_boundary` while the
/// frame's parameters stay the preset's (`grid`: the solver keeps the record apart from
/// `params`, as `InkSolver::clear` does), frames of three steps (`last` on the third only), a
/// step of half the dt (`dt`), and every multigrid level launched by itself (`tail_cells`).
/// Each change captures two graphs (the step's two arrangements) and the solver stays bit for
/// bit equal to one without graphs (u, v, p, the ink, the totals, the report). With the field
/// left out of the key (each checked by a mutant of `StepKey`) the phase captures nothing and
/// replays the graphs of before: a stale close_walls, wall record or dt ("frame 4: u differs
/// with graphs on", "frame 6: u differs …", "frame 10: u differs …"); for `last` and
/// `tail_cells`, whose stale graphs happen to give the same bits here, "frame 8: 0 captures
/// where 2" and "frame 12: 0 captures where 1".
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn each_key_field_the_solver_changes_captures_anew() {
    if std::env::var_os(CHILD).is_some() {
        key_fields_child();
        return;
    }
    ink_graph_runs::in_child(
        "each_key_field_the_solver_changes_captures_anew",
        CHILD,
        "dye, key fields",
    );
}

/// The run [`each_key_field_the_solver_changes_captures_anew`] checks, in a process on the
/// emulated driver.
fn key_fields_child() {
    use fluidlab::sims::ink::cuda::CudaInk;
    use fluidlab::sims::ink::scene::InkScene;
    use fluidlab::sims::ink::{Stamp, Walls};
    let source = fluidlab::scene::Source::load("dye").unwrap();
    let scene = InkScene::from_source(&source).unwrap();
    let mut params = scene.params.clone();
    (params.cells_x, params.cells_y) = (48, 48);
    let solver = |graphs: &str| {
        std::env::set_var("FLUIDLAB_CUDA_GRAPHS", graphs);
        let mut cuda = CudaInk::new_on(0, params.clone(), &|_, _| false).unwrap();
        cuda.set_stage_timing(false);
        cuda
    };
    let (mut graphs, mut plain) = (solver("1"), solver("0"));
    let push = [Stamp {
        position: [0.3, 0.45],
        radius: 0.06,
        velocity: [2.0, 0.6],
        ink: [3.0, 2.0, 1.0],
        per_second: true,
        direction: None,
    }];
    let n = params.cells_x;
    let dx = params.dx();
    let disc: Vec<bool> = (0..n * n)
        .map(|k| {
            let (x, y) = (((k % n) as f32 + 0.5) * dx, ((k / n) as f32 + 0.5) * dx);
            (x - 0.62).hypot(y - 0.5) <= 0.1
        })
        .collect();
    let mut walls = params.boundary;
    walls.walls = Walls::NoSlip;
    let bits = |f: &fluidlab::sims::ink::fields::Field| {
        f.data.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    };
    let mut captured = 0;
    for frame in 0..14u32 {
        for cuda in [&mut graphs, &mut plain] {
            match frame {
                4 => cuda.set_solid(disc.clone()).unwrap(),
                6 => cuda.set_boundary(walls).unwrap(),
                12 => cuda.set_multigrid_tail_cells(0),
                _ => {}
            }
            // The preset's parameters every frame (after set_boundary too).
            cuda.params = params.clone();
            let (steps, dt) = match frame {
                8..=9 => (3, params.dt),
                10..=11 => (1, 0.5 * params.dt),
                _ => (1, params.dt),
            };
            for step in 0..steps {
                cuda.step(dt, &push, step + 1 == steps).unwrap();
            }
            cuda.end_frame().unwrap();
        }
        let (a, b) = (graphs.read_back().unwrap(), plain.read_back().unwrap());
        for (name, x, y) in [
            ("u", &a.flow.u, &b.flow.u),
            ("v", &a.flow.v, &b.flow.v),
            ("p", &a.flow.p, &b.flow.p),
            ("ink 0", &a.ink.channels[0], &b.ink.channels[0]),
        ] {
            assert!(
                bits(x) == bits(y),
                "frame {frame}: {name} differs with graphs on"
            );
        }
        assert_eq!(graphs.totals, plain.totals, "frame {frame}");
        assert_eq!(graphs.report, plain.report, "frame {frame}");
        // Each phase's first two frames capture two graphs (frames 0–1: the start; 8: two of
        // its three steps, the third replays frame 6's), its other frames none.
        let now = graphs.graph_counts().0;
        let expected = match frame {
            0 | 1 | 4 | 5 | 6 | 7 | 10 | 11 | 12 | 13 => 1,
            8 => 2,
            _ => 0,
        };
        assert_eq!(
            now - captured,
            expected,
            "frame {frame}: {} captures where {expected}",
            now - captured
        );
        captured = now;
    }
    println!("dye, key fields: {}", graphs.graph_summary());
    assert_eq!(graphs.graph_counts().2, 0, "{}", graphs.graph_summary());
}
