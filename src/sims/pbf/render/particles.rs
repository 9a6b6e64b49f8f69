//! The particles on the GPU: the particle buffer (written by the solver through CUDA–GL interop,
//! or from a host copy; with anisotropy the `anisotropy` stage's ellipsoids follow the records), the point-sprite uniforms the `sphere_depth`, `thickness` and
//! `particles` passes share (`shaders/pbf/particle_sprite.vert`), and the `particles` debug view.

use super::{FrameSetup, RenderSettings, Renderer, View};
use crate::gfx::check_gl;
use crate::gfx::program::{Program, ShaderSource, Uniform};
use crate::gfx::skybox;
use crate::sims::pbf::{RenderScalar, Solver};
use anyhow::{anyhow, Result};
use glam::Mat3;
use glow::HasContext;

/// One vec4 per particle: xyz position (m) and the scalar the view colours by; with
/// anisotropy then three vec4 per particle, its ellipsoid ([`crate::sims::pbf::anisotropy`]),
/// read by attributes 1–3.
pub(super) struct ParticleBuffer {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
    /// Bytes allocated.
    capacity: usize,
    count: usize,
    scratch: Vec<[f32; 4]>,
    interop: Option<bool>,
    /// The last upload wrote the ellipsoids.
    ellipsoids: bool,
}

/// Bytes of one particle's render record and of its ellipsoid's three records.
const RECORD_BYTES: usize = 16;
const ELLIPSOID_BYTES: usize = 48;

impl ParticleBuffer {
    pub(super) fn new(gl: &glow::Context) -> Result<ParticleBuffer> {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is created here and alive.
        let (vertex_array, buffer) = unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 4, glow::FLOAT, false, 16, 0);
            gl.bind_vertex_array(None);
            (vertex_array, buffer)
        };
        Ok(ParticleBuffer {
            vertex_array,
            buffer,
            capacity: 0,
            count: 0,
            scratch: Vec::new(),
            interop: None,
            ellipsoids: false,
        })
    }

    /// Whether the buffer holds the ellipsoids of its particles.
    pub(super) fn has_ellipsoids(&self) -> bool {
        self.ellipsoids
    }

    /// Points attributes 1–3 at the ellipsoids after `count` records, or turns them off.
    fn set_ellipsoid_attributes(&self, gl: &glow::Context, on: bool, count: usize) {
        // SAFETY: GL calls on this thread's current context; the vertex array and buffer are
        // this buffer's and alive, the buffer bound to ARRAY_BUFFER while pointing.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.buffer));
            for k in 0..3u32 {
                if on {
                    gl.enable_vertex_attrib_array(1 + k);
                    let offset = count * RECORD_BYTES + k as usize * 16;
                    gl.vertex_attrib_pointer_f32(
                        1 + k,
                        4,
                        glow::FLOAT,
                        false,
                        ELLIPSOID_BYTES as i32,
                        offset as i32,
                    );
                } else {
                    gl.disable_vertex_attrib_array(1 + k);
                }
            }
            gl.bind_vertex_array(None);
        }
    }

    /// Draws every particle as a point with the bound program.
    pub(super) fn draw(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context; the vertex array is this
        // buffer's and alive.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(glow::POINTS, 0, self.count as i32);
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

/// The uniforms of `particle_sprite.vert`, located in one program.
pub(super) struct SpriteUniforms {
    view: Uniform,
    projection: Uniform,
    sprite_radius: Uniform,
    viewport_height: Uniform,
    /// The `anisotropic` uniform: only the `particles` program has one (the sprite passes
    /// define `ANISOTROPIC`, a program each).
    anisotropic: Option<Uniform>,
    axis_scale: Uniform,
}

impl SpriteUniforms {
    /// The uniforms of `program`; `uniform_anisotropic`: it reads the `anisotropic` uniform
    /// (built without `ANISOTROPIC`).
    pub(super) fn locate(
        gl: &glow::Context,
        program: &Program,
        uniform_anisotropic: bool,
    ) -> Result<SpriteUniforms> {
        Ok(SpriteUniforms {
            view: program.uniform(gl, "view")?,
            projection: program.uniform(gl, "projection")?,
            sprite_radius: program.uniform(gl, "sprite_radius")?,
            viewport_height: program.uniform(gl, "viewport_height")?,
            anisotropic: uniform_anisotropic
                .then(|| program.uniform(gl, "anisotropic"))
                .transpose()?,
            axis_scale: program.uniform(gl, "axis_scale")?,
        })
    }

    /// Sets the uniforms for `frame`, drawing the ellipsoids when it is anisotropic and
    /// `ellipsoids` (the debug views draw spheres).
    pub(super) fn set(&self, gl: &glow::Context, frame: &FrameSetup, ellipsoids: bool) {
        if let Some(anisotropic) = &self.anisotropic {
            anisotropic.set(gl, i32::from(ellipsoids && frame.anisotropic));
        }
        self.axis_scale.set(gl, frame.axis_scale);
        self.view.set(gl, frame.view);
        self.projection.set(gl, frame.projection);
        self.sprite_radius.set(gl, frame.sprite_radius);
        self.viewport_height.set(gl, frame.height as f32);
    }
}

/// `particles`: lit spheres on a colour ramp.
pub(super) struct ParticlesProgram {
    pub(super) program: Program,
    sprite: SpriteUniforms,
    scalar_low: Uniform,
    scalar_high: Uniform,
    light_direction: Uniform,
}

impl ParticlesProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<ParticlesProgram> {
        let program = Program::new(
            gl,
            &ShaderSource {
                name: "particles",
                // `particle_sprite.vert` has no `#version` (the sprite passes put a define
                // after it); without `ANISOTROPIC` it reads the `anisotropic` uniform.
                vertex: concat!(
                    "#version 330 core\n",
                    include_str!(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/shaders/pbf/particle_sprite.vert"
                    )),
                ),
                geometry: None,
                fragment: include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/shaders/pbf/particles.frag"
                )),
            },
        )?;
        Ok(ParticlesProgram {
            sprite: SpriteUniforms::locate(gl, &program, true)?,
            scalar_low: program.uniform(gl, "scalar_low")?,
            scalar_high: program.uniform(gl, "scalar_high")?,
            light_direction: program.uniform(gl, "light_direction")?,
            program,
        })
    }
}

