//! The pool's byte model (`memory::grid_bytes`, the figures of the memory checks and the panel)
//! against what a pool holds, counted from its live buffers and the GL objects as GL reports
//! them (`PoolSim::held_bytes`), on the CPU undrawn and drawn; for CUDA's two drawing paths
//! only the parts they add, from the CPU renderer's GL objects and texels (the CUDA solver
//! itself runs only on the emulated driver and a GPU).

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::scene::Source;
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

/// The CPU figures equal the live counts, undrawn and drawn (the texels, the GL texture and
/// index buffer in llvmpipe's host memory, as GL reports them), plus, drawn, the indices the
/// renderer builds its index buffer from (live only in `Grid::new`: an upper bound by them).
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
    for nodes in [48, 130] {
        let count = nodes * nodes;
        let undrawn = open(nodes, false);
        let held = undrawn.held_bytes();
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
        let held = drawn.held_bytes();
        drawn.release_gl();
        let staging = 4 * strip_indices(nodes).len() as u64;
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
        let gl = renderer.gl_bytes();
        renderer.delete();
        let (bare, shared, copied) = (
            cuda(Drawing::Undrawn),
            cuda(Drawing::Interop),
            cuda(Drawing::HostCopy),
        );
        assert_eq!((shared.gpu - bare.gpu, shared.host - bare.host), (gl, 0));
        // Through the host: the texels and the GL objects the CPU's drawing holds.
        assert_eq!(copied.gpu, bare.gpu, "{nodes}²");
        assert_eq!(copied.host - bare.host, held.drawing, "{nodes}²");
    }
}
