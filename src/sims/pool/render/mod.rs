//! The pool's renderer. Its input is a surface texture of one RGBA32F texel per node — (offset
//! x, height, offset z, 1 if fixed) — written by an upload (CPU) or through interop (CUDA); the
//! passes displace the grid by it on the GPU (vertex texture fetch, normals from the
//! neighbouring texels). A frame of the `surface` view runs, each with a shader of the same
//! name in `shaders/pool/` (after `shaders/pool/common.glsl`,
//! `land_search.glsl` and `water.glsl`) and a method of the same name:
//!
//! | pass | draws | into |
//! |---|---|---|
//! | `caustics` | the surface mesh projected along the refracted sunlight onto the floor plane, brightness from the change of area, added up | the caustics texture (R32F) |
//! | `sky` | the procedural sky (`shaders/common/skybox.*`), its sun at the scene's light | the frame |
//! | `pool` | the tiled floor and walls (caustics under water), the deck | the frame |
//! | `land` | fixed nodes (shores, islands) as sand and rock down to the floor (when there are any) | the frame |
//! | `surface` | the water: Fresnel reflection, refraction ray-traced against the pool box, Snell's window from below | the frame |
//! | `present` | the frame to the output | the output |
//!
//! The `wireframe` and `nodes` views draw the mesh's edges or its nodes coloured by height
//! (`height.frag`) instead of `surface`; the `caustics` view shows the caustics texture itself
//! (`caustics_view`). A grid of more than 513 nodes a side is drawn with a mesh of every s-th
//! node (at most 513 a side; the normals still from the neighbouring nodes); the caustics use
//! every node. Here: the renderer's objects and life; `draw_scene.rs` what a frame is asked to
//! draw (the scene's values, the views, the passes), `frame.rs` the frame's passes in their
//! order, `objects.rs` the GL objects' bytes and the texture limit, `shared.rs` the uniforms
//! every pass sets, `caustics.rs` the caustics texture and its passes, `grid.rs` the surface
//! mesh and the passes drawing it (`surface`, `land`, `wireframe`, `nodes`), `land.rs` the land
//! texture (the land's heights, computed on the host when the land changes) and the land's
//! bounds, `warm_up.rs` land's programs made ahead of the first frame with land, `pool_box.rs`
//! the pool's box and the deck.

mod caustics;
mod draw_scene;
mod frame;
mod grid;
mod land;
mod land_tiles;
mod objects;
mod pool_box;
mod shared;
mod warm_up;

pub use caustics::texture_bytes as caustics_texture_bytes;
pub use caustics::CausticsImage;
pub use draw_scene::{rim_height, DrawScene, Pass, VIEWS};
pub use grid::{display_mesh_nodes, display_stride, strip_indices, SurfaceVariant, TapCells};
pub use land::{land_bounds, land_texels, land_texels_in, NodeBox, LAND_REACH};
pub use land_tiles::{
    land_tile_bytes, land_tiles, land_tiles_in, land_tiles_side, tiles_reached, LAND_TILE,
    LAND_TILE_REACH,
};
pub use objects::{texture_refusal, GRID_OBJECTS};

use crate::gfx::check_gl;
use crate::gfx::fullscreen::{FullscreenTriangle, Present};
use crate::gfx::skybox::{self, Sky};
use crate::gfx::targets::TextureTarget;
use crate::gfx::timing::{PassClock, PassTimer};
use anyhow::{anyhow, Result};
use caustics::{CausticsPass, CausticsViewProgram};
use glam::Vec3;
use glow::HasContext;
use grid::{Grid, HeightProgram, LandProgram, SurfaceProgram};
use land::LandTexture;
use pool_box::{PoolBox, PoolProgram};
use shared::surface_texture;
use std::rc::Rc;

/// The programs of the passes.
struct Programs {
    pool: PoolProgram,
    land: LandProgram,
    surface: SurfaceProgram,
    height: HeightProgram,
    caustics_view: CausticsViewProgram,
}

