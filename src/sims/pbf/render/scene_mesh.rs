//! The solid scene around the fluid: a checkered floor, the container (back walls and edges, so
//! the fluid inside stays visible) and the obstacles, as world-space meshes, and the `scene`
//! pass that draws them in front of the sky.

use super::{FrameSetup, Renderer};
use crate::gfx::program::{shader, Program, Uniform};
use crate::gfx::skybox;
use crate::scene::Shape;
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::Aabb;
use anyhow::{anyhow, Result};
use glam::{Vec3, Vec4};
use glow::HasContext;

/// How the `scene` shader shades a mesh (the `surface_kind` uniform).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// Lambert-lit solid.
    Lit = 0,
    /// Lit checkerboard.
    Floor = 1,
    /// Unlit lines.
    Lines = 2,
}

/// One draw call of the scene pass.
pub struct Mesh {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
    mode: u32,
    count: i32,
    /// Shading.
    pub surface: Surface,
    /// RGBA colour; alpha below 1 is blended (the container's glass walls and edges).
    pub color: Vec4,
    /// Whether only back faces are drawn (the container's far walls).
    pub back_faces_only: bool,
}

impl Mesh {
    fn new(
        gl: &glow::Context,
        vertices: &[[f32; 6]],
        mode: u32,
        surface: Surface,
        color: Vec4,
    ) -> Result<Mesh> {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(
                glow::ARRAY_BUFFER,
                bytemuck::cast_slice(vertices),
                glow::STATIC_DRAW,
            );
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 3, glow::FLOAT, false, 24, 0);
            gl.enable_vertex_attrib_array(1);
            gl.vertex_attrib_pointer_f32(1, 3, glow::FLOAT, false, 24, 12);
            gl.bind_vertex_array(None);
            Ok(Mesh {
                vertex_array,
                buffer,
                mode,
                count: vertices.len() as i32,
                surface,
                color,
                back_faces_only: false,
            })
        }
    }

    /// Issues the draw call (the `scene` program is bound by the caller).
    pub fn draw(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(self.mode, 0, self.count);
        }
    }

    /// Frees the buffers.
    pub fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.buffer);
        }
    }
}

/// Builds the floor, container and obstacle meshes of `scene`.
pub fn build(gl: &glow::Context, scene: &Scene) -> Result<Vec<Mesh>> {
    let container = scene.container;
    let size = Vec3::from(container.size());
    let mut meshes = Vec::new();

    let margin = 40.0 * size.max_element();
    let floor_min = Vec3::from(container.min) - Vec3::new(margin, 0.002 * size.y, margin);
    let floor_max = Vec3::from(container.max) + Vec3::new(margin, 0.0, margin);
    meshes.push(Mesh::new(
        gl,
        &floor_quad(floor_min, floor_max),
        glow::TRIANGLES,
        Surface::Floor,
        Vec4::new(0.80, 0.78, 0.74, 1.0),
    )?);

    let mut walls = Mesh::new(
        gl,
        &box_triangles(&container),
        glow::TRIANGLES,
        Surface::Lit,
        Vec4::new(0.80, 0.86, 0.92, 0.45),
    )?;
    walls.back_faces_only = true;
    meshes.push(walls);
    meshes.push(Mesh::new(
        gl,
        &box_edges(&container),
        glow::LINES,
        Surface::Lines,
        Vec4::new(0.15, 0.17, 0.2, 0.8),
    )?);

    for obstacle in &scene.obstacles {
        let triangles = match *obstacle {
            Shape::Box(aabb) => box_triangles(&aabb),
            Shape::Sphere { center, radius } => sphere_triangles(Vec3::from(center), radius),
            Shape::Cylinder { .. } => continue,
        };
        meshes.push(Mesh::new(
            gl,
            &triangles,
            glow::TRIANGLES,
            Surface::Lit,
            Vec4::new(0.82, 0.45, 0.25, 1.0),
        )?);
    }
    Ok(meshes)
}

