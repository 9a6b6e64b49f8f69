//! The ink picture's way to the screen (part of `sim.rs`): on CUDA the `picture` kernel writes
//! the texture through CUDA–GL interop; the texture is shown letterboxed.

use super::{InkSim, VIEWS};
use crate::gfx::Output;
use anyhow::{anyhow, Result};
use glow::HasContext;

impl InkSim {
    /// On CUDA: the view written by the `picture` kernel straight into the texture (its storage
    /// re-specified first when the size changed, the registration released before). Returns
    /// the picture's size, or `None` for the host path (the CPU solver, or interop refused).
    pub(super) fn draw_through_interop(&mut self) -> Result<Option<(usize, usize)>> {
        let view = VIEWS[self.view];
        let Some(size) = self.solver.picture_size(view) else {
            return Ok(None);
        };
        let ink_gl = self
            .gl
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        if ink_gl.size != size {
            self.solver.release_gl();
            // SAFETY: GL calls on the current context; the texture is this sim's.
            unsafe {
                ink_gl
                    .gl
                    .bind_texture(glow::TEXTURE_2D, Some(ink_gl.texture));
                specify_texture(&ink_gl.gl, size, None);
            }
            ink_gl.size = size;
        }
        let texture = ink_gl.texture.0.get();
        let written = self.solver.write_picture(texture, view, self.background)?;
        Ok(written.then_some(size))
    }

    /// Shows the texture (a picture of `size`) letterboxed in `output`.
    pub(super) fn present(
        &mut self,
        (width, height): (usize, usize),
        output: Output,
    ) -> Result<()> {
        let ink_gl = self
            .gl
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        let gl = &ink_gl.gl;
        let [x, top, w, h] = letterbox(
            width as f32 / height as f32,
            [output.width, output.height],
            output.covered,
        );
        let (x, w, h) = (x as i32, w as i32, h as i32);
        // GL counts rows from the bottom.
        let y = output.height as i32 - top as i32 - h;
        // SAFETY: GL calls on the current context; the framebuffer is the front end's.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            gl.disable(glow::DEPTH_TEST);
            gl.disable(glow::BLEND);
            gl.viewport(0, 0, output.width as i32, output.height as i32);
            gl.clear_color(0.08, 0.08, 0.09, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.viewport(x, y, w.max(1), h.max(1));
        }
        ink_gl.present.draw(gl, ink_gl.texture, &ink_gl.triangle);
        // SAFETY: as above.
        unsafe { gl.viewport(0, 0, output.width as i32, output.height as i32) };
        crate::gfx::check_gl(gl, "ink draw")
    }
}

/// Where a picture of `aspect` (width / height) goes in an output of `size` pixels whose left
/// and top `covered` pixels are under panels: the largest rectangle of that aspect centred in
/// the rest, as [left, top, width, height] pixels from the output's top-left. Drawing and the
/// pointer both place the picture by it.
pub(super) fn letterbox(aspect: f32, size: [u32; 2], covered: [u32; 2]) -> [f32; 4] {
    let left = covered[0].min(size[0] / 2) as f32;
    let top = covered[1].min(size[1] / 2) as f32;
    let (free_w, free_h) = (size[0] as f32 - left, size[1] as f32 - top);
    let scale = (free_w / aspect).min(free_h);
    let (w, h) = (scale * aspect, scale);
    [left + (free_w - w) / 2.0, top + (free_h - h) / 2.0, w, h]
}

/// Whether the scene text sets `grid.cells` (a scene without it gets the backend's default).
pub(super) fn cells_in(text: &str) -> bool {
    toml::from_str::<toml::Value>(text)
        .ok()
        .and_then(|v| v.get("grid")?.get("cells").cloned())
        .is_some()
}

/// (Re)specifies the bound 2D texture as `size` RGBA8 texels (from `pixels`, or undefined),
/// filtered linearly and clamped at the edges.
///
/// # Safety
/// A GL context is current and a texture of it bound to `TEXTURE_2D`.
pub(super) unsafe fn specify_texture(
    gl: &glow::Context,
    size: (usize, usize),
    pixels: Option<&[u8]>,
) {
    // SAFETY: the caller's promise; `pixels` holds size.0 × size.1 RGBA8 texels when given.
    unsafe {
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::RGBA8 as i32,
            size.0 as i32,
            size.1 as i32,
            0,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            pixels,
        );
        for (parameter, value) in [
            (glow::TEXTURE_MIN_FILTER, glow::LINEAR),
            (glow::TEXTURE_MAG_FILTER, glow::LINEAR),
            (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
            (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
        ] {
            gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, value as i32);
        }
    }
}
