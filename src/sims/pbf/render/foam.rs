//! The `foam` pass: the `foam` stage's diffuse particles ([`crate::sims::pbf::foam`]) as soft,
//! lit sprites into the foam target, which `composite` lays over the picture: spray and foam
//! in front (first channel), bubbles seen through the fluid, dimmed by the fluid in front of
//! them (second channel), each weight times the sprite's light in the third and fourth (the
//! sky's ambient, the sun on the sprite as a sphere, the fluid's shadow from the light passes).

use super::{FrameSetup, RenderSettings, Renderer};
use crate::gfx::check_gl;
use crate::gfx::program::{shader, Program, Uniform};
use crate::gfx::skybox;
use anyhow::{anyhow, Result};
use glam::{Mat3, Mat4, Vec2, Vec3};
use glow::HasContext;

/// How opaque one sprite is at its centre (its weight falls off as a Gaussian to the rim):
/// one sprite shows faintly, a dense cluster saturates (1 − e^(−Σ weights) in `composite`).
pub const SPRITE_OPACITY: f32 = 0.5;
/// A spray sprite's weight against a foam sprite's: lone drops in the air are thin.
pub const SPRAY_OPACITY: f32 = 0.6;
/// A foam sprite's radius in particle radii (at `point_size` 1); 0.8 until issue 14's audit
/// (particle-sized discs read as popcorn).
pub const SPRITE_SCALE: f32 = 0.6;
/// Bubbles dim by exp(−this · depth under the surface), 1/m.
pub const BUBBLE_ATTENUATION: f32 = 8.0;

/// The diffuse particles' records (`[x, y, z, kind + fade / 2]`, [`crate::sims::pbf::foam::Foam::records`]).
pub(super) struct FoamBuffer {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
    capacity: usize,
    pub(super) count: usize,
}

impl FoamBuffer {
    pub(super) fn new(gl: &glow::Context) -> Result<FoamBuffer> {
        // SAFETY: GL calls on this thread's current context; every object named is created
        // here and alive.
        unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 4, glow::FLOAT, false, 16, 0);
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            Ok(FoamBuffer {
                vertex_array,
                buffer,
                capacity: 0,
                count: 0,
            })
        }
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context; both objects are this buffer's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.buffer);
        }
    }
}

/// `foam`'s program.
pub(super) struct FoamProgram {
    pub(super) program: Program,
    view: Uniform,
    projection: Uniform,
    sprite_radius: Uniform,
    viewport_height: Uniform,
    scene_depth: Uniform,
    fluid_depth: Uniform,
    clip_planes: Uniform,
    viewport: Uniform,
    opacity: Uniform,
    spray_opacity: Uniform,
    bubble_attenuation: Uniform,
    sun_direction: Uniform,
    up_direction: Uniform,
    fluid_light: Uniform,
    light_from_eye: Uniform,
    light_projection: Uniform,
    light_depth: Uniform,
    light_thickness: Uniform,
    shadow_attenuation: Uniform,
}

impl FoamProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<FoamProgram> {
        let program = Program::new(gl, &shader!("foam", "pbf/foam.vert", "pbf/foam.frag"))?;
        let uniform = |name| program.uniform(gl, name);
        Ok(FoamProgram {
            view: uniform("view")?,
            projection: uniform("projection")?,
            sprite_radius: uniform("sprite_radius")?,
            viewport_height: uniform("viewport_height")?,
            scene_depth: uniform("scene_depth")?,
            fluid_depth: uniform("fluid_depth")?,
            clip_planes: uniform("clip_planes")?,
            viewport: uniform("viewport")?,
            opacity: uniform("opacity")?,
            spray_opacity: uniform("spray_opacity")?,
            bubble_attenuation: uniform("bubble_attenuation")?,
            sun_direction: uniform("sun_direction")?,
            up_direction: uniform("up_direction")?,
            fluid_light: uniform("fluid_light")?,
            light_from_eye: uniform("light_from_eye")?,
            light_projection: uniform("light_projection")?,
            light_depth: uniform("light_depth")?,
            light_thickness: uniform("light_thickness")?,
            shadow_attenuation: uniform("shadow_attenuation")?,
            program,
        })
    }
}

