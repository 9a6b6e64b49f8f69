//! Choosing and creating a solver for a scene: `--backend auto|cpu|cuda`.

use crate::scene::{available_memory, Scene};
use crate::sim::cpu::{self, CpuSolver};
use crate::sim::{Backend, Solver};
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
    Some("this build has no CUDA backend yet".to_string())
}

/// Creates the solver `backend` asks for, after checking that the scene fits in memory.
pub fn create(scene: &Scene, backend: Backend) -> Result<Created> {
    match backend {
        Backend::Cpu => Ok(Created { solver: create_cpu(scene)?, note: "cpu".into() }),
        Backend::Cuda => match cuda_unavailable() {
            Some(reason) => bail!("--backend cuda: the CUDA backend cannot run: {reason}. Use --backend cpu (or auto)."),
            None => unreachable!("no CUDA backend in this build"),
        },
        Backend::Auto => {
            let reason = cuda_unavailable().unwrap_or_default();
            Ok(Created { solver: create_cpu(scene)?, note: format!("cpu ({reason})") })
        }
    }
}

fn create_cpu(scene: &Scene) -> Result<Box<dyn Solver>> {
    if let Some(available) = available_memory() {
        scene
            .check_memory("CPU solver", cpu::BYTES_PER_PARTICLE, available)
            .map_err(|invalid| {
                anyhow!("scene {}: {}: {}", scene.name, invalid.key, invalid.message)
            })?;
    }
    let initial = scene.seed();
    Ok(Box::new(CpuSolver::new(
        scene.world(),
        scene.params.clone(),
        &initial,
    )?))
}
