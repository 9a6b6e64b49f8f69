//! Headless renders (EGL surfaceless; Mesa llvmpipe in CI) of the particles kind, with
//! assertions on the pictures: the lens flare lies on the sun–centre line and vanishes with the
//! sun behind the camera or behind the cloth, looking into the sun whitens the picture, two
//! droplets blend back to front, the sky shows no seam at a cube face's edge, the cloth and the
//! jelly are drawn where their nodes project, and every view of every scene draws without a GL
//! error. Needs scripts/setup.sh's Mesa packages.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::scene::Source;
use fluidlab::sims::particles::render::{self, textures, BURSTS, HALOS};
use fluidlab::sims::particles::{sort, ParticlesSim, State};
use fluidlab::sims::{OpenOptions, Sim};
use glam::{Vec2, Vec3, Vec4};
use std::rc::Rc;
use winit::keyboard::KeyCode;

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

fn sun_ndc(camera: &Camera, sun: Vec3) -> Option<Vec2> {
    let aspect = WIDTH as f32 / HEIGHT as f32;
    render::sun_on_screen(camera.view(), camera.projection(aspect), sun)
}

fn luminance(image: &Image, x: u32, y: u32) -> f32 {
    let p = image.get_pixel(x.min(WIDTH - 1), y.min(HEIGHT - 1));
    (p[0] as f32 + p[1] as f32 + p[2] as f32) / 3.0
}

/// The mean brightening of `on` over `off` in the 3 × 3 pixels around `at`.
fn brightening(on: &Image, off: &Image, at: Vec2) -> f32 {
    let mut sum = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            let (x, y) = ((at.x as i32 + dx) as u32, (at.y as i32 + dy) as u32);
            sum += luminance(on, x, y) - luminance(off, x, y);
        }
    }
    sum / 9.0
}

fn largest_difference(a: &Image, b: &Image) -> u8 {
    a.pixels()
        .zip(b.pixels())
        .map(|(p, q)| (0..3).map(|c| p[c].abs_diff(q[c])).max().unwrap_or(0))
        .max()
        .unwrap_or(0)
}

/// A camera near the cloth scene looking `yaw` and `pitch` (radians) off the sun.
fn off_the_sun(sun: Vec3, yaw: f32, pitch: f32) -> Camera {
    let d = glam::Quat::from_rotation_y(yaw) * sun;
    let d = Vec3::new(d.x, d.y + pitch, d.z);
    looking(Vec3::new(0.0, 1.5, 8.0), d)
}

#[test]
fn the_flare_lies_on_the_sun_centre_line_and_nowhere_else() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    let camera = off_the_sun(sun, 0.35, -0.15);
    let at = sun_ndc(&camera, sun).expect("the sun in the picture");
    assert!(at.length() > 0.4 && at.length() < 0.9, "the sun at {at}");
    let (on, off) = fixture.with_and_without_flare(&camera);
    let aspect = WIDTH as f32 / HEIGHT as f32;
    let elements: Vec<_> = HALOS.iter().chain(&BURSTS).collect();
    // Filled elements (glows, hexagons) off the sun brighten their centres.
    let mut checked = 0;
    for e in elements
        .iter()
        .filter(|e| e.distance > 0.0 && e.tile != 1 && e.tile != 3)
    {
        let center = render::element_center(at, e);
        let gain = brightening(&on, &off, to_pixel(center));
        assert!(
            gain > 8.0,
            "element at distance {} brightened by {gain}",
            e.distance
        );
        checked += 1;
    }
    assert!(checked >= 3);
    // Outside every element's quad the picture is untouched.
    let mut outside = 0;
    for y in (0..HEIGHT).step_by(3) {
        for x in (0..WIDTH).step_by(3) {
            let ndc = Vec2::new(
                (x as f32 + 0.5) / WIDTH as f32 * 2.0 - 1.0,
                1.0 - (y as f32 + 0.5) / HEIGHT as f32 * 2.0,
            );
            let covered = elements.iter().any(|e| {
                let d = (ndc - render::element_center(at, e)).abs();
                d.x <= e.size / aspect + 0.02 && d.y <= e.size + 0.02
            });
            if !covered {
                outside += 1;
                assert_eq!(on.get_pixel(x, y), off.get_pixel(x, y), "pixel ({x}, {y})");
            }
        }
    }
    assert!(outside > 500, "only {outside} pixels off the flare");
}

