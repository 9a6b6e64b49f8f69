//! The viewer's state machine without any window or GPU: PBF's edits reach the solver, restarts
//! rebuild the scene from the set-up, step mode advances exactly one frame per request, loads
//! replace the simulation through the kind-agnostic door.

use fluidlab::scene::Shape;
use fluidlab::sims;
use fluidlab::sims::pbf::render::View;
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::setup::{FluidShape, CONTAINERS};
use fluidlab::sims::pbf::{backend, Aabb, Backend, PbfEdit, PbfSim};
use fluidlab::viewer::keys;
use fluidlab::viewer::panel::Action;
use fluidlab::viewer::state::{AppState, Edit, RunMode};
use glam::Vec3A;
use std::sync::atomic::{AtomicUsize, Ordering};
use winit::keyboard::KeyCode;

mod gl_probe;

/// The dam-break preset with a coarse spacing: 1920 particles, fast on any CPU.
fn small_scene() -> Scene {
    let mut scene = Scene::load("dam-break").expect("preset");
    scene.params.spacing = 0.05;
    scene.params.kernel_radius = 0.1;
    scene.params.calibrate_mass();
    scene
}

fn small_state() -> AppState {
    let scene = small_scene();
    let created = backend::create(&scene, Backend::Cpu).expect("CPU solver");
    let sim = PbfSim::with_solver(scene, Backend::Cpu, 0, created);
    AppState::with_sim(Box::new(sim), "dam-break", Backend::Cpu)
}

/// The running simulation as PBF.
fn pbf(state: &mut AppState) -> &mut PbfSim {
    sims::downcast::<PbfSim>(state.sim.as_mut()).expect("a pbf simulation")
}

#[test]
fn a_live_parameter_edit_reaches_the_solver_on_the_next_step() {
    let mut state = small_state();
    let mut params = pbf(&mut state).live_params.clone();
    params.gravity = [6.0, -9.81, 0.0];
    params.xsph_c = 0.2;
    params.iterations = 6;
    pbf(&mut state)
        .apply(PbfEdit::LiveParams(params.clone()))
        .expect("live edit");
    assert_ne!(
        pbf(&mut state).solver.params().gravity,
        params.gravity,
        "applied before the step"
    );
    assert!(state.advance().expect("step"));
    assert_eq!(pbf(&mut state).solver.params(), &params);
    let snapshot = pbf(&mut state).solver.snapshot().unwrap();
    let mean_vx: f32 =
        snapshot.velocities.iter().map(|v| v.x).sum::<f32>() / snapshot.velocities.len() as f32;
    assert!(
        mean_vx > 0.0,
        "sideways gravity did not push the fluid: {mean_vx}"
    );
}

/// The statistics panel's controls: switching to the density-error rule changes the iterations
/// the solver runs on the next step, and the coarse correction can be switched off live.
#[test]
fn the_density_error_rule_and_the_coarse_correction_switch_live() {
    let mut state = small_state();
    assert!(state.advance().expect("step"));
    assert_eq!(
        pbf(&mut state).solver.solve_report().iterations,
        4.0,
        "the preset's fixed count"
    );
    let mut params = pbf(&mut state).live_params.clone();
    params.max_density_error = 1e-6;
    params.min_iterations = 2;
    params.max_iterations = 7;
    params.coarse_correction = false;
    pbf(&mut state)
        .apply(PbfEdit::LiveParams(params.clone()))
        .expect("live edit");
    assert!(state.advance().expect("step"));
    assert_eq!(pbf(&mut state).solver.params(), &params);
    let report = pbf(&mut state).solver.solve_report();
    // 10⁻⁶ is out of reach in a few iterations of a collapsing column: the rule runs the most.
    assert_eq!(report.iterations, 7.0, "{report:?}");
}

#[test]
fn a_live_edit_of_a_seed_time_parameter_is_refused_and_nothing_changes() {
    let mut state = small_state();
    let mut params = pbf(&mut state).live_params.clone();
    params.spacing = 0.03;
    let sim = pbf(&mut state);
    let error = sim.apply(PbfEdit::LiveParams(params)).unwrap_err();
    assert!(format!("{error}").contains("spacing"), "{error}");
    assert_eq!(sim.live_params, *sim.solver.params());
    let mut p = sim.live_params.clone();
    p.dt = -1.0;
    let error = sim.apply(PbfEdit::LiveParams(p)).unwrap_err();
    assert!(format!("{error}").contains("dt"), "{error}");
}

