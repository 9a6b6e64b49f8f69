//! `shaders/pool/land_search.glsl`'s land functions (after `common.glsl`, with `water.glsl`)
//! run on the GL (headless EGL, Mesa llvmpipe in CI) and checked against their exact values computed here: the rock under the water, the land
//! texture, the land search (`land_along`) and its land tiles.

#[path = "support/glsl_draw.rs"]
mod glsl_draw;
use fluidlab::gfx::program::Program;
use fluidlab::sims::pool::render::{
    land_bounds, land_texels, land_tiles, land_tiles_side, LAND_TILE,
};
use glow::HasContext;
use glsl_draw::draw;

/// The rock test's grid: nodes a side, the pool's side and depth (m), the land's height
/// inland (m) and the first column of land (every node with i ≥ SHORE is land: a straight shore
/// along z, its side facing −x).
const ROCK_NODES: i32 = 64;
const ROCK_SIZE: f32 = 2.0;
const ROCK_DEPTH: f32 = 1.0;
const ROCK_LAND_HEIGHT: f32 = 0.08;
const SHORE: i32 = 40;
/// Rays a sun (one pixel each).
const ROCK_RAYS: u32 = 16;

/// Pixel i: ray i, from 10 cm under the rest level half a metre off the shore, towards it and
/// down, as `underwater_ray` sees it: red its light over the rock's albedo, what the water
/// between leaves of it taken out ((colour − water's colour·(1 − T)) / (T·albedo): the rock's
/// `lit` factor, ambient + sun, over 2), green where the ray meets land, in cells off the shore's
/// contour (the flag's 0.5, half a cell before the first land column) plus 0.5, blue the same
/// over 16 (plus 0.5: up to 8 cells either side); black where the ray meets no land.
const ROCK_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n",
    include_str!("../shaders/pool/common.glsl"),
    include_str!("../shaders/pool/land_search.glsl"),
    include_str!("../shaders/pool/water.glsl"),
    "uniform float shore;\n",
    "out vec4 color;\n",
    "void main() {\n",
    "    int i = int(gl_FragCoord.x);\n",
    "    vec3 o = vec3(shore - 0.5, -0.1, 0.5 + 0.06 * float(i));\n",
    "    vec3 d = normalize(vec3(1.0, -0.08 - 0.01 * float(i % 5), 0.3 - 0.04 * float(i)));\n",
    "    vec3 face;\n",
    "    float t;\n",
    "    if (!land_along(o, d, exit_box(o, d, 1e-3, face), t)) {\n",
    "        color = vec4(0.0, 0.0, 0.0, 1.0);\n",
    "        return;\n",
    "    }\n",
    "    vec3 p = o + d * t;\n",
    "    vec3 c = underwater_ray(o, d, Footprint(vec3(0.0), vec3(0.0)));\n",
    "    vec3 left = exp(-ABSORPTION * t);\n",
    "    vec3 factor = (c - WATER_COLOR * (1.0 - left)) / (left * rock_albedo(p));\n",
    "    float off = (p.x - shore) / spacing();\n",
    "    color = vec4(0.5 * factor.g, off + 0.5, off / 16.0 + 0.5, 1.0);\n",
    "}\n",
);

/// GLSL's `refract(i, n, eta)`, in f64.
fn refract(i: [f64; 3], n: [f64; 3], eta: f64) -> [f64; 3] {
    let cosine: f64 = (0..3).map(|k| i[k] * n[k]).sum();
    let k = 1.0 - eta * eta * (1.0 - cosine * cosine);
    std::array::from_fn(|c| eta * i[c] - (eta * cosine + k.sqrt()) * n[c])
}

