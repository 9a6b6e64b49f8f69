//! What a grid of N² nodes takes, in host and in GPU memory, on each backend, drawn or not: one
//! function for the checks before a grid is built (host memory in `sim.rs`, GPU memory in
//! `cuda::CudaPool::new_on` through [`gpu_needed`]) and the panel's figure.
//!
//! Drawn on CUDA, the figures assume CUDA–GL interop: the GL texture and index buffer in GPU
//! memory, the kernel writing the texture. Where interop is unavailable (a headless render on
//! Mesa's EGL on a GPU machine: `write_texture` says false) the frames go through the host
//! instead (texels, downloads and a software GL's objects in host memory), which these figures
//! do not count.

use super::surface::BYTES_PER_NODE;

/// Which solver holds the state: where its bytes lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// The CPU solver: everything in host memory.
    Cpu,
    /// The CUDA solver: the state (and, drawn, the GL objects) in GPU memory.
    Cuda,
}

/// A grid's memory: its parts, and where they lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridBytes {
    /// The solver's state ([`BYTES_PER_NODE`]; on CUDA with the reduction's partials).
    pub state: u64,
    /// What drawing it adds: the renderer's surface texture (RGBA32F, 16 bytes a node) and the
    /// caustics mesh's index buffer (about 8 a node), and the host copies they are made from
    /// (the CPU backend's texels, 16 a node, and the indices, built on the host either way).
    pub drawing: u64,
    /// Of both, what lies in host memory.
    pub host: u64,
    /// And what lies in GPU memory.
    pub gpu: u64,
}

/// Bytes of the caustics mesh's index buffer for `nodes` a side (`render::grid::strip_indices`:
/// (N − 1)·(2N + 2) indices of 4 bytes, less the two the last row leaves out, counted in).
pub fn index_bytes(nodes: usize) -> u64 {
    4 * ((nodes.max(2) - 1) * (2 * nodes + 2)) as u64
}

/// What a grid of `nodes` a side takes on `solver`'s backend, drawn or not. On the CPU backend everything is host memory: the state, and, drawn, the texels it
/// uploads, the indices, and the GL texture and index buffer, which the software renderer the
/// CPU backend draws with (Mesa llvmpipe) keeps in host memory too. On CUDA the state and, drawn,
/// the GL texture (written through interop) and index buffer are GPU memory; the host holds
/// the indices it builds.
pub fn grid_bytes(nodes: usize, solver: Solver, drawn: bool) -> GridBytes {
    let cuda = solver == Solver::Cuda;
    let count = (nodes * nodes) as u64;
    let state = if cuda {
        super::cuda::gpu_bytes(nodes)
    } else {
        count * BYTES_PER_NODE as u64
    };
    let gl = 16 * count + index_bytes(nodes);
    let staging = index_bytes(nodes) + if cuda { 0 } else { 16 * count };
    let drawing = if drawn { gl + staging } else { 0 };
    let (host, gpu) = match (cuda, drawn) {
        (false, _) => (state + drawing, 0),
        (true, false) => (0, state),
        (true, true) => (staging, state + gl),
    };
    GridBytes {
        state,
        drawing,
        host,
        gpu,
    }
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

    /// The figures the checks and the panel use, by backend: the CPU's 37 bytes of state a node
    /// plus, drawn, 16 of texels, 16 of texture and two index copies; on CUDA the texture and
    /// the index buffer on the GPU with the state (about 1.5 GiB of them at 8192², which the
    /// GPU check left out), the indices on the host.
    #[test]
    fn a_grids_bytes_by_backend() {
        let n = 8192u64;
        let count = n * n;
        let indices = 4 * (n - 1) * (2 * n + 2);
        assert_eq!(index_bytes(8192), indices);
        let cpu = grid_bytes(8192, Solver::Cpu, true);
        assert_eq!(cpu.state, 37 * count);
        assert_eq!(cpu.host, (37 + 16 + 16) * count + 2 * indices);
        assert_eq!((cpu.gpu, cpu.host), (0, cpu.state + cpu.drawing));
        assert_eq!(grid_bytes(8192, Solver::Cpu, false).host, 37 * count);
        let cuda = grid_bytes(8192, Solver::Cuda, true);
        let state = crate::sims::pool::cuda::gpu_bytes(8192);
        assert!(state >= 37 * count && state < 38 * count, "{state}");
        assert_eq!(cuda.gpu, state + 16 * count + indices);
        assert_eq!(cuda.host, indices);
        // The GL objects the GPU check now counts: 1.5 GiB at 8192².
        let gl = cuda.gpu - state;
        assert!(
            (1.49..1.51).contains(&(gl as f64 / f64::from(1 << 30))),
            "{gl}"
        );
        let undrawn = grid_bytes(8192, Solver::Cuda, false);
        assert_eq!((undrawn.host, undrawn.gpu, undrawn.drawing), (0, state, 0));
    }

    /// A same-size restart of a drawn 8192² grid on an 8 GiB card (3.8 GiB held, 3.7 GiB free)
    /// goes ahead: it reuses the buffers. The check before asked for the whole new grid, state
    /// and GL objects, on top of the old one (3.8 GiB) and refused it. Another size asks the
    /// larger of its state and what its GL objects add once the old state is gone.
    #[test]
    fn a_same_size_restart_needs_no_more_gpu_memory() {
        let gib = |b: u64| b as f64 / f64::from(1 << 30);
        let big = grid_bytes(8192, Solver::Cuda, true);
        assert!((3.7..3.9).contains(&gib(big.gpu)), "{}", gib(big.gpu));
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
        // objects (1.5 GiB) with the old state (0.6 GiB) gone: 3.2 GiB, not 3.8.
        let small = grid_bytes(4096, Solver::Cuda, true);
        let grow = gpu_needed(Some(small), big, false);
        assert_eq!(grow, big.gpu - small.state);
        assert!((3.1..3.3).contains(&gib(grow)), "{}", gib(grow));
        // 8192² → 4096²: the small state alone.
        assert_eq!(gpu_needed(Some(big), small, false), small.state);
        // Undrawn, 1024² → 2048²: the new state.
        let (a, b) = (
            grid_bytes(1024, Solver::Cuda, false),
            grid_bytes(2048, Solver::Cuda, false),
        );
        assert_eq!(gpu_needed(Some(a), b, false), b.state);
    }
}
