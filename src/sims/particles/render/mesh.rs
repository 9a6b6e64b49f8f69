//! Lit meshes: a vertex buffer of (position, normal, texture coordinates) with its indices, the
//! shapes the scenes are built of (boxes, planes, spheres, the wind arrow), and the program of
//! the `opaque` and `surface` passes (`shaders/particles/mesh.*`).

use super::sky::Light;
use crate::gfx::program::{shader, Program, Uniform};
use anyhow::{anyhow, Result};
use glam::{Mat4, Quat, Vec2, Vec3, Vec4};
use glow::HasContext;
use std::f32::consts::{PI, TAU};

/// A mesh vertex: position (m), normal, texture coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Vertex {
    /// Position, m.
    pub position: [f32; 3],
    /// Normal (any length).
    pub normal: [f32; 3],
    /// Texture coordinates.
    pub uv: [f32; 2],
}

impl Vertex {
    fn new(position: Vec3, normal: Vec3, uv: Vec2) -> Vertex {
        Vertex {
            position: position.into(),
            normal: normal.into(),
            uv: uv.into(),
        }
    }
}

/// Vertices and triangles on the CPU.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    /// The vertices.
    pub vertices: Vec<Vertex>,
    /// Three indices per triangle.
    pub indices: Vec<u32>,
}

impl Shape {
    /// Appends `other`.
    pub fn append(&mut self, other: Shape) {
        let base = self.vertices.len() as u32;
        self.vertices.extend(other.vertices);
        self.indices
            .extend(other.indices.into_iter().map(|i| i + base));
    }

    /// A quad `corner`, `corner + a`, `corner + a + b`, `corner + b` facing `a × b`, its texture
    /// coordinates in metres.
    pub fn quad(corner: Vec3, a: Vec3, b: Vec3) -> Shape {
        let normal = a.cross(b).normalize();
        let (la, lb) = (a.length(), b.length());
        Shape {
            vertices: vec![
                Vertex::new(corner, normal, Vec2::ZERO),
                Vertex::new(corner + a, normal, Vec2::new(la, 0.0)),
                Vertex::new(corner + a + b, normal, Vec2::new(la, lb)),
                Vertex::new(corner + b, normal, Vec2::new(0.0, lb)),
            ],
            indices: vec![0, 1, 2, 0, 2, 3],
        }
    }

    /// An axis-aligned box, its faces facing out (or, `inward`, in: a room seen from inside,
    /// whose near walls the back-face cull removes when the camera is outside).
    pub fn cuboid(min: Vec3, max: Vec3, inward: bool) -> Shape {
        let s = max - min;
        let (x, y, z) = (Vec3::X * s.x, Vec3::Y * s.y, Vec3::Z * s.z);
        let faces = [
            (min, z, y),     // −x
            (min + x, y, z), // +x
            (min, x, z),     // −y
            (min + y, z, x), // +y
            (min, y, x),     // −z
            (min + z, x, y), // +z
        ];
        let mut shape = Shape::default();
        for (corner, a, b) in faces {
            shape.append(if inward {
                Shape::quad(corner, b, a)
            } else {
                Shape::quad(corner, a, b)
            });
        }
        shape
    }

    /// The four walls of an axis-aligned room (no floor or ceiling), facing in.
    pub fn walls(min: Vec3, max: Vec3) -> Shape {
        let s = max - min;
        let (x, y, z) = (Vec3::X * s.x, Vec3::Y * s.y, Vec3::Z * s.z);
        let mut shape = Shape::default();
        for (corner, a, b) in [(min, y, z), (min + x, z, y), (min, x, y), (min + z, y, x)] {
            shape.append(Shape::quad(corner, a, b));
        }
        shape
    }

