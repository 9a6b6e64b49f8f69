//! Whether CUDA can run on this machine. Self-contained (cudarc and std only) because build.rs
//! includes this file too: it marks the tests that need a GPU (or need none) ignored from the
//! same answer the program acts on (docs/testing.md, "Skipped tests").

use cudarc::driver::{sys, CudaContext};

/// The oldest driver API version the CUDA backends run on (`cuDriverGetVersion`): CUDA 13.0.
pub const MIN_DRIVER_CUDA_VERSION: i32 = 13000;

/// Why CUDA cannot run on this machine, or `None` when it can.
pub fn unavailable() -> Option<String> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Some(
            "no NVIDIA CUDA driver was found (libcuda.so is not installed or not on the library path)"
                .into(),
        );
    }
    if let Err(e) = cudarc::driver::result::init() {
        return Some(format!("the CUDA driver did not initialise ({e})"));
    }
    // cudarc is bound to the CUDA 13.0 API (some entry points are 13.0's `_v2` names) and the
    // prebuilt PTX is ISA 9.0: an older driver would fail on a missing symbol, not cleanly.
    let mut version = 0;
    // SAFETY: writes one int; available in every driver version.
    if unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .is_ok()
        && version < MIN_DRIVER_CUDA_VERSION
    {
        return Some(format!(
            "the NVIDIA driver supports CUDA {}.{}, and this build needs CUDA 13.0 or newer \
             (driver 580 or newer)",
            version / 1000,
            version % 1000 / 10
        ));
    }
    match CudaContext::device_count() {
        Ok(0) => Some("the CUDA driver reports no GPU".into()),
        Ok(_) => None,
        Err(e) => Some(format!("the CUDA driver could not count GPUs ({e})")),
    }
}
