//! Shader programs built from the GLSL files in `shaders/` (embedded at build time), and the
//! uniform setters the passes use.

use anyhow::{anyhow, Result};
use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};
use glow::HasContext;

/// A vertex + fragment shader pair as embedded source.
pub struct ShaderSource {
    /// Name used in error messages (the pass name).
    pub name: &'static str,
    /// Vertex shader GLSL.
    pub vertex: &'static str,
    /// Fragment shader GLSL.
    pub fragment: &'static str,
}

/// Embeds `shaders/VERTEX` and `shaders/FRAGMENT` under the pass name `NAME`.
macro_rules! shader {
    ($name:expr, $vertex:expr, $fragment:expr) => {
        $crate::gfx::program::ShaderSource {
            name: $name,
            vertex: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $vertex)),
            fragment: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $fragment)),
        }
    };
}
pub(crate) use shader;

/// A linked program.
pub struct Program {
    program: glow::Program,
}

impl Program {
    /// Compiles and links `source`; the error carries the driver's log and the pass name.
    pub fn new(gl: &glow::Context, source: &ShaderSource) -> Result<Program> {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            let program = gl
                .create_program()
                .map_err(|e| anyhow!("{}: cannot create a program: {e}", source.name))?;
            let mut shaders = Vec::new();
            for (kind, text, stage) in [
                (glow::VERTEX_SHADER, source.vertex, "vertex"),
                (glow::FRAGMENT_SHADER, source.fragment, "fragment"),
            ] {
                let shader = gl
                    .create_shader(kind)
                    .map_err(|e| anyhow!("{}: cannot create a shader: {e}", source.name))?;
                gl.shader_source(shader, text);
                gl.compile_shader(shader);
                if !gl.get_shader_compile_status(shader) {
                    let log = gl.get_shader_info_log(shader);
                    gl.delete_shader(shader);
                    gl.delete_program(program);
                    return Err(anyhow!(
                        "{}: the {stage} shader does not compile:\n{log}",
                        source.name
                    ));
                }
                gl.attach_shader(program, shader);
                shaders.push(shader);
            }
            gl.link_program(program);
            for shader in shaders {
                gl.detach_shader(program, shader);
                gl.delete_shader(shader);
            }
            if !gl.get_program_link_status(program) {
                let log = gl.get_program_info_log(program);
                gl.delete_program(program);
                return Err(anyhow!(
                    "{}: the program does not link:\n{log}",
                    source.name
                ));
            }
            Ok(Program { program })
        }
    }

    /// Makes the program current.
    pub fn bind(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.use_program(Some(self.program)) };
    }

    /// Frees the program.
    pub fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.delete_program(self.program) };
    }

    fn location(&self, gl: &glow::Context, name: &str) -> Option<glow::UniformLocation> {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.get_uniform_location(self.program, name) }
    }

    /// Sets a uniform of the bound program (silently ignored when the shader optimised it away).
    pub fn set<U: Uniform>(&self, gl: &glow::Context, name: &str, value: U) {
        value.apply(gl, self.location(gl, name).as_ref());
    }
}

/// A value a uniform can hold.
pub trait Uniform {
    /// Sets the uniform at `location` of the bound program.
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>);
}

impl Uniform for f32 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_1_f32(location, self) }
    }
}

impl Uniform for i32 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_1_i32(location, self) }
    }
}

impl Uniform for Vec2 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_2_f32(location, self.x, self.y) }
    }
}

impl Uniform for Vec3 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_3_f32(location, self.x, self.y, self.z) }
    }
}

impl Uniform for Vec4 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_4_f32(location, self.x, self.y, self.z, self.w) }
    }
}

impl Uniform for Mat3 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_matrix_3_f32_slice(location, false, &self.to_cols_array()) }
    }
}

impl Uniform for Mat4 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_matrix_4_f32_slice(location, false, &self.to_cols_array()) }
    }
}
