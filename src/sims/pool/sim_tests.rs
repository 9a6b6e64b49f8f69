//! The pool behind the door: the pointer, the keys, rain, the edge list, the camera, the sun and
//! the far taps (scenarios and land in `scenario_tests.rs`, the panel's and scene files' limits
//! in `panel_tests.rs`; the physics is in `tests/`).

use super::surface::FIXED;

/// Opens a pool scene of `text` (after `kind = "pool"`) on the CPU.
pub(super) fn open(text: &str) -> super::PoolSim {
    let source = crate::scene::Source::parse(&format!("kind = \"pool\"\n{text}"), "t", "t.toml")
        .expect("a kind");
    let options = crate::sims::OpenOptions {
        backend: crate::sims::Backend::Cpu,
        ..Default::default()
    };
    super::PoolSim::open(&source, &options).unwrap()
}

/// Counts the nodes carrying `flag`.
pub(super) fn count(sim: &super::PoolSim, flag: u8) -> usize {
    sim.solver.flags().iter().filter(|f| *f & flag != 0).count()
}

/// The pointer picks the point of the rest plane under it: the middle of the picture is the
/// point the camera looks at; a pixel showing the sky picks nothing; a drag drops there.
#[test]
fn the_pointer_picks_the_water_under_it() {
    use crate::gfx::camera::Camera;
    use crate::sims::Sim;
    let mut sim = open("[pool]\nnodes = 64\n");
    assert_eq!(
        sim.pick([320.0, 240.0], [640, 480]),
        None,
        "no frame drawn yet"
    );
    let camera = Camera {
        target: glam::Vec3::new(0.6, 0.0, 1.3),
        yaw: 0.4,
        pitch: 0.7,
        distance: 3.0,
    };
    sim.draw_camera(camera);
    let [x, z] = sim.pick([320.0, 240.0], [640, 480]).unwrap();
    assert!((x - 0.6).abs() < 1e-4 && (z - 1.3).abs() < 1e-4, "{x}, {z}");
    assert_eq!(sim.pick([320.0, 0.0], [640, 480]), None, "the sky");
    assert!(sim.pointer([320.0, 240.0], [640, 480], true));
    sim.step().unwrap();
    let s = &sim.solver.as_cpu().expect("the CPU solver").surface;
    let k = (1.3 / s.h).round() as usize * s.n + (0.6 / s.h).round() as usize;
    assert!(s.height[k] > 0.005, "{}", s.height[k]);
}

/// C puts the water at rest (land kept); L puts the sun in the camera's direction when the
/// camera is above the water, and leaves it when it is below.
#[test]
fn the_c_and_l_keys_calm_the_water_and_bring_the_light() {
    use crate::gfx::camera::Camera;
    use crate::sims::Sim;
    use winit::keyboard::KeyCode;
    let mut sim = open(
        "[pool]\nnodes = 48\n[drops]\nrandom = 6\n[[island]]\ncenter = [1.0, 1.0]\nradius = 0.2\n",
    );
    let island = count(&sim, FIXED);
    sim.step().unwrap();
    sim.step().unwrap();
    let surface = |sim: &super::PoolSim| sim.solver.as_cpu().unwrap().surface.clone();
    let moving = surface(&sim);
    let largest = |v: &[f32]| v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(largest(&moving.height) > 1e-3 && largest(&moving.velocity) > 1e-3);
    assert!(sim.key(KeyCode::KeyC));
    let calm = surface(&sim);
    assert_eq!((largest(&calm.height), largest(&calm.velocity)), (0.0, 0.0));
    assert_eq!(count(&sim, FIXED), island, "land kept");

    let above = Camera {
        target: glam::Vec3::new(1.0, 0.0, 1.0),
        yaw: 0.3,
        pitch: 0.6,
        distance: 3.0,
    };
    sim.draw_camera(above);
    assert!(sim.key(KeyCode::KeyL));
    let towards = (above.eye() - above.target).normalize();
    let light = glam::Vec3::from(sim.scene.look.light);
    assert!((light - towards).length() < 1e-6, "{light} for {towards}");
    sim.draw_camera(Camera {
        pitch: -0.4,
        ..above
    });
    assert!(sim.key(KeyCode::KeyL));
    assert_eq!(
        glam::Vec3::from(sim.scene.look.light),
        light,
        "a sun below the horizon"
    );
    assert!(!sim.key(KeyCode::KeyQ));
}

/// Rain falls at its rate: the Poisson counts' mean over many frames is the rate × dt.
#[test]
fn rain_falls_at_its_rate() {
    let mut rng = super::drops::Rng::new(7);
    for mean in [0.5f32, 4.0, 50.0] {
        let total: u32 = (0..20_000).map(|_| rng.poisson(mean)).sum();
        let measured = total as f32 / 20_000.0;
        assert!(
            (measured / mean - 1.0).abs() < 0.03,
            "{measured} for {mean}"
        );
    }
}

