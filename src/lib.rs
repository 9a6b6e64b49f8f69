//! fluidlab: a real-time Position Based Fluids lab.
//!
//! The library holds everything the `fluidlab` binary uses: the solvers ([`sim`]), scene files
//! ([`scene`]), particle export and statistics ([`output`]), the screen-space fluid renderer
//! ([`render`]), the imgui panels ([`ui`]), the window and headless front ends ([`app`]) and the
//! validation cases ([`validation`]).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod app;
pub mod backend;
pub mod commands;
pub mod output;
pub mod render;
pub mod scene;
pub mod sim;
pub mod ui;
pub mod validation;
