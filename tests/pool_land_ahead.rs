//! Land's programs made ahead of the first frame with land (`render/warm_up.rs`; headless EGL, Mesa
//! llvmpipe in CI): told that land may come (`PoolRenderer::expect_land`, the viewer's paint tool),
//! the renderer links the `surface` build with land on the next frame and draws the `land` program
//! once on the one after, the build on the third, and the frames draw the pictures of a renderer
//! told nothing, bit for bit; a frame with land draws with land whatever was made ahead. The paint
//! tool of a `PoolSim` tells it.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::scene::Source;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer, SurfaceVariant};
use fluidlab::sims::pool::{PoolSim, Tool};
use fluidlab::sims::{Backend, OpenOptions, Sim};

#[path = "support/pool_fixture.rs"]
mod pool_fixture;
use pool_fixture::*;

fn differing(a: &Image, b: &Image) -> usize {
    a.pixels().zip(b.pixels()).filter(|(a, b)| a != b).count()
}

/// The `surface` builds `renderer` built, in order.
fn built(renderer: &PoolRenderer) -> Vec<SurfaceVariant> {
    renderer
        .surface_variants_built()
        .iter()
        .map(|&(v, _)| v)
        .collect()
}

fn with_land(far_taps: bool) -> SurfaceVariant {
    SurfaceVariant {
        far_taps,
        land: true,
    }
}

/// Three frames without land, then one with the island, on a renderer told nothing and on one told
/// [`expect_land`] before the first: the first frame links the build with land (not drawn), the
/// second draws the `land` program (a warm-up), the third the build (one program a frame); the
/// frame with land builds nothing more and draws with land. Every picture is the other renderer's,
/// bit for bit, with far taps and without. (Mutants: `make_land_ahead` returning at once fails the
/// first `built` check; nothing drawn by the warm-up (`land`'s draw left out, or its first triangle
/// drawn with 0 indices) fails the `drawn` checks; the scratch textures made on the active unit,
/// the caustics', unbind the caustics: 3,862 pixels apart on the warming frame (before the split);
/// the frame with land drawn with the landless build while land is expected: 357 pixels apart. Not
/// caught: the warm-up moved after the clear, or the depth test left on after it; the sky pass
/// covers the frame and the passes set their own depth state.)
#[test]
fn land_made_ahead_draws_the_pictures_of_a_renderer_told_nothing() {
    let camera = island_camera();
    let landless = surface(ripples, |_, _| false);
    let with_island = surface(ripples, island);
    for far_taps in [true, false] {
        let drawn = DrawScene {
            far_taps,
            ..scene([0.3, 1.0, 0.2])
        };
        let frames = [&landless, &landless, &landless, &with_island];
        let told_nothing: Vec<Image> = {
            let mut fixture = Fixture::new();
            frames
                .iter()
                .map(|texels| fixture.render(texels, &camera, &drawn))
                .collect()
        };
        let mut fixture = Fixture::new();
        let variant = with_land(far_taps);
        for (frame, (texels, reference)) in frames.iter().zip(&told_nothing).enumerate() {
            // Told every frame, as the viewer tells it while the paint tool is chosen.
            fixture.renderer.as_mut().unwrap().expect_land();
            let picture = fixture.render(texels, &camera, &drawn);
            let apart = differing(&picture, reference);
            assert_eq!(apart, 0, "far taps {far_taps}, frame {frame}: pixels apart");
            let renderer = fixture.renderer.as_ref().unwrap();
            let built = built(renderer);
            let drawn_builds = renderer.surface_variants_drawn();
            // The renderer builds the two landless builds at its start.
            assert_eq!(
                built.len(),
                3,
                "far taps {far_taps}, frame {frame}: {built:?}"
            );
            assert!(built.contains(&variant), "frame {frame}: {built:?}");
            assert_eq!(
                drawn_builds.contains(&variant),
                frame >= 2,
                "far taps {far_taps}, frame {frame}: {drawn_builds:?}"
            );
            assert_eq!(renderer.land_program_drawn(), frame >= 1, "frame {frame}");
        }
        let renderer = fixture.renderer.as_ref().unwrap();
        assert_eq!(renderer.surface_variant(), variant);
    }
}

