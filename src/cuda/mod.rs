//! Shared CUDA plumbing, kind-agnostic.

pub mod nvtx;
