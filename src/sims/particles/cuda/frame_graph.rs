//! A body's frame (cloth or jelly: its substeps' stages and `self_collide`) as one CUDA graph
//! (`crate::cuda::graph`, as PBF's `frame_graph.rs`): captured the first time a frame of its
//! kind runs, replayed with one launch afterwards. The frame's end (`reduce_nodes`,
//! `reduce_finish`, the copy back) stays outside, as the frame's one synchronisation.
//!
//! A graph holds its launches' arguments as captured, so the kernels take no constant by
//! value that may change between frames: each substep's records (`BodyStep`, `SelfStep`) live
//! in device memory (`crate::cuda::Records`: slot k is substep k's), uploaded before the frame's
//! launch (or graph), only where their bits changed, and the kernels read their substep's
//! through a pointer. So the key names only what decides the launch sequence and the grids:
//!
//! - in the key: the substep count; per substep, the node, triangle and cell counts (grids),
//!   whether the springs are forces (`with_springs`: the integrator), the volume term's and the
//!   wind's stages run (cells and K > 0, drag ≠ 0); XPBD's iterations and the integrator (which
//!   kernels, how often); whether `self_collide` runs and its lists' room; and the device
//!   pointer of every array the launches take, the records' slots included (more substeps
//!   than slots: new slots, a new pointer);
//! - data (the records' values, never in the key): dt and the one before (Verlet's carry and
//!   reach), the wind, gravity (the nodes' weight), the mass, damping (decay), wind drag and
//!   whether it is relative, the ground, the sphere (there or not, centre, radius), friction,
//!   the volume modulus's value, the lattice's side; `self_collide`'s thickness (its lists'
//!   radius and the drift that rebuilds), friction, dt, room, and the flag that forces its
//!   lists' build (set on the first substep by the host where the lists were built for another
//!   thickness or are stale: [`CudaParticles::self_steps`], which also marks them built for
//!   this one before the frame is queued, graph or not).
//!
//! So a wind steered live, a panel edit of damping, gravity, friction, the thickness or the
//! volume modulus (not to or from 0), and the frame after such an edit (its forced build)
//! replay the graph they share. Other substeps, iterations or integrator, self-collision on or
//! off, the room grown after an overflow (at the frame's end, outside the graph: a new
//! allocation) capture again. What varies every frame lives in device memory too: the nodes,
//! the pins (a grabbed node's target is its position, uploaded with the host's edits), the
//! springs' rest lengths (growing in) and stiffness, the contact lists and their rebuild flag
//! (decided on the GPU).
//!
//! Frames that run launch by launch: stage timing on (its events sit between the stages),
//! `FLUIDLAB_CUDA_SYNC_CHECK` (a synchronisation after each launch), `FLUIDLAB_CUDA_GRAPHS=0`,
//! after a capture the driver refused, and every fountain frame: its grids are sized by the
//! particles alive (read back at each frame's end), `emit` takes the emission counter by value
//! and `basin` may upload new splash stencils mid-frame, so no two frames would share a key.

use super::buffers::{BodyBuffers, Buffers};
use super::kernels::BodyStep;
use super::parity::body_stages;
use super::CudaParticles;
use crate::cuda::{CudaError, GraphCache, GraphFailure};
use crate::sims::particles::dynamics::Integrator;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

/// Graphs kept: one a launch sequence (another substep count, iterations or integrator, the
/// volume term or the wind switched on or off, self-collision, the lists' room); the least
/// recently used is dropped.
const GRAPHS_KEPT: usize = 8;

/// `self_collide`'s index in the body's stage order (`BODY_STAGES`), timed every substep.
pub(super) const SELF_COLLIDE: usize = 5;

/// A body's frame: what `ParticlesSim::step_device` runs between `begin_frame` and
/// `end_frame`.
#[derive(Clone, Debug)]
pub struct BodyFrame {
    /// Each substep's record, in order.
    pub steps: Vec<BodyStep>,
    /// How the body moves.
    pub integrator: Integrator,
    /// XPBD's iterations.
    pub iterations: u32,
    /// `self_collide`'s thickness and friction, with `self_collision` on.
    pub self_collide: Option<(f32, f32)>,
}