/// `edges` (and its kernel) visits every edge node of the grid once, corners included, and no
/// inner node.
#[test]
fn every_edge_node_is_visited_once() {
    for n in [8usize, 9, 40] {
        let mut seen = vec![0u32; n * n];
        for q in 0..4 * (n - 1) {
            let (i, j) = super::cpu::edge_node(n, q);
            assert!(i == 0 || j == 0 || i == n - 1 || j == n - 1, "({i}, {j})");
            seen[j * n + i] += 1;
        }
        let edge = |k: usize| {
            let (i, j) = (k % n, k / n);
            i == 0 || j == 0 || i == n - 1 || j == n - 1
        };
        for (k, &count) in seen.iter().enumerate() {
            assert_eq!(count, u32::from(edge(k)), "node {k} of {n}²");
        }
    }
}

/// The default picture centres what shows of the pool from above — its opening in the deck,
/// at the rim's height — in the central 80 % of the frame (issue 14's rule), for `render`'s
/// whole 16:9 frame and for the viewer's window beside its panel. Framing the basin down to
/// the floor, hidden under the deck, put the opening 0.4 of the frame's half-height above the
/// centre.
#[test]
fn the_default_camera_centres_the_pools_opening() {
    use crate::gfx::camera::{Camera, FRAMED_FRACTION};
    use crate::sims::Sim;
    use crate::viewer::panel::{PANEL_RIGHT, WINDOW_SIZE};
    let sim = open("[pool]\nnodes = 16\nsize = 2.0\ndepth = 1.0\n");
    let rim = super::render::rim_height(2.0);
    let opening = crate::scene::Aabb::new([0.0, rim, 0.0], [2.0, rim, 2.0]);
    let (width, height) = WINDOW_SIZE;
    let viewer_band = [2.0 * PANEL_RIGHT / width - 1.0, 1.0];
    for (camera, aspect, band) in [
        (Camera::framing(&sim.bounds()), 16.0 / 9.0, [-1.0, 1.0]),
        (
            crate::viewer::state::framing(&sim),
            width / height,
            viewer_band,
        ),
    ] {
        let [x0, y0, x1, y1] = camera.projected_bounds(&opening, aspect);
        let offset = [0.5 * (x0 + x1) - 0.5 * (band[0] + band[1]), 0.5 * (y0 + y1)];
        assert!(
            offset[0].abs() < 1e-3 && offset[1].abs() < 1e-3,
            "the opening is off the centre of {band:?} by {offset:?}"
        );
        let fill = ((x1 - x0) / (FRAMED_FRACTION * (band[1] - band[0])))
            .max((y1 - y0) / (2.0 * FRAMED_FRACTION));
        assert!(
            (0.98..1.001).contains(&fill),
            "the opening fills {fill} of the central 80 % of {band:?}"
        );
    }
}

/// A scene's sun below the lowest one drawn (2.9° above the horizon) is refused naming the
/// file, line, key and value; the panel's angles give only suns at or above it, and turn back
/// into the direction they came from.
#[test]
fn the_sun_stays_above_the_horizon() {
    use super::scene::{Look, PoolScene, LOWEST_SUN};
    use crate::scene::Source;
    let error = |direction: &str| {
        let text =
            format!("kind = \"pool\"\n[pool]\nnodes = 32\n[light]\ndirection = {direction}\n");
        let source = Source::parse(&text, "sun", "sun.toml").unwrap();
        PoolScene::from_source(&source).err().map(|e| e.to_string())
    };
    for below in ["[1.0, 0.0, 0.0]", "[1.0, -0.5, 0.0]", "[1.0, 0.04, 0.0]"] {
        let message = error(below).unwrap_or_else(|| panic!("{below} accepted"));
        assert!(
            message.starts_with("sun.toml:5: light.direction: must be finite and point at a sun")
                && message.contains("got [1, "),
            "{message}"
        );
    }
    assert_eq!(error("[1.0, 0.06, 0.0]"), None);
    let mut look = Look::default();
    let (elevation, azimuth) = look.sun_angles();
    let before = glam::Vec3::from(look.light).normalize();
    look.set_sun(elevation, azimuth);
    assert!((glam::Vec3::from(look.light) - before).length() < 1e-5);
    look.set_sun(-30.0, 45.0);
    let lowest = glam::Vec3::from(look.light);
    assert!((lowest.y - LOWEST_SUN).abs() < 1e-6 && (lowest.length() - 1.0).abs() < 1e-6);
    assert!((look.sun_angles().1 - 45.0).abs() < 1e-3);
    // Overhead keeps the azimuth (it was 45 -> -135, 0 -> -180 at 90°).
    for azimuth in [0.0, 45.0, -90.0, 170.0] {
        look.set_sun(90.0, azimuth);
        let (e, a) = look.sun_angles();
        assert!(
            e > 89.8 && (a - azimuth).abs() < 0.01,
            "{azimuth}: {e}, {a}"
        );
    }
    // The lowest sun passes the scene's check at every azimuth.
    let mut scene = open("[pool]\nnodes = 16\n").scene;
    for azimuth in (-180..=180).map(|a| a as f32 + 0.37) {
        scene.look.set_sun(0.0, azimuth);
        assert!(scene.look.light[1] >= LOWEST_SUN);
        scene
            .validate()
            .unwrap_or_else(|e| panic!("{azimuth}: {}", e.message));
    }
}

