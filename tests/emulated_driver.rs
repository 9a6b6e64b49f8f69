//! The program's CUDA host code run without a GPU, on the emulated driver
//! (tests/emulation/driver/, tests/support/emulated_driver.rs): `fluidlab` is started with the
//! emulated `libcuda.so` first on its library path, so cudarc, every kind's buffers, launches,
//! events, module loading and GL interop run for real and the kernels run on the CPU. The first
//! checks are of the emulated driver itself (barriers, shuffles, surfaces, the faults it must
//! stop on). The tests that build it need a C++20 compiler and cuda.h (scripts/setup.sh
//! installs it); those of its memcheck flavour also gcc's libasan.

#[path = "support/emulated_driver.rs"]
mod emulated_driver;

mod xvfb;

use emulated_driver::{on_the_driver, root, succeeds, text, Driver, Flavour};
use std::path::Path;
use std::process::Command;

/// The end of `text`, about `bytes` long, cut at a character's start (the trace holds `×`).
fn last_bytes(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[test]
fn the_scan_tells_cooperative_kernels_from_the_others() {
    let source = r#"
        #define STRIDE(x) ((x) / 2)   // a macro's parentheses are not a function
        struct Grid { int n; };
        __device__ float helper(float x) { return x * 2.0f; }
        template <unsigned int B> __device__ double block_reduce(double v, double* s) {
            s[threadIdx.x] = v;
            __syncthreads();
            return s[0];
        }
        __device__ double twice_removed(double v, double* s) { return block_reduce<256>(v, s); }
        extern "C" __global__ void __launch_bounds__(256) plain(const Grid g, const float* __restrict__ in,
                                                                float* out, float* __restrict__ more) {
            out[threadIdx.x] = helper(1.0f);   // no __syncthreads here
        }
        extern "C" __global__ void __launch_bounds__(STRIDE(512), 2)
        reducing(double* out) {
            __shared__ double s[256];
            out[0] = twice_removed(1.0, s);
        }
        extern "C" __global__ void shuffling(unsigned* out) {
        #ifdef SOME_EMULATION
            out[0] = 1;
        #else
            out[0] = __shfl_xor_sync(0xffffffffu, 1u, 1);
        #endif
        }
        /* extern "C" __global__ void commented_out(float* out) { __syncthreads(); } */
    "#;
    let found: Vec<(String, bool, Option<String>, u64)> = emulated_driver::kernels(source)
        .into_iter()
        .map(|k| (k.name, k.cooperative, k.launch_bound, k.restrict_mask))
        .collect();
    let bound = |b: &str| Some(b.to_string());
    assert_eq!(
        found,
        [
            ("plain".to_string(), false, bound("256"), 0b1010),
            ("reducing".to_string(), true, bound("STRIDE(512)"), 0),
            ("shuffling".to_string(), true, None, 0)
        ]
    );
}

/// The scan finds the kernels nvcc compiled: the `.entry` names of each module's PTX.
#[test]
#[cfg_attr(
    not(fluidlab_nvcc),
    ignore = "needs the kernels' PTX (build.rs found no nvcc)"
)]
fn the_scan_finds_every_kernel_of_every_module() {
    for (module, path) in emulated_driver::modules() {
        let mut scanned: Vec<String> =
            emulated_driver::kernels(&emulated_driver::module_text(&path))
                .into_iter()
                .map(|k| k.name)
                .collect();
        let ptx = fluidlab::cuda::ptx::module_source(&module)
            .and_then(|source| source.ptx)
            .expect("the module's PTX");
        let mut entries: Vec<String> = ptx
            .lines()
            .filter_map(|line| line.trim().strip_prefix(".visible .entry "))
            .map(|rest| rest.split('(').next().unwrap().trim().to_string())
            .collect();
        scanned.sort();
        entries.sort();
        assert!(!entries.is_empty(), "{module}");
        assert_eq!(scanned, entries, "kernels/{module}.cu");
    }
}

