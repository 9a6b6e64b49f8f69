//! The particles kind's CUDA solver: the fountain's particles and basin, or a body's nodes,
//! live on the GPU and each CPU stage runs as kernels of `kernels/particles.cu` (same names,
//! same operations) on one stream. A frame enqueues its kernels with no host synchronisation
//! and ends with one small copy back (the alive and landed counts, the statistics reduced on
//! the GPU), the frame's one synchronisation, which also carries the stage events' end.
//!
//! XPBD runs graph-coloured Gauss–Seidel: one launch per colour per iteration (the springs of
//! a colour share no node); the CPU sweeps the same colours in the same order, so both make
//! the same sweep (bit for bit in the emulation without contraction).
//!
//! Here: the solver's making, the stages' launch sequences (`tests/emulation/particles.cpp` runs
//! the same), the frame; `transfer.rs` the up- and downloads; `buffers.rs` what they live in;
//! `kernels.rs` the records and names, `parity.rs` the comparison with the CPU stage by stage,
//! `emulation.rs` the harness that runs it with the kernels compiled as C++ (`stages_emulation.rs`
//! the tests, `drawing_emulation.rs` the drawing kernels'); `stats.rs` a body's statistics panel
//! figures reduced on the GPU (`stats_emulation.rs`, tests: against the CPU's, compiled as C++;
//! `basin_emulation.rs` the same for the end of frame's reductions; `frame_check.rs` and
//! `live_edit_check.rs` the doctor's checks of the frame's end and of live edits on the GPU);
//! `self_collide.rs` the `self_collide` stage's launches and contact lists (`self_collide_check.rs`
//! its check against the CPU over substeps, the doctor's and `self_collide_emulation.rs`' tests);
//! `frame_graph.rs` a body's frame as one CUDA graph. Not yet run on a GPU.

mod buffers;
pub mod frame_check;
mod frame_graph;
mod gl;
pub mod kernels;
pub mod live_edit_check;
pub mod parity;
mod parity_body;
mod self_collide;
pub mod self_collide_check;
mod stages;
pub mod stats;
mod transfer;

#[cfg(test)]
mod basin_emulation;
#[cfg(test)]
mod drawing_emulation;
#[cfg(test)]
mod emulation;
#[cfg(test)]
mod self_collide_emulation;
#[cfg(test)]
mod stages_emulation;
#[cfg(test)]
mod stats_emulation;

use crate::cuda::Records;
pub use buffers::Room;
use buffers::{BodyBuffers, Buffers, FountainBuffers, SkinBuffers};
pub use frame_graph::BodyFrame;

use super::body::Body;
use super::fountain::Fountain;
use super::render::Skin;
use super::NonFinite;
use crate::cuda::interop::GlInterop;
use crate::cuda::{CudaError, EventTimer, Module};
use cudarc::driver::{CudaContext, CudaStream, DeviceRepr};
use glam::Vec3;
use kernels::{blocks, BasinStep, FountainStep, Topology, NODES_QUANTITIES};
use std::sync::Arc;

/// The GL buffers a renderer gives [`CudaParticles::write_gl`]; each `None` is left alone.
/// Layouts: positions and velocities as tightly packed `vec3` (12 bytes per particle or
/// node), ages as `float` (fountain only), the drawing order as `uint` indices back to front
/// (fountain only; the `sort` stage's output), the tags (emission numbers' low 32 bits, the
/// colour and sprite) as `uint` (fountain only). Each needs at least [`CudaParticles::count`]
/// elements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GlBuffers {
    /// Positions, m.
    pub position: Option<u32>,
    /// Velocities, m/s.
    pub velocity: Option<u32>,
    /// Ages, s.
    pub age: Option<u32>,
    /// Indices back to front.
    pub order: Option<u32>,
    /// Tags.
    pub tag: Option<u32>,
    /// The basin's water mesh (fountain only).
    pub water: Option<GlWater>,
}

/// The basin's water mesh a renderer gives [`CudaParticles::write_gl`]: its vertex buffer
/// (`render::water::WaterVertex`'s 6 floats per node, n² of them, row by row) and what places
/// the nodes (render/water.rs `vertices`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlWater {
    /// The vertex buffer.
    pub buffer: u32,
    /// Node spacing, m.
    pub h: f32,
    /// The basin's half width, m.
    pub basin: f32,
    /// The water's level, m.
    pub level: f32,
    /// How many times steeper the normals' slopes are drawn.
    pub gain: f32,
}