#[test]
fn no_flare_with_the_sun_behind_the_camera() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    let camera = looking(Vec3::new(0.0, 1.5, 8.0), Vec3::new(-sun.x, 0.1, -sun.z));
    assert_eq!(sun_ndc(&camera, sun), None);
    let (on, off) = fixture.with_and_without_flare(&camera);
    assert_eq!(largest_difference(&on, &off), 0);
    let passes: Vec<_> = fixture
        .sim
        .pass_times()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(!passes.contains(&"flare"), "{passes:?}");
}

#[test]
fn no_flare_with_the_sun_behind_the_cloth_and_one_without_the_cloth() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    // From 3 m in front of the cloth's middle, looking at the sun through it.
    let middle = fixture.body().position.iter().copied().sum::<Vec3>() / 144.0;
    let d = glam::Quat::from_rotation_y(0.15) * sun;
    let camera = looking(middle - sun * 3.0, d);
    let at = sun_ndc(&camera, sun).expect("the sun in the picture");
    assert!(at.length() > 0.12 && at.length() < 0.5, "{at}");
    let (on, off) = fixture.with_and_without_flare(&camera);
    assert_eq!(
        largest_difference(&on, &off),
        0,
        "the flare shows through the cloth"
    );
    // The same view with the cloth out of the way: the flare (and the glare) appear.
    fixture
        .body()
        .position
        .iter_mut()
        .for_each(|p| *p += Vec3::new(0.0, 400.0, 0.0));
    let (on, off) = fixture.with_and_without_flare(&camera);
    let e = &HALOS[3];
    let gain = brightening(&on, &off, to_pixel(render::element_center(at, e)));
    assert!(gain > 8.0, "unoccluded, the flare brightened by {gain}");
}

#[test]
fn looking_into_the_sun_whitens_the_picture() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    let camera = looking(Vec3::new(0.0, 1.5, 8.0), sun);
    let at = sun_ndc(&camera, sun).expect("the sun in the picture");
    assert!(at.length() < 0.01);
    let (on, off) = fixture.with_and_without_flare(&camera);
    let mean = |image: &Image| {
        image
            .pixels()
            .map(|p| (p[0] as f64 + p[1] as f64 + p[2] as f64) / 3.0)
            .sum::<f64>()
            / (WIDTH * HEIGHT) as f64
    };
    let darkest = on.pixels().map(|p| p[0].min(p[1]).min(p[2])).min().unwrap();
    assert!(
        mean(&on) > mean(&off) + 60.0,
        "{} vs {}",
        mean(&on),
        mean(&off)
    );
    // Every pixel at least 0.85 white: the overlay's opacity with the sun at the centre.
    assert!(darkest as f32 >= 255.0 * 0.85 * 0.99, "darkest {darkest}");
}

