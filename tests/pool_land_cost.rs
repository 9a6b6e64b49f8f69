//! What painting land costs the renderer on the host at 4096² (a measurement, ignored by
//! default; run with `cargo test --release --test pool_land_cost -- --ignored --nocapture`):
//! the land texture's texels computed again for the whole grid, as every brush move did
//! before, against only those within `LAND_REACH` of a brush stroke's nodes; the land tiles a
//! brush move computes again at 1024² and 4096²; the whole land tiles at 4096² and 8192².

use fluidlab::sims::pool::render::{
    land_bounds, land_texels, land_texels_in, land_tiles, land_tiles_in, land_tiles_side,
    tiles_reached, LAND_REACH, LAND_TILE,
};
use std::time::Instant;

/// The least of `runs` timings of `f`, ms.
fn least(runs: usize, mut f: impl FnMut() -> usize) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

/// The islands preset's disc island (centre (1.3, 1.1) m, radius 0.22 m) on a 2 m pool of
/// `n`² nodes and one brush move painted beside it: the nodes within the drops' radius (0.04 m)
/// of (0.6, 0.6) m. The flags and the brush's box of nodes (the box `take_land_change` names).
fn island_and_brush(n: usize) -> (Vec<bool>, [[usize; 2]; 2]) {
    let h = 2.0 / (n - 1) as f32;
    let mut fixed: Vec<bool> = (0..n * n)
        .map(|k| {
            let (x, z) = ((k % n) as f32 * h, (k / n) as f32 * h);
            (x - 1.3).powi(2) + (z - 1.1).powi(2) < 0.22 * 0.22
        })
        .collect();
    let (c, r) = ((0.6 / h) as usize, (0.04 / h).ceil() as usize);
    for j in c - r..=c + r {
        for i in c - r..=c + r {
            if (i.abs_diff(c).pow(2) + j.abs_diff(c).pow(2)) <= r * r {
                fixed[j * n + i] = true;
            }
        }
    }
    (fixed, [[c - r, c - r], [c + r, c + r]])
}

#[test]
#[ignore = "a measurement"]
fn painting_land_at_4096_costs_the_texels_it_reaches() {
    let n = 4096;
    let (fixed, stroke) = island_and_brush(n);
    let r = (stroke[1][0] - stroke[0][0]) / 2;
    let whole = least(5, || {
        land_texels(&fixed, n, 0.08, 0.8).len() + land_bounds(&fixed, n).x as usize
    });
    let [low, high] = stroke;
    let within = [
        [low[0] - LAND_REACH, low[1] - LAND_REACH],
        [high[0] + LAND_REACH, high[1] + LAND_REACH],
    ];
    let texels = (within[1][0] - within[0][0] + 1) * (within[1][1] - within[0][1] + 1);
    let part = least(5, || land_texels_in(&fixed, n, within, 0.08, 0.8).len());
    println!(
        "4096², one brush move ({} nodes a side): whole texture and bounds {whole:.1} ms \
         ({} texels); the stroke's box grown by {LAND_REACH} {part:.2} ms ({texels} texels)",
        2 * r + 1,
        n * n
    );
    assert!(texels < n * n / 100);
}

/// The whole land tiles' recompute (a new grid, a restart, land noted all again) at 4096² and
/// 8192² nodes with the islands preset's disc island: in one call (what the renderer does) and
/// in bands of 65,536 tiles (what it did before; each band reads its rows ± the reach).
#[test]
#[ignore = "a measurement"]
fn the_whole_land_tiles_at_4096_and_8192() {
    for n in [4096, 8192] {
        let h = 2.0 / (n - 1) as f32;
        let fixed: Vec<bool> = (0..n * n)
            .map(|k| {
                let (x, z) = ((k % n) as f32 * h, (k / n) as f32 * h);
                (x - 1.3).powi(2) + (z - 1.1).powi(2) < 0.22 * 0.22
            })
            .collect();
        let side = land_tiles_side(n);
        let whole = least(3, || land_tiles(&fixed, n).len());
        let rows = (1 << 16) / side;
        let banded = least(2, || {
            (0..side)
                .step_by(rows)
                .map(|first| {
                    let band = [[0, first], [side - 1, (first + rows - 1).min(side - 1)]];
                    land_tiles_in(&fixed, n, band).len()
                })
                .sum()
        });
        println!(
            "{n}² nodes ({side}² tiles): whole tiles in one call {whole:.0} ms, in bands of \
             {rows} rows {banded:.0} ms"
        );
    }
}

/// The land tiles one brush move computes again (`render/land.rs` `update_land_texture`: the
/// tiles within `LAND_TILE_REACH − 1` of those holding the brush's box of nodes, in one call)
/// at 1024² and 4096² nodes, beside the islands preset's disc island.
#[test]
#[ignore = "a measurement"]
fn painting_land_costs_the_tiles_it_reaches() {
    for n in [1024, 4096] {
        let (fixed, stroke) = island_and_brush(n);
        let [low, high] = tiles_reached(stroke, n);
        let tiles = (high[0] - low[0] + 1) * (high[1] - low[1] + 1);
        let ms = least(5, || land_tiles_in(&fixed, n, [low, high]).len());
        println!(
            "{n}², one brush move ({} nodes a side): {tiles} land tiles ({} a side, of \
             {LAND_TILE}² cells) computed in {ms:.2} ms",
            stroke[1][0] - stroke[0][0] + 1,
            high[0] - low[0] + 1
        );
        assert!(tiles < land_tiles_side(n).pow(2));
    }
}
