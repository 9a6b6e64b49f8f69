//! A kernel module loaded on a device: the prebuilt cubin when the GPU runs it, else the
//! prebuilt PTX, else the source compiled by NVRTC ([`super::ptx`] holds all three), with its
//! kernels looked up once by name and launched through [`Module::launch`].

use super::launch::{launch_failure, KernelArgs};
use super::ptx::{self, ModuleSource};
use super::CudaError;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Kernels launched by this process, every module on every device ([`launch_count`]).
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// How many kernels this process has queued to run so far (every module, every device, each
/// kernel of a replayed CUDA graph included; a launch captured into a graph counts when the
/// graph runs): `bench` reports kernels per step from it.
pub fn launch_count() -> u64 {
    LAUNCHES.load(Ordering::Relaxed)
}

/// Launch calls made so far: each kernel launched by itself, and each CUDA graph launched
/// ([`launch_call_count`]).
static LAUNCH_CALLS: AtomicU64 = AtomicU64::new(0);

/// How many launch calls this process has made so far: kernels queued one by one plus CUDA
/// graphs launched (a graph of 190 kernels is one call). What the host pays per frame is
/// about this many times the driver's cost of a launch.
pub fn launch_call_count() -> u64 {
    LAUNCH_CALLS.load(Ordering::Relaxed)
}

/// Counts a CUDA graph of `kernels` launched ([`super::graph`]).
pub(super) fn count_graph_launch(kernels: u64) {
    LAUNCHES.fetch_add(kernels, Ordering::Relaxed);
    LAUNCH_CALLS.fetch_add(1, Ordering::Relaxed);
}

/// One `kernels/<name>.cu` loaded on a device, and the functions its host code launches.
pub struct Module {
    name: &'static str,
    origin: String,
    functions: HashMap<&'static str, CudaFunction>,
    /// `FLUIDLAB_CUDA_SYNC_CHECK`: every launch is followed by a synchronisation of its stream.
    sync_check: bool,
}

impl Module {
    /// Loads the module `name` (`kernels/<name>.cu`) on `context` and looks up each of
    /// `kernels` in it, so a missing kernel fails here rather than at its first launch. With
    /// `sync_check` every launch is synchronised and checked ([`super::SYNC_CHECK_VARIABLE`]).
    pub fn load(
        context: &Arc<CudaContext>,
        name: &str,
        kernels: &[&'static str],
        sync_check: bool,
    ) -> Result<Self, CudaError> {
        let source = ptx::module_source(name).ok_or_else(|| {
            CudaError::Module(format!("there is no kernels/{name}.cu in this build"))
        })?;
        let (module, origin) = load_code(context, source)?;
        let functions = kernels
            .iter()
            .map(|&kernel| {
                let function = module.load_function(kernel).map_err(|e| {
                    CudaError::Module(format!(
                        "CUDA kernel `{kernel}` is missing from the module: {e}"
                    ))
                })?;
                Ok((kernel, function))
            })
            .collect::<Result<_, CudaError>>()?;
        Ok(Self {
            name: source.name,
            origin,
            functions,
            sync_check,
        })
    }

    /// The module's name (`kernels/<name>.cu`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Where the module's code came from (the cubin, PTX from nvcc at build time, or NVRTC),
    /// and why.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Whether every launch is synchronised and checked.
    pub fn sync_check(&self) -> bool {
        self.sync_check
    }

    /// Launches `kernel` (one of those given to [`Module::load`]) on `stream` over `config`
    /// with `args`, its parameters in order. A failure names the kernel; with the sync check
    /// the launch is waited for, so an execution error is this kernel's own.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in its `.cu` source, and every buffer must
    /// hold the elements the kernel indexes over `config`.
    pub unsafe fn launch<'a>(
        &'a self,
        kernel: &'static str,
        stream: &'a CudaStream,
        config: LaunchConfig,
        args: impl KernelArgs<'a>,
    ) -> Result<(), CudaError> {
        let function = self.functions.get(kernel).ok_or_else(|| {
            CudaError::Module(format!(
                "CUDA kernel `{kernel}` was not looked up when module {} was loaded",
                self.name
            ))
        })?;
        let mut builder = stream.launch_builder(function);
        args.push_onto(&mut builder);
        let fail = |e: cudarc::driver::DriverError| {
            CudaError::Kernel(launch_failure(kernel, e.0, &e.to_string(), self.sync_check))
        };
        // SAFETY: the caller vouches for the arguments and the buffers' sizes.
        unsafe { builder.launch(config) }.map_err(fail)?;
        if !super::graph::count_captured_launch() {
            LAUNCHES.fetch_add(1, Ordering::Relaxed);
            LAUNCH_CALLS.fetch_add(1, Ordering::Relaxed);
        }
        if self.sync_check {
            stream.synchronize().map_err(fail)?;
        }
        Ok(())
    }
}