#[test]
fn two_droplets_blend_back_to_front() {
    let mut fixture = Fixture::open(
        r#"
        kind = "particles"
        scene = "fountain"
        [fountain]
        rate = 0.0
        surface_nodes = 32
        "#,
    );
    fixture.sim.render.flare = false;
    fixture.sim.render.particle_size = 0.3;
    let camera = Camera {
        target: Vec3::new(0.0, 2.2, 0.0),
        yaw: 0.0,
        pitch: 0.0,
        distance: 2.0,
    };
    let background = fixture.render(&camera);
    // Two round sprites (sprite 0), opaque, their colours as far apart as the tags allow.
    let round: Vec<u32> = (0..4000)
        .filter(|&t| render::particle_sprite(t) == 0)
        .collect();
    let redness = |t: &u32| render::particle_color(*t).x;
    let opacity = |t: &u32| render::particle_color(*t).w;
    let strong: Vec<u32> = round.into_iter().filter(|t| opacity(t) > 0.8).collect();
    let front_tag = *strong
        .iter()
        .min_by(|a, b| redness(a).total_cmp(&redness(b)))
        .unwrap();
    let back_tag = *strong
        .iter()
        .max_by(|a, b| redness(a).total_cmp(&redness(b)))
        .unwrap();
    let State::Fountain(fountain) = &mut fixture.sim.state else {
        panic!("a fountain")
    };
    // Stored front first: drawn as stored, the order would be wrong.
    for (z, tag) in [(0.5, front_tag), (-0.5, back_tag)] {
        fountain.position.push(Vec3::new(0.0, 2.2, z));
        fountain.velocity.push(Vec3::ZERO);
        fountain.age.push(0.0);
        fountain.hits.push(0);
        fountain.tag.push(tag);
    }
    let forward = (camera.target - camera.eye()).normalize();
    assert_eq!(
        sort::back_to_front(&fountain.position, camera.eye(), forward),
        vec![1, 0]
    );
    let image = fixture.render(&camera);
    let center = textures::sprite_texel(0, textures::SPRITE_SIZE / 2, textures::SPRITE_SIZE / 2);
    let texel = Vec4::from_array(center.map(|c| c as f32 / 255.0));
    let (x, y) = (WIDTH / 2, HEIGHT / 2);
    let bg = background.get_pixel(x, y);
    let over = |color: Vec4, under: Vec3| {
        let c = color * texel;
        c.truncate() * c.w + under * (1.0 - c.w)
    };
    let under = Vec3::new(bg[0] as f32, bg[1] as f32, bg[2] as f32) / 255.0;
    let (front, back) = (
        render::particle_color(front_tag),
        render::particle_color(back_tag),
    );
    let right = over(front, over(back, under)) * 255.0;
    let wrong = over(back, over(front, under)) * 255.0;
    let p = image.get_pixel(x, y);
    let got = Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32);
    assert!(
        (got - right).abs().max_element() <= 6.0,
        "got {got}, back to front {right}"
    );
    assert!(
        (right - wrong).abs().max_element() > 25.0,
        "{right} vs {wrong}"
    );
}

#[test]
fn the_sky_has_no_seam_at_a_cube_face_edge() {
    // Pixels finer than the cube map's texels (0.1° against 0.35°), so a pixel next to the
    // edge samples within half a texel of it, where a face's own wrapping would show.
    let (width, height) = (768, 432);
    let mut fixture = Fixture::sized(CLOTH, width, height);
    fixture.sim.render.flare = false;
    // Looking along the edge between the −x and −z faces (x = z), up a little: the edge is
    // the picture's middle column, the mountains cross it, the cloth and the sun are far out
    // of view.
    let eye = Vec3::new(-20.0, 3.0, 20.0);
    let camera = looking(eye, Vec3::new(-1.0, 0.08, -1.0));
    let image = fixture.render(&camera);
    // The rows of sky, down to just above the horizon (the ground's fog begins there).
    let clip = camera.projection(width as f32 / height as f32) * camera.view();
    let horizon = clip.project_point3(eye + Vec3::new(-1000.0, 0.0, -1000.0));
    let rows = ((0.5 - 0.5 * horizon.y) * height as f32 - 2.0) as u32;
    assert!(rows > height / 3 && rows < height, "{rows} rows of sky");
    let column_step = |c: u32| -> f32 {
        (0..rows)
            .map(|y| {
                let (p, q) = (image.get_pixel(c, y), image.get_pixel(c + 1, y));
                (0..3).map(|k| p[k].abs_diff(q[k]) as f32).sum::<f32>()
            })
            .sum()
    };
    let seam = column_step(width / 2 - 1);
    let around = (width / 2 - 24..width / 2 + 24)
        .filter(|&c| c != width / 2 - 1)
        .map(column_step)
        .fold(0.0, f32::max);
    eprintln!("seam {seam}, around {around}, rows {rows}");
    assert!(
        seam <= 1.5 * around + 0.5 * rows as f32,
        "seam {seam} against at most {around} elsewhere"
    );
}

/// Pixels where `a` and `b` differ (any channel by more than 8).
fn differs(a: &Image, b: &Image, at: Vec2) -> bool {
    let (p, q) = (
        a.get_pixel(at.x as u32, at.y as u32),
        b.get_pixel(at.x as u32, at.y as u32),
    );
    (0..3).any(|c| p[c].abs_diff(q[c]) > 8)
}

