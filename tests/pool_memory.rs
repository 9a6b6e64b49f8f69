//! The pool's byte model (`memory::grid_bytes`, the figures of the memory checks and the panel)
//! against what a pool holds, counted from its buffers and the GL objects as GL reports them
//! (`PoolSim::held_bytes`), on the CPU undrawn and drawn, and for CUDA's two drawing paths the
//! parts they add, from the same renderer and buffers (the CUDA solver itself runs only on the
//! emulated driver and a GPU).

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::scene::Source;
use fluidlab::sims::pool::cuda::texel_downloads;
use fluidlab::sims::pool::memory::{grid_bytes, Drawing, Solver};
use fluidlab::sims::pool::render::{strip_indices, PoolRenderer};
use fluidlab::sims::pool::PoolSim;
use fluidlab::sims::{Backend, OpenOptions, Sim};

fn open(nodes: usize, drawn: bool) -> PoolSim {
    let text = format!("kind = \"pool\"\n[pool]\nnodes = {nodes}\n[drops]\nrandom = 3\n");
    let source = Source::parse(&text, "t", "t.toml").expect("a kind");
    let options = OpenOptions {
        backend: Backend::Cpu,
        drawn,
        ..OpenOptions::default()
    };
    PoolSim::open_within(&source, &options, None).expect("the pool")
}

/// The CPU figures equal the counts, undrawn and drawn (the texels, the GL texture and index
/// buffer in llvmpipe's host memory, the indices built for it); CUDA's interop adds the GL
/// objects to GPU memory and the indices to the host's, and its path through the host adds
/// the texels, the heights and offsets copied back for them and the GL objects to host memory
/// (the figures before counted this path as interop: 16 + 12 + 16 bytes a node short).
#[test]
fn the_byte_model_counts_what_a_pool_holds_on_each_path() {
    let headless = Headless::new(64, 48).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    for nodes in [48, 130] {
        let count = nodes * nodes;
        let undrawn = open(nodes, false);
        let held = undrawn.held_bytes().expect("counted");
        assert_eq!(
            held,
            grid_bytes(nodes, Solver::Cpu, Drawing::Undrawn),
            "{nodes}²"
        );

        let mut drawn = open(nodes, true);
        drawn
            .attach_gl(headless.gl(), PassClock::Finish)
            .expect("attach");
        drawn.step().expect("a step");
        let camera = Camera::framing(&drawn.bounds());
        drawn.draw(&camera, headless.output()).expect("a frame");
        let held = drawn.held_bytes().expect("counted");
        drawn.release_gl();
        assert_eq!(
            held,
            grid_bytes(nodes, Solver::Cpu, Drawing::HostCopy),
            "{nodes}²"
        );

        // CUDA: the host keeps the flags and a copy of the state as a start builds it.
        let cuda = |drawing| grid_bytes(nodes, Solver::Cuda, drawing);
        let state = drawn.solver.as_cpu().expect("cpu").surface.bytes();
        assert_eq!(cuda(Drawing::Undrawn).host, state + count as u64);
        let renderer = PoolRenderer::new(headless.gl(), PassClock::Finish, nodes).expect("GL");
        let gl = renderer.gl_bytes();
        renderer.delete();
        let staging = 4 * strip_indices(nodes).len() as u64;
        let (height, offset) = texel_downloads(count);
        let downloads = 4 * height.len() as u64 + 8 * offset.len() as u64;
        let (bare, shared, copied) = (
            cuda(Drawing::Undrawn),
            cuda(Drawing::Interop),
            cuda(Drawing::HostCopy),
        );
        assert_eq!(
            (shared.gpu - bare.gpu, shared.host - bare.host),
            (gl, staging)
        );
        // Through the host: what the CPU's drawing holds (texels, GL objects, indices) and
        // the downloads.
        let cpu_drawing = held.drawing;
        assert_eq!(copied.gpu, bare.gpu, "{nodes}²");
        assert_eq!(copied.host - bare.host, cpu_drawing + downloads, "{nodes}²");
        assert_eq!(copied.drawing, cpu_drawing + downloads);
    }
}
