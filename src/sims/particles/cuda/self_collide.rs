//! `self_collide` on the GPU (kernels/particles_self_collide.cuh; the CPU's
//! `sims/particles/self_collide.rs`): the launch sequence of a substep, the contact lists'
//! room, and what the frame's end reads of them. The rebuild is decided on the GPU (the drift
//! kernel's flag, which the build kernels read); the host only forces one where it knows the
//! lists stale (the first substep, another thickness, its state uploaded, the room grown).
//! `tests/emulation/particles.cpp` (stage `SELF_COLLIDE`) runs the same sequence.

use super::buffers::{Buffers, ContactBuffers};
use super::kernels::{blocks, SelfStep, BLOCK, SCAN_THREADS, SC_LARGEST, SC_STATE};
use super::{cuda, CudaParticles};
use crate::cuda::launch::{one_block, per_element, read_back};
use crate::cuda::{CudaError, Module};
use crate::sims::particles::self_collide::buckets;
use cudarc::driver::LaunchConfig;
use cudarc::driver::{CudaSlice, CudaStream};

/// Candidates a node has room for at first (a folded cloth at h = the spacing has ~10–20;
/// past the room the lists overflow and grow at the frame's end).
pub const ROOM_PER_NODE: usize = 32;

/// The build's exclusive scan of `data[0..values)` (the output at the last is the total,
/// whatever the slot held; callers zero it so that nothing uninitialised is read),
/// grid-wide in chunks of `SCAN_THREADS`: each chunk's sum, the sums scanned in one block
/// (`chunk_sums` holds one per chunk and one more), each chunk scanned and offset.
///
/// # Safety
/// `data` holds `values` values, `chunk_sums` at least values / SCAN_THREADS + 2.
unsafe fn scan_chunks(
    m: &Module,
    s: &CudaStream,
    state: &CudaSlice<u32>,
    data: &mut CudaSlice<u32>,
    values: u32,
    chunk_sums: &mut CudaSlice<u32>,
) -> Result<(), CudaError> {
    let chunks = values.div_ceil(SCAN_THREADS);
    let grid = per_element(values as usize, SCAN_THREADS);
    let args = (state, &values, &*data, &mut *chunk_sums);
    // SAFETY: the caller's sizes; one sum a chunk.
    unsafe { CudaParticles::launch(m, s, "self_collide_chunk_sums", grid, args)? };
    let args = (state, &chunks, &mut *chunk_sums);
    // SAFETY: one block; chunk_sums holds chunks + 1.
    unsafe { CudaParticles::launch(m, s, "self_collide_scan", one_block(SCAN_THREADS), args)? };
    let args = (state, &values, data, &*chunk_sums);
    // SAFETY: the caller's sizes.
    unsafe { CudaParticles::launch(m, s, "self_collide_chunk_scan", grid, args) }
}