/// The island's rock seen under the water is lit by the land's own normal (`land_normal`: the
/// land's heights' central differences one node either side), at the point where the ray meets
/// the rock's side, not inside the island. A straight shore (land from column SHORE on, the
/// calm caustics a uniform 1): its side's normal is the same all along the shore's contour,
/// n = normalize(−g, 1, 0) with g = (0.85·land_height + depth) / (2·spacing) (the first two
/// land columns' height, 0.25 + 0.75·(4/5 inland) of land_height, over the floor's), so the
/// rock's `lit` factor is 0.35 + 0.15·n.y + 0.85·max(n·(−r), 0)·light.y / (−r.y), r the
/// sunlight refracted by calm water: asserted within 0.02 for 16 rays under three suns (one
/// behind the shore, the side in shade), and the ray's end within 0.03 of a cell of the
/// contour. Measured on llvmpipe: within 0.003 and 0.006 (the picture's 8 bits). The code before
/// fails both: its made-up normal facing the ray, normalize(−d.x, 0.3, −d.z), lit the rock up to
/// 0.26 off (0.863 for 0.756 under the first sun), and its ray ended at the first of the 12
/// samples inside the island, up to 0.60 cells in (without the halving alone: 0.60, the light
/// within 0.008: the land's normal is the same half a cell in).
#[test]
fn the_rock_under_water_is_lit_by_the_lands_normal() {
    let n = ROCK_NODES as usize;
    let texels: Vec<f32> = (0..n * n)
        .flat_map(|k| {
            let land = (k % n) as i32 >= SHORE;
            [0.0, 0.0, 0.0, if land { 1.0 } else { 0.0 }]
        })
        .collect();
    let h = f64::from(ROCK_SIZE) / f64::from(ROCK_NODES - 1);
    let shore = (f64::from(SHORE) - 0.5) * h;
    let g = (0.85 * f64::from(ROCK_LAND_HEIGHT) + f64::from(ROCK_DEPTH)) / (2.0 * h);
    let length = (g * g + 1.0).sqrt();
    let normal = [-g / length, 1.0 / length, 0.0];
    let (mut worst_factor, mut worst_end) = (0.0f64, 0.0f64);
    for sun in [[-1.0, 1.0, 0.3], [-0.3, 1.0, -0.5], [0.8, 0.6, 0.4]] {
        let length = (sun[0] * sun[0] + sun[1] * sun[1] + sun[2] * sun[2]) as f64;
        let light: [f64; 3] = std::array::from_fn(|k| f64::from(sun[k]) / length.sqrt());
        let r = refract(light.map(|v| -v), [0.0, 1.0, 0.0], 1.0 / 1.333);
        let lambert = -(0..3).map(|k| normal[k] * r[k]).sum::<f64>();
        let want = 0.35 + 0.15 * normal[1] + 0.85 * lambert.max(0.0) * light[1] / -r[1];
        let image = draw(ROCK_RAYS, 1, ROCK_FRAGMENT, |gl, program| {
            rock_scene(
                gl,
                program,
                &texels,
                glam::Vec3::from(sun).normalize(),
                shore as f32,
            )
        });
        for i in 0..ROCK_RAYS {
            let p = image.get_pixel(i, 0);
            assert!(p[2] > 0, "sun {sun:?}, ray {i}: meets no land");
            let factor = 2.0 * f64::from(p[0]) / 255.0;
            let coarse = 16.0 * (f64::from(p[2]) / 255.0 - 0.5);
            let end = if coarse.abs() < 0.4 {
                f64::from(p[1]) / 255.0 - 0.5
            } else {
                coarse
            };
            worst_factor = worst_factor.max((factor - want).abs());
            worst_end = worst_end.max(end.abs());
            if i == 0 {
                println!("sun {sun:?}: ray 0 lit {factor:.3} (the land's normal: {want:.3}), its end {end:+.3} cells off the contour");
            }
        }
    }
    println!("the rock under water: lit within {worst_factor:.3} of the land's normal's, ends within {worst_end:.3} cells of the shore");
    assert!(
        worst_factor < 0.02,
        "the rock's light {worst_factor:.3} off the land's normal's"
    );
    assert!(
        worst_end < 0.03,
        "the rock's point {worst_end:.3} cells off the shore's contour"
    );
}

/// Sets the rock test's uniforms and binds its textures: the surface (calm, flags `texels`), the
/// caustics a uniform 1 over a domain wider than the pool, the land texture and the land tiles
/// of the flags.
fn rock_scene(
    gl: &glow::Context,
    program: &Program,
    texels: &[f32],
    light: glam::Vec3,
    shore: f32,
) {
    let fixed: Vec<bool> = texels.chunks(4).map(|t| t[3] > 0.5).collect();
    let tiles = land_tiles(&fixed, ((fixed.len() as f64).sqrt()) as usize);
    rock_scene_with_tiles(gl, program, texels, light, shore, &tiles);
}