    /// A UV sphere of `radius` around `center`.
    pub fn sphere(center: Vec3, radius: f32, rings: usize, segments: usize) -> Shape {
        let mut shape = Shape::default();
        for r in 0..=rings {
            let theta = PI * r as f32 / rings as f32;
            for s in 0..=segments {
                let phi = TAU * s as f32 / segments as f32;
                let n = Vec3::new(
                    theta.sin() * phi.cos(),
                    theta.cos(),
                    theta.sin() * phi.sin(),
                );
                shape.vertices.push(Vertex::new(
                    center + radius * n,
                    n,
                    Vec2::new(s as f32 / segments as f32, r as f32 / rings as f32),
                ));
            }
        }
        let row = segments as u32 + 1;
        for r in 0..rings as u32 {
            for s in 0..segments as u32 {
                let (a, b) = (r * row + s, (r + 1) * row + s);
                shape.indices.extend([a, a + 1, b, a + 1, b + 1, b]);
            }
        }
        shape
    }

    /// A cylinder (`cone`: narrowing to a point) of `radius` along +z from z = 0 to `length`.
    fn tube(radius: f32, length: f32, cone: bool, segments: usize) -> Shape {
        let mut shape = Shape::default();
        for s in 0..=segments {
            let phi = TAU * s as f32 / segments as f32;
            let (c, si) = (phi.cos(), phi.sin());
            let slope = if cone { radius / length } else { 0.0 };
            let normal = Vec3::new(c, si, slope);
            let top = if cone { 0.0 } else { radius };
            shape.vertices.push(Vertex::new(
                Vec3::new(radius * c, radius * si, 0.0),
                normal,
                Vec2::ZERO,
            ));
            shape.vertices.push(Vertex::new(
                Vec3::new(top * c, top * si, length),
                normal,
                Vec2::ZERO,
            ));
        }
        for s in 0..segments as u32 {
            let a = 2 * s;
            shape.indices.extend([a, a + 2, a + 1, a + 1, a + 2, a + 3]);
        }
        shape
    }

    /// The wind arrow: a shaft and a head along +z, 1 m long.
    pub fn arrow() -> Shape {
        let mut shape = Shape::tube(0.04, 0.7, false, 12);
        let mut head = Shape::tube(0.11, 0.3, true, 12);
        for v in &mut head.vertices {
            v.position[2] += 0.7;
        }
        shape.append(head);
        shape
    }
}

/// The wind arrow's handle at no wind: a ball at the arrow's base whose radius is this
/// fraction of the view's height wherever it is seen from (9 px at 450 px high, within the
/// 16 px that pick it; it was 0.08 m, about 5 px at the presets' framing).
pub const HANDLE_RADIUS: f32 = 0.02;

/// Below this wind speed, m/s, no arrow is drawn but the handle at its base.
pub const NO_WIND: f32 = 1e-4;

/// The wind arrow's length at the slowest wind, m.
pub const ARROW_SHORTEST: f32 = 0.6;
/// Its longest, m.
pub const ARROW_LONGEST: f32 = 2.0;

/// The wind whose arrow is the longest, m/s: the fastest wind a file, the panel or the keys
/// allow, whatever its direction (`scene::validate::MAX_WIND`), so every wind is drawn at its
/// own length and a drag of the arrow reaches every speed.
pub const ARROW_FASTEST: f32 = 100.0;
/// The speed scale of [`arrow_length`]'s logarithm, m/s: below it the length grows about
/// linearly (0.30 m per m/s, twice the old linear arrow's 0.15), above it by a constant step a
/// doubling.
const ARROW_KNEE: f32 = 1.0;

/// The wind arrow's length for a wind of `speed` (m/s): logarithmic, 0.6 m at no wind to 2 m
/// at [`ARROW_FASTEST`] and beyond, ln(1 + v/1 m/s)/ln(101) of the way (3 m/s: 1.02 m, where
/// the old linear 0.6 m + 0.15 m per m/s gave 1.05 m; 10 m/s: 1.33 m).
pub fn arrow_length(speed: f32) -> f32 {
    let along = (speed.max(0.0) / ARROW_KNEE).ln_1p() / (ARROW_FASTEST / ARROW_KNEE).ln_1p();
    ARROW_SHORTEST + (ARROW_LONGEST - ARROW_SHORTEST) * along.min(1.0)
}