impl Renderer {
    /// Copies the solver's particles into the particle buffer: through the solver's own GL
    /// path (CUDA–GL interop) when it has one, else with `glBufferSubData`. The records' fourth
    /// lane carries what the view colours by (density for the density view, else speed). With
    /// `settings.anisotropy` (and a view that draws the surface) the `anisotropy` stage's
    /// ellipsoids follow, by the same path.
    pub fn update_particles(
        &mut self,
        solver: &mut dyn Solver,
        settings: &RenderSettings,
    ) -> Result<()> {
        let view = settings.view;
        let ellipsoids = settings.anisotropy && !matches!(view, View::Particles | View::Density);
        let scalar = if view == View::Density {
            RenderScalar::Density
        } else {
            RenderScalar::Speed
        };
        let count = solver.particle_count();
        let gl = &self.gl;
        let particles = &mut self.particles;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(particles.buffer));
            let bytes = count * (RECORD_BYTES + if ellipsoids { ELLIPSOID_BYTES } else { 0 });
            if bytes > particles.capacity {
                gl.buffer_data_size(glow::ARRAY_BUFFER, bytes as i32, glow::DYNAMIC_DRAW);
                particles.capacity = bytes;
            }
        }
        let written = solver
            .write_gl_buffer(particles.buffer.0.get(), scalar)
            .map_err(|e| anyhow!("writing particles into the GL buffer: {e}"))?;
        particles.interop = Some(written);
        if !written {
            solver
                .render_positions(scalar, &mut particles.scratch)
                .map_err(|e| anyhow!("reading particles back for drawing: {e}"))?;
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                gl.bind_buffer(glow::ARRAY_BUFFER, Some(particles.buffer));
                gl.buffer_sub_data_u8_slice(
                    glow::ARRAY_BUFFER,
                    0,
                    bytemuck::cast_slice(&particles.scratch),
                );
            }
        }
        if ellipsoids {
            // Timed as a pass of its own (the CPU stage and its upload, or the kernel through
            // interop): `render --timings` and the viewer's pass table show it.
            self.timer.begin(gl, "anisotropy");
            let written = solver
                .write_gl_anisotropy(particles.buffer.0.get())
                .map_err(|e| anyhow!("anisotropy into the GL buffer: {e}"))?;
            if !written {
                solver
                    .anisotropy(&mut particles.scratch)
                    .map_err(|e| anyhow!("anisotropy: {e}"))?;
                // SAFETY: GL calls on this thread's current context; the buffer holds
                // `count` records and `count` ellipsoids (allocated above).
                unsafe {
                    gl.bind_buffer(glow::ARRAY_BUFFER, Some(particles.buffer));
                    gl.buffer_sub_data_u8_slice(
                        glow::ARRAY_BUFFER,
                        (count * RECORD_BYTES) as i32,
                        bytemuck::cast_slice(&particles.scratch),
                    );
                }
            }
            self.timer.end(gl);
        }
        particles.set_ellipsoid_attributes(gl, ellipsoids, count);
        particles.ellipsoids = ellipsoids;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.bind_buffer(glow::ARRAY_BUFFER, None) };
        particles.count = count;
        check_gl(gl, "particle upload")
    }

    /// Whether the last upload went through interop (`None` before the first upload).
    pub fn interop(&self) -> Option<bool> {
        self.particles.interop
    }

    /// The records of the last upload as OpenGL holds them in the particle buffer (xyz, then
    /// the scalar the view colours by): what the passes draw, whichever path wrote them.
    pub fn read_particles(&self) -> Result<Vec<[f32; 4]>> {
        let mut records = vec![[0f32; 4]; self.particles.count];
        // SAFETY: GL calls on this thread's current context; the buffer holds at least
        // `count` records (it grows before every upload) and `records` that many.
        unsafe {
            self.gl
                .bind_buffer(glow::ARRAY_BUFFER, Some(self.particles.buffer));
            self.gl.get_buffer_sub_data(
                glow::ARRAY_BUFFER,
                0,
                bytemuck::cast_slice_mut(&mut records),
            );
            self.gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
        check_gl(&self.gl, "particle read-back")?;
        Ok(records)
    }

    /// `particles`: lit spheres coloured by speed (0 to the speed of a fall through the
    /// container under the scene's gravity) or by density (0.6 ρ₀ to 1.1 ρ₀), drawn into the
    /// scene buffers.
    pub(super) fn particles(&self, frame: &FrameSetup, view: View) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.targets.scene.framebuffer));
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        let pass = &self.programs.particles;
        pass.program.bind(gl);
        pass.sprite.set(gl, frame, false);
        let (low, high) = match view {
            View::Density => (0.6 * self.scale.rest_density, 1.1 * self.scale.rest_density),
            _ => (0.0, self.scale.max_speed),
        };
        pass.scalar_low.set(gl, low);
        pass.scalar_high.set(gl, high);
        pass.light_direction
            .set(gl, Mat3::from_mat4(frame.view) * skybox::sun_direction());
        self.particles.draw(gl);
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::DEPTH_TEST) };
    }
}
