//! Choosing and creating a solver for a scene: `--backend auto|cpu|cuda`.

use crate::cuda::DEFAULT_DEVICE;
use crate::host::available_memory;
use crate::scene::SceneError;
use crate::sims::pbf::cpu::{self, CpuSolver};
use crate::sims::pbf::cuda::{self, CudaSolver};
use crate::sims::pbf::scene::{Footprint, Scene};
use crate::sims::pbf::{Backend, InitialState, Solver};
use crate::sims::Chosen;
use anyhow::{anyhow, Result};

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

/// Creates the solver `backend` asks for, the CUDA solver on CUDA device `device`. The scene is
/// seeded only after its memory check passed.
pub fn create_on(scene: &Scene, backend: Backend, device: usize) -> Result<Created> {
    create_with(scene, None, backend, device)
}

/// Creates the solver `backend` asks for (CUDA on the default device) over particles `initial`
/// instead of the scene's own seeding (validation cases shape their initial state).
pub fn create_from(scene: &Scene, initial: &InitialState, backend: Backend) -> Result<Created> {
    create_with(scene, Some(initial), backend, DEFAULT_DEVICE)
}

/// The memory check of `footprint` against what this process may allocate, before anything
/// is: for the scene's own particles (`initial` is `None`) or for `initial`'s.
fn check_memory(
    scene: &Scene,
    initial: Option<&InitialState>,
    footprint: &Footprint,
) -> Result<()> {
    let Some(available) = available_memory() else {
        return Ok(());
    };
    match initial {
        None => scene.check_memory(footprint, available),
        Some(initial) => scene.check_memory_of(footprint, initial.len() as u64, available),
    }
    // A `SceneError`, so that `PbfSim::open` can point it at the key's line in the file.
    .map_err(|invalid| {
        anyhow::Error::new(SceneError {
            origin: format!("scene {}", scene.name),
            line: None,
            key: Some(invalid.key),
            message: invalid.message,
        })
    })
}

fn create_with(
    scene: &Scene,
    initial: Option<&InitialState>,
    backend: Backend,
    device: usize,
) -> Result<Created> {
    let chosen = backend.choose(cuda_unavailable())?;
    let footprint = if chosen == Chosen::Cuda {
        &cuda::HOST_FOOTPRINT
    } else {
        &cpu::FOOTPRINT
    };
    check_memory(scene, initial, footprint)?;
    let seeded;
    let initial = match initial {
        Some(initial) => initial,
        None => {
            seeded = scene.seed();
            &seeded
        }
    };
    match chosen {
        Chosen::Cpu(note) => Ok(Created {
            solver: create_cpu(scene, initial)?,
            note,
        }),
        Chosen::Cuda => create_cuda(scene, initial, device).or_else(|error| {
            if backend != Backend::Auto {
                return Err(error);
            }
            check_memory(scene, Some(initial), &cpu::FOOTPRINT)?;
            Ok(Created {
                solver: create_cpu(scene, initial)?,
                note: format!("cpu (the CUDA solver could not start: {error:#})"),
            })
        }),
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
    Ok(Box::new(CpuSolver::new(
        scene.world(),
        scene.params.clone(),
        initial,
    )?))
}
