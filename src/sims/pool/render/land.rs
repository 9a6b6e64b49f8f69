//! The land texture: per node the land's height and how far inland it is (`land_search.glsl`
//! `land_ground` and `inland_at` read it, one texel a node), computed here on the host when the
//! land changes — its nodes (an upload's flags, or the solver's under interop), its height or
//! the pool's depth — not every frame. The shaders used to compute both from the surface
//! texture's flags at every look-up: `land_normal` 16 heights of 5–6 texel fetches each, for
//! every pixel of a scene with land (docs/pool-performance.md).

use super::land_tiles::{land_tile_bytes, land_tiles_in, land_tiles_side, tiles_reached};
use super::PoolRenderer;
use crate::gfx::targets::new_texture;
use anyhow::Result;
use glam::Vec4;
use glow::HasContext;

/// How far apart the nodes [`land_texels`] averages over lie, nodes.
const REACH: usize = 3;

/// How far a node's flag reaches in the land texture, nodes: the texels that can change when
/// a node's flag does lie within this many nodes of it along each axis.
pub const LAND_REACH: usize = REACH;

/// A box of nodes: its least and greatest (i, j), inclusive.
pub type NodeBox = [[usize; 2]; 2];

/// The land texture's texels for the nodes `fixed` (row j = nodes with z = j·h, `nodes` a
/// side): per node (its height, m; how far inland it is). How far inland: the share of land
/// among the node and the four nodes [`REACH`] away along the axes (past the edge the edge
/// node). The height: on land rising from a quarter of `land_height` at the shore to all of it
/// inland, `land_height`·(0.25 + 0.75·inland); at the water's nodes the floor, −`depth`, so the
/// land's sides fall from the shore to the floor within a cell (the `land` pass draws these
/// heights). f32 arithmetic in the shaders' order, so that the texels are the values the
/// shaders computed before (tests/pool_glsl.rs compares them at every node).
pub fn land_texels(fixed: &[bool], nodes: usize, land_height: f32, depth: f32) -> Vec<[f32; 2]> {
    let all = [[0, 0], [nodes - 1, nodes - 1]];
    land_texels_in(fixed, nodes, all, land_height, depth)
}

/// [`land_texels`] of the nodes in `within` only, row by row.
pub fn land_texels_in(
    fixed: &[bool],
    nodes: usize,
    within: NodeBox,
    land_height: f32,
    depth: f32,
) -> Vec<[f32; 2]> {
    assert_eq!(fixed.len(), nodes * nodes, "one flag a node");
    let land = |i: usize, j: usize| if fixed[j * nodes + i] { 1.0f32 } else { 0.0 };
    let last = nodes - 1;
    let [low, high] = within;
    (low[1]..=high[1])
        .flat_map(|j| (low[0]..=high[0]).map(move |i| (i, j)))
        .map(|(i, j)| {
            let mut sum = land(i, j);
            sum += land((i + REACH).min(last), j);
            sum += land(i.saturating_sub(REACH), j);
            sum += land(i, (j + REACH).min(last));
            sum += land(i, j.saturating_sub(REACH));
            let inland = sum / 5.0;
            let height = if fixed[j * nodes + i] {
                land_height * (0.25 + 0.75 * inland)
            } else {
                -depth
            };
            [height, inland]
        })
        .collect()
}

/// The nodes `fixed`' (`nodes` a side) least and greatest (i, j), a node wider each side:
/// `land_along` searches rays only over them; all the grid where no node is land.
pub fn land_bounds(fixed: &[bool], nodes: usize) -> Vec4 {
    let (mut low, mut high) = ([nodes, nodes], [0, 0]);
    for (k, _) in fixed.iter().enumerate().filter(|(_, &f)| f) {
        let ij = [k % nodes, k / nodes];
        for a in 0..2 {
            low[a] = low[a].min(ij[a]);
            high[a] = high[a].max(ij[a]);
        }
    }
    let f = |v: usize| v as f32;
    if low[0] > high[0] {
        return Vec4::new(-1.0, -1.0, f(nodes), f(nodes));
    }
    Vec4::new(
        f(low[0]) - 1.0,
        f(low[1]) - 1.0,
        f(high[0]) + 1.0,
        f(high[1]) + 1.0,
    )
}

