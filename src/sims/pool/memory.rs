//! What a grid of N² nodes takes, in host and in GPU memory, on each backend, undrawn or drawn
//! by either path to the screen: one function for the checks before a grid is built (host and
//! GPU memory when a scene opens, `sim.rs`; GPU memory in `cuda::CudaPool::new_on` through
//! [`gpu_needed`]) and the panel's figure. `PoolSim::held_bytes` counts the live part from the
//! buffers and GL objects a running grid holds (tests/pool_memory.rs on the CPU).

use super::surface::BYTES_PER_NODE;

/// Which solver holds the state: where its bytes lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// The CPU solver: everything in host memory.
    Cpu,
    /// The CUDA solver: the state in GPU memory (and a copy of it on the host while it starts,
    /// restarts or is read back for a frame).
    Cuda,
}

/// How the surface reaches the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawing {
    /// Nothing draws it (`simulate`, `bench`).
    Undrawn,
    /// CUDA–GL interop: the kernel writes the GL texture, which lies in the CUDA GPU's memory
    /// with the index buffer. CUDA only.
    Interop,
    /// Through the host: the texels are built in host memory (on CUDA from the heights and
    /// offsets copied back) and uploaded. The CPU backend always draws so; CUDA falls back to
    /// it where its GPU does not render the GL context (Mesa's software GL on a GPU machine),
    /// and then the GL objects lie in host memory too (llvmpipe's).
    HostCopy,
}

/// A grid's memory: its parts, and where they lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridBytes {
    /// The solver's state ([`BYTES_PER_NODE`]; on CUDA with the reduction's partials).
    pub state: u64,
    /// What drawing it adds: the renderer's GL objects that grow with the grid ([`gl_bytes`]:
    /// the surface texture, 16 bytes a node, the caustics mesh's index buffer, about 8, the
    /// display mesh's and the caustics texture), the indices built on the host for them, and
    /// through the host the texels (16 a node) and, on CUDA, the heights and offsets copied
    /// back to build them (12 a node), all summed (the copies that never coexist too).
    pub drawing: u64,
    /// Of both, what lies in host memory (on CUDA its flags and, at the peak, a copy of the
    /// state, the largest of the copies that never coexist).
    pub host: u64,
    /// And what lies in GPU memory.
    pub gpu: u64,
}

/// Bytes of the caustics mesh's index buffer for `nodes` a side (`render::strip_indices`:
/// (N − 1)·(2N + 2) indices of 4 bytes, less the two joins the first and last rows leave out;
/// counted in, they made the figures 16 bytes more than the buffers drawn).
pub fn index_bytes(nodes: usize) -> u64 {
    let n = nodes.max(2);
    4 * ((n - 1) * (2 * n + 2) - 2) as u64
}

/// Bytes a node's texel takes (RGBA32F), in the GL texture and in the host's texels.
pub const TEXEL_BYTES: u64 = 16;

/// Bytes a node's texel of the land texture takes (RG32F), counted whether or not the scene
/// has land (an upper bound where it has none: painting adds land at any time).
pub const LAND_TEXEL_BYTES: u64 = 8;

/// Bytes a node takes in the renderer's host copy of which nodes are land (`PoolRenderer`'s
/// `land_nodes`, one `bool`).
pub const LAND_NODE_BYTES: u64 = 1;

/// Bytes of the GL objects the renderer makes for a grid of `nodes` a side, as it allocates
/// them (`PoolRenderer::allocated`, its `GRID_OBJECTS`): the surface texture (RGBA32F, 16 bytes
/// a node), the land texture (RG32F, 8 bytes a node) and the land tiles (R8, a byte per 8²
/// cells: with land only, both counted always), the
/// caustics mesh's index buffer (every node), the display mesh's (every s-th
/// node, grids over 513 nodes: at most 2.0 MiB, 0.7 MiB at 600²) and the caustics texture with
/// its mipmaps (R32F, 512² to 2048²: 1.3 to 21.3 MiB; on a GL whose textures are smaller than
/// 2048, at most that).
pub fn gl_bytes(nodes: usize) -> u64 {
    use super::render::{
        caustics_texture_bytes, display_mesh_nodes, display_stride, land_tile_bytes,
    };
    let n = nodes.max(2);
    let display = match display_stride(n) {
        1 => 0,
        _ => index_bytes(display_mesh_nodes(n)),
    };
    let per_node = TEXEL_BYTES + LAND_TEXEL_BYTES;
    per_node * (n * n) as u64
        + land_tile_bytes(n)
        + index_bytes(n)
        + display
        + caustics_texture_bytes(n)
}

/// Bytes a node's height and offset take when CUDA copies them back to build the texels
/// (`CudaPool::texels`).
pub const DOWNLOAD_BYTES: u64 = 4 + 8;