/// The wind speed whose arrow is `length` long (m/s): [`arrow_length`]'s inverse, 0 at
/// [`ARROW_SHORTEST`] or shorter, [`ARROW_FASTEST`] at [`ARROW_LONGEST`] or longer, 0 for a
/// length that is not finite.
pub fn arrow_speed(length: f32) -> f32 {
    if !length.is_finite() {
        return 0.0;
    }
    let along = ((length - ARROW_SHORTEST) / (ARROW_LONGEST - ARROW_SHORTEST)).clamp(0.0, 1.0);
    (ARROW_KNEE * ((ARROW_FASTEST / ARROW_KNEE).ln_1p() * along).exp_m1()).min(ARROW_FASTEST)
}

/// The model matrix putting [`Shape::arrow`] at `base` along `wind`, its length growing with
/// the wind's speed (`None`: no wind; the handle is drawn instead).
pub fn arrow_model(base: Vec3, wind: Vec3) -> Option<Mat4> {
    let speed = wind.length();
    (speed > NO_WIND).then(|| {
        let length = arrow_length(speed);
        let rotation = Quat::from_rotation_arc(Vec3::Z, wind / speed);
        Mat4::from_scale_rotation_translation(Vec3::splat(length), rotation, base)
    })
}

/// A mesh on the GPU.
pub struct Mesh {
    vertex_array: glow::VertexArray,
    vertices: glow::Buffer,
    indices: glow::Buffer,
    count: i32,
}

impl Mesh {
    /// Uploads `shape` (`dynamic`: its vertices will be replaced often).
    pub fn new(gl: &glow::Context, shape: &Shape, dynamic: bool) -> Result<Mesh> {
        // SAFETY: GL calls on the current context; the buffers are created here and the
        // attribute layout matches `Vertex` (#[repr(C)], 8 floats).
        unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let vertices = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            let indices = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vertices));
            gl.buffer_data_u8_slice(
                glow::ARRAY_BUFFER,
                bytemuck::cast_slice(&shape.vertices),
                if dynamic {
                    glow::DYNAMIC_DRAW
                } else {
                    glow::STATIC_DRAW
                },
            );
            let stride = std::mem::size_of::<Vertex>() as i32;
            for (location, size, offset) in [(0, 3, 0), (1, 3, 12), (2, 2, 24)] {
                gl.enable_vertex_attrib_array(location);
                gl.vertex_attrib_pointer_f32(location, size, glow::FLOAT, false, stride, offset);
            }
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(indices));
            gl.buffer_data_u8_slice(
                glow::ELEMENT_ARRAY_BUFFER,
                bytemuck::cast_slice(&shape.indices),
                glow::STATIC_DRAW,
            );
            gl.bind_vertex_array(None);
            Ok(Mesh {
                vertex_array,
                vertices,
                indices,
                count: shape.indices.len() as i32,
            })
        }
    }

    /// The vertex buffer's GL name.
    pub fn vertex_buffer(&self) -> u32 {
        self.vertices.0.get()
    }

    /// Replaces the vertices (as many as before).
    pub fn update(&self, gl: &glow::Context, vertices: &[Vertex]) {
        // SAFETY: GL calls on the current context; the buffer is this mesh's.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.vertices));
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytemuck::cast_slice(vertices));
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    /// Draws the triangles with the bound program.
    pub fn draw(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the vertex array is this mesh's.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_elements(glow::TRIANGLES, self.count, glow::UNSIGNED_INT, 0);
            gl.bind_vertex_array(None);
        }
    }

    /// Frees the buffers.
    pub fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the objects are this mesh's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.vertices);
            gl.delete_buffer(self.indices);
        }
    }
}

/// How a mesh is coloured.
#[derive(Clone, Copy, Debug)]
pub struct Material {
    /// Base colour (a: opacity).
    pub tint: Vec4,
    /// 0 plain, 1 `texture`, 2 floor tiles, 3 stone blocks.
    pub pattern: i32,
    /// The texture of pattern 1.
    pub texture: Option<glow::Texture>,
    /// Texture coordinates' scale.
    pub uv_scale: f32,
    /// Specular strength.
    pub gloss: f32,
    /// Fog distance, m (0: none).
    pub fog: f32,
    /// Light let through from behind (a thin sheet), 0..1.
    pub translucency: f32,
}

