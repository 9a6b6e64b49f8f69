//! The pool's byte model (`memory::grid_bytes`, the figures of the memory checks and the panel)
//! against what a pool holds, counted from its live buffers and the GL objects as GL reports
//! them (`PoolSim::held_bytes`), on the CPU undrawn and drawn; for CUDA's two drawing paths
//! only the parts they add, from the CPU renderer's GL objects and texels (the CUDA solver
//! itself runs only on the emulated driver and a GPU).

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::scene::Source;
use fluidlab::sims::pool::memory::{self, grid_bytes, Drawing, Solver};
use fluidlab::sims::pool::render::{
    caustics_texture_bytes, land_tile_bytes, strip_indices, DrawScene, PoolRenderer, GRID_OBJECTS,
};
use fluidlab::sims::pool::PoolSim;
use fluidlab::sims::{Backend, OpenOptions, Sim};

/// A pool of `nodes`², with an island where `island`.
fn open(nodes: usize, drawn: bool, island: bool) -> PoolSim {
    let mut text = format!("kind = \"pool\"\n[pool]\nnodes = {nodes}\n[drops]\nrandom = 3\n");
    if island {
        text += "[[island]]\ncenter = [0.5, 0.5]\nradius = 0.2\n";
    }
    let source = Source::parse(&text, "t", "t.toml").expect("a kind");
    let options = OpenOptions {
        backend: Backend::Cpu,
        drawn,
        ..OpenOptions::default()
    };
    PoolSim::open_within(&source, &options, None).expect("the pool")
}

/// The CPU figures equal the live counts, undrawn and drawn (the texels, the GL textures and
/// index buffer in llvmpipe's host memory, as GL reports them, and the renderer's land nodes),
/// plus, drawn, the indices the renderer builds its index buffer from (live only in
/// `Grid::new`: an upper bound by them) and, in a scene without land, the land texture (8
/// bytes a node) and the land tiles (a byte per 2² cells), made with the first land: an upper
/// bound by them. Without the tiles in the model, a pool with an island held 36 B more than
/// it at 48² (6² tiles). With an island the model
/// left the land texture and the land nodes out: 9 bytes a node, 152,100 B at 130².
/// CUDA's parts are the model's own, checked here against the CPU renderer's GL objects and
/// texels only: its interop adds the GL objects to GPU memory and nothing held to the host's
/// (the host's peak is the state's copy a start builds), and its path through the host adds the
/// texels and the GL objects to host memory. What a CUDA pool holds is counted on the emulated
/// driver (tests/emulated_driver.rs) and a GPU only.
#[test]
fn the_byte_model_counts_what_a_pool_holds_on_each_path() {
    let headless = Headless::new(64, 48).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    for (nodes, island) in [(48, false), (130, false), (48, true), (130, true)] {
        let count = nodes * nodes;
        let undrawn = open(nodes, false, island);
        let held = undrawn.held_bytes();
        assert_eq!(
            held,
            grid_bytes(nodes, Solver::Cpu, Drawing::Undrawn),
            "{nodes}²"
        );

        let mut drawn = open(nodes, true, island);
        drawn
            .attach_gl(headless.gl(), PassClock::Finish)
            .expect("attach");
        drawn.step().expect("a step");
        let camera = Camera::framing(&drawn.bounds());
        drawn.draw(&camera, headless.output()).expect("a frame");
        let held = drawn.held_bytes();
        drawn.release_gl();
        let staging = 4 * strip_indices(nodes).len() as u64
            + if island {
                0
            } else {
                memory::LAND_TEXEL_BYTES * count as u64 + land_tile_bytes(nodes)
            };
        let model = grid_bytes(nodes, Solver::Cpu, Drawing::HostCopy);
        assert_eq!(
            (model.host, model.drawing, model.gpu),
            (held.host + staging, held.drawing + staging, 0),
            "{nodes}²"
        );

        // CUDA: the host keeps the flags and, at its peak, a copy of the state.
        let cuda = |drawing| grid_bytes(nodes, Solver::Cuda, drawing);
        let state = drawn.solver.as_cpu().expect("cpu").surface.bytes();
        assert_eq!(cuda(Drawing::Undrawn).host, state + count as u64);
        let renderer = PoolRenderer::new(headless.gl(), PassClock::Finish, nodes).expect("GL");
        // With the land texture and tiles the first frame with land makes.
        let gl =
            renderer.gl_bytes() + memory::LAND_TEXEL_BYTES * count as u64 + land_tile_bytes(nodes);
        renderer.delete();
        let (bare, shared, copied) = (
            cuda(Drawing::Undrawn),
            cuda(Drawing::Interop),
            cuda(Drawing::HostCopy),
        );
        // Interop: the GL objects on the GPU, the renderer's land nodes on the host.
        let land_nodes = memory::LAND_NODE_BYTES * count as u64;
        assert_eq!(
            (shared.gpu - bare.gpu, shared.host - bare.host),
            (gl, land_nodes)
        );
        // Through the host: the texels, the land nodes and the GL objects the CPU's drawing
        // holds.
        assert_eq!(copied.gpu, bare.gpu, "{nodes}²");
        let land = if island {
            0
        } else {
            memory::LAND_TEXEL_BYTES * count as u64 + land_tile_bytes(nodes)
        };
        assert_eq!(copied.host - bare.host, held.drawing + land, "{nodes}²");
    }
}

