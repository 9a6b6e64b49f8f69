//! Framebuffers: textures with their own framebuffer, for a renderer's intermediate buffers
//! (resized with the viewport) and the offscreen colour target headless rendering reads back.

use anyhow::{anyhow, bail, Result};
use glow::HasContext;

/// A 2D texture with nearest filtering and clamped edges, attached to its own framebuffer.
pub struct TextureTarget {
    /// The colour texture.
    pub texture: glow::Texture,
    /// The framebuffer it is attached to.
    pub framebuffer: glow::Framebuffer,
    depth: Option<DepthAttachment>,
}

/// How a [`TextureTarget`] stores depth.
enum DepthAttachment {
    /// A depth texture later passes sample (the scene's depth).
    Texture(glow::Texture),
    /// A renderbuffer only the depth test uses.
    Renderbuffer(glow::Renderbuffer),
}

/// Which depth buffer a target gets.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// None.
    None,
    /// A depth texture (sampled later).
    Texture,
    /// A renderbuffer (depth test only).
    Renderbuffer,
}

/// Internal format, format and type of a colour texture.
#[derive(Clone, Copy)]
pub struct ColorFormat {
    internal: u32,
    format: u32,
    kind: u32,
}

impl ColorFormat {
    /// 8-bit RGBA.
    pub const RGBA8: ColorFormat = ColorFormat {
        internal: glow::RGBA8,
        format: glow::RGBA,
        kind: glow::UNSIGNED_BYTE,
    };
    /// Four 16-bit float channels (a linear HDR picture).
    pub const RGBA16F: ColorFormat = ColorFormat {
        internal: glow::RGBA16F,
        format: glow::RGBA,
        kind: glow::FLOAT,
    };
    /// One 32-bit float channel.
    pub const R32F: ColorFormat = ColorFormat {
        internal: glow::R32F,
        format: glow::RED,
        kind: glow::FLOAT,
    };
    /// Four 32-bit float channels.
    pub const RGBA32F: ColorFormat = ColorFormat {
        internal: glow::RGBA32F,
        format: glow::RGBA,
        kind: glow::FLOAT,
    };
}