impl Renderer {
    /// Uploads the diffuse particles' records ([`crate::sims::pbf::foam::Foam::records`]) for
    /// the next frames; none (the stage off) and the `foam` pass does not run.
    pub fn update_foam(&mut self, records: &[[f32; 4]]) -> Result<()> {
        let gl = &self.gl;
        let foam = &mut self.foam;
        let bytes = std::mem::size_of_val(records);
        // SAFETY: GL calls on this thread's current context; the buffer is this renderer's,
        // allocated to at least `bytes` before the copy.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(foam.buffer));
            if bytes > foam.capacity {
                gl.buffer_data_size(glow::ARRAY_BUFFER, bytes as i32, glow::DYNAMIC_DRAW);
                foam.capacity = bytes;
            }
            if bytes > 0 {
                gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytemuck::cast_slice(records));
            }
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
        foam.count = records.len();
        check_gl(gl, "foam upload")
    }

    /// The diffuse particles' records straight from the solver when it keeps them on the GPU
    /// (CUDA–GL interop: [`crate::sims::pbf::Solver::write_gl_foam`], into a buffer of
    /// `capacity` records), else through `scratch` and [`Renderer::update_foam`].
    pub fn update_foam_from(
        &mut self,
        solver: &mut dyn crate::sims::pbf::Solver,
        foam: &crate::sims::pbf::foam::Foam,
        capacity: usize,
        scratch: &mut Vec<[f32; 4]>,
    ) -> Result<()> {
        let alive: usize = solver.foam_counts(foam).iter().sum();
        let bytes = capacity.max(alive) * 16;
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context; the buffer is this renderer's.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.foam.buffer));
            if bytes > self.foam.capacity {
                gl.buffer_data_size(glow::ARRAY_BUFFER, bytes as i32, glow::DYNAMIC_DRAW);
                self.foam.capacity = bytes;
            }
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
        let written = solver
            .write_gl_foam(self.foam.buffer.0.get(), self.foam.capacity)
            .map_err(|e| anyhow!("writing the diffuse particles into the GL buffer: {e}"))?;
        if written {
            self.foam.count = alive;
            return check_gl(gl, "foam buffer");
        }
        solver
            .foam_records(foam, scratch)
            .map_err(|e| anyhow!("reading the diffuse particles back for drawing: {e}"))?;
        self.update_foam(scratch)
    }

    /// `foam`: the diffuse particles' sprites, additive, into the foam target, lit by the sun
    /// through the fluid seen from `light` (when the light passes ran).
    pub(super) fn foam(
        &self,
        frame: &FrameSetup,
        light: Option<&FrameSetup>,
        settings: &RenderSettings,
    ) {
        let gl = &self.gl;
        let targets = &self.targets;
        let pass = &self.programs.foam;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(targets.foam.framebuffer));
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        pass.program.bind(gl);
        pass.view.set(gl, frame.view);
        pass.projection.set(gl, frame.projection);
        pass.sprite_radius
            .set(gl, frame.sprite_radius * SPRITE_SCALE);
        pass.viewport_height.set(gl, frame.height as f32);
        pass.clip_planes
            .set(gl, Vec2::new(frame.clip_planes.0, frame.clip_planes.1));
        pass.viewport
            .set(gl, Vec2::new(frame.width as f32, frame.height as f32));
        pass.opacity.set(gl, SPRITE_OPACITY);
        pass.spray_opacity.set(gl, SPRAY_OPACITY);
        pass.bubble_attenuation.set(gl, BUBBLE_ATTENUATION);
        let view_rotation = Mat3::from_mat4(frame.view);
        pass.sun_direction
            .set(gl, view_rotation * skybox::sun_direction());
        pass.up_direction.set(gl, view_rotation * Vec3::Y);
        pass.fluid_light.set(gl, i32::from(light.is_some()));
        let (light_view, light_projection) = light
            .map(|light| (light.view, light.projection))
            .unwrap_or((Mat4::IDENTITY, Mat4::IDENTITY));
        pass.light_from_eye
            .set(gl, light_view * frame.view.inverse());
        pass.light_projection.set(gl, light_projection);
        let attenuation = Vec3::from(settings.attenuation);
        pass.shadow_attenuation
            .set(gl, (attenuation.x + attenuation.y + attenuation.z) / 3.0);
        pass.scene_depth.set(gl, 0);
        pass.fluid_depth.set(gl, 1);
        pass.light_depth.set(gl, 2);
        pass.light_thickness.set(gl, 3);
        self.bind_texture(0, glow::TEXTURE_2D, targets.scene.depth_texture());
        self.bind_texture(1, glow::TEXTURE_2D, Some(self.smoothed_depth().texture));
        self.bind_texture(2, glow::TEXTURE_2D, Some(self.light.depth.texture));
        self.bind_texture(3, glow::TEXTURE_2D, Some(self.light.thickness.texture));
        // SAFETY: as above; the vertex array holds `count` records.
        unsafe {
            gl.bind_vertex_array(Some(self.foam.vertex_array));
            gl.draw_arrays(glow::POINTS, 0, self.foam.count as i32);
            gl.disable(glow::BLEND);
        }
    }
}
