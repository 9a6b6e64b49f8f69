//! NVTX ranges around solver stages, so Nsight Systems shows each step's stages on the CPU
//! timeline (and, for the CUDA solver, above the kernels they launch). Built when build.rs finds
//! the NVTX 3 headers (`scripts/setup.sh` installs them from PyPI); otherwise every call is a
//! no-op. Without a profiler attached NVTX itself does nothing but return.

use std::ffi::CStr;

#[cfg(fluidlab_nvtx)]
mod ffi {
    use std::os::raw::{c_char, c_int};
    extern "C" {
        pub fn fluidlab_nvtx_push(name: *const c_char) -> c_int;
        pub fn fluidlab_nvtx_pop() -> c_int;
    }
}

/// Whether this build carries NVTX (the ranges reach a profiler when one is attached).
pub fn available() -> bool {
    cfg!(fluidlab_nvtx)
}

/// An open NVTX range; closed when dropped.
#[must_use = "the range closes when this guard is dropped"]
pub struct Range(());

/// Opens a range called `name` (a stage name) on this thread.
pub fn range(name: &CStr) -> Range {
    #[cfg(fluidlab_nvtx)]
    // SAFETY: a valid NUL-terminated string; NVTX copies what it keeps.
    unsafe {
        ffi::fluidlab_nvtx_push(name.as_ptr());
    }
    #[cfg(not(fluidlab_nvtx))]
    let _ = name;
    Range(())
}

impl Drop for Range {
    fn drop(&mut self) {
        #[cfg(fluidlab_nvtx)]
        // SAFETY: pops the range this guard pushed.
        unsafe {
            ffi::fluidlab_nvtx_pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the headers installed (scripts/setup.sh) the shim is linked, and without a tool
    /// attached NVTX answers pushes with NVTX_NO_PUSH_POP_TRACKING (-2).
    #[test]
    fn ranges_reach_nvtx_when_it_is_built_in() {
        let _range = range(c"compute_lambda");
        #[cfg(fluidlab_nvtx)]
        // SAFETY: as in `range`.
        unsafe {
            assert_eq!(ffi::fluidlab_nvtx_push(c"test".as_ptr()), -2);
            assert_eq!(ffi::fluidlab_nvtx_pop(), -2);
        }
        // scripts/setup.sh installs the headers here; build.rs must then build NVTX in.
        if std::path::Path::new(".tools/cuda/nvidia/cu13/include/nvtx3/nvToolsExt.h").exists() {
            assert!(
                available(),
                "NVTX headers are installed but build.rs did not build the shim"
            );
        }
    }
}
