//! `shaders/pool/common.glsl`'s filters run on the GL (headless EGL, Mesa llvmpipe in CI) and
//! checked against their exact values computed here.

use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::program::{Program, ShaderSource};
use glow::HasContext;

const WIDTH: u32 = 200;
/// The pixel widths (in the band's units: the band is 1 wide) of the picture's rows.
const WIDTHS: [f32; 6] = [0.05, 0.5, 1.0, 2.0, 5.0, 20.0];

/// One triangle over the viewport.
const VERTEX: &str = concat!(
    "#version 330 core\n",
    include_str!("../shaders/pool/common.glsl"),
    "void main() {\n",
    "    vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n",
    "    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);\n",
    "}\n",
);

/// Pixel (i, j): `band_share` at x = −3 + 6·(i + 0.5)/WIDTH for the band |x| < 0.5 and a pixel
/// `WIDTHS[j]` wide.
const FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n",
    include_str!("../shaders/pool/common.glsl"),
    "out vec4 color;\n",
    "void main() {\n",
    "    const float widths[6] = float[6](0.05, 0.5, 1.0, 2.0, 5.0, 20.0);\n",
    "    float x = -3.0 + 6.0 * gl_FragCoord.x / 200.0;\n",
    "    float w = widths[int(gl_FragCoord.y)];\n",
    "    color = vec4(vec3(band_share(x, 0.0, 0.5, w)), 1.0);\n",
    "}\n",
);

/// The box filter of the band |x| < 0.5 over [x − w/2, x + w/2], exactly.
fn box_filtered(x: f64, w: f64) -> f64 {
    let overlap = (x + 0.5 * w).min(0.5) - (x - 0.5 * w).max(-0.5);
    overlap.max(0.0) / w
}

/// `band_share` is the band's box filter over the pixel, for pixels narrower and wider than
/// the band (where it used to reach 0.5 + half / w at the centre, 0.525 instead of 0.05 for a
/// pixel 20 bands wide: far lane lines came out ten times too dark).
#[test]
fn band_share_is_the_bands_box_filter() {
    let mut headless = Headless::new(WIDTH, WIDTHS.len() as u32).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let gl = headless.gl();
    let program = Program::new(
        &gl,
        &ShaderSource {
            name: "band_share",
            vertex: VERTEX,
            geometry: None,
            fragment: FRAGMENT,
        },
    )
    .expect("common.glsl compiles");
    // SAFETY: GL calls on the headless context, current on this thread.
    let vertex_array = unsafe { gl.create_vertex_array() }.expect("a vertex array");
    let image = headless
        .capture(|output| {
            // SAFETY: as above; the output framebuffer is the capture's.
            unsafe {
                gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
                gl.viewport(0, 0, output.width as i32, output.height as i32);
                program.bind(&gl);
                gl.bind_vertex_array(Some(vertex_array));
                gl.draw_arrays(glow::TRIANGLES, 0, 3);
            }
            Ok(())
        })
        .expect("render without GL errors");
    let mut worst = (0.0f64, 0.0, 0.0);
    for (j, &w) in WIDTHS.iter().enumerate() {
        // The picture's rows run top to bottom; GL's row j is the picture's HEIGHT − 1 − j.
        let y = WIDTHS.len() as u32 - 1 - j as u32;
        for i in 0..WIDTH {
            let x = -3.0 + 6.0 * (f64::from(i) + 0.5) / f64::from(WIDTH);
            let got = f64::from(image.get_pixel(i, y)[0]) / 255.0;
            let error = (got - box_filtered(x, f64::from(w))).abs();
            if error > worst.0 {
                worst = (error, x, f64::from(w));
            }
        }
    }
    let (error, x, w) = worst;
    println!("band_share: worst error {error:.4} at x = {x:.3}, w = {w}");
    assert!(
        error < 0.01,
        "{error:.4} off at x = {x:.3} for a pixel {w} wide"
    );
}
