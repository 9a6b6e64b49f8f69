//! PBF's doctor checks: its kernels load, GPU memory comes back across solver restarts, the
//! CUDA solver agrees with the CPU reference, and CUDA writes particles into the renderer's GL
//! buffer (interop) through the context `fluidlab render` uses.

use super::cuda::{self, parity, CudaSolver};
use super::render::{RenderSettings, Renderer, View};
use super::{RenderScalar, Solver};
use crate::gfx::context::GlUnavailable;
use crate::gfx::headless::Headless;
use crate::gfx::timing::PassClock;
use crate::host::format_bytes;
use crate::sims::doctor::{Check, Status};

/// Solver restarts of the leak check.
pub const RESTARTS: usize = 20;
/// Free memory the leak check lets go missing (driver bookkeeping), bytes.
pub const RESTART_ALLOWANCE: u64 = 4 << 20;

/// Runs PBF's checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let mut add = |name: &'static str, status: Status, detail: String| {
        add(Check {
            name,
            status,
            detail,
        })
    };
    if !cuda_available {
        let needs = "needs the CUDA driver".to_string();
        for name in [
            "kernels",
            "restarts",
            "parity: one frame",
            "parity: 200 frames",
            "parity: foam",
            "CUDA–GL interop",
        ] {
            add(name, Status::Skip, needs.clone());
        }
        return;
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
        ("statistics: GPU reductions", cuda::stats::cuda_frame_stats),
    ] {
        match check() {
            Ok(result) if result.passed => add(name, Status::Pass, result.detail),
            Ok(result) => add(name, Status::Fail, result.detail),
            Err(error) => add(name, Status::Fail, error.to_string()),
        }
    }
    match cuda::foam_parity::cuda_foam() {
        Ok(result) if result.passed => add("parity: foam", Status::Pass, result.detail),
        Ok(result) => add("parity: foam", Status::Fail, result.detail),
        Err(error) => add("parity: foam", Status::Fail, error.to_string()),
    }
    let (status, detail) = interop_round_trip();
    add("CUDA–GL interop", status, detail);
}

/// Creates the headless context and PBF renderer `fluidlab render` uses (the context on the
/// CUDA device's EGL device), lets the CUDA solver write its particles into the renderer's
/// particle buffer as a rendered frame does, and reads them back through OpenGL.
fn interop_round_trip() -> (Status, String) {
    let scene = parity::parity_scene();
    let headless = match Headless::new(1, 1) {
        Ok(headless) => headless,
        Err(error) if error.downcast_ref::<GlUnavailable>().is_some() => {
            return (
                Status::Skip,
                format!("{error:#}: no OpenGL to share buffers with"),
            )
        }
        Err(error) => return (Status::Fail, format!("{error:#}")),
    };
    // The CUDA device behind the current GL context, as the render command and the viewer
    // pick it: named by the EGL device, or else by cuGLGetDevices on the context.
    let gl_device = crate::cuda::gl_device();
    if headless.context().device().cuda_ordinal.is_none() && gl_device.is_none() {
        return (
            Status::Skip,
            format!(
                "the headless context is on EGL device {}, no CUDA device (OpenGL is not on \
                 this GPU: Mesa, remote desktop, WSL); rendering copies particles through the host",
                headless.context().device()
            ),
        );
    }
    let mut renderer = match Renderer::new(headless.gl(), &scene, PassClock::Finish) {
        Ok(renderer) => renderer,
        Err(error) => return (Status::Fail, format!("{error:#}")),
    };
    let (cuda_device, gl_device_note) = match gl_device {
        Some(ordinal) => (ordinal, format!("cuGLGetDevices: CUDA device {ordinal}")),
        None => (
            crate::cuda::DEFAULT_DEVICE,
            format!(
                "cuGLGetDevices names no CUDA device (CUDA device {} used)",
                crate::cuda::DEFAULT_DEVICE
            ),
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
            renderer
                .update_particles(
                    &mut solver,
                    &RenderSettings {
                        view: View::Density,
                        ..RenderSettings::default()
                    },
                )
                .map_err(|e| format!("{e:#}"))
        })
        .and_then(|()| {
            if renderer.interop() != Some(true) {
                return Err(
                    "cuGraphicsGLRegisterBuffer refused the GL buffer (see the note above)".into(),
                );
            }
            let records = renderer.read_particles().map_err(|e| format!("{e:#}"))?;
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
    drop(renderer);
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
