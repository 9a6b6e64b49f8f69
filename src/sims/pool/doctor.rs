//! The pool's doctor checks: its kernels load, and the CUDA solver agrees with the CPU solver
//! stage by stage, over a short run and after a same-size restart (`cuda/parity.rs`). The
//! surface texture's interop path is checked by `fluidlab render` on a pool scene
//! (scripts/device-check.sh).

use super::cuda::kernels::PoolKernels;
use super::cuda::parity;
use crate::sims::doctor::{cuda_checks, Check};

/// Runs the pool's checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let load = |device| {
        crate::cuda::context(device)
            .and_then(|context| PoolKernels::load(&context, crate::cuda::sync_check_requested()?))
            .map(|kernels| {
                format!(
                    "{} kernels loaded, code from {}",
                    PoolKernels::NAMES.len(),
                    kernels.origin()
                )
            })
            .map_err(|error| error.to_string())
    };
    cuda_checks(
        cuda_available,
        ("pool kernels", &load),
        &[
            ("pool parity: stages", parity::gpu_stages_check),
            ("pool parity: run", parity::gpu_run_check),
            ("pool parity: restart", parity::gpu_restart_check),
        ],
        add,
    );
}
