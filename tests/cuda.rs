//! The CUDA backend: kernels built and complete, register use, parity with the CPU solver, and
//! the command line without a GPU. Tests that need what a machine may lack (a GPU, libnvrtc,
//! nvcc) are marked ignored with the reason where build.rs did not find it (docs/testing.md,
//! "Skipped tests"); `fluidlab doctor` runs the same parity checks where there is no cargo.

#[path = "support/ptxas.rs"]
mod ptxas;
use fluidlab::cuda::ptx::{self, ModuleSource};
use fluidlab::sims::pbf::backend::cuda_unavailable;
use fluidlab::sims::pbf::cpu::CpuSolver;
use fluidlab::sims::pbf::cuda::parity::{self, RUN_FRAMES, RUN_TOLERANCE, RUN_WINDOW};
use fluidlab::sims::pbf::cuda::pbf::{self, PbfKernels};
use fluidlab::sims::pbf::doctor::{RESTARTS, RESTART_ALLOWANCE};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

const PROJECT_NVCC: &str = ".tools/cuda/nvidia/cu13/bin/nvcc";

/// `kernels/pbf.cu` as the binary carries it.
fn pbf_module() -> &'static ModuleSource {
    ptx::module_source(pbf::MODULE).expect("kernels/pbf.cu is a module")
}

/// Held by every test that uses the GPU. The test harness runs tests in parallel, and the GPU
/// is one device for all of them: `twenty_restarts_keep_gpu_memory_flat` reads the device's free
/// memory, which a parity run allocating at the same time would move.
static GPU: Mutex<()> = Mutex::new(());

/// The GPU, held until the returned guard drops. Only tests that build.rs found a GPU for
/// (`fluidlab_cuda`) ask; one that is gone since is a failure that says so.
fn gpu() -> MutexGuard<'static, ()> {
    if let Some(reason) = cuda_unavailable() {
        panic!("build.rs found a CUDA GPU, but now {reason}: rebuild (touch build.rs)");
    }
    // A test that panicked while holding it leaves nothing behind that the next one needs.
    GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
#[cfg_attr(
    not(fluidlab_project_nvcc),
    ignore = "needs .tools/cuda/nvidia/cu13/bin/nvcc (scripts/setup.sh installs it)"
)]
fn the_build_compiles_the_kernels_with_the_project_nvcc_when_it_is_installed() {
    for module in ptx::MODULES {
        assert!(
            module.ptx.is_some(),
            "nvcc is installed but build.rs made no PTX of kernels/{}.cu",
            module.name
        );
    }
    let origin = ptx::PREBUILT_ORIGIN.expect("origin of the prebuilt PTX");
    assert!(origin.starts_with("nvcc "), "{origin}");
    // NVCC, CUDA_PATH and PATH come first; when none is set the pinned 13.0 wheel is used.
    if ptx::BUILD_NVCC.is_some_and(|nvcc| nvcc.ends_with(PROJECT_NVCC)) {
        assert!(origin.starts_with("nvcc 13.0,"), "{origin}");
    }
}

