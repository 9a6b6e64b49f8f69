//! Front ends: the window ([`window`], winit + glutin + imgui) and headless rendering
//! ([`crate::gfx::headless`], EGL surfaceless), both driving the shared [`crate::sims::pbf::render::Renderer`], and the
//! viewer's state machine ([`state`]) that both the window and the tests drive.

pub mod keys;
pub mod panel;
pub mod pointer;
pub mod state;
pub mod window;
