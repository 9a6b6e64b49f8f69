//! A frame: the passes in their order ([`PoolRenderer::draw`]), what each draws, and the
//! frame target they draw into.

use super::caustics::CausticsDomain;
use super::draw_scene::{DrawScene, Pass, VIEWS};
use super::grid::{Grid, Reach, SurfaceVariant};
use super::pool_box::PoolBox;
use super::shared::{FrameValues, TextureUnit};
use super::PoolRenderer;
use crate::gfx::camera::Camera;
use crate::gfx::check_gl;
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use crate::gfx::Output;
use anyhow::{anyhow, Result};
use glam::Mat4;
use glow::HasContext;
use std::rc::Rc;

impl PoolRenderer {
    /// Draws the pool seen by `camera` into `output`. Checks `glGetError` after every pass and
    /// fails naming the pass.
    pub fn draw(&mut self, camera: &Camera, output: Output, scene: &DrawScene) -> Result<()> {
        let (width, height) = (output.width.max(1), output.height.max(1));
        // Told for this frame only: the viewer tells it again each frame the tool is chosen.
        let land_expected = std::mem::take(&mut self.land_expected);
        self.prepare(scene, width, height)?;
        self.update_land_texture(scene.land_height(), scene.depth)?;
        let light = scene.light_direction();
        let domain = CausticsDomain::new(light, scene.size, scene.depth);
        let values = FrameValues {
            view_projection: camera.projection(width as f32 / height as f32) * camera.view(),
            eye: camera.eye(),
            nodes: self.nodes as i32,
            size: scene.size,
            depth: scene.depth,
            rim: scene.rim_height(),
            light,
            domain,
            has_land: self.has_land,
            land_height: scene.land_height(),
            land_bounds: self.land_bounds,
            open: scene.open,
            detail: scene.detail,
            caustic_lookups: self.caustic_lookups as i32,
            time: scene.time,
        };
        // SAFETY: GL calls on this thread's current context; every object named is this
        // renderer's and alive.
        unsafe {
            let gl = &self.gl;
            gl.disable(glow::CULL_FACE);
            gl.disable(glow::SCISSOR_TEST);
            gl.disable(glow::BLEND);
            gl.depth_mask(true);
            gl.color_mask(true, true, true, true);
            gl.enable(glow::PROGRAM_POINT_SIZE);
            self.bind(TextureUnit::Surface, glow::TEXTURE_2D, Some(self.surface));
            self.bind(TextureUnit::Caustics, glow::TEXTURE_2D, None);
            let land = self.land_texture.as_ref();
            self.bind(
                TextureUnit::Land,
                glow::TEXTURE_2D,
                land.map(|t| t.texture()),
            );
            self.bind(
                TextureUnit::LandTiles,
                glow::TEXTURE_2D,
                land.map(|t| t.tiles()),
            );
            self.bind(
                TextureUnit::Sky,
                glow::TEXTURE_CUBE_MAP,
                Some(self.sky.cubemap()),
            );
        }
        self.run(Pass::Caustics, |r| {
            r.caustics.draw(&r.gl, &r.grid, &values);
            // Its mipmaps (each level the mean of the one above: the light kept), which the
            // passes reading it average over a pixel's footprint with.
            r.bind(
                TextureUnit::Caustics,
                glow::TEXTURE_2D,
                Some(r.caustics.texture()),
            );
            // SAFETY: GL call on the current context; the texture is bound to the active unit.
            unsafe { r.gl.generate_mipmap(glow::TEXTURE_2D) };
        })?;
        let view = VIEWS.get(scene.view).copied().unwrap_or(VIEWS[0]);
        if view == "caustics" {
            self.run(Pass::CausticsView, |r| r.caustics_view(output))?;
        } else {
            let frame = self.frame_target()?;
            // SAFETY: GL calls on the current context; the frame target is this renderer's.
            unsafe {
                self.gl.bind_framebuffer(glow::FRAMEBUFFER, Some(frame));
                self.gl.viewport(0, 0, width as i32, height as i32);
            }
            // Before the clear, which wipes what it draws.
            if land_expected {
                self.make_land_ahead(&values, scene.far_taps)?;
            }
            // SAFETY: GL calls on the current context; the frame target is bound.
            unsafe {
                self.gl.clear_color(0.0, 0.0, 0.0, 1.0);
                self.gl
                    .clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            }
            self.run(Pass::Sky, |r| r.sky(values.view_projection))?;
            // SAFETY: GL call on the current context.
            unsafe { self.gl.enable(glow::DEPTH_TEST) };
            self.run(Pass::Pool, |r| r.pool(&values))?;
            if self.has_land {
                self.run(Pass::Land, |r| r.land(&values))?;
            }
            match view {
                "wireframe" => self.run(Pass::Wireframe, |r| r.wireframe(&values))?,
                "nodes" => self.run(Pass::Nodes, |r| r.nodes_pass(&values, height))?,
                _ => {
                    // The build with land is linked here on the first frame with land (unless
                    // made ahead, `warm_up.rs`), outside the pass's time; llvmpipe compiles it
                    // to machine code at its first draw, inside that frame's `surface` pass
                    // (docs/pool-performance.md, the pause on the first frame with land).
                    let variant = SurfaceVariant {
                        far_taps: scene.far_taps,
                        land: self.surface_land.unwrap_or(self.has_land),
                    };
                    self.programs.surface.prepare(&self.gl, variant)?;
                    self.run(Pass::Surface, |r| r.surface_pass(&values))?
                }
            }
            // SAFETY: GL call on the current context.
            unsafe { self.gl.disable(glow::DEPTH_TEST) };
            self.run(Pass::Present, |r| r.present(output))?;
        }
        // SAFETY: GL calls on this thread's current context.
        unsafe {
            self.gl.bind_vertex_array(None);
            self.gl.use_program(None);
            self.gl.active_texture(glow::TEXTURE0);
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
        }
        self.timer.end_frame(&self.gl);
        Ok(())
    }

