//! Host side of `kernels/pbf.cu`: the module's functions, looked up once by name, and a typed
//! launch helper that turns a launch failure into an error naming the kernel.
//!
//! A kernel that faults (an illegal address, say) does so after its launch returned; the error
//! surfaces at the next call that waits for the stream, or as the return value of a later,
//! innocent launch: CUDA's execution errors are sticky. With `FLUIDLAB_CUDA_SYNC_CHECK=1` every
//! launch is followed by a synchronisation, so the error names the kernel that really failed
//! (slow: a debugging switch; `scripts/device-check.sh` uses it on its first run).

use crate::sims::pbf::SolverError;
use cudarc::driver::{sys, CudaFunction, CudaModule, CudaStream, LaunchArgs, LaunchConfig};
use std::sync::Arc;

/// The environment variable that turns the per-launch synchronisation on.
pub const SYNC_CHECK_VARIABLE: &str = "FLUIDLAB_CUDA_SYNC_CHECK";

/// Whether a value of [`SYNC_CHECK_VARIABLE`] turns the check on: `1`, `true`, `yes` or `on`
/// (any case). Unset, empty, `0`, `false`, `no` and `off` leave it off; anything else is an
/// error, so a typo is not silently a run without the check.
pub fn sync_check_from(value: Option<&str>) -> Result<bool, String> {
    let Some(value) = value.map(str::trim) else {
        return Ok(false);
    };
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "" | "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!(
            "{SYNC_CHECK_VARIABLE}={value} is not understood: use 1 (synchronise and check after \
             every kernel launch) or 0"
        )),
    }
}

/// Whether this process asked for the per-launch check ([`SYNC_CHECK_VARIABLE`]).
pub fn sync_check_requested() -> Result<bool, SolverError> {
    let value = std::env::var(SYNC_CHECK_VARIABLE).ok();
    sync_check_from(value.as_deref()).map_err(SolverError::Params)
}

/// Whether `code` is an error of a kernel's execution, which CUDA reports from whatever call
/// comes next (a later launch included) and keeps reporting: the context is unusable after it.
pub fn is_execution_error(code: sys::CUresult) -> bool {
    use sys::CUresult::*;
    matches!(
        code,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
    )
}

/// The message for a failed launch of `kernel`: `code` and its driver `description`, and who is
/// to blame. Without the sync check an execution error belongs to some kernel queued before,
/// so the message says so and how to find it; with the check (`synchronised`: the stream was
/// clean after every earlier launch) it is this kernel's own.
pub fn launch_failure(
    kernel: &str,
    code: sys::CUresult,
    description: &str,
    synchronised: bool,
) -> String {
    if synchronised {
        format!("CUDA kernel `{kernel}` failed: {description}")
    } else if is_execution_error(code) {
        format!(
            "CUDA kernel `{kernel}` could not be launched: {description}; this is an execution \
             error of a kernel queued earlier, not necessarily `{kernel}`: rerun with \
             {SYNC_CHECK_VARIABLE}=1 to name the kernel that failed"
        )
    } else {
        format!("CUDA kernel `{kernel}` failed to launch: {description}")
    }
}

/// The message for an error found when the host waits for a frame (`what` was being waited
/// for), with the way to find the failing kernel when the sync check is off.
pub fn wait_failure(
    what: &str,
    code: sys::CUresult,
    description: &str,
    synchronised: bool,
) -> String {
    if !synchronised && is_execution_error(code) {
        format!(
            "{what}: {description}; rerun with {SYNC_CHECK_VARIABLE}=1 to name the kernel that \
             failed"
        )
    } else {
        format!("{what}: {description}")
    }
}

/// Threads per block of the per-particle kernels (`PBF_BLOCK` in pbf.cu).
pub const BLOCK: u32 = 256;
/// Threads per block of `scan_blocks` (`SCAN_THREADS`).
pub const SCAN_THREADS: u32 = 512;
/// Values one `scan_blocks` block scans (`SCAN_ITEMS_PER_BLOCK`).
pub const SCAN_ITEMS_PER_BLOCK: usize = 2048;

/// One kernel of the module and its name.
pub struct Kernel {
    /// The `extern "C"` name, as Nsight and errors show it.
    pub name: &'static str,
    function: CudaFunction,
    /// The stream every launch is synchronised on when the sync check is on.
    checked_on: Option<Arc<CudaStream>>,
}

impl Kernel {
    fn load(
        module: &Arc<CudaModule>,
        name: &'static str,
        checked_on: Option<&Arc<CudaStream>>,
    ) -> Result<Self, SolverError> {
        let function = module.load_function(name).map_err(|e| {
            SolverError::Backend(format!(
                "CUDA kernel `{name}` is missing from the module: {e}"
            ))
        })?;
        Ok(Self {
            name,
            function,
            checked_on: checked_on.cloned(),
        })
    }

    /// The function, for [`cudarc::driver::CudaStream::launch_builder`].
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// Launches a builder filled with this kernel's arguments over `config`.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameter list in `kernels/pbf.cu`, and every
    /// buffer must hold the elements the kernel indexes.
    pub unsafe fn launch(
        &self,
        builder: &mut LaunchArgs<'_>,
        config: LaunchConfig,
    ) -> Result<(), SolverError> {
        let synchronised = self.checked_on.is_some();
        let fail = |e: cudarc::driver::DriverError| {
            SolverError::Backend(launch_failure(self.name, e.0, &e.to_string(), synchronised))
        };
        builder.launch(config).map_err(fail)?;
        if let Some(stream) = &self.checked_on {
            stream.synchronize().map_err(fail)?;
        }
        Ok(())
    }
}