/// What a renderer gives [`CudaParticles::write_body_gl`]: a body's skin (its vertex buffer,
/// `render::Vertex`'s 8 floats per vertex of `Skin`'s layout), its nodes' points and its
/// springs' line ends (`render::Point`'s 6 floats; one per node, two per spring), coloured by
/// energy (`render::nodes::body_points`). Each `None` is left alone.
#[derive(Clone, Copy, Debug)]
pub struct GlBody<'a> {
    /// The skin's vertex buffer and layout.
    pub skin: Option<(u32, &'a Skin)>,
    /// The nodes' points.
    pub points: Option<u32>,
    /// The springs' line ends.
    pub lines: Option<u32>,
    /// Mass per node, kg.
    pub mass: f32,
    /// The energy drawn red, J (`render::nodes::red_energy`).
    pub red_energy: f32,
    /// Decades of energy from red down to blue-grey.
    pub energy_decades: f32,
}

/// What the last frame ended with, reduced on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// Particles alive (fountain) or nodes (body).
    pub count: usize,
    /// Particles that fell into the basin in the last step.
    pub landed: usize,
    /// Non-finite basin nodes and particles alive (`reduce_fountain`), or body nodes
    /// (`reduce_nodes`).
    pub non_finite: NonFinite,
    /// The basin's largest |height| (m); 0 for a body (whose figures are `body_stats`', on
    /// demand: [`CudaParticles::body_figures`]).
    pub figure: f64,
    /// A body's box around its finite nodes, (lowest, highest corner), m (`reduce_nodes`;
    /// `Body::bounds`): where the wind arrow stands. `None` for the fountain or no finite node.
    pub bounds: Option<[Vec3; 2]>,
    /// `self_collide`'s state at the frame's end (kernels.rs `SC_*`: builds so far, the last
    /// build's candidates); `None` without self-collision.
    pub self_collide: Option<[u32; kernels::SC_STATE]>,
}

/// What ends a frame ([`CudaParticles::end_frame`]): the fountain's basin record and the
/// particles before `collide` (an upper bound of those alive, which the GPU counts), or a
/// body.
#[derive(Clone, Copy, Debug)]
pub enum FrameEnd<'a> {
    /// The fountain.
    Fountain {
        /// The basin's record.
        basin: &'a BasinStep,
        /// Particles before `collide`.
        particles: usize,
    },
    /// A body.
    Body,
}

/// The CUDA particles solver (one fountain or one body).
pub struct CudaParticles {
    /// What the last frame ended with.
    pub totals: Totals,
    /// GPU seconds per stage since the last reset, in the kind's stage order.
    pub stage_seconds: Vec<f64>,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Module,
    buffers: Buffers,
    timer: EventTimer<usize>,
    stage_timing: bool,
    /// Fountain: positions, velocities, ages, order, tags, water; body: skin, points, lines.
    interop: [GlInterop; 6],
    /// Set by a frame whose `self_collide` lists overflowed (the room was grown): what
    /// happened, for the caller to report once.
    pub overflow_note: Option<String>,
    /// A body's frames as CUDA graphs (`frame_graph.rs`).
    graphs: frame_graph::FrameGraphs,
}

pub(super) fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> CudaError {
    CudaError::driver(what)
}

fn flat(v: &[Vec3]) -> &[f32] {
    bytemuck::cast_slice(v)
}

impl CudaParticles {
    fn start(
        device: usize,
        stages: usize,
        buffers: impl FnOnce(&Arc<CudaStream>) -> Result<Buffers, CudaError>,
    ) -> Result<Self, CudaError> {
        let sync_check = crate::cuda::sync_check_requested()?;
        let graphs = frame_graph::FrameGraphs::new(crate::cuda::graphs_requested()?);
        let context = crate::cuda::context(device)?;
        let module = Module::load(&context, kernels::MODULE, kernels::NAMES, sync_check)?;
        // SAFETY: set before any allocation of this context's solver; all work goes to `stream`.
        unsafe { context.disable_event_tracking() };
        let stream = context
            .new_stream()
            .map_err(cuda("creating a CUDA stream"))?;
        let buffers = buffers(&stream)?;
        Ok(CudaParticles {
            totals: Totals::default(),
            stage_seconds: vec![0.0; stages],
            timer: EventTimer::new(context.clone()),
            context,
            stream,
            module,
            buffers,
            stage_timing: true,
            interop: Default::default(),
            overflow_note: None,
            graphs,
        })
    }

    /// A solver on device `device` for fountain `f` (room for `max_particles`), from its state.
    pub fn fountain(device: usize, f: &Fountain) -> Result<Self, CudaError> {
        let room = Room::of(f);
        let mut solver = Self::start(device, super::FOUNTAIN_STAGES.len(), |s| {
            Ok(Buffers::Fountain(Box::new(FountainBuffers::new(s, room)?)))
        })?;
        solver.upload_fountain(f)?;
        Ok(solver)
    }

