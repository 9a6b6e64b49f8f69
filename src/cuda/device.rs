//! Finding the CUDA driver and choosing a GPU by ordinal. Every CUDA context of the program is
//! created by [`context`], and every default device is [`DEFAULT_DEVICE`].

use super::CudaError;
use cudarc::driver::{sys, CudaContext};
use std::sync::Arc;

/// The oldest driver API version the CUDA backends run on (`cuDriverGetVersion`): CUDA 13.0.
pub const MIN_DRIVER_CUDA_VERSION: i32 = 13000;

/// The device used when nothing chooses one: the first the driver lists (`CUDA_VISIBLE_DEVICES`
/// decides which GPU that is). Front ends that draw choose the GPU of their GL context instead
/// ([`super::gl_device`]).
pub const DEFAULT_DEVICE: usize = 0;

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

/// The (primary) context of CUDA device `ordinal`. Fails with the reason when CUDA is
/// unavailable, and with [`CudaError::NoSuchDevice`] for an ordinal the driver does not list.
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>, CudaError> {
    if let Some(reason) = unavailable() {
        return Err(CudaError::Unavailable(reason));
    }
    let count = CudaContext::device_count().map_err(CudaError::driver("counting CUDA devices"))?;
    check_ordinal(ordinal, count as usize)?;
    CudaContext::new(ordinal).map_err(CudaError::driver("creating a CUDA context"))
}

fn check_ordinal(ordinal: usize, count: usize) -> Result<(), CudaError> {
    if ordinal < count {
        Ok(())
    } else {
        Err(CudaError::NoSuchDevice { ordinal, count })
    }
}

/// What `fluidlab doctor` reports about a GPU.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The device's ordinal.
    pub ordinal: usize,
    /// Device name.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Total device memory, bytes.
    pub total_memory: usize,
    /// Free device memory, bytes.
    pub free_memory: usize,
    /// Driver's CUDA version, e.g. 13000 for 13.0.
    pub driver_version: i32,
}

/// Facts about CUDA device `ordinal`.
pub fn device_info(ordinal: usize) -> Result<DeviceInfo, CudaError> {
    let context = context(ordinal)?;
    let mut driver_version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .map_err(CudaError::driver("cuDriverGetVersion"))?;
    let (free_memory, total_memory) = context
        .mem_get_info()
        .map_err(CudaError::driver("cuMemGetInfo"))?;
    Ok(DeviceInfo {
        ordinal,
        name: context
            .name()
            .map_err(CudaError::driver("cuDeviceGetName"))?,
        compute_capability: context
            .compute_capability()
            .map_err(CudaError::driver("reading the compute capability"))?,
        total_memory,
        free_memory,
        driver_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinal_the_driver_does_not_list_is_refused_with_the_count() {
        assert!(check_ordinal(0, 1).is_ok());
        assert!(check_ordinal(1, 2).is_ok());
        let error = check_ordinal(1, 1).unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is no CUDA device 1: the driver lists 1 (ordinals from 0)"
        );
    }

    /// Without a driver, asking for a context says why instead of failing in the driver.
    #[test]
    fn a_context_without_cuda_says_why() {
        let Some(reason) = unavailable() else {
            println!("SKIP: this machine has CUDA");
            return;
        };
        match context(DEFAULT_DEVICE) {
            Err(CudaError::Unavailable(said)) => assert_eq!(said, reason),
            other => panic!("{other:?}"),
        }
    }
}
