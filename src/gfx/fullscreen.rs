//! Full-screen passes: one triangle covering the viewport, its corners made from `gl_VertexID`
//! (`shaders/common/fullscreen.vert`, `shaders/common/skybox.vert`), and [`Present`], which
//! copies a texture to the bound framebuffer.

use super::program::{shader, Program, Uniform};
use anyhow::{anyhow, Result};
use glow::HasContext;

/// The vertex array a full-screen triangle draws with: empty, core profile needs one bound.
pub struct FullscreenTriangle {
    vertex_array: glow::VertexArray,
}

impl FullscreenTriangle {
    /// Creates the (empty) vertex array.
    pub fn new(gl: &glow::Context) -> Result<FullscreenTriangle> {
        // SAFETY: GL call on this thread's current context (front ends make it current before
        // calling the renderer).
        let vertex_array =
            unsafe { gl.create_vertex_array() }.map_err(|e| anyhow!("vertex array: {e}"))?;
        Ok(FullscreenTriangle { vertex_array })
    }

    /// Draws the triangle with the bound program.
    pub fn draw(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context; the vertex array is this one's
        // and alive.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(glow::TRIANGLES, 0, 3);
        }
    }

    /// Binds the (empty) vertex array, for draws whose vertices come from `gl_VertexID` alone.
    pub fn bind(&self, gl: &glow::Context) {
        // SAFETY: GL call on this thread's current context; the vertex array is this one's.
        unsafe { gl.bind_vertex_array(Some(self.vertex_array)) };
    }

    /// Frees the vertex array.
    pub fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL call on this thread's current context; the vertex array is this one's.
        unsafe { gl.delete_vertex_array(self.vertex_array) };
    }
}

/// `present`: copies a colour texture to the bound framebuffer.
pub struct Present {
    program: Program,
    color_texture: Uniform,
}

impl Present {
    /// Builds the program.
    pub fn new(gl: &glow::Context) -> Result<Present> {
        let program = Program::new(
            gl,
            &shader!("present", "common/fullscreen.vert", "common/present.frag"),
        )?;
        Ok(Present {
            color_texture: program.uniform(gl, "color_texture")?,
            program,
        })
    }

    /// Draws `texture` over the whole bound framebuffer through texture unit 0.
    pub fn draw(&self, gl: &glow::Context, texture: glow::Texture, triangle: &FullscreenTriangle) {
        self.program.bind(gl);
        self.color_texture.set(gl, 0);
        // SAFETY: GL calls on this thread's current context; `texture` is the caller's, alive.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        }
        triangle.draw(gl);
    }

    /// Frees the program.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}
