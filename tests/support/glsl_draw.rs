//! The GLSL tests' harness (tests/pool_glsl.rs, tests/pool_glsl_land.rs): a fragment shader
//! after `shaders/pool/common.glsl` drawn over a picture on the headless EGL context (Mesa
//! llvmpipe in CI).

use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::program::{Program, ShaderSource};
use glow::HasContext;

/// One triangle over the viewport.
pub const VERTEX: &str = concat!(
    "#version 330 core\n",
    include_str!("../../shaders/pool/common.glsl"),
    "void main() {\n",
    "    vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n",
    "    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);\n",
    "}\n",
);

/// Draws `fragment` (after common.glsl's fragment part) over a `width` × `height` picture, its
/// uniforms set by `uniforms` on the bound program.
pub fn draw(
    width: u32,
    height: u32,
    fragment: &'static str,
    uniforms: impl FnOnce(&glow::Context, &Program),
) -> Image {
    let mut headless = Headless::new(width, height).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let gl = headless.gl();
    let program = Program::new(
        &gl,
        &ShaderSource {
            name: "common",
            vertex: VERTEX,
            geometry: None,
            fragment,
        },
    )
    .expect("common.glsl compiles");
    // SAFETY: GL calls on the headless context, current on this thread.
    let vertex_array = unsafe { gl.create_vertex_array() }.expect("a vertex array");
    headless
        .capture(|output| {
            // SAFETY: as above; the output framebuffer is the capture's.
            unsafe {
                gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
                gl.viewport(0, 0, output.width as i32, output.height as i32);
                program.bind(&gl);
                uniforms(&gl, &program);
                gl.bind_vertex_array(Some(vertex_array));
                gl.draw_arrays(glow::TRIANGLES, 0, 3);
            }
            Ok(())
        })
        .expect("render without GL errors")
}
