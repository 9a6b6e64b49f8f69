//! Headless renders (EGL surfaceless; Mesa llvmpipe in CI) of the particles kind, with
//! assertions on the pictures. One test binary, a module per idea: the lens flare and the sun
//! (`flare`), the default cameras (`framing`), what the scenes draw (`pictures`), and the buffers a CUDA solver fills through
//! interop drawn as the CPU path draws (`shared`). Needs scripts/setup.sh's Mesa packages.

mod flare;
mod framing;
mod pictures;
mod shared;

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::scene::Source;
use fluidlab::sims::particles::render;
use fluidlab::sims::particles::{ParticlesSim, State};
use fluidlab::sims::{OpenOptions, Sim};
use glam::{Vec2, Vec3};

const WIDTH: u32 = 192;
const HEIGHT: u32 = 108;

const CLOTH: &str = r#"
    kind = "particles"
    scene = "cloth"
    [cloth]
    n = 12
"#;

const JELLY: &str = r#"
    kind = "particles"
    scene = "jelly"
    [jelly]
    n = 4
    mass = 2.0
    stiffness = 1500.0
    pins = "none"
    start = [-0.5, 1.5, -0.5]
"#;

const FOUNTAIN: &str = r#"
    kind = "particles"
    scene = "fountain"
    [fountain]
    rate = 600.0
    surface_nodes = 48
"#;

/// A simulation drawing into a headless target; the GL objects go before the context.
struct Fixture {
    sim: ParticlesSim,
    headless: Headless,
}

impl Fixture {
    fn open(text: &str) -> Fixture {
        Fixture::sized(text, WIDTH, HEIGHT)
    }

    fn sized(text: &str, width: u32, height: u32) -> Fixture {
        let source = Source::parse(text, "test", "particles render test").expect("scene");
        let headless = Headless::new(width, height).expect(
            "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
        );
        let mut sim = ParticlesSim::open(&source, &OpenOptions::default()).expect("open");
        sim.attach_gl(headless.gl(), PassClock::Finish)
            .expect("the particles renderer");
        Fixture { sim, headless }
    }

    fn render(&mut self, camera: &Camera) -> Image {
        let sim = &mut self.sim;
        self.headless
            .capture(|output| sim.draw(camera, output))
            .expect("a frame without GL errors")
    }

    /// The picture with the flare on and off.
    fn with_and_without_flare(&mut self, camera: &Camera) -> (Image, Image) {
        self.sim.render.flare = true;
        let on = self.render(camera);
        self.sim.render.flare = false;
        let off = self.render(camera);
        (on, off)
    }

    fn body(&mut self) -> &mut fluidlab::sims::particles::body::Body {
        match &mut self.sim.state {
            State::Body(body) => body,
            State::Fountain(_) => panic!("not a body"),
        }
    }

    fn sun(&self) -> Vec3 {
        render::light(self.sim.scene.which).sun
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.sim.release_gl();
    }
}

/// A camera at `eye` looking along `direction`.
fn looking(eye: Vec3, direction: Vec3) -> Camera {
    let d = direction.normalize();
    let distance = 2.0;
    Camera {
        target: eye + d * distance,
        yaw: (-d.x).atan2(-d.z),
        pitch: (-d.y).asin(),
        distance,
    }
}

/// Where NDC `p` falls in the picture, pixels from the top left.
fn to_pixel(p: Vec2) -> Vec2 {
    Vec2::new(
        (p.x * 0.5 + 0.5) * WIDTH as f32,
        (0.5 - p.y * 0.5) * HEIGHT as f32,
    )
}

fn largest_difference(a: &Image, b: &Image) -> u8 {
    a.pixels()
        .zip(b.pixels())
        .map(|(p, q)| (0..3).map(|c| p[c].abs_diff(q[c])).max().unwrap_or(0))
        .max()
        .unwrap_or(0)
}
