//! The pool's doctor checks: its kernels load, the CUDA solver agrees with the CPU solver
//! stage by stage, over a short run and after a same-size restart (`cuda/parity.rs`), and a
//! whole CUDA pool holds what the byte model says (`pool memory`). The
//! surface texture's interop path is checked by `fluidlab render` on a pool scene
//! (scripts/device-check.sh).

use super::cuda::kernels::PoolKernels;
use super::cuda::parity;
use super::memory::{grid_bytes, Drawing, GridBytes, Solver};
use super::surface::BYTES_PER_NODE;
use super::PoolSim;
use crate::scene::Source;
use crate::sims::doctor::{cuda_checks, Check};
use crate::sims::{Backend, OpenOptions, Sim};

/// Runs the pool's checks, passing each line to `add`.
pub fn checks(cuda_available: bool, add: &mut dyn FnMut(Check)) {
    let load = |device| {
        crate::cuda::context(device)
            .and_then(|context| PoolKernels::load(&context, crate::cuda::sync_check_requested()?))
            .map(|kernels| {
                format!(
                    "{} kernels loaded, code from {}",
                    PoolKernels::NAMES.len(),
                    kernels.origin()
                )
            })
            .map_err(|error| error.to_string())
    };
    cuda_checks(
        cuda_available,
        ("pool kernels", &load),
        &[
            ("pool parity: stages", parity::gpu_stages_check),
            ("pool parity: run", parity::gpu_run_check),
            ("pool parity: restart", parity::gpu_restart_check),
            ("pool memory", gpu_memory_check),
        ],
        add,
    );
}

/// A whole pool opened on CUDA device `device` (`PoolSim::open_within`, undrawn: the doctor has
/// no GL context) and stepped a few frames holds what the byte model says
/// (`memory::grid_bytes`), counted from its live buffers (`PoolSim::held_bytes`): the state
/// and the GPU's figures equal, the host's less the state's copy, which a start holds only
/// while it builds the grid. tests/pool_memory.rs checks the CPU's and the drawing's parts.
/// The host's half holds by construction (the model's host figure less the copy is the flags'
/// bytes, which `held_bytes` counts); the GPU's repeats `pool parity: restart`'s buffer check.
/// What this adds is a fresh open stepped 3 frames: the buffers a step allocates lazily.
pub fn gpu_memory_check(device: usize) -> Result<(bool, String), String> {
    let mut failures = Vec::new();
    let mut figures = Vec::new();
    for nodes in [48, 130] {
        let text = format!("kind = \"pool\"\n[pool]\nnodes = {nodes}\n[drops]\nrandom = 3\n");
        let source = Source::parse(&text, "doctor", "doctor.toml").map_err(|e| e.to_string())?;
        let options = OpenOptions {
            backend: Backend::Cuda,
            device,
            ..OpenOptions::default()
        };
        let mut sim =
            PoolSim::open_within(&source, &options, None).map_err(|e| format!("{e:#}"))?;
        for _ in 0..3 {
            sim.step().map_err(|e| format!("{e:#}"))?;
        }
        let held = sim.held_bytes();
        let model = grid_bytes(nodes, Solver::Cuda, Drawing::Undrawn);
        let copy = (nodes * nodes * BYTES_PER_NODE) as u64;
        let expected = GridBytes {
            host: model.host - copy,
            ..model
        };
        if held != expected {
            failures.push(format!(
                "{nodes}²: held {held:?}, the model less the state's copy {expected:?}"
            ));
        }
        figures.push(format!(
            "{nodes}²: {} B on the GPU, {} B on the host",
            held.gpu, held.host
        ));
    }
    let detail = format!("held_bytes = grid_bytes (undrawn), {}", figures.join("; "));
    Ok(crate::sims::doctor::verdict(detail, failures))
}
