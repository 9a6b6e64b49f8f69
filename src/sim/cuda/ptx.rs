//! The kernel modules the binary carries: PTX compiled by nvcc at build time when `build.rs`
//! found one, and always the CUDA sources (header inlined) for NVRTC at run time.

/// `kernels/pbf.cu` with `pbf_common.cuh` pasted in place of its `#include`, ready for NVRTC
/// (which is given no include paths: the binary needs no files at run time).
pub fn pbf_source() -> String {
    include_str!("../../../kernels/pbf.cu").replace(
        "#include \"pbf_common.cuh\"",
        include_str!("../../../kernels/pbf_common.cuh"),
    )
}

/// PTX of `kernels/pbf.cu` compiled by nvcc at build time, if nvcc was found.
#[cfg(fluidlab_prebuilt_ptx)]
pub const PBF_PTX: Option<&str> = Some(include_str!(concat!(env!("OUT_DIR"), "/pbf.ptx")));
/// PTX of `kernels/pbf.cu` compiled by nvcc at build time, if nvcc was found.
#[cfg(not(fluidlab_prebuilt_ptx))]
pub const PBF_PTX: Option<&str> = None;

/// How the prebuilt PTX was made ("nvcc 13.0, V13.0.88 at build time, -arch=compute_75"), or
/// `None` when the build found no nvcc.
pub const PREBUILT_ORIGIN: Option<&str> = option_env!("FLUIDLAB_PTX_ORIGIN");

/// The nvcc `build.rs` used (its `ptxas` lies beside it), or `None`.
pub const BUILD_NVCC: Option<&str> = option_env!("FLUIDLAB_NVCC");
