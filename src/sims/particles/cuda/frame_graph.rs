//! A frame as one CUDA graph (`crate::cuda::graph`, as PBF's `frame_graph.rs`): a body's (cloth
//! or jelly: its substeps' stages and `self_collide`) or the fountain's (emit, advance, collide
//! with its scan and compaction, the basin's splash and substeps, the sort's passes), captured
//! the first time a frame of its kind runs, replayed with one launch afterwards. The frame's end
//! (`reduce_nodes` or `reduce_fountain`, `reduce_finish`, the copy back) stays outside, as the
//! frame's one synchronisation.
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
//! The fountain's frame reads three records, one slot each (`Records`): `FountainStep`,
//! `BasinStep` and `EmitStep` (the particles alive before `emit`, how many it adds, the
//! emission counter), uploaded before the frame where their bits changed (the emission's every
//! frame), and the splash stencils, uploaded before the frame where they changed (never inside
//! a capture; a new allocation only at another size). Its kernels read their counts on the GPU
//! (`emit`, `advance`, `collide`: the `EmitStep`'s; the sort: the survivors `collide_scan`
//! left) and return past them, so a graph's launches cover a **reach** ([`reach_bucket`]: the
//! power of two at or above the particles after `emit`, at least [`REACH_LEAST`], at most the
//! capacity) instead of the particles alive:
//!
//! - in the key: the reach (every particle launch's grid, the sort's tiles, the scans'
//!   lengths), the basin's nodes per side (its grids) and substeps (its launches), and the
//!   device pointer of every array, the records' and the stencils' included (the compaction
//!   swaps the particles' arrays every frame: even and odd frames have a graph each; a replay
//!   swaps them on the host as the recording did). The stages always run, the sort included;
//! - data: dt, gravity, the wind, drag, the cube, the jet and nozzle, lifetime, the basin's
//!   place and level, the push, the sort's eye and direction (`FountainStep`); the wave step's
//!   constants, the stencils' reaches and sums (`BasinStep`); the counts and the emission
//!   counter (`EmitStep`); the stencils' weights.
//!
//! So a fountain captures two graphs and replays them while the particles stay within a power
//! of two (above 4,096), the wind is steered or the camera moves; another reach, basin size,
//! substeps or stencil size, or buffers made again (max particles raised) capture anew.
//!
//! Frames run launch by launch, over their own counts (the same kernels, the same bits), for
//! `cuda::GraphMode`'s reasons.

use super::buffers::{BodyBuffers, Buffers, FountainBuffers};
use super::kernels::{BasinStep, BodyStep, EmitStep, FountainStep};
use super::parity::{body_stages, FountainStage};
use super::CudaParticles;
use crate::cuda::{CudaError, GraphCache, GraphMode, GraphRun};
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

/// The solver's frame graphs (a body's or the fountain's), and whether this process allows
/// them.
pub(super) struct FrameGraphs {
    cache: GraphCache<FrameKey, ()>,
    fountain: GraphCache<FountainKey, ()>,
    pub(super) mode: GraphMode,
    /// The fewest particles a fountain graph's launches cover ([`REACH_LEAST`]; a test lowers
    /// it: [`CudaParticles::set_reach_least`]).
    reach_least: usize,
}

impl FrameGraphs {
    pub(super) fn new(allowed: bool) -> Self {
        Self {
            cache: GraphCache::new(GRAPHS_KEPT),
            fountain: GraphCache::new(GRAPHS_KEPT),
            mode: GraphMode::new("frames", allowed),
            reach_least: REACH_LEAST,
        }
    }
}

