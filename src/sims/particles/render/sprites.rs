//! `particles`: the fountain's water as camera-facing billboards stretched along their velocity
//! (`shaders/particles/sprite.*`), one of two sprites each, alpha-blended back to front in the
//! simulation's sort order — or added up unsorted, or drawn as lines back along their velocity.
//! On CUDA the particles come from the solver's arrays shared with GL ([`Shared`]): one point
//! each, read through the drawing order as element indices, made into the same quads by a
//! geometry shader (`shaders/particles/shared.*`).

use super::textures::{self, Sampling, SPRITE_SIZE};
use crate::gfx::program::{shader, Program, Uniform};
use crate::sims::particles::cuda::GlBuffers;
use crate::sims::particles::fountain::{Fountain, FountainParams};
use crate::sims::particles::sort;
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec3, Vec4};
use glow::HasContext;

/// How the particles are blended and drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blending {
    /// "over", back to front in the sort order.
    Sorted,
    /// Added up, in any order.
    Additive,
    /// Lines, no texture.
    Lines,
}

/// One particle as the vertex shader reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Instance {
    /// Position (m) and the sprite (0 or 1).
    pub position: [f32; 4],
    /// Velocity (m/s), unused w.
    pub velocity: [f32; 4],
    /// Colour and opacity (the fade included).
    pub color: [f32; 4],
}

/// A particle's colour and opacity before its fade, from its tag: between a clear blue and
/// white, half to nine-tenths opaque (the original's `(rnd·?, 1, 1, rnd·?)`).
pub fn particle_color(tag: u32) -> Vec4 {
    let a = textures::hash(tag as i32, 17);
    let b = textures::hash(tag as i32, 91);
    Vec3::new(0.55, 0.78, 1.0)
        .lerp(Vec3::ONE, a)
        .extend(0.5 + 0.4 * b)
}

/// A particle's sprite (0 or 1), from its tag.
pub fn particle_sprite(tag: u32) -> u32 {
    (textures::hash(tag as i32, 5) < 0.5) as u32
}

/// The particle buffer, its program and the sprites.
pub struct Sprites {
    program: Program,
    view: Uniform,
    projection: Uniform,
    size: Uniform,
    stretch: Uniform,
    lines: Uniform,
    line_time: Uniform,
    sprites_unit: Uniform,
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
    capacity: usize,
    count: usize,
    texture: glow::Texture,
    instances: Vec<Instance>,
    shared: Shared,
    /// What the next draw reads: the instances uploaded ([`Sprites::update`]) or the shared
    /// arrays ([`Sprites::use_shared`]).
    from_shared: bool,
}

