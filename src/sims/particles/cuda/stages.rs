//! The launches of each stage (docs/particles/cuda.md), in the order the CPU runs its
//! functions of the same names; `tests/emulation/particles.cpp` runs the same sequences with
//! the kernels compiled as C++. And the frame's end: the statistics reduced, one copy back.

use super::frame_graph::{FountainBasin, Reach};
use super::kernels::{
    blocks, nodes_box, reduce_fountain_threads, tiles, BodyStep, EmitStep, FountainStep, BLOCK,
    NODES_MAX_MASK, NODES_QUANTITIES, RADIX, SCAN_THREADS, SC_STATE,
};
use super::parity::{BodyStage, FountainStage};
use super::{cuda, Buffers, CudaParticles, FrameEnd, Totals};
use crate::cuda::launch::per_element;
use crate::cuda::{CudaError, Module};
use crate::sims::particles::NonFinite;
use cudarc::driver::{CudaStream, LaunchConfig};

impl CudaParticles {
    /// # Safety
    /// As [`Module::launch`]: `args` match `kernel`'s parameters in particles.cu and every
    /// array holds what the kernel indexes over `config`.
    pub(super) unsafe fn launch<'a>(
        module: &'a Module,
        stream: &'a CudaStream,
        kernel: &'static str,
        config: LaunchConfig,
        args: impl crate::cuda::launch::KernelArgs<'a>,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { module.launch(kernel, stream, config, args) }
    }

    /// Enqueues fountain `stage` on `n` particles (the count before it; `emit`: the first
    /// new one's index), its records uploaded first, as `tests/emulation/particles.cpp` runs
    /// it. `emitted`: particles emitted before this step; `count`: how many `emit` adds;
    /// `basin`: the basin's record, substeps and stencils. Returns the count after (an upper
    /// bound after `collide`, whose survivors the GPU counts).
    pub fn fountain_stage(
        &mut self,
        stage: FountainStage,
        p: &FountainStep,
        basin: &FountainBasin,
        (n, count, emitted): (usize, usize, u64),
    ) -> Result<usize, CudaError> {
        let capacity = self.capacity()?;
        let count = match stage {
            FountainStage::Emit => count.min(capacity - n.min(capacity)),
            _ => 0,
        };
        self.fountain_records(p, basin, &EmitStep::new(n, count, emitted))?;
        let reach = Reach {
            emit: count,
            particles: n + count,
        };
        self.fountain_launches(stage, basin, reach)?;
        Ok(n + count)
    }

    /// The fountain's particle capacity.
    pub(super) fn capacity(&self) -> Result<usize, CudaError> {
        match &self.buffers {
            Buffers::Fountain(b) => Ok(b.capacity),
            _ => Err(CudaError::Setting("not a fountain solver".into())),
        }
    }

    /// Queues the upload of a fountain frame's records (`p`, the basin's, `emission`: the
    /// kernels read them from device memory) where their bits changed, and of the splash
    /// stencils where they changed (a new allocation only for another size): before the
    /// frame's launches or graph, never inside a capture.
    pub(super) fn fountain_records(
        &mut self,
        p: &FountainStep,
        (step, _, inner, outer): &FountainBasin,
        emission: &EmitStep,
    ) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let s = &self.stream;
        if b.stencils.0 != *inner || b.stencils.1 != *outer {
            let alloc = cuda("allocating GPU memory");
            if b.inner.len() != inner.len().max(1) {
                b.inner = s.alloc_zeros(inner.len().max(1)).map_err(&alloc)?;
            }
            if b.outer.len() != outer.len().max(1) {
                b.outer = s.alloc_zeros(outer.len().max(1)).map_err(&alloc)?;
            }
            let copy = cuda("copying the splash stencils to the GPU");
            if !inner.is_empty() {
                s.memcpy_htod(inner, &mut b.inner).map_err(&copy)?;
            }
            if !outer.is_empty() {
                s.memcpy_htod(outer, &mut b.outer).map_err(&copy)?;
            }
            b.stencils = (inner.clone(), outer.clone());
        }
        b.step.set(s, std::slice::from_ref(p))?;
        b.basin_step.set(s, std::slice::from_ref(step))?;
        b.emission.set(s, std::slice::from_ref(emission))
    }

    /// Enqueues fountain `stage`'s launches over `reach` (at least the particles the records
    /// uploaded by [`Self::fountain_records`] say; the kernels read their counts on the GPU
    /// and return past them). `basin`'s node count and substeps decide the basin's launches.
    pub(super) fn fountain_launches(
        &mut self,
        stage: FountainStage,
        (step, substeps, _, _): &FountainBasin,
        reach: Reach,
    ) -> Result<(), CudaError> {
        let Buffers::Fountain(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a fountain solver".into()));
        };
        let (m, s) = (&self.module, &self.stream);
        let grid = |count: usize| per_element(count, BLOCK);
        let n = reach.particles;
        match stage {
            FountainStage::Emit => {
                let args = (
                    &b.step.at(0),
                    &b.emission.at(0),
                    &mut b.position,
                    &mut b.velocity,
                    &mut b.age,
                    &mut b.hits,
                    &mut b.tag,
                );
                // SAFETY: particles.cu's parameters; first + count ≤ capacity (the host's
                // emission, clamped), over at least count threads.
                unsafe { Self::launch(m, s, "emit", grid(reach.emit), args)? };
            }
            FountainStage::Advance => {
                let args = (
                    &b.step.at(0),
                    &b.emission.at(0),
                    &mut b.position,
                    &mut b.velocity,
                    &mut b.age,
                );
                // SAFETY: particles.cu's parameters; n ≤ capacity.
                unsafe { Self::launch(m, s, "advance", grid(n), args)? };
            }
            FountainStage::Collide => {
                let blocks32 = blocks(n) as u32;
                let args = (
                    &b.step.at(0),
                    &b.emission.at(0),
                    &mut b.position,
                    &mut b.velocity,
                    &b.age,
                    &mut b.hits,
                    &mut b.flags,
                    &mut b.counts,
                );
                // SAFETY: particles.cu's parameters; counts hold two per block of capacity.
                unsafe { Self::launch(m, s, "collide", grid(n), args)? };
                let args = (&blocks32, &mut b.counts, &mut b.tally);
                // SAFETY: one block of SCAN_THREADS, as the kernel assumes.
                unsafe {
                    Self::launch(
                        m,
                        s,
                        "collide_scan",
                        crate::cuda::launch::one_block(SCAN_THREADS),
                        args,
                    )?
                };
                let args = (
                    &b.step.at(0),
                    &b.emission.at(0),
                    &b.flags,
                    &b.counts,
                    &b.position,
                    &b.velocity,
                    &b.age,
                    &b.hits,
                    &b.tag,
                    &mut b.position_next,
                    &mut b.velocity_next,
                    &mut b.age_next,
                    &mut b.hits_next,
                    &mut b.tag_next,
                    &mut b.drops,
                );
                // SAFETY: particles.cu's parameters; survivors and landings ≤ n ≤ capacity.
                unsafe { Self::launch(m, s, "collide_compact", grid(n), args)? };
                b.swap_compacted();
            }
            FountainStage::Basin => {
                let nodes = (step.n * step.n) as usize;
                let args = (
                    &b.basin_step.at(0),
                    &b.tally,
                    &b.drops,
                    &b.inner,
                    &b.outer,
                    &b.basin_flags,
                    &mut b.basin_velocity,
                );
                // SAFETY: particles.cu's parameters; the stencils hold (2·reach + 1)² weights.
                unsafe { Self::launch(m, s, "basin_splash", grid(nodes), args)? };
                for _ in 0..*substeps {
                    let args = (&b.basin_step.at(0), &b.height, &mut b.accel);
                    // SAFETY: particles.cu's parameters; n² nodes.
                    unsafe { Self::launch(m, s, "basin_forces", grid(nodes), args)? };
                    let args = (
                        &b.basin_step.at(0),
                        &mut b.height,
                        &mut b.basin_velocity,
                        &b.accel,
                        &b.basin_flags,
                    );
                    // SAFETY: as basin_forces.
                    unsafe { Self::launch(m, s, "basin_integrate", grid(nodes), args)? };
                }
            }
            FountainStage::Sort => {
                let tiles32 = tiles(n) as u32;
                let args = (
                    &b.step.at(0),
                    &b.tally,
                    &b.position,
                    &mut b.keys,
                    &mut b.order,
                );
                // SAFETY: particles.cu's parameters; alive ≤ n.
                unsafe { Self::launch(m, s, "sort_keys", grid(n), args)? };
                let tile_grid = per_element(tiles(n), 1);
                let tile_grid = LaunchConfig {
                    block_dim: (BLOCK, 1, 1),
                    ..tile_grid
                };
                let entries = RADIX * tiles32;
                for shift in [0u32, 8, 16, 24] {
                    let args = (&b.tally, &shift, &tiles32, &b.keys, &mut b.hist);
                    // SAFETY: one block per tile; hist holds RADIX per tile of capacity.
                    unsafe { Self::launch(m, s, "sort_histogram", tile_grid, args)? };
                    let args = (&entries, &mut b.hist);
                    // SAFETY: one block of SCAN_THREADS.
                    unsafe {
                        Self::launch(
                            m,
                            s,
                            "sort_scan",
                            crate::cuda::launch::one_block(SCAN_THREADS),
                            args,
                        )?
                    };
                    let args = (
                        &b.tally,
                        &shift,
                        &tiles32,
                        &b.keys,
                        &b.order,
                        &b.hist,
                        &mut b.keys_next,
                        &mut b.order_next,
                    );
                    // SAFETY: as sort_histogram; the outputs hold capacity keys.
                    unsafe { Self::launch(m, s, "sort_scatter", tile_grid, args)? };
                    std::mem::swap(&mut b.keys, &mut b.keys_next);
                    std::mem::swap(&mut b.order, &mut b.order_next);
                }
            }
        }
        Ok(())
    }

    /// Enqueues body `stage` of a substep with `step` (`iterations`: XPBD's), its record
    /// uploaded first into the first slot (as one substep's frame).
    pub fn body_stage(
        &mut self,
        stage: BodyStage,
        step: &BodyStep,
        iterations: u32,
    ) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        b.steps.set(&self.stream, std::slice::from_ref(step))?;
        self.body_stage_at(stage, step, 0, iterations)
    }

    /// Enqueues body `stage` of substep `k`, whose record the kernels read from its slot on the
    /// GPU and which is `step` on the host (`iterations`: XPBD's). The host's record decides
    /// only which kernels run (the integrator, the volume term on, the wind on) and their
    /// grids (the cells); its values are the slot's.
    pub(super) fn body_stage_at(
        &mut self,
        stage: BodyStage,
        step: &BodyStep,
        k: usize,
        iterations: u32,
    ) -> Result<(), CudaError> {
        let Buffers::Body(b) = &mut self.buffers else {
            return Err(CudaError::Setting("not a body solver".into()));
        };
        let b = &mut **b;
        let (m, s) = (&self.module, &self.stream);
        let grid = per_element(b.nodes, BLOCK);
        // Substep k's record on the GPU, which the kernels read.
        let record = &b.steps.at(k);
        match stage {
            BodyStage::Springs => {
                let args = (
                    record,
                    &b.position,
                    &b.node_start,
                    &b.link_other,
                    &b.link_rest,
                    &b.link_stiffness,
                    &mut b.force,
                );
                // SAFETY: particles.cu's parameters; compressed rows of the body's links.
                unsafe { Self::launch(m, s, "springs", grid, args)? };
            }
            BodyStage::Volume => {
                // Forces under Verlet and Euler only (XPBD's are constraints, below); nothing
                // without cells (a cloth) or at K = 0, as `volume_forces`.
                if step.with_springs == 0 || !step.volume_on() {
                    return Ok(());
                }
                let cells = per_element(step.cells as usize, BLOCK);
                let args = (record, &b.position, &b.cell_rest, &mut b.cell_pressure);
                // SAFETY: particles.cu's parameters; one rest volume and pressure per cell.
                unsafe { Self::launch(m, s, "volume", cells, args)? };
                let args = (record, &b.position, &b.cell_pressure, &mut b.force);
                // SAFETY: the cells of the node's lattice, side³ nodes.
                unsafe { Self::launch(m, s, "volume_gather", grid, args)? };
            }
            BodyStage::Wind => {
                if !step.wind_on() {
                    return Ok(());
                }
                let args = (record, &b.triangles, &b.position, &b.velocity, &mut b.push);
                // SAFETY: particles.cu's parameters; three node indices per triangle.
                unsafe { Self::launch(m, s, "wind", per_element(b.triangles_count, BLOCK), args)? };
                let args = (
                    record,
                    &b.node_triangle_start,
                    &b.node_triangles,
                    &b.push,
                    &mut b.force,
                );
                // SAFETY: compressed rows of the nodes' triangles.
                unsafe { Self::launch(m, s, "wind_gather", grid, args)? };
            }
            BodyStage::Integrate => {
                let args = (
                    record,
                    &mut b.position,
                    &mut b.previous,
                    &mut b.velocity,
                    &b.force,
                    &b.pinned,
                );
                // SAFETY: particles.cu's parameters.
                unsafe { Self::launch(m, s, "integrate", grid, args)? };
            }
            BodyStage::Xpbd => {
                let args = (
                    record,
                    &b.position,
                    &mut b.previous,
                    &mut b.velocity,
                    &b.force,
                    &b.pinned,
                    &mut b.displacement,
                );
                // SAFETY: particles.cu's parameters.
                unsafe { Self::launch(m, s, "xpbd_predict", grid, args)? };
                s.memset_zeros(&mut b.lambda)
                    .map_err(cuda("zeroing XPBD's multipliers"))?;
                let volume = step.volume_on();
                if volume {
                    s.memset_zeros(&mut b.cell_lambda)
                        .map_err(cuda("zeroing XPBD's multipliers"))?;
                }
                for _ in 0..iterations {
                    for c in 0..b.colour_start.len().saturating_sub(1) {
                        let (first, count) =
                            (b.colour_start[c], b.colour_start[c + 1] - b.colour_start[c]);
                        let args = (
                            record,
                            &first,
                            &count,
                            &b.coloured,
                            &b.spring_a,
                            &b.spring_b,
                            &b.spring_rest,
                            &b.spring_stiffness,
                            &b.pinned,
                            &mut b.lambda,
                            &b.previous,
                            &mut b.displacement,
                        );
                        // SAFETY: particles.cu's parameters; first + count ≤ springs.
                        unsafe {
                            Self::launch(
                                m,
                                s,
                                "xpbd_solve",
                                per_element(count as usize, BLOCK),
                                args,
                            )?
                        };
                    }
                    if volume {
                        for colour in 0..8u32 {
                            let args = (
                                record,
                                &colour,
                                &b.cell_rest,
                                &b.pinned,
                                &mut b.cell_lambda,
                                &b.previous,
                                &mut b.displacement,
                            );
                            // SAFETY: particles.cu's parameters; one rest volume and λ a cell.
                            unsafe {
                                Self::launch(
                                    m,
                                    s,
                                    "xpbd_volume",
                                    per_element(step.cells as usize, BLOCK),
                                    args,
                                )?
                            };
                        }
                    }
                }
                let args = (
                    record,
                    &b.previous,
                    &b.displacement,
                    &mut b.velocity,
                    &mut b.position,
                );
                // SAFETY: particles.cu's parameters.
                unsafe { Self::launch(m, s, "xpbd_velocity", grid, args)? };
            }
            BodyStage::Collide => {
                let args = (
                    record,
                    &mut b.position,
                    &mut b.previous,
                    &mut b.velocity,
                    &b.pinned,
                );
                // SAFETY: particles.cu's parameters.
                unsafe { Self::launch(m, s, "collide_nodes", grid, args)? };
            }
        }
        Ok(())
    }

    /// Starts a frame's stage events.
    pub fn begin_frame(&mut self) -> Result<(), CudaError> {
        self.context
            .bind_to_thread()
            .map_err(cuda("binding the CUDA context"))?;
        if self.stage_timing {
            self.timer.begin(&self.stream)?;
        }
        Ok(())
    }

    /// Marks the end of stage `index` (in the kind's stage order).
    pub fn end_stage(&mut self, index: usize) -> Result<(), CudaError> {
        if self.stage_timing {
            self.timer.end(&self.stream, index)?;
        }
        Ok(())
    }

    /// Ends the frame: the statistics reduced, the counts and statistics copied back (the
    /// frame's one synchronisation), the totals and stage times updated: the fountain's
    /// `reduce_fountain` (its basin's non-finite nodes and largest |height|, its non-finite
    /// particles alive) or a body's `reduce_nodes` (its non-finite nodes).
    pub fn end_frame(&mut self, end: FrameEnd<'_>) -> Result<(), CudaError> {
        let (m, s) = (&self.module, &self.stream);
        let mut tally = [0u32; 2];
        let mut stats = [0.0f64; NODES_QUANTITIES as usize];
        let mut contacts = None;
        let synchronised = self.module.sync_check();
        let failed =
            crate::cuda::launch::waited("a CUDA kernel of the particles step failed", synchronised);
        let finish = |quantities: u32| LaunchConfig {
            grid_dim: (quantities, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let fountain = match (&mut self.buffers, end) {
            (Buffers::Fountain(b), FrameEnd::Fountain { basin, particles }) => {
                // ≤ reduce_fountain_threads(nodes, capacity), for which the partials are sized.
                let threads = reduce_fountain_threads((basin.n * basin.n) as usize, particles);
                let blocks32 = blocks(threads) as u32;
                let args = (
                    basin,
                    &b.tally,
                    &b.height,
                    &b.position,
                    &b.velocity,
                    &mut b.partials,
                );
                // SAFETY: particles.cu's parameters; partials hold three per block.
                unsafe {
                    Self::launch(m, s, "reduce_fountain", per_element(threads, BLOCK), args)?
                };
                let args = (&b.partials, &blocks32, &3u32, &2u32, &mut b.stats, &0u32);
                // SAFETY: one block per quantity (three).
                unsafe { Self::launch(m, s, "reduce_finish", finish(3), args)? };
                s.memcpy_dtoh(&b.tally, &mut tally).map_err(failed)?;
                // Copies as many as the host slice holds: the fountain's three or four.
                let fountain_stats = &mut stats[..b.stats.len()];
                s.memcpy_dtoh(&b.stats, fountain_stats).map_err(failed)?;
                true
            }
            (Buffers::Body(b), FrameEnd::Body) => {
                let blocks32 = blocks(b.nodes) as u32;
                let nodes = b.nodes as u32;
                let args = (&nodes, &b.position, &mut b.partials);
                // SAFETY: particles.cu's parameters; partials hold NODES_QUANTITIES per block.
                unsafe { Self::launch(m, s, "reduce_nodes", per_element(b.nodes, BLOCK), args)? };
                let q = NODES_QUANTITIES;
                let args = (
                    &b.partials,
                    &blocks32,
                    &q,
                    &NODES_MAX_MASK,
                    &mut b.stats,
                    &0u32,
                );
                // SAFETY: one block per quantity; stats holds NODES_QUANTITIES.
                unsafe { Self::launch(m, s, "reduce_finish", finish(q), args)? };
                s.memcpy_dtoh(&b.stats, &mut stats).map_err(failed)?;
                if let Some(c) = &b.contacts {
                    let mut state = [0u32; SC_STATE];
                    s.memcpy_dtoh(&c.state, &mut state).map_err(failed)?;
                    contacts = Some(state);
                }
                tally[0] = b.nodes as u32;
                false
            }
            _ => {
                return Err(CudaError::Setting(
                    "end_frame with another solver's record".into(),
                ))
            }
        };
        s.synchronize().map_err(failed)?;
        // The fountain's stats: non-finite nodes, largest |height|, non-finite particles; a
        // body's: its non-finite nodes and the box around the others.
        self.totals = Totals {
            count: tally[0] as usize,
            landed: tally[1] as usize,
            non_finite: NonFinite {
                nodes: stats[0] as u64,
                particles: if fountain { stats[2] as u64 } else { 0 },
            },
            figure: if fountain { stats[1] } else { 0.0 },
            bounds: if fountain {
                None
            } else {
                nodes_box(&stats[1..])
            },
            self_collide: self.contacts_end(contacts)?,
        };
        if self.stage_timing {
            let seconds = &mut self.stage_seconds;
            self.timer.collect(|stage, time| seconds[stage] += time)?;
        }
        Ok(())
    }
}
