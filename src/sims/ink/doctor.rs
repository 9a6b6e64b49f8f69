//! Ink's doctor checks: its kernels load, and the CUDA solver agrees with the CPU solver stage
//! by stage and over a short run, with Jacobi and with multigrid pressure (`cuda/parity.rs`). The picture's interop path is checked by
//! `fluidlab render` on an ink scene (scripts/device-check.sh).

use super::cuda::kernels::InkKernels;
use super::cuda::parity;
use crate::sims::doctor::{Check, Status};

/// Runs ink's checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let mut add = |name: &'static str, status: Status, detail: String| {
        add(Check {
            name,
            status,
            detail,
        })
    };
    let names = [
        "ink kernels",
        "ink parity: stages",
        "ink parity: 20 steps",
        "ink parity: multigrid",
        "ink parity: painting obstacles",
    ];
    if !cuda_available {
        for name in names {
            add(name, Status::Skip, "needs the CUDA driver".into());
        }
        return;
    }
    let device = crate::cuda::DEFAULT_DEVICE;
    let kernels = crate::cuda::context(device)
        .and_then(|context| InkKernels::load(&context, crate::cuda::sync_check_requested()?))
        .map(|kernels| kernels.origin().to_string());
    match kernels {
        Ok(origin) => add(
            names[0],
            Status::Pass,
            format!(
                "{} kernels loaded, code from {origin}",
                InkKernels::NAMES.len()
            ),
        ),
        Err(error) => add(names[0], Status::Fail, error.to_string()),
    }
    for (name, check) in [
        (names[1], parity::gpu_stages_check as fn(usize) -> _),
        (names[2], parity::gpu_run_check),
        (names[3], parity::gpu_multigrid_check),
        (names[4], parity::gpu_set_solid_check),
    ] {
        match check(device) {
            Ok((true, detail)) => add(name, Status::Pass, detail),
            Ok((false, detail)) | Err(detail) => add(name, Status::Fail, detail),
        }
    }
}