/// What of a substep's record decides the launches (see the module's note): the node,
/// triangle and cell counts (grids), the springs as forces, the volume term's and the wind's
/// stages run.
#[derive(Clone, Copy, Debug, PartialEq)]
struct StepLaunches {
    nodes: u32,
    triangles: u32,
    cells: u32,
    with_springs: bool,
    volume: bool,
    wind: bool,
}

impl StepLaunches {
    fn of(step: &BodyStep) -> Self {
        StepLaunches {
            nodes: step.nodes,
            triangles: step.triangles,
            cells: step.cells,
            with_springs: step.with_springs != 0,
            volume: step.volume_on(),
            wind: step.wind_on(),
        }
    }
}

/// What a body frame's graph depends on (see the module's note).
#[derive(Clone, Debug, PartialEq)]
struct FrameKey {
    /// One a substep.
    steps: Vec<StepLaunches>,
    integrator: Integrator,
    iterations: u32,
    /// `self_collide`'s lists' room, with self-collision on.
    contacts: Option<usize>,
    /// Every array's device pointer, in [`arrays`]' order.
    arrays: Vec<u64>,
}

/// Why a body frame runs launch by launch.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LaunchesBecause {
    GraphsOff,
    CaptureRefused,
    StageTiming,
    SyncCheck,
}

/// The solver's body graphs, and whether this process allows them.
pub(super) struct FrameGraphs {
    cache: GraphCache<FrameKey, ()>,
    /// `FLUIDLAB_CUDA_GRAPHS` allows graphs.
    pub(super) allowed: bool,
    /// Why graphs were given up, when a capture failed.
    refused: Option<String>,
    /// Why the last body frame ran launch by launch, if it did.
    launches_because: Option<LaunchesBecause>,
}

impl FrameGraphs {
    pub(super) fn new(allowed: bool) -> Self {
        Self {
            cache: GraphCache::new(GRAPHS_KEPT),
            allowed,
            refused: None,
            launches_because: None,
        }
    }
}

impl CudaParticles {
    /// Enqueues a body's frame (every substep's stages and `self_collide`), its records
    /// uploaded first, as a CUDA graph when the frame can be one (see the module's note), else
    /// launch by launch.
    pub fn body_frame(&mut self, frame: &BodyFrame) -> Result<(), CudaError> {
        let because = if !self.graphs.allowed {
            Some(LaunchesBecause::GraphsOff)
        } else if self.graphs.refused.is_some() {
            Some(LaunchesBecause::CaptureRefused)
        } else if self.stage_timing {
            Some(LaunchesBecause::StageTiming)
        } else if self.module.sync_check() {
            Some(LaunchesBecause::SyncCheck)
        } else {
            None
        };
        self.graphs.launches_because = because;
        let self_steps = match frame.self_collide {
            Some((thickness, friction)) => {
                // Made before the capture: an allocation cannot be captured.
                self.contacts_made()?;
                let substeps: Vec<_> = frame
                    .steps
                    .iter()
                    .map(|step| (thickness, friction, step.dt))
                    .collect();
                self.self_steps(&substeps)?
            }
            None => Vec::new(),
        };
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let stream = self.stream.clone();
        // Before the frame's work on the stream (and outside any capture).
        b.steps.set(&stream, &frame.steps)?;
        b.self_steps.set(&stream, &self_steps)?;
        if because.is_some() {
            return self.body_frame_launches(frame);
        }
        let key = FrameKey {
            steps: frame.steps.iter().map(StepLaunches::of).collect(),
            integrator: frame.integrator,
            iterations: frame.iterations,
            contacts: frame
                .self_collide
                .and(b.contacts.as_ref())
                .map(|c| c.capacity),
            arrays: arrays(b, &stream),
        };
        let mut cache = std::mem::replace(&mut self.graphs.cache, GraphCache::new(1));
        let ran = cache.run(&stream, key, || self.body_frame_launches(frame));
        self.graphs.cache = cache;
        match ran {
            Ok(_) => Ok(()),
            Err(GraphFailure::Launch(error)) => Err(error),
            Err(GraphFailure::Capture(error)) => {
                // Nothing was queued: the frame runs launch by launch (its records are
                // uploaded, the lists' state decided), and so does every frame of this solver
                // from now on, saying why.
                eprintln!(
                    "note: a CUDA graph capture failed ({error}): this solver's frames run launch \
                     by launch from now on"
                );
                self.graphs.refused = Some(error.to_string());
                self.graphs.launches_because = Some(LaunchesBecause::CaptureRefused);
                self.body_frame_launches(frame)
            }
        }
    }

