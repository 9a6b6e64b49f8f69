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
//! Here: up- and download, the stages' launch sequences (`tests/emulation/particles.cpp`
//! runs the same), the frame; `buffers.rs` what they live in; `kernels.rs` the records and
//! names, `parity.rs` the comparison with the CPU stage by stage, `emulation.rs` the harness
//! that runs it with the kernels compiled as C++ (`stages_emulation.rs` the tests,
//! `drawing_emulation.rs` the drawing kernels'); `stats.rs` a body's statistics panel figures
//! reduced on the GPU (`stats_emulation.rs`, tests: against the CPU's, compiled as C++;
//! `basin_emulation.rs` the same for the end of frame's reductions; `frame_check.rs` and
//! `live_edit_check.rs` the doctor's checks of the frame's end and of live edits on the GPU);
//! `self_collide.rs` the `self_collide` stage's launches and contact lists
//! (`self_collide_check.rs` its check against the CPU over substeps, the doctor's and
//! `self_collide_emulation.rs`' tests); `frame_graph.rs` a body's frame as one CUDA graph.
//! Not yet run on a GPU.

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
use buffers::{basin_fits, BodyBuffers, Buffers, FountainBuffers, SkinBuffers};
pub use frame_graph::BodyFrame;

use super::body::Body;
use super::fountain::Fountain;
use super::render::Skin;
use super::NonFinite;
use crate::cuda::interop::GlInterop;
use crate::cuda::launch::read_back;
use crate::cuda::{CudaError, EventTimer, Module};
use crate::sims::pool::surface::Surface;
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

    /// Replaces the fountain's state on the GPU with `f`'s (particles and basin), first making
    /// the buffers again where `f` no longer fits them ([`Room::fitting`]).
    pub fn upload_fountain(&mut self, f: &Fountain) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let s = &self.stream;
        // A live edit of the basin's nodes per side or of max particles (sim_edit.rs): the
        // buffers made again at the state's size before it is uploaded.
        let room = b.room().fitting(f);
        b.refit(s, room)?;
        let copy = cuda("copying the fountain to the GPU");
        let n = f.len();
        if n > 0 {
            s.memcpy_htod(flat(&f.position), &mut b.position.slice_mut(..3 * n))
                .map_err(&copy)?;
            s.memcpy_htod(flat(&f.velocity), &mut b.velocity.slice_mut(..3 * n))
                .map_err(&copy)?;
            s.memcpy_htod(&f.age, &mut b.age.slice_mut(..n))
                .map_err(&copy)?;
            s.memcpy_htod(&f.hits, &mut b.hits.slice_mut(..n))
                .map_err(&copy)?;
            // A particle without a tag (made by hand) draws as its index, as the CPU path.
            let tag: Vec<u32> = (0..n)
                .map(|k| f.tag.get(k).copied().unwrap_or(k as u32))
                .collect();
            s.memcpy_htod(&tag, &mut b.tag.slice_mut(..n))
                .map_err(&copy)?;
        }
        s.memcpy_htod(&f.surface.height, &mut b.height)
            .map_err(&copy)?;
        s.memcpy_htod(&f.surface.velocity, &mut b.basin_velocity)
            .map_err(&copy)?;
        s.memcpy_htod(&f.surface.flags, &mut b.basin_flags)
            .map_err(&copy)?;
        s.memcpy_htod(&[n as u32, 0], &mut b.tally).map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        self.totals.count = n;
        Ok(())
    }

    /// The fountain's particles, basin and drawing order from the GPU into `f` and `order`.
    pub fn download_fountain(
        &self,
        f: &mut Fountain,
        order: &mut Vec<u32>,
    ) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        basin_fits(b, &f.surface)?;
        let s = &self.stream;
        let copy = cuda("copying the fountain from the GPU");
        let n = self.totals.count;
        let mut flat_position = vec![0.0f32; 3 * n];
        let mut flat_velocity = vec![0.0f32; 3 * n];
        f.age.resize(n, 0.0);
        f.hits.resize(n, 0);
        f.tag.resize(n, 0);
        order.resize(n, 0);
        if n > 0 {
            s.memcpy_dtoh(&b.position.slice(..3 * n), &mut flat_position)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.velocity.slice(..3 * n), &mut flat_velocity)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.age.slice(..n), &mut f.age)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.hits.slice(..n), &mut f.hits)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.tag.slice(..n), &mut f.tag)
                .map_err(&copy)?;
            s.memcpy_dtoh(&b.order.slice(..n), order).map_err(&copy)?;
        }
        s.memcpy_dtoh(&b.height, &mut f.surface.height)
            .map_err(&copy)?;
        s.memcpy_dtoh(&b.basin_velocity, &mut f.surface.velocity)
            .map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        f.position = bytemuck::pod_collect_to_vec::<f32, Vec3>(&flat_position);
        f.velocity = bytemuck::pod_collect_to_vec::<f32, Vec3>(&flat_velocity);
        Ok(())
    }

    /// Reads the basin's heights back into `surface` (the renderer's water, when the
    /// particles go to GL through interop): n² floats, the particles stay on the GPU.
    pub fn download_basin(&self, surface: &mut Surface) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        basin_fits(b, surface)?;
        let copy = cuda("copying the basin from the GPU");
        read_back(&self.stream, &b.height, &mut surface.height, copy)
    }

    /// Replaces the body's state on the GPU with `b`'s (positions, previous, velocities,
    /// forces, pins, stiffness). Its shape (nodes, triangles, springs) must be the solver's.
    pub fn upload_body(&mut self, body: &Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if body.len() != b.nodes
            || body.triangles.len() != b.triangles_count
            || body.springs.len() != b.spring_count
        {
            return Err(CudaError::Setting(
                "the body's shape is not the solver's".into(),
            ));
        }
        let s = &self.stream;
        let copy = cuda("copying the body to the GPU");
        s.memcpy_htod(flat(&body.position), &mut b.position)
            .map_err(&copy)?;
        s.memcpy_htod(flat(&body.previous), &mut b.previous)
            .map_err(&copy)?;
        s.memcpy_htod(flat(&body.velocity), &mut b.velocity)
            .map_err(&copy)?;
        s.memcpy_htod(flat(&body.force), &mut b.force)
            .map_err(&copy)?;
        let pinned: Vec<u8> = body.pinned.iter().map(|&p| u8::from(p)).collect();
        s.memcpy_htod(&pinned, &mut b.pinned).map_err(&copy)?;
        let t = Topology::of(body);
        if !t.link_stiffness.is_empty() {
            s.memcpy_htod(&t.link_stiffness, &mut b.link_stiffness)
                .map_err(&copy)?;
            s.memcpy_htod(&t.spring_stiffness, &mut b.spring_stiffness)
                .map_err(&copy)?;
        }
        s.synchronize().map_err(&copy)?;
        self.totals.count = body.len();
        self.contacts_stale();
        Ok(())
    }

    /// The springs' rest lengths on the GPU from `body`'s (springs growing in, `growth.rs`).
    pub fn upload_rest(&mut self, body: &Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if body.springs.len() != b.spring_count || body.springs.is_empty() {
            return Err(CudaError::Setting(
                "the body's springs are not the solver's".into(),
            ));
        }
        let link: Vec<f32> = body.links.iter().map(|l| l.rest).collect();
        let spring: Vec<f32> = body.springs.iter().map(|s| s.rest).collect();
        let s = &self.stream;
        let copy = cuda("copying the rest lengths to the GPU");
        s.memcpy_htod(&link, &mut b.link_rest).map_err(&copy)?;
        s.memcpy_htod(&spring, &mut b.spring_rest).map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        Ok(())
    }

    /// The links' and springs' rest lengths on the GPU (the check of [`Self::upload_rest`],
    /// `live_edit_check.rs`).
    pub fn download_rest(&self) -> Result<(Vec<f32>, Vec<f32>), CudaError> {
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if b.spring_count == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let s = &self.stream;
        let copy = cuda("copying the rest lengths from the GPU");
        let mut link = vec![0.0f32; 2 * b.spring_count];
        let mut spring = vec![0.0f32; b.spring_count];
        s.memcpy_dtoh(&b.link_rest, link.as_mut_slice())
            .map_err(&copy)?;
        s.memcpy_dtoh(&b.spring_rest, spring.as_mut_slice())
            .map_err(&copy)?;
        s.synchronize().map_err(&copy)?;
        Ok((link, spring))
    }

    /// The body's positions, previous positions, velocities and forces from the GPU into `body`.
    pub fn download_body(&self, body: &mut Body) -> Result<(), CudaError> {
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let s = &self.stream;
        let copy = cuda("copying the body from the GPU");
        let n = 3 * b.nodes;
        let mut arrays = [
            vec![0.0f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
            vec![0.0f32; n],
        ];
        for (from, to) in [&b.position, &b.previous, &b.velocity, &b.force]
            .into_iter()
            .zip(&mut arrays)
        {
            s.memcpy_dtoh(from, to.as_mut_slice()).map_err(&copy)?;
        }
        s.synchronize().map_err(&copy)?;
        let [p, q, v, f] = arrays;
        body.position = bytemuck::pod_collect_to_vec(&p);
        body.previous = bytemuck::pod_collect_to_vec(&q);
        body.velocity = bytemuck::pod_collect_to_vec(&v);
        body.force = bytemuck::pod_collect_to_vec(&f);
        Ok(())
    }

    /// The alive and landed counts from the GPU into [`CudaParticles::totals`] (waits).
    pub fn read_tally(&mut self) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Ok(());
        };
        let mut tally = [0u32; 2];
        let copy = cuda("copying the particle counts from the GPU");
        read_back(&self.stream, &b.tally, &mut tally, copy)?;
        self.totals.count = tally[0] as usize;
        self.totals.landed = tally[1] as usize;
        Ok(())
    }

    /// Replaces the landings `basin` splashes (the parity checks' input).
    pub fn set_landings(&mut self, drops: &[[f32; 3]]) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let copy = cuda("copying landings to the GPU");
        let flat = drops.as_flattened();
        if flat.len() > b.drops.len() {
            return Err(CudaError::Setting("more landings than particles".into()));
        }
        if !flat.is_empty() {
            self.stream
                .memcpy_htod(flat, &mut b.drops.slice_mut(..flat.len()))
                .map_err(&copy)?;
        }
        let tally = [self.totals.count as u32, drops.len() as u32];
        self.stream
            .memcpy_htod(&tally, &mut b.tally)
            .map_err(&copy)?;
        self.stream.synchronize().map_err(&copy)
    }

    /// The last `collide`'s landings (after [`CudaParticles::read_tally`]).
    pub fn landings(&self) -> Result<Vec<[f32; 3]>, CudaError> {
        let Buffers::Fountain(b) = &self.buffers else {
            return Ok(Vec::new());
        };
        let mut flat = vec![0.0f32; 3 * self.totals.landed];
        let copy = cuda("copying landings from the GPU");
        if !flat.is_empty() {
            self.stream
                .memcpy_dtoh(&b.drops.slice(..flat.len()), &mut flat)
                .map_err(&copy)?;
        }
        self.stream.synchronize().map_err(&copy)?;
        Ok(flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
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
