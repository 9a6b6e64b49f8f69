//! The pool's aliasing tests' scene (tests/pool_render_aliasing.rs: the water's filters;
//! tests/pool_render_edges.rs: the open sea's edge and an island's rock): a 256² pool 2 m a
//! side drawn through the headless EGL context (Mesa llvmpipe in CI) from a grazing eye, its
//! waves and island, and the aliasing of a low picture against its 4× reference
//! (`pool_aliasing::measure`).

// Each test file that includes it uses part of it.
#![allow(dead_code)]

use super::pool_aliasing::{self, Measure, SUPER};
use super::pool_waves;
use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer, CAUSTIC_LOOKUPS};
use glam::Vec3;

pub const WIDTH: u32 = 160;
pub const HEIGHT: u32 = 90;
pub const NODES: usize = 256;
pub const SIZE: f32 = 2.0;

/// Eye 8 cm above the water in a corner of the pool, looking across it 20° down: the far
/// floor is seen through the water at a few degrees.
pub fn grazing() -> Camera {
    Camera {
        target: Vec3::new(0.8, -0.6, 0.2),
        yaw: 30f32.to_radians(),
        pitch: 20f32.to_radians(),
        distance: 2.0,
    }
}

/// Calm water, or a few waves 15 to 31 cm long, 4 mm high (their caustics are lines on the
/// floor); with `island`, land (fixed nodes) over the disc [`ISLAND`].
pub fn texels(waves: bool, island: bool) -> Vec<[f32; 4]> {
    let mut texels = if waves {
        pool_waves::waves(NODES, SIZE)
    } else {
        vec![[0.0; 4]; NODES * NODES]
    };
    if island {
        let h = SIZE / (NODES - 1) as f32;
        for (i, texel) in texels.iter_mut().enumerate() {
            let (x, z) = ((i % NODES) as f32 * h, (i / NODES) as f32 * h);
            if on_island(x, z, 0.0) {
                *texel = [0.0, 0.0, 0.0, 1.0];
            }
        }
    }
    texels
}

/// An island's disc (centre x, z and radius, m), in the far half of the pool from the grazing
/// eye: its rock under the water is seen through the waves beyond the near water.
pub const ISLAND: [f32; 3] = [1.3, 1.0, 0.25];

/// Whether (x, z) lies within `margin` of the island's disc.
pub fn on_island(x: f32, z: f32, margin: f32) -> bool {
    let [cx, cz, r] = ISLAND;
    (x - cx).powi(2) + (z - cz).powi(2) < (r + margin).powi(2)
}

/// What a picture draws: waves or calm water, the fine detail, the far taps, open edges, an
/// island ([`ISLAND`]), and the most caustics lookups along a footprint
/// (`PoolRenderer::look_caustics_up_at_most`; 1: the single lookup before, the mutant the
/// bounds below are checked against).
#[derive(Clone, Copy)]
pub struct Look {
    pub waves: bool,
    pub detail: bool,
    pub far_taps: bool,
    pub open: bool,
    pub island: bool,
    pub lookups: u32,
}

impl Look {
    pub fn new(waves: bool, detail: bool, far_taps: bool, open: bool) -> Look {
        Look {
            waves,
            detail,
            far_taps,
            open,
            island: false,
            lookups: CAUSTIC_LOOKUPS,
        }
    }
}

pub fn render(width: u32, height: u32, look: Look) -> Image {
    render_from(&grazing(), width, height, look)
}

pub fn render_from(camera: &Camera, width: u32, height: u32, look: Look) -> Image {
    let mut headless = Headless::new(width, height).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        PoolRenderer::new(headless.gl(), PassClock::Finish, NODES).expect("the pool renderer");
    renderer.upload(&texels(look.waves, look.island));
    renderer.look_caustics_up_at_most(look.lookups);
    let scene = DrawScene {
        nodes: NODES,
        size: SIZE,
        depth: 1.0,
        light: Vec3::new(2.0, 2.0, -1.0).normalize().to_array(),
        detail: look.detail,
        far_taps: look.far_taps,
        view: 0,
        time: 0.3,
        open: look.open,
    };
    let image = headless
        .capture(|output| renderer.draw(camera, output, &scene))
        .expect("render without GL errors");
    renderer.delete();
    image
}

/// The aliasing ([`pool_aliasing::measure`]: over the pixels that see the water, |low −
/// reference| summed over the colour channels, the reference the 4× picture averaged over each
/// pixel's 16 samples) of the picture from the grazing eye with the far taps.
pub fn aliasing(waves: bool, detail: bool) -> Measure {
    aliasing_drawn(Look::new(waves, detail, true, false))
}

/// [`aliasing`] of a low picture drawn as `look` says (the reference with the far taps and
/// every caustics lookup, whatever the low picture's).
pub fn aliasing_drawn(look: Look) -> Measure {
    let low = render(WIDTH, HEIGHT, look);
    let reference = Look {
        far_taps: true,
        lookups: CAUSTIC_LOOKUPS,
        ..look
    };
    let high = render(SUPER * WIDTH, SUPER * HEIGHT, reference);
    pool_aliasing::measure(&grazing(), &low, &high, SIZE)
}
