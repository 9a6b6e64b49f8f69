//! The land rock scene of the land shader tests (tests/pool_glsl_land.rs,
//! tests/pool_glsl_land_walk.rs): a calm pool's surface with land flags, its land texture and
//! land tiles bound for `common.glsl` + `land_search.glsl` + `water.glsl`.

// Each test file that includes it uses part of it.
#![allow(dead_code)]

use fluidlab::gfx::program::Program;
use fluidlab::sims::pool::render::{
    land_bounds, land_texels, land_tiles, land_tiles_side, LAND_TILE,
};
use glow::HasContext;

/// The rock test's grid: nodes a side, the pool's side and depth (m), the land's height
/// inland (m).
pub const ROCK_NODES: i32 = 64;
pub const ROCK_SIZE: f32 = 2.0;
pub const ROCK_DEPTH: f32 = 1.0;
pub const ROCK_LAND_HEIGHT: f32 = 0.08;

/// Sets the rock test's uniforms and binds its textures: the surface (calm, flags `texels`), the
/// caustics a uniform 1 over a domain wider than the pool, the land texture and the land tiles
/// of the flags.
pub fn rock_scene(
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
pub fn rock_scene_with_tiles(
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