impl Material {
    /// A plain colour.
    pub fn plain(rgb: Vec3) -> Material {
        Material {
            tint: rgb.extend(1.0),
            pattern: 0,
            texture: None,
            uv_scale: 1.0,
            gloss: 0.2,
            fog: 0.0,
            translucency: 0.0,
        }
    }

    /// `texture`, repeated every 1 / `uv_scale` units of texture coordinates.
    pub fn textured(texture: glow::Texture, uv_scale: f32) -> Material {
        Material {
            pattern: 1,
            texture: Some(texture),
            uv_scale,
            ..Material::plain(Vec3::ONE)
        }
    }
}

/// The lit-mesh program and its uniforms.
pub struct MeshProgram {
    program: Program,
    view_projection: Uniform,
    model: Uniform,
    tint: Uniform,
    pattern: Uniform,
    albedo: Uniform,
    sky: Uniform,
    uv_scale: Uniform,
    eye: Uniform,
    sun_direction: Uniform,
    sun_color: Uniform,
    ambient: Uniform,
    gloss: Uniform,
    fog_distance: Uniform,
    translucency: Uniform,
}

impl MeshProgram {
    /// Builds the program.
    pub fn new(gl: &glow::Context) -> Result<MeshProgram> {
        let program = Program::new(
            gl,
            &shader!("opaque", "particles/mesh.vert", "particles/mesh.frag"),
        )?;
        let u = |name: &str| program.uniform(gl, name);
        Ok(MeshProgram {
            view_projection: u("view_projection")?,
            model: u("model")?,
            tint: u("tint")?,
            pattern: u("pattern")?,
            albedo: u("albedo")?,
            sky: u("sky")?,
            uv_scale: u("uv_scale")?,
            eye: u("eye")?,
            sun_direction: u("sun_direction")?,
            sun_color: u("sun_color")?,
            ambient: u("ambient")?,
            gloss: u("gloss")?,
            fog_distance: u("fog_distance")?,
            translucency: u("translucency")?,
            program,
        })
    }

    /// Binds the program with the frame's camera, light and sky (texture unit 1).
    pub fn begin(
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
        self.ambient.set(gl, light.ambient);
        self.sky.set(gl, 1);
        self.albedo.set(gl, 0);
        // SAFETY: GL calls on the current context; the cube map is the renderer's.
        unsafe {
            gl.active_texture(glow::TEXTURE1);
            gl.bind_texture(glow::TEXTURE_CUBE_MAP, Some(sky));
            gl.active_texture(glow::TEXTURE0);
        }
    }

    /// Draws `mesh` placed by `model` in `material` (the program bound by [`Self::begin`]).
    pub fn draw(&self, gl: &glow::Context, mesh: &Mesh, model: Mat4, material: &Material) {
        self.model.set(gl, model);
        self.tint.set(gl, material.tint);
        self.pattern.set(gl, material.pattern);
        self.uv_scale.set(gl, Vec2::splat(material.uv_scale));
        self.gloss.set(gl, material.gloss);
        self.fog_distance.set(gl, material.fog);
        self.translucency.set(gl, material.translucency);
        // SAFETY: GL calls on the current context; the texture is the renderer's.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, material.texture);
        }
        mesh.draw(gl);
    }

    /// Frees the program.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_faces_face_out_or_in() {
        for inward in [false, true] {
            let shape = Shape::cuboid(Vec3::ZERO, Vec3::ONE, inward);
            for t in shape.indices.chunks(3) {
                let p = |k: usize| Vec3::from(shape.vertices[t[k] as usize].position);
                let normal = (p(1) - p(0)).cross(p(2) - p(0));
                let center = (p(0) + p(1) + p(2)) / 3.0 - Vec3::splat(0.5);
                let outward = normal.dot(center) > 0.0;
                assert_eq!(outward, !inward);
                let stored = Vec3::from(shape.vertices[t[0] as usize].normal);
                assert!(stored.dot(normal) > 0.0);
            }
        }
    }
}
