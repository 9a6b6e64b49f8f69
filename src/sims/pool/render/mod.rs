//! The pool's renderer (placeholder until the GLSL passes land): clears the output to the
//! water's colour. Its interface is the one `sim.rs` uses: a surface texture of one RGBA32F
//! texel per node — (offset x, height, offset z, 1 if fixed) — written by an upload (CPU) or
//! through interop (CUDA), and `draw`.

use crate::gfx::camera::Camera;
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use anyhow::{anyhow, Result};
use glow::HasContext;
use std::rc::Rc;

/// What the pool shows.
pub const VIEWS: [&str; 4] = ["surface", "wireframe", "nodes", "caustics"];

/// What a frame draws besides the surface texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawScene {
    /// Nodes per side.
    pub nodes: usize,
    /// The pool's side, m (it spans [0, size]² in x and z).
    pub size: f32,
    /// The water's depth, m (the floor is y = −depth).
    pub depth: f32,
    /// Towards the sun (any length).
    pub light: [f32; 3],
    /// Fine-detail normal map.
    pub detail: bool,
    /// Index into [`VIEWS`].
    pub view: usize,
}

/// The GL objects of the pool's passes.
pub struct PoolRenderer {
    gl: Rc<glow::Context>,
    clock: PassClock,
    surface: glow::Texture,
    nodes: usize,
}

impl PoolRenderer {
    /// The renderer for a grid of `nodes`² on `gl`.
    pub fn new(gl: Rc<glow::Context>, clock: PassClock, nodes: usize) -> Result<PoolRenderer> {
        // SAFETY: GL calls on the current context the front end attached.
        let surface = unsafe {
            let texture = gl.create_texture().map_err(|e| anyhow!("texture: {e}"))?;
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA32F as i32,
                nodes as i32,
                nodes as i32,
                0,
                glow::RGBA,
                glow::FLOAT,
                None,
            );
            texture
        };
        Ok(PoolRenderer {
            gl,
            clock,
            surface,
            nodes,
        })
    }

    /// The GL context.
    pub fn gl(&self) -> &Rc<glow::Context> {
        &self.gl
    }

    /// How pass times are measured.
    pub fn clock(&self) -> PassClock {
        self.clock
    }

    /// Nodes per side of the surface texture.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The surface texture (RGBA32F, nodes × nodes), for CUDA interop.
    pub fn surface_texture(&self) -> glow::Texture {
        self.surface
    }

    /// Uploads the surface's texels (row j = nodes with z = j·h).
    pub fn upload(&mut self, texels: &[[f32; 4]]) {
        let gl = &self.gl;
        // SAFETY: GL calls on the current context; the texture holds nodes² RGBA32F texels
        // and `texels` as many.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.surface));
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                self.nodes as i32,
                self.nodes as i32,
                glow::RGBA,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(bytemuck::cast_slice(texels)),
            );
        }
    }

    /// Draws the pool seen by `camera` into `output`.
    pub fn draw(&mut self, _camera: &Camera, output: Output, _scene: &DrawScene) -> Result<()> {
        let gl = &self.gl;
        // SAFETY: GL calls on the current context; the framebuffer is the front end's.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            gl.viewport(0, 0, output.width as i32, output.height as i32);
            gl.clear_color(0.1, 0.4, 0.6, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
        }
        Ok(())
    }

    /// Seconds of each pass of the latest measured frame.
    pub fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        Vec::new()
    }

    /// Deletes the GL objects (the context is current).
    pub fn delete(self) {
        // SAFETY: GL call on the current context; the texture is this renderer's.
        unsafe { self.gl.delete_texture(self.surface) };
    }
}