/// What a grid of `nodes` a side takes on `solver`'s backend, drawn as `drawing` says (the CPU
/// backend draws through the host whatever it is asked).
///
/// On the CPU backend everything is host memory: the state, and, drawn, the texels it uploads,
/// the indices, and the GL texture and index buffer, which the software renderer the CPU
/// backend draws with (Mesa llvmpipe) keeps in host memory too; the indices live only while
/// the renderer builds its grid, so the CPU's drawn figure is an upper bound by them (8 bytes
/// a node). On CUDA the state is GPU memory; the host holds its flags and, while the grid
/// starts or restarts (the state is built there and uploaded) or a frame is read back, a copy
/// of it. Drawn by interop the GL texture and index buffer are GPU memory; drawn through the
/// host, the texels and the GL objects are host memory. CUDA's host copies never coexist (the
/// state's, the indices built for the index buffer, the heights and offsets the texels are
/// built from): its host figure counts the largest, the state's.
pub fn grid_bytes(nodes: usize, solver: Solver, drawing: Drawing) -> GridBytes {
    let cuda = solver == Solver::Cuda;
    let drawing = match (cuda, drawing) {
        (false, Drawing::Interop) => Drawing::HostCopy,
        (_, drawing) => drawing,
    };
    let count = (nodes * nodes) as u64;
    let cpu_state = count * BYTES_PER_NODE as u64;
    let state = if cuda {
        super::cuda::gpu_bytes(nodes)
    } else {
        cpu_state
    };
    let gl = gl_bytes(nodes);
    // The indices the renderer builds its meshes from, one mesh at a time: the largest.
    let staging = index_bytes(nodes);
    // The renderer's host copy of which nodes are land, held while drawn.
    let land_nodes = LAND_NODE_BYTES * count;
    let through_host = TEXEL_BYTES * count + if cuda { DOWNLOAD_BYTES * count } else { 0 };
    let (drawing_host, drawing_gpu) = match drawing {
        Drawing::Undrawn => (0, 0),
        Drawing::Interop => (staging + land_nodes, gl),
        Drawing::HostCopy => (staging + land_nodes + through_host + gl, 0),
    };
    let host = if cuda {
        // Held: the flags and, through the host, the texels and the GL objects. Never
        // together: the state's copy (a start or restart), the indices (the renderer's
        // `Grid::new`) and the heights and offsets copied back (`CudaPool::texels`); the
        // largest of them, the state's copy, is the peak.
        let held = count
            + match drawing {
                Drawing::Undrawn => 0,
                Drawing::Interop => LAND_NODE_BYTES * count,
                Drawing::HostCopy => (TEXEL_BYTES + LAND_NODE_BYTES) * count + gl,
            };
        held + cpu_state
    } else {
        state + drawing_host
    };
    GridBytes {
        state,
        drawing: drawing_host + drawing_gpu,
        host,
        gpu: if cuda { state } else { 0 } + drawing_gpu,
    }
}

/// What a grid of `nodes` a side takes on `solver`'s backend, `drawn` or not, by the path
/// `interop` names (`None`: not known yet, until the first frame is drawn; counted as interop,
/// the path a CUDA solver takes where it can: a viewer opens its scene before its GL context
/// exists, and counting the path through the host there refused CUDA grids that open and run
/// by interop).
pub fn drawn_bytes(nodes: usize, solver: Solver, drawn: bool, interop: Option<bool>) -> GridBytes {
    let drawing = match (drawn, interop.unwrap_or(true)) {
        (false, _) => Drawing::Undrawn,
        (true, true) => Drawing::Interop,
        (true, false) => Drawing::HostCopy,
    };
    grid_bytes(nodes, solver, drawing)
}