/// The GL objects of the pool's passes.
pub struct PoolRenderer {
    gl: Rc<glow::Context>,
    clock: PassClock,
    surface: glow::Texture,
    /// Bytes of the surface texture's level 0, as specified.
    surface_bytes: u64,
    nodes: usize,
    grid: Grid,
    display: Option<Grid>,
    pool_box: Option<(PoolBox, [f32; 2])>,
    caustics: CausticsPass,
    programs: Programs,
    sky: Sky,
    sun: Vec3,
    present: Present,
    fullscreen: FullscreenTriangle,
    frame: Option<TextureTarget>,
    frame_size: (u32, u32),
    timer: PassTimer,
    /// Whether any node is land.
    has_land: bool,
    /// The `surface` build drawn with whatever the land: with it (`Some(true)`) or without
    /// (`Some(false)`); `None`, as the land is ([`Self::draw_surface_with_land`]).
    surface_land: Option<bool>,
    /// Whether land may come soon, told for the next frame only: land's programs are made
    /// ahead (`warm_up.rs`).
    land_expected: bool,
    /// Whether making land's programs ahead failed (noted once, never tried again; the first
    /// frame with land makes them, as a renderer told nothing does).
    land_ahead_refused: bool,
    /// Which nodes are land (fixed), as last told (empty until told).
    land_nodes: Vec<bool>,
    /// How many of `land_nodes` are land.
    land_count: usize,
    /// The nodes whose flag changed since the land texture was last updated.
    land_dirty: Option<NodeBox>,
    /// Texels computed at the land texture's last update.
    land_texels_computed: usize,
    /// Land tiles computed at the land texture's last update.
    land_tiles_computed: usize,
    /// [`land_bounds`] of `land_nodes`.
    land_bounds: glam::Vec4,
    /// The land's heights per node (made on the first frame with land; `land.rs`).
    land_texture: Option<LandTexture>,
    /// `GL_MAX_TEXTURE_SIZE` (`None`: not known).
    texture_limit: Option<usize>,
    /// The most caustics lookups along a pixel's footprint ([`CAUSTIC_LOOKUPS`]).
    caustic_lookups: u32,
}

/// The most lookups of the caustics texture along a pixel's footprint on the floor
/// (`common.glsl` `caustic_at`: one per unit of the footprint's axis ratio, rounded).
pub const CAUSTIC_LOOKUPS: u32 = 4;

impl PoolRenderer {
    /// The renderer for a grid of `nodes`² on `gl`.
    pub fn new(gl: Rc<glow::Context>, clock: PassClock, nodes: usize) -> Result<PoolRenderer> {
        let limit = PoolRenderer::max_texture_size(&gl);
        PoolRenderer::with_limit(gl, clock, nodes, limit)
    }

    /// [`PoolRenderer::new`] on a GL whose textures are at most `texture_limit` a side
    /// ([`PoolRenderer::max_texture_size`], asked by the caller; `None`: not known, nothing
    /// refused).
    pub fn with_limit(
        gl: Rc<glow::Context>,
        clock: PassClock,
        nodes: usize,
        texture_limit: Option<usize>,
    ) -> Result<PoolRenderer> {
        if let Some(refusal) = texture_limit.and_then(|limit| texture_refusal(nodes, limit)) {
            return Err(anyhow!(refusal));
        }
        let (surface, surface_bytes) = surface_texture(&gl, nodes)?;
        let sun = skybox::sun_direction();
        let renderer = PoolRenderer {
            grid: Grid::new(&gl, nodes, 1)?,
            display: match display_stride(nodes) {
                1 => None,
                stride => Some(Grid::new(&gl, nodes, stride)?),
            },
            caustics: CausticsPass::new(&gl, nodes, texture_limit)?,
            programs: Programs {
                pool: PoolProgram::new(&gl)?,
                land: LandProgram::new(&gl)?,
                surface: SurfaceProgram::new(&gl)?,
                height: HeightProgram::new(&gl)?,
                caustics_view: CausticsViewProgram::new(&gl)?,
            },
            sky: Sky::with_sun(&gl, sun)?,
            sun,
            present: Present::new(&gl)?,
            fullscreen: FullscreenTriangle::new(&gl)?,
            frame: None,
            frame_size: (0, 0),
            timer: PassTimer::new(clock),
            pool_box: None,
            has_land: false,
            surface_land: None,
            land_expected: false,
            land_ahead_refused: false,
            land_nodes: Vec::new(),
            land_count: 0,
            land_dirty: None,
            land_texels_computed: 0,
            land_tiles_computed: 0,
            land_texture: None,
            land_bounds: glam::Vec4::ZERO,
            texture_limit,
            caustic_lookups: CAUSTIC_LOOKUPS,
            gl,
            clock,
            surface,
            surface_bytes,
            nodes,
        };
        check_gl(&renderer.gl, "pool renderer set-up")?;
        Ok(renderer)
    }

    /// The GL context.
    pub fn gl(&self) -> &Rc<glow::Context> {
        &self.gl
    }

    /// How pass times are measured.
    pub fn clock(&self) -> PassClock {
        self.clock
    }

    /// Nodes per side of the surface texture.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Says which nodes are land (`fixed(k)`: node k = j·nodes + i is fixed; row j = nodes
    /// with z = j·h), for a surface texture written by [`Self::upload_surface`] or through
    /// interop; told nothing, the renderer draws no land. Tell it again when they change,
    /// naming the box of nodes that changed (`within`; `None`: any): only those are read, and
    /// the land texture (`land.rs`) is computed again only within [`LAND_REACH`] of them.
    pub fn set_land(&mut self, fixed: impl Fn(usize) -> bool, within: Option<NodeBox>) {
        self.note_land(fixed, within);
    }