/// The land texture, the land tiles' (`land_tiles.rs`) and what their texels were computed for.
pub(super) struct LandTexture {
    texture: glow::Texture,
    tiles: glow::Texture,
    /// (land height, depth) of its texels; `None`: the land's nodes were all noted again since.
    made_for: Option<(f32, f32)>,
    /// Whether the tiles are of the land's nodes as last noted, but for `land_dirty`'s (false
    /// when they were all noted again): the tiles depend on the nodes' flags only, not on the
    /// land's height or the depth.
    tiles_current: bool,
}

impl LandTexture {
    /// Bytes of a land texture for `nodes`² nodes (RG32F).
    pub(super) fn bytes(nodes: usize) -> u64 {
        (nodes * nodes * 2 * std::mem::size_of::<f32>()) as u64
    }

    /// Bytes of the land tiles' texture for `nodes`² nodes (R8, a tile a texel).
    pub(super) fn tile_bytes(nodes: usize) -> u64 {
        land_tile_bytes(nodes)
    }

    /// A land texture and a land tiles' texture for `nodes`² nodes, their texels not yet
    /// written.
    ///
    /// # Safety
    /// GL calls on the current context.
    pub(super) unsafe fn allocate(
        gl: &glow::Context,
        nodes: usize,
    ) -> Result<(glow::Texture, glow::Texture)> {
        Self::allocate_sized(gl, nodes as i32, land_tiles_side(nodes) as i32)
    }

    /// The two textures, `n`² land and `side`² tiles; the first deleted should the second fail.
    ///
    /// # Safety
    /// As [`Self::allocate`].
    pub(super) unsafe fn allocate_sized(
        gl: &glow::Context,
        n: i32,
        side: i32,
    ) -> Result<(glow::Texture, glow::Texture)> {
        let texture = new_texture(gl, n, n, glow::RG32F, glow::RG, glow::FLOAT)?;
        match new_texture(gl, side, side, glow::R8, glow::RED, glow::UNSIGNED_BYTE) {
            Ok(tiles) => Ok((texture, tiles)),
            Err(error) => {
                gl.delete_texture(texture);
                Err(error)
            }
        }
    }

    pub(super) fn texture(&self) -> glow::Texture {
        self.texture
    }

    pub(super) fn tiles(&self) -> glow::Texture {
        self.tiles
    }

    pub(super) fn delete(self, gl: &glow::Context) {
        // SAFETY: GL calls on the current context; the textures are this renderer's.
        unsafe {
            gl.delete_texture(self.texture);
            gl.delete_texture(self.tiles);
        }
    }
}

impl PoolRenderer {
    /// Notes which nodes are land (`fixed(k)`, k = j·nodes + i), looking only at the nodes in
    /// `within` (`None`: all of them; the others are as last noted): the land texture is
    /// computed again before the next frame where the nodes that changed reach.
    pub(super) fn note_land(&mut self, fixed: impl Fn(usize) -> bool, within: Option<NodeBox>) {
        let n = self.nodes;
        let within = match within {
            Some(within) if self.land_nodes.len() == n * n => within,
            _ => {
                self.land_nodes = vec![false; n * n];
                self.land_count = 0;
                self.land_dirty = None;
                self.land_bounds = land_bounds(&self.land_nodes, n);
                if let Some(texture) = &mut self.land_texture {
                    texture.made_for = None;
                    texture.tiles_current = false;
                }
                [[0, 0], [n - 1, n - 1]]
            }
        };
        let [low, high] = within;
        let mut rescan = false;
        for j in low[1]..=high[1].min(n - 1) {
            for i in low[0]..=high[0].min(n - 1) {
                let k = j * n + i;
                let flag = fixed(k);
                if self.land_nodes[k] == flag {
                    continue;
                }
                self.land_nodes[k] = flag;
                let bounds = self.land_bounds;
                if flag {
                    self.land_count += 1;
                    let (x, z) = (i as f32, j as f32);
                    self.land_bounds = if self.land_count == 1 {
                        glam::Vec4::new(x - 1.0, z - 1.0, x + 1.0, z + 1.0)
                    } else {
                        glam::Vec4::new(
                            bounds.x.min(x - 1.0),
                            bounds.y.min(z - 1.0),
                            bounds.z.max(x + 1.0),
                            bounds.w.max(z + 1.0),
                        )
                    };
                } else {
                    self.land_count -= 1;
                    // Only a node on the box's edge can move it.
                    let (x, z) = (i as f32, j as f32);
                    rescan |= x - 1.0 <= bounds.x
                        || z - 1.0 <= bounds.y
                        || x + 1.0 >= bounds.z
                        || z + 1.0 >= bounds.w;
                }
                let dirty = self.land_dirty.get_or_insert([[i, j], [i, j]]);
                dirty[0] = [dirty[0][0].min(i), dirty[0][1].min(j)];
                dirty[1] = [dirty[1][0].max(i), dirty[1][1].max(j)];
            }
        }
        if rescan {
            self.land_bounds = land_bounds(&self.land_nodes, n);
        }
        self.has_land = self.land_count > 0;
    }

