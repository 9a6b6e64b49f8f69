//! Particle systems (`specs/004-particles.md`): one kind, three scenes of a family — a fountain
//! whose particles ripple its basin (`fountain.rs`, the basin's water is the pool's wave
//! equation), a spring-mass cloth in the wind and a jelly cube (`body.rs`, `dynamics.rs`:
//! time-corrected Verlet, symplectic Euler or XPBD). Scene section in `scene.rs`; behind the
//! [`crate::sims::Sim`] door in `sim.rs`; back-to-front sorting in `sort.rs`; the renderer
//! (skybox, sun, lens flare, stretched billboards, the basin's water, the bodies' skins and
//! springs) in `render/`. CPU only so far.

pub mod body;
pub mod dynamics;
pub mod fountain;
mod panel;
pub mod render;
pub mod scene;
mod sim;
pub mod sort;

use panel::panel_ui;
pub use sim::{ParticlesSim, State};

/// The name of this kind in scene files (`kind = "particles"`) and in `scenes/particles/`.
pub const KIND: &str = "particles";

/// The fountain's stages, in order (once per frame).
pub const FOUNTAIN_STAGES: [&str; 5] = ["emit", "move", "collide", "basin", "sort"];

/// A spring-mass body's stages, in order (once per substep).
pub const BODY_STAGES: [&str; 4] = ["springs", "wind", "integrate", "collide"];

#[cfg(test)]
mod tests;
