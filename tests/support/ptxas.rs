//! The kernels' register check, shared by the CUDA test binaries (each includes it with
//! `#[path = "support/ptxas.rs"] mod ptxas;`): a module's PTX assembled for the H200's
//! architecture by `ptxas -v`, and every kernel's resource line read back.

use fluidlab::cuda::ptx;
use std::path::PathBuf;
use std::process::Command;

/// ptxas beside the nvcc build.rs used, else on the PATH.
fn ptxas() -> Option<PathBuf> {
    let ptxas = PathBuf::from(ptx::BUILD_NVCC?).with_file_name("ptxas");
    if ptxas.exists() {
        return Some(ptxas);
    }
    let on_path = Command::new("ptxas").arg("--version").output();
    on_path
        .is_ok_and(|o| o.status.success())
        .then(|| "ptxas".into())
}

/// Assembles `source` (module `name`'s PTX) for sm_90 and asserts that each of its `kernels`
/// kernels spills no registers and has no stack frame, or the bytes `frames` allows the kernels
/// it names. Returns the report, for further checks.
pub fn assert_no_spills(
    name: &str,
    source: &str,
    kernels: usize,
    frames: &[(&str, u32)],
) -> String {
    let ptxas =
        ptxas().expect("build.rs found ptxas, and it does not run now: rebuild (touch build.rs)");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("{name}.ptx"));
    std::fs::write(&path, source).expect("write PTX");
    let output = Command::new(&ptxas)
        .args(["-arch=sm_90", "-v", "-o"])
        .arg(dir.path().join(format!("{name}.cubin")))
        .arg(&path)
        .output()
        .expect("run ptxas");
    let report = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "ptxas failed:\n{report}");
    let mut kernel = String::new();
    let mut checked = 0;
    let mut shared = 0;
    for line in report.lines() {
        if let Some(rest) = line.split("entry function '").nth(1) {
            kernel = rest.split('\'').next().unwrap_or_default().to_string();
        }
        if line.contains("spill stores") {
            assert!(
                line.contains(" 0 bytes spill stores, 0 bytes spill loads"),
                "{kernel} spills: {line}"
            );
            let frame = frames
                .iter()
                .find(|(k, _)| *k == kernel)
                .map_or(0, |(_, bytes)| *bytes);
            assert!(
                line.contains(&format!(" {frame} bytes stack frame")),
                "{kernel}: {line}"
            );
            checked += 1;
        }
        // Static shared memory: a block may declare at most 48 KiB (more needs dynamic shared
        // memory and an opt-in), which neither the C++ emulations nor the emulated driver see.
        if let Some(before) = line
            .split(" bytes smem")
            .next()
            .filter(|_| line.contains(" bytes smem"))
        {
            let bytes: u64 = before
                .rsplit(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|digits| digits.parse().ok())
                .unwrap_or_else(|| panic!("{kernel}: no shared-memory size in {line}"));
            assert!(
                bytes <= 48 * 1024,
                "{kernel}: {bytes} bytes of static shared memory: {line}"
            );
            shared += 1;
        }
    }
    assert_eq!(checked, kernels, "ptxas report:\n{report}");
    // ptxas names the size only where a kernel has some; at least the scans and reductions do.
    assert!(
        shared > 0,
        "no shared-memory size in the ptxas report:\n{report}"
    );
    report
}
