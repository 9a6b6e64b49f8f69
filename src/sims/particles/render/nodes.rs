//! `springs`, `nodes`: a spring-mass body's nodes as lit sphere sprites coloured by their
//! kinetic energy ½mv² and its springs as lines coloured by their elastic energy
//! ½k(l − l₀)², both on one logarithmic scale ([`energy_level`]; `shaders/particles/nodes.*`);
//! the fountain's basin as node
//! spheres coloured by height uses the same pass. On CUDA the `body_points` kernel writes the
//! same points and line ends straight into the batches' GL buffers
//! ([`Nodes::shared_buffers`]).

use super::water::node_position;
use super::RenderSettings;
use crate::gfx::program::{shader, Program, Uniform};
use crate::sims::particles::body::Body;
use crate::sims::particles::fountain::Fountain;
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec3};
use glow::HasContext;

/// A point or line end: position and colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Point {
    /// Position, m.
    pub position: [f32; 3],
    /// Linear RGB.
    pub color: [f32; 3],
}

/// The energy ramp: 0 a cool blue-grey, 0.5 yellow, 1 red.
pub fn energy_color(t: f32) -> Vec3 {
    let t = t.clamp(0.0, 1.0);
    let cool = Vec3::new(0.55, 0.65, 0.85);
    let warm = Vec3::new(1.0, 0.85, 0.2);
    let hot = Vec3::new(0.95, 0.1, 0.05);
    if t < 0.5 {
        cool.lerp(warm, 2.0 * t)
    } else {
        warm.lerp(hot, 2.0 * t - 1.0)
    }
}

/// The energy drawn red, J: the kinetic energy ½·m·v² of one of `body`'s nodes moving at
/// `settings.speed_scale` (the `body_points` kernel's `red`; within its range, so never 0).
pub fn red_energy(body: &Body, settings: &RenderSettings) -> f32 {
    let speed = settings.red_speed();
    0.5 * body.mass * speed * speed
}

/// Where energy `e` (J) lies on the ramp of [`energy_color`]: 1 (red) at `red`, 0 (blue-grey)
/// `decades` decades below, linear in log₁₀ e between (a hanging cloth's springs span more
/// than four decades from its pins to its free edge; a linear scale showed only the pins').
pub fn energy_level(e: f32, red: f32, decades: f32) -> f32 {
    1.0 + (e / red).log10() / decades
}

/// A body's nodes (by their kinetic energy ½mv²) into `points` and springs (by their elastic
/// energy ½k(l − l₀)², XPBD's compliance energy ½C²/α with α = 1/k being the same; two ends
/// each) into `lines`, on one scale: [`energy_level`] from [`red_energy`].
pub fn body_points(
    body: &Body,
    settings: &RenderSettings,
    points: &mut Vec<Point>,
    lines: &mut Vec<Point>,
) {
    points.clear();
    lines.clear();
    let (red, decades) = (red_energy(body, settings), settings.decades());
    for (p, v) in body.position.iter().zip(&body.velocity) {
        let kinetic = 0.5 * body.mass * v.length_squared();
        let color = energy_color(energy_level(kinetic, red, decades));
        points.push(Point {
            position: (*p).into(),
            color: color.into(),
        });
    }
    for s in &body.springs {
        let (a, b) = (body.position[s.a as usize], body.position[s.b as usize]);
        let stretch = a.distance(b) - s.rest;
        let elastic = 0.5 * s.stiffness * stretch * stretch;
        let color = energy_color(energy_level(elastic, red, decades)).into();
        lines.push(Point {
            position: a.into(),
            color,
        });
        lines.push(Point {
            position: b.into(),
            color,
        });
    }
}

/// The basin's nodes into `points`, whiter with their |height| (white at 1 cm).
pub fn basin_points(fountain: &Fountain, points: &mut Vec<Point>) {
    points.clear();
    let n = fountain.surface.n;
    for j in 0..n {
        for i in 0..n {
            let height = fountain.surface.height[j * n + i];
            let color = Vec3::new(0.2, 0.45, 0.8).lerp(Vec3::ONE, (height.abs() / 0.01).min(1.0));
            points.push(Point {
                position: node_position(fountain, i, j).into(),
                color: color.into(),
            });
        }
    }
}

/// A buffer of points or lines with its vertex array.
struct Batch {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
    capacity: usize,
    count: usize,
}