/// Land arriving before its build was made ahead (told on that frame, or on the frame before:
/// linked, not yet drawn) is drawn with land, as a renderer told nothing draws it: a frame with
/// land never waits for the warm-up with the landless build. (Mutant: the frame's build taken
/// without land while land is expected, `land: has_land && !land_expected`: fails the variant
/// check.)
#[test]
fn land_before_its_build_is_made_ahead_is_drawn_with_land() {
    let camera = island_camera();
    let drawn = scene([0.3, 1.0, 0.2]);
    let landless = surface(ripples, |_, _| false);
    let with_island = surface(ripples, island);
    let reference = Fixture::new().render(&with_island, &camera, &drawn);
    for landless_frames in [0, 1] {
        let mut fixture = Fixture::new();
        for _ in 0..landless_frames {
            fixture.renderer.as_mut().unwrap().expect_land();
            fixture.render(&landless, &camera, &drawn);
        }
        fixture.renderer.as_mut().unwrap().expect_land();
        let picture = fixture.render(&with_island, &camera, &drawn);
        let renderer = fixture.renderer.as_ref().unwrap();
        assert_eq!(renderer.surface_variant(), with_land(true));
        assert!(renderer.land_program_drawn());
        let apart = differing(&picture, &reference);
        assert_eq!(apart, 0, "after {landless_frames} frames: pixels apart");
    }
}

/// `expect_land` holds for the frame after it only: far taps toggled after the paint tool is
/// put away (no longer told) makes nothing ahead, and told again, the toggled setting's build
/// is linked and warmed. (Mutant: `land_expected` kept across frames: the landless frames after
/// the toggle build the far taps' other build with land.)
#[test]
fn land_is_made_ahead_only_on_frames_told() {
    let camera = island_camera();
    let landless = surface(ripples, |_, _| false);
    let mut fixture = Fixture::new();
    let mut frame = |far_taps: bool, told: bool| {
        if told {
            fixture.renderer.as_mut().unwrap().expect_land();
        }
        let drawn = DrawScene {
            far_taps,
            ..scene([0.3, 1.0, 0.2])
        };
        fixture.render(&landless, &camera, &drawn);
        let renderer = fixture.renderer.as_ref().unwrap();
        (built(renderer), renderer.surface_variants_drawn())
    };
    for _ in 0..3 {
        frame(true, true);
    }
    let (built, drawn) = frame(true, false);
    assert!(drawn.contains(&with_land(true)), "{drawn:?}");
    // The tool put away, far taps toggled: nothing more is built.
    for _ in 0..3 {
        let (built_after, _) = frame(false, false);
        assert_eq!(built_after, built);
        assert!(!built_after.contains(&with_land(false)), "{built_after:?}");
    }
    // Told again: the setting's build with land is linked, then drawn.
    let (built, drawn) = frame(false, true);
    assert!(built.contains(&with_land(false)), "{built:?}");
    assert!(!drawn.contains(&with_land(false)), "{drawn:?}");
    let (_, drawn) = frame(false, true);
    assert!(drawn.contains(&with_land(false)), "{drawn:?}");
}

/// The viewer's wiring (`sim/gl.rs`): a pool with the paint tool chosen has land's programs
/// made ahead after three frames drawn, one without it has not. (Mutant: `expect_land` not told
/// by `PoolSim`'s draw: fails the first assert.)
#[test]
fn a_pool_with_the_paint_tool_chosen_makes_land_ahead() {
    let headless = Headless::new(64, 48).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    for tool in [Tool::PaintIsland, Tool::Drops] {
        let text = "kind = \"pool\"\n[pool]\nnodes = 48\n[light]\nfar_taps = false\n";
        let source = Source::parse(text, "t", "t.toml").expect("a kind");
        let options = OpenOptions {
            backend: Backend::Cpu,
            drawn: true,
            ..OpenOptions::default()
        };
        let mut pool = PoolSim::open_within(&source, &options, None).expect("the pool");
        pool.attach_gl(headless.gl(), PassClock::Finish)
            .expect("attach");
        pool.tool = tool;
        let camera = Camera::framing(&pool.bounds());
        for _ in 0..3 {
            pool.draw(&camera, headless.output()).expect("a frame");
        }
        let renderer = pool.renderer().expect("attached");
        let made = renderer
            .surface_variants_drawn()
            .contains(&with_land(false))
            && renderer.land_program_drawn();
        assert_eq!(made, tool == Tool::PaintIsland, "{tool:?}");
        pool.release_gl();
    }
}
