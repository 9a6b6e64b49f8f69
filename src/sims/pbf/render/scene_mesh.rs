//! The solid scene around the fluid: a checkered floor, the container (back walls and edges, so
//! the fluid inside stays visible) and the obstacles, as world-space meshes; the `scene` pass
//! draws the solids in front of the sky, lit by the sunlight that comes through the fluid
//! (`light.rs`), and the `edges` pass draws the container's edges over the shaded fluid, hidden
//! only where water is in front of them. Colours are chosen on an sRGB screen and shaded in
//! linear light.

use super::{FrameSetup, Renderer};
use crate::gfx::post::{linear_to_srgb, srgb_to_linear};
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

/// The floor's height under `container`: a little below its bottom, so the container's floor
/// and the fluid on it never fight the floor for depth.
pub fn floor_height(container: &Aabb) -> f32 {
    container.min[1] - 0.002 * container.size()[1]
}

/// The side of the floor's checker cells for a container of diagonal `diagonal` (m): a tenth
/// of it, of 0.1 m at the least.
pub fn checker_size(diagonal: f32) -> f32 {
    0.1 * diagonal.max(0.1)
}

/// The floor's colour (sRGB, as picked); its checker's dark cells are 0.6 of it.
const FLOOR_COLOR: Vec4 = Vec4::new(0.80, 0.78, 0.74, 1.0);

/// The floor in the sun as `scene.frag` lights it (up-facing: ambient 0.25 + 0.15, sunlight
/// 0.9 · sun.y), its checker averaged, sRGB-encoded: the ground of the sky that `composite`
/// reflects, so that reflections below the horizon show the floor the picture shows there.
pub fn floor_from_afar() -> Vec3 {
    let lighting = 0.25 + 0.15 + 0.9 * skybox::sun_direction().y;
    let albedo = linear(FLOOR_COLOR).truncate() * 0.5 * (1.0 + 0.6);
    (albedo * lighting).map(|c| linear_to_srgb(c.min(1.0)))
}

/// Builds the floor, container and obstacle meshes of `scene`.
pub fn build(gl: &glow::Context, scene: &Scene) -> Result<Vec<Mesh>> {
    let container = scene.container;
    let size = Vec3::from(container.size());
    let mut meshes = Vec::new();

    let margin = 40.0 * size.max_element();
    let floor_min = Vec3::new(
        container.min[0] - margin,
        floor_height(&container),
        container.min[2] - margin,
    );
    let floor_max = Vec3::from(container.max) + Vec3::new(margin, 0.0, margin);
    meshes.push(Mesh::new(
        gl,
        &floor_quad(floor_min, floor_max),
        glow::TRIANGLES,
        Surface::Floor,
        FLOOR_COLOR,
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
    fluid_light: Uniform,
    light_view: Uniform,
    light_projection: Uniform,
    /// Light depth, light thickness, caustics (texture units 0, 1, 2).
    light_samplers: [Uniform; 3],
    attenuation: Uniform,
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
            fluid_light: uniform("fluid_light")?,
            light_view: uniform("light_view")?,
            light_projection: uniform("light_projection")?,
            light_samplers: [
                uniform("light_depth")?,
                uniform("light_thickness")?,
                uniform("caustics")?,
            ],
            attenuation: uniform("attenuation")?,
            program,
        })
    }
}

/// A colour picked on an sRGB screen, in linear light (alpha kept).
fn linear(color: Vec4) -> Vec4 {
    Vec4::new(
        srgb_to_linear(color.x),
        srgb_to_linear(color.y),
        srgb_to_linear(color.z),
        color.w,
    )
}

