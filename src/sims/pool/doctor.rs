//! The pool's doctor checks: its kernels load, and the CUDA solver agrees with the CPU solver
//! stage by stage and over a short run (`cuda/parity.rs`). The surface texture's interop path
//! is checked by `fluidlab render` on a pool scene (scripts/device-check.sh).

use super::cuda::kernels::PoolKernels;
use super::cuda::parity;
use crate::sims::doctor::{Check, Status};

/// Runs the pool's checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let mut add = |name: &'static str, status: Status, detail: String| {
        add(Check {
            name,
            status,
            detail,
        })
    };
    let names = ["pool kernels", "pool parity: stages", "pool parity: run"];
    if !cuda_available {
        for name in names {
            add(name, Status::Skip, "needs the CUDA driver".into());
        }
        return;
    }
    let device = crate::cuda::DEFAULT_DEVICE;
    let kernels = crate::cuda::context(device)
        .and_then(|context| PoolKernels::load(&context, crate::cuda::sync_check_requested()?))
        .map(|kernels| kernels.origin().to_string());
    match kernels {
        Ok(origin) => add(
            names[0],
            Status::Pass,
            format!(
                "{} kernels loaded, code from {origin}",
                PoolKernels::NAMES.len()
            ),
        ),
        Err(error) => add(names[0], Status::Fail, error.to_string()),
    }
    for (name, check) in [
        (names[1], parity::gpu_stages_check as fn(usize) -> _),
        (names[2], parity::gpu_run_check),
    ] {
        match check(device) {
            Ok((true, detail)) => add(name, Status::Pass, detail),
            Ok((false, detail)) | Err(detail) => add(name, Status::Fail, detail),
        }
    }
}
