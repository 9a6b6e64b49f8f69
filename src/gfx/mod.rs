//! Shared OpenGL plumbing, kind-agnostic: the headless context, shader programs with their
//! uniforms, render targets, full-screen passes, tone mapping and FXAA, cameras, pass timing, the sky and PNG capture.

pub mod camera;
pub mod capture;
pub mod context;
pub mod fullscreen;
pub mod headless;
pub mod post;
pub mod program;
pub mod skybox;
pub mod targets;
pub mod timing;

use anyhow::{bail, Result};
use glow::HasContext;

/// Where a frame goes: a framebuffer (`None`: the window's) of a size in pixels.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    /// Target framebuffer; `None` is the default framebuffer.
    pub framebuffer: Option<glow::Framebuffer>,
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// Pixels along the left and the top edge that the viewer's panels cover (0 headless): a
    /// flat picture is letterboxed in the rest (the 3D kinds' default camera frames its scene
    /// beside the panel instead, [`crate::viewer::state::framing`]).
    pub covered: [u32; 2],
}

/// Fails with the GL error code and `what` when `glGetError` reports one.
pub fn check_gl(gl: &glow::Context, what: &str) -> Result<()> {
    // SAFETY: an error query on this thread's current context.
    let error = unsafe { gl.get_error() };
    if error == glow::NO_ERROR {
        Ok(())
    } else {
        bail!("OpenGL error 0x{error:04x} in {what}")
    }
}
