//! `shaders/pool/common.glsl`'s functions run on the GL (headless EGL, Mesa llvmpipe in CI) and
//! checked against their exact values computed here: the bands' filter and the far taps (the
//! land's in tests/pool_glsl_land.rs).

#[path = "support/glsl_draw.rs"]
mod glsl_draw;
use glsl_draw::draw;

const WIDTH: u32 = 200;
/// The pixel widths (in the band's units: the band is 1 wide) of the picture's rows.
const WIDTHS: [f32; 6] = [0.05, 0.5, 1.0, 2.0, 5.0, 20.0];

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
    let image = draw(WIDTH, WIDTHS.len() as u32, FRAGMENT, |_, _| {});
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

/// Pixel (i, j): `far_tap_count` for a footprint (i + 0.5)/4 of the grid's cells long, across
/// the screen in row 0 and along it in row 1 (the other side a tenth as long), as n/10.
const TAPS_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n",
    include_str!("../shaders/pool/common.glsl"),
    "out vec4 color;\n",
    "void main() {\n",
    "    float cells = 0.25 * (floor(gl_FragCoord.x) + 0.5);\n",
    "    vec2 long_side = vec2(cells * spacing(), 0.0);\n",
    "    vec2 short_side = vec2(0.0, 0.1 * cells * spacing());\n",
    "    int n = int(gl_FragCoord.y) == 0 ? far_tap_count(long_side, short_side)\n",
    "                                      : far_tap_count(short_side, long_side);\n",
    "    color = vec4(vec3(float(n) / 10.0), 1.0);\n",
    "}\n",
);

/// The far taps follow the mesh drawn: one tap per 2 of its cells (each `stride` of the grid's)
/// along a pixel's footprint, at most 4. On a 1025² grid (drawn with every 2nd node) a pixel
/// spanning 3 of the grid's cells spans 1.5 of the mesh's and takes one tap; the count by the
/// grid's cells gave it 2, and 4 from 6 grid cells on, where the mesh asks 2.
#[test]
fn the_far_taps_count_the_drawn_meshs_cells() {
    const COLUMNS: u32 = 160;
    for (nodes, stride) in [(257, 1), (1025, 2), (4097, 8)] {
        let image = draw(COLUMNS, 2, TAPS_FRAGMENT, |gl, program| {
            for (name, value) in [("nodes", nodes), ("mesh_stride", stride)] {
                program.uniform(gl, name).expect(name).set(gl, value);
            }
            let size = program.uniform(gl, "pool_size").expect("pool_size");
            size.set(gl, 2.0f32);
        });
        for row in 0..2 {
            // The picture's rows run top to bottom; GL's row j is the picture's 1 − j.
            let y = 1 - row;
            for i in 0..COLUMNS {
                let cells = 0.25 * (f64::from(i) + 0.5);
                let mesh_cells = cells / f64::from(stride);
                let want = ((mesh_cells / 2.0).ceil() as i32).clamp(1, 4);
                let got = (f64::from(image.get_pixel(i, y)[0]) / 25.5).round() as i32;
                assert_eq!(
                    got, want,
                    "{nodes}² (stride {stride}), row {row}: a footprint of {cells} grid cells"
                );
            }
        }
    }
}