/// `[light] far_taps` reaches the scene's look (unset by default: the renderer chooses; a
/// misspelt key is refused with its line).
#[test]
fn far_taps_are_read_from_the_scene() {
    use super::scene::PoolScene;
    use crate::scene::Source;
    let open = |light: &str| {
        let text = format!("kind = \"pool\"\n[pool]\nnodes = 32\n[light]\n{light}\n");
        let source = Source::parse(&text, "taps", "taps.toml").unwrap();
        PoolScene::from_source(&source).map_err(|e| e.to_string())
    };
    assert_eq!(open("").unwrap().look.far_taps, None);
    assert_eq!(open("far_taps = false").unwrap().look.far_taps, Some(false));
    assert_eq!(open("far_taps = true").unwrap().look.far_taps, Some(true));
    let message = open("far_tap = false").unwrap_err();
    assert!(
        message.starts_with("taps.toml:5") && message.contains("far_tap"),
        "{message}"
    );
}

/// Without `[light] far_taps` the taps follow the GL renderer: off on software rasterisers
/// (as their `GL_RENDERER` strings read: classic swrast's is "Software Rasterizer"; SwiftShader,
/// Windows' and Apple's were taken for hardware before), on elsewhere. The scene's key winning is `attaching_gl_chooses_the_far_taps_unless_the_scene_says`.
#[test]
fn far_taps_follow_the_renderer() {
    use super::scene::far_taps_for;
    let software = [
        "llvmpipe (LLVM 15.0.6, 256 bits)",
        "softpipe",
        "Software Rasterizer",
        "LLVMPIPE",
        "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)",
        "GDI Generic",
        "ANGLE (Microsoft, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0, D3D11)",
        "Apple Software Renderer",
    ];
    let hardware = [
        "NVIDIA H100 80GB HBM3/PCIe/SSE2",
        "AMD Radeon RX 7900 XTX (radeonsi, navi31, LLVM 17.0.6, DRM 3.54)",
        "Mesa Intel(R) UHD Graphics 620 (KBL GT2)",
    ];
    for renderer in software {
        assert!(!far_taps_for(renderer), "{renderer}");
    }
    for renderer in hardware {
        assert!(far_taps_for(renderer), "{renderer}");
    }
}

/// The choice reaches the sim when it is first drawn: a scene without the key draws with
/// `far_taps_for` this machine's GL renderer and says so in its `gl_note` (what `render`
/// prints unless `--quiet`), a scene with the key as it says, without a note.
#[test]
fn attaching_gl_chooses_the_far_taps_unless_the_scene_says() {
    use crate::gfx::headless::Headless;
    use crate::gfx::timing::PassClock;
    use crate::sims::Sim;
    let headless = Headless::new(32, 32).expect("headless OpenGL");
    // SAFETY: the headless context is current on this thread.
    let renderer =
        unsafe { glow::HasContext::get_parameter_string(&*headless.gl(), glow::RENDERER) };
    for (light, expected) in [
        ("", super::scene::far_taps_for(&renderer)),
        ("far_taps = true", true),
        ("far_taps = false", false),
    ] {
        let mut sim = open(&format!("[pool]\nnodes = 32\n[light]\n{light}\n"));
        sim.attach_gl(headless.gl(), PassClock::Finish)
            .expect("attach");
        assert_eq!(
            sim.scene.look.far_taps,
            Some(expected),
            "{renderer}: {light:?}"
        );
        let note = sim.gl_note();
        match light.is_empty() {
            true => assert!(
                note.is_some_and(|n| n.contains("far taps") && n.contains(&renderer)),
                "{note:?}"
            ),
            false => assert_eq!(note, None, "{light:?}"),
        }
    }
}