#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn the_emulated_driver_runs_barriers_shuffles_and_surfaces_and_refuses_bad_calls() {
    selftest(&emulated_driver::build(Flavour::Plain));
}

#[test]
#[cfg_attr(
    not(fluidlab_emulated_memcheck),
    ignore = "needs a C++20 compiler, cuda.h and gcc's libasan (build.rs found one missing)"
)]
fn the_memcheck_driver_runs_barriers_shuffles_and_surfaces_and_refuses_bad_calls() {
    selftest(&emulated_driver::build(Flavour::Memcheck));
}

fn selftest(driver: &Driver) {
    let output = on_the_driver(Command::new(driver.dir.join("selftest")), driver);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("every check passed"), "{stdout}");
    // The refusals say what was wrong.
    for said in [
        "cuMemcpyHtoD: 4 bytes at 0x",
        "cuMemcpyHtoD: the host side is a device pointer",
        "are not inside one device allocation",
        "kernel `selftest_copy`: parameter 0 is a pointer",
        "kernel `selftest_copy`: parameter 1 is a pointer",
        "kernel `selftest_copy`: launch shape grid (1, 1, 1) block (2048, 1, 1) is outside the \
         device's limits",
        "kernel `selftest_block_sum`: 512 threads per block, over its __launch_bounds__ of 256",
        "kernel `selftest_copy_restrict`: parameters 0 and 1 are both 0x",
        "kernel `selftest_copy_from_restrict`: parameters 0 and 1 are both 0x",
        "one __restrict__ and one written: they must not alias",
        "cuMemcpy2D: the source rectangle 148 bytes × 22 rows at (0, 0) leaves its 148 × 21 array",
    ] {
        assert!(stderr.contains(said), "{said:?} in\n{stderr}");
    }
}

/// What a GPU stops on (compute-sanitizer's synccheck), the emulation stops on, naming the
/// kernel and the fault.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn the_emulated_driver_stops_on_the_faults_of_a_gpu() {
    let driver = emulated_driver::build(Flavour::Plain);
    for (fault, said) in [
        (
            "divergent-barrier",
            "kernel `selftest_divergent_barrier`: a __syncthreads that 32 of the block's 64 threads \
             never reach: they returned before it",
        ),
        (
            "shuffle-after-return",
            "kernel `selftest_shuffle_after_return`: a shuffle in warp 0 after 16 of its lanes \
             returned",
        ),
        (
            "divergent-shuffle",
            "kernel `selftest_divergent_shuffle`: lanes of warp 0 shuffle at different places",
        ),
        (
            "surface-overrun",
            "kernel `selftest_surface_overrun`: surf2Dwrite at byte 32, row 0 of a 8 x 8 surface",
        ),
    ] {
        let mut command = Command::new(driver.dir.join("selftest"));
        command.arg(fault);
        let output = on_the_driver(command, &driver);
        let (stdout, stderr) = text(&output);
        assert!(!output.status.success(), "{fault}: {stdout}\n{stderr}");
        assert!(stderr.contains(said), "{fault}: {said:?} in\n{stderr}");
    }
}

