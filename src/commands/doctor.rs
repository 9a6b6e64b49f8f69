//! `fluidlab doctor`: one screen a user can paste into a bug report. Each check prints
//! PASS, FAIL or SKIP with its reason; any FAIL makes the command fail.

//! The shared checks (build, CUDA driver, GPU, EGL devices) come first, then every kind's own
//! ([`crate::sims::doctor::kind_checks`]).

use crate::cuda::ptx;
use crate::gfx::context;
use crate::host::format_bytes;
pub use crate::sims::doctor::{Check, Status};
use crate::sims::{doctor, Kind};

/// Runs every check, calling `report` with each line as soon as it is known (the parity runs
/// take a while). Returns all lines.
pub fn run(mut report: impl FnMut(&Check)) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut add = |name, status, detail: String| {
        let check = Check {
            name,
            status,
            detail,
        };
        report(&check);
        checks.push(check);
    };
    let prebuilt = match (ptx::PREBUILT_ORIGIN, ptx::CUBIN_ARCH) {
        (Some(origin), Some(arch)) => format!("PTX from {origin}, and an {arch} cubin"),
        (Some(origin), None) => format!("PTX from {origin}"),
        (None, _) => "no prebuilt PTX (the build found no nvcc): NVRTC compiles the kernels".into(),
    };
    add(
        "build",
        Status::Pass,
        format!(
            "fluidlab {}, {prebuilt}, {}",
            env!("CARGO_PKG_VERSION"),
            if crate::cuda::nvtx::available() {
                "NVTX ranges per stage"
            } else {
                "no NVTX (headers missing at build time)"
            }
        ),
    );

    let cuda_available = match crate::cuda::unavailable() {
        Some(reason) => {
            add("CUDA driver", Status::Fail, reason);
            add("GPU", Status::Skip, "needs the CUDA driver".into());
            false
        }
        None => cuda_checks(&mut add),
    };
    egl_devices(&mut add, cuda_available);
    for &kind in Kind::ALL {
        doctor::kind_checks(kind, cuda_available, &mut |check| {
            add(check.name, check.status, check.detail)
        });
    }
    checks
}

/// The driver and the default GPU; whether CUDA can run.
fn cuda_checks(add: &mut impl FnMut(&'static str, Status, String)) -> bool {
    match crate::cuda::device_info(crate::cuda::DEFAULT_DEVICE) {
        Ok(info) => {
            add(
                "CUDA driver",
                Status::Pass,
                format!(
                    "driver supports CUDA {}.{}",
                    info.driver_version / 1000,
                    info.driver_version % 1000 / 10
                ),
            );
            add(
                "GPU",
                Status::Pass,
                format!(
                    "{}, compute capability {}.{}, {} ({} free)",
                    info.name,
                    info.compute_capability.0,
                    info.compute_capability.1,
                    format_bytes(info.total_memory as u64),
                    format_bytes(info.free_memory as u64)
                ),
            );
            true
        }
        Err(reason) => {
            add("CUDA driver", Status::Fail, reason.to_string());
            false
        }
    }
}

/// The EGL devices and the one `fluidlab render` puts its context on.
fn egl_devices(add: &mut impl FnMut(&'static str, Status, String), cuda_available: bool) {
    match context::devices() {
        Err(unavailable) => add(
            "EGL devices",
            Status::Skip,
            format!("{}; headless rendering needs libEGL", unavailable.reason),
        ),
        Ok(devices) if devices.is_empty() => {
            add("EGL devices", Status::Skip, "EGL lists no devices".into())
        }
        Ok(devices) => {
            let list: Vec<String> = devices.iter().map(ToString::to_string).collect();
            let verdict = match (context::preferred(&devices), cuda_available) {
                (Some(device), _) if device.cuda_ordinal.is_some() => format!(
                    "headless rendering and interop use EGL device {}",
                    device.index
                ),
                (Some(device), true) => format!(
                    "headless rendering uses EGL device {}, which is no CUDA device: it cannot \
                     share buffers with CUDA and copies particles through the host",
                    device.index
                ),
                (Some(device), false) => format!(
                    "headless rendering uses EGL device {}; no CUDA device to match",
                    device.index
                ),
                (None, _) => "no device to render on".into(),
            };
            add(
                "EGL devices",
                Status::Pass,
                format!("{}; {verdict}", list.join(", ")),
            );
        }
    }
}

/// Number of failed checks.
pub fn failures(checks: &[Check]) -> usize {
    checks.iter().filter(|c| c.status == Status::Fail).count()
}

/// `fluidlab doctor`: prints every check as it completes; fails when any check failed.
pub fn main() -> anyhow::Result<()> {
    println!("fluidlab doctor");
    let checks = run(|check| println!("{check}"));
    let failed = failures(&checks);
    if failed > 0 {
        anyhow::bail!("doctor: {failed} check(s) failed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::doctor::NAME_WIDTH;

    /// Every check's name fits the report's name column, so the details line up (with the old
    /// column of 20, `ink parity: painting obstacles` and five other names pushed their
    /// details out of line).
    #[test]
    fn every_check_name_fits_the_name_column() {
        let checks = run(|_| {});
        assert!(checks.len() >= 28, "{} checks", checks.len());
        for check in &checks {
            assert!(
                check.name.chars().count() <= NAME_WIDTH,
                "{:?}: {} characters, the column is {NAME_WIDTH}",
                check.name,
                check.name.chars().count()
            );
            let line = check.to_string();
            let detail_at = line.chars().count() - check.detail.chars().count();
            assert_eq!(detail_at, 4 + 2 + NAME_WIDTH + 1, "{line}");
        }
    }
}
