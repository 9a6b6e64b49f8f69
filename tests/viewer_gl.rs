//! The viewer, in this process under Xvfb, with a solver that probes GL: when the window closes,
//! the solver lets go of the particle buffer while the window's GL context is still current and
//! the buffer exists (issue 16). Its own test binary: it sets DISPLAY for the process, and
//! winit allows one event loop per process.

use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::{Backend, PbfSim};
use fluidlab::viewer::state::AppState;
use fluidlab::viewer::window::{self, ViewerOptions};
use winit::event_loop::EventLoop;
use winit::platform::x11::EventLoopBuilderExtX11;

mod gl_probe;
mod xvfb;

#[test]
fn the_viewer_releases_the_solver_gl_hold_before_closing_the_window() {
    let xvfb = xvfb::start_xvfb();
    // The only test of this binary: no other thread reads the environment meanwhile.
    std::env::set_var("DISPLAY", &xvfb.display);
    std::env::remove_var("WAYLAND_DISPLAY");
    let scene = Scene::parse(xvfb::BLOCK_SCENE, "block", "viewer GL test").expect("valid scene");
    let (created, log) = gl_probe::GlProbe::of(&scene);
    let sim = PbfSim::with_solver(scene, Backend::Cpu, 0, created);
    let state = AppState::with_sim(Box::new(sim), "block", Backend::Cpu);
    let event_loop = EventLoop::builder()
        .with_x11()
        .with_any_thread(true)
        .build()
        .expect("an X11 event loop on the Xvfb display");
    let options = ViewerOptions {
        scene: "block".into(),
        backend: Backend::Cpu,
        exit_after_frames: Some(3),
        screenshot: None,
    };
    window::run_in(event_loop, options, state).expect("the viewer runs and exits");
    let log = log.lock().unwrap().clone();
    log.assert_released_while_gl_was_alive();
}