/// `FLUIDLAB_EMULATED_ORDER`: the self-test's order checks pass in every order (forward and
/// reverse as named; random neither, blocks interleaved, threads out of index order, another
/// permutation at the next launch), one seed gives the same orders in two runs and another seed
/// others, and a value it cannot read stops the process naming the key and the value.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn the_emulated_driver_runs_launches_in_the_order_asked() {
    let driver = emulated_driver::build(Flavour::Plain);
    let orders = |setting: &str| -> (bool, String, String) {
        let mut command = Command::new(driver.dir.join("selftest"));
        command.env("FLUIDLAB_EMULATED_ORDER", setting);
        let output = on_the_driver(command, &driver);
        let (stdout, stderr) = text(&output);
        let lines: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("order: "))
            .collect();
        (output.status.success(), lines.join("\n"), stderr)
    };
    let (ok, forward, stderr) = orders("forward");
    assert!(ok, "{stderr}");
    assert!(
        forward.contains("order: selftest_order 0 1 2 3 4 5 6 7"),
        "{forward}"
    );
    let (ok, reverse, stderr) = orders("reverse");
    assert!(ok, "{stderr}");
    assert!(
        reverse.contains("order: selftest_order 255 254 253"),
        "{reverse}"
    );
    let (ok, seven, stderr) = orders("random:7");
    assert!(ok, "{stderr}");
    assert_eq!(seven.lines().count(), 4, "{seven}");
    let (ok, again, stderr) = orders("random:7");
    assert!(ok, "{stderr}");
    assert_eq!(seven, again, "one seed, two runs");
    let (ok, eight, stderr) = orders("random:8");
    assert!(ok, "{stderr}");
    for (a, b) in seven.lines().zip(eight.lines()) {
        assert_ne!(a, b, "seeds 7 and 8");
    }
    let (ok, _, stderr) = orders("random:x");
    assert!(!ok);
    assert!(
        stderr.contains(
            "FLUIDLAB_EMULATED_ORDER=random:x: expected forward, reverse, random or random:SEED"
        ),
        "{stderr}"
    );
}

/// What compute-sanitizer's memcheck reports on a GPU, the memcheck flavour stops on: a kernel
/// writing past the end of its buffer.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_memcheck),
    ignore = "needs a C++20 compiler, cuda.h and gcc's libasan (build.rs found one missing)"
)]
fn the_memcheck_driver_stops_on_a_kernel_writing_past_its_buffer() {
    let driver = emulated_driver::build(Flavour::Memcheck);
    let mut command = Command::new(driver.dir.join("selftest"));
    command.arg("buffer-overrun");
    let output = on_the_driver(command, &driver);
    let (stdout, stderr) = text(&output);
    assert!(!output.status.success(), "{stdout}\n{stderr}");
    for said in [
        "ERROR: AddressSanitizer: heap-buffer-overflow",
        "WRITE of size 4",
        "in selftest_copy",
        "0 bytes to the right of 400-byte region",
    ] {
        assert!(stderr.contains(said), "{said:?} in\n{stderr}");
    }
}

/// `fluidlab doctor` on the emulated driver's memcheck flavour: every kind's kernels load from
/// the sm_90 cubin, every CPU-vs-CUDA parity line passes through the program's own CUDA host
/// code, and no kernel or copy touches memory outside its buffers. Every launch runs in a
/// random order (`FLUIDLAB_EMULATED_ORDER=random:1`: blocks and threads shuffled, as a GPU
/// running them at once may order them), so a result that depends on the order fails a parity
/// line; another seed: `FLUIDLAB_DOCTOR_ORDER_SEED=N`.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_memcheck),
    ignore = "needs a C++20 compiler, cuda.h and gcc's libasan (build.rs found one missing)"
)]
fn doctor_passes_on_the_memcheck_driver() {
    let seed: u64 = match std::env::var("FLUIDLAB_DOCTOR_ORDER_SEED") {
        Ok(value) => value.parse().unwrap_or_else(|_| {
            panic!("FLUIDLAB_DOCTOR_ORDER_SEED={value}: expected a whole number (the random order's seed)")
        }),
        Err(_) => 1,
    };
    let driver = emulated_driver::build(Flavour::Memcheck);
    let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
    // Interop emulated on Mesa's EGL context: the CUDA–GL interop line runs too.
    command
        .arg("doctor")
        .env("FLUIDLAB_EMULATED_INTEROP", "1")
        .env("FLUIDLAB_EMULATED_ORDER", format!("random:{seed}"));
    let (stdout, _) = succeeds(command, &driver);
    assert!(!stdout.contains("FAIL"), "{stdout}");
    for line in [
        "PASS  GPU                            fluidlab emulated CUDA device (CPU), compute capability 9.0",
        "PASS  kernels",
        "PASS  restarts",
        "PASS  parity: one frame",
        "PASS  parity: 200 frames",
        "PASS  statistics: GPU reductions",
        "PASS  parity: foam",
        "PASS  ink parity: stages",
        "PASS  ink parity: 20 steps",
        "PASS  ink parity: multigrid",
        "PASS  ink parity: painting obstacles",
        "PASS  ink parity: moving walls",
        "PASS  ink parity: walls at the edges",
        "PASS  pool parity: stages",
        "PASS  pool parity: run",
        "PASS  pool parity: restart",
        "PASS  pool memory",
        "PASS  particles parity",
        "PASS  particles statistics",
        "PASS  particles frame end",
        "PASS  particles live edits",
        "PASS  particles self-collision",
        "PASS  CUDA–GL interop",
    ] {
        assert!(stdout.contains(line), "{line:?} in\n{stdout}");
    }
    assert_eq!(
        stdout.matches("code from the sm_90 cubin").count(),
        4,
        "every module from the cubin:\n{stdout}"
    );
}

