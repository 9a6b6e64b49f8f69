//! `particles`: the fountain's water as camera-facing billboards stretched along their velocity
//! (`shaders/particles/sprite.*`), one of two sprites each, alpha-blended back to front in the
//! simulation's sort order — or added up unsorted, or drawn as lines back along their velocity.

use super::textures::{self, Sampling, SPRITE_SIZE};
use crate::gfx::program::{shader, Program, Uniform};
use crate::sims::particles::fountain::Fountain;
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
        })
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
        if self.count == 0 {
            return;
        }
        self.program.bind(gl);
        self.view.set(gl, view);
        self.projection.set(gl, projection);
        self.size.set(gl, size);
        self.stretch.set(gl, stretch);
        let lines = i32::from(blending == Blending::Lines);
        self.lines.set(gl, lines);
        self.line_time.set(gl, 0.04);
        self.sprites_unit.set(gl, 0);
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
            gl.bind_vertex_array(Some(self.vertex_array));
            if blending == Blending::Lines {
                gl.draw_arrays_instanced(glow::LINES, 0, 2, self.count as i32);
            } else {
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
    }
}
