//! The shared paths: the buffers a CUDA solver fills through interop (the droplets' and the
//! water's, a body's skin and points), filled here from the host, draw as the CPU path does.

use super::*;
use fluidlab::sims::particles::sort;
use std::rc::Rc;

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
    let arrow = fixture.sim.arrow_base();
    let mut draw = |renderer: &mut render::Renderer, shared: Option<usize>, order: &[u32]| {
        fixture
            .headless
            .capture(|output| {
                renderer.draw(
                    state, order, shared, scene, arrow, &settings, &camera, output,
                )
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
        let arrow = fixture.sim.arrow_base();
        let State::Body(body) = state else {
            panic!("a body");
        };
        let mut draw = |renderer: &mut render::Renderer, shared: Option<usize>| {
            fixture
                .headless
                .capture(|output| {
                    renderer.draw(state, &[], shared, scene, arrow, &settings, &camera, output)
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
