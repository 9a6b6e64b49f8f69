//! `post`: a linear HDR picture to the output, in two draws: exposure, ACES filmic tone mapping
//! and the sRGB transfer function into an 8-bit target (`shaders/common/tone_map.frag`), then
//! FXAA from it into the output (`shaders/common/fxaa.frag`). Kinds that shade in linear light
//! draw into an HDR target ([`crate::gfx::targets::ColorFormat::RGBA16F`]) and finish with
//! [`Post::draw`].

use super::fullscreen::FullscreenTriangle;
use super::program::{shader, Program, Uniform};
use super::targets::{ColorFormat, Depth, TextureTarget};
use super::Output;
use anyhow::Result;
use glam::Vec2;
use glow::HasContext;

/// The two programs, their uniforms and the tone-mapped picture between them.
pub struct Post {
    tone_map: Program,
    hdr_texture: Uniform,
    exposure: Uniform,
    fxaa: Program,
    ldr_texture: Uniform,
    texel: Uniform,
    antialias: Uniform,
    ldr: Option<(TextureTarget, i32, i32)>,
}

impl Post {
    /// Builds the programs.
    pub fn new(gl: &glow::Context) -> Result<Post> {
        let tone_map = Program::new(
            gl,
            &shader!("post", "common/fullscreen.vert", "common/tone_map.frag"),
        )?;
        let fxaa = Program::new(
            gl,
            &shader!("post", "common/fullscreen.vert", "common/fxaa.frag"),
        )?;
        Ok(Post {
            hdr_texture: tone_map.uniform(gl, "hdr_texture")?,
            exposure: tone_map.uniform(gl, "exposure")?,
            ldr_texture: fxaa.uniform(gl, "ldr_texture")?,
            texel: fxaa.uniform(gl, "texel")?,
            antialias: fxaa.uniform(gl, "antialias")?,
            tone_map,
            fxaa,
            ldr: None,
        })
    }

    /// Draws the linear picture `texture` (the output's size) into `output`: tone-mapped by
    /// `exposure`, sRGB-encoded, with FXAA when `antialias`. Uses texture unit 0.
    pub fn draw(
        &mut self,
        gl: &glow::Context,
        texture: glow::Texture,
        output: Output,
        exposure: f32,
        antialias: bool,
        triangle: &FullscreenTriangle,
    ) -> Result<()> {
        let (width, height) = (output.width.max(1) as i32, output.height.max(1) as i32);
        if !matches!(self.ldr, Some((_, w, h)) if w == width && h == height) {
            let target = TextureTarget::new(gl, width, height, ColorFormat::RGBA8, Depth::None)?;
            target.filter_linearly(gl);
            if let Some((old, _, _)) = self.ldr.replace((target, width, height)) {
                old.delete(gl);
            }
        }
        let Some((ldr, _, _)) = &self.ldr else {
            return Ok(());
        };
        // SAFETY: GL calls on this thread's current context; every object named is alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(ldr.framebuffer));
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        }
        self.tone_map.bind(gl);
        self.hdr_texture.set(gl, 0);
        self.exposure.set(gl, exposure);
        triangle.draw(gl);
        // SAFETY: as above; the output framebuffer is the caller's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            gl.bind_texture(glow::TEXTURE_2D, Some(ldr.texture));
        }
        self.fxaa.bind(gl);
        self.ldr_texture.set(gl, 0);
        self.texel
            .set(gl, Vec2::new(1.0 / width as f32, 1.0 / height as f32));
        self.antialias.set(gl, i32::from(antialias));
        triangle.draw(gl);
        Ok(())
    }

    /// Frees the programs and the target.
    pub fn delete(&self, gl: &glow::Context) {
        self.tone_map.delete(gl);
        self.fxaa.delete(gl);
        if let Some((target, _, _)) = &self.ldr {
            target.delete(gl);
        }
    }
}

/// The sRGB transfer function's inverse: an sRGB-encoded colour component (0..1) in linear
/// light, for colours chosen by eye on an sRGB screen.
pub fn srgb_to_linear(value: f32) -> f32 {
    if value <= 0.04045 {
        value / 12.92
    } else {
        ((value + 0.055) / 1.055).powf(2.4)
    }
}

/// The sRGB transfer function: a linear colour component (0..1) sRGB-encoded.
pub fn linear_to_srgb(value: f32) -> f32 {
    if value <= 0.003_130_8 {
        value * 12.92
    } else {
        1.055 * value.powf(1.0 / 2.4) - 0.055
    }
}

#[cfg(test)]
mod tests {
    use super::{linear_to_srgb, srgb_to_linear};

    #[test]
    fn srgb_decoding_matches_the_standard() {
        assert_eq!(srgb_to_linear(0.0), 0.0);
        assert!((srgb_to_linear(1.0) - 1.0).abs() < 1e-6);
        // IEC 61966-2-1: sRGB 0.5 is 21.4 % linear.
        assert!((srgb_to_linear(0.5) - 0.2140).abs() < 1e-4);
        for value in [0.002, 0.2, 0.5, 0.9] {
            assert!((linear_to_srgb(srgb_to_linear(value)) - value).abs() < 1e-5);
        }
    }
}
