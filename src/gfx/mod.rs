//! Shared OpenGL plumbing, kind-agnostic: the headless context, shader programs, render
//! targets, cameras, pass timing and the sky.

pub mod camera;
pub mod context;
pub mod headless;
pub mod program;
pub mod skybox;
pub mod targets;
pub mod timing;
