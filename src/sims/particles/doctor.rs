//! The particles kind's doctor checks: its kernels load, every stage on the GPU agrees with
//! the CPU's (`cuda/parity.rs`: the fountain, the cloth under each integrator, the jelly), and
//! so do a body's statistics panel figures reduced on the GPU (`cuda/stats.rs`: the same
//! bodies and a 48² cloth; the viewer is the only other caller), the frame's end finds the
//! non-finite particles and nodes the CPU does (`cuda/frame_check.rs`), and live edits that
//! resize the fountain's buffers or restart a body step on (`cuda/live_edit_check.rs`). The
//! interop path is checked by `fluidlab render` on the fountain (scripts/device-check.sh).

use super::cuda::{frame_check, kernels, live_edit_check, parity, self_collide_check, stats};
use crate::sims::doctor::{cuda_checks, Check};

/// Runs the particles checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let load = |device| {
        crate::cuda::context(device)
            .and_then(|context| {
                crate::cuda::Module::load(
                    &context,
                    kernels::MODULE,
                    kernels::NAMES,
                    crate::cuda::sync_check_requested()?,
                )
            })
            .map(|module| {
                format!(
                    "{} kernels loaded, code from {}",
                    kernels::NAMES.len(),
                    module.origin()
                )
            })
            .map_err(|error| error.to_string())
    };
    cuda_checks(
        cuda_available,
        ("particles kernels", &load),
        &[
            ("particles parity", parity::gpu_check),
            ("particles statistics", stats::gpu_check),
            ("particles frame end", frame_check::gpu_check),
            ("particles live edits", live_edit_check::live_edit_check),
            ("particles self-collision", self_collide_check::gpu_check),
        ],
        add,
    );
}