/// The build embeds machine code for the H200 (sm_90) beside the PTX, so solvers there load with
/// no JIT compilation: an ELF image for NVIDIA's CUDA machine type, for sm_90, holding every
/// kernel the host launches.
#[test]
#[cfg_attr(
    not(fluidlab_cubin),
    ignore = "needs nvcc's cubin: the build found no nvcc (scripts/setup.sh installs it) or FLUIDLAB_CUDA_CUBIN_ARCH is empty"
)]
fn the_build_embeds_an_sm_90_cubin_when_nvcc_is_installed() {
    let expected = option_env!("FLUIDLAB_CUDA_CUBIN_ARCH").unwrap_or("sm_90");
    let cubin = pbf_module()
        .cubin
        .expect("nvcc was found but build.rs embedded no cubin");
    assert_eq!(ptx::CUBIN_ARCH, Some(expected));
    assert_eq!(&cubin[..4], b"\x7fELF", "not an ELF image");
    assert_eq!(cubin[4], 2, "not a 64-bit ELF image");
    let machine = u16::from_le_bytes([cubin[18], cubin[19]]);
    assert_eq!(machine, 190, "e_machine {machine} is not EM_CUDA (190)");
    // e_flags carries the SM: in its low byte up to CUDA's ELF ABI version 7, in the byte above
    // from version 8 on (nvcc 13's cubins: sm_75 → 0x4b00, sm_90 → 0x5a00).
    let flags = u32::from_le_bytes(cubin[48..52].try_into().unwrap());
    let sm = if cubin[8] >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    };
    let (major, minor) = ptx::compute_capability_of(expected).expect("an sm_XY architecture");
    assert_eq!(
        sm,
        (major * 10 + minor) as u32,
        "e_flags {flags:#x}, ABI version {}",
        cubin[8]
    );
    for name in PbfKernels::NAMES {
        assert!(
            cubin.windows(name.len()).any(|w| w == name.as_bytes()),
            "kernel {name} is not in the cubin"
        );
    }
}

/// Every kernel the host looks up is an entry point of the PTX (and of the NVRTC source).
#[test]
fn every_kernel_the_host_launches_is_in_the_module() {
    let source = pbf_module().nvrtc_source();
    assert!(!source.contains("#include"), "NVRTC gets no include paths");
    for name in PbfKernels::NAMES {
        assert!(
            source.contains(&format!("\n{name}(")),
            "kernel {name} is not defined in kernels/pbf.cu"
        );
        if let Some(ptx) = pbf_module().ptx {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "kernel {name} is not an .entry of the prebuilt PTX"
            );
        }
    }
    if let Some(ptx) = pbf_module().ptx {
        assert_eq!(ptx.matches(".entry ").count(), PbfKernels::NAMES.len());
    }
}

/// The run-time path: NVRTC compiles the embedded source (header pasted in) for the H200's
/// architecture, and the result holds every kernel. Needs libnvrtc on the library path, not a GPU
/// (`pip install nvidia-cuda-nvrtc==13.0.88` and LD_LIBRARY_PATH=…/nvidia/cu13/lib will do).
#[test]
#[cfg_attr(
    not(fluidlab_nvrtc),
    ignore = "needs libnvrtc on the library path (build.rs found none)"
)]
fn nvrtc_compiles_the_embedded_kernel_source() {
    // SAFETY: only tries to open the library.
    assert!(
        unsafe { cudarc::nvrtc::sys::is_culib_present() },
        "build.rs found libnvrtc, and it does not load now: rebuild (touch build.rs)"
    );
    let ptx = fluidlab::cuda::module::compile_with_nvrtc(pbf_module(), (9, 0))
        .expect("NVRTC compiles pbf.cu");
    let text = ptx.to_src();
    for name in PbfKernels::NAMES {
        assert!(
            text.contains(&format!(".entry {name}(")),
            "{name} missing from NVRTC's PTX"
        );
    }
}

/// Registers stay in registers on the H200's architecture: `ptxas -v` reports no spills.
#[test]
#[cfg_attr(
    not(fluidlab_ptxas),
    ignore = "needs nvcc's PTX and ptxas (scripts/setup.sh installs them)"
)]
fn no_kernel_spills_registers_on_sm_90() {
    let source = pbf_module().ptx.expect("the PTX build.rs made");
    ptxas::assert_no_spills("pbf", source, PbfKernels::NAMES.len(), &[]);
}

#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn one_frame_on_the_gpu_matches_the_cpu() {
    let _gpu = gpu();
    let check = parity::cuda_one_step().expect("both solvers run");
    println!("{}", check.detail);
    assert!(check.passed, "{}", check.detail);
}