#[test]
fn the_cloth_and_the_jelly_are_drawn_where_their_nodes_project() {
    for text in [CLOTH, JELLY] {
        let mut fixture = Fixture::open(text);
        fixture.sim.render.flare = false;
        let camera = Camera::framing(&fixture.sim.bounds());
        let aspect = WIDTH as f32 / HEIGHT as f32;
        let clip = camera.projection(aspect) * camera.view();
        let with = fixture.render(&camera);
        let nodes = fixture.body().position.clone();
        fixture
            .body()
            .position
            .iter_mut()
            .for_each(|p| *p += Vec3::new(0.0, 400.0, 0.0));
        let without = fixture.render(&camera);
        let pixels: Vec<Vec2> = nodes
            .iter()
            .map(|p| {
                let ndc = clip.project_point3(*p);
                to_pixel(Vec2::new(ndc.x, ndc.y))
            })
            .collect();
        let (low, high) = pixels.iter().fold(
            (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
            |(l, h), p| (l.min(*p), h.max(*p)),
        );
        assert!(
            high.x - low.x > 10.0 && high.y - low.y > 10.0,
            "{low} {high}"
        );
        // Inside: points between the projected nodes (each midway to a neighbour node).
        let inside = pixels
            .windows(2)
            .map(|w| 0.5 * (w[0] + w[1]))
            .filter(|p| (*p - low).min_element() > 2.0 && (high - *p).min_element() > 2.0);
        let (mut hits, mut total) = (0, 0);
        for p in inside {
            total += 1;
            hits += usize::from(differs(&with, &without, p));
        }
        assert!(
            total > 10 && hits * 10 >= total * 9,
            "{hits} of {total} covered"
        );
        // Outside the projected box (2 px margin), nothing changed.
        for (x, y, p) in with.enumerate_pixels() {
            let at = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            if (low - at).max_element() > 2.0 || (at - high).max_element() > 2.0 {
                assert_eq!(
                    p,
                    without.get_pixel(x, y),
                    "({x}, {y}) outside the body changed"
                );
            }
        }
    }
}

#[test]
fn every_view_of_every_scene_draws_without_a_gl_error() {
    for (text, passes) in [
        (FOUNTAIN, ["water", "particles"]),
        (CLOTH, ["surface", "springs"]),
        (JELLY, ["surface", "springs"]),
    ] {
        let mut fixture = Fixture::open(text);
        for _ in 0..3 {
            fixture.sim.step().expect("a step");
        }
        let camera = Camera::framing(&fixture.sim.bounds());
        let mut seen = Vec::new();
        for view in 0..fixture.sim.views().len() {
            fixture.sim.set_view(view);
            assert_eq!(fixture.sim.view(), view);
            fixture.render(&camera);
            seen.extend(fixture.sim.pass_times().into_iter().map(|(name, _)| name));
        }
        for pass in ["sky", "sun", "opaque", "present"].iter().chain(&passes) {
            assert!(seen.contains(pass), "{pass} not among {seen:?}");
        }
    }
}

/// F1–F3 switch scenes under a renderer made for another: the picture after each switch is the
/// one a renderer made for that preset draws (its sky, sun, pieces, fabric and skin), and not
/// the one before the switch. (One headless context at a time: the fresh pictures first.)
#[test]
fn a_scene_switch_draws_like_a_renderer_made_for_the_new_scene() {
    let camera = looking(Vec3::new(0.5, 2.0, 5.0), Vec3::new(-0.1, -0.25, -1.0));
    let switches = [
        (KeyCode::F3, "jelly"),
        (KeyCode::F1, "fountain"),
        (KeyCode::F2, "cloth"),
    ];
    let fresh: Vec<Image> = switches
        .iter()
        .map(|(_, preset)| {
            let text = std::fs::read_to_string(format!("scenes/particles/{preset}.toml"))
                .expect("the preset");
            Fixture::open(&text).render(&camera)
        })
        .collect();
    let mut switched = Fixture::open(CLOTH);
    let mut before = switched.render(&camera);
    for ((key, preset), fresh) in switches.iter().zip(&fresh) {
        assert!(switched.sim.key(*key), "{key:?} switches scenes");
        assert_eq!(switched.sim.scene.which.name(), *preset);
        let after = switched.render(&camera);
        assert_eq!(
            largest_difference(&after, fresh),
            0,
            "{preset} after a switch"
        );
        assert!(
            largest_difference(&after, &before) > 40,
            "{preset} looks like the scene before it"
        );
        before = after;
    }
}

/// The droplets' shared path (the buffers a CUDA solver fills through interop, filled here from
/// the host): drawn as points through the order and made into quads by the geometry shader,
/// each with the colour and sprite its tag gives (the shader's hash is the CPU's), with the
/// basin's water from its shared mesh (the `water` kernel's layout), the picture is the CPU
/// path's; it differs from the picture without droplets, from the one where every tag is 0
/// (so the tags are read), and the water moves with its buffer.
#[test]
fn droplets_from_the_shared_buffers_draw_as_the_cpu_path_does() {
    let mut fixture = Fixture::open(FOUNTAIN);
    for _ in 0..60 {
        fixture.sim.step().expect("a step");
    }
    let camera = looking(Vec3::new(0.0, 1.6, 2.5), Vec3::new(0.0, -0.05, -1.0));
    let settings = render::RenderSettings {
        flare: false,
        ..Default::default()
    };
    let State::Fountain(f) = &fixture.sim.state else {
        panic!("a fountain");
    };
    let n = f.len();
    assert_eq!(f.tag.len(), n);
    assert!(n > 500, "{n} droplets");
    let eye = camera.eye();
    let order = sort::back_to_front(&f.position, eye, (camera.target - eye).normalize());
    let gl = fixture.headless.gl();
    let mut renderer = render::Renderer::new(Rc::clone(&gl), PassClock::Finish, &fixture.sim.scene)
        .expect("a renderer");
    let (state, scene) = (&fixture.sim.state, &fixture.sim.scene);
    let mut draw = |renderer: &mut render::Renderer, shared: Option<usize>, order: &[u32]| {
        fixture
            .headless
            .capture(|output| {
                renderer.draw(state, order, shared, scene, &settings, &camera, output)
            })
            .expect("a frame without GL errors")
    };
    let cpu = draw(&mut renderer, None, &order);
    let State::Fountain(f) = state else {
        unreachable!()
    };
    let buffers = renderer.shared_buffers(f, n, &settings).expect("buffers");
    let water = buffers.water.expect("the water is drawn");
    let mut vertices = Vec::new();
    render::water::vertices(f, &mut vertices);
    fill(&gl, water.buffer, bytemuck::cast_slice(&vertices));
    let flat = |v: &[Vec3]| v.iter().flat_map(|p| p.to_array()).collect::<Vec<f32>>();
    let data: [Vec<u8>; 5] = [
        bytemuck::cast_slice(&flat(&f.position)).to_vec(),
        bytemuck::cast_slice(&flat(&f.velocity)).to_vec(),
        bytemuck::cast_slice(&f.age).to_vec(),
        bytemuck::cast_slice(&order).to_vec(),
        bytemuck::cast_slice(&f.tag).to_vec(),
    ];
    let names = [
        buffers.position,
        buffers.velocity,
        buffers.age,
        buffers.order,
        buffers.tag,
    ];
    for (name, bytes) in names.iter().zip(&data) {
        fill(&gl, name.expect("a buffer"), bytes);
    }
    let shared = draw(&mut renderer, Some(n), &[]);
    let none = draw(&mut renderer, Some(0), &[]);
    fill(&gl, buffers.tag.expect("a buffer"), &vec![0u8; 4 * n]);
    let untagged = draw(&mut renderer, Some(n), &[]);
    let mut raised = f.clone();
    raised.surface.height.iter_mut().for_each(|u| *u += 0.2);
    render::water::vertices(&raised, &mut vertices);
    fill(&gl, water.buffer, bytemuck::cast_slice(&vertices));
    let water_moved = draw(&mut renderer, Some(0), &[]);
    renderer.delete();
    let moved = largest_difference(&none, &water_moved);
    assert!(moved > 20, "the water follows its buffer by only {moved}");
    let difference = largest_difference(&cpu, &shared);
    assert!(difference <= 2, "shared path off by {difference} of 255");
    let by_tag = largest_difference(&shared, &untagged);
    assert!(by_tag > 20, "the tags change the picture by only {by_tag}");
    let droplets = cpu
        .pixels()
        .zip(none.pixels())
        .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > 8))
        .count();
    assert!(droplets > 100, "{droplets} pixels show droplets");
}

