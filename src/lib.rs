//! fluidlab: a real-time lab of fluid simulations, Position Based Fluids first.
//!
//! The map (docs/architecture.md): every simulation kind lives in its own room under [`sims`]
//! (its parameters and scene section, CPU and CUDA solvers, renderer passes and panel); the
//! shared, kind-agnostic parts are [`scene`] (scene files and their kind), [`cuda`] (device,
//! modules, timers), [`gfx`] (GL context, programs, targets, cameras), [`viewer`] (the window),
//! [`output`] (files written atomically, tables, plots) and [`commands`] (the CLI).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod commands;
pub mod cuda;
pub mod gfx;
pub mod host;
pub mod output;
pub mod scene;
pub mod sims;
pub mod viewer;
