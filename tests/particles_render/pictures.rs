//! What the scenes draw: two droplets blend back to front, the sky shows no seam at a cube
//! face's edge, the cloth and the jelly are drawn where their nodes project, every view of every
//! scene draws without a GL error, and a scene switch draws as a renderer made for the new scene.

use super::*;
use fluidlab::sims::particles::render::textures;
use fluidlab::sims::particles::sort;
use glam::Vec4;
use winit::keyboard::KeyCode;

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

/// The sky's cube map clamps to its edges on s, t and r and is sampled seamlessly, read back
/// from GL after a frame: the pixel test below cannot tell (on llvmpipe `GL_REPEAT` with
/// seamless filtering off draws no seam it sees), so the sampler's modes are checked.
#[test]
fn the_sky_cube_map_clamps_to_its_edges_and_is_sampled_seamlessly() {
    use glow::HasContext;
    let mut fixture = Fixture::open(CLOTH);
    let camera = looking(Vec3::new(-20.0, 3.0, 20.0), Vec3::new(-1.0, 0.08, -1.0));
    let _ = fixture.render(&camera);
    let texture = fixture.sim.renderer().expect("attached").sky_cubemap();
    let gl = fixture.headless.gl();
    // SAFETY: queries on the fixture's current context; the texture is the renderer's, alive.
    let (wraps, seamless) = unsafe {
        gl.bind_texture(glow::TEXTURE_CUBE_MAP, Some(texture));
        let wraps = [
            glow::TEXTURE_WRAP_S,
            glow::TEXTURE_WRAP_T,
            glow::TEXTURE_WRAP_R,
        ]
        .map(|axis| gl.get_tex_parameter_i32(glow::TEXTURE_CUBE_MAP, axis) as u32);
        gl.bind_texture(glow::TEXTURE_CUBE_MAP, None);
        (wraps, gl.is_enabled(glow::TEXTURE_CUBE_MAP_SEAMLESS))
    };
    assert_eq!(wraps, [glow::CLAMP_TO_EDGE; 3], "wrap s, t, r");
    assert!(seamless, "GL_TEXTURE_CUBE_MAP_SEAMLESS is off");
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
        // The wind arrow's handle (no wind blows) stands over the body and goes with it.
        let handle = {
            let ndc = clip.project_point3(fixture.sim.arrow_base());
            to_pixel(Vec2::new(ndc.x, ndc.y))
        };
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
        // The handle went with the body (before, it stayed where the body started).
        assert!(
            differs(&with, &without, handle),
            "the handle at {handle} stayed"
        );
        // Outside the projected box (2 px margin) and the handle, nothing changed.
        for (x, y, p) in with.enumerate_pixels() {
            let at = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let box_outside = (low - at).max_element() > 2.0 || (at - high).max_element() > 2.0;
            if box_outside && at.distance(handle) > 6.0 {
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
