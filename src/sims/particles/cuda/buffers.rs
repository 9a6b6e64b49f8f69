//! The particles kind's CUDA buffers: a fountain's (particles, basin, the frame's partials)
//! or a body's (nodes, springs, the skin's layout), and the [`Room`] a fountain's hold.

use super::cuda;
use super::kernels::{self, blocks, tiles, RADIX};
use crate::cuda::{CudaError, Records};
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::render::Skin;
use crate::sims::pool::surface::Surface;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// A fountain's buffers: its particles (twice, for the compaction), the radix sort's keys and
/// order, the basin's nodes, the frame's partials.
pub(super) struct FountainBuffers {
    pub(super) capacity: usize,
    pub(super) position: CudaSlice<f32>,
    pub(super) velocity: CudaSlice<f32>,
    pub(super) age: CudaSlice<f32>,
    pub(super) hits: CudaSlice<u8>,
    pub(super) tag: CudaSlice<u32>,
    pub(super) position_next: CudaSlice<f32>,
    pub(super) velocity_next: CudaSlice<f32>,
    pub(super) age_next: CudaSlice<f32>,
    pub(super) hits_next: CudaSlice<u8>,
    pub(super) tag_next: CudaSlice<u32>,
    pub(super) flags: CudaSlice<u32>,
    pub(super) counts: CudaSlice<u32>,
    /// Particles alive, landings of the last collide.
    pub(super) tally: CudaSlice<u32>,
    pub(super) drops: CudaSlice<f32>,
    pub(super) keys: CudaSlice<u32>,
    pub(super) keys_next: CudaSlice<u32>,
    pub(super) order: CudaSlice<u32>,
    pub(super) order_next: CudaSlice<u32>,
    pub(super) hist: CudaSlice<u32>,
    pub(super) height: CudaSlice<f32>,
    pub(super) basin_velocity: CudaSlice<f32>,
    pub(super) accel: CudaSlice<f32>,
    pub(super) basin_flags: CudaSlice<u8>,
    pub(super) inner: CudaSlice<f32>,
    pub(super) outer: CudaSlice<f32>,
    /// The stencils last uploaded (an upload from pageable memory waits for the stream, so
    /// it happens only when they change).
    pub(super) stencils: (Vec<f32>, Vec<f32>),
    pub(super) partials: CudaSlice<f64>,
    pub(super) stats: CudaSlice<f64>,
}

/// What a fountain solver's buffers hold: particles (its capacity) and basin nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// Particles.
    pub particles: usize,
    /// Basin nodes (n²).
    pub nodes: usize,
}

impl Room {
    /// The room a new solver makes for fountain `f`: `max_particles` (or more, if more live),
    /// its basin's nodes.
    pub fn of(f: &Fountain) -> Room {
        Room {
            particles: f.params.max_particles.max(f.len()).max(1),
            nodes: f.surface.n * f.surface.n,
        }
    }

    /// The room for `f` after a live edit (`sim_edit.rs`): this one, unless the basin has
    /// another node count (nodes per side edited: the basin's buffers are made again at its
    /// size) or more particles may live than there is room for (max particles raised: the
    /// particles' buffers are made again, larger). Never smaller for the particles: lowering
    /// max particles only stops the emission.
    pub fn fitting(self, f: &Fountain) -> Room {
        let needed = Room::of(f);
        Room {
            particles: self.particles.max(needed.particles),
            nodes: needed.nodes,
        }
    }
}

impl FountainBuffers {
    /// Zeroed buffers for `room` (the stencils are uploaded by the first `basin`).
    pub(super) fn new(s: &Arc<CudaStream>, room: Room) -> Result<FountainBuffers, CudaError> {
        let alloc = cuda("allocating GPU memory");
        let capacity = room.particles;
        let hist = RADIX as usize * tiles(capacity);
        let (height, basin_velocity, accel, basin_flags, partials) = Self::basin(s, room)?;
        Ok(FountainBuffers {
            capacity,
            position: s.alloc_zeros(3 * capacity).map_err(&alloc)?,
            velocity: s.alloc_zeros(3 * capacity).map_err(&alloc)?,
            age: s.alloc_zeros(capacity).map_err(&alloc)?,
            hits: s.alloc_zeros(capacity).map_err(&alloc)?,
            tag: s.alloc_zeros(capacity).map_err(&alloc)?,
            position_next: s.alloc_zeros(3 * capacity).map_err(&alloc)?,
            velocity_next: s.alloc_zeros(3 * capacity).map_err(&alloc)?,
            age_next: s.alloc_zeros(capacity).map_err(&alloc)?,
            hits_next: s.alloc_zeros(capacity).map_err(&alloc)?,
            tag_next: s.alloc_zeros(capacity).map_err(&alloc)?,
            flags: s.alloc_zeros(capacity).map_err(&alloc)?,
            counts: s.alloc_zeros(2 * blocks(capacity)).map_err(&alloc)?,
            tally: s.alloc_zeros(2).map_err(&alloc)?,
            drops: s.alloc_zeros(3 * capacity).map_err(&alloc)?,
            keys: s.alloc_zeros(capacity).map_err(&alloc)?,
            keys_next: s.alloc_zeros(capacity).map_err(&alloc)?,
            order: s.alloc_zeros(capacity).map_err(&alloc)?,
            order_next: s.alloc_zeros(capacity).map_err(&alloc)?,
            hist: s.alloc_zeros(hist).map_err(&alloc)?,
            height,
            basin_velocity,
            accel,
            basin_flags,
            inner: s.alloc_zeros(1).map_err(&alloc)?,
            outer: s.alloc_zeros(1).map_err(&alloc)?,
            stencils: (Vec::new(), Vec::new()),
            partials,
            stats: s.alloc_zeros(4).map_err(&alloc)?,
        })
    }

