//! The pool's land as it changes while a renderer runs (headless EGL, Mesa llvmpipe in CI):
//! land painted or erased live is drawn as a fresh start draws it, and a painted node
//! recomputes only the land texture's texels it reaches (`render/land.rs`) and the land tiles
//! that hold it (`render/land_tiles.rs`).

use fluidlab::gfx::capture::Image;
use fluidlab::sims::pool::render::{
    land_tiles_side, DrawScene, PoolRenderer, SurfaceVariant, TapCells, LAND_REACH,
};

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
    let first = island;
    let second = |x: f32, z: f32| (x - 1.4).powi(2) + (z - 1.2).powi(2) < 0.04;
    let both = |x: f32, z: f32| first(x, z) || second(x, z);
    let camera = island_camera();
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
        .map(|(land, drawn)| Fixture::new().render(&surface(ripples, land), &camera, drawn))
        .collect();
    let mut live = Fixture::new();
    live.render(&surface(ripples, first), &camera, &scene(light));
    for ((land, drawn), fresh) in cases.iter().zip(&fresh) {
        let painted = live.render(&surface(ripples, land), &camera, drawn);
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
    let camera = island_camera();
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

/// The uniforms only the land's search and the rock's shading read.
const LAND_UNIFORMS: [&str; 5] = [
    "land_tiles",
    "land_texture",
    "land_bounds",
    "land_tile",
    "has_land",
];

/// The land's uniforms among the active ones of the `surface` build drawn with.
fn land_uniforms_used(renderer: &PoolRenderer) -> Vec<String> {
    let mut used: Vec<String> = renderer
        .surface_uniforms()
        .into_iter()
        .filter(|u| LAND_UNIFORMS.contains(&u.as_str()))
        .collect();
    used.sort();
    used
}

/// A scene without land draws `surface` with the build without land (`POOL_LAND` undefined),
/// whose program holds no land search: none of its uniforms is active (the land tiles and
/// texture samplers, the bounds), where the build with land uses all five. Its picture is the
/// build with land's (the one program before the builds, whose search returned at once
/// without land), bit for bit, with and without the far taps.
/// (Mutants: the define inverted (`#ifdef POOL_LAND` returning at once) draws without land
/// with the walk, 5 land uniforms active; the builds chosen as `land: true` always draws with
/// the build with land.)
#[test]
fn a_scene_without_land_draws_without_the_land_search() {
    let camera = island_camera();
    let texels = surface(ripples, |_, _| false);
    for far_taps in [true, false] {
        let drawn = DrawScene {
            far_taps,
            ..scene([0.3, 1.0, 0.2])
        };
        let mut fixture = Fixture::new();
        let without = fixture.render(&texels, &camera, &drawn);
        let renderer = fixture.renderer.as_ref().unwrap();
        assert_eq!(
            renderer.surface_variant(),
            SurfaceVariant {
                far_taps,
                land: false
            }
        );
        assert_eq!(land_uniforms_used(renderer), Vec::<String>::new());
        assert!(renderer.surface_uniforms().iter().any(|u| u == "surface"));
        fixture
            .renderer
            .as_mut()
            .unwrap()
            .draw_surface_with_land(Some(true));
        let with = fixture.draw(&camera, &drawn);
        let renderer = fixture.renderer.as_ref().unwrap();
        assert!(renderer.surface_variant().land);
        assert_eq!(land_uniforms_used(renderer).len(), LAND_UNIFORMS.len());
        let differing = differing(&without, &with);
        println!("far taps {far_taps}: {differing} pixels apart from the build with land's");
        assert_eq!(differing, 0, "far taps {far_taps}");
    }
}

/// Land painted on a scene without land switches `surface` to the build with land, built then
/// (not before), and the picture is a fresh start's with that land, bit for bit; the rock under
/// the water shows (the build without land, drawn instead, misses hundreds of pixels of it).
/// Erasing all the land switches back, and the picture is a fresh landless start's; painting
/// again builds nothing: every build is kept. With the land there, the far taps turned off
/// switch to the build with land without far taps (the picture is a fresh start's without far
/// taps, bit for bit, and not the one with them), and turned on again build nothing.
/// (Mutants: the builds chosen as `land: false` always draws the island without its rock under
/// the water, fresh start and painted alike: 0 pixels of rock, 357 here; a build dropped when
/// the land goes is built again when it comes back: 0 builds with land kept after the erasing;
/// the define inverted: no land uniform active in the build with land; the far taps kept on
/// wherever there is land (`far_taps: scene.far_taps || has_land`, review finding 1): the fresh
/// start without far taps draws with them, 0 pixels apart from with them, 2,074 here.)
#[test]
fn land_painted_and_erased_switches_the_surface_build() {
    let camera = island_camera();
    let drawn = scene([0.3, 1.0, 0.2]);
    let landless = surface(ripples, |_, _| false);
    let with_island = surface(ripples, island);
    let fresh_landless = Fixture::new().render(&landless, &camera, &drawn);
    let fresh_island = Fixture::new().render(&with_island, &camera, &drawn);
    let tapless = DrawScene {
        far_taps: false,
        ..drawn
    };
    let fresh_tapless = Fixture::new().render(&with_island, &camera, &tapless);
    let taps_apart = differing(&fresh_tapless, &fresh_island);
    println!("the island without far taps: {taps_apart} pixels apart from with them");
    assert!(taps_apart > 200, "{taps_apart} pixels apart");
    let without_rock = {
        let mut fixture = Fixture::new();
        let renderer = fixture.renderer.as_mut().unwrap();
        renderer.draw_surface_with_land(Some(false));
        fixture.render(&with_island, &camera, &drawn)
    };
    let rock = differing(&fresh_island, &without_rock);
    println!("the island's rock under the water: {rock} pixels");
    assert!(rock > 200, "{rock} pixels of rock");

    let taps = |land| SurfaceVariant {
        far_taps: true,
        land,
    };
    let mut live = Fixture::new();
    live.render(&landless, &camera, &drawn);
    let renderer = live.renderer.as_ref().unwrap();
    assert_eq!(renderer.surface_variant(), taps(false));
    assert!(renderer
        .surface_variants_built()
        .iter()
        .all(|&(v, _)| v != taps(true)));
    for round in 0..2 {
        let painted = live.render(&with_island, &camera, &drawn);
        let renderer = live.renderer.as_ref().unwrap();
        assert_eq!(renderer.surface_variant(), taps(true), "round {round}");
        assert_eq!(land_uniforms_used(renderer).len(), LAND_UNIFORMS.len());
        assert_eq!(
            differing(&painted, &fresh_island),
            0,
            "painted, round {round}"
        );
        let erased = live.render(&landless, &camera, &drawn);
        let renderer = live.renderer.as_ref().unwrap();
        assert_eq!(renderer.surface_variant(), taps(false), "round {round}");
        assert_eq!(land_uniforms_used(renderer), Vec::<String>::new());
        assert_eq!(
            differing(&erased, &fresh_landless),
            0,
            "erased, round {round}"
        );
        let built = renderer.surface_variants_built();
        assert_eq!(
            built.iter().filter(|&&(v, _)| v == taps(true)).count(),
            1,
            "round {round}: {built:?}"
        );
        assert_eq!(built.len(), 3, "round {round}: {built:?}");
    }

    // The far taps turned off and on again with the island there.
    live.render(&with_island, &camera, &drawn);
    let off = live.render(&with_island, &camera, &tapless);
    let renderer = live.renderer.as_ref().unwrap();
    assert_eq!(
        renderer.surface_variant(),
        SurfaceVariant {
            far_taps: false,
            land: true
        }
    );
    assert_eq!(differing(&off, &fresh_tapless), 0, "far taps off");
    let on = live.render(&with_island, &camera, &drawn);
    let renderer = live.renderer.as_ref().unwrap();
    assert_eq!(renderer.surface_variant(), taps(true));
    assert_eq!(differing(&on, &fresh_island), 0, "far taps on again");
    let built = renderer.surface_variants_built();
    assert_eq!(built.len(), 4, "{built:?}");
}

/// Counting the far taps by the grid's cells ([`TapCells`], a measurement's) with land there
/// drops every build with far taps, those with land too: the one drawn with is made again at
/// once by the grid's cells, and after drawing with land without far taps and back, no build
/// with far taps counts the mesh's. Counting by the mesh's again makes them again by the mesh's.
/// (Mutant: the builds with far taps and land kept, review finding 4: the one drawn with still
/// counts the mesh's cells, `Some(Mesh)` after counting by the grid's. The pictures cannot tell:
/// at the fixture's 128² nodes the mesh is the grid.)
#[test]
fn counting_the_far_taps_anew_drops_the_builds_with_land() {
    let camera = island_camera();
    let drawn = scene([0.3, 1.0, 0.2]);
    let tapless = DrawScene {
        far_taps: false,
        ..drawn
    };
    let with_island = surface(ripples, island);
    let mut live = Fixture::new();
    live.render(&with_island, &camera, &tapless);
    live.render(&with_island, &camera, &drawn);
    for cells in [TapCells::Grid, TapCells::Mesh] {
        let renderer = live.renderer.as_mut().unwrap();
        renderer
            .count_far_taps_by(cells)
            .expect("the far taps' program");
        live.draw(&camera, &tapless);
        live.draw(&camera, &drawn);
        let built = live.renderer.as_ref().unwrap().surface_variants_built();
        let mut variants: Vec<_> = built.iter().map(|&(v, _)| (v.far_taps, v.land)).collect();
        variants.sort();
        assert_eq!(
            variants,
            [(false, false), (false, true), (true, false), (true, true)],
            "{cells:?}: {built:?}"
        );
        for (variant, taps) in built {
            assert_eq!(
                taps,
                variant.far_taps.then_some(cells),
                "{cells:?}: {variant:?}"
            );
        }
    }
}