/// [`rock_scene`] with the land tiles `tiles` (`land_tiles_side` a side, R8); the grid's nodes a
/// side are those of `texels` (ROCK_NODES in all tests but the land search against the old one).
fn rock_scene_with_tiles(
    gl: &glow::Context,
    program: &Program,
    texels: &[f32],
    light: glam::Vec3,
    shore: f32,
    tiles: &[u8],
) {
    let n = ((texels.len() / 4) as f64).sqrt() as usize;
    assert_eq!(n * n * 4, texels.len(), "square grid");
    let fixed: Vec<bool> = texels.chunks(4).map(|t| t[3] > 0.5).collect();
    let land: Vec<f32> = land_texels(&fixed, n, ROCK_LAND_HEIGHT, ROCK_DEPTH)
        .iter()
        .flat_map(|&[height, inland]| [height, inland, 0.0, 1.0])
        .collect();
    // SAFETY: GL calls on the headless context, current on this thread; the data outlive them.
    unsafe {
        for (unit, width, data) in [
            (0, n as i32, texels),
            (1, 1, &[1.0f32, 0.0, 0.0, 1.0][..]),
            (3, n as i32, &land[..]),
        ] {
            let texture = gl.create_texture().expect("a texture");
            gl.active_texture(glow::TEXTURE0 + unit);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA32F as i32,
                width,
                width,
                0,
                glow::RGBA,
                glow::FLOAT,
                Some(bytemuck::cast_slice(data)),
            );
            for parameter in [glow::TEXTURE_MIN_FILTER, glow::TEXTURE_MAG_FILTER] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, glow::LINEAR as i32);
            }
            for parameter in [glow::TEXTURE_WRAP_S, glow::TEXTURE_WRAP_T] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, glow::CLAMP_TO_EDGE as i32);
            }
        }
        let side = land_tiles_side(n) as i32;
        let texture = gl.create_texture().expect("a texture");
        gl.active_texture(glow::TEXTURE4);
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::R8 as i32,
            side,
            side,
            0,
            glow::RED,
            glow::UNSIGNED_BYTE,
            Some(tiles),
        );
        for parameter in [glow::TEXTURE_MIN_FILTER, glow::TEXTURE_MAG_FILTER] {
            gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, glow::NEAREST as i32);
        }
    }
    let set_i = |name: &str, value: i32| program.uniform(gl, name).expect(name).set(gl, value);
    for (name, value) in [
        ("surface", 0),
        ("caustics", 1),
        ("sky", 2),
        ("land_texture", 3),
        ("land_tiles", 4),
        ("land_tile", LAND_TILE as i32),
        ("nodes", n as i32),
        ("has_land", 1),
        ("caustic_lookups", 1),
        ("mesh_stride", 1),
    ] {
        set_i(name, value);
    }
    let set_f = |name: &str, value: f32| program.uniform(gl, name).expect(name).set(gl, value);
    for (name, value) in [
        ("pool_size", ROCK_SIZE),
        ("pool_depth", ROCK_DEPTH),
        ("land_height", ROCK_LAND_HEIGHT),
        ("shore", shore),
    ] {
        set_f(name, value);
    }
    program.uniform(gl, "light").expect("light").set(gl, light);
    program
        .uniform(gl, "land_bounds")
        .expect("land_bounds")
        .set(gl, land_bounds(&fixed, n));
    let domain = glam::Vec4::new(-2.0, -2.0, 1.0 / 6.0, 1.0 / 6.0);
    program
        .uniform(gl, "caustics_domain")
        .expect("caustics_domain")
        .set(gl, domain);
}

/// Pixel (i, j): 1 in red where the land texture's height at node (i, j) (`land_ground`, one
/// texel) is the value of the shaders' formula before it (below, from the surface texture's
/// flags), in green where its inland share is; the formula's own `shore` unused.
const LAND_TWIN_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n",
    include_str!("../shaders/pool/common.glsl"),
    include_str!("../shaders/pool/land_search.glsl"),
    include_str!("../shaders/pool/water.glsl"),
    "uniform float shore;\n",
    "out vec4 color;\n",
    "float old_inland_at(ivec2 ij) {\n",
    "    float sum = node(ij).w;\n",
    "    for (int k = 0; k < 4; ++k) {\n",
    "        ivec2 offset = k == 0 ? ivec2(3, 0) : k == 1 ? ivec2(-3, 0) : k == 2 ? ivec2(0, 3) : ivec2(0, -3);\n",
    "        sum += node(ij + offset).w;\n",
    "    }\n",
    "    return sum / 5.0;\n",
    "}\n",
    "float old_land_ground(ivec2 ij) {\n",
    "    ivec2 c = clamp(ij, ivec2(0), ivec2(nodes - 1));\n",
    "    return node(c).w > 0.5 ? land_height * (0.25 + 0.75 * old_inland_at(c)) : -pool_depth;\n",
    "}\n",
    "void main() {\n",
    "    ivec2 ij = ivec2(gl_FragCoord.xy);\n",
    "    float height = land_ground(ij) == old_land_ground(ij) ? 1.0 : 0.0;\n",
    "    float inland = inland_at(ij) == old_inland_at(ij) ? 1.0 : 0.0;\n",
    "    color = vec4(height, inland, 0.0, 1.0);\n",
    "}\n",
);

