//! The land texture: per node the land's height and how far inland it is (`common.glsl`
//! `land_ground` and `inland_at` read it, one texel a node), computed here on the host when the
//! land changes — its nodes (an upload's flags, or the solver's under interop), its height or
//! the pool's depth — not every frame. The shaders used to compute both from the surface
//! texture's flags at every look-up: `land_normal` 16 heights of 5–6 texel fetches each, for
//! every pixel of a scene with land (docs/pool-performance.md).

use super::PoolRenderer;
use anyhow::{anyhow, Result};
use glam::Vec4;
use glow::HasContext;

/// How far apart the nodes [`land_texels`] averages over lie, nodes.
const REACH: usize = 3;

/// The land texture's texels for the nodes `fixed` (row j = nodes with z = j·h, `nodes` a
/// side): per node (its height, m; how far inland it is). How far inland: the share of land
/// among the node and the four nodes [`REACH`] away along the axes (past the edge the edge
/// node). The height: on land rising from a quarter of `land_height` at the shore to all of it
/// inland, `land_height`·(0.25 + 0.75·inland); at the water's nodes the floor, −`depth`, so the
/// land's sides fall from the shore to the floor within a cell (the `land` pass draws these
/// heights). f32 arithmetic in the shaders' order, so that the texels are the values the
/// shaders computed before (tests/pool_glsl.rs compares them at every node).
pub fn land_texels(fixed: &[bool], nodes: usize, land_height: f32, depth: f32) -> Vec<[f32; 2]> {
    assert_eq!(fixed.len(), nodes * nodes, "one flag a node");
    let land = |i: usize, j: usize| if fixed[j * nodes + i] { 1.0f32 } else { 0.0 };
    let last = nodes - 1;
    (0..nodes * nodes)
        .map(|k| {
            let (i, j) = (k % nodes, k / nodes);
            let mut sum = land(i, j);
            sum += land((i + REACH).min(last), j);
            sum += land(i.saturating_sub(REACH), j);
            sum += land(i, (j + REACH).min(last));
            sum += land(i, j.saturating_sub(REACH));
            let inland = sum / 5.0;
            let height = if fixed[k] {
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

/// The land texture and what its texels were computed for.
pub(super) struct LandTexture {
    texture: glow::Texture,
    /// (land height, depth) of its texels; `None`: the land's nodes changed since.
    made_for: Option<(f32, f32)>,
}

impl LandTexture {
    /// Bytes of a land texture for `nodes`² nodes (RG32F).
    pub(super) fn bytes(nodes: usize) -> u64 {
        (nodes * nodes * 2 * std::mem::size_of::<f32>()) as u64
    }

    pub(super) fn texture(&self) -> glow::Texture {
        self.texture
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        // SAFETY: GL call on the current context; the texture is this renderer's.
        unsafe { gl.delete_texture(self.texture) };
    }
}

impl PoolRenderer {
    /// Notes which nodes are land (true: fixed), row by row; the land texture is computed again
    /// before the next frame if they changed.
    pub(super) fn note_land(&mut self, fixed: impl Iterator<Item = bool>) {
        let mut changed = false;
        let mut count = 0;
        for (k, flag) in fixed.enumerate() {
            match self.fixed.get_mut(k) {
                Some(old) if *old == flag => {}
                Some(old) => {
                    *old = flag;
                    changed = true;
                }
                None => {
                    self.fixed.push(flag);
                    changed = true;
                }
            }
            count = k + 1;
        }
        if count != self.fixed.len() {
            self.fixed.truncate(count);
            changed = true;
        }
        if changed {
            self.land = self.fixed.iter().any(|&f| f);
            self.land_bounds = land_bounds(&self.fixed, self.nodes);
            if let Some(texture) = &mut self.land_texture {
                texture.made_for = None;
            }
        }
    }

    /// Computes the land texture again where the land's nodes, `land_height` or `depth` changed
    /// since it was last (made on the first frame with land).
    pub(super) fn update_land_texture(&mut self, land_height: f32, depth: f32) -> Result<()> {
        if !self.land || self.fixed.len() != self.nodes * self.nodes {
            return Ok(());
        }
        let wanted = Some((land_height, depth));
        if self.land_texture.as_ref().map(|t| t.made_for) == Some(wanted) {
            return Ok(());
        }
        let texels = land_texels(&self.fixed, self.nodes, land_height, depth);
        let gl = &self.gl;
        let n = self.nodes as i32;
        // SAFETY: GL calls on the current context; the texture is this renderer's and holds
        // nodes² RG32F texels, `texels` as many.
        unsafe {
            let texture = match &self.land_texture {
                Some(texture) => texture.texture,
                None => {
                    let texture = gl.create_texture().map_err(|e| anyhow!("texture: {e}"))?;
                    gl.bind_texture(glow::TEXTURE_2D, Some(texture));
                    gl.tex_image_2d(
                        glow::TEXTURE_2D,
                        0,
                        glow::RG32F as i32,
                        n,
                        n,
                        0,
                        glow::RG,
                        glow::FLOAT,
                        None,
                    );
                    for (parameter, value) in [
                        (glow::TEXTURE_MIN_FILTER, glow::NEAREST),
                        (glow::TEXTURE_MAG_FILTER, glow::NEAREST),
                        (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
                        (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
                    ] {
                        gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, value as i32);
                    }
                    texture
                }
            };
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                n,
                n,
                glow::RG,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(bytemuck::cast_slice(&texels)),
            );
            gl.bind_texture(glow::TEXTURE_2D, None);
            self.land_texture = Some(LandTexture {
                texture,
                made_for: wanted,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::land_texels;

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