impl Sprites {
    /// Builds the program, the sprite texture and an empty buffer.
    pub fn new(gl: &glow::Context) -> Result<Sprites> {
        let program = Program::new(
            gl,
            &shader!(
                "particles",
                "particles/sprite.vert",
                "particles/sprite.frag"
            ),
        )?;
        let texture = textures::upload(
            gl,
            2 * SPRITE_SIZE,
            SPRITE_SIZE,
            4,
            &textures::sprite_atlas(),
            Sampling::Clamp,
        )?;
        // SAFETY: GL calls on the current context; the attribute layout matches `Instance`
        // (#[repr(C)], 12 floats), one instance per particle.
        let (vertex_array, buffer) = unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            let stride = std::mem::size_of::<Instance>() as i32;
            for location in 0..3u32 {
                gl.enable_vertex_attrib_array(location);
                gl.vertex_attrib_pointer_f32(
                    location,
                    4,
                    glow::FLOAT,
                    false,
                    stride,
                    16 * location as i32,
                );
                gl.vertex_attrib_divisor(location, 1);
            }
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            (vertex_array, buffer)
        };
        Ok(Sprites {
            view: program.uniform(gl, "view")?,
            projection: program.uniform(gl, "projection")?,
            size: program.uniform(gl, "size")?,
            stretch: program.uniform(gl, "stretch")?,
            lines: program.uniform(gl, "lines")?,
            line_time: program.uniform(gl, "line_time")?,
            sprites_unit: program.uniform(gl, "sprites")?,
            program,
            vertex_array,
            buffer,
            capacity: 0,
            count: 0,
            texture,
            instances: Vec::new(),
            shared: Shared::new(gl)?,
            from_shared: false,
        })
    }

    /// The GL buffers a CUDA solver writes the fountain into ([`GlBuffers`]), grown to hold
    /// `count` particles.
    pub fn shared_buffers(&mut self, gl: &glow::Context, count: usize) -> GlBuffers {
        self.shared.reserve(gl, count);
        let [position, velocity, age, order, tag] = self.shared.buffers.map(|b| Some(b.0.get()));
        GlBuffers {
            position,
            velocity,
            age,
            order,
            tag,
            water: None,
        }
    }

    /// The next draw reads `count` particles of `params` from the shared buffers (written
    /// since [`Sprites::shared_buffers`]), in their order.
    pub fn use_shared(&mut self, count: usize, params: &FountainParams) {
        self.shared.count = count.min(self.shared.capacity);
        self.shared.lifetime = params.lifetime;
        self.shared.fade = params.fade;
        self.from_shared = true;
    }

    /// Uploads the fountain's particles in drawing order: `order` (the simulation's `sort`
    /// stage, back to front) when it holds one index per particle, else sorted here for the eye
    /// at `eye` looking along `forward`.
    pub fn update(
        &mut self,
        gl: &glow::Context,
        fountain: &Fountain,
        order: &[u32],
        eye: Vec3,
        forward: Vec3,
    ) {
        let count = fountain.len();
        self.from_shared = false;
        self.instances.clear();
        let mut push = |k: usize| {
            let tag = fountain.tag.get(k).copied().unwrap_or(k as u32);
            let color = particle_color(tag);
            let p = fountain.position[k];
            let v = fountain.velocity[k];
            self.instances.push(Instance {
                position: [p.x, p.y, p.z, particle_sprite(tag) as f32],
                velocity: [v.x, v.y, v.z, 0.0],
                color: [color.x, color.y, color.z, color.w * fountain.alpha(k)],
            });
        };
        if order.len() == count {
            order.iter().for_each(|&k| push(k as usize));
        } else {
            let order = sort::back_to_front(&fountain.position, eye, forward);
            order.iter().for_each(|&k| push(k as usize));
        }
        self.count = count;
        // SAFETY: GL calls on the current context; the buffer is this pass's and is (re)sized
        // to hold the instances written.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.buffer));
            let bytes: &[u8] = bytemuck::cast_slice(&self.instances);
            if count > self.capacity {
                self.capacity = count.next_power_of_two().max(1024);
                gl.buffer_data_size(
                    glow::ARRAY_BUFFER,
                    (self.capacity * std::mem::size_of::<Instance>()) as i32,
                    glow::STREAM_DRAW,
                );
            }
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytes);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    /// `particles`: draws the uploaded particles (depth tested, not written).
    pub fn draw(
        &self,
        gl: &glow::Context,
        view: Mat4,
        projection: Mat4,
        size: f32,
        stretch: f32,
        blending: Blending,
    ) {
        let lines = i32::from(blending == Blending::Lines);
        if self.from_shared {
            if self.shared.count == 0 {
                return;
            }
            let u = &self.shared.uniforms;
            self.shared.program.bind(gl);
            u.view.set(gl, view);
            u.projection.set(gl, projection);
            u.size.set(gl, size);
            u.stretch.set(gl, stretch);
            u.lines.set(gl, lines);
            u.line_time.set(gl, LINE_TIME);
            u.sprites_unit.set(gl, 0);
            u.pixel.set(gl, viewport_pixel(gl));
            u.lifetime.set(gl, self.shared.lifetime);
            u.fade.set(gl, self.shared.fade);
        } else {
            if self.count == 0 {
                return;
            }
            self.program.bind(gl);
            self.view.set(gl, view);
            self.projection.set(gl, projection);
            self.size.set(gl, size);
            self.stretch.set(gl, stretch);
            self.lines.set(gl, lines);
            self.line_time.set(gl, LINE_TIME);
            self.sprites_unit.set(gl, 0);
        }
        // SAFETY: GL calls on the current context; the objects are this pass's.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.texture));
            gl.enable(glow::BLEND);
            match blending {
                Blending::Additive => gl.blend_func(glow::SRC_ALPHA, glow::ONE),
                _ => gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA),
            }
            gl.depth_mask(false);
            if self.from_shared {
                gl.bind_vertex_array(Some(self.shared.vertex_array));
                gl.draw_elements(
                    glow::POINTS,
                    self.shared.count as i32,
                    glow::UNSIGNED_INT,
                    0,
                );
            } else if blending == Blending::Lines {
                gl.bind_vertex_array(Some(self.vertex_array));
                gl.draw_arrays_instanced(glow::LINES, 0, 2, self.count as i32);
            } else {
                gl.bind_vertex_array(Some(self.vertex_array));
                gl.draw_arrays_instanced(glow::TRIANGLE_STRIP, 0, 4, self.count as i32);
            }
            gl.bind_vertex_array(None);
            gl.depth_mask(true);
            gl.disable(glow::BLEND);
        }
    }

    /// Frees the GL objects.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
        // SAFETY: GL calls on the current context; the objects are this pass's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.buffer);
            gl.delete_texture(self.texture);
        }
        self.shared.delete(gl);
    }
}

/// A line's length in the lines view, seconds of flight.
const LINE_TIME: f32 = 0.04;

