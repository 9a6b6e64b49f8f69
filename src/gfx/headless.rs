//! Headless drawing: the surfaceless context of [`crate::gfx::context`] and an offscreen
//! colour target that any kind draws into and that is read back as an image.

use crate::gfx::capture::{read_image, Image};
use crate::gfx::context::HeadlessContext;
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use crate::gfx::Output;
use anyhow::Result;
use std::rc::Rc;

/// A `width` × `height` offscreen target on the headless GL context.
pub struct Headless {
    target: TextureTarget,
    width: u32,
    height: u32,
    context: HeadlessContext,
}

impl Headless {
    /// Creates the context (on the CUDA-matched EGL device when there is one) and the target.
    pub fn new(width: u32, height: u32) -> Result<Headless> {
        let context = HeadlessContext::create()?;
        let target = TextureTarget::new(
            &context.gl,
            width as i32,
            height as i32,
            ColorFormat::RGBA8,
            Depth::Renderbuffer,
        )?;
        Ok(Headless {
            target,
            width,
            height,
            context,
        })
    }

    /// The GL functions of the context (current on this thread).
    pub fn gl(&self) -> Rc<glow::Context> {
        Rc::clone(&self.context.gl)
    }

    /// The EGL device and GL renderer in use.
    pub fn description(&self) -> &str {
        self.context.description()
    }

    /// The context drawing goes through (its EGL device and CUDA ordinal).
    pub fn context(&self) -> &HeadlessContext {
        &self.context
    }

    /// Where a frame goes: the offscreen target.
    pub fn output(&self) -> Output {
        Output {
            framebuffer: Some(self.target.framebuffer),
            width: self.width,
            height: self.height,
            covered: [0, 0],
        }
    }

    /// Lets `draw` draw one frame into the target, then reads it back as an image.
    pub fn capture(&mut self, draw: impl FnOnce(Output) -> Result<()>) -> Result<Image> {
        draw(self.output())?;
        let image = read_image(
            &self.context.gl,
            Some(self.target.framebuffer),
            self.width,
            self.height,
        )?;
        crate::gfx::check_gl(&self.context.gl, "image read-back")?;
        Ok(image)
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        self.target.delete(&self.context.gl);
    }
}