#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn dam_break_statistics_on_the_gpu_match_the_cpu() {
    let _gpu = gpu();
    let check = parity::cuda_dam_break().expect("both solvers run");
    println!("{}", check.detail);
    assert!(check.passed, "{}", check.detail);
}

/// The statistics panel's GPU reductions agree with the statistics of the state read back.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn the_gpu_reduced_statistics_match_the_snapshots() {
    let _gpu = gpu();
    let check = fluidlab::sims::pbf::cuda::stats::cuda_frame_stats().expect("the solver runs");
    println!("{}", check.detail);
    assert!(check.passed, "{}", check.detail);
}

/// The `foam` stage on the GPU (kernels/foam.cuh) against the CPU stage on the same fluid
/// state: each frame from the CPU's pool, the pools one to one within the rounding bound of
/// foam_parity.rs (`PoolBound`), a few flips allowed; the cap lowered midway.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn foam_on_the_gpu_matches_the_cpu_stage() {
    let _gpu = gpu();
    let check = fluidlab::sims::pbf::cuda::foam_parity::cuda_foam().expect("both stages run");
    println!("{}", check.detail);
    assert!(check.passed, "{}", check.detail);
}

/// Restarting the solver (the viewer does it on every scene restart) leaks no GPU memory.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn twenty_restarts_keep_gpu_memory_flat() {
    let _gpu = gpu();
    let (before, after) =
        fluidlab::sims::pbf::cuda::free_memory_across_restarts(RESTARTS).expect("restarts");
    println!("free GPU memory: {before} bytes before, {after} after");
    assert!(
        before.saturating_sub(after) as u64 <= RESTART_ALLOWANCE,
        "{before} → {after}"
    );
}

/// Salts of the rounding patterns the tests below use. The tolerances were derived from other
/// salts (`derive_parity_tolerances`), so these runs check them, not reproduce them.
const TEST_SALTS: [u32; 3] = [1001, 1002, 1003];