/// `scene`: the meshes, lit, the floor fading into the horizon.
pub(super) struct SceneProgram {
    pub(super) program: Program,
    view_projection: Uniform,
    sun_direction: Uniform,
    checker_size: Uniform,
    eye_position: Uniform,
    fog_color: Uniform,
    fog_distance: Uniform,
    surface_kind: Uniform,
    base_color: Uniform,
}

impl SceneProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<SceneProgram> {
        let program = Program::new(gl, &shader!("scene", "pbf/scene.vert", "pbf/scene.frag"))?;
        let uniform = |name| program.uniform(gl, name);
        Ok(SceneProgram {
            view_projection: uniform("view_projection")?,
            sun_direction: uniform("sun_direction")?,
            checker_size: uniform("checker_size")?,
            eye_position: uniform("eye_position")?,
            fog_color: uniform("fog_color")?,
            fog_distance: uniform("fog_distance")?,
            surface_kind: uniform("surface_kind")?,
            base_color: uniform("base_color")?,
            program,
        })
    }
}

impl Renderer {
    /// `scene`: sky, floor, container and obstacles into the scene colour and depth.
    pub(super) fn scene(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        let view_projection = frame.projection * frame.view;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.targets.scene.framebuffer));
            gl.clear_color(0.0, 0.0, 0.0, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
        }
        self.sky.draw(gl, view_projection, &self.fullscreen);

        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        let pass = &self.programs.scene;
        let extent = self.scale.container_diagonal.max(0.1);
        pass.program.bind(gl);
        pass.view_projection.set(gl, view_projection);
        pass.sun_direction.set(gl, skybox::sun_direction());
        pass.checker_size.set(gl, 0.1 * extent);
        pass.eye_position.set(gl, frame.eye_position);
        pass.fog_color.set(gl, skybox::HORIZON);
        pass.fog_distance.set(gl, 6.0 * extent);
        for mesh in &self.meshes {
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                if mesh.back_faces_only {
                    gl.enable(glow::CULL_FACE);
                    gl.cull_face(glow::FRONT);
                } else {
                    gl.disable(glow::CULL_FACE);
                }
                if mesh.color.w < 1.0 {
                    gl.enable(glow::BLEND);
                    gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
                }
            }
            pass.surface_kind.set(gl, mesh.surface as i32);
            pass.base_color.set(gl, mesh.color);
            mesh.draw(gl);
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe { gl.disable(glow::BLEND) };
        }
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::CULL_FACE) };
    }
}

fn vertex(position: Vec3, normal: Vec3) -> [f32; 6] {
    [
        position.x, position.y, position.z, normal.x, normal.y, normal.z,
    ]
}

fn floor_quad(min: Vec3, max: Vec3) -> Vec<[f32; 6]> {
    let y = min.y;
    let corners = [
        Vec3::new(min.x, y, min.z),
        Vec3::new(min.x, y, max.z),
        Vec3::new(max.x, y, max.z),
        Vec3::new(max.x, y, min.z),
    ];
    [0, 1, 2, 0, 2, 3]
        .iter()
        .map(|&i| vertex(corners[i], Vec3::Y))
        .collect()
}

