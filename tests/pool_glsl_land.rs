//! `shaders/pool/land_search.glsl`'s land functions (after `common.glsl`, with `water.glsl`)
//! run on the GL (headless EGL, Mesa llvmpipe in CI) and checked against their exact values
//! computed here: the rock under the water, the land texture, the land search (`land_along`)
//! and its land tiles. The walk against the search it replaced: tests/pool_glsl_land_walk.rs.

#[path = "support/glsl_draw.rs"]
mod glsl_draw;
use fluidlab::sims::pool::render::{land_tiles, land_tiles_side, LAND_TILE};
use glsl_draw::draw;
#[path = "support/pool_rock.rs"]
mod pool_rock;
use pool_rock::{
    rock_scene, rock_scene_with_tiles, ROCK_DEPTH, ROCK_LAND_HEIGHT, ROCK_NODES, ROCK_SIZE,
};

/// The first column of land of the rock test (every node with i ≥ SHORE is land: a straight
/// shore along z, its side facing −x).
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
    "#version 330 core\n#define FRAGMENT_SHADER\n#define POOL_LAND\n",
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

/// Pixel (i, j): 1 in red where the land texture's height at node (i, j) (`land_ground`, one
/// texel) is the value of the shaders' formula before it (below, from the surface texture's
/// flags), in green where its inland share is; the formula's own `shore` unused.
const LAND_TWIN_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n#define POOL_LAND\n",
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
    "#version 330 core\n#define FRAGMENT_SHADER\n#define POOL_LAND\n",
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