/// One pixel of the current viewport in NDC.
fn viewport_pixel(gl: &glow::Context) -> glam::Vec2 {
    let mut viewport = [0i32; 4];
    // SAFETY: a GL query on the current context into an array of the four values it writes.
    unsafe { gl.get_parameter_i32_slice(glow::VIEWPORT, &mut viewport) };
    2.0 / glam::Vec2::new(viewport[2].max(1) as f32, viewport[3].max(1) as f32)
}

/// The uniforms of the shared arrays' program.
struct SharedUniforms {
    view: Uniform,
    projection: Uniform,
    size: Uniform,
    stretch: Uniform,
    lines: Uniform,
    line_time: Uniform,
    sprites_unit: Uniform,
    pixel: Uniform,
    lifetime: Uniform,
    fade: Uniform,
}

/// The fountain's arrays as a CUDA solver writes them into GL ([`GlBuffers`]'s layouts:
/// positions and velocities packed `vec3`, ages `float`, the order `uint`, the tags `uint`), a
/// vertex array reading them per point with the order as its element buffer, and their program
/// (which derives each particle's colour and sprite from its tag as [`particle_color`] and
/// [`particle_sprite`] do).
pub struct Shared {
    program: Program,
    uniforms: SharedUniforms,
    vertex_array: glow::VertexArray,
    /// Positions, velocities, ages, order, tags.
    buffers: [glow::Buffer; 5],
    capacity: usize,
    count: usize,
    lifetime: f32,
    fade: f32,
}

/// Bytes per particle of each shared buffer.
const SHARED_BYTES: [usize; 5] = [12, 12, 4, 4, 4];

impl Shared {
    fn new(gl: &glow::Context) -> Result<Shared> {
        let program = Program::new(
            gl,
            &shader!(
                "particles (shared)",
                "particles/shared.vert",
                "particles/shared.geom",
                "particles/sprite.frag"
            ),
        )?;
        let uniforms = SharedUniforms {
            view: program.uniform(gl, "view")?,
            projection: program.uniform(gl, "projection")?,
            size: program.uniform(gl, "size")?,
            stretch: program.uniform(gl, "stretch")?,
            lines: program.uniform(gl, "lines")?,
            line_time: program.uniform(gl, "line_time")?,
            sprites_unit: program.uniform(gl, "sprites")?,
            pixel: program.uniform(gl, "pixel")?,
            lifetime: program.uniform(gl, "lifetime")?,
            fade: program.uniform(gl, "fade")?,
        };
        // SAFETY: GL calls on the current context; attributes 0–2 read the first three buffers
        // at the layouts of `SHARED_BYTES`, the fourth is the element buffer, attribute 3 (an
        // integer attribute) reads the fifth.
        let (vertex_array, buffers) = unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let mut buffers = Vec::new();
            for _ in 0..5 {
                buffers.push(gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?);
            }
            let buffers: [glow::Buffer; 5] = buffers.try_into().expect("five buffers");
            gl.bind_vertex_array(Some(vertex_array));
            for (location, (buffer, components)) in buffers[..3].iter().zip([3, 3, 1]).enumerate() {
                gl.bind_buffer(glow::ARRAY_BUFFER, Some(*buffer));
                gl.enable_vertex_attrib_array(location as u32);
                gl.vertex_attrib_pointer_f32(location as u32, components, glow::FLOAT, false, 0, 0);
            }
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffers[4]));
            gl.enable_vertex_attrib_array(3);
            gl.vertex_attrib_pointer_i32(3, 1, glow::UNSIGNED_INT, 0, 0);
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(buffers[3]));
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            (vertex_array, buffers)
        };
        Ok(Shared {
            program,
            uniforms,
            vertex_array,
            buffers,
            capacity: 0,
            count: 0,
            lifetime: 1.0,
            fade: 0.0,
        })
    }

    /// Grows the buffers to hold `count` particles (a CUDA registration older than the new
    /// storage is renewed by `GlInterop`).
    fn reserve(&mut self, gl: &glow::Context, count: usize) {
        if count <= self.capacity {
            return;
        }
        self.capacity = count.next_power_of_two().max(1024);
        // SAFETY: GL calls on the current context; the buffers are this pass's.
        unsafe {
            for (buffer, bytes) in self.buffers.iter().zip(SHARED_BYTES) {
                gl.bind_buffer(glow::ARRAY_BUFFER, Some(*buffer));
                gl.buffer_data_size(
                    glow::ARRAY_BUFFER,
                    (self.capacity * bytes) as i32,
                    glow::DYNAMIC_DRAW,
                );
            }
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
        // SAFETY: GL calls on the current context; the objects are this pass's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            for buffer in self.buffers {
                gl.delete_buffer(buffer);
            }
        }
    }
}
