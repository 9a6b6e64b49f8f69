//! What a grid of N² nodes takes, in host and in GPU memory, on each backend, drawn or not: one
//! function for the checks before a grid is built (host memory in `sim.rs`, GPU memory in
//! `cuda::CudaPool::new_on`) and the panel's figure.

use super::surface::BYTES_PER_NODE;

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

/// What a grid of `nodes` a side takes on the CUDA backend (`cuda`) or the CPU one, drawn or
/// not. On the CPU backend everything is host memory: the state, and, drawn, the texels it
/// uploads, the indices, and the GL texture and index buffer, which the software renderer the
/// CPU backend draws with (Mesa llvmpipe) keeps in host memory too. On CUDA the state and, drawn,
/// the GL texture (written through interop) and index buffer are GPU memory; the host holds
/// the indices it builds.
pub fn grid_bytes(nodes: usize, cuda: bool, drawn: bool) -> GridBytes {
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
        let cpu = grid_bytes(8192, false, true);
        assert_eq!(cpu.state, 37 * count);
        assert_eq!(cpu.host, (37 + 16 + 16) * count + 2 * indices);
        assert_eq!((cpu.gpu, cpu.host), (0, cpu.state + cpu.drawing));
        assert_eq!(grid_bytes(8192, false, false).host, 37 * count);
        let cuda = grid_bytes(8192, true, true);
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
        let undrawn = grid_bytes(8192, true, false);
        assert_eq!((undrawn.host, undrawn.gpu, undrawn.drawing), (0, state, 0));
    }
}