#[test]
fn restart_rebuilds_the_scene_with_the_chosen_shape_position_and_container() {
    let mut state = small_state();
    state.advance().expect("step");
    let mut setup = pbf(&mut state).setup.clone();
    setup.container = Some(1);
    setup.shape = FluidShape::Sphere;
    setup.position = [0.5, 0.6, 0.5];
    setup.size = 0.4;
    pbf(&mut state)
        .apply(PbfEdit::Setup(setup))
        .expect("set-up");
    state.apply(Edit::Restart).expect("restart");

    assert_eq!(CONTAINERS[1].1, [1.0, 1.0, 1.0]);
    assert_eq!(state.sim.bounds(), Aabb::new([0.0; 3], [1.0; 3]));
    let sim = pbf(&mut state);
    assert_eq!(sim.scene.container, Aabb::new([0.0; 3], [1.0; 3]));
    assert_eq!(sim.scene.fluids.len(), 1);
    let Shape::Sphere { center, radius } = sim.scene.fluids[0].shape else {
        panic!("expected a sphere, got {:?}", sim.scene.fluids[0].shape);
    };
    assert!(
        (center - Vec3A::new(0.5, 0.6, 0.5)).length() < 1e-6,
        "{center}"
    );
    assert!((radius - 0.2).abs() < 1e-6);
    assert_eq!(sim.solver.steps_taken(), 0);
    assert_eq!(
        sim.solver.particle_count() as u64,
        sim.scene.particle_count()
    );
    for p in sim.solver.snapshot().unwrap().positions {
        assert!(
            (p - center).length() <= radius + 1e-4,
            "particle {p} outside the sphere"
        );
    }
}

#[test]
fn restart_moves_a_body_that_would_stick_out_back_inside() {
    let mut state = small_state();
    let mut setup = pbf(&mut state).setup.clone();
    setup.shape = FluidShape::Cube;
    setup.position = [1.0, 1.0, 0.0];
    setup.size = 0.5;
    pbf(&mut state)
        .apply(PbfEdit::Setup(setup))
        .expect("set-up");
    state.apply(Edit::Restart).expect("restart");
    let sim = pbf(&mut state);
    let Shape::Box(block) = sim.scene.fluids[0].shape else {
        panic!("expected a box");
    };
    let container = sim.scene.container;
    assert!(block.min.cmpge(container.min).all() && block.max.cmple(container.max).all());
    assert!(
        (block.max.x - container.max.x).abs() < 1e-6
            && (block.min.z - container.min.z).abs() < 1e-6
    );
}

#[test]
fn step_mode_advances_exactly_one_frame_per_request() {
    let mut state = small_state();
    let substeps = u64::from(pbf(&mut state).solver.params().substeps);
    state
        .apply(Edit::RunMode(RunMode::StepByStep))
        .expect("mode");
    for _ in 0..3 {
        assert!(!state.advance().expect("no step"));
    }
    assert_eq!(pbf(&mut state).solver.steps_taken(), 0);
    state.apply(Edit::StepOnce).expect("step request");
    for _ in 0..3 {
        state.advance().expect("advance");
    }
    assert_eq!(pbf(&mut state).solver.steps_taken(), substeps);
    state
        .apply(Edit::RunMode(RunMode::Continuous))
        .expect("mode");
    state.advance().expect("advance");
    assert_eq!(pbf(&mut state).solver.steps_taken(), 2 * substeps);
}

#[test]
fn pause_stops_continuous_running_and_step_still_works_while_paused() {
    let mut state = small_state();
    state.apply(Edit::TogglePause).expect("pause");
    assert!(!state.advance().expect("paused"));
    state.apply(Edit::StepOnce).expect("step");
    assert!(state.advance().expect("one step"));
    assert!(!state.advance().expect("paused again"));
    state.apply(Edit::TogglePause).expect("resume");
    assert!(state.advance().expect("running"));
}

#[test]
fn loading_a_preset_replaces_the_scene_and_a_missing_file_is_reported() {
    let mut state = small_state();
    state.apply(Edit::LoadScene("drop".into())).expect("preset");
    assert_eq!(state.sim.scene_name(), "drop");
    state.apply_or_report(Edit::LoadScene("/nonexistent/scene.toml".into()));
    assert!(state
        .message
        .as_deref()
        .unwrap_or("")
        .contains("no such scene file"));
    assert_eq!(state.sim.scene_name(), "drop");
}

#[test]
fn keys_map_to_the_edits_the_help_lists() {
    let mut state = small_state();
    assert_eq!(keys::action_for_key(KeyCode::Digit2, &state), None);
    assert!(state.sim.key(KeyCode::Digit2), "2 selects a view");
    assert_eq!(pbf(&mut state).render.view, View::Particles);
    assert_eq!(state.sim.views()[state.sim.view()], "particles");
    assert!(state
        .sim
        .key_help()
        .iter()
        .any(|(key, _)| key.contains('7')));
    assert!(!state.sim.key(KeyCode::KeyZ));
    assert_eq!(
        keys::action_for_key(KeyCode::KeyN, &state),
        Some(Action::Edit(Edit::StepOnce))
    );
    assert_eq!(
        keys::action_for_key(KeyCode::Escape, &state),
        Some(Action::Quit)
    );
    assert!(keys::KEYS.iter().any(|(key, _)| key.contains("Space")));
}

