//! What every pool pass shares: the surface texture, the shaders' common part
//! (`shaders/pool/common.glsl`, `land_search.glsl`, `water.glsl`, put in front of each pass's own), the texture units, and the uniforms it declares, located once per
//! program and set from one frame's values.

use super::caustics::CausticsDomain;
use super::grid::Grid;
use crate::gfx::program::{Program, Uniform};
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec3, Vec4};
use glow::HasContext;

/// The shaders' common part, in order: `common.glsl`, `land_search.glsl`, `water.glsl`.
macro_rules! pool_common {
    () => {
        concat!(
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/shaders/pool/common.glsl"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/shaders/pool/land_search.glsl"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/shaders/pool/water.glsl"
            )),
        )
    };
}
pub(super) use pool_common;

/// A pool pass's shaders: `shaders/pool/VERTEX` and `shaders/pool/FRAGMENT`, each after
/// `#version 330 core` and the shaders' common part, `shaders/pool/common.glsl`,
/// `land_search.glsl` (the land) and `water.glsl` (the rays and the water's surface), under the
/// pass name `NAME`; the fragment shader's with `FRAGMENT_SHADER` defined (the common part's
/// functions that take derivatives).
macro_rules! pool_shader {
    ($name:expr, $vertex:expr, $fragment:expr) => {
        $crate::sims::pool::render::shared::pool_shader!($name, $vertex, $fragment, "")
    };
    ($name:expr, $vertex:expr, $fragment:expr, $defines:expr) => {
        $crate::gfx::program::ShaderSource {
            name: $name,
            vertex: concat!(
                "#version 330 core\n",
                $crate::sims::pool::render::shared::pool_common!(),
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/shaders/pool/",
                    $vertex
                ))
            ),
            fragment: concat!(
                "#version 330 core\n#define FRAGMENT_SHADER\n",
                $defines,
                $crate::sims::pool::render::shared::pool_common!(),
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/shaders/pool/",
                    $fragment
                ))
            ),
            geometry: None,
        }
    };
}
pub(super) use pool_shader;

/// The texture units the pool's samplers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TextureUnit {
    /// The surface texture.
    Surface = 0,
    /// The caustics texture.
    Caustics = 1,
    /// The sky's cubemap.
    Sky = 2,
    /// The land texture (`land.rs`).
    Land = 3,
    /// The land tiles (`land_tiles.rs`).
    LandTiles = 4,
}

/// One frame's values of the shared uniforms.
pub(super) struct FrameValues {
    pub(super) view_projection: Mat4,
    pub(super) eye: Vec3,
    pub(super) nodes: i32,
    pub(super) size: f32,
    pub(super) depth: f32,
    pub(super) rim: f32,
    pub(super) light: Vec3,
    pub(super) domain: CausticsDomain,
    pub(super) has_land: bool,
    /// The land's height above the rest level well inland, m ([`super::DrawScene::land_height`]).
    pub(super) land_height: f32,
    /// The land's nodes' least and greatest (i, j), a node wider each side (`land_along`).
    pub(super) land_bounds: Vec4,
    pub(super) open: bool,
    /// Whether the fine-detail ripples are drawn.
    pub(super) detail: bool,
    /// The most caustics lookups along a footprint (`caustic_at`).
    pub(super) caustic_lookups: i32,
    /// The simulated time, s (the ripples move with it).
    pub(super) time: f32,
}

/// The uniforms of the shaders' common part in one program.
pub(super) struct Shared {
    surface: Uniform,
    land_texture: Uniform,
    caustics: Uniform,
    sky: Uniform,
    nodes: Uniform,
    pool_size: Uniform,
    pool_depth: Uniform,
    rim_height: Uniform,
    light: Uniform,
    caustics_domain: Uniform,
    caustic_lookups: Uniform,
    eye: Uniform,
    has_land: Uniform,
    land_height: Uniform,
    land_bounds: Uniform,
    land_tiles: Uniform,
    land_tile: Uniform,
    open_sea: Uniform,
    mesh_nodes: Uniform,
    mesh_stride: Uniform,
    detail: Uniform,
    time: Uniform,
    horizon: Uniform,
}