/// What a drawn pool holds in GL, from the renderer's own count at allocation
/// (`PoolRenderer::allocated`): its objects that grow with the grid sum to the model's figure
/// (`memory::gl_bytes`), each buffer and the caustics texture (every mip level, after a frame
/// has made them) are as large as GL reports, and a frame adds the box and the frame at the
/// output's size. The land texture (RG32F) and the land tiles (R8) are made by the first frame
/// with land; the model counts them always (an upper bound without land; without it the model was 8 bytes a node
/// short of a scene with land: 2,880,000 B at 600²). The model counted the surface texture and the caustics mesh only: at 600² (a
/// display mesh of every 2nd node, a 2048² caustics texture) 8.2 MiB (8,639,984 B) of the
/// 30.3 MiB (31,734,396 B) the renderer allocates.
#[test]
fn the_renderers_gl_objects_are_the_models() {
    let mut headless = Headless::new(64, 48).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    for nodes in [48, 130, 600] {
        let mut renderer =
            PoolRenderer::new(headless.gl(), PassClock::Finish, nodes).expect("the renderer");
        let allocated = renderer.allocated();
        let names: Vec<&str> = allocated.iter().map(|(name, _)| *name).collect();
        let strided = nodes > 513;
        assert_eq!(
            names.contains(&"display mesh"),
            strided,
            "{nodes}²: {names:?}"
        );
        let grid: u64 = allocated
            .iter()
            .filter(|(name, _)| GRID_OBJECTS.contains(name))
            .map(|(_, bytes)| bytes)
            .sum();
        let land = memory::LAND_TEXEL_BYTES * (nodes * nodes) as u64;
        let tiles = land_tile_bytes(nodes);
        assert_eq!(
            grid + land + tiles,
            memory::gl_bytes(nodes),
            "{nodes}²: {allocated:?}"
        );
        assert_eq!(renderer.gl_bytes(), grid);
        // The surface texture: a texel (RGBA32F) a node.
        assert_eq!(
            allocated[0],
            ("surface texture", 16 * (nodes * nodes) as u64)
        );
        for (name, reported) in renderer.reported_buffer_bytes() {
            let kept = allocated.iter().find(|(n, _)| *n == name).expect(name).1;
            assert_eq!(kept, reported, "{nodes}²: {name}");
        }
        let old_model = 16 * (nodes * nodes) as u64 + memory::index_bytes(nodes);
        println!("{nodes}²: GL objects of the grid {grid} B, the model before {old_model} B");
        // One node of land.
        let mut texels = vec![[0.0f32, 0.0, 0.0, 0.0]; nodes * nodes];
        texels[nodes * nodes / 2][3] = 1.0;
        renderer.upload(&texels);
        let scene = DrawScene {
            nodes,
            size: 2.0,
            depth: 1.0,
            light: [0.0, 1.0, 0.0],
            detail: false,
            far_taps: false,
            view: 0,
            time: 0.0,
            open: false,
        };
        let camera = Camera::framing(&fluidlab::scene::Aabb::new(
            [0.0, -1.0, 0.0],
            [2.0, 0.1, 2.0],
        ));
        headless
            .capture(|output| renderer.draw(&camera, output, &scene))
            .expect("a frame");
        let drawn = renderer.allocated();
        assert_eq!(drawn.len(), allocated.len() + 4, "{drawn:?}");
        assert_eq!(drawn[drawn.len() - 1], ("frame", 8 * 64 * 48));
        assert_eq!(drawn[drawn.len() - 2].0, "pool box");
        assert!(drawn.contains(&("land texture", land)), "{drawn:?}");
        assert!(drawn.contains(&("land tiles", tiles)), "{drawn:?}");
        assert_eq!(
            renderer.gl_bytes(),
            memory::gl_bytes(nodes),
            "{nodes}²: {drawn:?}"
        );
        // The caustics texture as GL holds it: R32F, each level half the one above, down to
        // 1 × 1.
        let texture = renderer.caustics_texture();
        let level = |level, parameter| {
            headless
                .context()
                .texture_level_parameter(texture, level, parameter)
                .expect("glGetTexLevelParameteriv")
        };
        let (mut reported, mut levels) = (0u64, 0);
        while level(levels, glow::TEXTURE_WIDTH) > 0 {
            let (width, height) = (
                level(levels, glow::TEXTURE_WIDTH),
                level(levels, glow::TEXTURE_HEIGHT),
            );
            let format = level(levels, glow::TEXTURE_INTERNAL_FORMAT);
            assert_eq!(format, glow::R32F as i32, "{nodes}²: level {levels}");
            reported += 4 * (width * height) as u64;
            levels += 1;
        }
        let kept = drawn.iter().find(|(n, _)| *n == "caustics texture");
        println!(
            "{nodes}²: caustics texture {} texels a side, {levels} levels, {reported} B",
            level(0, glow::TEXTURE_WIDTH)
        );
        assert_eq!(kept, Some(&("caustics texture", reported)), "{nodes}²");
        assert_eq!(reported, caustics_texture_bytes(nodes), "{nodes}²");
        renderer.delete();
    }
}

/// A grid larger than the GL's largest texture is refused before its surface texture is
/// allocated, with the limit named (GL_MAX_TEXTURE_SIZE; llvmpipe's is 16384): nothing of
/// that size is made.
#[test]
fn the_renderer_refuses_a_grid_over_the_gls_largest_texture() {
    let headless = Headless::new(64, 48).expect("headless OpenGL (EGL) context");
    let limit = PoolRenderer::max_texture_size(&headless.gl()).expect("GL_MAX_TEXTURE_SIZE");
    assert!(limit >= 1024, "{limit}");
    let error = PoolRenderer::new(headless.gl(), PassClock::Finish, limit + 1)
        .err()
        .expect("refused")
        .to_string();
    let n = limit + 1;
    assert_eq!(
        error,
        format!(
            "{n}² nodes need a {n}×{n} surface texture but this GL's textures are at most \
             {limit}×{limit} (GL_MAX_TEXTURE_SIZE)"
        )
    );
}