/// Loads `source`'s code: the prebuilt cubin when the GPU runs it (no JIT compilation), else the
/// prebuilt PTX when the build had nvcc and the driver accepts it (the driver compiles it for
/// this GPU), else the source compiled by NVRTC for this GPU. Returns the module and a sentence
/// saying where its code came from and why.
fn load_code(
    context: &Arc<CudaContext>,
    source: &ModuleSource,
) -> Result<(Arc<CudaModule>, String), CudaError> {
    let compute_capability = context
        .compute_capability()
        .map_err(CudaError::driver("reading the compute capability"))?;
    let (major, minor) = compute_capability;
    let mut passed_over = Vec::new();
    if let (Some(cubin), Some(arch)) = (source.cubin, ptx::CUBIN_ARCH) {
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
    match source.ptx {
        Some(text) => match context.load_module(cudarc::nvrtc::Ptx::from_src(text)) {
            Ok(module) => {
                let mut note = format!(
                    "PTX from {}, compiled by the driver for compute_{major}{minor}",
                    ptx::PREBUILT_ORIGIN.unwrap_or("nvcc at build time")
                );
                if !passed_over.is_empty() {
                    note += &format!(" ({})", passed_over.join("; "));
                }
                return Ok((module, note));
            }
            Err(e) => passed_over.push(format!("the driver refused the prebuilt PTX ({e})")),
        },
        None => passed_over.push("the build found no nvcc".to_string()),
    }
    let fallback_reason = passed_over.join("; ");
    let compiled = compile_with_nvrtc(source, compute_capability).map_err(|e| {
        CudaError::Module(format!(
            "cannot load the CUDA kernels: {fallback_reason}; {e}"
        ))
    })?;
    let module = context
        .load_module(compiled)
        .map_err(|e| CudaError::Module(format!("loading the NVRTC-compiled PTX: {e}")))?;
    Ok((
        module,
        format!("NVRTC at run time for compute_{major}{minor} ({fallback_reason})"),
    ))
}

/// Compiles `source` (its headers pasted in) with NVRTC for a GPU of `compute_capability`
/// (needs libnvrtc, not a GPU), with the options build.rs gives nvcc.
pub fn compile_with_nvrtc(
    source: &ModuleSource,
    (major, minor): (i32, i32),
) -> Result<cudarc::nvrtc::Ptx, CudaError> {
    // SAFETY: only tries to open the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(CudaError::Module(
            "NVRTC (libnvrtc.so) was not found to compile them at run time".into(),
        ));
    }
    let options = cudarc::nvrtc::CompileOptions {
        options: vec![
            format!("--gpu-architecture=compute_{major}{minor}"),
            "-std=c++17".into(),
            "-lineinfo".into(),
        ],
        name: Some(format!("{}.cu", source.name)),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source.nvrtc_source(), options).map_err(|e| {
        CudaError::Module(format!("NVRTC failed on kernels/{}.cu: {e:?}", source.name))
    })
}
