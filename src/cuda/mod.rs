//! Shared CUDA plumbing, kind-agnostic: every simulation kind's CUDA backend is built from these
//! concrete pieces (no registry of kinds, no traits to implement).
//!
//! - [`device`]: is there a usable driver and GPU, which device (by ordinal), what it is.
//! - [`ptx`]: the kernel modules the binary carries, one per `kernels/<name>.cu` (table written
//!   by `build.rs`), with the source NVRTC compiles when no prebuilt code fits.
//! - [`module`]: a module loaded on a device (cubin, PTX or NVRTC), its functions looked up once
//!   by name.
//! - [`launch`]: typed kernel launches whose errors name the kernel, and the per-launch check
//!   (`FLUIDLAB_CUDA_SYNC_CHECK`).
//! - [`timer`]: CUDA events between the stages of a frame.
//! - [`graph`]: a frame's launches captured once as a CUDA graph and replayed
//!   (`FLUIDLAB_CUDA_GRAPHS`).
//! - [`graph_mode`]: whether a solver's frames run as graphs or launch by launch, why, and
//!   the counts `bench` prints.
//! - [`records`]: records kernels read from device memory, sent when their bits change (what
//!   a graph may not freeze).
//! - [`interop`]: OpenGL buffers and textures written by kernels.
//! - [`nvtx`]: ranges for Nsight Systems.
//! - [`parity`]: a field's largest difference between a CUDA backend and the CPU solver.
//! - `emulation` (tests only): a kind's kernels compiled as C++ to run against its CPU solver.
//!
//! docs/cuda.md ("The shared CUDA layer") shows how a new kind uses them.

mod available;
pub mod device;
#[cfg(test)]
pub mod emulation;
pub mod graph;
pub mod graph_mode;
pub mod interop;
pub mod launch;
pub mod module;
pub mod nvtx;
pub mod parity;
pub mod ptx;
pub mod records;
pub mod timer;

pub use device::{context, device_info, unavailable, DeviceInfo, DEFAULT_DEVICE};
pub use graph::{graphs_requested, GraphCache, GraphFailure, GraphRun, GRAPHS_VARIABLE};
pub use graph_mode::GraphMode;
pub use interop::gl_device;
pub use launch::{sync_check_requested, SYNC_CHECK_VARIABLE};
pub use module::Module;
pub use records::Records;
pub use timer::EventTimer;

/// What went wrong in the shared CUDA layer. Each kind turns it into its own error type.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// CUDA cannot run on this machine: no driver, a driver too old, or no GPU (says which).
    #[error("{0}")]
    Unavailable(String),
    /// There is no CUDA device of this ordinal.
    #[error("there is no CUDA device {ordinal}: the driver lists {count} (ordinals from 0)")]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver lists.
        count: usize,
    },
    /// A driver call failed while doing `what`.
    #[error("{what}: {source}")]
    Driver {
        /// What was being done ("creating a CUDA stream").
        what: &'static str,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
    /// A module's code could not be loaded or compiled, or lacks a kernel.
    #[error("{0}")]
    Module(String),
    /// A kernel could not be launched, or failed (the message names it and says who is to
    /// blame, see [`launch::launch_failure`]).
    #[error("{0}")]
    Kernel(String),
    /// A waiting call found a failed kernel (see [`launch::wait_failure`]).
    #[error("{0}")]
    Wait(String),
    /// A setting the user gave is not understood (an environment variable's value).
    #[error("{0}")]
    Setting(String),
    /// A GL object registered with CUDA is smaller than what is to be written into it, or
    /// could not be unmapped.
    #[error("{0}")]
    Interop(String),
}

impl CudaError {
    /// A closure for `map_err` that wraps a driver error with what was being done.
    pub fn driver(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> Self {
        move |source| CudaError::Driver { what, source }
    }
}