/// Writes `bytes` at the start of GL buffer `name` (the host standing in for CUDA's interop).
fn fill(gl: &glow::Context, name: u32, bytes: &[u8]) {
    use glow::HasContext;
    let buffer = glow::NativeBuffer(std::num::NonZeroU32::new(name).expect("a buffer"));
    // SAFETY: GL calls on the current context; the buffer holds at least `bytes`.
    unsafe {
        gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
        gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytes);
        gl.bind_buffer(glow::ARRAY_BUFFER, None);
    }
}

/// A body's shared path (the skin's vertex buffer and the nodes' and springs' point buffers a
/// CUDA solver writes through interop with the `surface` and `body_points` kernels, filled here
/// from the host by the CPU's builders): the cloth and the jelly, skin and nodes shown, draw as
/// the CPU path does; and the picture follows the buffers, not the host's body (a skin and
/// nodes written 0.3 m higher draw elsewhere).
#[test]
fn bodies_from_the_shared_buffers_draw_as_the_cpu_path_does() {
    use fluidlab::sims::particles::render::{nodes, surface};
    for text in [CLOTH, JELLY] {
        let mut fixture = Fixture::open(text);
        for _ in 0..10 {
            fixture.sim.step().expect("a step");
        }
        let camera = Camera::framing(&fixture.sim.bounds());
        let settings = render::RenderSettings {
            flare: false,
            view: 2,
            ..Default::default()
        };
        let gl = fixture.headless.gl();
        let mut renderer =
            render::Renderer::new(Rc::clone(&gl), PassClock::Finish, &fixture.sim.scene)
                .expect("a renderer");
        let (state, scene) = (&fixture.sim.state, &fixture.sim.scene);
        let State::Body(body) = state else {
            panic!("a body");
        };
        let mut draw = |renderer: &mut render::Renderer, shared: Option<usize>| {
            fixture
                .headless
                .capture(|output| {
                    renderer.draw(state, &[], shared, scene, &settings, &camera, output)
                })
                .expect("a frame without GL errors")
        };
        let cpu = draw(&mut renderer, None);
        let buffers = renderer.body_buffers(body, &settings).expect("buffers");
        let (skin_buffer, skin) = buffers.skin.expect("the skin shown");
        let (skin_buffer, skin) = (skin_buffer, skin.clone());
        let (points_buffer, lines_buffer) = (
            buffers.points.expect("the nodes shown"),
            buffers.lines.expect("the springs shown"),
        );
        let write = |body: &fluidlab::sims::particles::body::Body| {
            let (mut normals, mut vertices) = (Vec::new(), Vec::new());
            surface::vertices(&skin, body, &mut normals, &mut vertices);
            fill(&gl, skin_buffer, bytemuck::cast_slice(&vertices));
            let (mut points, mut lines) = (Vec::new(), Vec::new());
            nodes::body_points(body, &settings, &mut points, &mut lines);
            fill(&gl, points_buffer, bytemuck::cast_slice(&points));
            fill(&gl, lines_buffer, bytemuck::cast_slice(&lines));
        };
        write(body);
        let shared = draw(&mut renderer, Some(body.len()));
        let mut higher = body.clone();
        higher
            .position
            .iter_mut()
            .for_each(|p| *p += Vec3::new(0.0, 0.3, 0.0));
        write(&higher);
        let moved = draw(&mut renderer, Some(body.len()));
        renderer.delete();
        let difference = largest_difference(&cpu, &shared);
        assert!(difference <= 2, "shared path off by {difference} of 255");
        let changed = cpu
            .pixels()
            .zip(moved.pixels())
            .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > 8))
            .count();
        assert!(changed > 200, "{changed} pixels follow the buffers");
    }
}