/// The land texture (`land_texels`, computed on the host) holds at every node exactly the
/// height and inland share the shaders computed from the flags before it (five flags a share, 16
/// heights for a normal): a grid with a disc island, a one-node line, a shore along an edge and
/// a node in a corner (the clamped neighbours). Measured on llvmpipe: all 4,096 nodes equal.
#[test]
fn the_land_texture_is_the_shaders_old_formula_at_every_node() {
    let n = ROCK_NODES as usize;
    let land = |i: usize, j: usize| {
        let disc = (i as f32 - 30.0).powi(2) + (j as f32 - 25.0).powi(2) < 81.0;
        disc || (i == 50 && (10..40).contains(&j)) || j >= 60 || (i == 0 && j == 0)
    };
    let texels: Vec<f32> = (0..n * n)
        .flat_map(|k| [0.0, 0.0, 0.0, if land(k % n, k / n) { 1.0 } else { 0.0 }])
        .collect();
    let image = draw(n as u32, n as u32, LAND_TWIN_FRAGMENT, |gl, program| {
        rock_scene(gl, program, &texels, glam::Vec3::Y, 0.0)
    });
    let (mut heights, mut shares) = (0, 0);
    for y in 0..n as u32 {
        for x in 0..n as u32 {
            let p = image.get_pixel(x, y);
            heights += usize::from(p[0] != 255);
            shares += usize::from(p[1] != 255);
        }
    }
    println!("land texture against the old formula: {heights} heights and {shares} shares of {} nodes differ", n * n);
    assert_eq!((heights, shares), (0, 0), "nodes whose land texel differs");
}

/// Pixel i: a ray from 1 cm under the rest level near the pool's x = 0 wall, across the pool
/// along x, 1.1° down, at z = 0.3 + 0.1·i: red 1 where `land_along` meets land, green its end's
/// distance past the strip's contour (the flag's 0.5, half a cell before its first column), in
/// cells, ×8 + 0.5, blue the same over 128 (+ 0.5: up to 64 cells either side).
const STRIP_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n",
    include_str!("../shaders/pool/common.glsl"),
    include_str!("../shaders/pool/land_search.glsl"),
    include_str!("../shaders/pool/water.glsl"),
    "uniform float shore;\n",
    "out vec4 color;\n",
    "void main() {\n",
    "    vec3 o = vec3(0.1, -0.01, 0.3 + 0.1 * floor(gl_FragCoord.x));\n",
    "    vec3 d = normalize(vec3(1.0, -0.02, 0.0));\n",
    "    vec3 face;\n",
    "    float t;\n",
    "    if (!land_along(o, d, exit_box(o, d, 1e-3, face), t)) {\n",
    "        color = vec4(0.0, 0.0, 0.0, 1.0);\n",
    "        return;\n",
    "    }\n",
    "    float off = ((o + d * t).x - shore) / spacing();\n",
    "    color = vec4(1.0, 8.0 * off + 0.5, off / 128.0 + 0.5, 1.0);\n",
    "}\n",
);