impl Renderer {
    /// `scene`: sky, floor, container walls and obstacles into the scene colour and depth, the
    /// sun's share of their light through the fluid when `light` (the sun's view) is given.
    pub(super) fn scene(
        &self,
        frame: &FrameSetup,
        light: Option<&FrameSetup>,
        settings: &super::RenderSettings,
    ) {
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
        self.bind_scene_program(frame);
        pass.fluid_light.set(gl, i32::from(light.is_some()));
        if let Some(light) = light {
            pass.light_view.set(gl, light.view);
            pass.light_projection.set(gl, light.projection);
            pass.attenuation.set(gl, Vec3::from(settings.attenuation));
            let textures = [
                self.light.depth.texture,
                self.light.thickness.texture,
                self.light.caustics.texture,
            ];
            for (unit, (sampler, texture)) in pass.light_samplers.iter().zip(textures).enumerate() {
                sampler.set(gl, unit as i32);
                self.bind_texture(unit as u32, glow::TEXTURE_2D, Some(texture));
            }
        }
        for mesh in self.meshes.iter().filter(|m| m.surface != Surface::Lines) {
            let glass = mesh.color.w < 1.0;
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                if mesh.back_faces_only {
                    gl.enable(glow::CULL_FACE);
                    gl.cull_face(glow::FRONT);
                } else {
                    gl.disable(glow::CULL_FACE);
                }
                if glass {
                    // Glass hides nothing: it writes no depth, so the fluid at the walls is
                    // never cut by the depth test against them.
                    gl.enable(glow::BLEND);
                    gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
                    gl.depth_mask(false);
                }
            }
            pass.surface_kind.set(gl, mesh.surface as i32);
            pass.base_color.set(gl, linear(mesh.color));
            mesh.draw(gl);
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                gl.disable(glow::BLEND);
                gl.depth_mask(true);
            }
        }
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::CULL_FACE) };
    }

    /// Binds the `scene` program with the frame's camera, sun and floor uniforms.
    fn bind_scene_program(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        let pass = &self.programs.scene;
        let extent = self.scale.container_diagonal.max(0.1);
        pass.program.bind(gl);
        pass.view_projection.set(gl, frame.projection * frame.view);
        pass.sun_direction.set(gl, skybox::sun_direction());
        pass.checker_size.set(gl, checker_size(extent));
        pass.eye_position.set(gl, frame.eye_position);
        let fog = skybox::HORIZON;
        pass.fog_color.set(
            gl,
            Vec3::new(
                srgb_to_linear(fog.x),
                srgb_to_linear(fog.y),
                srgb_to_linear(fog.z),
            ),
        );
        pass.fog_distance.set(gl, 6.0 * extent);
    }

    /// `edges`: the container's edges over `target` (the shaded fluid, or the scene with the
    /// particles), depth-tested against its depth so water in front hides them.
    pub(super) fn edges(&self, frame: &FrameSetup, target: glow::Framebuffer) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(target));
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LEQUAL);
            gl.depth_mask(false);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
        }
        let pass = &self.programs.scene;
        self.bind_scene_program(frame);
        pass.fluid_light.set(gl, 0);
        // Each line is drawn once per offset of EDGE_JITTER (in pixels, moved in clip space),
        // with the opacity that the copies' overlap compounds back to the line's own: a
        // supersampled line about 2 px wide whose steps are blended, instead of a 1-px line
        // stair-stepped and dashed (FXAA alone left them so).
        let copies = EDGE_JITTER.len() as i32;
        for (dx, dy) in EDGE_JITTER {
            let offset = glam::Mat4::from_translation(Vec3::new(
                2.0 * dx / frame.width as f32,
                2.0 * dy / frame.height as f32,
                0.0,
            ));
            pass.view_projection
                .set(gl, offset * frame.projection * frame.view);
            for mesh in self.meshes.iter().filter(|m| m.surface == Surface::Lines) {
                pass.surface_kind.set(gl, mesh.surface as i32);
                let color = linear(mesh.color);
                let alpha = 1.0 - (1.0 - color.w).powf(1.0 / copies as f32);
                pass.base_color.set(gl, color.truncate().extend(alpha));
                mesh.draw(gl);
            }
        }
        // SAFETY: as above.
        unsafe {
            gl.disable(glow::BLEND);
            gl.depth_mask(true);
            gl.depth_func(glow::LESS);
            gl.disable(glow::DEPTH_TEST);
        }
    }
}

/// The `edges` pass's offsets of each line's copies, pixels: a rotated grid over ±0.5 px.
const EDGE_JITTER: [(f32, f32); 4] = [(0.5, 0.17), (-0.17, 0.5), (-0.5, -0.17), (0.17, -0.5)];

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