/// The frames `fluidlab render` writes, decoded.
fn frames(dir: &Path) -> Vec<image::RgbaImage> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "png"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|path| image::open(path).unwrap().to_rgba8())
        .collect()
}

/// Every kind drawn through CUDA–GL interop, emulated (FLUIDLAB_EMULATED_INTEROP=1: the
/// kernels write the renderer's mapped GL buffers and textures, on Mesa's EGL context), gives
/// the pictures the CPU backend gives, with blocks and threads run last to first (the doctor's
/// parity runs them first to last). A surface object kept from an earlier mapping of a
/// texture (ink's picture, the pool's surface once did) stops the render at its second frame.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn renders_through_emulated_interop_match_the_cpu_renders() {
    let driver = emulated_driver::build(Flavour::Plain);
    let out = tempfile::tempdir().unwrap();
    for (scene, frames_count, steps) in [
        ("dam-break", "2", "1"),
        ("karman", "3", "1"),
        ("pool", "3", "1"),
        // Land told through interop (the solver's flags, `take_land_change`).
        ("islands", "3", "1"),
        ("fountain", "2", "30"),
        ("cloth", "2", "2"),
        ("jelly", "2", "2"),
    ] {
        let mut dirs = Vec::new();
        for backend in ["cuda", "cpu"] {
            let dir = out.path().join(format!("{scene}-{backend}"));
            let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
            command
                .args([
                    "render",
                    scene,
                    "--backend",
                    backend,
                    "--frames",
                    frames_count,
                ])
                .args(["--steps-per-frame", steps, "--size", "160x90", "--out"])
                .arg(&dir)
                .env("FLUIDLAB_EMULATED_INTEROP", "1")
                .env("FLUIDLAB_EMULATED_TRACE", "1")
                .env("FLUIDLAB_EMULATED_ORDER", "reverse");
            let output = on_the_driver(command, &driver);
            let (stdout, stderr) = text(&output);
            let tail = last_bytes(&stderr, 3000);
            assert!(
                output.status.success(),
                "{scene} on {backend}: {stdout}\n{tail}"
            );
            if backend == "cuda" {
                assert!(
                    stderr.contains("emulated CUDA driver: mapped GL"),
                    "{scene}: drawn without interop:\n{tail}"
                );
            }
            dirs.push(dir);
        }
        let (cuda, cpu) = (frames(&dirs[0]), frames(&dirs[1]));
        assert_eq!(cuda.len(), cpu.len(), "{scene}");
        for (k, (a, b)) in cuda.iter().zip(&cpu).enumerate() {
            let (mut total, mut differing) = (0u64, 0usize);
            for (p, q) in a.pixels().zip(b.pixels()) {
                let d = (0..4).map(|c| p[c].abs_diff(q[c])).max().unwrap();
                total += u64::from(d);
                differing += usize::from(d > 8);
            }
            let pixels = (a.width() * a.height()) as usize;
            let mean = total as f64 / pixels as f64;
            // Rounding (the GPU's fused multiply-adds) moves a shade by a level or two, and
            // can tip a few edge pixels (a caustic's, a highlight's) further; a wrong write
            // into the GL object (a texel, a record) changes far more.
            assert!(
                differing * 1000 <= pixels && mean < 0.5,
                "{scene} frame {k}: {differing} of {pixels} pixels differ by over 8 levels, \
                 mean difference {mean:.3}"
            );
        }
    }
}