    /// Counts the far taps by `cells` from the next frame on ([`TapCells`]: the grid's only for
    /// a measurement; a renderer counts the drawn mesh's).
    pub fn count_far_taps_by(&mut self, cells: TapCells) -> Result<()> {
        self.programs.surface.count_taps_by(&self.gl, cells)?;
        check_gl(&self.gl, "the far taps' program")
    }

    /// The build of the `surface` pass's program the last frame drew with (before the first
    /// frame: the one without land or far taps).
    pub fn surface_variant(&self) -> SurfaceVariant {
        self.programs.surface.variant()
    }

    /// The builds of the `surface` pass's program made so far, in the order they were (those
    /// with land on the first frame with land; none is made twice), each with whose cells its
    /// far taps count (`None`: built without far taps; [`Self::count_far_taps_by`]).
    pub fn surface_variants_built(&self) -> Vec<(SurfaceVariant, Option<TapCells>)> {
        self.programs.surface.built()
    }

    /// The uniforms [`Self::surface_variant`]'s program uses (those its compiler kept).
    pub fn surface_uniforms(&self) -> Vec<String> {
        self.programs.surface.active_uniforms(&self.gl)
    }

    /// Draws `surface` from the next frame on with its build with land (`Some(true)`; without
    /// land that build's search returns at once, as the one program did before the builds
    /// without land) or without (`Some(false)`: no rock under the water), whatever the land;
    /// `None`: the build for the land there is, what a renderer draws with. Only for tests and
    /// measurements.
    pub fn draw_surface_with_land(&mut self, land: Option<bool>) {
        self.surface_land = land;
    }

    /// Looks the caustics up at most `lookups` times along a pixel's footprint from the next
    /// frame on (1 to [`CAUSTIC_LOOKUPS`], clamped; 1 is the single isotropic lookup: only for
    /// tests and measurements, a renderer takes [`CAUSTIC_LOOKUPS`]).
    pub fn look_caustics_up_at_most(&mut self, lookups: u32) {
        self.caustic_lookups = lookups.clamp(1, CAUSTIC_LOOKUPS);
    }

    /// The caustics texture (R32F, mipmapped).
    pub fn caustics_texture(&self) -> glow::Texture {
        self.caustics.texture()
    }

    /// The surface texture (RGBA32F, nodes × nodes), for CUDA interop.
    pub fn surface_texture(&self) -> glow::Texture {
        self.surface
    }

    /// Uploads the surface's texels (row j = nodes with z = j·h), noting which nodes are land
    /// from them (without land the `land` pass is left out and rays look for none; the land
    /// texture is computed again where they changed). Every flag is compared: a caller that
    /// knows which changed uploads with [`Self::upload_surface`] and tells [`Self::set_land`].
    pub fn upload(&mut self, texels: &[[f32; 4]]) {
        let all = [[0, 0], [self.nodes - 1, self.nodes - 1]];
        self.note_land(|k| texels[k][3] > 0.5, Some(all));
        self.upload_surface(texels);
    }

    /// Uploads the surface's texels (row j = nodes with z = j·h); the land's nodes are
    /// [`Self::set_land`]'s.
    pub fn upload_surface(&mut self, texels: &[[f32; 4]]) {
        let gl = &self.gl;
        // SAFETY: GL calls on the current context; the texture holds nodes² RGBA32F texels
        // and `texels` as many.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.surface));
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                self.nodes as i32,
                self.nodes as i32,
                glow::RGBA,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(bytemuck::cast_slice(texels)),
            );
        }
    }

    /// The caustics texture of the last frame drawn, read back.
    pub fn caustics(&self) -> Result<CausticsImage> {
        let image = self.caustics.read(&self.gl);
        check_gl(&self.gl, "caustics read-back")?;
        Ok(image)
    }

    /// Seconds of each pass of the latest measured frame, by pass name, in the order they ran.
    pub fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        self.timer.latest()
    }

    /// Deletes the GL objects (the context is current).
    pub fn delete(mut self) {
        let gl = Rc::clone(&self.gl);
        self.timer.delete(&gl);
        self.grid.delete(&gl);
        if let Some(display) = &self.display {
            display.delete(&gl);
        }
        self.caustics.delete(&gl);
        if let Some(land) = self.land_texture.take() {
            land.delete(&gl);
        }
        if let Some((pool_box, _)) = &self.pool_box {
            pool_box.delete(&gl);
        }
        let p = &self.programs;
        p.pool.delete(&gl);
        p.land.delete(&gl);
        p.surface.delete(&gl);
        p.height.delete(&gl);
        p.caustics_view.delete(&gl);
        self.sky.delete(&gl);
        self.present.delete(&gl);
        self.fullscreen.delete(&gl);
        if let Some(frame) = &self.frame {
            frame.delete(&gl);
        }
        // SAFETY: GL call on the current context; the texture is this renderer's.
        unsafe { gl.delete_texture(self.surface) };
    }
}