/// A strip of land two nodes wide across the pool (columns 40 and 41 of 64: 6 cm) under a ray
/// almost level along the pool (1.9 m to the far wall): the ray meets it, on its near side
/// (within 0.03 of a cell of the contour). The search's 12 samples are spread over the ray's
/// part over the land's bounds (`land_bounds`: here 10 cm), 0.25 cells apart; over the whole
/// ray, as the code before spread them, they were 5 cells apart and stepped over the strip: no
/// ray of the 16 met land (measured with the bounds set to the whole grid, the old search).
#[test]
fn a_narrow_strip_of_land_is_found_along_a_long_ray() {
    const RAYS: u32 = 16;
    let n = ROCK_NODES as usize;
    let texels: Vec<f32> = (0..n * n)
        .flat_map(|k| {
            [
                0.0,
                0.0,
                0.0,
                if (40..42).contains(&(k % n)) {
                    1.0
                } else {
                    0.0
                },
            ]
        })
        .collect();
    let h = ROCK_SIZE / (ROCK_NODES - 1) as f32;
    let shore = (40.0 - 0.5) * h;
    let image = draw(RAYS, 1, STRIP_FRAGMENT, |gl, program| {
        rock_scene(gl, program, &texels, glam::Vec3::Y, shore)
    });
    let (mut met, mut worst) = (0, 0.0f64);
    for i in 0..RAYS {
        let p = image.get_pixel(i, 0);
        if p[0] == 255 {
            met += 1;
            worst = f64::max(worst, ((f64::from(p[1]) / 255.0 - 0.5) / 8.0).abs());
        }
    }
    println!("a narrow strip: {met} of {RAYS} rays meet it, their ends within {worst:.3} cells of its contour");
    assert_eq!(met, RAYS, "rays that meet the strip");
    assert!(
        worst < 0.03,
        "ends {worst:.3} cells off the strip's contour"
    );
}

/// The flags of a shore along the pool's x = 0 edge (columns 0 and 1) and a strip of land across
/// the pool (columns 52 to 58), and, where `ghost`, a second strip between them (columns 16 to
/// 32) that the land tiles are not told of.
fn shore_and_strip(ghost: bool) -> Vec<f32> {
    let n = ROCK_NODES as usize;
    (0..n * n)
        .flat_map(|k| {
            let i = k % n;
            let land = i <= 1 || (52..=58).contains(&i) || (ghost && (16..=32).contains(&i));
            [0.0, 0.0, 0.0, if land { 1.0 } else { 0.0 }]
        })
        .collect()
}

/// The land search looks only at the samples over land tiles that hold land: rays from beside a
/// shore over open water to a strip of land (`STRIP_FRAGMENT`'s 16, almost level, 1.9 m) pass a
/// second strip that the surface's flags hold but the land tiles (`land_tiles`, of the flags
/// without it) do not, and end at the far strip (within 0.03 of a cell of its contour): the
/// samples over the tiles between shore and strip are not taken. With every tile set, which is
/// the search before the tiles (all 12 samples over the land's bounds, here the whole ray), all
/// 16 rays end at the hidden strip, 36 cells short (the assertion's figure for the mutant).
#[test]
fn the_land_search_skips_the_tiles_without_land() {
    const RAYS: u32 = 16;
    let n = ROCK_NODES as usize;
    let seen: Vec<bool> = shore_and_strip(false)
        .chunks(4)
        .map(|t| t[3] > 0.5)
        .collect();
    let tiles = land_tiles(&seen, n);
    let side = land_tiles_side(n);
    // The tiles over the hidden strip (columns 16 to 32) hold no land.
    let hidden: Vec<usize> = (0..side)
        .filter(|&a| a * LAND_TILE >= 16 && (a + 1) * LAND_TILE <= 32)
        .collect();
    assert!(!hidden.is_empty() && hidden.iter().all(|&a| tiles[a] > 0));
    let h = ROCK_SIZE / (ROCK_NODES - 1) as f32;
    let contour = (52.0 - 0.5) * h;
    let texels = shore_and_strip(true);
    let image = draw(RAYS, 1, STRIP_FRAGMENT, |gl, program| {
        rock_scene_with_tiles(gl, program, &texels, glam::Vec3::Y, contour, &tiles)
    });
    let (mut met, mut worst) = (0, 0.0f64);
    for i in 0..RAYS {
        let p = image.get_pixel(i, 0);
        if p[0] == 255 {
            met += 1;
            let coarse = 128.0 * (f64::from(p[2]) / 255.0 - 0.5);
            let end = if coarse.abs() < 0.4 {
                (f64::from(p[1]) / 255.0 - 0.5) / 8.0
            } else {
                coarse
            };
            worst = f64::max(worst, end.abs());
        }
    }
    println!("past the tiles without land: {met} of {RAYS} rays meet land, their ends within {worst:.3} cells of the far strip's contour");
    assert_eq!(met, RAYS, "rays that meet land");
    assert!(
        worst < 0.03,
        "ends {worst:.3} cells off the far strip's contour (the hidden strip's is 36 short)"
    );
}

