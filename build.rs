//! Compiles every `kernels/*.cu` to PTX with nvcc when one is found, so the binary carries
//! prebuilt kernels, and writes the module table `src/cuda/ptx.rs` includes: one module per
//! `kernels/<name>.cu`, found by `<name>`, with its source and every header under `kernels/` for
//! NVRTC. Without nvcc the build still succeeds: the table then has no PTX and the kernel sources
//! are compiled with NVRTC when a CUDA solver starts. A new `kernels/<kind>.cu` needs no change
//! here.
//!
//! nvcc is looked for in `$NVCC`, `$CUDA_PATH/bin`, `PATH`, then the project-local
//! `.tools/cuda/nvidia/cu13/bin/nvcc` that `scripts/setup.sh` installs from PyPI.
//! `FLUIDLAB_CUDA_ARCH` sets the virtual architecture (default `compute_75`). With nvcc it also
//! compiles a cubin for `FLUIDLAB_CUDA_CUBIN_ARCH` (default `sm_90`, the H200's; empty for none),
//! which the loader uses on GPUs that run it, so they need no JIT compilation at start.
//!
//! It also compiles the NVTX shim (`src/cuda/nvtx.c`) when the NVTX 3 headers are found
//! (`$CUDA_PATH/include`, `/usr/local/cuda/include`, or `.tools/cuda/nvidia/cu13/include`).
//!
//! And it sets a `cfg` for each thing some tests need that a machine may lack (a GPU, libnvrtc,
//! nvcc's output, ptxas, a C++20 compiler, cuda.h, AddressSanitizer's runtime), so those tests are marked ignored with the reason
//! and counted as skipped, not passed (docs/testing.md, "Skipped tests").

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The program's own answer to "can CUDA run here?", shared so the tests are ignored exactly
/// where the program would not run CUDA.
#[path = "src/cuda/available.rs"]
mod available;

