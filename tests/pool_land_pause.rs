//! The pause on the first frame with land (a measurement, ignored by default): the `surface` build
//! with land is linked before the `surface` pass, and llvmpipe compiles it to machine code at its
//! first draw, inside the pass. Run it cold, without Mesa's shader cache:
//! `MESA_SHADER_CACHE_DISABLE=true cargo test --release --test pool_land_pause -- --ignored
//! --nocapture`. Each case on a fresh renderer (the fixture's 160×120, `PassClock::Finish`): a
//! landless first frame, then a frame with an island; this branch's builds against the build with
//! land drawn from the start (`draw_surface_with_land(Some(true))`: main's one program), and the
//! flow of the viewer's paint tool (`ahead`: after the landless first frame, `expect_land` told
//! every frame: a landless frame linking the build with land, one drawing `land` over one triangle,
//! one drawing the build, a plain one, each timed, then the frame with land).

use fluidlab::sims::pool::render::DrawScene;
use std::time::Instant;

#[path = "support/pool_fixture.rs"]
mod pool_fixture;
use pool_fixture::*;

/// Seconds `f` takes.
fn seconds(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

#[test]
#[ignore = "a measurement"]
fn the_first_frame_with_land_pauses_for_its_build() {
    let camera = island_camera();
    let landless = surface(ripples, |_, _| false);
    let with_island = surface(ripples, island);
    for far_taps in [false, true] {
        let drawn = DrawScene {
            far_taps,
            ..scene([0.3, 1.0, 0.2])
        };
        let flows = [("this", None, false), ("main-like", Some(true), false)];
        for (name, forced, ahead) in flows.into_iter().chain([("ahead", None, true)]) {
            for run in 0..3 {
                let mut fixture = Fixture::new();
                let renderer = fixture.renderer.as_mut().unwrap();
                renderer.draw_surface_with_land(forced);
                let first = seconds(|| {
                    fixture.render(&landless, &camera, &drawn);
                });
                if ahead {
                    // Told from the second frame on, every frame, as the viewer tells it.
                    let mut told = || {
                        fixture.renderer.as_mut().unwrap().expect_land();
                        seconds(|| {
                            fixture.render(&landless, &camera, &drawn);
                        })
                    };
                    let linked = told();
                    let land_warmed = told();
                    let warmed = told();
                    let plain = told();
                    fixture.renderer.as_mut().unwrap().expect_land();
                    println!(
                        "far taps {far_taps}, ahead, run {run}: landless frames: linking \
                         {linked:.2} s, warming land {land_warmed:.2} s, the build {warmed:.2} s, then \
                         {plain:.2} s"
                    );
                }
                let land = seconds(|| {
                    fixture.render(&with_island, &camera, &drawn);
                });
                let pass = fixture
                    .renderer
                    .as_ref()
                    .unwrap()
                    .pass_times()
                    .into_iter()
                    .find(|&(pass, _)| pass == "surface")
                    .and_then(|(_, time)| time)
                    .unwrap_or(f64::NAN);
                let next = seconds(|| {
                    fixture.render(&with_island, &camera, &drawn);
                });
                println!(
                    "far taps {far_taps}, {name}, run {run}: first frame {first:.2} s, first with \
                     land {land:.2} s (surface pass {pass:.2} s), the next {next:.2} s"
                );
            }
        }
    }
}