/// With `rays` 0, pixel (x, y) of 64 × 64: ray (x, y), from 1 cm under the rest level at
/// ((x, y) + 0.5)·size/64, level along angle 0.7·x + 1.3·y (every 8th row: a multiple of π/4, so
/// some rays run within 1e-7 of an axis, `land_along`'s `safe` path), 3° to 19° down. Red 1
/// where `land_along` and `old_land_along` (the search of 12 samples before the land tiles,
/// 4e0f976's `land_along` verbatim) agree: both meet no land, or both meet it at the same bits
/// of t; 0.75 where `land_along` meets land the old search does not; 0.5 where it meets land
/// before the old search's end; 0 else. Green 1 where `land_along`'s end is no later than the
/// first of 2048 samples over the land's bounds that reaches land (or none does), within the
/// old search's precision (its samples' spacing / 256). Blue 1 where `land_along` meets land.
/// With `rays` 1, pixel i: ray i, from 1 cm under the rest level at x = 0.1 + 0.011·i m,
/// z = 0.3 + 0.1·i m, along x, 1.1° down: red 1 where `land_along` meets land, green its end's
/// distance past `shore` in cells, ×8 + 0.5, blue 1 where `old_land_along` meets land.
const RAYS_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n",
    include_str!("../shaders/pool/common.glsl"),
    include_str!("../shaders/pool/land_search.glsl"),
    include_str!("../shaders/pool/water.glsl"),
    "uniform float shore;\n",
    "uniform int rays;\n",
    "bool old_land_along(vec3 o, vec3 d, float t_end, out float t_hit) {\n",
    "    if (has_land == 0) {\n",
    "        return false;\n",
    "    }\n",
    "    vec4 bounds = land_bounds * spacing();\n",
    "    vec2 safe = vec2(abs(d.x) < 1e-7 ? 1e-7 : d.x, abs(d.z) < 1e-7 ? 1e-7 : d.z);\n",
    "    vec2 to_low = (bounds.xy - o.xz) / safe;\n",
    "    vec2 to_high = (bounds.zw - o.xz) / safe;\n",
    "    vec2 enter = min(to_low, to_high);\n",
    "    vec2 leave = max(to_low, to_high);\n",
    "    float first = max(max(enter.x, enter.y), 0.0);\n",
    "    float last = min(min(leave.x, leave.y), t_end);\n",
    "    if (first >= last) {\n",
    "        return false;\n",
    "    }\n",
    "    const int STEPS = 12;\n",
    "    for (int i = 1; i <= STEPS; ++i) {\n",
    "        float t = mix(first, last, float(i) / float(STEPS));\n",
    "        if (surface_at((o + d * t).xz).w > 0.5) {\n",
    "            float water = mix(first, last, float(i - 1) / float(STEPS));\n",
    "            for (int k = 0; k < 8; ++k) {\n",
    "                float mid = 0.5 * (water + t);\n",
    "                if (surface_at((o + d * mid).xz).w > 0.5) {\n",
    "                    t = mid;\n",
    "                } else {\n",
    "                    water = mid;\n",
    "                }\n",
    "            }\n",
    "            t_hit = t;\n",
    "            return true;\n",
    "        }\n",
    "    }\n",
    "    return false;\n",
    "}\n",
    "// The first of `samples` over the land's bounds that reaches land, as old_land_along.\n",
    "bool dense_land_along(vec3 o, vec3 d, float t_end, int samples, out float t_hit, out float span) {\n",
    "    vec4 bounds = land_bounds * spacing();\n",
    "    vec2 safe = vec2(abs(d.x) < 1e-7 ? 1e-7 : d.x, abs(d.z) < 1e-7 ? 1e-7 : d.z);\n",
    "    vec2 to_low = (bounds.xy - o.xz) / safe;\n",
    "    vec2 to_high = (bounds.zw - o.xz) / safe;\n",
    "    float first = max(max(min(to_low, to_high).x, min(to_low, to_high).y), 0.0);\n",
    "    float last = min(min(max(to_low, to_high).x, max(to_low, to_high).y), t_end);\n",
    "    span = last - first;\n",
    "    for (int i = 1; i <= samples && first < last; ++i) {\n",
    "        float t = mix(first, last, float(i) / float(samples));\n",
    "        if (surface_at((o + d * t).xz).w > 0.5) {\n",
    "            t_hit = t;\n",
    "            return true;\n",
    "        }\n",
    "    }\n",
    "    return false;\n",
    "}\n",
    "out vec4 color;\n",
    "void main() {\n",
    "    vec2 pixel = floor(gl_FragCoord.xy);\n",
    "    vec3 face;\n",
    "    float t = -1.0;\n",
    "    float old_t = -1.0;\n",
    "    if (rays == 1) {\n",
    "        vec3 o = vec3(0.1 + 0.011 * pixel.x, -0.01, 0.3 + 0.1 * pixel.x);\n",
    "        vec3 d = normalize(vec3(1.0, -0.02, 0.0));\n",
    "        float t_end = exit_box(o, d, 1e-3, face);\n",
    "        bool hit = land_along(o, d, t_end, t);\n",
    "        bool old_hit = old_land_along(o, d, t_end, old_t);\n",
    "        float off = hit ? ((o + d * t).x - shore) / spacing() : 0.0;\n",
    "        color = vec4(hit ? 1.0 : 0.0, 8.0 * off + 0.5, old_hit ? 1.0 : 0.0, 1.0);\n",
    "        return;\n",
    "    }\n",
    "    vec3 o = vec3((pixel.x + 0.5) / 64.0 * pool_size, -0.01, (pixel.y + 0.5) / 64.0 * pool_size);\n",
    "    float a = int(pixel.y) % 8 == 0 ? float(int(pixel.x) % 8) * 0.78539816 : 0.7 * pixel.x + 1.3 * pixel.y;\n",
    "    float down = 0.05 + 0.28 * fract(0.37 * pixel.x + 0.11 * pixel.y);\n",
    "    vec3 d = normalize(vec3(cos(a), -down, sin(a)));\n",
    "    float t_end = exit_box(o, d, 1e-3, face);\n",
    "    bool hit = land_along(o, d, t_end, t);\n",
    "    bool old_hit = old_land_along(o, d, t_end, old_t);\n",
    "    float dense_t, span;\n",
    "    bool dense_hit = dense_land_along(o, d, t_end, 2048, dense_t, span);\n",
    "    bool same = hit == old_hit && (!hit || floatBitsToUint(t) == floatBitsToUint(old_t));\n",
    "    float kind = same ? 1.0 : (hit && !old_hit ? 0.75 : (hit && t < old_t ? 0.5 : 0.0));\n",
    "    bool dense_ok = !dense_hit || (hit && t <= dense_t + span / 3072.0);\n",
    "    color = vec4(kind, dense_ok ? 1.0 : 0.0, hit ? 1.0 : 0.0, 1.0);\n",
    "}\n",
);