    /// The sky's sun follows the light, the box follows the pool, the frame the output.
    fn prepare(&mut self, scene: &DrawScene, width: u32, height: u32) -> Result<()> {
        let sun = scene.light_direction();
        if sun != self.sun {
            self.sky.set_sun(&self.gl, sun)?;
            self.sun = sun;
        }
        let shape = [scene.size, scene.depth];
        if self.pool_box.as_ref().map(|(_, s)| *s) != Some(shape) {
            let built = PoolBox::new(&self.gl, scene.size, scene.depth, scene.rim_height())?;
            if let Some((old, _)) = self.pool_box.replace((built, shape)) {
                old.delete(&self.gl);
            }
        }
        if self.frame.is_none() || self.frame_size != (width, height) {
            let target = TextureTarget::new(
                &self.gl,
                width as i32,
                height as i32,
                ColorFormat::RGBA8,
                Depth::Renderbuffer,
            )?;
            if let Some(old) = self.frame.replace(target) {
                old.delete(&self.gl);
            }
            self.frame_size = (width, height);
        }
        Ok(())
    }

    fn frame_target(&self) -> Result<glow::Framebuffer> {
        self.frame
            .as_ref()
            .map(|t| t.framebuffer)
            .ok_or_else(|| anyhow!("the frame target is missing"))
    }

    fn run(&mut self, pass: Pass, body: impl FnOnce(&mut PoolRenderer)) -> Result<()> {
        let gl = Rc::clone(&self.gl);
        self.timer.begin(&gl, pass.name());
        body(self);
        self.timer.end(&gl);
        check_gl(&gl, pass.name())
    }

    pub(super) fn bind(&self, unit: TextureUnit, target: u32, texture: Option<glow::Texture>) {
        // SAFETY: GL calls on this thread's current context; the texture is this renderer's.
        unsafe {
            self.gl.active_texture(glow::TEXTURE0 + unit as u32);
            self.gl.bind_texture(target, texture);
        }
    }

    /// The mesh the picture is drawn with.
    fn display_grid(&self) -> &Grid {
        self.display.as_ref().unwrap_or(&self.grid)
    }

    /// `sky`: the sky over the whole frame, behind everything.
    fn sky(&self, view_projection: Mat4) {
        // The sky program binds its cubemap to unit 0's cube target (the surface stays on
        // its 2D target).
        self.sky.draw(&self.gl, view_projection, &self.fullscreen);
    }

    /// `pool`: floor, walls and deck.
    fn pool(&self, values: &FrameValues) {
        if let Some((pool_box, _)) = &self.pool_box {
            self.programs.pool.draw(&self.gl, values, pool_box);
        }
    }

    /// `land`: the fixed nodes as ground.
    fn land(&mut self, values: &FrameValues) {
        let grid = self.display.as_ref().unwrap_or(&self.grid);
        self.programs
            .land
            .draw(&self.gl, values, grid, Reach::Whole);
    }

    /// `surface`: the water.
    fn surface_pass(&mut self, values: &FrameValues) {
        let grid = self.display.as_ref().unwrap_or(&self.grid);
        self.programs.surface.draw(&self.gl, values, grid);
    }

    /// `wireframe`: the mesh's edges.
    fn wireframe(&self, values: &FrameValues) {
        self.programs
            .height
            .wireframe(&self.gl, values, self.display_grid());
    }

    /// `nodes`: the mesh's nodes as points, larger on a tall output.
    fn nodes_pass(&self, values: &FrameValues, height: u32) {
        let size = (height as f32 / 360.0).clamp(1.0, 4.0);
        self.programs
            .height
            .nodes(&self.gl, values, size, self.display_grid());
    }

    /// `caustics_view`: the caustics texture over the output.
    fn caustics_view(&self, output: Output) {
        // SAFETY: GL calls on the current context; the output framebuffer is the caller's.
        unsafe {
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            self.gl
                .viewport(0, 0, output.width as i32, output.height as i32);
        }
        self.programs
            .caustics_view
            .draw(&self.gl, self.caustics.texture(), &self.fullscreen);
    }

    /// `present`: the frame to the output.
    fn present(&self, output: Output) {
        let Some(frame) = &self.frame else {
            return;
        };
        // SAFETY: GL calls on the current context; the output framebuffer is the caller's.
        unsafe {
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            self.gl
                .viewport(0, 0, output.width as i32, output.height as i32);
        }
        self.present.draw(&self.gl, frame.texture, &self.fullscreen);
    }
}