/// The viewer on CUDA, every kind, through emulated interop under Xvfb: frames are stepped on
/// the GPU path and drawn from the GL objects the kernels wrote, and the window closes cleanly
/// (the GL objects released while their context is current).
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn the_viewer_draws_every_kind_through_emulated_interop() {
    let driver = emulated_driver::build(Flavour::Plain);
    let xvfb = xvfb::start_xvfb();
    let directory = tempfile::tempdir().unwrap();
    let block = directory.path().join("block.toml");
    std::fs::write(&block, xvfb::BLOCK_SCENE).unwrap();
    for scene in [
        block.to_str().unwrap(),
        "karman",
        "pool",
        "fountain",
        "cloth",
    ] {
        let screenshot = directory.path().join("shot.png");
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .args([
                "view",
                scene,
                "--backend",
                "cuda",
                "--exit-after-frames",
                "3",
            ])
            .arg("--screenshot")
            .arg(&screenshot)
            .env("DISPLAY", &xvfb.display)
            .env_remove("WAYLAND_DISPLAY")
            .env("FLUIDLAB_EMULATED_INTEROP", "1")
            .env("FLUIDLAB_EMULATED_TRACE", "1");
        let output = on_the_driver(command, &driver);
        let (stdout, stderr) = text(&output);
        let tail = last_bytes(&stderr, 3000);
        assert!(output.status.success(), "{scene}: {stdout}\n{tail}");
        assert!(
            stderr.contains("emulated CUDA driver: mapped GL"),
            "{scene}: drawn without interop:\n{tail}"
        );
        assert!(screenshot.is_file(), "{scene}: no screenshot");
    }
}

/// `bench --json` on CUDA counts the kernels a step launches: the driver sees exactly those.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn bench_counts_the_kernel_launches_the_driver_sees() {
    let driver = emulated_driver::build(Flavour::Plain);
    let run = |steps: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .args([
                "bench",
                "dam-break",
                "--backend",
                "cuda",
                "--particles",
                "3000",
            ])
            .args([
                "--warmup",
                "1",
                "--steps",
                steps,
                "--json",
                "--no-stage-timing",
            ])
            .env("FLUIDLAB_EMULATED_TRACE", "1");
        let (stdout, stderr) = succeeds(command, &driver);
        let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        let per_step = report["kernel_launches_per_step"].as_f64().unwrap();
        let seen = stderr.matches("emulated CUDA driver: kernel `").count();
        (per_step * steps.parse::<f64>().unwrap(), seen)
    };
    let (one, seen_one) = run("1");
    let (three, seen_three) = run("3");
    // Steps 2 and 3: the difference of two runs alike up to them.
    assert_eq!(three - one, (seen_three - seen_one) as f64);
    // A step is 2 to 3 substeps of ~90 launches (the coarse correction's ~70 of them).
    assert!((100.0..400.0).contains(&one), "{one} launches in a step");
}

