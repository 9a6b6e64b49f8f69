//! `water`: the fountain's basin, the wave equation's height field as a mesh of its nodes
//! (normals by central differences) drawn transparent with Fresnel's factor
//! (`shaders/particles/water.*`), after the opaque scene and before the droplets. On CUDA the
//! `water` kernel builds the same vertices from the basin's heights on the GPU straight into
//! the mesh's GL buffer ([`Water::vertex_buffer`]).

use super::sky::Light;
use crate::gfx::program::{shader, Program, Uniform};
use crate::sims::particles::fountain::Fountain;
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec3, Vec4};
use glow::HasContext;

/// The water's colour and its opacity seen from straight above.
pub const WATER_COLOR: Vec4 = Vec4::new(0.08, 0.30, 0.38, 0.55);

/// Slopes are shaded this many times steeper than they are, so millimetre ripples show.
pub const RIPPLE_GAIN: f32 = 4.0;

/// A water vertex: position and normal.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct WaterVertex {
    /// Position, m.
    pub position: [f32; 3],
    /// Unit normal.
    pub normal: [f32; 3],
}

/// The basin's vertices into `out`, node (i, j) at index j·n + i: at [`node_position`], the
/// normal by central differences of the heights (one-sided at the edges), its slopes
/// [`RIPPLE_GAIN`] times steeper — what the `water` kernel computes, one node per thread.
pub fn vertices(fountain: &Fountain, out: &mut Vec<WaterVertex>) {
    let s = &fountain.surface;
    let n = s.n;
    let height = |i: usize, j: usize| s.height[j.min(n - 1) * n + i.min(n - 1)];
    out.clear();
    for j in 0..n {
        for i in 0..n {
            let dx = height(i + 1, j) - height(i.saturating_sub(1), j);
            let dz = height(i, j + 1) - height(i, j.saturating_sub(1));
            let normal = Vec3::new(-RIPPLE_GAIN * dx, 2.0 * s.h, -RIPPLE_GAIN * dz).normalize();
            out.push(WaterVertex {
                position: node_position(fountain, i, j).into(),
                normal: normal.into(),
            });
        }
    }
}

/// The node of the basin's surface (i, j) in the world, m: the pool's grid spans [−b, b]²
/// around the cube, its heights over the water's level.
pub fn node_position(fountain: &Fountain, i: usize, j: usize) -> Vec3 {
    let s = &fountain.surface;
    let b = fountain.params.basin;
    Vec3::new(
        -b + i as f32 * s.h,
        fountain.params.level + s.height[j * s.n + i],
        -b + j as f32 * s.h,
    )
}

/// The basin's mesh and program.
pub struct Water {
    program: Program,
    view_projection: Uniform,
    sky: Uniform,
    eye: Uniform,
    sun_direction: Uniform,
    sun_color: Uniform,
    water_color: Uniform,
    vertex_array: glow::VertexArray,
    vertices: glow::Buffer,
    indices: glow::Buffer,
    nodes: usize,
    count: i32,
    scratch: Vec<WaterVertex>,
}

impl Water {
    /// The program and a mesh of `nodes`² vertices (two triangles per cell).
    pub fn new(gl: &glow::Context, nodes: usize) -> Result<Water> {
        let program = Program::new(
            gl,
            &shader!("water", "particles/water.vert", "particles/water.frag"),
        )?;
        let mut indices = Vec::with_capacity(6 * nodes * nodes);
        for j in 0..nodes as u32 - 1 {
            for i in 0..nodes as u32 - 1 {
                let a = j * nodes as u32 + i;
                let c = a + nodes as u32;
                indices.extend([a, c, a + 1, a + 1, c, c + 1]);
            }
        }
        // SAFETY: GL calls on the current context; the attribute layout matches
        // `WaterVertex` (#[repr(C)], 6 floats).
        let (vertex_array, vertices, index_buffer) = unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let vertices = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            let index_buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vertices));
            gl.buffer_data_size(
                glow::ARRAY_BUFFER,
                (nodes * nodes * std::mem::size_of::<WaterVertex>()) as i32,
                glow::STREAM_DRAW,
            );
            for (location, offset) in [(0, 0), (1, 12)] {
                gl.enable_vertex_attrib_array(location);
                gl.vertex_attrib_pointer_f32(location, 3, glow::FLOAT, false, 24, offset);
            }
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(index_buffer));
            gl.buffer_data_u8_slice(
                glow::ELEMENT_ARRAY_BUFFER,
                bytemuck::cast_slice(&indices),
                glow::STATIC_DRAW,
            );
            gl.bind_vertex_array(None);
            (vertex_array, vertices, index_buffer)
        };
        Ok(Water {
            view_projection: program.uniform(gl, "view_projection")?,
            sky: program.uniform(gl, "sky")?,
            eye: program.uniform(gl, "eye")?,
            sun_direction: program.uniform(gl, "sun_direction")?,
            sun_color: program.uniform(gl, "sun_color")?,
            water_color: program.uniform(gl, "water_color")?,
            program,
            vertex_array,
            vertices,
            indices: index_buffer,
            nodes,
            count: indices.len() as i32,
            scratch: Vec::new(),
        })
    }

    /// Nodes per side of the mesh.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The GL buffer of the vertices ([`WaterVertex`]'s layout, [`Self::nodes`]² of them),
    /// which a CUDA solver writes through interop instead of [`Water::update`].
    pub fn vertex_buffer(&self) -> u32 {
        self.vertices.0.get()
    }

    /// Uploads the basin's heights (the fountain's surface has [`Self::nodes`]² nodes).
    pub fn update(&mut self, gl: &glow::Context, fountain: &Fountain) {
        vertices(fountain, &mut self.scratch);
        // SAFETY: GL calls on the current context; the buffer holds nodes² vertices.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.vertices));
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytemuck::cast_slice(&self.scratch));
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    /// `water`: the surface, blended over the opaque scene (depth tested, not written).
    pub fn draw(
        &self,
        gl: &glow::Context,
        view_projection: Mat4,
        eye: Vec3,
        light: &Light,
        sky: glow::Texture,
    ) {
        self.program.bind(gl);
        self.view_projection.set(gl, view_projection);
        self.eye.set(gl, eye);
        self.sun_direction.set(gl, light.sun);
        self.sun_color.set(gl, light.color);
        self.water_color.set(gl, WATER_COLOR);
        self.sky.set(gl, 1);
        // SAFETY: GL calls on the current context; the objects are this pass's.
        unsafe {
            gl.active_texture(glow::TEXTURE1);
            gl.bind_texture(glow::TEXTURE_CUBE_MAP, Some(sky));
            gl.active_texture(glow::TEXTURE0);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
            gl.depth_mask(false);
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_elements(glow::TRIANGLES, self.count, glow::UNSIGNED_INT, 0);
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
            gl.delete_buffer(self.vertices);
            gl.delete_buffer(self.indices);
        }
    }
}
