//! The particles kind's doctor checks: its kernels load, and every stage on the GPU agrees
//! with the CPU's (`cuda/parity.rs`: the fountain, the cloth under each integrator, the
//! jelly). The interop path is checked by the renderer once it draws from `write_gl`.

use super::cuda::{kernels, parity};
use crate::sims::doctor::{Check, Status};

/// Runs the particles checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let mut add = |name: &'static str, status: Status, detail: String| {
        add(Check {
            name,
            status,
            detail,
        })
    };
    let names = ["particles kernels", "particles parity"];
    if !cuda_available {
        for name in names {
            add(name, Status::Skip, "needs the CUDA driver".into());
        }
        return;
    }
    let device = crate::cuda::DEFAULT_DEVICE;
    let loaded = crate::cuda::context(device).and_then(|context| {
        crate::cuda::Module::load(
            &context,
            kernels::MODULE,
            kernels::NAMES,
            crate::cuda::sync_check_requested()?,
        )
    });
    match loaded {
        Ok(module) => add(
            names[0],
            Status::Pass,
            format!(
                "{} kernels loaded, code from {}",
                kernels::NAMES.len(),
                module.origin()
            ),
        ),
        Err(error) => add(names[0], Status::Fail, error.to_string()),
    }
    match parity::gpu_check(device) {
        Ok((true, detail)) => add(names[1], Status::Pass, detail),
        Ok((false, detail)) | Err(detail) => add(names[1], Status::Fail, detail),
    }
}