impl TextureTarget {
    /// Creates a `width` × `height` target.
    pub fn new(
        gl: &glow::Context,
        width: i32,
        height: i32,
        color: ColorFormat,
        depth: Depth,
    ) -> Result<TextureTarget> {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            let texture = new_texture(gl, width, height, color.internal, color.format, color.kind)?;
            let framebuffer = gl
                .create_framebuffer()
                .map_err(|e| anyhow!("framebuffer: {e}"))?;
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(framebuffer));
            gl.framebuffer_texture_2d(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::TEXTURE_2D,
                Some(texture),
                0,
            );
            let depth = match depth {
                Depth::None => None,
                Depth::Texture => {
                    let depth_texture = new_texture(
                        gl,
                        width,
                        height,
                        glow::DEPTH_COMPONENT24,
                        glow::DEPTH_COMPONENT,
                        glow::UNSIGNED_INT,
                    )?;
                    gl.framebuffer_texture_2d(
                        glow::FRAMEBUFFER,
                        glow::DEPTH_ATTACHMENT,
                        glow::TEXTURE_2D,
                        Some(depth_texture),
                        0,
                    );
                    Some(DepthAttachment::Texture(depth_texture))
                }
                Depth::Renderbuffer => {
                    let renderbuffer = gl
                        .create_renderbuffer()
                        .map_err(|e| anyhow!("renderbuffer: {e}"))?;
                    gl.bind_renderbuffer(glow::RENDERBUFFER, Some(renderbuffer));
                    gl.renderbuffer_storage(
                        glow::RENDERBUFFER,
                        glow::DEPTH_COMPONENT24,
                        width,
                        height,
                    );
                    gl.framebuffer_renderbuffer(
                        glow::FRAMEBUFFER,
                        glow::DEPTH_ATTACHMENT,
                        glow::RENDERBUFFER,
                        Some(renderbuffer),
                    );
                    Some(DepthAttachment::Renderbuffer(renderbuffer))
                }
            };
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            if status != glow::FRAMEBUFFER_COMPLETE {
                // 0x8cd6 (incomplete attachment) is what a driver out of memory for the
                // attachments reports (Mesa under `ulimit -v`): say what to change.
                bail!(
                    "framebuffer incomplete (status 0x{status:x}) for a {width}×{height} target: \
                     the driver could not allocate it (out of memory, or beyond its largest \
                     texture); try a smaller --size or window"
                );
            }
            Ok(TextureTarget {
                texture,
                framebuffer,
                depth,
            })
        }
    }

    /// Samples the colour texture with linear filtering (nearest by default), for passes that
    /// read it at fractional offsets (FXAA).
    pub fn filter_linearly(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context; the texture is this target's.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.texture));
            for parameter in [glow::TEXTURE_MIN_FILTER, glow::TEXTURE_MAG_FILTER] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, glow::LINEAR as i32);
            }
            gl.bind_texture(glow::TEXTURE_2D, None);
        }
    }

    /// The depth texture, when the target was made with [`Depth::Texture`].
    pub fn depth_texture(&self) -> Option<glow::Texture> {
        match self.depth {
            Some(DepthAttachment::Texture(texture)) => Some(texture),
            _ => None,
        }
    }

    /// Frees the texture, depth buffer and framebuffer.
    pub fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.delete_framebuffer(self.framebuffer);
            gl.delete_texture(self.texture);
            match self.depth {
                Some(DepthAttachment::Texture(texture)) => gl.delete_texture(texture),
                Some(DepthAttachment::Renderbuffer(renderbuffer)) => {
                    gl.delete_renderbuffer(renderbuffer)
                }
                None => {}
            }
        }
    }

    /// Writes one float per pixel into the red channel (an `R32F` target's texture), rows
    /// bottom to top: [`read_floats`](Self::read_floats)' inverse, for tests that hand a pass
    /// a made-up input.
    pub fn write_red_floats(&self, gl: &glow::Context, width: i32, height: i32, values: &[f32]) {
        assert_eq!(
            values.len(),
            width as usize * height as usize,
            "one value a pixel"
        );
        // SAFETY: GL calls on the current context; the source holds width × height floats, what
        // the upload reads for a RED/FLOAT rectangle of that size.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.texture));
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                width,
                height,
                glow::RED,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(bytemuck::cast_slice(values)),
            );
            gl.bind_texture(glow::TEXTURE_2D, None);
        }
    }

    /// Reads `channels` floats per pixel (1 = red, 4 = RGBA), rows bottom to top.
    pub fn read_floats(
        &self,
        gl: &glow::Context,
        width: i32,
        height: i32,
        channels: usize,
    ) -> Vec<f32> {
        let format = if channels == 1 { glow::RED } else { glow::RGBA };
        let mut values = vec![0f32; width as usize * height as usize * channels];
        // SAFETY: GL calls on the current context; the destination holds width × height ×
        // channels values, what the read-back writes with this pack alignment.
        unsafe {
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(self.framebuffer));
            gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
            gl.read_pixels(
                0,
                0,
                width,
                height,
                format,
                glow::FLOAT,
                glow::PixelPackData::Slice(bytemuck::cast_slice_mut(&mut values)),
            );
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
        }
        values
    }
}

/// A `width`×`height` 2D texture of `internal` format (no data), nearest-filtered and clamped to
/// its edges, left unbound.
///
/// # Safety
/// A GL call on `gl`'s context, which must be current.
pub unsafe fn new_texture(
    gl: &glow::Context,
    width: i32,
    height: i32,
    internal: u32,
    format: u32,
    kind: u32,
) -> Result<glow::Texture> {
    let texture = gl.create_texture().map_err(|e| anyhow!("texture: {e}"))?;
    gl.bind_texture(glow::TEXTURE_2D, Some(texture));
    gl.tex_image_2d(
        glow::TEXTURE_2D,
        0,
        internal as i32,
        width,
        height,
        0,
        format,
        kind,
        None,
    );
    for (parameter, value) in [
        (glow::TEXTURE_MIN_FILTER, glow::NEAREST),
        (glow::TEXTURE_MAG_FILTER, glow::NEAREST),
        (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
        (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
    ] {
        gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, value as i32);
    }
    gl.bind_texture(glow::TEXTURE_2D, None);
    Ok(texture)
}