/// PTX for a virtual architecture is compiled to machine code by the driver at load time for
/// the GPU it finds; compute_75 runs on every GPU from Turing on (the kernels need nothing
/// newer: 32-bit atomics and warp shuffles), Hopper included.
const DEFAULT_ARCH: &str = "compute_75";
/// Machine code for Hopper (H100/H200), the GPU the project is measured on.
const DEFAULT_CUBIN_ARCH: &str = "sm_90";
const LOCAL_NVCC: &str = ".tools/cuda/nvidia/cu13/bin/nvcc";
const LOCAL_CUDA_INCLUDE: &str = ".tools/cuda/nvidia/cu13/include";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo::rerun-if-changed=kernels");
    println!("cargo::rerun-if-changed={LOCAL_NVCC}");
    for var in [
        "NVCC",
        "CUDA_PATH",
        "FLUIDLAB_CUDA_ARCH",
        "FLUIDLAB_CUDA_CUBIN_ARCH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    build_nvtx(&manifest);
    write_presets(&manifest, &out);

    let kernels = manifest.join("kernels");
    let mut modules: Vec<PathBuf> = std::fs::read_dir(&kernels)
        .expect("read kernels/")
        .map(|entry| entry.expect("kernels/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "cu"))
        .collect();
    modules.sort();
    let arch = env::var("FLUIDLAB_CUDA_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string());
    let cubin_arch =
        env::var("FLUIDLAB_CUDA_CUBIN_ARCH").unwrap_or_else(|_| DEFAULT_CUBIN_ARCH.to_string());
    let nvcc = find_nvcc(&manifest);
    let prebuilt = Prebuilt {
        ptx: nvcc.is_some(),
        cubin: nvcc.is_some() && !cubin_arch.is_empty(),
    };
    write_modules(&kernels, &modules, &out, prebuilt);
    probe_test_needs(
        &manifest,
        &out,
        nvcc.as_ref().map(|(nvcc, _)| nvcc.as_path()),
        prebuilt,
    );
    let Some((nvcc, version)) = nvcc else {
        println!(
            "cargo::warning=nvcc not found (NVCC, CUDA_PATH, PATH, {LOCAL_NVCC}): the CUDA kernels \
             will be compiled with NVRTC at run time (scripts/setup.sh installs nvcc)"
        );
        return;
    };
    for source in &modules {
        let stem = source.file_stem().expect("file stem").to_string_lossy();
        nvcc_compile(
            &nvcc,
            &manifest,
            source,
            "--ptx",
            &arch,
            &out.join(format!("{stem}.ptx")),
        );
        if !cubin_arch.is_empty() {
            let cubin = out.join(format!("{stem}.cubin"));
            nvcc_compile(&nvcc, &manifest, source, "--cubin", &cubin_arch, &cubin);
        }
    }
    println!("cargo::rustc-env=FLUIDLAB_NVCC={}", nvcc.display());
    println!("cargo::rustc-env=FLUIDLAB_PTX_ORIGIN=nvcc {version} at build time, -arch={arch}");
    if prebuilt.cubin {
        println!("cargo::rustc-env=FLUIDLAB_CUBIN_ARCH={cubin_arch}");
        println!(
            "cargo::rustc-env=FLUIDLAB_CUBIN_ORIGIN=nvcc {version} at build time, -arch={cubin_arch}"
        );
    }
}

/// Sets a `cfg` for each need of some tests that this machine meets; a test that has a need
/// carries `#[cfg_attr(not(fluidlab_…), ignore = "needs …")]`, so where it cannot run, libtest
/// reports it ignored with the reason. Reruns when the environment these answers read changes.
///
/// - `fluidlab_cuda`: CUDA runs here (a driver new enough and a GPU), asked as the program asks.
/// - `fluidlab_nvrtc`: libnvrtc loads, found as cudarc finds it.
/// - `fluidlab_nvcc`, `fluidlab_cubin`: the binary carries nvcc's PTX, and its cubin.
/// - `fluidlab_project_nvcc`: scripts/setup.sh's nvcc is installed.
/// - `fluidlab_ptxas`: ptxas runs (beside nvcc or on PATH), with PTX to give it.
/// - `fluidlab_cxx20`: `$CXX` (else `c++`) compiles C++20 with `<barrier>`, as the emulation
///   tests compile the kernels.
/// - `fluidlab_emulated_driver`: that, and `cuda.h` (the emulated CUDA driver builds);
///   `fluidlab_emulated_memcheck`: also gcc's AddressSanitizer runtime (its memcheck flavour).
fn probe_test_needs(manifest: &Path, out: &Path, nvcc: Option<&Path>, prebuilt: Prebuilt) {
    for variable in ["LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CXX"] {
        println!("cargo::rerun-if-env-changed={variable}");
    }
    // SAFETY: only tries to open the library.
    let nvrtc = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    let ptxas = nvcc.is_some_and(|nvcc| {
        let beside = nvcc.with_file_name("ptxas");
        runs(
            Command::new(if beside.exists() {
                beside
            } else {
                "ptxas".into()
            })
            .arg("--version"),
        )
    });
    let cxx20 = compiles_cxx20(out);
    let emulated_driver = cxx20 && finds_cuda_header(manifest);
    let needs = [
        ("fluidlab_cuda", available::unavailable().is_none()),
        ("fluidlab_nvrtc", nvrtc),
        ("fluidlab_nvcc", prebuilt.ptx),
        ("fluidlab_cubin", prebuilt.cubin),
        ("fluidlab_project_nvcc", manifest.join(LOCAL_NVCC).exists()),
        ("fluidlab_ptxas", prebuilt.ptx && ptxas),
        ("fluidlab_cxx20", cxx20),
        ("fluidlab_emulated_driver", emulated_driver),
        (
            "fluidlab_emulated_memcheck",
            emulated_driver && has_asan_runtime(),
        ),
        ("fluidlab_avx2", host_has_avx2()),
    ];
    for (cfg, met) in needs {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if met {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

/// Whether `cuda.h` is at hand (the toolkit's, or the one scripts/setup.sh installs from PyPI):
/// the emulated CUDA driver (tests/emulation/driver/) is built against it, in the folder given
/// to the tests as `FLUIDLAB_CUDA_INCLUDE`.
fn finds_cuda_header(manifest: &Path) -> bool {
    println!("cargo::rerun-if-changed={LOCAL_CUDA_INCLUDE}/cuda.h");
    let found = cuda_include_roots(manifest)
        .into_iter()
        .find(|root| root.join("cuda.h").is_file());
    if let Some(root) = &found {
        println!("cargo::rustc-env=FLUIDLAB_CUDA_INCLUDE={}", root.display());
    }
    found.is_some()
}

/// Where CUDA's headers may be, in the order they are taken: `$CUDA_PATH/include`, the
/// toolkit's usual place, then the project-local PyPI install.
fn cuda_include_roots(manifest: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(root) = env::var("CUDA_PATH") {
        roots.push(Path::new(&root).join("include"));
    }
    roots.push(PathBuf::from("/usr/local/cuda/include"));
    roots.push(manifest.join(LOCAL_CUDA_INCLUDE));
    roots
}

/// Whether the C++ compiler has AddressSanitizer's runtime (gcc's libasan), which the emulated
/// driver's memcheck build preloads.
fn has_asan_runtime() -> bool {
    let compiler = env::var("CXX").unwrap_or_else(|_| "c++".into());
    Command::new(compiler)
        .arg("-print-file-name=libasan.so")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .is_some_and(|path| {
            let path = Path::new(path.trim());
            path.is_absolute() && path.is_file()
        })
}

/// Whether the machine building (and so running the tests) has AVX2, the vector path of ink's
/// `advect` (`src/sims/ink/advect/avx2.rs`); without it its bitwise test would compare the
/// scalar path with itself.
fn host_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether `command` starts and exits with success.
fn runs(command: &mut Command) -> bool {
    command.output().is_ok_and(|output| output.status.success())
}

/// Whether the C++ compiler the emulation tests use compiles a C++20 program with
/// `<barrier>` (the newest header they include) and their flags.
fn compiles_cxx20(out: &Path) -> bool {
    let compiler = env::var("CXX").unwrap_or_else(|_| "c++".into());
    let source = out.join("cxx20_probe.cpp");
    std::fs::write(
        &source,
        "#include <barrier>\nint main() { std::barrier<> b(1); b.arrive_and_wait(); }\n",
    )
    .expect("write the C++ probe");
    runs(
        Command::new(compiler)
            .args(["-std=c++20", "-pthread", "-x", "c++"])
            .arg(&source)
            .arg("-o")
            .arg(out.join("cxx20_probe")),
    )
}

/// Which compiled forms of each module nvcc makes in `OUT_DIR` (`<name>.ptx`, `<name>.cubin`).
#[derive(Clone, Copy)]
struct Prebuilt {
    ptx: bool,
    cubin: bool,
}

/// Writes `modules.rs` and `headers.rs` into `out` (`src/cuda/ptx.rs` includes them): one
/// `ModuleSource` per `kernels/<name>.cu` in `modules`, embedding its source and, where nvcc
/// makes them, its PTX and cubin; and every other file under `kernels/` (the headers), named by
/// its path below `kernels/`, so NVRTC can be given each module with its headers pasted in.
fn write_modules(kernels: &Path, modules: &[PathBuf], out: &Path, prebuilt: Prebuilt) {
    let embed =
        |macro_name: &str, path: &Path| format!("{macro_name}!({:?})", path.display().to_string());
    let mut code = String::from("&[\n");
    for source in modules {
        let name = source.file_stem().expect("file stem").to_string_lossy();
        let ptx = out.join(format!("{name}.ptx"));
        let cubin = out.join(format!("{name}.cubin"));
        code += &format!(
            "    ModuleSource {{ name: {name:?}, source: {}, ptx: {}, cubin: {} }},\n",
            embed("include_str", source),
            if prebuilt.ptx {
                format!("Some({})", embed("include_str", &ptx))
            } else {
                "None".into()
            },
            if prebuilt.cubin {
                format!("Some({})", embed("include_bytes", &cubin))
            } else {
                "None".into()
            },
        );
    }
    code += "]\n";
    std::fs::write(out.join("modules.rs"), code).expect("write modules.rs");

    let mut headers = Vec::new();
    collect_headers(kernels, kernels, &mut headers);
    headers.sort();
    let mut code = String::from("&[\n");
    for (name, path) in &headers {
        code += &format!("    ({name:?}, {}),\n", embed("include_str", path));
    }
    code += "]\n";
    std::fs::write(out.join("headers.rs"), code).expect("write headers.rs");
}

/// Every file below `dir` that is not a module (`*.cu`), as (path below `root` with `/`
/// separators, path).
fn collect_headers(root: &Path, dir: &Path, headers: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).expect("read kernels/") {
        let path = entry.expect("kernels/ entry").path();
        if path.is_dir() {
            collect_headers(root, &path, headers);
        } else if path.extension().is_none_or(|e| e != "cu") {
            let name = path.strip_prefix(root).expect("below kernels/");
            let name: Vec<_> = name.iter().map(|part| part.to_string_lossy()).collect();
            headers.push((name.join("/"), path));
        }
    }
}

/// Writes `presets.rs` into `out`: one `Preset` per `scenes/<kind>/<name>.toml`, sorted by kind
/// and name, each embedding its file (`src/scene/presets.rs` includes it). A new preset, or a
/// new kind's folder of presets, needs no code.
fn write_presets(manifest: &Path, out: &Path) {
    let scenes = manifest.join("scenes");
    println!("cargo::rerun-if-changed=scenes");
    let mut presets = Vec::new();
    for kind in std::fs::read_dir(&scenes).expect("read scenes/") {
        let kind = kind.expect("scenes/ entry").path();
        if !kind.is_dir() {
            continue;
        }
        println!("cargo::rerun-if-changed={}", kind.display());
        for file in std::fs::read_dir(&kind).expect("read scenes/<kind>/") {
            let file = file.expect("scenes/<kind>/ entry").path();
            if file.extension().is_some_and(|e| e == "toml") {
                let stem = |p: &Path| p.file_stem().unwrap().to_string_lossy().into_owned();
                presets.push((
                    kind.file_name().unwrap().to_string_lossy().into_owned(),
                    stem(&file),
                    file,
                ));
            }
        }
    }
    presets.sort();
    let mut seen = std::collections::HashMap::new();
    for (kind, name, _) in &presets {
        if let Some(other) = seen.insert(name.clone(), kind.clone()) {
            panic!("two presets are called {name} (scenes/{other}/ and scenes/{kind}/): preset names must be unique");
        }
    }
    let mut code = String::from("&[\n");
    for (kind, name, path) in &presets {
        code += &format!(
            "    Preset {{ kind: {kind:?}, name: {name:?}, source: include_str!({:?}) }},\n",
            path.display().to_string()
        );
    }
    code += "]\n";
    std::fs::write(out.join("presets.rs"), code).expect("write presets.rs");
}

/// Compiles `source` with `nvcc` in `mode` (`--ptx`, `--cubin`) for `arch` into `output`.
fn nvcc_compile(
    nvcc: &Path,
    manifest: &Path,
    source: &Path,
    mode: &str,
    arch: &str,
    output: &Path,
) {
    // No --use_fast_math: it swaps IEEE division and square root for approximations and
    // flushes denormals, which moves results away from the CPU reference for no measurable
    // gain in these memory-bound neighbour loops. FMA contraction (nvcc's default) stays:
    // it rounds once where the CPU rounds twice, a reassociation-sized difference.
    let result = Command::new(nvcc)
        .args([mode, "-O3", "-std=c++17", "-lineinfo"])
        .arg(format!("-arch={arch}"))
        .arg("-I")
        .arg(manifest.join("kernels"))
        .arg(source)
        .arg("-o")
        .arg(output)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
    if !result.status.success() {
        panic!(
            "nvcc {mode} -arch={arch} failed on {}:\n{}{}",
            source.display(),
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    }
}

/// Compiles `src/cuda/nvtx.c` against the first NVTX 3 headers found and sets `fluidlab_nvtx`;
/// without headers the ranges compile to nothing.
fn build_nvtx(manifest: &Path) {
    println!("cargo::rustc-check-cfg=cfg(fluidlab_nvtx)");
    println!("cargo::rerun-if-changed=src/cuda/nvtx.c");
    println!("cargo::rerun-if-changed={LOCAL_CUDA_INCLUDE}/nvtx3");
    let Some(include) = cuda_include_roots(manifest)
        .into_iter()
        .find(|r| r.join("nvtx3/nvToolsExt.h").is_file())
    else {
        println!("cargo::warning=NVTX headers not found: no NVTX ranges (scripts/setup.sh installs them)");
        return;
    };
    cc::Build::new()
        .file(manifest.join("src/cuda/nvtx.c"))
        .include(&include)
        .warnings(false)
        .compile("fluidlab_nvtx");
    // NVTX 3 finds the profiler with dlopen (in libc since glibc 2.34, in libdl before).
    println!("cargo::rustc-link-lib=dl");
    println!("cargo::rustc-cfg=fluidlab_nvtx");
}

/// The first nvcc that runs, and its release line ("13.0, V13.0.88").
fn find_nvcc(manifest: &Path) -> Option<(PathBuf, String)> {
    let mut candidates = Vec::new();
    if let Ok(path) = env::var("NVCC") {
        candidates.push(PathBuf::from(path));
    }
    if let Ok(root) = env::var("CUDA_PATH") {
        candidates.push(Path::new(&root).join("bin/nvcc"));
    }
    candidates.push(PathBuf::from("nvcc"));
    candidates.push(manifest.join(LOCAL_NVCC));
    candidates.into_iter().find_map(|nvcc| {
        let output = Command::new(&nvcc).arg("--version").output().ok()?;
        if !output.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let version = text
            .lines()
            .find_map(|line| line.split("release ").nth(1))
            .unwrap_or("(unknown version)")
            .trim()
            .to_string();
        Some((nvcc, version))
    })
}
