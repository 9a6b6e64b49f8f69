//! The land tiles: squares of [`LAND_TILE`]² cells, one texel a tile (R8), each holding how
//! many tiles away the nearest tile with land is (Chebyshev, in tiles: 0 on a tile any of whose
//! nodes, edges included, is land; at most [`LAND_TILE_REACH`]), so that `land_search.glsl`'s
//! `land_along` jumps over the tiles without land (the flag, bilinear between a cell's four
//! nodes, is 0 over such a tile), k − 1 tiles each way from a tile k away, and walks the cells
//! of those with land. Made and updated with the land texture (`land.rs`) when the land's nodes
//! change (not its height or the depth): a changed node changes only the tiles within
//! `LAND_TILE_REACH − 1` of those whose edges hold it.

use super::land::NodeBox;

/// Cells a side of a land tile.
pub const LAND_TILE: usize = 2;

/// The most tiles a land tile's texel counts to the nearest tile with land: a tile further
/// holds this, and the search jumps `LAND_TILE_REACH − 1` tiles from it.
pub const LAND_TILE_REACH: usize = 32;

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

/// The tiles whose texels can change when the nodes in `nodes_box` do: those holding them
/// ([`tiles_holding`]) and the tiles within `LAND_TILE_REACH − 1` of those.
pub fn tiles_reached(nodes_box: NodeBox, nodes: usize) -> NodeBox {
    grow(tiles_holding(nodes_box, nodes), LAND_TILE_REACH - 1, nodes)
}

/// `tiles` grown by `by` tiles each side, within the grid's tiles.
fn grow(tiles: NodeBox, by: usize, nodes: usize) -> NodeBox {
    let last = land_tiles_side(nodes) - 1;
    let [low, high] = tiles;
    [
        [low[0].saturating_sub(by), low[1].saturating_sub(by)],
        [(high[0] + by).min(last), (high[1] + by).min(last)],
    ]
}

