//! Particle systems (`specs/004-particles.md`, docs/particles.md): one kind, three scenes of
//! a family — a fountain whose particles ripple its basin (`fountain.rs`; the basin's water is
//! the pool's wave equation, its stages called from `sims::pool`), a spring-mass cloth in the
//! wind and a jelly cube (`body.rs` builds them, `dynamics.rs` moves them: time-corrected
//! Verlet, symplectic Euler or XPBD; `grab.rs` drags a node). The scene section in `scene.rs`;
//! behind the [`crate::sims::Sim`] door in `sim.rs` (its live edits in `sim_edit.rs`), read
//! back in `frame.rs`; back-to-front sorting in `sort.rs`; the renderer (skybox, sun, lens
//! flare, stretched billboards, the basin's water, the bodies' skins, nodes and springs) in
//! `render/`. The CUDA path (`kernels/particles.cu`) in `cuda/`, chosen by `--backend`.

pub mod body;
pub mod cuda;
pub mod doctor;
pub mod dynamics;
pub mod edit_reach;
pub mod fountain;
mod frame;
pub mod grab;
pub mod growth;
pub mod memory;
mod panel;
pub mod random;
pub mod render;
pub mod scene;
pub mod self_collide;
mod setup;
mod sim;
mod sim_edit;
pub mod solver;
pub mod sort;
pub mod volume;

pub use frame::{BodyFigures, NonFinite};
use panel::panel_ui;
pub use sim::{ParticlesSim, State};

/// The name of this kind in scene files (`kind = "particles"`) and in `scenes/particles/`.
pub const KIND: &str = "particles";

/// The fountain's stages, in order, once per frame: one function each (`Fountain::emit`,
/// `advance`, `collide`, `basin`; `sort::back_to_front`).
pub const FOUNTAIN_STAGES: [&str; 5] = ["emit", "advance", "collide", "basin", "sort"];

/// A spring-mass body's stages, in order, once per substep: one function each in
/// `dynamics.rs` (`integrate` is `xpbd` under XPBD) and `volume.rs` (`volume`: the jelly's
/// signed volume term as forces; under XPBD its constraints are solved in `integrate`) and
/// `self_collide.rs` (`self_collide`: nodes kept a thickness apart; only with
/// `self_collision`).
pub const BODY_STAGES: [&str; 6] = [
    "springs",
    "volume",
    "wind",
    "integrate",
    "collide",
    "self_collide",
];

#[cfg(test)]
mod tests;