    /// Bytes of the host's copy of which nodes are land (`memory::LAND_NODE_BYTES` a node once
    /// told).
    pub fn land_nodes_bytes(&self) -> u64 {
        self.land_nodes.capacity() as u64
    }

    /// Texels of the land texture computed at its last update (all nodes when it was made or
    /// the land's height or the depth changed; else the nodes within [`LAND_REACH`] of those
    /// that changed).
    pub fn land_texels_computed(&self) -> usize {
        self.land_texels_computed
    }

    /// Land tiles computed at the land texture's last update (all of them when it was made or
    /// all the nodes were noted again; else those within `LAND_TILE_REACH − 1` tiles of those
    /// holding a node that changed; none when only the land's height or the depth changed).
    pub fn land_tiles_computed(&self) -> usize {
        self.land_tiles_computed
    }

    /// Computes the land texture again where the land's nodes (within [`LAND_REACH`] of those
    /// that changed), `land_height` or `depth` changed since it was last, and the land tiles
    /// where the nodes changed (within `LAND_TILE_REACH − 1` tiles of the tiles holding them);
    /// both made on the first frame with land, deleted when no node is land.
    pub(super) fn update_land_texture(&mut self, land_height: f32, depth: f32) -> Result<()> {
        self.land_texels_computed = 0;
        self.land_tiles_computed = 0;
        if !self.has_land || self.land_nodes.len() != self.nodes * self.nodes {
            if let Some(texture) = self.land_texture.take() {
                texture.delete(&self.gl);
            }
            return Ok(());
        }
        let n = self.nodes;
        let all = [[0, 0], [n - 1, n - 1]];
        let wanted = Some((land_height, depth));
        let dirty = self.land_dirty.take();
        let grown = |[low, high]: NodeBox| {
            [
                [low[0].saturating_sub(REACH), low[1].saturating_sub(REACH)],
                [(high[0] + REACH).min(n - 1), (high[1] + REACH).min(n - 1)],
            ]
        };
        // The texels to compute: all of them for a new texture or new heights, else those the
        // changed nodes reach; the tiles: all of them for a new texture or nodes all noted
        // again, else those the changed nodes reach (the heights do not change them).
        let (texels, tiles) = match &self.land_texture {
            None => (Some(all), Some(all_tiles(n))),
            Some(texture) => (
                if texture.made_for != wanted {
                    Some(all)
                } else {
                    dirty.map(grown)
                },
                if !texture.tiles_current {
                    Some(all_tiles(n))
                } else {
                    dirty.map(|changed| tiles_reached(changed, n))
                },
            ),
        };
        if texels.is_none() && tiles.is_none() {
            return Ok(());
        }
        let gl = &self.gl;
        // SAFETY: GL calls on the current context; the textures are this renderer's and hold
        // nodes² RG32F texels and side² R8 texels.
        let (texture, tile_texture) = unsafe {
            match &self.land_texture {
                Some(texture) => (texture.texture, texture.tiles),
                None => LandTexture::allocate(gl, n)?,
            }
        };
        self.land_texture = Some(LandTexture {
            texture,
            tiles: tile_texture,
            made_for: wanted,
            tiles_current: true,
        });
        // The texels in bands of rows of at most BAND texels, so that the host holds no whole
        // copy (128 MiB at 4096²).
        const BAND: usize = 1 << 16;
        let upload =
            |texture: glow::Texture, band: NodeBox, format: u32, kind: u32, data: &[u8]| {
                let [low, high] = band;
                // SAFETY: GL calls on the current context; `data` holds the box `band`'s texels,
                // row by row, within the texture, unpacked a byte aligned (then the default again).
                unsafe {
                    gl.bind_texture(glow::TEXTURE_2D, Some(texture));
                    gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
                    gl.tex_sub_image_2d(
                        glow::TEXTURE_2D,
                        0,
                        low[0] as i32,
                        low[1] as i32,
                        (high[0] - low[0] + 1) as i32,
                        (high[1] - low[1] + 1) as i32,
                        format,
                        kind,
                        glow::PixelUnpackData::Slice(data),
                    );
                    gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 4);
                    gl.bind_texture(glow::TEXTURE_2D, None);
                }
            };
        for band in texels.into_iter().flat_map(|texels| bands(texels, BAND)) {
            let part = land_texels_in(&self.land_nodes, n, band, land_height, depth);
            self.land_texels_computed += part.len();
            upload(
                texture,
                band,
                glow::RG,
                glow::FLOAT,
                bytemuck::cast_slice(&part),
            );
        }
        // The tiles in one call (a byte a tile: 16 MiB at 8192², beside the nodes' flags): the
        // distances are swept over the box grown by the reach, which bands would read again.
        if let Some(tiles) = tiles {
            let part = land_tiles_in(&self.land_nodes, n, tiles);
            self.land_tiles_computed += part.len();
            upload(tile_texture, tiles, glow::RED, glow::UNSIGNED_BYTE, &part);
        }
        Ok(())
    }
}

