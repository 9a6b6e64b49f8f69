//! Kernel launches: arguments as a tuple ([`KernelArgs`]), launch shapes, and errors that name
//! the kernel.
//!
//! A kernel that faults (an illegal address, say) does so after its launch returned; the error
//! surfaces at the next call that waits for the stream, or as the return value of a later,
//! innocent launch: CUDA's execution errors are sticky. With `FLUIDLAB_CUDA_SYNC_CHECK=1` every
//! launch is followed by a synchronisation, so the error names the kernel that really failed
//! (slow: a debugging switch; `scripts/device-check.sh` uses it on its first run).

use super::CudaError;
use cudarc::driver::{
    sys, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchArgs, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

/// The environment variable that turns the per-launch synchronisation on.
pub const SYNC_CHECK_VARIABLE: &str = "FLUIDLAB_CUDA_SYNC_CHECK";

/// Whether a value of [`SYNC_CHECK_VARIABLE`] turns the check on: `1`, `true`, `yes` or `on`
/// (any case). Unset, empty, `0`, `false`, `no` and `off` leave it off; anything else is an
/// error, so a typo is not silently a run without the check.
pub fn sync_check_from(value: Option<&str>) -> Result<bool, CudaError> {
    switch_from(
        SYNC_CHECK_VARIABLE,
        value,
        false,
        "1 (synchronise and check after every kernel launch) or 0",
    )
}

/// An on/off environment switch's value: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`
/// (any case); unset or empty gives `default`; anything else is an error that names
/// `variable` and says what to use (`choices`).
pub(super) fn switch_from(
    variable: &str,
    value: Option<&str>,
    default: bool,
    choices: &str,
) -> Result<bool, CudaError> {
    let Some(value) = value.map(str::trim) else {
        return Ok(default);
    };
    match value.to_ascii_lowercase().as_str() {
        "" => Ok(default),
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(CudaError::Setting(format!(
            "{variable}={value} is not understood: use {choices}"
        ))),
    }
}

/// Whether this process asked for the per-launch check ([`SYNC_CHECK_VARIABLE`]).
pub fn sync_check_requested() -> Result<bool, CudaError> {
    let value = std::env::var(SYNC_CHECK_VARIABLE).ok();
    sync_check_from(value.as_deref())
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

/// The error of a wait (a copy back, a synchronisation) that found a kernel failed:
/// [`wait_failure`]'s message for `what`, for `map_err` (`synchronised`: the module's
/// `sync_check`, every launch waited for, so a failure already named its kernel).
pub fn waited(
    what: &'static str,
    synchronised: bool,
) -> impl Fn(cudarc::driver::DriverError) -> CudaError + Copy {
    move |e| CudaError::Wait(wait_failure(what, e.0, &e.to_string(), synchronised))
}

/// Copies `from` into `to` and waits for `stream` (a frame's read-back: what the kernels
/// before it wrote is in `to` after), either failure mapped by `failed`.
pub fn read_back<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    from: &CudaSlice<T>,
    to: &mut [T],
    failed: impl Fn(DriverError) -> CudaError,
) -> Result<(), CudaError> {
    stream.memcpy_dtoh(from, to).map_err(&failed)?;
    stream.synchronize().map_err(failed)
}

/// One thread per element, `block` threads per block (at least one block).
pub fn per_element(count: usize, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((count as u32).div_ceil(block).max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// One block of `threads` threads.
pub fn one_block(threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A kernel's arguments, in the order of its parameters: a tuple of by-value parameters
/// (`&params`, `&count`), device arrays (`&slice`, `&mut slice` where the kernel writes) and
/// pointers that may be null ([`OrNull`]).
pub trait KernelArgs<'a> {
    /// Pushes every argument onto `launch`.
    fn push_onto(self, launch: &mut LaunchArgs<'a>);
}

macro_rules! kernel_args_for_tuples {
    ($($arg:ident),+) => {
        impl<'a, $($arg),+> KernelArgs<'a> for ($($arg,)+)
        where
            $(LaunchArgs<'a>: PushKernelArg<$arg>,)+
        {
            #[allow(non_snake_case)]
            fn push_onto(self, launch: &mut LaunchArgs<'a>) {
                let ($($arg,)+) = self;
                $(launch.arg($arg);)+
            }
        }
    };
}

kernel_args_for_tuples!(A);
kernel_args_for_tuples!(A, B);
kernel_args_for_tuples!(A, B, C);
kernel_args_for_tuples!(A, B, C, D);
kernel_args_for_tuples!(A, B, C, D, E);
kernel_args_for_tuples!(A, B, C, D, E, F);
kernel_args_for_tuples!(A, B, C, D, E, F, G);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I, J);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I, J, K);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I, J, K, L);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M, N);
kernel_args_for_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O);

/// A pointer parameter the kernel accepts as null: the array when `Some`, `nullptr` when
/// `None` (an optional output, a check the kernel skips).
pub struct OrNull<A>(pub Option<A>);

/// The null device pointer an absent [`OrNull`] passes.
static NULL_POINTER: u64 = 0;

// SAFETY: pushes what cudarc pushes for the array, or a pointer-sized zero that lives for the
// whole program, in the pointer parameter's place.
unsafe impl<'a, A> PushKernelArg<OrNull<A>> for LaunchArgs<'a>
where
    LaunchArgs<'a>: PushKernelArg<A>,
{
    #[inline(always)]
    fn arg(&mut self, arg: OrNull<A>) -> &mut Self {
        match arg.0 {
            Some(array) => self.arg(array),
            None => <Self as PushKernelArg<&'static u64>>::arg(self, &NULL_POINTER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sync_check_variable_is_read_strictly() {
        assert!(!sync_check_from(None).unwrap());
        for on in ["1", "true", "YES", " on "] {
            assert!(sync_check_from(Some(on)).unwrap(), "{on}");
        }
        for off in ["", "0", "false", "No", "off"] {
            assert!(!sync_check_from(Some(off)).unwrap(), "{off}");
        }
        let error = sync_check_from(Some("2")).unwrap_err();
        assert!(matches!(error, CudaError::Setting(_)), "{error:?}");
        assert!(
            error.to_string().contains("FLUIDLAB_CUDA_SYNC_CHECK=2"),
            "{error}"
        );
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

    #[test]
    fn launch_shapes_cover_every_element() {
        let config = per_element(1000, 256);
        assert_eq!(
            (config.grid_dim, config.block_dim),
            ((4, 1, 1), (256, 1, 1))
        );
        assert_eq!(per_element(1024, 256).grid_dim, (4, 1, 1));
        assert_eq!(per_element(0, 256).grid_dim, (1, 1, 1));
        let config = one_block(1024);
        assert_eq!(
            (config.grid_dim, config.block_dim),
            ((1, 1, 1), (1024, 1, 1))
        );
    }
}
