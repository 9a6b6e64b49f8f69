//! Finding the CUDA driver and GPU, and loading the kernels' module: the embedded cubin, the
//! embedded PTX, or NVRTC at run time.

use super::ptx;
use super::SolverError;
use cudarc::driver::{sys, CudaContext, CudaModule};
use std::sync::Arc;

/// The oldest driver API version the backend runs on (`cuDriverGetVersion`): CUDA 13.0.
pub const MIN_DRIVER_CUDA_VERSION: i32 = 13000;

/// Why the CUDA backend cannot run on this machine, or `None` when it can.
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

/// What `fluidlab doctor` reports about the GPU.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
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

/// Facts about GPU 0. Call only when [`unavailable`] returned `None`.
pub fn device_info() -> Result<DeviceInfo, String> {
    let context = CudaContext::new(0).map_err(|e| format!("creating a CUDA context: {e}"))?;
    let mut driver_version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .map_err(|e| format!("cuDriverGetVersion: {e}"))?;
    let (free_memory, total_memory) = context.mem_get_info().map_err(|e| e.to_string())?;
    Ok(DeviceInfo {
        name: context.name().map_err(|e| e.to_string())?,
        compute_capability: context.compute_capability().map_err(|e| e.to_string())?,
        total_memory,
        free_memory,
        driver_version,
    })
}

/// Loads the PBF module: the prebuilt cubin when the GPU runs it (no JIT compilation), else the
/// prebuilt PTX when the build had nvcc and the driver accepts it (the driver compiles it for
/// this GPU), else the embedded source compiled by NVRTC for this GPU. Returns the module and a
/// sentence saying where its code came from and why.
pub fn load_module(context: &Arc<CudaContext>) -> Result<(Arc<CudaModule>, String), SolverError> {
    let compute_capability = context
        .compute_capability()
        .map_err(|e| SolverError::Backend(e.to_string()))?;
    let (major, minor) = compute_capability;
    let mut passed_over = Vec::new();
    if let (Some(cubin), Some(arch)) = (ptx::PBF_CUBIN, ptx::CUBIN_ARCH) {
        let runs = ptx::compute_capability_of(arch)
            .is_some_and(|built| ptx::cubin_runs_on(built, compute_capability));
        if runs {
            match context.load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec())) {
                Ok(module) => {
                    let origin = ptx::CUBIN_ORIGIN.unwrap_or("nvcc at build time");
                    return Ok((module, format!("the {arch} cubin ({origin}; no JIT)")));
                }
                Err(e) => passed_over.push(format!("the driver refused the {arch} cubin ({e})")),
            }
        } else {
            passed_over.push(format!(
                "the {arch} cubin does not run on compute capability {major}.{minor}"
            ));
        }
    }
    match (ptx::PBF_PTX, ptx::PREBUILT_ORIGIN) {
        (Some(source), origin) => match context.load_module(cudarc::nvrtc::Ptx::from_src(source)) {
            Ok(module) => {
                let mut note = format!(
                    "PTX from {}, compiled by the driver for compute_{major}{minor}",
                    origin.unwrap_or("nvcc at build time")
                );
                if !passed_over.is_empty() {
                    note += &format!(" ({})", passed_over.join("; "));
                }
                return Ok((module, note));
            }
            Err(e) => passed_over.push(format!("the driver refused the prebuilt PTX ({e})")),
        },
        (None, _) => passed_over.push("the build found no nvcc".to_string()),
    }
    let fallback_reason = passed_over.join("; ");
    let ptx = compile_with_nvrtc(compute_capability).map_err(|e| {
        SolverError::Backend(format!(
            "cannot load the CUDA kernels: {fallback_reason}; {e}"
        ))
    })?;
    let module = context
        .load_module(ptx)
        .map_err(|e| SolverError::Backend(format!("loading the NVRTC-compiled PTX: {e}")))?;
    Ok((
        module,
        format!("NVRTC at run time for compute_{major}{minor} ({fallback_reason})"),
    ))
}

/// Compiles the embedded kernel source with NVRTC for a GPU of `compute_capability` (needs
/// libnvrtc, not a GPU), with the options build.rs gives nvcc.
pub fn compile_with_nvrtc((major, minor): (i32, i32)) -> Result<cudarc::nvrtc::Ptx, String> {
    // SAFETY: only tries to open the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("NVRTC (libnvrtc.so) was not found to compile them at run time".into());
    }
    let options = cudarc::nvrtc::CompileOptions {
        options: vec![
            format!("--gpu-architecture=compute_{major}{minor}"),
            "-std=c++17".into(),
            "-lineinfo".into(),
        ],
        name: Some("pbf.cu".into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(ptx::pbf_source(), options)
        .map_err(|e| format!("NVRTC failed on kernels/pbf.cu: {e:?}"))
}
