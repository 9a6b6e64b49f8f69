//! The mouse as the window feeds it to the viewer's state ([`AppState::mouse_button`],
//! [`AppState::cursor_moved`]): a left press the kind takes starts its drag at once, so a
//! click without motion drops on the pool, paints ink and grabs a cloth node, and letting go
//! without motion lets go; any other left drag orbits the camera; a press on a panel is the
//! panel's.

use fluidlab::gfx::camera::Camera;
use fluidlab::scene::Source;
use fluidlab::sims::ink::InkSim;
use fluidlab::sims::particles::{ParticlesSim, State};
use fluidlab::sims::pool::PoolSim;
use fluidlab::sims::{self, Backend, OpenOptions};
use fluidlab::viewer::state::{AppState, Edit};
use glam::Vec3;
use winit::event::MouseButton;

/// The window's size at start.
const SIZE: [u32; 2] = [1280, 720];

/// A 64² pool at rest, no drops.
const POOL: &str = "kind = \"pool\"\n[pool]\nnodes = 64\nsize = 2.0\ndepth = 1.0\n";

/// A 32² ink box with nothing painted.
const INK: &str = "kind = \"ink\"\n[grid]\ncells = [32, 32]\n";

fn open(text: &str) -> AppState {
    let source = Source::parse(text, "test", "test.toml").expect("scene");
    let sim = sims::open(&source, &OpenOptions::default()).expect("opens on the CPU");
    let mut state = AppState::with_sim(sim, "test", Backend::Cpu);
    state.apply(Edit::TogglePause).expect("pause");
    state
}

/// Where `camera` shows `point` in a window of `SIZE`, pixels from the top-left.
fn pixel(camera: &Camera, point: Vec3) -> [f32; 2] {
    let (w, h) = (SIZE[0] as f32, SIZE[1] as f32);
    let ndc = (camera.projection(w / h) * camera.view()).project_point3(point);
    [(ndc.x + 1.0) * 0.5 * w, (1.0 - ndc.y) * 0.5 * h]
}

fn click(state: &mut AppState, at: [f32; 2]) {
    state.cursor_moved(at, SIZE);
    state.mouse_button(MouseButton::Left, true, false, SIZE);
    state.mouse_button(MouseButton::Left, false, false, SIZE);
}

fn step(state: &mut AppState) {
    state.apply(Edit::StepOnce).expect("step request");
    assert!(state.advance().expect("step"));
}

fn pool(state: &mut AppState) -> &mut PoolSim {
    sims::downcast::<PoolSim>(state.sim.as_mut()).expect("a pool")
}

/// The largest |height| of the pool's surface, m.
fn highest(state: &mut AppState) -> f32 {
    let cpu = pool(state).solver.as_cpu().expect("the CPU pool");
    cpu.surface.height.iter().fold(0.0, |m, h| m.max(h.abs()))
}

#[test]
fn a_click_without_motion_on_the_water_drops_and_leaves_the_camera() {
    let mut state = open(POOL);
    let camera = state.camera;
    pool(&mut state).draw_camera(camera);
    let centre = pixel(&camera, Vec3::new(1.0, 0.0, 1.0));
    click(&mut state, centre);
    assert!(!state.pointer.kind_drag(), "let go");
    step(&mut state);
    let highest = highest(&mut state);
    // The drop's amplitude is 0.01 m (the default): its crest is of that order.
    assert!(highest > 1e-3, "no drop: highest |height| {highest} m");
    assert_eq!(state.camera, camera);
}

#[test]
fn a_drag_that_starts_off_the_water_orbits_and_drops_nothing() {
    let mut state = open(POOL);
    let camera = state.camera;
    pool(&mut state).draw_camera(camera);
    let deck = pixel(&camera, Vec3::new(-0.5, 0.0, 2.4));
    assert_eq!(
        pool(&mut state).pick(deck, SIZE),
        None,
        "{deck:?} is on the deck"
    );
    state.cursor_moved(deck, SIZE);
    state.mouse_button(MouseButton::Left, true, false, SIZE);
    assert!(!state.pointer.kind_drag());
    // Across the water: the camera's drag stays the camera's.
    let centre = pixel(&camera, Vec3::new(1.0, 0.0, 1.0));
    state.cursor_moved(centre, SIZE);
    state.mouse_button(MouseButton::Left, false, false, SIZE);
    assert_ne!(state.camera.yaw, camera.yaw, "no orbit");
    step(&mut state);
    assert_eq!(highest(&mut state), 0.0, "a drop fell");
}

#[test]
fn a_press_on_a_panel_is_the_panels() {
    let mut state = open(POOL);
    let camera = state.camera;
    pool(&mut state).draw_camera(camera);
    let centre = pixel(&camera, Vec3::new(1.0, 0.0, 1.0));
    state.cursor_moved(centre, SIZE);
    state.mouse_button(MouseButton::Left, true, true, SIZE);
    state.cursor_moved([centre[0] + 80.0, centre[1]], SIZE);
    state.mouse_button(MouseButton::Left, false, true, SIZE);
    state.wheel(2.0, true);
    assert_eq!(state.camera, camera);
    step(&mut state);
    assert_eq!(highest(&mut state), 0.0, "a drop fell");
    state.wheel(2.0, false);
    assert!(
        state.camera.distance < camera.distance,
        "the wheel zooms in"
    );
}

#[test]
fn a_click_without_motion_on_the_ink_paints() {
    let mut state = open(INK);
    let ink = |state: &mut AppState| {
        let sim = sims::downcast::<InkSim>(state.sim.as_mut()).expect("ink");
        sim.solver.totals().0
    };
    assert_eq!(ink(&mut state), 0.0);
    // The window's centre is on the picture however it is letterboxed beside the panel.
    click(&mut state, [700.0, 360.0]);
    step(&mut state);
    let painted = ink(&mut state);
    assert!(painted > 1e-5, "no ink: {painted} m²");
}

#[test]
fn a_click_without_motion_grabs_a_cloth_node_and_lets_it_go() {
    let mut state = AppState::open("cloth", Backend::Cpu).expect("the cloth preset");
    state.apply(Edit::TogglePause).expect("pause");
    let camera = state.camera;
    let particles = sims::downcast::<ParticlesSim>(state.sim.as_mut()).expect("particles");
    particles.set_camera(camera);
    let State::Body(body) = &particles.state else {
        panic!("a body");
    };
    let pinned = body.pinned.clone();
    let middle = body.position[body.position.len() / 2 + 16];
    let at = pixel(&camera, middle);
    state.cursor_moved(at, SIZE);
    state.mouse_button(MouseButton::Left, true, false, SIZE);
    assert!(state.pointer.kind_drag(), "the press did not grab");
    let particles = sims::downcast::<ParticlesSim>(state.sim.as_mut()).expect("particles");
    let held = particles.grabber.held.expect("a node held");
    let State::Body(body) = &particles.state else {
        panic!("a body");
    };
    assert!(body.pinned[held.node], "held nodes are pinned while held");
    state.mouse_button(MouseButton::Left, false, false, SIZE);
    let particles = sims::downcast::<ParticlesSim>(state.sim.as_mut()).expect("particles");
    assert!(
        particles.grabber.held.is_none(),
        "still held after letting go"
    );
    let State::Body(body) = &particles.state else {
        panic!("a body");
    };
    assert_eq!(body.pinned, pinned, "the pins are not back");
    assert_eq!(state.camera, camera);
}
