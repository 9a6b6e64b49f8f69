//! The pool renderer's test fixture (tests/pool_render.rs, tests/pool_render_land.rs): a
//! 128² pool 2 m a side and 1 m deep drawn at 160×120 through the headless EGL context (Mesa
//! llvmpipe in CI), fed surface textures made by [`surface`].

// Each test file that includes it uses part of it.
#![allow(dead_code)]

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{CausticsImage, DrawScene, PoolRenderer};
use glam::Vec3;

pub const WIDTH: u32 = 160;
pub const HEIGHT: u32 = 120;
pub const NODES: usize = 128;
pub const SIZE: f32 = 2.0;
pub const DEPTH: f32 = 1.0;

/// Field order is drop order: the renderer's GL objects go before the context.
pub struct Fixture {
    pub renderer: Option<PoolRenderer>,
    headless: Headless,
}

impl Fixture {
    pub fn new() -> Fixture {
        let headless = Headless::new(WIDTH, HEIGHT).expect(
            "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
        );
        let renderer =
            PoolRenderer::new(headless.gl(), PassClock::Finish, NODES).expect("the pool renderer");
        Fixture {
            renderer: Some(renderer),
            headless,
        }
    }

    /// Uploads `texels` and draws.
    pub fn render(&mut self, texels: &[[f32; 4]], camera: &Camera, scene: &DrawScene) -> Image {
        self.renderer.as_mut().unwrap().upload(texels);
        self.draw(camera, scene)
    }

    /// Draws the surface last uploaded.
    pub fn draw(&mut self, camera: &Camera, scene: &DrawScene) -> Image {
        let renderer = self.renderer.as_mut().unwrap();
        self.headless
            .capture(|output| renderer.draw(camera, output, scene))
            .expect("render without GL errors")
    }

    pub fn caustics(&self) -> CausticsImage {
        self.renderer
            .as_ref()
            .unwrap()
            .caustics()
            .expect("caustics")
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(renderer) = self.renderer.take() {
            renderer.delete();
        }
    }
}

/// The fixture's pool lit from `light`, far taps on, the first view.
pub fn scene(light: [f32; 3]) -> DrawScene {
    DrawScene {
        nodes: NODES,
        size: SIZE,
        depth: DEPTH,
        light,
        detail: false,
        far_taps: true,
        view: 0,
        time: 0.0,
        open: false,
    }
}

/// Texels of a surface with height `height(x, z)` (m) and land where `land(x, z)`.
pub fn surface(height: impl Fn(f32, f32) -> f32, land: impl Fn(f32, f32) -> bool) -> Vec<[f32; 4]> {
    let h = SIZE / (NODES - 1) as f32;
    let mut texels = Vec::with_capacity(NODES * NODES);
    for j in 0..NODES {
        for i in 0..NODES {
            let (x, z) = (i as f32 * h, j as f32 * h);
            let fixed = land(x, z);
            let u = if fixed { 0.0 } else { height(x, z) };
            texels.push([0.0, u, 0.0, if fixed { 1.0 } else { 0.0 }]);
        }
    }
    texels
}

/// The land tests' island (tests/pool_render_land.rs, tests/pool_land_pause.rs): a disc of
/// radius 0.24 m at (0.6, 0.7) m.
pub fn island(x: f32, z: f32) -> bool {
    (x - 0.6).powi(2) + (z - 0.7).powi(2) < 0.06
}

/// The land tests' camera, looking at the island.
pub fn island_camera() -> Camera {
    Camera {
        target: Vec3::new(1.0, -0.3, 1.0),
        yaw: 0.5,
        pitch: 0.6,
        distance: 3.0,
    }
}

/// The land tests' waves, 1 cm high.
pub fn ripples(x: f32, z: f32) -> f32 {
    0.01 * (6.0 * x).sin() * (5.0 * z).cos()
}