macro_rules! kernels {
    ($($name:ident),* $(,)?) => {
        /// Every kernel of `kernels/pbf.cu` the host launches.
        pub struct PbfKernels {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                pub $name: Kernel,
            )*
        }

        impl PbfKernels {
            /// The names of the kernels the host launches (each must be an `.entry` of the PTX).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Looks every kernel up in `module`. With `checked_on`, every launch is followed
            /// by a synchronisation of that stream and a check (the sync check).
            pub fn load(
                module: &Arc<CudaModule>,
                checked_on: Option<&Arc<CudaStream>>,
            ) -> Result<Self, SolverError> {
                Ok(Self { $($name: Kernel::load(module, stringify!($name), checked_on)?,)* })
            }
        }
    };
}

kernels!(
    predict_positions,
    compute_cell_ids,
    scan_blocks,
    add_block_offsets,
    reorder_particles,
    boundary_density,
    compute_lambda,
    check_density_error,
    apply_delta,
    update_velocity,
    vorticity_curl,
    vorticity_confinement,
    xsph,
    write_render_buffer,
    find_non_finite,
    coarse_gather,
    coarse_classify,
    coarse_prepare,
    mg_coarsen,
    mg_smooth,
    mg_residual,
    mg_restrict,
    mg_prolongate,
    mg_tail,
    mg_load,
    pcg_operator,
    pcg_dot,
    pcg_scalars,
    pcg_step,
    pcg_direction,
    coarse_faces,
    coarse_apply,
);

/// One thread per element, `BLOCK` threads per block.
pub fn per_element(count: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((count as u32).div_ceil(BLOCK).max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Lengths of the arrays of a multi-level scan of `count` values: the values, then each
/// level's block totals, down to a level that fits in one block.
pub fn scan_levels(count: usize) -> Vec<usize> {
    let mut levels = vec![count];
    while let Some(&last) = levels.last() {
        if last <= SCAN_ITEMS_PER_BLOCK {
            break;
        }
        levels.push(last.div_ceil(SCAN_ITEMS_PER_BLOCK));
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_levels_shrink_to_one_block() {
        assert_eq!(scan_levels(5), vec![5]);
        assert_eq!(scan_levels(2048), vec![2048]);
        assert_eq!(scan_levels(2049), vec![2049, 2]);
        assert_eq!(scan_levels(10_000_000), vec![10_000_000, 4883, 3]);
    }

    #[test]
    fn the_sync_check_variable_is_read_strictly() {
        assert_eq!(sync_check_from(None), Ok(false));
        for on in ["1", "true", "YES", " on "] {
            assert_eq!(sync_check_from(Some(on)), Ok(true), "{on}");
        }
        for off in ["", "0", "false", "No", "off"] {
            assert_eq!(sync_check_from(Some(off)), Ok(false), "{off}");
        }
        let error = sync_check_from(Some("2")).unwrap_err();
        assert!(error.contains("FLUIDLAB_CUDA_SYNC_CHECK=2"), "{error}");
    }

    /// Without the check, an execution error returned by a launch is not blamed on the kernel
    /// being launched, and the message says how to find the one that failed; with the check it
    /// is. A launch error proper (a bad configuration) is the kernel's own either way.
    #[test]
    fn launch_failures_blame_the_right_kernel() {
        use sys::CUresult::*;
        let sticky = launch_failure("xsph", CUDA_ERROR_ILLEGAL_ADDRESS, "illegal address", false);
        assert!(
            sticky.contains("not necessarily `xsph`")
                && sticky.contains("FLUIDLAB_CUDA_SYNC_CHECK=1"),
            "{sticky}"
        );
        let own = launch_failure("xsph", CUDA_ERROR_ILLEGAL_ADDRESS, "illegal address", true);
        assert_eq!(own, "CUDA kernel `xsph` failed: illegal address");
        let config = launch_failure("xsph", CUDA_ERROR_INVALID_VALUE, "invalid argument", false);
        assert_eq!(
            config,
            "CUDA kernel `xsph` failed to launch: invalid argument"
        );
        assert!(is_execution_error(CUDA_ERROR_LAUNCH_FAILED));
        assert!(!is_execution_error(CUDA_ERROR_OUT_OF_MEMORY));
        let waited = wait_failure(
            "a CUDA kernel of the step failed",
            CUDA_ERROR_MISALIGNED_ADDRESS,
            "misaligned",
            false,
        );
        assert!(
            waited
                .ends_with("rerun with FLUIDLAB_CUDA_SYNC_CHECK=1 to name the kernel that failed"),
            "{waited}"
        );
        let waited = wait_failure(
            "a CUDA kernel of the step failed",
            CUDA_ERROR_MISALIGNED_ADDRESS,
            "misaligned",
            true,
        );
        assert_eq!(waited, "a CUDA kernel of the step failed: misaligned");
    }

    /// The launch constants mirror the kernel source's #defines.
    #[test]
    fn block_sizes_match_the_kernel_source() {
        let source = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/pbf.cu"));
        assert!(source.contains(&format!("#define PBF_BLOCK {BLOCK}\n")));
        assert!(source.contains(&format!("#define SCAN_THREADS {SCAN_THREADS}\n")));
        assert!(source.contains(&format!(
            "#define SCAN_ITEMS_PER_THREAD {}\n",
            SCAN_ITEMS_PER_BLOCK / SCAN_THREADS as usize
        )));
    }
}
