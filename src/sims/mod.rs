//! The simulation kinds, each in its own room.

pub mod pbf;