impl Batch {
    fn new(gl: &glow::Context) -> Result<Batch> {
        // SAFETY: GL calls on the current context; the layout matches `Point` (6 floats).
        unsafe {
            let vertex_array = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(vertex_array));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            for (location, offset) in [(0, 0), (1, 12)] {
                gl.enable_vertex_attrib_array(location);
                gl.vertex_attrib_pointer_f32(location, 3, glow::FLOAT, false, 24, offset);
            }
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            Ok(Batch {
                vertex_array,
                buffer,
                capacity: 0,
                count: 0,
            })
        }
    }

    /// Grows the buffer to hold `count` points (a CUDA registration older than the new storage
    /// is renewed by `GlInterop`).
    fn reserve(&mut self, gl: &glow::Context, count: usize) {
        if count <= self.capacity {
            return;
        }
        self.capacity = count.next_power_of_two();
        // SAFETY: GL calls on the current context; the buffer is this batch's.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.buffer));
            gl.buffer_data_size(
                glow::ARRAY_BUFFER,
                (self.capacity * std::mem::size_of::<Point>()) as i32,
                glow::STREAM_DRAW,
            );
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    fn upload(&mut self, gl: &glow::Context, points: &[Point]) {
        self.reserve(gl, points.len());
        self.count = points.len();
        // SAFETY: GL calls on the current context; the buffer holds at least `points`.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.buffer));
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytemuck::cast_slice(points));
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    fn draw(&self, gl: &glow::Context, mode: u32) {
        // SAFETY: GL calls on the current context; the vertex array is this batch's.
        unsafe {
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(mode, 0, self.count as i32);
            gl.bind_vertex_array(None);
        }
    }

    fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the objects are this batch's.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_buffer(self.buffer);
        }
    }
}

/// The nodes' and springs' program and buffers.
pub struct Nodes {
    program: Program,
    view: Uniform,
    projection: Uniform,
    radius: Uniform,
    viewport_height: Uniform,
    light_direction: Uniform,
    points: Batch,
    lines: Batch,
}

impl Nodes {
    /// Builds the program and empty buffers.
    pub fn new(gl: &glow::Context) -> Result<Nodes> {
        let program = Program::new(
            gl,
            &shader!("nodes", "particles/nodes.vert", "particles/nodes.frag"),
        )?;
        Ok(Nodes {
            view: program.uniform(gl, "view")?,
            projection: program.uniform(gl, "projection")?,
            radius: program.uniform(gl, "radius")?,
            viewport_height: program.uniform(gl, "viewport_height")?,
            light_direction: program.uniform(gl, "light_direction")?,
            program,
            points: Batch::new(gl)?,
            lines: Batch::new(gl)?,
        })
    }

    /// Uploads the points (nodes) and the line ends (two per spring).
    pub fn upload(&mut self, gl: &glow::Context, points: &[Point], lines: &[Point]) {
        self.points.upload(gl, points);
        self.lines.upload(gl, lines);
    }

    /// The GL buffers of the points and the line ends ([`Point`]'s layout), grown to hold
    /// `points` and `line_ends`: a CUDA solver writes them through interop, then
    /// [`Nodes::use_shared`] draws them.
    pub fn shared_buffers(
        &mut self,
        gl: &glow::Context,
        points: usize,
        line_ends: usize,
    ) -> (u32, u32) {
        self.points.reserve(gl, points.max(1));
        self.lines.reserve(gl, line_ends.max(2));
        (self.points.buffer.0.get(), self.lines.buffer.0.get())
    }

    /// The next draw shows `points` and `line_ends` written into [`Nodes::shared_buffers`].
    pub fn use_shared(&mut self, points: usize, line_ends: usize) {
        self.points.count = points.min(self.points.capacity);
        self.lines.count = line_ends.min(self.lines.capacity);
    }

    /// Draws the uploaded lines, then the points as spheres of `radius` (m), depth tested
    /// and written.
    pub fn draw(
        &self,
        gl: &glow::Context,
        view: Mat4,
        projection: Mat4,
        viewport_height: f32,
        sun: Vec3,
        radius: f32,
    ) {
        self.program.bind(gl);
        self.view.set(gl, view);
        self.projection.set(gl, projection);
        self.viewport_height.set(gl, viewport_height);
        self.light_direction
            .set(gl, view.transform_vector3(sun).normalize());
        self.radius.set(gl, 0.0);
        self.lines.draw(gl, glow::LINES);
        self.radius.set(gl, radius);
        // SAFETY: GL state call on the current context.
        unsafe { gl.enable(glow::PROGRAM_POINT_SIZE) };
        self.points.draw(gl, glow::POINTS);
        // SAFETY: as above.
        unsafe { gl.disable(glow::PROGRAM_POINT_SIZE) };
    }

    /// Frees the GL objects.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
        self.points.delete(gl);
        self.lines.delete(gl);
    }
}