/// The parity tolerances are not tighter than the flow itself allows: CPU runs whose initial
/// positions differ by float rounding (as the GPU's reassociated sums do every step) pass both
/// comparisons, for several rounding patterns. A real formula slip fails them (next tests).
#[test]
fn cpu_runs_differing_by_rounding_pass_the_parity_checks() {
    let scene = parity::parity_scene();
    let state = parity::moving_state(&scene).expect("CPU warm-up");
    let seed = scene.seed();
    let mut failures = Vec::new();
    for salt in TEST_SALTS {
        let mut a = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
        let jittered = parity::jitter(&state, salt);
        let mut b = CpuSolver::new(scene.world(), scene.params.clone(), &jittered).unwrap();
        let check = parity::compare_one_step(&mut a, &mut b, scene.params.spacing).unwrap();
        println!("salt {salt}, one frame: {}", check.detail);
        if !check.passed {
            failures.push(format!("salt {salt}, one frame: {}", check.detail));
        }

        let mut a = CpuSolver::new(scene.world(), scene.params.clone(), &seed).unwrap();
        let jittered = parity::jitter(&seed, salt);
        let mut b = CpuSolver::new(scene.world(), scene.params.clone(), &jittered).unwrap();
        let check = parity::compare_runs(
            &mut a,
            &mut b,
            &scene,
            RUN_FRAMES,
            RUN_WINDOW,
            RUN_TOLERANCE,
        )
        .unwrap();
        println!("salt {salt}, {RUN_FRAMES} frames: {}", check.detail);
        if !check.passed {
            failures.push(format!(
                "salt {salt}, {RUN_FRAMES} frames: {}",
                check.detail
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Re-derives the parity tolerances (docs/cuda-verification.md, "Re-deriving the parity
/// tolerances"): runs salted CPU-vs-CPU pairs (salts 1..=N, `FLUIDLAB_PARITY_SALTS=N`, default
/// 40, or `A-B`; the tests use other salts), prints each pair's needed tolerances, the worst, and
/// the constants they give with the margin, then how far the wrong-physics runs (s_corr off, XSPH
/// off) are from the constants in force. Fails when the constants in force are tighter than the
/// salted runs need, or loose enough to pass a wrong-physics run.
#[test]
#[ignore = "a derivation, not a test (minutes): cargo test --release --test cuda derive_parity_tolerances -- --ignored --nocapture"]
fn derive_parity_tolerances() {
    let salts = parity::numbers_from_env("FLUIDLAB_PARITY_SALTS", 40);
    let scene = parity::parity_scene();
    let spacing = scene.params.spacing;
    let state = parity::moving_state(&scene).expect("CPU warm-up");
    let floor = RUN_TOLERANCE.density_floor;
    let mut worst_run = parity::RunSpread::default();
    let (mut worst_max, mut worst_mean) = (0.0f32, 0.0f32);
    println!("salt  one frame: max, mean (spacings)  {RUN_FRAMES} frames, windows of {RUN_WINDOW}: needed tolerance");
    for salt in salts.clone() {
        let one = parity::salted_one_step_spread(&state, salt, |_| {}).expect("one frame");
        let run = parity::salted_run_spread(salt, |_| {}).expect("long run");
        println!(
            "{salt:4}  {:.2e}, {:.2e}  {}",
            one.max / spacing,
            one.mean / spacing,
            run.describe(&RUN_TOLERANCE)
        );
        worst_max = worst_max.max(one.max / spacing);
        worst_mean = worst_mean.max(one.mean / spacing);
        worst_run = worst_run.max(run);
    }
    let margin = parity::MARGIN;
    let derived = worst_run.tolerance(margin, floor);
    println!(
        "worst of salts {salts:?}: one frame max {worst_max:.3e}, mean {worst_mean:.3e} spacings; {}",
        worst_run.describe(&RUN_TOLERANCE)
    );
    println!(
        "with margin {margin}: ONE_STEP_MAX_ERROR = {:e}, ONE_STEP_MEAN_ERROR = {:e}, RUN_TOLERANCE = {derived:?}",
        parity::round_up(f64::from(worst_max) * margin),
        parity::round_up(f64::from(worst_mean) * margin)
    );
    println!(
        "in force: ONE_STEP_MAX_ERROR = {:e}, ONE_STEP_MEAN_ERROR = {:e}, RUN_TOLERANCE = {RUN_TOLERANCE:?}",
        parity::ONE_STEP_MAX_ERROR,
        parity::ONE_STEP_MEAN_ERROR
    );

    let scorr_off = parity::salted_one_step_spread(&state, 0, |p| p.scorr_k = 0.0).unwrap();
    let xsph_off_one = parity::salted_one_step_spread(&state, 0, |p| p.xsph_c = 0.0).unwrap();
    let xsph_off = parity::salted_run_spread(0, |p| p.xsph_c = 0.0).unwrap();
    println!(
        "s_corr off, one frame: max {:.2e}, mean {:.2e} spacings",
        scorr_off.max / spacing,
        scorr_off.mean / spacing
    );
    println!(
        "XSPH off, one frame: max {:.2e}, mean {:.2e} spacings ({:.1e} m)",
        xsph_off_one.max / spacing,
        xsph_off_one.mean / spacing,
        xsph_off_one.max
    );
    println!(
        "XSPH off, {RUN_FRAMES} frames: {}",
        xsph_off.describe(&RUN_TOLERANCE)
    );

    let mut problems = Vec::new();
    if worst_max > parity::ONE_STEP_MAX_ERROR || worst_mean > parity::ONE_STEP_MEAN_ERROR {
        problems.push("the one-frame tolerances in force are tighter than the salted runs need");
    }
    if !worst_run.within(&RUN_TOLERANCE) {
        problems.push("RUN_TOLERANCE is tighter than the salted runs need");
    }
    if scorr_off.within(spacing) {
        problems.push("the one-frame check passes with s_corr off");
    }
    if xsph_off.within(&RUN_TOLERANCE) {
        problems.push("the long-run check passes with XSPH off");
    }
    assert!(problems.is_empty(), "{}", problems.join("; "));
}

/// A solver with a wrong parameter fails the one-frame check: s_corr off, XSPH off (whose
/// effect is among the smallest of the solver's terms), gravity upright (the parity scene's
/// leans).
#[test]
fn a_formula_difference_fails_the_one_frame_check() {
    let scene = parity::parity_scene();
    let state = parity::moving_state(&scene).expect("CPU warm-up");
    let mut scorr_off = scene.params.clone();
    scorr_off.scorr_k = 0.0;
    let mut xsph_off = scene.params.clone();
    xsph_off.xsph_c = 0.0;
    let mut upright = scene.params.clone();
    upright.gravity = [0.0, -9.81, 0.0];
    for (name, changed) in [
        ("s_corr off", scorr_off),
        ("XSPH off", xsph_off),
        ("gravity upright", upright),
    ] {
        let mut a = CpuSolver::new(scene.world(), scene.params.clone(), &state).unwrap();
        let mut b = CpuSolver::new(scene.world(), changed, &state).unwrap();
        let check = parity::compare_one_step(&mut a, &mut b, scene.params.spacing).unwrap();
        println!("{name}: {}", check.detail);
        assert!(!check.passed, "{name}: {}", check.detail);
    }
}

/// The long-run check can fail on a real error too: with XSPH off the candidate's mean density
/// error differs by 4.4 % in a window (rounding: at most 0.37 % beyond the floor, `RUN_TOLERANCE`).
#[test]
fn a_physics_difference_fails_the_long_run_check() {
    let scene = parity::parity_scene();
    let seed = scene.seed();
    let mut changed = scene.params.clone();
    changed.xsph_c = 0.0;
    let mut a = CpuSolver::new(scene.world(), scene.params.clone(), &seed).unwrap();
    let mut b = CpuSolver::new(scene.world(), changed, &seed).unwrap();
    let check = parity::compare_runs(
        &mut a,
        &mut b,
        &scene,
        RUN_FRAMES,
        RUN_WINDOW,
        RUN_TOLERANCE,
    )
    .unwrap();
    println!("XSPH off: {}", check.detail);
    assert!(!check.passed, "{}", check.detail);
}

fn fluidlab(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .args(args)
        .output()
        .expect("run fluidlab");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
#[cfg_attr(
    fluidlab_cuda,
    ignore = "needs a machine without CUDA: this one has a GPU (build.rs found it)"
)]
fn backend_cuda_without_a_gpu_fails_with_one_sentence() {
    let reason = cuda_unavailable()
        .expect("build.rs found no CUDA, but CUDA runs now: rebuild (touch build.rs)");
    let (ok, _, stderr) = fluidlab(&[
        "simulate",
        "dam-break",
        "--steps",
        "1",
        "--backend",
        "cuda",
        "--quiet",
    ]);
    assert!(!ok, "--backend cuda succeeded without CUDA");
    let message = stderr.trim();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with("error: --backend cuda cannot run on this machine: "),
        "{message}"
    );
    assert!(message.contains(&reason), "{message}");
    assert!(
        message.ends_with("use --backend cpu or --backend auto"),
        "{message}"
    );
}

#[test]
fn backend_auto_without_a_gpu_runs_on_the_cpu_and_says_why() {
    // With a GPU, `auto` runs the CUDA solver in a child process on the same device.
    let _gpu = GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let (ok, stdout, stderr) = fluidlab(&[
        "bench",
        "dam-break",
        "--particles",
        "2000",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("bench JSON");
    let backend = report["backend"].as_str().expect("backend");
    match cuda_unavailable() {
        Some(reason) => assert_eq!(backend, format!("cpu ({reason})")),
        None => assert!(backend.starts_with("cuda"), "{backend}"),
    }
}