impl CudaParticles {
    /// Makes the contact lists (room for [`ROOM_PER_NODE`] candidates a node) where there are
    /// none yet: before a frame, outside any graph's capture (an allocation is not captured).
    pub(super) fn contacts_made(&mut self) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        if b.contacts.is_none() && b.nodes > 0 {
            let n = b.nodes;
            b.contacts = Some(ContactBuffers::new(&self.stream, n, ROOM_PER_NODE * n)?);
        }
        Ok(())
    }

    /// Enqueues `self_collide` of one substep of `dt`: thickness `h`, `friction` (the world's),
    /// its record uploaded first into the first slot (as one substep's frame).
    pub fn self_collide(&mut self, (h, friction, dt): (f32, f32, f32)) -> Result<(), CudaError> {
        self.contacts_made()?;
        let Some(step) = self.self_steps(&[(h, friction, dt)])?.pop() else {
            return Ok(());
        };
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        b.self_steps.set(&self.stream, &[step])?;
        self.self_collide_at(0)
    }

    /// The `SelfStep`s of substeps of (thickness, friction, dt), in order (none without nodes):
    /// the first forces a build where the lists are not this thickness's (the first substep,
    /// another thickness, the host's state uploaded, the room grown), and the lists are this
    /// thickness's from then on.
    pub(super) fn self_steps(
        &mut self,
        substeps: &[(f32, f32, f32)],
    ) -> Result<Vec<SelfStep>, CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let n = b.nodes;
        if n == 0 {
            return Ok(Vec::new());
        }
        let Some(c) = b.contacts.as_mut() else {
            return Err(CudaError::Setting(
                "self_collide before its contact lists were made".into(),
            ));
        };
        let mut steps = Vec::with_capacity(substeps.len());
        for &(h, friction, dt) in substeps {
            let force = c.built_for != Some(h);
            c.built_for = Some(h);
            steps.push(SelfStep::new(n, (h, friction, dt), c.capacity, force));
        }
        Ok(steps)
    }

    /// Enqueues `self_collide` of substep `k`, whose record (`SelfStep`) the kernels read from
    /// its slot on the GPU.
    pub(super) fn self_collide_at(&mut self, k: usize) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let b = &mut **b;
        let (m, s) = (&self.module, &self.stream);
        let n = b.nodes;
        if n == 0 {
            return Ok(());
        }
        let Some(c) = b.contacts.as_mut() else {
            return Err(CudaError::Setting(
                "self_collide before its contact lists were made".into(),
            ));
        };
        // Substep k's record on the GPU, which the kernels read.
        let step = &b.self_steps.at(k);
        let grid = per_element(n, BLOCK);
        let (n32, buckets) = (n as u32, buckets(n));
        // The rebuild decision: the drift's partial sums a block, their sums over the blocks
        // (reduce_finish: one block per axis), each block's widest drift from the mean, the
        // widest over the blocks and the flag (one block), the counts zeroed if it is set.
        let args = (step, &b.position, &c.anchor, &mut c.partials);
        // SAFETY: particles.cu's parameters; partials hold three per block.
        unsafe { Self::launch(m, s, "self_collide_drift", grid, args)? };
        let sums = LaunchConfig {
            grid_dim: (3, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let blocks32 = blocks(n) as u32;
        let args = (&c.partials, &blocks32, &3u32, &0u32, &mut c.sums, &0u32);
        // SAFETY: one block per axis; sums holds three.
        unsafe { Self::launch(m, s, "reduce_finish", sums, args)? };
        let args = (step, &b.position, &c.anchor, &c.sums, &mut c.partials);
        // SAFETY: one partial per block.
        unsafe { Self::launch(m, s, "self_collide_widest", grid, args)? };
        let args = (step, &c.sums, &c.partials, &mut c.state);
        // SAFETY: one block; the partials of as many blocks as `grid`.
        unsafe { Self::launch(m, s, "self_collide_decide", one_block(BLOCK), args)? };
        let args = (step, &c.state, &mut c.start, &mut c.fill);
        // SAFETY: start holds buckets + 1, fill buckets.
        unsafe {
            Self::launch(
                m,
                s,
                "self_collide_clear",
                per_element(buckets as usize + 1, BLOCK),
                args,
            )?
        };
        let args = (
            step,
            &c.state,
            &b.position,
            &mut c.bucket,
            &mut c.start,
            &mut c.anchor,
        );
        // SAFETY: one bucket and anchor per node.
        unsafe { Self::launch(m, s, "self_collide_cells", grid, args)? };
        // SAFETY: start holds buckets + 1 (the last zeroed by self_collide_clear).
        unsafe { scan_chunks(m, s, &c.state, &mut c.start, buckets + 1, &mut c.chunk_sums)? };
        let args = (
            step,
            &c.state,
            &c.bucket,
            &c.start,
            &mut c.fill,
            &mut c.nodes,
        );
        // SAFETY: the buckets' counts sum to the nodes.
        unsafe { Self::launch(m, s, "self_collide_scatter", grid, args)? };
        let args = (step, &c.state, &c.start, &mut c.nodes);
        // SAFETY: one thread per bucket.
        unsafe {
            Self::launch(
                m,
                s,
                "self_collide_order",
                per_element(buckets as usize, BLOCK),
                args,
            )?
        };
        let args = (
            step,
            &c.state,
            &b.position,
            &b.node_start,
            &b.link_other,
            &c.start,
            &c.nodes,
            &mut c.first,
        );
        // SAFETY: first holds nodes + 1.
        unsafe { Self::launch(m, s, "self_collide_count", grid, args)? };
        // SAFETY: first holds nodes + 1 (the last zeroed by self_collide_count).
        unsafe { scan_chunks(m, s, &c.state, &mut c.first, n32 + 1, &mut c.chunk_sums)? };
        let args = (
            step,
            &mut c.state,
            &b.position,
            &b.node_start,
            &b.link_other,
            &c.start,
            &c.nodes,
            &c.first,
            &mut c.candidates,
        );
        // SAFETY: the kernel writes no list unless all fit in capacity.
        unsafe { Self::launch(m, s, "self_collide_lists", grid, args)? };
        let args = (
            step,
            &c.state,
            &b.position,
            &b.node_start,
            &b.link_other,
            &c.start,
            &c.nodes,
            &c.first,
            &c.candidates,
            &mut c.touching,
        );
        // SAFETY: particles.cu's parameters; the lists read only when they fit (else the cells).
        unsafe { Self::launch(m, s, "self_collide_touching", grid, args)? };
        let args = (
            step,
            &c.state,
            &b.position,
            &b.previous,
            &b.velocity,
            &b.pinned,
            &b.node_start,
            &b.link_other,
            &c.start,
            &c.nodes,
            &c.first,
            &c.candidates,
            &c.touching,
            &mut c.moved,
            &mut c.changed,
        );
        // SAFETY: as self_collide_touching; three floats a node out.
        unsafe { Self::launch(m, s, "self_collide_gather", grid, args)? };
        let args = (
            step,
            &c.moved,
            &c.changed,
            &mut b.position,
            &mut b.previous,
            &mut b.velocity,
        );
        // SAFETY: particles.cu's parameters.
        unsafe { Self::launch(m, s, "self_collide_apply", grid, args)? };
        Ok(())
    }

    /// The frame's end for `self_collide`: its state as the frame's one synchronisation read
    /// it back (`SC_*`: builds, the last build's candidates; `None`: no lists yet), returned;
    /// where lists overflowed in the frame (`SC_LARGEST`: also where a later build fitted; the
    /// substeps from such a build on found their contacts by walking the sorted cells, rebuilt
    /// every substep: the same contacts, slower) the room is grown to half as much again as
    /// the largest need, the next substep rebuilds, the note says so, and the word is zeroed
    /// for the next frame.
    pub(super) fn contacts_end(
        &mut self,
        state: Option<[u32; SC_STATE]>,
    ) -> Result<Option<[u32; SC_STATE]>, CudaError> {
        let (Buffers::Body(b), Some(state)) = (&mut self.buffers, state) else {
            return Ok(None);
        };
        let Some(c) = &mut b.contacts else {
            return Ok(None);
        };
        let s = &self.stream;
        let needed = state[SC_LARGEST] as usize;
        if needed > 0 {
            let room = needed + needed / 2;
            self.overflow_note = Some(format!(
                "self_collide: the contact lists needed {needed} candidates, room for {}: \
                 this frame's substeps since that build walked the cells instead (the same \
                 contacts, slower); room grown to {room}",
                c.capacity
            ));
            c.candidates = s
                .alloc_zeros(room)
                .map_err(cuda("allocating GPU memory for self_collide"))?;
            s.memset_zeros(&mut c.state.slice_mut(SC_LARGEST..SC_LARGEST + 1))
                .map_err(cuda("zeroing self_collide's overflow word"))?;
            c.capacity = room;
            c.built_for = None;
        }
        Ok(Some(state))
    }

    /// `self_collide`'s lists as the last build left them: each node's first candidate (nodes
    /// + 1) and the candidates (none before the first substep, or while they overflow).
    pub fn download_contacts(&self) -> Result<(Vec<u32>, Vec<u32>), CudaError> {
        let Buffers::Body(b) = &self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let Some(c) = &b.contacts else {
            return Ok((Vec::new(), Vec::new()));
        };
        let s = &self.stream;
        let copy = cuda("copying self_collide's lists from the GPU");
        let mut first = vec![0u32; b.nodes + 1];
        read_back(s, &c.first, &mut first, &copy)?;
        let total = (first[b.nodes] as usize).min(c.capacity);
        let mut candidates = vec![0u32; total];
        if total > 0 {
            s.memcpy_dtoh(&c.candidates.slice(..total), &mut candidates)
                .map_err(&copy)?;
            s.synchronize().map_err(&copy)?;
        }
        Ok((first, candidates))
    }

    /// Sets the lists' room to `candidates` (the doctor's overflow check; the room otherwise
    /// starts at [`ROOM_PER_NODE`] a node and only grows); the next substep rebuilds.
    pub fn set_contact_room(&mut self, candidates: usize) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let s = &self.stream;
        match &mut b.contacts {
            None => b.contacts = Some(ContactBuffers::new(s, b.nodes, candidates)?),
            Some(c) => {
                c.candidates = s
                    .alloc_zeros(candidates.max(1))
                    .map_err(cuda("allocating GPU memory for self_collide"))?;
                c.capacity = candidates;
                c.built_for = None;
            }
        }
        Ok(())
    }

    /// `self_collide`'s lists rebuilt at the next substep (the host's state uploaded).
    pub(super) fn contacts_stale(&mut self) {
        if let Buffers::Body(b) = &mut self.buffers {
            if let Some(c) = &mut b.contacts {
                c.built_for = None;
            }
        }
    }
}
