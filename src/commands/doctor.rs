//! `fluidlab doctor`: one screen a user can paste into a bug report. Each check prints
//! PASS, FAIL or SKIP with its reason; any FAIL makes the command fail.

use crate::cuda::ptx;
use crate::host::format_bytes;
use crate::sims::pbf::cuda::{self, egl, parity, CudaSolver};
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

/// The EGL devices (and which is the CUDA device a headless renderer must use), then the interop
/// round trip, which needs the OpenGL front end this build does not have yet.
fn gl_checks(add: &mut impl FnMut(&'static str, Status, String), cuda_available: bool) {
    match egl::devices() {
        Err(reason) => add(
            "EGL devices",
            Status::Skip,
            format!("{reason}; headless rendering needs libEGL"),
        ),
        Ok(devices) if devices.is_empty() => {
            add("EGL devices", Status::Skip, "EGL lists no devices".into())
        }
        Ok(devices) => {
            let list: Vec<String> = devices
                .iter()
                .map(|d| match d.cuda_ordinal {
                    Some(ordinal) => {
                        format!("{}: {} (CUDA device {ordinal})", d.index, d.description)
                    }
                    None => format!("{}: {}", d.index, d.description),
                })
                .collect();
            let cuda = devices.iter().find(|d| d.cuda_ordinal == Some(0));
            let verdict = match (cuda, cuda_available) {
                (Some(device), _) => format!(
                    "headless interop uses EGL device {} (CUDA device 0)",
                    device.index
                ),
                (None, true) => "none is CUDA device 0: headless rendering cannot share buffers \
                                 with CUDA and copies particles through the host"
                    .into(),
                (None, false) => "no CUDA device to match".into(),
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

/// Registers a GL buffer of a surfaceless context on the CUDA device's EGL device, lets the
/// solver's last kernel write the particles into it, and reads them back through OpenGL.
fn interop_round_trip() -> (Status, String) {
    let device = match egl::devices() {
        Err(reason) => {
            return (
                Status::Skip,
                format!("{reason}: no OpenGL to share buffers with"),
            )
        }
        Ok(devices) => devices.into_iter().find(|d| d.cuda_ordinal == Some(0)),
    };
    let Some(device) = device else {
        return (
            Status::Skip,
            "no EGL device is CUDA device 0 (OpenGL is not on this GPU: Mesa, remote desktop, \
             WSL); rendering copies particles through the host"
                .into(),
        );
    };
    let gl = match egl::HeadlessGl::new(device.index) {
        Ok(gl) => gl,
        Err(reason) => return (Status::Fail, reason),
    };
    // The CUDA device behind the current GL context, as the render command and the viewer
    // pick it.
    let (cuda_device, gl_device_note) = match cuda::gl_device() {
        Some(ordinal) => (ordinal, format!("cuGLGetDevices: CUDA device {ordinal}")),
        None => (
            0,
            "cuGLGetDevices names no CUDA device (CUDA device 0 used)".into(),
        ),
    };
    let scene = parity::parity_scene();
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
    let buffer = gl.create_buffer(particles * 16, &[]);
    let outcome = solver
        .step()
        .and_then(|()| solver.write_gl_buffer(buffer, RenderScalar::Density))
        .map_err(|e| e.to_string())
        .and_then(|written| {
            if !written {
                return Err(
                    "cuGraphicsGLRegisterBuffer refused the GL buffer (see the note above)".into(),
                );
            }
            let back = gl.read_buffer(buffer, particles * 16);
            let records: &[[f32; 4]] = bytemuck::cast_slice(&back);
            let mut expected = Vec::new();
            solver
                .render_positions(RenderScalar::Density, &mut expected)
                .map_err(|e| e.to_string())?;
            let wrong = records.iter().zip(&expected).position(|(a, b)| {
                a[..3] != b[..3] || (a[3] - b[3]).abs() > 1e-6 * b[3].abs().max(1.0)
            });
            match wrong {
                None => Ok(()),
                Some(k) => Err(format!(
                    "GL read back {:?} for particle {k}, the solver has {:?}",
                    records[k], expected[k]
                )),
            }
        });
    // Unregister while the GL context is still current, then delete the buffer.
    solver.release_gl();
    gl.delete_buffer(buffer);
    drop(solver);
    match outcome {
        Ok(()) => (
            Status::Pass,
            format!(
                "{}, {gl_device_note}: write_render_buffer wrote {particles} records into GL \
                 buffer {buffer} through cuGraphicsGLRegisterBuffer; OpenGL read them back \
                 unchanged; released before the buffer was deleted",
                gl.renderer
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
