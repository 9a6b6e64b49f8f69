//! fluidlab: a real-time Position Based Fluids lab.
//!
//! The library holds everything the `fluidlab` binary uses: the solvers ([`sim`]), scene files
//! ([`scene`]), particle export and statistics ([`output`]).
#![warn(missing_docs)]

pub mod backend;
pub mod commands;
pub mod output;
pub mod scene;
pub mod sim;