/// The six faces of a box, counter-clockwise seen from outside, with outward normals.
fn box_triangles(aabb: &Aabb) -> Vec<[f32; 6]> {
    let (min, max) = (Vec3::from(aabb.min), Vec3::from(aabb.max));
    let corner = |x: usize, y: usize, z: usize| {
        Vec3::new([min.x, max.x][x], [min.y, max.y][y], [min.z, max.z][z])
    };
    // Each face: outward normal and its four corners counter-clockwise from outside.
    let faces: [(Vec3, [Vec3; 4]); 6] = [
        (
            Vec3::X,
            [
                corner(1, 0, 0),
                corner(1, 1, 0),
                corner(1, 1, 1),
                corner(1, 0, 1),
            ],
        ),
        (
            Vec3::NEG_X,
            [
                corner(0, 0, 0),
                corner(0, 0, 1),
                corner(0, 1, 1),
                corner(0, 1, 0),
            ],
        ),
        (
            Vec3::Y,
            [
                corner(0, 1, 0),
                corner(0, 1, 1),
                corner(1, 1, 1),
                corner(1, 1, 0),
            ],
        ),
        (
            Vec3::NEG_Y,
            [
                corner(0, 0, 0),
                corner(1, 0, 0),
                corner(1, 0, 1),
                corner(0, 0, 1),
            ],
        ),
        (
            Vec3::Z,
            [
                corner(0, 0, 1),
                corner(1, 0, 1),
                corner(1, 1, 1),
                corner(0, 1, 1),
            ],
        ),
        (
            Vec3::NEG_Z,
            [
                corner(0, 0, 0),
                corner(0, 1, 0),
                corner(1, 1, 0),
                corner(1, 0, 0),
            ],
        ),
    ];
    faces
        .iter()
        .flat_map(|(normal, quad)| {
            [0, 1, 2, 0, 2, 3]
                .into_iter()
                .map(move |i| vertex(quad[i], *normal))
        })
        .collect()
}

fn box_edges(aabb: &Aabb) -> Vec<[f32; 6]> {
    let (min, max) = (Vec3::from(aabb.min), Vec3::from(aabb.max));
    let corner = |i: usize| {
        Vec3::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        )
    };
    let mut lines = Vec::new();
    for a in 0..8usize {
        for bit in [1, 2, 4] {
            if a & bit == 0 {
                lines.push(vertex(corner(a), Vec3::Y));
                lines.push(vertex(corner(a | bit), Vec3::Y));
            }
        }
    }
    lines
}

fn sphere_triangles(center: Vec3, radius: f32) -> Vec<[f32; 6]> {
    const RINGS: usize = 24;
    const SEGMENTS: usize = 48;
    let point = |ring: usize, segment: usize| {
        let theta = std::f32::consts::PI * ring as f32 / RINGS as f32;
        let phi = std::f32::consts::TAU * segment as f32 / SEGMENTS as f32;
        Vec3::new(
            theta.sin() * phi.cos(),
            theta.cos(),
            theta.sin() * phi.sin(),
        )
    };
    let mut triangles = Vec::new();
    for ring in 0..RINGS {
        for segment in 0..SEGMENTS {
            let a = point(ring, segment);
            let b = point(ring + 1, segment);
            let c = point(ring + 1, segment + 1);
            let d = point(ring, segment + 1);
            for n in [a, c, b, a, d, c] {
                triangles.push(vertex(center + n * radius, n));
            }
        }
    }
    triangles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_faces_wind_counter_clockwise_from_outside() {
        let triangles = box_triangles(&Aabb::new([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]));
        assert_eq!(triangles.len(), 36);
        for triangle in triangles.chunks(3) {
            let p: Vec<Vec3> = triangle
                .iter()
                .map(|v| Vec3::new(v[0], v[1], v[2]))
                .collect();
            let normal = Vec3::new(triangle[0][3], triangle[0][4], triangle[0][5]);
            let winding = (p[1] - p[0]).cross(p[2] - p[0]);
            assert!(winding.dot(normal) > 0.0, "{p:?} normal {normal}");
        }
    }

    #[test]
    fn sphere_faces_wind_counter_clockwise_from_outside() {
        let triangles = sphere_triangles(Vec3::ZERO, 1.0);
        for triangle in triangles.chunks(3) {
            let p: Vec<Vec3> = triangle
                .iter()
                .map(|v| Vec3::new(v[0], v[1], v[2]))
                .collect();
            let winding = (p[1] - p[0]).cross(p[2] - p[0]);
            let center = (p[0] + p[1] + p[2]) / 3.0;
            assert!(winding.dot(center) >= -1e-6, "{p:?}");
        }
    }
}
