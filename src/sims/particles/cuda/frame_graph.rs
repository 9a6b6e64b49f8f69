//! A body's frame (cloth or jelly: its substeps' stages and `self_collide`) as one CUDA graph
//! (`crate::cuda::graph`, as PBF's `frame_graph.rs`): captured the first time a frame of its
//! kind runs, replayed with one launch afterwards. The frame's end (`reduce_nodes`,
//! `reduce_finish`, the copy back) stays outside, as the frame's one synchronisation.
//!
//! A graph holds its launches' arguments as captured, so its key names everything on the host
//! they depend on: each substep's record (`BodyStep`, by value: dt and the one before, wind,
//! gravity, damping, the sphere, the ground, friction, the volume modulus, the node and cell
//! counts that size the grids; so a wind steered live or another substep count is another
//! key), XPBD's iterations and the integrator (which kernels run, how often), `self_collide`'s
//! thickness and friction, the room of its contact lists and the thickness they were built
//! for (the first substep forces a build when that is not this frame's), and the device
//! pointer of every array the launches take. What varies every frame without a new key lives
//! in device memory the kernels read: the nodes, the pins (a grabbed node's target is its
//! position, uploaded with the host's edits), the springs' rest lengths (growing in) and
//! stiffness, the contact lists and their rebuild flag (decided on the GPU).
//!
//! The frame changes one piece of host state: the thickness the lists were built for (set by
//! the first substep's `self_collide`); it is the recording's outcome, put back after each
//! replay. The room's growth after an overflow happens at the frame's end, outside the graph
//! (a new allocation and a forced build: the next frame's key differs, so it captures again).
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
use crate::cuda::{CudaError, GraphCache, GraphFailure, GraphRun};
use crate::sims::particles::dynamics::Integrator;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

/// Graphs kept: a frame that forces the lists' build and one that does not, for a few values
/// of the by-value constants (a wind steered live captures one a frame; the least recently
/// used is dropped).
const GRAPHS_KEPT: usize = 8;

/// `self_collide`'s index in the body's stage order (`BODY_STAGES`), timed every substep.
pub(super) const SELF_COLLIDE: usize = 5;

/// The words of a [`BodyStep`] (all 4 bytes wide), compared bit for bit.
const STEP_WORDS: usize = std::mem::size_of::<BodyStep>() / 4;

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

/// What a body frame's graph depends on (see the module's note).
#[derive(Clone, Debug, PartialEq)]
struct FrameKey {
    steps: Vec<[u32; STEP_WORDS]>,
    integrator: Integrator,
    iterations: u32,
    /// Thickness and friction, as bits.
    self_collide: Option<[u32; 2]>,
    /// The contact lists' room and the thickness they were built for (bits), when made.
    contacts: Option<(usize, Option<u32>)>,
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
    /// The thickness the lists were built for at the recorded frame's end.
    cache: GraphCache<FrameKey, Option<f32>>,
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
    /// Enqueues a body's frame (every substep's stages and `self_collide`), as a CUDA graph
    /// when the frame can be one (see the module's note), else launch by launch.
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
        if frame.self_collide.is_some() {
            // Made before the capture: an allocation cannot be captured.
            self.contacts_made()?;
        }
        if because.is_some() {
            return self.body_frame_launches(frame);
        }
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let stream = self.stream.clone();
        let start = b.contacts.as_ref().and_then(|c| c.built_for);
        let key = FrameKey {
            steps: frame.steps.iter().map(|s| bytemuck::cast(*s)).collect(),
            integrator: frame.integrator,
            iterations: frame.iterations,
            self_collide: frame.self_collide.map(|(h, f)| [h.to_bits(), f.to_bits()]),
            contacts: b
                .contacts
                .as_ref()
                .map(|c| (c.capacity, c.built_for.map(f32::to_bits))),
            arrays: arrays(b, &stream),
        };
        let mut cache = std::mem::replace(&mut self.graphs.cache, GraphCache::new(1));
        let ran = cache.run(&stream, key, || {
            self.body_frame_launches(frame)?;
            Ok::<_, CudaError>(self.built_for())
        });
        self.graphs.cache = cache;
        match ran {
            Ok((end, run)) => {
                if run == GraphRun::Replayed {
                    self.set_built_for(end);
                }
                Ok(())
            }
            Err(GraphFailure::Launch(error)) => Err(error),
            Err(GraphFailure::Capture(error)) => {
                // Nothing was queued: the lists' state goes back to the frame's start, and this
                // solver runs its frames launch by launch from now on, saying why.
                self.set_built_for(start);
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

    /// The body's frame, each kernel launched by itself (each stage's end marked).
    fn body_frame_launches(&mut self, frame: &BodyFrame) -> Result<(), CudaError> {
        let stages = body_stages(frame.integrator);
        for step in &frame.steps {
            for (index, stage) in stages.into_iter().enumerate() {
                self.body_stage(stage, step, frame.iterations)?;
                self.end_stage(index)?;
            }
            if let Some((thickness, friction)) = frame.self_collide {
                self.self_collide((thickness, friction, step.dt))?;
            }
            self.end_stage(SELF_COLLIDE)?;
        }
        Ok(())
    }

    fn built_for(&self) -> Option<f32> {
        match &self.buffers {
            Buffers::Body(b) => b.contacts.as_ref().and_then(|c| c.built_for),
            _ => None,
        }
    }

    fn set_built_for(&mut self, built_for: Option<f32>) {
        if let Buffers::Body(b) = &mut self.buffers {
            if let Some(c) = &mut b.contacts {
                c.built_for = built_for;
            }
        }
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

/// The device pointer of every array a body frame's launches take (the body's, then the
/// contact lists'), in a fixed order.
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