/// The land tiles' texels of the tiles in `within` (row by row) for the nodes `fixed` (`nodes`
/// a side, row j = nodes with z = j·h): how many tiles away (the greater of the two axes') the
/// nearest tile with land is, 0 on one (any of its nodes, its edges included, is land), at most
/// [`LAND_TILE_REACH`]. Reads the flags of the tiles within `LAND_TILE_REACH − 1` of `within`
/// and computes the distances over that box in two sweeps of the 3×3 neighbours (forward: the
/// four already visited, + 1; backward: the other four), exact for this distance in a box and
/// linear: a few operations a tile.
pub fn land_tiles_in(fixed: &[bool], nodes: usize, within: NodeBox) -> Vec<u8> {
    assert_eq!(fixed.len(), nodes * nodes, "one flag a node");
    let [low, high] = within;
    // The tiles whose flags are read: `within` grown by the reach − 1 (land further is at
    // least the cap away).
    let [flow, fhigh] = grow(within, LAND_TILE_REACH - 1, nodes);
    let (width, height) = (fhigh[0] - flow[0] + 1, fhigh[1] - flow[1] + 1);
    let far = LAND_TILE_REACH as u8;
    let span = |a: usize| a * LAND_TILE..=((a + 1) * LAND_TILE).min(nodes - 1);
    let mut distance: Vec<u8> = (flow[1]..=fhigh[1])
        .flat_map(|b| (flow[0]..=fhigh[0]).map(move |a| (a, b)))
        .map(|(a, b)| {
            let land = span(b).any(|j| fixed[j * nodes..][span(a)].iter().any(|&f| f));
            if land {
                0
            } else {
                far
            }
        })
        .collect();
    let step = |d: u8| d.saturating_add(1).min(far);
    // Forward: the left neighbour and the three above.
    for y in 0..height {
        for x in 0..width {
            let mut d = distance[y * width + x];
            if x > 0 {
                d = d.min(step(distance[y * width + x - 1]));
            }
            if y > 0 {
                let above = &distance[(y - 1) * width..][..width];
                d = d.min(step(above[x]));
                if x > 0 {
                    d = d.min(step(above[x - 1]));
                }
                if x + 1 < width {
                    d = d.min(step(above[x + 1]));
                }
            }
            distance[y * width + x] = d;
        }
    }
    // Backward: the right neighbour and the three below.
    for y in (0..height).rev() {
        for x in (0..width).rev() {
            let mut d = distance[y * width + x];
            if x + 1 < width {
                d = d.min(step(distance[y * width + x + 1]));
            }
            if y + 1 < height {
                let below = &distance[(y + 1) * width..][..width];
                d = d.min(step(below[x]));
                if x > 0 {
                    d = d.min(step(below[x - 1]));
                }
                if x + 1 < width {
                    d = d.min(step(below[x + 1]));
                }
            }
            distance[y * width + x] = d;
        }
    }
    (low[1]..=high[1])
        .flat_map(|b| {
            let row = (b - flow[1]) * width + low[0] - flow[0];
            distance[row..][..high[0] - low[0] + 1].to_vec()
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
    use super::{
        land_tiles, land_tiles_in, land_tiles_side, tiles_holding, tiles_reached, LAND_TILE,
        LAND_TILE_REACH,
    };

    /// A tile is 0 (land) exactly where the flag, bilinear between the nodes, can be over 0 on it:
    /// for every single land node of a 42² grid (21 tiles a side, the last 1 cell short), the
    /// land tiles are those whose square of cells the node's reach (the cells that have it as a
    /// corner) overlaps, and `tiles_holding` names them.
    #[test]
    fn a_tile_is_set_where_its_cells_have_a_land_corner() {
        let n = 42;
        let side = land_tiles_side(n);
        assert_eq!(side, 41usize.div_ceil(LAND_TILE));
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
                        tiles[b * side + a] == 0,
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

    /// Each tile holds how many tiles away the nearest tile with land is, the greater of the two
    /// axes' (capped at `LAND_TILE_REACH`): on a 201² grid (100² tiles) with a few islands, the
    /// texels are a brute-force search's over all the land tiles. A node changed changes only
    /// the tiles `tiles_reached` names: the old texels with those computed again are a fresh
    /// start's, for nodes inside, on a tile's edge and corner and in the grid's corners.
    #[test]
    fn a_tile_holds_its_distance_to_land_and_a_change_reaches_only_tiles_reached() {
        let n = 201;
        let side = land_tiles_side(n);
        let islands = |i: usize, j: usize| {
            (i as i64 - 60).pow(2) + (j as i64 - 70).pow(2) < 25
                || (i == 150 && (20..30).contains(&j))
                || (i, j) == (199, 3)
        };
        let fixed: Vec<bool> = (0..n * n).map(|k| islands(k % n, k / n)).collect();
        let brute = |fixed: &[bool]| -> Vec<u8> {
            let holds = land_tiles_in(fixed, n, [[0, 0], [side - 1, side - 1]])
                .iter()
                .map(|&t| t == 0)
                .collect::<Vec<_>>();
            (0..side * side)
                .map(|k| {
                    let (a, b) = (k % side, k / side);
                    (0..side * side)
                        .filter(|&q| holds[q])
                        .map(|q| (q % side).abs_diff(a).max((q / side).abs_diff(b)))
                        .min()
                        .unwrap_or(LAND_TILE_REACH)
                        .min(LAND_TILE_REACH) as u8
                })
                .collect()
        };
        let old = land_tiles(&fixed, n);
        assert_eq!(old, brute(&fixed), "distances");
        assert!(old.contains(&3) && old.contains(&(LAND_TILE_REACH as u8)));
        for (i, j) in [(100, 100), (96, 40), (8, 8), (0, 0), (200, 200), (60, 70)] {
            let mut changed = fixed.clone();
            changed[j * n + i] ^= true;
            let fresh = land_tiles(&changed, n);
            let [low, high] = tiles_reached([[i, j], [i, j]], n);
            let part = land_tiles_in(&changed, n, [low, high]);
            let mut patched = old.clone();
            let width = high[0] - low[0] + 1;
            for (k, texel) in part.iter().enumerate() {
                patched[(low[1] + k / width) * side + low[0] + k % width] = *texel;
            }
            assert_eq!(patched, fresh, "node ({i}, {j}) changed");
            assert_eq!(fresh, brute(&changed), "node ({i}, {j}) changed: distances");
        }
    }
}
