//! Host side of `kernels/pbf.cu`: the module's functions, looked up once by name, and a typed
//! launch helper that turns a launch failure into an error naming the kernel.

use crate::sim::SolverError;
use cudarc::driver::{CudaFunction, CudaModule, LaunchArgs, LaunchConfig};
use std::sync::Arc;

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
}

impl Kernel {
    fn load(module: &Arc<CudaModule>, name: &'static str) -> Result<Self, SolverError> {
        let function = module.load_function(name).map_err(|e| {
            SolverError::Backend(format!(
                "CUDA kernel `{name}` is missing from the module: {e}"
            ))
        })?;
        Ok(Self { name, function })
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
        builder.launch(config).map(|_| ()).map_err(|e| {
            SolverError::Backend(format!("CUDA kernel `{}` failed to launch: {e}", self.name))
        })
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

            /// Looks every kernel up in `module`.
            pub fn load(module: &Arc<CudaModule>) -> Result<Self, SolverError> {
                Ok(Self { $($name: Kernel::load(module, stringify!($name))?,)* })
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
    compute_lambda,
    apply_delta,
    update_velocity,
    vorticity_curl,
    vorticity_confinement,
    xsph,
    write_render_buffer,
    find_non_finite,
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

    /// The launch constants mirror the kernel source's #defines.
    #[test]
    fn block_sizes_match_the_kernel_source() {
        let source = include_str!("../../../kernels/pbf.cu");
        assert!(source.contains(&format!("#define PBF_BLOCK {BLOCK}\n")));
        assert!(source.contains(&format!("#define SCAN_THREADS {SCAN_THREADS}\n")));
        assert!(source.contains(&format!(
            "#define SCAN_ITEMS_PER_THREAD {}\n",
            SCAN_ITEMS_PER_BLOCK / SCAN_THREADS as usize
        )));
    }
}
