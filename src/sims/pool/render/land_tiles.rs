//! The land tiles: which squares of [`LAND_TILE`]² cells hold land, one texel a tile (R8: 255
//! where any of its nodes, edges included, is land, else 0), so that `common.glsl`'s
//! `land_along` looks for land only over the tiles that hold some (the flag, bilinear between
//! a cell's four nodes, is 0 over a tile whose nodes are all water). Made and updated with the
//! land texture (`land.rs`): a changed node changes only the tiles whose edges hold it (one,
//! two on a tile's edge, four on a corner).

use super::land::NodeBox;

/// Cells a side of a land tile.
pub const LAND_TILE: usize = 8;

/// Land tiles a side for `nodes` a side: enough to cover its `nodes − 1` cells.
pub fn land_tiles_side(nodes: usize) -> usize {
    (nodes.max(2) - 1).div_ceil(LAND_TILE)
}

/// Bytes of the land tiles' texture for `nodes` a side (R8, a byte a tile).
pub fn land_tile_bytes(nodes: usize) -> u64 {
    let side = land_tiles_side(nodes) as u64;
    side * side
}

/// The tiles (least and greatest (a, b), inclusive) whose nodes include any of `nodes_box`'s:
/// tile a holds the nodes a·T to (a + 1)·T, so a node on a tile's edge is in both tiles there.
pub fn tiles_holding(nodes_box: NodeBox, nodes: usize) -> NodeBox {
    let last = land_tiles_side(nodes) - 1;
    let [low, high] = nodes_box;
    let down = |i: usize| (i.saturating_sub(1) / LAND_TILE).min(last);
    let up = |i: usize| (i / LAND_TILE).min(last);
    [[down(low[0]), down(low[1])], [up(high[0]), up(high[1])]]
}

/// The land tiles' texels of the tiles in `within` (row by row) for the nodes `fixed` (`nodes`
/// a side, row j = nodes with z = j·h): 255 where any node of the tile, its edges included, is
/// land.
pub fn land_tiles_in(fixed: &[bool], nodes: usize, within: NodeBox) -> Vec<u8> {
    assert_eq!(fixed.len(), nodes * nodes, "one flag a node");
    let [low, high] = within;
    let span = |a: usize| a * LAND_TILE..=((a + 1) * LAND_TILE).min(nodes - 1);
    (low[1]..=high[1])
        .flat_map(|b| (low[0]..=high[0]).map(move |a| (a, b)))
        .map(|(a, b)| {
            let land = span(b).any(|j| span(a).any(|i| fixed[j * nodes + i]));
            if land {
                255
            } else {
                0
            }
        })
        .collect()
}

/// [`land_tiles_in`] of all the tiles.
pub fn land_tiles(fixed: &[bool], nodes: usize) -> Vec<u8> {
    let last = land_tiles_side(nodes) - 1;
    land_tiles_in(fixed, nodes, [[0, 0], [last, last]])
}

#[cfg(test)]
mod tests {
    use super::{land_tiles, land_tiles_side, tiles_holding, LAND_TILE};

    /// A tile is set exactly where the flag, bilinear between the nodes, can be over 0 on it:
    /// for every single land node of a 42² grid (6 tiles a side, the last 1 cell short), the
    /// set tiles are those whose square of cells the node's reach (the cells that have it as a
    /// corner) overlaps, and `tiles_holding` names them.
    #[test]
    fn a_tile_is_set_where_its_cells_have_a_land_corner() {
        let n = 42;
        let side = land_tiles_side(n);
        assert_eq!(side, 6);
        for (i, j) in [(0, 0), (5, 3), (8, 8), (16, 9), (40, 41), (41, 41), (24, 0)] {
            let mut fixed = vec![false; n * n];
            fixed[j * n + i] = true;
            let tiles = land_tiles(&fixed, n);
            for b in 0..side {
                for a in 0..side {
                    // The cells with node (i, j) as a corner: [i − 1, i] × [j − 1, j], within
                    // the grid; tile (a, b): cells a·T to a·T + T − 1.
                    let overlaps = |t: usize, k: usize| {
                        let cells = t * LAND_TILE..(t + 1) * LAND_TILE;
                        (k.saturating_sub(1)..=k.min(n - 2)).any(|c| cells.contains(&c))
                    };
                    let want = overlaps(a, i) && overlaps(b, j);
                    assert_eq!(
                        tiles[b * side + a] == 255,
                        want,
                        "node ({i}, {j}), tile ({a}, {b})"
                    );
                    let [low, high] = tiles_holding([[i, j], [i, j]], n);
                    let named = (low[0]..=high[0]).contains(&a) && (low[1]..=high[1]).contains(&b);
                    assert_eq!(
                        named, want,
                        "tiles_holding node ({i}, {j}), tile ({a}, {b})"
                    );
                }
            }
        }
    }
}