    /// The basin's buffers for `room` (heights, velocities, accelerations, flags) and the
    /// frame's partials (three per block of `reduce_fountain`'s most threads).
    #[allow(clippy::type_complexity)]
    pub(super) fn basin(
        s: &Arc<CudaStream>,
        room: Room,
    ) -> Result<
        (
            CudaSlice<f32>,
            CudaSlice<f32>,
            CudaSlice<f32>,
            CudaSlice<u8>,
            CudaSlice<f64>,
        ),
        CudaError,
    > {
        let alloc = cuda("allocating GPU memory");
        let threads = kernels::reduce_fountain_threads(room.nodes, room.particles);
        Ok((
            s.alloc_zeros(room.nodes).map_err(&alloc)?,
            s.alloc_zeros(room.nodes).map_err(&alloc)?,
            s.alloc_zeros(room.nodes).map_err(&alloc)?,
            s.alloc_zeros(room.nodes).map_err(&alloc)?,
            s.alloc_zeros(3 * blocks(threads)).map_err(&alloc)?,
        ))
    }

    pub(super) fn room(&self) -> Room {
        Room {
            particles: self.capacity,
            nodes: self.height.len(),
        }
    }

    /// Makes the buffers `room`'s: all of them again for another capacity, the basin's and
    /// the partials for another node count (the contents are the next upload's).
    pub(super) fn refit(&mut self, s: &Arc<CudaStream>, room: Room) -> Result<(), CudaError> {
        if room.particles != self.capacity {
            *self = FountainBuffers::new(s, room)?;
        } else if room.nodes != self.height.len() {
            (
                self.height,
                self.basin_velocity,
                self.accel,
                self.basin_flags,
                self.partials,
            ) = Self::basin(s, room)?;
        }
        Ok(())
    }
}

/// A body's buffers: its nodes, springs (by node, and coloured for XPBD), triangles.
pub(super) struct BodyBuffers {
    pub(super) position: CudaSlice<f32>,
    pub(super) previous: CudaSlice<f32>,
    pub(super) velocity: CudaSlice<f32>,
    pub(super) force: CudaSlice<f32>,
    pub(super) pinned: CudaSlice<u8>,
    pub(super) node_start: CudaSlice<u32>,
    pub(super) link_other: CudaSlice<u32>,
    pub(super) link_rest: CudaSlice<f32>,
    pub(super) link_stiffness: CudaSlice<f32>,
    pub(super) triangles: CudaSlice<u32>,
    pub(super) node_triangle_start: CudaSlice<u32>,
    pub(super) node_triangles: CudaSlice<u32>,
    pub(super) push: CudaSlice<f32>,
    pub(super) coloured: CudaSlice<u32>,
    pub(super) spring_a: CudaSlice<u32>,
    pub(super) spring_b: CudaSlice<u32>,
    pub(super) spring_rest: CudaSlice<f32>,
    pub(super) spring_stiffness: CudaSlice<f32>,
    pub(super) lambda: CudaSlice<f32>,
    /// XPBD's displacements over a substep, three per node.
    pub(super) displacement: CudaSlice<f32>,
    /// The jelly's cells (`volume.rs`): rest volumes (made with the solver: the rest shape's),
    /// the `volume` stage's pressures and XPBD's multipliers, one per cell (one for a cloth).
    pub(super) cell_rest: CudaSlice<f32>,
    pub(super) cell_pressure: CudaSlice<f32>,
    pub(super) cell_lambda: CudaSlice<f32>,
    /// Seven per block: `reduce_nodes`' seven (`NODES_QUANTITIES`), `body_stats`' four.
    pub(super) partials: CudaSlice<f64>,
    pub(super) stats: CudaSlice<f64>,
    /// `body_stats`' figures (`stats.rs`).
    pub(super) figures: CudaSlice<f64>,
    pub(super) colour_start: Vec<u32>,
    pub(super) nodes: usize,
    pub(super) triangles_count: usize,
    pub(super) spring_count: usize,
    /// The renderer's skin layout, uploaded at the first [`CudaParticles::write_body_gl`]
    /// (again when it changes).
    pub(super) skin: Option<SkinBuffers>,
    /// `self_collide`'s lists and scratch, made at its first substep.
    pub(super) contacts: Option<ContactBuffers>,
    /// Each substep's `BodyStep` and `SelfStep` (the kernels read their substep's).
    pub(super) steps: Records<kernels::BodyStep>,
    pub(super) self_steps: Records<kernels::SelfStep>,
}