/// The walk finds the land the search of 12 samples found where that found it, bit for bit,
/// finds the land it stepped over, and steps over none: 4,096 rays in every direction, on
/// three grids: 64 nodes (the last tile runs past the pool) with a shore along the far edge, an
/// island, a line of land one node wide and a node in a corner; 65 nodes (64 cells, the pool
/// ends on a tile's edge) and 42 nodes (the last tile one cell wide) with shores along the
/// x = 0 and z = 0 walls and single nodes on tiles' corners and edges. Every ray ends where
/// `old_land_along` (the search before, verbatim) ends it, bit for bit, or meets land it does
/// not meet or meets it earlier (land its samples stepped over: the lines and single nodes),
/// and no ray ends past the first of 2,048 samples along it that reaches land. Measured on
/// llvmpipe: 0 rays wrong on each grid; see the test's output for the rays that meet land the
/// old search stepped over. The old search itself (`land_along` = `old_land_along`) ends rays
/// past the 2,048 samples' first land: FAIL; so does the walk's mutant whose cells skip
/// corners' land (`any(greaterThan(corners, vec4(0.0)))` false).
#[test]
fn the_walk_finds_the_land_the_samples_found_and_what_they_stepped_over() {
    type Land = fn(usize, usize) -> bool;
    let grids: [(usize, Land); 3] = [
        (64, |i, j| {
            let disc = (i as f32 - 30.0).powi(2) + (j as f32 - 25.0).powi(2) < 81.0;
            disc || (i == 48 && (10..40).contains(&j)) || j >= 62 || (i == 0 && j == 0)
        }),
        (65, |i, j| {
            let disc = (i as f32 - 40.0).powi(2) + (j as f32 - 36.0).powi(2) < 49.0;
            disc || i <= 1
                || j == 0
                || (i, j) == (24, 48)
                || (i, j) == (56, 20)
                || (i, j) == (64, 64)
        }),
        (42, |i, j| {
            i == 0
                || j <= 1
                || (i, j) == (16, 16)
                || (i, j) == (8, 28)
                || (i, j) == (41, 41)
                || (i == 30 && (20..36).contains(&j))
        }),
    ];
    let mut failed = Vec::new();
    for (n, land) in grids {
        let texels: Vec<f32> = (0..n * n)
            .flat_map(|k| [0.0, 0.0, 0.0, if land(k % n, k / n) { 1.0 } else { 0.0 }])
            .collect();
        let image = draw(64, 64, RAYS_FRAGMENT, |gl, program| {
            rock_scene(gl, program, &texels, glam::Vec3::Y, 0.0);
            program.uniform(gl, "rays").expect("rays").set(gl, 0);
        });
        let kind = |p: &[u8; 3], want: u8| p[0].abs_diff(want) < 8;
        let pixels: Vec<[u8; 3]> = image.pixels().map(|p| [p[0], p[1], p[2]]).collect();
        let met = pixels.iter().filter(|p| p[2] == 255).count();
        let same = pixels.iter().filter(|p| kind(p, 255)).count();
        let found = pixels.iter().filter(|p| kind(p, 191)).count();
        let earlier = pixels.iter().filter(|p| kind(p, 128)).count();
        let wrong = pixels.iter().filter(|p| kind(p, 0)).count();
        let past_land = pixels.iter().filter(|p| p[1] != 255).count();
        println!(
            "{n} nodes: {same} of 4096 rays end where the 12 samples end them, bit for bit; {found} meet land they miss, {earlier} meet it before their end; {wrong} otherwise; {past_land} end past the 2048 samples' first land ({met} meet land)"
        );
        if wrong > 0 || past_land > 0 || met < 1000 {
            failed.push((n, wrong, past_land, met));
        }
    }
    assert!(
        failed.is_empty(),
        "(nodes, rays wrong, rays past the dense samples' land, rays meeting land): {failed:?}"
    );
}

