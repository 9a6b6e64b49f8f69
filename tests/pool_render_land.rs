//! The pool's land as it changes while a renderer runs (headless EGL, Mesa llvmpipe in CI):
//! land painted or erased live is drawn as a fresh start draws it, and a painted node
//! recomputes only the land texture's texels it reaches (`render/land.rs`) and the land tiles
//! that hold it (`render/land_tiles.rs`).

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::sims::pool::render::{land_tiles_side, DrawScene, LAND_REACH};
use glam::Vec3;

#[path = "support/pool_fixture.rs"]
mod pool_fixture;
use pool_fixture::*;

fn differing(a: &Image, b: &Image) -> usize {
    a.pixels().zip(b.pixels()).filter(|(a, b)| a != b).count()
}

/// Land painted while the renderer runs (an island added, then one erased, and the pool's depth
/// changed) is drawn as a renderer started with that land draws it, bit for bit: the land
/// texture and the land tiles (`land.rs`, `land_tiles.rs`: heights, tiles and bounds computed on
/// the host when the land changes, not every frame) follow each change. A mutant that keeps the
/// first frame's land texture draws 620 pixels apart from a fresh start's, one that keeps its
/// land tiles 427 (the island added lies on tiles without land: the rays under the water skip
/// it); the code before computed the land from the flags every frame and had nothing to keep: it
/// passes too.
#[test]
fn land_painted_live_is_drawn_as_a_fresh_start_draws_it() {
    let first = |x: f32, z: f32| (x - 0.6).powi(2) + (z - 0.7).powi(2) < 0.06;
    let second = |x: f32, z: f32| (x - 1.4).powi(2) + (z - 1.2).powi(2) < 0.04;
    let both = |x: f32, z: f32| first(x, z) || second(x, z);
    let camera = Camera {
        target: Vec3::new(1.0, -0.3, 1.0),
        yaw: 0.5,
        pitch: 0.6,
        distance: 3.0,
    };
    let waves = |x: f32, z: f32| 0.01 * (6.0 * x).sin() * (5.0 * z).cos();
    let light = [0.3, 1.0, 0.2];
    let deeper = DrawScene {
        depth: 0.6,
        ..scene(light)
    };
    let cases = [
        (&both as &dyn Fn(f32, f32) -> bool, scene(light)),
        (&second, scene(light)),
        (&second, deeper),
    ];
    // Each fresh start's picture first (one GL context at a time), then the live renderer's.
    let fresh: Vec<Image> = cases
        .iter()
        .map(|(land, drawn)| Fixture::new().render(&surface(waves, land), &camera, drawn))
        .collect();
    let mut live = Fixture::new();
    live.render(&surface(waves, first), &camera, &scene(light));
    for ((land, drawn), fresh) in cases.iter().zip(&fresh) {
        let painted = live.render(&surface(waves, land), &camera, drawn);
        let differing = differing(&painted, fresh);
        println!("land changed live: {differing} pixels apart from a fresh start's");
        assert_eq!(differing, 0, "pixels drawn apart from a fresh start's");
    }
}