impl CudaParticles {
    /// Enqueues a body's frame (every substep's stages and `self_collide`), its records
    /// uploaded first, as a CUDA graph when the frame can be one (see the module's note), else
    /// launch by launch.
    pub fn body_frame(&mut self, frame: &BodyFrame) -> Result<(), CudaError> {
        let (timing, sync_check) = (self.stage_timing, self.module.sync_check());
        let launches = self.graphs.mode.launches(timing, sync_check, None);
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
        if launches {
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
        match self.graphs.mode.ran(ran)? {
            Some(_) => Ok(()),
            // Nothing was queued: the frame runs launch by launch (its records are uploaded,
            // the lists' state decided).
            None => self.body_frame_launches(frame),
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

    /// How this solver's frames ran, a body's and the fountain's ([`GraphMode::summary`]).
    pub fn graph_summary(&self) -> String {
        let (body_captured, body_replayed) = self.graphs.cache.counts();
        let (captured, replayed) = self.graphs.fountain.counts();
        let counts = (captured + body_captured, replayed + body_replayed);
        self.graphs.mode.summary(counts)
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

/// The basin's record, its substeps and its splash stencils (inner, outer): what
/// `kernels::basin_step` makes for a fountain frame.
pub type FountainBasin = (BasinStep, u32, Vec<f32>, Vec<f32>);

/// How many particles a fountain frame's launches cover (their grids): the frame's own counts
/// (launch by launch) or [`reach_bucket`]'s (a graph's, the same from frame to frame). The
/// kernels read their counts on the GPU and return past them, so both compute the same.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reach {
    /// `emit`'s threads: at least the particles it adds.
    pub(super) emit: usize,
    /// The other stages': at least the particles after `emit`.
    pub(super) particles: usize,
}

/// The fewest particles a fountain graph's launches cover: 16 blocks, two of the sort's tiles.
pub const REACH_LEAST: usize = 4096;

/// The particles a fountain graph's launches cover when `particles` are alive after `emit`:
/// the power of two at or above, at least `least` ([`REACH_LEAST`]), at most the `capacity`.
/// So the grids change (a graph is captured) only when the particles cross a power of two, and
/// launch fewer than twice the threads the particles need (above `least`).
pub fn reach_bucket(particles: usize, capacity: usize, least: usize) -> usize {
    particles
        .next_power_of_two()
        .max(least)
        .min(capacity)
        .max(particles)
}

/// What a fountain frame's graph depends on (see the module's note).
#[derive(Clone, Debug, PartialEq)]
struct FountainKey {
    /// Every particle launch's grid ([`reach_bucket`]).
    reach: usize,
    /// The basin's nodes per side (its launches' grids) and substeps.
    nodes: i32,
    substeps: u32,
    /// Every array's device pointer, in [`fountain_arrays`]' order.
    arrays: Vec<u64>,
}

impl CudaParticles {
    /// Enqueues a fountain frame (emit, advance, collide, basin, sort) of `alive` particles,
    /// `count` of them to emit after `emitted` (fewer where the capacity is reached), its
    /// records and stencils uploaded first, as a CUDA graph when the frame can be one (see the
    /// module's note), else launch by launch (each stage's end marked). Returns the particles
    /// emitted.
    pub fn fountain_frame(
        &mut self,
        p: &FountainStep,
        basin: &FountainBasin,
        (alive, count, emitted): (usize, usize, u64),
    ) -> Result<usize, CudaError> {
        let capacity = self.capacity()?;
        let count = count.min(capacity - alive.min(capacity));
        // Before the frame's work on the stream (and outside any capture).
        self.fountain_records(p, basin, &EmitStep::new(alive, count, emitted))?;
        let (timing, sync_check) = (self.stage_timing, self.module.sync_check());
        let launches = self.graphs.mode.launches(timing, sync_check, None);
        let launched = Reach {
            emit: count,
            particles: alive + count,
        };
        if launches {
            self.fountain_frame_launches(basin, launched)?;
            return Ok(count);
        }
        let Buffers::Fountain(b) = &self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let stream = self.stream.clone();
        let arrays = fountain_arrays(b, &stream);
        let particles = arrays[0];
        let reach = reach_bucket(alive + count, capacity, self.graphs.reach_least);
        let key = FountainKey {
            reach,
            nodes: basin.0.n,
            substeps: basin.1,
            arrays,
        };
        let whole = Reach {
            emit: reach,
            particles: reach,
        };
        let mut cache = std::mem::replace(&mut self.graphs.fountain, GraphCache::new(1));
        let ran = cache.run(&stream, key, || self.fountain_frame_launches(basin, whole));
        self.graphs.fountain = cache;
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        match self.graphs.mode.ran(ran)? {
            Some((_, GraphRun::Captured)) => {}
            // The recording swapped the compaction's buffers; a replay swaps them as it did.
            Some((_, GraphRun::Replayed)) => b.swap_compacted(),
            None => {
                // Nothing was queued: the buffers as before the recording (it may have
                // swapped them), the frame launch by launch.
                if fountain_arrays(b, &stream)[0] != particles {
                    b.swap_compacted();
                }
                self.fountain_frame_launches(basin, launched)?;
            }
        }
        Ok(count)
    }

    /// The fountain's frame, stage by stage over `reach`, each stage's end marked.
    fn fountain_frame_launches(
        &mut self,
        basin: &FountainBasin,
        reach: Reach,
    ) -> Result<(), CudaError> {
        for (index, stage) in FountainStage::ALL.into_iter().enumerate() {
            self.fountain_launches(stage, basin, reach)?;
            self.end_stage(index)?;
        }
        Ok(())
    }

    /// Lowers the fewest particles a fountain graph's launches cover ([`REACH_LEAST`]) so a
    /// test's small fountain crosses several reaches (a test hook, not a setting).
    #[doc(hidden)]
    pub fn set_reach_least(&mut self, least: usize) {
        self.graphs.reach_least = least.max(1);
    }

    /// Graphs captured and replayed for the fountain's frames so far.
    pub fn fountain_graph_counts(&self) -> (u64, u64) {
        self.graphs.fountain.counts()
    }
}

/// The device pointer of every array a fountain frame's launches take (the particles first),
/// in a fixed order.
fn fountain_arrays(b: &FountainBuffers, s: &CudaStream) -> Vec<u64> {
    fn at<T>(array: &CudaSlice<T>, stream: &CudaStream) -> u64 {
        array.device_ptr(stream).0
    }
    vec![
        at(&b.position, s),
        at(&b.velocity, s),
        at(&b.age, s),
        at(&b.hits, s),
        at(&b.tag, s),
        at(&b.position_next, s),
        at(&b.velocity_next, s),
        at(&b.age_next, s),
        at(&b.hits_next, s),
        at(&b.tag_next, s),
        at(&b.flags, s),
        at(&b.counts, s),
        at(&b.tally, s),
        at(&b.drops, s),
        at(&b.keys, s),
        at(&b.keys_next, s),
        at(&b.order, s),
        at(&b.order_next, s),
        at(&b.hist, s),
        at(&b.height, s),
        at(&b.basin_velocity, s),
        at(&b.accel, s),
        at(&b.basin_flags, s),
        at(&b.inner, s),
        at(&b.outer, s),
        b.step.pointer(s),
        b.basin_step.pointer(s),
        b.emission.pointer(s),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reach_is_a_power_of_two_within_the_capacity() {
        assert_eq!(reach_bucket(0, 1 << 20, REACH_LEAST), REACH_LEAST);
        assert_eq!(reach_bucket(251, 320, REACH_LEAST), 320);
        assert_eq!(reach_bucket(4097, 1 << 20, REACH_LEAST), 8192);
        assert_eq!(reach_bucket(8192, 1 << 20, REACH_LEAST), 8192);
        assert_eq!(reach_bucket(600_000, 1 << 20, REACH_LEAST), 1 << 20);
        assert_eq!(reach_bucket(600_000, 700_000, REACH_LEAST), 700_000);
    }
}
