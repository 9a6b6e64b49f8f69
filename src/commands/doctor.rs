//! `fluidlab doctor`: one screen a user can paste into a bug report. Each check prints
//! PASS, FAIL or SKIP with its reason; any FAIL makes the command fail.

use crate::cuda::ptx;
use crate::gfx::context::{self, GlUnavailable};
use crate::gfx::headless::HeadlessRenderer;
use crate::gfx::timing::PassClock;
use crate::host::format_bytes;
use crate::sims::pbf::cuda::{self, parity, CudaSolver};
use crate::sims::pbf::render::View;
use crate::sims::pbf::{RenderScalar, Solver};
use std::fmt;

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Works.
    Pass,
    /// Broken, or missing where it is needed.
    Fail,
    /// Not checked, for the reason given.
    Skip,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        })
    }
}

/// One line of the report.
#[derive(Clone, Debug)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// The outcome.
    pub status: Status,
    /// Figures or the reason.
    pub detail: String,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}  {:<20} {}", self.status, self.name, self.detail)
    }
}

/// Solver restarts of the leak check.
pub const RESTARTS: usize = 20;
/// Free memory the leak check lets go missing (driver bookkeeping), bytes.
pub const RESTART_ALLOWANCE: u64 = 4 << 20;

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

    if let Some(reason) = crate::cuda::unavailable() {
        add("CUDA driver", Status::Fail, reason);
        let needs = "needs the CUDA driver".to_string();
        for name in [
            "GPU",
            "kernels",
            "restarts",
            "parity: one frame",
            "parity: 200 frames",
        ] {
            add(name, Status::Skip, needs.clone());
        }
        gl_checks(&mut add, false);
        return checks;
    }
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
        }
        Err(reason) => add("CUDA driver", Status::Fail, reason.to_string()),
    }
    let kernels = crate::cuda::context(crate::cuda::DEFAULT_DEVICE)
        .map_err(|e| e.to_string())
        .and_then(|context| {
            cuda::pbf::PbfKernels::load(&context, false)
                .map(|kernels| kernels.origin().to_string())
                .map_err(|e| e.to_string())
        });
    let sync_check = match crate::cuda::sync_check_requested() {
        Ok(true) => format!(
            "; {}=1: every launch synchronised and checked",
            crate::cuda::SYNC_CHECK_VARIABLE
        ),
        Ok(false) => String::new(),
        Err(error) => format!("; {error}"),
    };
    match kernels {
        Ok(origin) => add(
            "kernels",
            Status::Pass,
            format!(
                "{} kernels loaded, code from {origin}{sync_check}",
                cuda::pbf::PbfKernels::NAMES.len()
            ),
        ),
        Err(reason) => add("kernels", Status::Fail, reason),
    }
    match cuda::free_memory_across_restarts(RESTARTS) {
        Ok((before, after)) => {
            let lost = before.saturating_sub(after) as u64;
            let detail = format!(
                "{RESTARTS} solver restarts: free GPU memory {} before, {} after (lost {})",
                format_bytes(before as u64),
                format_bytes(after as u64),
                format_bytes(lost)
            );
            let status = if lost <= RESTART_ALLOWANCE {
                Status::Pass
            } else {
                Status::Fail
            };
            add("restarts", status, detail);
        }
        Err(error) => add("restarts", Status::Fail, error.to_string()),
    }
    for (name, check) in [
        ("parity: one frame", parity::cuda_one_step as fn() -> _),
        ("parity: 200 frames", parity::cuda_dam_break),
    ] {
        match check() {
            Ok(result) if result.passed => add(name, Status::Pass, result.detail),
            Ok(result) => add(name, Status::Fail, result.detail),
            Err(error) => add(name, Status::Fail, error.to_string()),
        }
    }
    gl_checks(&mut add, true);
    checks
}