    /// A solver on device `device` for body `b`, from its state.
    pub fn body(device: usize, b: &Body) -> Result<Self, CudaError> {
        let t = Topology::of(b);
        let mut solver = Self::start(device, super::BODY_STAGES.len(), |s| {
            let alloc = cuda("allocating GPU memory");
            let copy = |v: &[u32]| s.clone_htod(if v.is_empty() { &[0u32][..] } else { v });
            let copy_f = |v: &[f32]| s.clone_htod(if v.is_empty() { &[0.0f32][..] } else { v });
            let n = b.len().max(1);
            Ok(Buffers::Body(Box::new(BodyBuffers {
                position: s.alloc_zeros(3 * n).map_err(&alloc)?,
                previous: s.alloc_zeros(3 * n).map_err(&alloc)?,
                velocity: s.alloc_zeros(3 * n).map_err(&alloc)?,
                force: s.alloc_zeros(3 * n).map_err(&alloc)?,
                pinned: s.alloc_zeros(n).map_err(&alloc)?,
                node_start: copy(&t.node_start).map_err(&alloc)?,
                link_other: copy(&t.link_other).map_err(&alloc)?,
                link_rest: copy_f(&t.link_rest).map_err(&alloc)?,
                link_stiffness: copy_f(&t.link_stiffness).map_err(&alloc)?,
                triangles: copy(&t.triangles).map_err(&alloc)?,
                node_triangle_start: copy(&t.node_triangle_start).map_err(&alloc)?,
                node_triangles: copy(&t.node_triangles).map_err(&alloc)?,
                push: s
                    .alloc_zeros(3 * b.triangles.len().max(1))
                    .map_err(&alloc)?,
                coloured: copy(&t.coloured).map_err(&alloc)?,
                spring_a: copy(&t.spring_a).map_err(&alloc)?,
                spring_b: copy(&t.spring_b).map_err(&alloc)?,
                spring_rest: copy_f(&t.spring_rest).map_err(&alloc)?,
                spring_stiffness: copy_f(&t.spring_stiffness).map_err(&alloc)?,
                lambda: s.alloc_zeros(b.springs.len().max(1)).map_err(&alloc)?,
                displacement: s.alloc_zeros(3 * n).map_err(&alloc)?,
                cell_rest: copy_f(&t.cell_rest).map_err(&alloc)?,
                cell_pressure: s.alloc_zeros(b.cells.len().max(1)).map_err(&alloc)?,
                cell_lambda: s.alloc_zeros(b.cells.len().max(1)).map_err(&alloc)?,
                partials: s
                    .alloc_zeros(NODES_QUANTITIES as usize * blocks(n))
                    .map_err(&alloc)?,
                stats: s.alloc_zeros(NODES_QUANTITIES as usize).map_err(&alloc)?,
                figures: s.alloc_zeros(4).map_err(&alloc)?,
                colour_start: t.colour_start.clone(),
                nodes: b.len(),
                triangles_count: b.triangles.len(),
                spring_count: b.springs.len(),
                skin: None,
                contacts: None,
                steps: Records::new(s, 1)?,
                self_steps: Records::new(s, 1)?,
            })))
        })?;
        solver.upload_body(b)?;
        Ok(solver)
    }

    /// The backend's note on its kernels ([`crate::cuda::GraphMode::kernels_note`]).
    pub fn kernel_origin(&self) -> String {
        let module = &self.module;
        self.graphs
            .mode
            .kernels_note(module.origin(), module.sync_check())
    }

    /// Turns the per-stage CUDA events on (the default) or off.
    pub fn set_stage_timing(&mut self, enabled: bool) {
        self.stage_timing = enabled;
    }

    /// Particles alive or nodes, as of the last frame's end (or upload).
    pub fn count(&self) -> usize {
        self.totals.count
    }

    /// The body's springs on the GPU (0 for the fountain).
    pub fn spring_count(&self) -> usize {
        match &self.buffers {
            Buffers::Body(b) => b.spring_count,
            _ => 0,
        }
    }
}

impl Drop for CudaParticles {
    fn drop(&mut self) {
        self.release_gl();
    }
}

// Keeps DeviceRepr in scope for the records' by-value launches.
const _: fn() = || {
    fn is_repr<T: DeviceRepr>() {}
    is_repr::<FountainStep>();
    is_repr::<BasinStep>();
};
