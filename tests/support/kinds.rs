//! What the simulation kinds' CUDA test binaries share (each includes it with
//! `#[path = "support/kinds.rs"] mod kinds;`): the module holds exactly the kernels the host
//! launches and NVRTC compiles it, the GPU one test at a time, and without a GPU `--backend cuda` is refused in one sentence while `auto` runs on
//! the CPU and says why.

use fluidlab::cuda::ptx::ModuleSource;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// Runs the fluidlab binary: (success, stdout, stderr).
pub fn fluidlab(args: &[&str]) -> (bool, String, String) {
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

/// Every kernel in `names` is defined in `module` (`kernels/<file>`) and an entry point of its
/// prebuilt PTX, and the PTX has no other; the NVRTC source has no includes left.
pub fn assert_module_holds_exactly(module: &ModuleSource, file: &str, names: &[&str]) {
    let source = module.nvrtc_source();
    assert!(!source.contains("#include"), "NVRTC gets no include paths");
    for name in names {
        assert!(
            source.contains(&format!("\n{name}(")),
            "kernel {name} is not defined in kernels/{file}"
        );
        if let Some(ptx) = module.ptx {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "kernel {name} is not an .entry of the prebuilt PTX"
            );
        }
    }
    if let Some(ptx) = module.ptx {
        assert_eq!(ptx.matches(".entry ").count(), names.len());
    }
}

/// On a machine without CUDA, `bench` (the arguments) with `--backend cuda` fails in one
/// sentence that names the reason and the way out, and with the default `auto` runs on the CPU
/// and says why in its JSON report, which it returns.
pub fn assert_cuda_refused_and_auto_says_why(bench: &[&str]) -> serde_json::Value {
    let reason = fluidlab::cuda::unavailable()
        .expect("build.rs found no CUDA, but CUDA runs now: rebuild (touch build.rs)");
    let (ok, _, stderr) = fluidlab(&[bench, &["--backend", "cuda"]].concat());
    assert!(!ok);
    let message = stderr.trim();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert_eq!(
        message,
        format!(
            "error: --backend cuda cannot run on this machine: {reason}; use --backend cpu or \
             --backend auto"
        )
    );
    let (ok, stdout, stderr) = fluidlab(&[bench, &["--json"]].concat());
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("bench JSON");
    assert_eq!(report["backend"], format!("cpu ({reason})"));
    report
}

/// The declaration of `kernel`'s first parameter in `ptx` (where a record passed by value shows
/// its size, e.g. `.param .align 4 .b8 curl_param_0[72]`).
pub fn first_parameter(ptx: &str, kernel: &str) -> String {
    let entry = ptx
        .split(&format!(".entry {kernel}("))
        .nth(1)
        .expect("the kernel's entry");
    entry.split(',').next().unwrap_or_default().to_string()
}

/// The PTX types of `kernel`'s parameters, in order (`.u32`, `.f32`, `.u64` for a pointer,
/// `.align 4 .b8 …[164]` for a record).
#[allow(dead_code)]
pub fn parameter_types(ptx: &str, kernel: &str) -> Vec<String> {
    let entry = ptx
        .split(&format!(".entry {kernel}("))
        .nth(1)
        .expect("the kernel's entry");
    let list = entry.split(')').next().unwrap_or_default();
    list.split(',')
        .map(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            // ".param TYPE... NAME[SIZE]": the words between, and a record's size.
            let name = words.last().copied().unwrap_or_default();
            let size = name.find('[').map_or("", |at| &name[at..]);
            words[1..words.len().saturating_sub(1)].join(" ") + size
        })
        .collect()
}

/// NVRTC compiles `module` (`kernels/<file>`, its embedded source) for the H200 and the PTX
/// holds every kernel in `names`.
pub fn assert_nvrtc_compiles(module: &ModuleSource, file: &str, names: &[&str]) {
    let ptx = fluidlab::cuda::module::compile_with_nvrtc(module, (9, 0))
        .unwrap_or_else(|e| panic!("NVRTC compiles {file}: {e}"));
    let text = ptx.to_src();
    for name in names {
        assert!(text.contains(&format!(".entry {name}(")), "{name} missing");
    }
}

/// Held by every test that uses the GPU (one device for the tests of a binary).
static GPU: Mutex<()> = Mutex::new(());

/// The GPU, for one test at a time; a GPU build.rs found but that is gone now fails the test.
pub fn gpu() -> MutexGuard<'static, ()> {
    if let Some(reason) = fluidlab::cuda::unavailable() {
        panic!("build.rs found a CUDA GPU, but now {reason}: rebuild (touch build.rs)");
    }
    GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