/// GPU bytes that must be free for the CUDA solver to start a grid taking `new`, replacing one
/// taking `old` on the same device (`None`: nothing replaced there), `same_size` when the node
/// count stays. Free memory is measured with the old grid still held (its state and GL objects
/// are counted out of it). The same node count reuses the old buffers and GL objects (the state
/// is reset in place): nothing more. Another count allocates the new state while the old is
/// held, then the new GL objects once the old state is gone (the old GL objects go after the new
/// ones are made): the larger of the two.
pub fn gpu_needed(old: Option<GridBytes>, new: GridBytes, same_size: bool) -> u64 {
    match old {
        Some(_) if same_size => 0,
        Some(old) => new.state.max(new.gpu.saturating_sub(old.state)),
        None => new.gpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures the checks and the panel use, by backend and drawing path: the CPU's 37
    /// bytes of state a node plus, drawn, 16 of texels, 16 of surface texture, 8 of land texture,
    /// 1 of the renderer's land nodes, two index copies and the
    /// bounded GL objects (the display mesh's 513² indices, 2.0 MiB, the 2048² caustics
    /// texture with its mipmaps, 21.3 MiB, and the land tiles, a byte per 2² cells, 16 MiB); on CUDA the state on the GPU and a copy of it (and
    /// the flags) on the host; drawn by interop the GL objects on the GPU with the state (about
    /// 2.04 GiB of them at 8192²), the indices and land nodes on the host; drawn through the
    /// host the texels, the heights and offsets they are built from and the GL objects on the
    /// host (3.04 GiB more there than by interop). On CUDA the host's figure is its peak:
    /// what it holds and the largest of the copies that never coexist.
    #[test]
    fn a_grids_bytes_by_backend_and_drawing() {
        let n = 8192u64;
        let count = n * n;
        let indices = 4 * ((n - 1) * (2 * n + 2) - 2);
        assert_eq!(index_bytes(8192), indices);
        // The display mesh: every 16th node, 513 a side; the caustics texture 2048² and its
        // 11 mipmaps, 4 bytes a texel; the land tiles, 4096², a byte each.
        let bounded = 4 * (512 * 1028 - 2) + 4 * (4u64.pow(12) - 1) / 3 + 4096 * 4096;
        assert_eq!(gl_bytes(8192), (16 + 8) * count + indices + bounded);
        for drawing in [Drawing::HostCopy, Drawing::Interop] {
            let cpu = grid_bytes(8192, Solver::Cpu, drawing);
            assert_eq!(cpu.state, 37 * count);
            assert_eq!(cpu.host, (37 + 1 + 16 + 24) * count + 2 * indices + bounded);
            assert_eq!((cpu.gpu, cpu.host), (0, cpu.state + cpu.drawing));
        }
        assert_eq!(
            grid_bytes(8192, Solver::Cpu, Drawing::Undrawn).host,
            37 * count
        );
        let cuda = grid_bytes(8192, Solver::Cuda, Drawing::Interop);
        let state = crate::sims::pool::cuda::gpu_bytes(8192);
        assert!(state >= 37 * count && state < 38 * count, "{state}");
        assert_eq!(cuda.gpu, state + 24 * count + indices + bounded);
        // The host holds the flags, the renderer's land nodes and, at the peak, the state's
        // copy a start builds (the indices the renderer builds come after it is gone).
        assert_eq!(cuda.host, 39 * count);
        // The GL objects interop puts on the GPU: 2.04 GiB at 8192² (0.5 of them the land
        // texture).
        let gl = cuda.gpu - state;
        assert!(
            (2.03..2.05).contains(&(gl as f64 / f64::from(1 << 30))),
            "{gl}"
        );
        let copied = grid_bytes(8192, Solver::Cuda, Drawing::HostCopy);
        assert_eq!(copied.gpu, state);
        assert_eq!(copied.host, (38 + 1 + 16 + 24) * count + indices + bounded);
        let more = (copied.host - cuda.host) as f64 / f64::from(1 << 30);
        assert!((3.03..3.05).contains(&more), "{more}");
        // Until the first frame tells the path, the figures are interop's: the viewer opens
        // its scene before a GL context exists, and counting the host copy there refused an
        // 8192² CUDA scene with 4 GiB free (6.1 GiB asked) that opens and runs by interop.
        let unknown = drawn_bytes(8192, Solver::Cuda, true, None);
        assert_eq!(unknown, cuda);
        assert!(unknown.host < 4 << 30, "{}", unknown.host);
        let undrawn = grid_bytes(8192, Solver::Cuda, Drawing::Undrawn);
        assert_eq!(
            (undrawn.host, undrawn.gpu, undrawn.drawing),
            (38 * count, state, 0)
        );
    }

    /// A same-size restart of a drawn 8192² grid on an 8 GiB card (4.4 GiB held, 3.2 GiB free)
    /// goes ahead: it reuses the buffers. The check before asked for the whole new grid, state
    /// and GL objects, on top of the old one (4.4 GiB) and refused it. Another size asks the
    /// larger of its state and what its GL objects add once the old state is gone.
    #[test]
    fn a_same_size_restart_needs_no_more_gpu_memory() {
        let gib = |b: u64| b as f64 / f64::from(1 << 30);
        let big = grid_bytes(8192, Solver::Cuda, Drawing::Interop);
        assert!((4.2..4.4).contains(&gib(big.gpu)), "{}", gib(big.gpu));
        let free = 8 * (1u64 << 30) - (1 << 29) - big.gpu;
        assert!(
            big.gpu > free,
            "the old check refused: {} > {}",
            big.gpu,
            free
        );
        assert_eq!(gpu_needed(Some(big), big, true), 0);
        // The first grid on a device needs all of it.
        assert_eq!(gpu_needed(None, big, false), big.gpu);
        // 4096² → 8192²: the new state (2.3 GiB) while the old is held, then the new GL
        // objects (2.0 GiB) with the old state (0.6 GiB) gone: 3.7 GiB, not 4.3.
        let small = grid_bytes(4096, Solver::Cuda, Drawing::Interop);
        let grow = gpu_needed(Some(small), big, false);
        assert_eq!(grow, big.gpu - small.state);
        assert!((3.6..3.8).contains(&gib(grow)), "{}", gib(grow));
        // 8192² → 4096²: the small state alone.
        assert_eq!(gpu_needed(Some(big), small, false), small.state);
        // Undrawn, 1024² → 2048²: the new state.
        let (a, b) = (
            grid_bytes(1024, Solver::Cuda, Drawing::Undrawn),
            grid_bytes(2048, Solver::Cuda, Drawing::Undrawn),
        );
        assert_eq!(gpu_needed(Some(a), b, false), b.state);
    }
}
