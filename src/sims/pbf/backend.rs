//! Choosing and creating a solver for a scene: `--backend auto|cpu|cuda`.

use crate::cuda::DEFAULT_DEVICE;
use crate::host::available_memory;
use crate::sims::pbf::cpu::{self, CpuSolver};
use crate::sims::pbf::cuda::CudaSolver;
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::{Backend, InitialState, Solver};
use anyhow::{anyhow, bail, Result};

/// A solver ready to step, and a sentence saying which backend was chosen and why.
pub struct Created {
    /// The solver.
    pub solver: Box<dyn Solver>,
    /// E.g. "cpu (no CUDA driver found)".
    pub note: String,
}

/// Why the CUDA backend cannot run here, or `None` when it can.
pub fn cuda_unavailable() -> Option<String> {
    crate::cuda::unavailable()
}

/// Creates the solver `backend` asks for on the default CUDA device ([`DEFAULT_DEVICE`]),
/// after checking that the scene fits in memory.
pub fn create(scene: &Scene, backend: Backend) -> Result<Created> {
    create_on(scene, backend, DEFAULT_DEVICE)
}

/// Creates the solver `backend` asks for, the CUDA solver on CUDA device `device`.
pub fn create_on(scene: &Scene, backend: Backend, device: usize) -> Result<Created> {
    create_with(scene, &scene.seed(), backend, device)
}

/// Creates the solver `backend` asks for (CUDA on the default device) over particles `initial`
/// instead of the scene's own seeding (validation cases shape their initial state).
pub fn create_from(scene: &Scene, initial: &InitialState, backend: Backend) -> Result<Created> {
    create_with(scene, initial, backend, DEFAULT_DEVICE)
}

fn create_with(
    scene: &Scene,
    initial: &InitialState,
    backend: Backend,
    device: usize,
) -> Result<Created> {
    match backend {
        Backend::Cpu => Ok(Created {
            solver: create_cpu(scene, initial)?,
            note: "cpu".into(),
        }),
        Backend::Cuda => {
            if let Some(reason) = cuda_unavailable() {
                bail!("--backend cuda cannot run on this machine: {reason}; use --backend cpu or --backend auto");
            }
            create_cuda(scene, initial, device)
        }
        Backend::Auto => match cuda_unavailable() {
            None => create_cuda(scene, initial, device).or_else(|error| {
                Ok(Created {
                    solver: create_cpu(scene, initial)?,
                    note: format!("cpu (the CUDA solver could not start: {error:#})"),
                })
            }),
            Some(reason) => Ok(Created {
                solver: create_cpu(scene, initial)?,
                note: format!("cpu ({reason})"),
            }),
        },
    }
}

fn create_cuda(scene: &Scene, initial: &InitialState, device: usize) -> Result<Created> {
    let solver = CudaSolver::new_on(device, scene.world(), scene.params.clone(), initial)
        .map_err(|e| anyhow!("scene {}: {e}", scene.name))?;
    let on = if device == DEFAULT_DEVICE {
        String::new()
    } else {
        format!("on device {device}, the GPU of the OpenGL context, ")
    };
    let note = format!("cuda ({on}kernels from {})", solver.kernel_origin());
    Ok(Created {
        solver: Box::new(solver),
        note,
    })
}

fn create_cpu(scene: &Scene, initial: &InitialState) -> Result<Box<dyn Solver>> {
    if let Some(available) = available_memory() {
        scene
            .check_memory("CPU solver", cpu::BYTES_PER_PARTICLE, available)
            .map_err(|invalid| {
                anyhow!("scene {}: {}: {}", scene.name, invalid.key, invalid.message)
            })?;
    }
    Ok(Box::new(CpuSolver::new(
        scene.world(),
        scene.params.clone(),
        initial,
    )?))
}