    /// The body's frame, each kernel launched by itself (each stage's end marked), each
    /// substep's from its records' slots.
    fn body_frame_launches(&mut self, frame: &BodyFrame) -> Result<(), CudaError> {
        let stages = body_stages(frame.integrator);
        for (k, step) in frame.steps.iter().enumerate() {
            for (index, stage) in stages.into_iter().enumerate() {
                self.body_stage_at(stage, step, k, frame.iterations)?;
                self.end_stage(index)?;
            }
            if frame.self_collide.is_some() {
                self.self_collide_at(k)?;
            }
            self.end_stage(SELF_COLLIDE)?;
        }
        Ok(())
    }

    /// How this solver's body frames ran: "as CUDA graphs (N captured, M replayed)", or
    /// launch by launch and why.
    pub fn graph_summary(&self) -> String {
        let (captured, replayed) = self.graphs.cache.counts();
        let because = match self.graphs.launches_because {
            None => return format!("as CUDA graphs ({captured} captured, {replayed} replayed)"),
            Some(LaunchesBecause::GraphsOff) => format!("{}=0", crate::cuda::GRAPHS_VARIABLE),
            Some(LaunchesBecause::CaptureRefused) => format!(
                "a CUDA graph capture failed: {}",
                self.graphs.refused.as_deref().unwrap_or_default()
            ),
            Some(LaunchesBecause::StageTiming) => "stage timing on".into(),
            Some(LaunchesBecause::SyncCheck) => format!("{}=1", crate::cuda::SYNC_CHECK_VARIABLE),
        };
        format!("launch by launch ({because})")
    }
}

/// The device pointer of every array a body frame's launches take (the body's, its records',
/// then the contact lists'), in a fixed order.
fn arrays(b: &BodyBuffers, stream: &CudaStream) -> Vec<u64> {
    fn at<T>(array: &CudaSlice<T>, stream: &CudaStream) -> u64 {
        array.device_ptr(stream).0
    }
    let s = stream;
    let mut pointers = vec![
        at(&b.position, s),
        at(&b.previous, s),
        at(&b.velocity, s),
        at(&b.force, s),
        at(&b.pinned, s),
        at(&b.node_start, s),
        at(&b.link_other, s),
        at(&b.link_rest, s),
        at(&b.link_stiffness, s),
        at(&b.triangles, s),
        at(&b.node_triangle_start, s),
        at(&b.node_triangles, s),
        at(&b.push, s),
        at(&b.coloured, s),
        at(&b.spring_a, s),
        at(&b.spring_b, s),
        at(&b.spring_rest, s),
        at(&b.spring_stiffness, s),
        at(&b.lambda, s),
        at(&b.displacement, s),
        at(&b.cell_rest, s),
        at(&b.cell_pressure, s),
        at(&b.cell_lambda, s),
        b.steps.pointer(s),
        b.self_steps.pointer(s),
    ];
    if let Some(c) = &b.contacts {
        pointers.extend([
            at(&c.bucket, s),
            at(&c.start, s),
            at(&c.fill, s),
            at(&c.nodes, s),
            at(&c.first, s),
            at(&c.candidates, s),
            at(&c.anchor, s),
            at(&c.touching, s),
            at(&c.moved, s),
            at(&c.changed, s),
            at(&c.state, s),
            at(&c.partials, s),
            at(&c.sums, s),
            at(&c.chunk_sums, s),
        ]);
    }
    pointers
}