/// Frames replayed as CUDA graphs (`FLUIDLAB_CUDA_GRAPHS`, the default) run the same kernels in
/// the same order with the same arguments as frames launched one by one: the exported
/// particles are equal bit for bit. A graph keyed on too little host state (the arrays' swaps,
/// the coarse correction's warm start) replays a frame of another kind and fails this. So does
/// a fallback from a refused capture that leaves the arrays swapped.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn frames_replayed_as_cuda_graphs_equal_frames_launched_one_by_one() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    // The dam break, coarser (~2,800 particles): the coarse correction, vorticity and XSPH on.
    let scene = dir.path().join("small-dam-break.toml");
    let preset = std::fs::read_to_string(root().join("scenes/pbf/dam-break.toml")).unwrap();
    std::fs::write(&scene, preset.replace("spacing = 0.02", "spacing = 0.04")).unwrap();
    let run = |name: &str, environment: &[(&str, &str)]| {
        let out = dir.path().join(name);
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .arg("simulate")
            .arg(&scene)
            .args(["--backend", "cuda", "--steps", "7", "--every", "7"])
            .args(["--format", "csv", "--export"])
            .arg(&out)
            .envs(environment.iter().copied())
            .env("FLUIDLAB_EMULATED_TRACE", "1");
        let (_, stderr) = succeeds(command, &driver);
        let kernels: Vec<String> = stderr
            .lines()
            .filter_map(|line| line.strip_prefix("emulated CUDA driver: kernel `"))
            .map(|rest| rest.split('`').next().unwrap_or_default().to_string())
            .collect();
        let replayed = stderr.matches("(graph node)").count();
        let last = std::fs::read(out.join("frame_00007.csv")).expect("the last frame");
        (kernels, replayed, last)
    };
    let (graph_kernels, graph_nodes, graph_frame) = run("graphs", &[]);
    let (plain_kernels, plain_nodes, plain_frame) =
        run("launches", &[("FLUIDLAB_CUDA_GRAPHS", "0")]);
    assert_eq!(plain_nodes, 0);
    // A capture the driver refuses in the middle of the frame (after the sort's swaps): the
    // arrays go back, and the frames run launch by launch, the same kernels to the same end.
    let (refused_kernels, refused_nodes, refused_frame) =
        run("refused", &[("FLUIDLAB_EMULATED_CAPTURE_LIMIT", "40")]);
    assert_eq!(refused_nodes, 0);
    assert!(
        refused_kernels == plain_kernels,
        "refused capture: other kernels ran"
    );
    assert!(
        refused_frame == plain_frame,
        "refused capture: frame 7 differs"
    );
    // Every frame's substeps ran as graphs (all but find_non_finite and the setup's launches).
    assert!(
        graph_nodes * 10 > graph_kernels.len() * 9,
        "{graph_nodes} of {} kernels in graphs",
        graph_kernels.len()
    );
    if let Some(at) = (0..graph_kernels.len().max(plain_kernels.len()))
        .find(|&i| graph_kernels.get(i) != plain_kernels.get(i))
    {
        panic!(
            "kernel {at} of {} (graphs) and {} (one by one) differs: {:?} against {:?}",
            graph_kernels.len(),
            plain_kernels.len(),
            graph_kernels.get(at),
            plain_kernels.get(at)
        );
    }
    assert!(graph_frame == plain_frame, "frame 7 differs");
}

/// `bench` on CUDA reports the GPU memory the run took (cuMemGetInfo before and after, which
/// the emulated driver counts exactly): every particle array's bytes (`BYTES_PER_PARTICLE`)
/// and the grid's and the coarse correction's arrays on top (72 bytes per cell, about 0.5
/// cells per particle in the dam break: ~39 bytes per particle measured), nothing else.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn bench_reports_the_gpu_memory_the_run_took() {
    let driver = emulated_driver::build(Flavour::Plain);
    let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
    command
        .args(["bench", "dam-break", "--backend", "cuda"])
        .args(["--particles", "20000", "--warmup", "1", "--steps", "1"])
        .args(["--json", "--no-stage-timing"]);
    let (stdout, _) = succeeds(command, &driver);
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let per_particle = report["gpu_bytes_per_particle"].as_f64().unwrap();
    let arrays = fluidlab::sims::pbf::cuda::BYTES_PER_PARTICLE as f64;
    assert!(
        (arrays + 20.0..arrays + 60.0).contains(&per_particle),
        "{per_particle} bytes per particle, the particle arrays alone {arrays}"
    );
}