/// The EGL devices and the one `fluidlab render` puts its context on, then the interop round
/// trip through that context and the renderer's particle upload.
fn gl_checks(add: &mut impl FnMut(&'static str, Status, String), cuda_available: bool) {
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
    let (status, detail) = if cuda_available {
        interop_round_trip()
    } else {
        (Status::Skip, "needs the CUDA driver".into())
    };
    add("CUDA–GL interop", status, detail);
}

/// Creates the headless renderer `fluidlab render` uses (its context on the CUDA device's EGL
/// device), lets the CUDA solver write its particles into the renderer's particle buffer as a
/// rendered frame does, and reads them back through OpenGL.
fn interop_round_trip() -> (Status, String) {
    let scene = parity::parity_scene();
    let mut headless = match HeadlessRenderer::new(&scene, 1, 1, PassClock::Finish) {
        Ok(headless) => headless,
        Err(error) if error.downcast_ref::<GlUnavailable>().is_some() => {
            return (
                Status::Skip,
                format!("{error:#}: no OpenGL to share buffers with"),
            )
        }
        Err(error) => return (Status::Fail, format!("{error:#}")),
    };
    if headless.context().device().cuda_ordinal.is_none() {
        return (
            Status::Skip,
            format!(
                "the headless context is on EGL device {}, no CUDA device (OpenGL is not on \
                 this GPU: Mesa, remote desktop, WSL); rendering copies particles through the host",
                headless.context().device()
            ),
        );
    }
    // The CUDA device behind the current GL context, as the render command and the viewer
    // pick it.
    let (cuda_device, gl_device_note) = match cuda::gl_device() {
        Some(ordinal) => (ordinal, format!("cuGLGetDevices: CUDA device {ordinal}")),
        None => (
            0,
            "cuGLGetDevices names no CUDA device (CUDA device 0 used)".into(),
        ),
    };
    let solver = CudaSolver::new_on(
        cuda_device,
        scene.world(),
        scene.params.clone(),
        &scene.seed(),
    );
    let mut solver = match solver {
        Ok(solver) => solver,
        Err(error) => return (Status::Fail, error.to_string()),
    };
    let particles = solver.particle_count();
    let outcome = solver
        .step()
        .map_err(|e| e.to_string())
        .and_then(|()| {
            headless
                .renderer
                .update_particles(&mut solver, View::Density)
                .map_err(|e| format!("{e:#}"))
        })
        .and_then(|()| {
            if headless.renderer.interop() != Some(true) {
                return Err(
                    "cuGraphicsGLRegisterBuffer refused the GL buffer (see the note above)".into(),
                );
            }
            let records = headless
                .renderer
                .read_particles()
                .map_err(|e| format!("{e:#}"))?;
            let mut expected = Vec::new();
            solver
                .render_positions(RenderScalar::Density, &mut expected)
                .map_err(|e| e.to_string())?;
            let wrong = records.iter().zip(&expected).position(|(a, b)| {
                a[..3] != b[..3] || (a[3] - b[3]).abs() > 1e-6 * b[3].abs().max(1.0)
            });
            match wrong {
                None if records.len() == expected.len() => Ok(()),
                None => Err(format!(
                    "GL holds {} records, the solver {}",
                    records.len(),
                    expected.len()
                )),
                Some(k) => Err(format!(
                    "GL read back {:?} for particle {k}, the solver has {:?}",
                    records[k], expected[k]
                )),
            }
        });
    // Unregister while the GL context is still current, then let GL go.
    solver.release_gl();
    drop(solver);
    let device = headless.description().to_string();
    drop(headless);
    match outcome {
        Ok(()) => (
            Status::Pass,
            format!(
                "{device}, {gl_device_note}: write_render_buffer wrote {particles} records into \
                 the renderer's particle buffer through cuGraphicsGLRegisterBuffer; OpenGL read \
                 them back unchanged; released before the buffer was deleted"
            ),
        ),
        Err(reason) => (Status::Fail, reason),
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
