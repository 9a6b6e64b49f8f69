//! Shader programs built from the GLSL files under `shaders/` (embedded at build time), with
//! their uniform locations looked up once after linking: a pass keeps a [`Uniform`] per value it
//! sets, so drawing a frame asks the driver for no names.

use anyhow::{anyhow, bail, Result};
use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};
use glow::HasContext;

/// A vertex + fragment shader pair (and maybe a geometry shader) as embedded source.
#[derive(Clone, Copy)]
pub struct ShaderSource {
    /// Name used in error messages (the pass name).
    pub name: &'static str,
    /// Vertex shader GLSL.
    pub vertex: &'static str,
    /// Geometry shader GLSL, if any (core since GL 3.2).
    pub geometry: Option<&'static str>,
    /// Fragment shader GLSL.
    pub fragment: &'static str,
}

/// Embeds `shaders/VERTEX` and `shaders/FRAGMENT` (paths under `shaders/`, such as
/// `common/fullscreen.vert`) under the pass name `NAME`; with four arguments, a geometry shader
/// `shaders/GEOMETRY` between them.
macro_rules! shader {
    ($name:expr, $vertex:expr, $fragment:expr) => {
        $crate::gfx::program::ShaderSource {
            name: $name,
            vertex: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $vertex)),
            geometry: None,
            fragment: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $fragment)),
        }
    };
    ($name:expr, $vertex:expr, $geometry:expr, $fragment:expr) => {
        $crate::gfx::program::ShaderSource {
            name: $name,
            vertex: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $vertex)),
            geometry: Some(include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/shaders/",
                $geometry
            ))),
            fragment: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $fragment)),
        }
    };
}
pub(crate) use shader;

/// A linked program.
pub struct Program {
    program: glow::Program,
    source: ShaderSource,
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
            let geometry = source
                .geometry
                .map(|text| (glow::GEOMETRY_SHADER, text, "geometry"));
            for (kind, text, stage) in [
                Some((glow::VERTEX_SHADER, source.vertex, "vertex")),
                geometry,
                Some((glow::FRAGMENT_SHADER, source.fragment, "fragment")),
            ]
            .into_iter()
            .flatten()
            {
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
            Ok(Program {
                program,
                source: *source,
            })
        }
    }

    /// Makes the program current.
    pub fn bind(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.use_program(Some(self.program)) };
    }

    /// The names of the uniforms the linked program uses (those its compiler kept), as GL
    /// reports them (an array's as `name[0]`).
    pub fn active_uniforms(&self, gl: &glow::Context) -> Vec<String> {
        // SAFETY: queries on this linked program on the current context; the indices are
        // below the count it reports.
        unsafe {
            (0..gl.get_active_uniforms(self.program))
                .filter_map(|index| gl.get_active_uniform(self.program, index))
                .map(|uniform| uniform.name)
                .collect()
        }
    }

    /// Frees the program.
    pub fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.delete_program(self.program) };
    }

    /// The location of the uniform `name`, to keep for every later set. Fails when neither
    /// shader declares it (a misspelt name), on every driver; a declared uniform the compiler
    /// dropped gives a [`Uniform`] whose sets do nothing, as OpenGL does with location −1.
    pub fn uniform(&self, gl: &glow::Context, name: &str) -> Result<Uniform> {
        let in_geometry = self.source.geometry.is_some_and(|g| declares(g, name));
        if !declares(self.source.vertex, name)
            && !declares(self.source.fragment, name)
            && !in_geometry
        {
            bail!(
                "{}: its shaders declare no uniform `{name}`",
                self.source.name
            );
        }
        // SAFETY: a name query on this linked program on the current context.
        Ok(Uniform(unsafe {
            gl.get_uniform_location(self.program, name)
        }))
    }
}

/// Whether GLSL `source` has a `uniform` declaration naming `name`.
fn declares(source: &str, name: &str) -> bool {
    source
        .lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with("uniform "))
        .any(|line| {
            let declaration = line.split("//").next().unwrap_or_default();
            declaration
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == name)
        })
}

/// One uniform of one program, located when the program was built.
pub struct Uniform(Option<glow::UniformLocation>);

impl Uniform {
    /// Sets the uniform; its program must be the bound one.
    pub fn set<V: UniformValue>(&self, gl: &glow::Context, value: V) {
        value.apply(gl, self.0.as_ref());
    }
}

/// A value a uniform can hold.
pub trait UniformValue {
    /// Sets the uniform at `location` of the bound program.
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>);
}

impl UniformValue for f32 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_1_f32(location, self) }
    }
}

impl UniformValue for i32 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_1_i32(location, self) }
    }
}

impl UniformValue for Vec2 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_2_f32(location, self.x, self.y) }
    }
}

impl UniformValue for Vec3 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_3_f32(location, self.x, self.y, self.z) }
    }
}

impl UniformValue for Vec4 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_4_f32(location, self.x, self.y, self.z, self.w) }
    }
}

impl UniformValue for Mat3 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_matrix_3_f32_slice(location, false, &self.to_cols_array()) }
    }
}

impl UniformValue for Mat4 {
    fn apply(self, gl: &glow::Context, location: Option<&glow::UniformLocation>) {
        // SAFETY: a uniform of the bound program on the current context (GL ignores a
        // missing location).
        unsafe { gl.uniform_matrix_4_f32_slice(location, false, &self.to_cols_array()) }
    }
}

#[cfg(test)]
mod tests {
    use super::declares;

    #[test]
    fn uniform_declarations_are_found_by_whole_name() {
        let source = "uniform mat4 view;\nuniform float sprite_radius; // m\nin vec3 eye;\n";
        assert!(declares(source, "view"));
        assert!(declares(source, "sprite_radius"));
        assert!(!declares(source, "sprite"));
        assert!(!declares(source, "eye"));
        assert!(!declares(source, "m"));
    }
}
