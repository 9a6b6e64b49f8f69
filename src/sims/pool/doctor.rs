//! The pool's doctor checks: its kernels load, the CUDA solver agrees with the CPU solver
//! stage by stage, over a short run and after a same-size restart (`cuda/parity.rs`), and a
//! whole CUDA pool, undrawn and drawn, holds what the byte model says (`pool memory`). The
//! surface texture's interop path is checked by `fluidlab render` on a pool scene
//! (scripts/device-check.sh).

use super::cuda::kernels::PoolKernels;
use super::cuda::parity;
use super::memory::{grid_bytes, Drawing, GridBytes, Solver};
use super::surface::BYTES_PER_NODE;
use super::PoolSim;
use crate::gfx::camera::Camera;
use crate::gfx::headless::Headless;
use crate::gfx::timing::PassClock;
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

/// A whole pool opened on CUDA device `device` and stepped a few frames holds what the byte
/// model says (`memory::grid_bytes`), counted from its live buffers and GL objects
/// (`PoolSim::held_bytes`), undrawn (`PoolSim::open_within`) and drawn into a headless GL
/// context (by interop where that context is on the device, else through the host): the state
/// and the GPU's figures equal, the host's less the state's copy, which a start holds only
/// while it builds the grid. Drawn, the GL objects are the renderer's as it allocated them
/// (`PoolRenderer::allocated`: surface texture, meshes, caustics texture; their total, with the
/// box and the frame, is printed). Without a GL context the drawn half is said and skipped.
/// tests/pool_memory.rs checks the CPU's parts and the renderer's objects against GL's report.
pub fn gpu_memory_check(device: usize) -> Result<(bool, String), String> {
    let mut failures = Vec::new();
    let mut figures = Vec::new();
    for nodes in [48, 130] {
        let sim = stepped(device, nodes, None)?;
        let model = grid_bytes(nodes, Solver::Cuda, Drawing::Undrawn);
        compare(&sim, nodes, model, "undrawn", &mut failures);
        figures.push(format!(
            "{nodes}²: {} B on the GPU, {} B on the host",
            sim.held_bytes().gpu,
            sim.held_bytes().host
        ));
    }
    match Headless::new(64, 48) {
        Ok(headless) => {
            let nodes = 130;
            let mut sim = stepped(device, nodes, Some(&headless))?;
            let path = if sim.interop == Some(true) {
                Drawing::Interop
            } else {
                Drawing::HostCopy
            };
            compare(
                &sim,
                nodes,
                grid_bytes(nodes, Solver::Cuda, path),
                "drawn",
                &mut failures,
            );
            let all: u64 = sim.gl_allocated().iter().map(|(_, b)| b).sum();
            figures.push(format!(
                "drawn {nodes}² ({path:?}): {} B on the GPU, {} B on the host, GL objects {all} B",
                sim.held_bytes().gpu,
                sim.held_bytes().host
            ));
            sim.release_gl();
        }
        Err(error) => figures.push(format!("drawn: skipped, no GL context ({error:#})")),
    }
    let detail = format!("held_bytes = grid_bytes, {}", figures.join("; "));
    Ok(crate::sims::doctor::verdict(detail, failures))
}

/// A pool of `nodes`² with an island opened on CUDA device `device`, drawn into `headless` if
/// given, stepped (and drawn) 3 frames. The island makes the renderer hold the land texture,
/// which the drawn model counts whether or not a scene has land (painting can add it).
fn stepped(device: usize, nodes: usize, headless: Option<&Headless>) -> Result<PoolSim, String> {
    let text = format!(
        "kind = \"pool\"\n[pool]\nnodes = {nodes}\n[drops]\nrandom = 3\n\
         [[island]]\ncenter = [1.0, 1.0]\nradius = 0.3\n"
    );
    let source = Source::parse(&text, "doctor", "doctor.toml").map_err(|e| e.to_string())?;
    let options = OpenOptions {
        backend: Backend::Cuda,
        device,
        drawn: headless.is_some(),
        ..OpenOptions::default()
    };
    let mut sim = PoolSim::open_within(&source, &options, None).map_err(|e| format!("{e:#}"))?;
    if let Some(headless) = headless {
        sim.attach_gl(headless.gl(), PassClock::Finish)
            .map_err(|e| format!("{e:#}"))?;
    }
    for _ in 0..3 {
        sim.step().map_err(|e| format!("{e:#}"))?;
        if let Some(headless) = headless {
            let camera = Camera::framing(&sim.bounds());
            sim.draw(&camera, headless.output())
                .map_err(|e| format!("{e:#}"))?;
        }
    }
    Ok(sim)
}

/// Notes in `failures` where `sim` holds other than `model` less the state's copy on the host
/// (the GPU's figure and the host's; the drawing's own figure also counts copies that live
/// only while something is built).
fn compare(sim: &PoolSim, nodes: usize, model: GridBytes, what: &str, failures: &mut Vec<String>) {
    let held = sim.held_bytes();
    let copy = (nodes * nodes * BYTES_PER_NODE) as u64;
    let expected = (model.state, model.gpu, model.host - copy);
    if (held.state, held.gpu, held.host) != expected {
        failures.push(format!(
            "{what} {nodes}²: held (state, GPU, host) {:?}, the model less the state's copy {expected:?}",
            (held.state, held.gpu, held.host)
        ));
    }
}
