//! Pool: a height-field water surface (`specs/002-pool.md`), as the linear wave equation
//! (Müller 2008) or the original's lattice of pre-tensioned springs, with walls, shores,
//! islands and absorbing open-sea edges, struck by drops, rain and the pointer. State in
//! `surface.rs`; the CPU stages in `cpu.rs` and `drops.rs`, the CUDA ones in `cuda/` (kernels
//! in `kernels/pool.cu`), either behind `solver.rs`; the scene section in `scene.rs`;
//! behind the [`crate::sims::Sim`] door in `sim.rs`; its frame (statistics, fields, pictures)
//! in `frame.rs`; what a grid takes in host and GPU memory in `memory.rs`; the camera kept in the water when it orbits below the surface in
//! `under_water.rs`.

pub mod cpu;
pub mod cuda;
pub mod doctor;
pub mod drops;
pub mod frame;
pub mod memory;
pub mod panel;
pub mod params;
pub mod render;
pub mod scene;
mod sim;
pub mod solver;
pub mod surface;
pub mod under_water;

pub use params::{Edges, Model, PoolParams};
pub use sim::{PoolSim, Tool};

/// The name of this kind in scene files (`kind = "pool"`) and in `scenes/pool/`.
pub const KIND: &str = "pool";

/// The stages of one pool frame, in order; one CPU function (and one kernel) each. `disturb`
/// runs once per frame, the others once per substep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolStage {
    /// Drops (scripted, rain, pointer) added to heights or velocities.
    Disturb,
    /// Each node's acceleration: the wave equation's Laplacian or the springs' pull.
    Forces,
    /// Symplectic Euler with damping; fixed nodes stay, locked nodes move only vertically.
    Integrate,
    /// Mur's absorbing condition on open edges.
    Edges,
}

impl PoolStage {
    /// Every stage in execution order.
    pub const ALL: [PoolStage; 4] = [
        PoolStage::Disturb,
        PoolStage::Forces,
        PoolStage::Integrate,
        PoolStage::Edges,
    ];

    /// The stages' names in code, kernels, docs, bench output and the UI, in order.
    pub const NAMES: [&'static str; 4] = ["disturb", "forces", "integrate", "edges"];

    /// The stage's name.
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod panel_tests;
#[cfg(test)]
mod scenario_tests;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod tests;
