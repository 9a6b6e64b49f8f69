//! The pool's CUDA path: its kernels built and complete, register use, parity with the CPU
//! solver on a GPU, and the command line without one. Tests that need what a machine may lack
//! are marked ignored with the reason where build.rs did not find it (docs/testing.md, "Skipped
//! tests"). Here, without a GPU, the kernels' math is checked by the emulation
//! (`src/sims/pool/cuda/emulation.rs`); `fluidlab doctor` runs the GPU checks where there is
//! no cargo.

#[path = "support/kinds.rs"]
mod kinds;
#[path = "support/ptxas.rs"]
mod ptxas;
use fluidlab::cuda::ptx::{self, ModuleSource};
use fluidlab::sims::pool::cuda::kernels::{self, PoolKernels};
use fluidlab::sims::pool::cuda::parity;

fn pool_module() -> &'static ModuleSource {
    ptx::module_source(kernels::MODULE).expect("kernels/pool.cu is a module")
}

/// Every kernel the host looks up is defined in pool.cu and an entry point of the PTX, and the
/// PTX has no other.
#[test]
fn every_pool_kernel_the_host_launches_is_in_the_module() {
    kinds::assert_module_holds_exactly(pool_module(), "pool.cu", PoolKernels::NAMES);
}

/// The parameter records the kernels take by value have the sizes of their C structs (11 and
/// 9 four-byte fields), as the PTX declares them.
#[test]
fn the_pool_parameter_records_have_the_kernels_sizes() {
    assert_eq!(std::mem::size_of::<kernels::PoolGrid>(), 13 * 4);
    assert_eq!(std::mem::size_of::<kernels::PoolDrop>(), 9 * 4);
    if let Some(ptx) = pool_module().ptx {
        let declaration = |kernel: &str| kinds::first_parameter(ptx, kernel);
        for kernel in ["forces", "integrate", "edges", "stats_partials"] {
            assert!(
                declaration(kernel).contains("[52]"),
                "{kernel}: {}",
                declaration(kernel)
            );
        }
        assert!(
            declaration("disturb").contains("[36]"),
            "{}",
            declaration("disturb")
        );
    }
}

/// NVRTC compiles the embedded source for the H200 and its PTX holds every kernel.
#[test]
#[cfg_attr(
    not(fluidlab_nvrtc),
    ignore = "needs libnvrtc on the library path (build.rs found none)"
)]
fn nvrtc_compiles_the_pool_kernels() {
    kinds::assert_nvrtc_compiles(pool_module(), "pool.cu", PoolKernels::NAMES);
}

/// No pool kernel spills registers or needs a stack frame on the H200's architecture, and
/// none needs more than 64 registers (full occupancy of 256-thread blocks needs at most 64).
#[test]
#[cfg_attr(
    not(fluidlab_ptxas),
    ignore = "needs nvcc's PTX and ptxas (scripts/setup.sh installs them)"
)]
fn no_pool_kernel_spills_registers_on_sm_90() {
    let source = pool_module().ptx.expect("the PTX build.rs made");
    let report = ptxas::assert_no_spills("pool", source, PoolKernels::NAMES.len(), &[]);
    for line in report.lines().filter(|line| line.contains("Used ")) {
        let registers: u32 = line
            .split("Used ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a register count");
        assert!(registers <= 64, "{line}");
    }
}

/// Every stage and the statistics on the GPU, from the CPU solver's state, agree with the
/// CPU's within parity::GPU_TOLERANCE (both models; walls, shore, open edges; an island).
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn pool_stages_on_the_gpu_match_the_cpu() {
    let _gpu = kinds::gpu();
    let (passed, detail) = parity::gpu_stages_check(fluidlab::cuda::DEFAULT_DEVICE).expect("runs");
    println!("{detail}");
    assert!(passed, "{detail}");
}

/// Thirty frames on the GPU from rest agree with the CPU's within parity::RUN_TOLERANCE, the
/// GPU's statistics too.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn thirty_pool_frames_on_the_gpu_match_the_cpu() {
    let _gpu = kinds::gpu();
    let (passed, detail) = parity::gpu_run_check(fluidlab::cuda::DEFAULT_DEVICE).expect("runs");
    println!("{detail}");
    assert!(passed, "{detail}");
}

/// Without a GPU, `--backend cuda` on a pool scene fails in one sentence; `auto` runs on the
/// CPU at the scene's CPU node count and says why.
#[test]
#[cfg_attr(
    fluidlab_cuda,
    ignore = "needs a machine without CUDA: this one has a GPU (build.rs found it)"
)]
fn pool_on_cuda_without_a_gpu_fails_in_one_sentence_and_auto_says_why() {
    let report = kinds::assert_cuda_refused_and_auto_says_why(&[
        "bench", "open-sea", "--steps", "1", "--warmup", "0",
    ]);
    assert_eq!(
        report["nodes"],
        256 * 256,
        "the CPU's pool.nodes, not cuda_nodes"
    );
}

/// On a GPU, `pool.cuda_nodes` is the grid CUDA runs (open-sea: 4096²), and the bench reports
/// node-steps per second and the four stages' GPU times.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn open_sea_runs_its_cuda_nodes_on_the_gpu() {
    let _gpu = kinds::gpu();
    let (ok, stdout, stderr) = kinds::fluidlab(&[
        "bench",
        "open-sea",
        "--backend",
        "cuda",
        "--steps",
        "3",
        "--warmup",
        "1",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("bench JSON");
    assert_eq!(report["nodes"], 4096 * 4096);
    assert!(report["backend"].as_str().unwrap().starts_with("cuda"));
    assert!(report["node_steps_per_second"].as_f64().unwrap() > 0.0);
}
