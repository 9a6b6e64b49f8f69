//! The GL objects a [`PoolRenderer`] holds and their bytes (`memory::grid_bytes`'s GL figure),
//! and the texture limit that refuses a grid too large for the GL.

use super::land::LandTexture;
use super::{caustics, PoolRenderer};
use glow::HasContext;

/// The GL objects of [`PoolRenderer::allocated`] that grow with the grid.
pub const GRID_OBJECTS: [&str; 6] = [
    "surface texture",
    "land texture",
    "land tiles",
    "caustics mesh",
    "display mesh",
    "caustics texture",
];

/// Why `nodes`² nodes cannot be drawn with a GL whose textures are at most `limit` a side, if
/// they cannot.
pub fn texture_refusal(nodes: usize, limit: usize) -> Option<String> {
    (nodes > limit).then(|| {
        format!(
            "{nodes}² nodes need a {nodes}×{nodes} surface texture but this GL's textures are at \
             most {limit}×{limit} (GL_MAX_TEXTURE_SIZE)"
        )
    })
}

impl PoolRenderer {
    /// The largest texture `gl` makes, texels a side (`GL_MAX_TEXTURE_SIZE`): the most nodes a
    /// side the surface texture can hold; `None` where the query fails (0 or less: not known,
    /// which refused every grid as over "0×0").
    pub fn max_texture_size(gl: &glow::Context) -> Option<usize> {
        // SAFETY: a GL query on the current context.
        let limit = unsafe { gl.get_parameter_i32(glow::MAX_TEXTURE_SIZE) };
        usize::try_from(limit).ok().filter(|&limit| limit > 0)
    }

    /// [`PoolRenderer::max_texture_size`] of its context, as given when it was made.
    pub fn texture_limit(&self) -> Option<usize> {
        self.texture_limit
    }

    /// The GL objects this renderer holds, by name, each with its bytes as allocated (the
    /// sizes given to GL): the ones that grow with the grid ([`GRID_OBJECTS`]: the surface
    /// texture's level 0, the caustics mesh's index buffer, the display mesh's on grids over
    /// 513 nodes, the caustics texture with its mipmaps) and, once a frame is drawn, the pool's
    /// box (its vertex buffer), with land the land texture (RG32F, `land.rs`) and the land
    /// tiles (R8, a texel per 2² cells, `land_tiles.rs`: grid objects, which the model counts
    /// with land or without) and the frame (RGBA8 and a 24-bit depth
    /// buffer, 4 bytes a pixel each, at the output's size). Left out: the sky's cubemap
    /// (`gfx::skybox`, 6 × 128² RGBA8 a renderer), the programs and the full-screen triangle.
    pub fn allocated(&self) -> Vec<(&'static str, u64)> {
        let mut objects = vec![
            ("surface texture", self.surface_bytes),
            ("caustics mesh", self.grid.bytes()),
        ];
        if let Some(display) = &self.display {
            objects.push(("display mesh", display.bytes()));
        }
        // The size the caustics pass gave GL, not the model's (`caustics::texture_bytes`).
        let caustics = caustics::chain_bytes(self.caustics.resolution());
        objects.push(("caustics texture", caustics));
        if self.land_texture.is_some() {
            objects.push(("land texture", LandTexture::bytes(self.nodes)));
            objects.push(("land tiles", LandTexture::tile_bytes(self.nodes)));
        }
        if let Some((pool_box, _)) = &self.pool_box {
            objects.push(("pool box", pool_box.bytes));
        }
        if self.frame.is_some() {
            let (width, height) = self.frame_size;
            objects.push(("frame", 8 * u64::from(width) * u64::from(height)));
        }
        objects
    }

    /// Bytes of the GL objects that grow with the grid ([`GRID_OBJECTS`] of
    /// [`PoolRenderer::allocated`]), the drawing's GL figure of `memory::grid_bytes`.
    pub fn gl_bytes(&self) -> u64 {
        self.allocated()
            .iter()
            .filter(|(name, _)| GRID_OBJECTS.contains(name))
            .map(|(_, bytes)| bytes)
            .sum()
    }

    /// The meshes' index buffers' bytes as GL reports them (`GL_BUFFER_SIZE`), by the names
    /// of [`PoolRenderer::allocated`].
    pub fn reported_buffer_bytes(&self) -> Vec<(&'static str, u64)> {
        let mut buffers = vec![("caustics mesh", self.grid.reported_bytes(&self.gl))];
        if let Some(display) = &self.display {
            buffers.push(("display mesh", display.reported_bytes(&self.gl)));
        }
        buffers
    }
}
