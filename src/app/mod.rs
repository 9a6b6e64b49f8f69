//! Front ends: the window ([`window`], winit + glutin + imgui) and headless rendering
//! ([`headless`], EGL surfaceless), both driving the shared [`crate::render::Renderer`], and the
//! viewer's state machine ([`state`]) that both the window and the tests drive.

pub mod headless;
pub mod state;
pub mod window;
