//! Finding the CUDA driver and choosing a GPU by ordinal. Every CUDA context of the program is
//! created by [`context`], and every default device is [`DEFAULT_DEVICE`].

pub use super::available::{unavailable, MIN_DRIVER_CUDA_VERSION};
use super::CudaError;
use cudarc::driver::{sys, CudaContext};
use std::sync::Arc;

/// The device used when nothing chooses one: the first the driver lists (`CUDA_VISIBLE_DEVICES`
/// decides which GPU that is). Front ends that draw choose the GPU of their GL context instead
/// ([`super::gl_device`]).
pub const DEFAULT_DEVICE: usize = 0;

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
    #[cfg_attr(
        fluidlab_cuda,
        ignore = "needs a machine without CUDA: this one has a GPU (build.rs found it)"
    )]
    fn a_context_without_cuda_says_why() {
        let reason = unavailable()
            .expect("build.rs found no CUDA, but CUDA runs now: rebuild (touch build.rs)");
        match context(DEFAULT_DEVICE) {
            Err(CudaError::Unavailable(said)) => assert_eq!(said, reason),
            other => panic!("{other:?}"),
        }
    }
}
