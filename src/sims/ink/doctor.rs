//! Ink's doctor checks: its kernels load, and the CUDA solver agrees with the CPU solver stage
//! by stage and over a short run, with Jacobi and with multigrid pressure, and after painting
//! obstacles and moving a disc (`cuda/parity.rs`; the obstacles' checks in
//! `cuda/parity_walls.rs`). The picture's interop path is checked by `fluidlab render` on an
//! ink scene (scripts/device-check.sh).

use super::cuda::kernels::InkKernels;
use super::cuda::{parity, parity_walls};
use crate::sims::doctor::{cuda_checks, Check};

/// Runs ink's checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let load = |device| {
        crate::cuda::context(device)
            .and_then(|context| InkKernels::load(&context, crate::cuda::sync_check_requested()?))
            .map(|kernels| {
                format!(
                    "{} kernels loaded, code from {}",
                    InkKernels::NAMES.len(),
                    kernels.origin()
                )
            })
            .map_err(|error| error.to_string())
    };
    cuda_checks(
        cuda_available,
        ("ink kernels", &load),
        &[
            ("ink parity: stages", parity::gpu_stages_check),
            ("ink parity: 20 steps", parity::gpu_run_check),
            ("ink parity: multigrid", parity::gpu_multigrid_check),
            (
                "ink parity: painting obstacles",
                parity_walls::gpu_set_solid_check,
            ),
            (
                "ink parity: moving walls",
                parity_walls::gpu_moving_walls_check,
            ),
            (
                "ink parity: walls at the edges",
                parity_walls::gpu_wall_edges_check,
            ),
        ],
        add,
    );
}
