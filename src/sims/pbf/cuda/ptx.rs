//! The kernel modules the binary carries: PTX (for any GPU, compiled by the driver at load) and
//! a cubin (machine code for one architecture, sm_90 by default) made by nvcc at build time when
//! `build.rs` found one, and always the CUDA sources (header inlined) for NVRTC at run time.

/// `kernels/pbf.cu` with its headers (`pbf_common.cuh`, `coarse.cuh`) pasted in place of their
/// `#include`s, ready for NVRTC (which is given no include paths: the binary needs no files at
/// run time).
pub fn pbf_source() -> String {
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/pbf.cu"))
        .replace(
            "#include \"pbf_common.cuh\"",
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/kernels/pbf_common.cuh"
            )),
        )
        .replace(
            "#include \"coarse.cuh\"",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/coarse.cuh")),
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

/// Machine code of `kernels/pbf.cu` for [`CUBIN_ARCH`], compiled by nvcc at build time: loaded
/// on GPUs it runs on (see [`cubin_runs_on`]), with no JIT compilation.
#[cfg(fluidlab_prebuilt_cubin)]
pub const PBF_CUBIN: Option<&[u8]> = Some(include_bytes!(concat!(env!("OUT_DIR"), "/pbf.cubin")));
/// Machine code of `kernels/pbf.cu` for [`CUBIN_ARCH`], if the build made one.
#[cfg(not(fluidlab_prebuilt_cubin))]
pub const PBF_CUBIN: Option<&[u8]> = None;

/// The real architecture of [`PBF_CUBIN`] ("sm_90"), or `None`.
pub const CUBIN_ARCH: Option<&str> = option_env!("FLUIDLAB_CUBIN_ARCH");

/// How the cubin was made ("nvcc 13.0, V13.0.88 at build time, -arch=sm_90"), or `None`.
pub const CUBIN_ORIGIN: Option<&str> = option_env!("FLUIDLAB_CUBIN_ORIGIN");

/// The compute capability an `sm_XY` architecture names ("sm_90" → (9, 0), "sm_120" →
/// (12, 0)); `None` for anything else (a virtual `compute_XY`, an arch-specific `sm_90a`).
pub fn compute_capability_of(arch: &str) -> Option<(i32, i32)> {
    let digits = arch.strip_prefix("sm_")?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Whether machine code for `built` runs on a GPU of compute capability `device`: the same
/// major version and the same or a later minor one (CUDA's binary compatibility rule).
pub fn cubin_runs_on(built: (i32, i32), device: (i32, i32)) -> bool {
    built.0 == device.0 && built.1 <= device.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_name_their_compute_capability() {
        assert_eq!(compute_capability_of("sm_90"), Some((9, 0)));
        assert_eq!(compute_capability_of("sm_86"), Some((8, 6)));
        assert_eq!(compute_capability_of("sm_120"), Some((12, 0)));
        assert_eq!(compute_capability_of("sm_90a"), None);
        assert_eq!(compute_capability_of("compute_90"), None);
        assert_eq!(compute_capability_of("sm_9"), None);
    }

    #[test]
    fn a_cubin_runs_on_its_major_version_from_its_minor_on() {
        assert!(cubin_runs_on((9, 0), (9, 0)));
        assert!(cubin_runs_on((8, 0), (8, 6)));
        assert!(!cubin_runs_on((8, 6), (8, 0)));
        assert!(!cubin_runs_on((9, 0), (10, 0)));
        assert!(!cubin_runs_on((9, 0), (8, 9)));
    }
}