impl Shared {
    pub(super) fn locate(gl: &glow::Context, program: &Program) -> Result<Shared> {
        Ok(Shared {
            surface: program.uniform(gl, "surface")?,
            land_texture: program.uniform(gl, "land_texture")?,
            caustics: program.uniform(gl, "caustics")?,
            sky: program.uniform(gl, "sky")?,
            nodes: program.uniform(gl, "nodes")?,
            pool_size: program.uniform(gl, "pool_size")?,
            pool_depth: program.uniform(gl, "pool_depth")?,
            rim_height: program.uniform(gl, "rim_height")?,
            light: program.uniform(gl, "light")?,
            caustics_domain: program.uniform(gl, "caustics_domain")?,
            caustic_lookups: program.uniform(gl, "caustic_lookups")?,
            eye: program.uniform(gl, "eye")?,
            has_land: program.uniform(gl, "has_land")?,
            land_height: program.uniform(gl, "land_height")?,
            land_bounds: program.uniform(gl, "land_bounds")?,
            land_tiles: program.uniform(gl, "land_tiles")?,
            land_tile: program.uniform(gl, "land_tile")?,
            open_sea: program.uniform(gl, "open_sea")?,
            mesh_nodes: program.uniform(gl, "mesh_nodes")?,
            mesh_stride: program.uniform(gl, "mesh_stride")?,
            detail: program.uniform(gl, "detail")?,
            time: program.uniform(gl, "time")?,
            horizon: program.uniform(gl, "horizon")?,
        })
    }

    /// Sets them on the bound program.
    pub(super) fn set(&self, gl: &glow::Context, values: &FrameValues) {
        self.surface.set(gl, TextureUnit::Surface as i32);
        self.land_texture.set(gl, TextureUnit::Land as i32);
        self.caustics.set(gl, TextureUnit::Caustics as i32);
        self.sky.set(gl, TextureUnit::Sky as i32);
        self.nodes.set(gl, values.nodes);
        self.pool_size.set(gl, values.size);
        self.pool_depth.set(gl, values.depth);
        self.rim_height.set(gl, values.rim);
        self.light.set(gl, values.light);
        let d = &values.domain;
        self.caustics_domain.set(
            gl,
            Vec4::new(
                d.origin[0],
                d.origin[1],
                1.0 / d.extent[0],
                1.0 / d.extent[1],
            ),
        );
        self.caustic_lookups.set(gl, values.caustic_lookups);
        self.eye.set(gl, values.eye);
        self.has_land.set(gl, i32::from(values.has_land));
        self.land_height.set(gl, values.land_height);
        self.land_bounds.set(gl, values.land_bounds);
        self.land_tiles.set(gl, TextureUnit::LandTiles as i32);
        self.land_tile.set(gl, super::LAND_TILE as i32);
        self.open_sea.set(gl, i32::from(values.open));
        self.detail.set(gl, i32::from(values.detail));
        self.time.set(gl, values.time);
        self.horizon.set(gl, crate::gfx::skybox::HORIZON);
    }

    /// Sets the mesh `grid` draws on the bound program.
    pub(super) fn set_grid(&self, gl: &glow::Context, grid: &Grid) {
        self.mesh_nodes.set(gl, grid.mesh());
        self.mesh_stride.set(gl, grid.stride());
    }
}

/// The surface texture: nodes² RGBA32F texels, linearly filtered for the passes that look the
/// surface up between nodes (the vertex passes fetch whole texels), and the bytes of its
/// level 0.
pub(super) fn surface_texture(gl: &glow::Context, nodes: usize) -> Result<(glow::Texture, u64)> {
    let bytes = nodes * nodes * 4 * std::mem::size_of::<f32>();
    // SAFETY: GL calls on the current context the front end attached.
    unsafe {
        let texture = gl.create_texture().map_err(|e| anyhow!("texture: {e}"))?;
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::RGBA32F as i32,
            nodes as i32,
            nodes as i32,
            0,
            glow::RGBA,
            glow::FLOAT,
            None,
        );
        for (parameter, value) in [
            (glow::TEXTURE_MIN_FILTER, glow::LINEAR),
            (glow::TEXTURE_MAG_FILTER, glow::LINEAR),
            (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
            (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
        ] {
            gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, value as i32);
        }
        gl.bind_texture(glow::TEXTURE_2D, None);
        Ok((texture, bytes as u64))
    }
}