/// All the land tiles of a grid of `n`² nodes.
fn all_tiles(n: usize) -> NodeBox {
    let last = land_tiles_side(n) - 1;
    [[0, 0], [last, last]]
}

/// `within` cut into bands of whole rows of at most `most` texels (at least a row each).
fn bands(within: NodeBox, most: usize) -> impl Iterator<Item = NodeBox> {
    let [low, high] = within;
    let rows = (most / (high[0] - low[0] + 1)).max(1);
    (low[1]..=high[1])
        .step_by(rows)
        .map(move |first| [[low[0], first], [high[0], (first + rows - 1).min(high[1])]])
}

#[cfg(test)]
mod tests {
    use super::{land_texels, land_texels_in, REACH};

    /// A node's flag changes only texels within [`REACH`] of it: the texels of a grid with one
    /// node changed are the old ones with its box grown by `REACH` computed again (what the
    /// renderer uploads), at every node — for nodes inside, on an edge and in a corner.
    #[test]
    fn a_changed_node_changes_only_the_texels_within_reach() {
        let n = 20;
        let fixed: Vec<bool> = (0..n * n).map(|k| (k * 7919) % 5 < 2).collect();
        let old = land_texels(&fixed, n, 0.3, 0.8);
        for (i, j) in [(9, 11), (0, 4), (19, 19), (2, 0), (17, 1)] {
            let mut painted = fixed.clone();
            painted[j * n + i] ^= true;
            let fresh = land_texels(&painted, n, 0.3, 0.8);
            let low = [i.saturating_sub(REACH), j.saturating_sub(REACH)];
            let high = [(i + REACH).min(n - 1), (j + REACH).min(n - 1)];
            let part = land_texels_in(&painted, n, [low, high], 0.3, 0.8);
            let mut patched = old.clone();
            let width = high[0] - low[0] + 1;
            for (k, texel) in part.iter().enumerate() {
                patched[(low[1] + k / width) * n + low[0] + k % width] = *texel;
            }
            assert_eq!(patched, fresh, "node ({i}, {j}) changed");
        }
    }

    /// A node's inland share counts itself and the nodes three away (past the edge the edge
    /// node); its height rises from a quarter of the land's height at the shore.
    #[test]
    fn the_land_rises_inland_from_the_shore() {
        let n = 8;
        // Land from column 2 on.
        let fixed: Vec<bool> = (0..n * n).map(|k| k % n >= 2).collect();
        let texels = land_texels(&fixed, n, 1.0, 0.5);
        let at = |i: usize, j: usize| texels[j * n + i];
        // Column 2: itself, the node 3 right, and (0, ±3) along the column: 4 of 5.
        assert_eq!(at(2, 4), [0.25 + 0.75 * 0.8, 0.8]);
        // Column 6: all five (6 − 3 = 3 and 6 + 3 clamped to 7).
        assert_eq!(at(6, 4), [1.0, 1.0]);
        // Column 1 is water: the floor; its share counts land at 4 and at its row's.
        assert_eq!(at(1, 4), [-0.5, 0.2]);
    }
}