#[test]
fn a_failed_step_pauses_drops_pending_steps_and_says_why() {
    let mut state = small_state();
    state.apply(Edit::StepOnce).expect("step request");
    state.pause_after(&anyhow::anyhow!("particle 7 is NaN"));
    assert!(!state.advance().expect("no step after the failure"));
    assert_eq!(pbf(&mut state).solver.steps_taken(), 0);
    let message = state.message.clone().unwrap_or_default();
    assert!(
        message.contains("particle 7") && message.contains("paused"),
        "{message}"
    );
}

/// Probes alive when the factory made the last solver.
static LIVE_AT_CREATION: AtomicUsize = AtomicUsize::new(usize::MAX);

/// A restart lets the running solver go first: it releases its GL hold (the viewer's context is
/// current while edits are applied) and is dropped, and only then is the new solver made, so
/// the new one's memory check does not count the old one's memory (issue 16).
#[test]
fn a_restart_releases_and_drops_the_old_solver_before_making_the_new_one() {
    let scene = small_scene();
    let (created, log) = gl_probe::GlProbe::of(&scene);
    let sim = PbfSim::with_solver(scene, Backend::Cpu, 0, created);
    let mut state = AppState::with_sim(Box::new(sim), "dam-break", Backend::Cpu);
    pbf(&mut state).set_solver_factory(|scene, _, _| {
        LIVE_AT_CREATION.store(gl_probe::LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
        Ok(gl_probe::GlProbe::of(scene).0)
    });
    // What the renderer does every frame: the solver takes hold of its buffer.
    pbf(&mut state)
        .solver
        .write_gl_buffer(7, fluidlab::sims::pbf::RenderScalar::Speed)
        .expect("probe");
    state.apply(Edit::Restart).expect("restart");
    assert_eq!(
        LIVE_AT_CREATION.load(Ordering::SeqCst),
        0,
        "the old solver was still alive when the new one was made"
    );
    let log = log.lock().unwrap().clone();
    assert!(log.dropped && !log.dropped_holding, "{log:?}");
    assert_eq!(log.releases.len(), 1, "{log:?}");
}

/// F1–F3 are the kind's (H is the help): particles switches scenes with them, and the camera
/// frames the new scene's box beside the panel, as the first scene was.
#[test]
fn f_keys_reach_the_kind_and_the_camera_frames_its_new_scene() {
    let mut state = AppState::open("cloth", Backend::Cpu).expect("the cloth preset");
    assert_eq!(keys::action_for_key(KeyCode::F1, &state), None);
    assert_eq!(
        keys::action_for_key(KeyCode::KeyH, &state),
        Some(Action::Edit(Edit::ToggleHelp))
    );
    let camera = state.camera;
    assert!(state.key(KeyCode::F1));
    assert_eq!(state.sim.scene_name(), "fountain");
    assert_ne!(state.camera, camera);
    // Framed as at start: right of the panel, not under it.
    assert_eq!(
        state.camera,
        fluidlab::viewer::state::framing(state.sim.as_ref())
    );
    state.apply(Edit::StepOnce).unwrap();
    assert!(state.advance().unwrap());
}

/// The statistics panel's lines (`Sim::status`, refreshed twice a second without reading the
/// state back on a GPU) say what a frame read back says: the same figures for every kind, so
/// the cheap path is the export path's numbers, not others.
#[test]
fn the_status_lines_carry_the_frames_summary_for_every_kind() {
    for preset in ["ink-painting", "pool", "fountain", "cloth"] {
        let mut state = AppState::open(preset, Backend::Cpu).expect("the preset");
        for _ in 0..5 {
            state.apply(Edit::StepOnce).unwrap();
            assert!(state.advance().unwrap());
        }
        let summary = state.sim.frame().unwrap().summary();
        let status = state.sim.status().unwrap();
        assert!(!summary.is_empty(), "{preset}");
        assert_eq!(status, summary, "{preset}");
    }
    let mut state = small_state();
    for _ in 0..3 {
        state.apply(Edit::StepOnce).unwrap();
        assert!(state.advance().unwrap());
    }
    let summary = state.sim.frame().unwrap().summary();
    let status = state.sim.status().unwrap();
    // PBF's panel adds how the particles reach GL first.
    assert_eq!(status[0], "particles reach GL by -");
    assert_eq!(status[1..], summary[..]);
    // The frame moved: its figures are live, not a fresh state's.
    assert!(
        summary.iter().any(|l| l.contains("kinetic energy")),
        "{summary:?}"
    );
}
