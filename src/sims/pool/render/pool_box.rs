//! The pool's box — the floor at y = −depth, four walls up to the rim — and a stone deck around
//! it at the rim's height, as world-space triangles, and the `pool` pass that draws them.

use super::shared::{pool_shader, FrameValues, Shared};
use crate::gfx::program::{Program, Uniform};
use anyhow::{anyhow, Result};
use glam::Vec3;
use glow::HasContext;

/// How far the deck reaches past the pool, in pool sides.
const DECK_REACH: f32 = 5.0;

/// Position and normal of a vertex.
type Vertex = [f32; 6];

/// The quad with corners `a`, `b`, `c`, `d` (in order) facing `normal`, as two triangles.
fn quad(a: Vec3, b: Vec3, c: Vec3, d: Vec3, normal: Vec3) -> [Vertex; 6] {
    let v = |p: Vec3| [p.x, p.y, p.z, normal.x, normal.y, normal.z];
    [v(a), v(b), v(c), v(a), v(c), v(d)]
}

/// The floor, the walls (facing in) and the deck's four slabs (facing up).
pub fn triangles(size: f32, depth: f32, rim: f32) -> Vec<Vertex> {
    let (s, lo, hi) = (size, -depth, rim);
    let r = DECK_REACH * size;
    let p = Vec3::new;
    let mut out = Vec::new();
    out.extend(quad(
        p(0., lo, 0.),
        p(0., lo, s),
        p(s, lo, s),
        p(s, lo, 0.),
        Vec3::Y,
    ));
    out.extend(quad(
        p(0., lo, 0.),
        p(0., hi, 0.),
        p(0., hi, s),
        p(0., lo, s),
        Vec3::X,
    ));
    out.extend(quad(
        p(s, lo, 0.),
        p(s, lo, s),
        p(s, hi, s),
        p(s, hi, 0.),
        Vec3::NEG_X,
    ));
    out.extend(quad(
        p(0., lo, 0.),
        p(s, lo, 0.),
        p(s, hi, 0.),
        p(0., hi, 0.),
        Vec3::Z,
    ));
    out.extend(quad(
        p(0., lo, s),
        p(0., hi, s),
        p(s, hi, s),
        p(s, lo, s),
        Vec3::NEG_Z,
    ));
    let slab = |x0: f32, z0: f32, x1: f32, z1: f32| {
        quad(
            p(x0, hi, z0),
            p(x0, hi, z1),
            p(x1, hi, z1),
            p(x1, hi, z0),
            Vec3::Y,
        )
    };
    out.extend(slab(-r, -r, 0.0, s + r));
    out.extend(slab(s, -r, s + r, s + r));
    out.extend(slab(0.0, -r, s, 0.0));
    out.extend(slab(0.0, s, s, s + r));
    out
}

/// The box and deck's vertex buffer.
pub(super) struct PoolBox {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
    count: i32,
    /// Bytes of the vertex buffer, as allocated.
    pub(super) bytes: u64,
}

impl PoolBox {
    pub(super) fn new(gl: &glow::Context, size: f32, depth: f32, rim: f32) -> Result<PoolBox> {
        let vertices = triangles(size, depth, rim);
        // SAFETY: GL calls on the current context; the buffers are this box's.
        unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(
                glow::ARRAY_BUFFER,
                bytemuck::cast_slice(&vertices),
                glow::STATIC_DRAW,
            );
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 3, glow::FLOAT, false, 24, 0);
            gl.enable_vertex_attrib_array(1);
            gl.vertex_attrib_pointer_f32(1, 3, glow::FLOAT, false, 24, 12);
            gl.bind_vertex_array(None);
            Ok(PoolBox {
                vertex_array,
                buffer,
                count: vertices.len() as i32,
                bytes: std::mem::size_of_val(vertices.as_slice()) as u64,
            })
        }
    }

    fn draw(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the vertex array is this box's.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(glow::TRIANGLES, 0, self.count);
        }
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the objects are this box's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.buffer);
        }
    }
}

/// `pool`: floor, walls and deck.
pub(super) struct PoolProgram {
    program: Program,
    shared: Shared,
    view_projection: Uniform,
}

impl PoolProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<PoolProgram> {
        let program = Program::new(gl, &pool_shader!("pool", "pool.vert", "pool.frag"))?;
        Ok(PoolProgram {
            shared: Shared::locate(gl, &program)?,
            view_projection: program.uniform(gl, "view_projection")?,
            program,
        })
    }

    pub(super) fn draw(&self, gl: &glow::Context, values: &FrameValues, pool_box: &PoolBox) {
        self.program.bind(gl);
        self.shared.set(gl, values);
        self.view_projection.set(gl, values.view_projection);
        pool_box.draw(gl);
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_faces_the_water_and_the_deck_faces_up() {
        let vertices = triangles(2.0, 1.0, 0.1);
        assert_eq!(vertices.len(), 9 * 6);
        for triangle in vertices.chunks(3) {
            let p: Vec<Vec3> = triangle
                .iter()
                .map(|v| Vec3::new(v[0], v[1], v[2]))
                .collect();
            let normal = Vec3::new(triangle[0][3], triangle[0][4], triangle[0][5]);
            let winding = (p[1] - p[0]).cross(p[2] - p[0]);
            // The normal points into the pool (or up), counter-clockwise seen from there.
            assert!(winding.normalize().dot(normal) > 0.99, "{p:?} {normal}");
            let centre = (p[0] + p[1] + p[2]) / 3.0;
            let towards_water = Vec3::new(1.0, -0.5, 1.0) - centre;
            if normal.y < 0.5 {
                assert!(towards_water.dot(normal) > 0.0, "{p:?}");
            }
        }
    }
}
