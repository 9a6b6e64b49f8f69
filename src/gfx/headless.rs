//! The headless front end: the surfaceless context of [`crate::gfx::context`], an offscreen
//! colour target, and the shared [`Renderer`].

use crate::gfx::camera::Camera;
use crate::gfx::capture::{read_image, Image};
use crate::gfx::context::HeadlessContext;
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use crate::gfx::timing::PassClock;
use crate::sims::pbf::render::{Buffer, Output, RenderSettings, Renderer};
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::Solver;
use anyhow::Result;
use std::rc::Rc;

/// Headless rendering of frames to images: the renderer and an offscreen colour target.
pub struct HeadlessRenderer {
    /// The shared renderer.
    pub renderer: Renderer,
    target: TextureTarget,
    width: u32,
    height: u32,
    context: HeadlessContext,
}

impl HeadlessRenderer {
    /// A `width` × `height` renderer for `scene`.
    pub fn new(
        scene: &Scene,
        width: u32,
        height: u32,
        clock: PassClock,
    ) -> Result<HeadlessRenderer> {
        let context = HeadlessContext::create()?;
        let renderer = Renderer::new(Rc::clone(&context.gl), scene, clock)?;
        let target = TextureTarget::new(
            &context.gl,
            width as i32,
            height as i32,
            ColorFormat::RGBA8,
            Depth::Renderbuffer,
        )?;
        Ok(HeadlessRenderer {
            renderer,
            target,
            width,
            height,
            context,
        })
    }

    /// The EGL device and GL renderer in use.
    pub fn description(&self) -> &str {
        self.context.description()
    }

    /// The context rendering goes through (its EGL device and GL renderer).
    pub fn context(&self) -> &HeadlessContext {
        &self.context
    }

    /// Uploads the solver's particles and renders one frame to an image.
    pub fn render(
        &mut self,
        solver: &mut dyn Solver,
        camera: &Camera,
        settings: &RenderSettings,
    ) -> Result<Image> {
        self.renderer.update_particles(solver, settings.view)?;
        self.renderer.draw(
            camera,
            settings,
            Output {
                framebuffer: Some(self.target.framebuffer),
                width: self.width,
                height: self.height,
            },
        )?;
        let image = read_image(
            &self.context.gl,
            Some(self.target.framebuffer),
            self.width,
            self.height,
        );
        crate::gfx::check_gl(&self.context.gl, "image read-back")?;
        Ok(image)
    }

    /// An intermediate buffer of the last frame (see [`Renderer::read_buffer`]).
    pub fn read_buffer(&self, buffer: Buffer) -> Result<Vec<f32>> {
        self.renderer.read_buffer(buffer)
    }
}

impl Drop for HeadlessRenderer {
    fn drop(&mut self) {
        self.target.delete(&self.context.gl);
    }
}