/// `self_collide`'s buffers on the GPU (particles_self_collide.cuh; the CPU's `Contacts`).
pub(super) struct ContactBuffers {
    /// Each node's bucket.
    pub(super) bucket: CudaSlice<u32>,
    /// Buckets + 1: where each bucket's nodes start in `nodes`.
    pub(super) start: CudaSlice<u32>,
    /// Each bucket's nodes placed so far (the scatter's).
    pub(super) fill: CudaSlice<u32>,
    /// Node indices by bucket.
    pub(super) nodes: CudaSlice<u32>,
    /// Nodes + 1: where each node's candidates start.
    pub(super) first: CudaSlice<u32>,
    /// The candidates, room for `capacity`.
    pub(super) candidates: CudaSlice<u32>,
    pub(super) capacity: usize,
    /// Each node's position at the last build, three floats a node.
    pub(super) anchor: CudaSlice<f32>,
    /// Each node's contacts this substep.
    pub(super) touching: CudaSlice<u32>,
    /// The gather's positions and velocities.
    pub(super) moved: CudaSlice<f32>,
    pub(super) changed: CudaSlice<f32>,
    /// `SC_STATE` slots (kernels.rs `SC_*`).
    pub(super) state: CudaSlice<u32>,
    /// The drift check's partials: three a block of `self_collide_drift`, then one a block of
    /// `self_collide_widest`.
    pub(super) partials: CudaSlice<f64>,
    /// The drift's sums over the nodes (x, y, z; `reduce_finish`'s).
    pub(super) sums: CudaSlice<f64>,
    /// The build's scans' chunk sums (`SCAN_THREADS` values a chunk; one more for the total).
    pub(super) chunk_sums: CudaSlice<u32>,
    /// The thickness of the last build; `None`: the next substep rebuilds (the first, or the
    /// host's state uploaded, or the room grown).
    pub(super) built_for: Option<f32>,
}

impl ContactBuffers {
    /// Zeroed buffers for `nodes` nodes and `capacity` candidates.
    pub(super) fn new(
        s: &Arc<CudaStream>,
        nodes: usize,
        capacity: usize,
    ) -> Result<ContactBuffers, CudaError> {
        let alloc = cuda("allocating GPU memory for self_collide");
        let n = nodes.max(1);
        let buckets = crate::sims::particles::self_collide::buckets(n) as usize;
        Ok(ContactBuffers {
            bucket: s.alloc_zeros(n).map_err(&alloc)?,
            start: s.alloc_zeros(buckets + 1).map_err(&alloc)?,
            fill: s.alloc_zeros(buckets).map_err(&alloc)?,
            nodes: s.alloc_zeros(n).map_err(&alloc)?,
            first: s.alloc_zeros(n + 1).map_err(&alloc)?,
            candidates: s.alloc_zeros(capacity.max(1)).map_err(&alloc)?,
            capacity,
            anchor: s.alloc_zeros(3 * n).map_err(&alloc)?,
            touching: s.alloc_zeros(n).map_err(&alloc)?,
            moved: s.alloc_zeros(3 * n).map_err(&alloc)?,
            changed: s.alloc_zeros(3 * n).map_err(&alloc)?,
            state: s.alloc_zeros(kernels::SC_STATE).map_err(&alloc)?,
            partials: s.alloc_zeros(3 * blocks(n)).map_err(&alloc)?,
            sums: s.alloc_zeros(3).map_err(&alloc)?,
            chunk_sums: s
                .alloc_zeros((buckets + 1).div_ceil(kernels::SCAN_THREADS as usize) + 1)
                .map_err(&alloc)?,
            built_for: None,
        })
    }
}

/// A skin's layout on the GPU (render/surface.rs `Skin`), and the layout it came from.
pub(super) struct SkinBuffers {
    pub(super) layout: Skin,
    pub(super) node: CudaSlice<u32>,
    pub(super) uv: CudaSlice<f32>,
    pub(super) indices: CudaSlice<u32>,
    pub(super) vertex_start: CudaSlice<u32>,
    pub(super) vertex_triangles: CudaSlice<u32>,
}

pub(super) enum Buffers {
    Fountain(Box<FountainBuffers>),
    Body(Box<BodyBuffers>),
}

/// A download's basin must be the GPU's size (a live edit resizes the host's first, then the
/// GPU's at the next upload; the host's is pulled before the edit).
pub(super) fn basin_fits(b: &FountainBuffers, surface: &Surface) -> Result<(), CudaError> {
    if surface.height.len() == b.height.len() {
        return Ok(());
    }
    Err(CudaError::Setting(format!(
        "a {}-node basin read back into {} nodes",
        b.height.len(),
        surface.height.len()
    )))
}