/// Painting one node (told as `PoolSim` tells it: the surface uploaded, the node's box named
/// to `set_land`) computes the land texture again only within [`LAND_REACH`] of it, at most
/// (2·3 + 1)² = 49 texels, 16 in the grid's corner, and only the land tiles within
/// `LAND_TILE_REACH − 1` = 31 tiles of those that hold it (one, two on a tile's edge, four on
/// its corner; their distances to land can change), within the grid's 64² tiles of 2² cells;
/// the picture is a fresh start's, bit for bit. Painting a node that already is land, or telling
/// no change, computes none; changing the pool's depth (the land's heights) computes all the
/// texels and no tile (the tiles hold the flags only: the code before computed all of them
/// again, 16² tiles of 8² cells then, review L3).
/// (The code before computed all 128² = 16,384 texels for each change: the mutant doing so here
/// fails at the first count; one computing all 16² land tiles, at the first tiles' count.)
#[test]
fn a_painted_node_computes_only_the_land_texels_it_reaches() {
    let island = |x: f32, z: f32| (x - 0.6).powi(2) + (z - 0.7).powi(2) < 0.06;
    let camera = Camera {
        target: Vec3::new(1.0, -0.3, 1.0),
        yaw: 0.5,
        pitch: 0.6,
        distance: 3.0,
    };
    let drawn = scene([0.3, 1.0, 0.2]);
    let h = SIZE / (NODES - 1) as f32;
    let node = |i: usize, j: usize| {
        move |x: f32, z: f32| {
            (x - i as f32 * h).abs() < 0.5 * h && (z - j as f32 * h).abs() < 0.5 * h
        }
    };
    // Nodes painted in turn (land texels and tiles computed): on tiles' edges (i, j even), in
    // the pool's corner, inside a tile, on a tile's corner; then the first again.
    let strokes = [
        (100, 40, 49, (63 - 18 + 1) * (51 + 1)),
        (127, 127, 16, 32 * 32),
        (91, 107, 49, (63 - 14 + 1) * (63 - 22 + 1)),
        (88, 104, 49, (63 - 12 + 1) * (63 - 20 + 1)),
        (100, 40, 0, 0),
    ];
    let land_after = |n: usize| {
        move |x: f32, z: f32| {
            island(x, z) || strokes[..n].iter().any(|&(i, j, _, _)| node(i, j)(x, z))
        }
    };
    let fresh: Vec<Image> = (1..=strokes.len())
        .map(|n| Fixture::new().render(&surface(|_, _| 0.0, land_after(n)), &camera, &drawn))
        .collect();
    let mut live = Fixture::new();
    live.render(&surface(|_, _| 0.0, island), &camera, &drawn);
    let renderer = live.renderer.as_ref().unwrap();
    let side = land_tiles_side(NODES);
    assert_eq!(
        (
            renderer.land_texels_computed(),
            renderer.land_tiles_computed()
        ),
        (NODES * NODES, side * side)
    );
    let reach = 2 * LAND_REACH + 1;
    for (n, (&(i, j, expected, tiles), fresh)) in strokes.iter().zip(&fresh).enumerate() {
        let texels = surface(|_, _| 0.0, land_after(n + 1));
        let renderer = live.renderer.as_mut().unwrap();
        renderer.upload_surface(&texels);
        renderer.set_land(|k| texels[k][3] > 0.5, Some([[i, j], [i, j]]));
        let painted = live.draw(&camera, &drawn);
        let renderer = live.renderer.as_ref().unwrap();
        let computed = renderer.land_texels_computed();
        let tiles_computed = renderer.land_tiles_computed();
        println!(
            "node ({i}, {j}) painted: {computed} land texels, {tiles_computed} land tiles computed"
        );
        assert_eq!(
            computed, expected,
            "land texels computed for node ({i}, {j})"
        );
        assert_eq!(
            tiles_computed, tiles,
            "land tiles computed for node ({i}, {j})"
        );
        assert!(computed <= reach * reach);
        assert_eq!(
            differing(&painted, fresh),
            0,
            "pixels apart from a fresh start's"
        );
    }
    live.draw(&camera, &drawn);
    let renderer = live.renderer.as_ref().unwrap();
    assert_eq!(
        (
            renderer.land_texels_computed(),
            renderer.land_tiles_computed()
        ),
        (0, 0),
        "nothing changed"
    );
    let deeper = DrawScene {
        depth: drawn.depth + 0.2,
        ..drawn
    };
    live.draw(&camera, &deeper);
    let renderer = live.renderer.as_ref().unwrap();
    let computed = (
        renderer.land_texels_computed(),
        renderer.land_tiles_computed(),
    );
    println!("the depth changed: {computed:?} land texels and tiles computed");
    assert_eq!(computed, (NODES * NODES, 0), "the depth changed");
}
