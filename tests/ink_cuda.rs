//! Ink's CUDA path: its kernels built and complete, register use, parity with the CPU solver on
//! a GPU, and the command line without one. Tests that need what a machine may lack are marked
//! ignored with the reason where build.rs did not find it (docs/testing.md, "Skipped tests").
//! Here, without a GPU, the kernels' math is checked by the emulation
//! (`src/sims/ink/cuda/emulation.rs`); `fluidlab doctor` runs the GPU checks where there is
//! no cargo.

#[path = "support/kinds.rs"]
mod kinds;
#[path = "support/ptxas.rs"]
mod ptxas;
use fluidlab::cuda::ptx::{self, ModuleSource};
use fluidlab::sims::ink::cuda::kernels::{self, InkKernels};
use fluidlab::sims::ink::cuda::multigrid::InkLevel;
use fluidlab::sims::ink::cuda::{parity, parity_walls};

fn ink_module() -> &'static ModuleSource {
    ptx::module_source(kernels::MODULE).expect("kernels/ink.cu is a module")
}

/// Every kernel the host looks up is defined in ink.cu and an entry point of the PTX, and the
/// PTX has no other.
#[test]
fn every_ink_kernel_the_host_launches_is_in_the_module() {
    kinds::assert_module_holds_exactly(ink_module(), "ink.cu", InkKernels::NAMES);
}

/// The parameter records the kernels take by value have the sizes of their C structs (18 and 8
/// four-byte fields), as the PTX declares them; the splat records (17 fields) and the level
/// records `pressure_mg_remove_mean` reads are read from device arrays, whose pointers come
/// first.
#[test]
fn the_parameter_records_have_the_kernels_sizes() {
    assert_eq!(std::mem::size_of::<kernels::InkGrid>(), 18 * 4);
    assert_eq!(std::mem::size_of::<kernels::InkSplat>(), 17 * 4);
    assert_eq!(std::mem::size_of::<InkLevel>(), 8 * 4);
    if let Some(ptx) = ink_module().ptx {
        let declaration = |kernel: &str| kinds::first_parameter(ptx, kernel);
        assert!(
            declaration("curl").contains("[72]"),
            "{}",
            declaration("curl")
        );
        for kernel in ["splat", "pressure_mg_remove_mean"] {
            assert!(
                declaration(kernel).contains(".u64"),
                "{kernel}: {}",
                declaration(kernel)
            );
        }
        for kernel in [
            "pressure_mg_smooth",
            "pressure_mg_restrict",
            "pressure_mg_sum",
        ] {
            assert!(
                declaration(kernel).contains("[32]"),
                "{kernel}: {}",
                declaration(kernel)
            );
        }
    }
}

/// NVRTC compiles the embedded source for the H200 and its PTX holds every kernel.
#[test]
#[cfg_attr(
    not(fluidlab_nvrtc),
    ignore = "needs libnvrtc on the library path (build.rs found none)"
)]
fn nvrtc_compiles_the_ink_kernels() {
    kinds::assert_nvrtc_compiles(ink_module(), "ink.cu", InkKernels::NAMES);
}

/// No ink kernel spills registers or needs a stack frame on the H200's architecture.
#[test]
#[cfg_attr(
    not(fluidlab_ptxas),
    ignore = "needs nvcc's PTX and ptxas (scripts/setup.sh installs them)"
)]
fn no_ink_kernel_spills_registers_on_sm_90() {
    let source = ink_module().ptx.expect("the PTX build.rs made");
    ptxas::assert_no_spills("ink", source, InkKernels::NAMES.len(), &[]);
}

/// Every stage on the GPU, from the CPU solver's state, agrees with the CPU's stage within
/// parity::GPU_TOLERANCE (both schemes, ink grids ×1 and ×2).
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn ink_stages_on_the_gpu_match_the_cpu() {
    passes(parity::gpu_stages_check);
}

/// Twenty frames on the GPU from rest agree with the CPU's within parity::RUN_TOLERANCE, the
/// GPU's reductions (ink, kinetic energy, fastest) too.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn twenty_ink_frames_on_the_gpu_match_the_cpu() {
    passes(parity::gpu_run_check);
}

/// Without a GPU, `--backend cuda` on an ink scene fails in one sentence; `auto` runs on the CPU
/// and says why.
#[test]
#[cfg_attr(
    fluidlab_cuda,
    ignore = "needs a machine without CUDA: this one has a GPU (build.rs found it)"
)]
fn ink_on_cuda_without_a_gpu_fails_in_one_sentence_and_auto_says_why() {
    kinds::assert_cuda_refused_and_auto_says_why(&[
        "bench",
        "dye",
        "--particles",
        "1024",
        "--steps",
        "1",
        "--warmup",
        "0",
    ]);
}

/// A multigrid scene (`dye`) runs on CUDA: `--backend cuda` and `auto` both take the GPU, and
/// its report has the multigrid's residual.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn a_multigrid_scene_runs_on_cuda() {
    let _gpu = kinds::gpu();
    for backend in ["cuda", "auto"] {
        let (ok, stdout, stderr) = kinds::fluidlab(&[
            "bench",
            "dye",
            "--backend",
            backend,
            "--steps",
            "2",
            "--warmup",
            "0",
            "--json",
        ]);
        assert!(ok, "{backend}: {stderr}");
        let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("bench JSON");
        let name = report["backend"].as_str().unwrap_or_default().to_string();
        assert!(name.starts_with("cuda"), "{backend}: {name}");
    }
}

/// The multigrid pressure solver on the GPU against the CPU's: every stage and twenty steps, in
/// a box with an outflow side and a closed one, the small levels in one block and not.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn multigrid_on_the_gpu_matches_the_cpu() {
    passes(parity::gpu_multigrid_check);
}

/// Painting and erasing obstacles on the GPU (only the changed rows through the host) leaves the
/// fields the CPU's `set_solid` leaves, and the next step agrees.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn painting_obstacles_on_the_gpu_matches_the_cpu() {
    passes(parity_walls::gpu_set_solid_check);
}

/// A disc moved on the GPU (`wall_rows` deriving its rows' masks, stencil and fixed velocities
/// from their solid bytes, `close_walls` closing them and mirroring their ghost faces, no- and
/// free-slip; the multigrid's masks by rows) leaves the fields and masks the CPU's `set_walls`
/// leaves, and the steps after agree.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn moving_a_disc_on_the_gpu_matches_the_cpu() {
    passes(parity_walls::gpu_moving_walls_check);
}

/// `wall_rows`' edges on the GPU: two overlapping moving discs, one across row 0 and partly
/// outside the grid, over painted cells, with an outflow side below, moved and then jumped past
/// twice their diameters (the rows between not sent); the walls' arrays and the fields the
/// CPU's `set_walls` leaves.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn walls_at_the_grid_edges_on_the_gpu_match_the_cpu() {
    passes(parity_walls::gpu_wall_edges_check);
}

/// Runs doctor check `check` on the default CUDA device (one GPU test at a time) and asserts it
/// passed, with its line printed.
fn passes(check: fn(usize) -> Result<(bool, String), String>) {
    let _gpu = kinds::gpu();
    let (passed, detail) = check(fluidlab::cuda::DEFAULT_DEVICE).expect("runs");
    println!("{detail}");
    assert!(passed, "{detail}");
}