/// A line of land one node wide (column 40 of 64: its flag over a half one cell wide) beyond
/// open water from a shore along the x = 0 wall, under 16 almost level rays (1.1° down) from
/// beside the shore: the walk meets it, on its near side (within 0.03 of a cell of its
/// contour). The search before (`old_land_along`, 12 samples over the land's bounds, here
/// x from −1 to 41 nodes: 2.7 to 3.2 cells apart) steps over it: it meets no land with any of
/// the 16, which run on 23.5 cells past the line to the far wall (FAIL with `land_along` the
/// old search).
#[test]
fn a_line_of_land_one_node_wide_is_not_stepped_over() {
    const RAYS: u32 = 16;
    let n = ROCK_NODES as usize;
    let texels: Vec<f32> = (0..n * n)
        .flat_map(|k| {
            let i = k % n;
            [0.0, 0.0, 0.0, if i <= 1 || i == 40 { 1.0 } else { 0.0 }]
        })
        .collect();
    let h = ROCK_SIZE / (ROCK_NODES - 1) as f32;
    let contour = (40.0 - 0.5) * h;
    let image = draw(RAYS, 1, RAYS_FRAGMENT, |gl, program| {
        rock_scene(gl, program, &texels, glam::Vec3::Y, contour);
        program.uniform(gl, "rays").expect("rays").set(gl, 1);
    });
    let (mut met, mut old_met, mut worst) = (0, 0, 0.0f64);
    for i in 0..RAYS {
        let p = image.get_pixel(i, 0);
        if p[2] == 255 {
            old_met += 1;
        }
        if p[0] == 255 {
            met += 1;
            worst = f64::max(worst, ((f64::from(p[1]) / 255.0 - 0.5) / 8.0).abs());
        }
    }
    println!("a line one node wide: {met} of {RAYS} rays meet it (the 12 samples: {old_met}), their ends within {worst:.3} cells of its contour");
    assert_eq!(met, RAYS, "rays that meet the line");
    assert!(worst < 0.03, "ends {worst:.3} cells off the line's contour");
}
