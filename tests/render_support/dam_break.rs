//! The dam break as `fluidlab render dam-break --steps-per-frame 40` draws its frame 1, for the
//! render tests that look at it (included with `#[path]`).

use fluidlab::sims::pbf::backend;
use fluidlab::sims::pbf::scene::Scene;
use fluidlab::sims::pbf::{Backend, Solver};

/// The dam-break preset at about `particles` particles, 40 steps on the CPU (0.66 s).
pub fn dam_break_stepped(particles: u64) -> (Scene, Box<dyn Solver>) {
    let scene = Scene::load("dam-break")
        .expect("the preset")
        .with_particle_target(particles)
        .expect("rescaled");
    let mut solver = backend::create(&scene, Backend::Cpu)
        .expect("the CPU solver")
        .solver;
    for _ in 0..40 {
        solver.step().expect("step");
    }
    (scene, solver)
}
