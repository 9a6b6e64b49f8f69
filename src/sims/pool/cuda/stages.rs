//! The launches of each stage of a pool frame (docs/pool-cuda.md), in the order the CPU
//! solver runs its functions of the same names, and the statistics' reductions.
//! `tests/emulation/pool.cpp` runs the same sequences with the kernels compiled as C++.

use super::kernels::{PoolDrop, PoolGrid, State};
use super::{slot, CudaPool, GpuStencil};
use crate::cuda::CudaError;
use crate::sims::pool::cpu::StepConstants;
use crate::sims::pool::drops::{Drop, Stencil, Target};
use crate::sims::pool::params::PoolParams;
use crate::sims::pool::surface::OPEN;
use crate::sims::pool::PoolStage;

/// Stencils kept on the GPU (drops.rs keeps as many).
const STENCILS: usize = 16;

impl CudaPool {
    /// Enqueues `stage` with the substep's constants `k` (`drops`: the frame's, for
    /// `disturb`), and its end event when a frame is being timed. The parity checks run stages
    /// one at a time through this.
    pub fn run_stage(
        &mut self,
        stage: PoolStage,
        k: &StepConstants,
        drops: &[Drop],
    ) -> Result<(), CudaError> {
        let g = PoolGrid::new(k);
        match stage {
            PoolStage::Disturb => {
                for drop in drops {
                    self.disturb(drop)?;
                }
            }
            PoolStage::Forces => {
                let (kernels, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
                kernels.forces(s, &g, &b.height, &b.offset, &mut b.accel, &mut b.accel_h)?
            }
            PoolStage::Integrate => {
                let (kernels, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
                kernels.integrate(
                    s,
                    &g,
                    &b.flags,
                    (&b.accel, &b.accel_h),
                    (&mut b.height, &mut b.velocity),
                    (&mut b.offset, &mut b.velocity_h),
                )?
            }
            PoolStage::Edges => {
                // Only open edges carry the OPEN flag (surface.rs): nothing to do otherwise.
                if self.flags[0] & OPEN != 0 || self.flags[self.n / 2] & OPEN != 0 {
                    let (kernels, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
                    kernels.edges(s, &g, &b.flags, (&b.height, &b.velocity), &mut b.next)?;
                    kernels.edges_apply(
                        s,
                        &g,
                        &b.flags,
                        &b.next,
                        (&mut b.height, &mut b.velocity),
                    )?;
                }
            }
        }
        if self.frame_open && self.stage_timing {
            self.timer.end(&self.stream, stage)?;
        }
        Ok(())
    }

    /// One drop through its stencil (computed on the host the first time its radius is seen,
    /// then kept on the GPU).
    fn disturb(&mut self, drop: &Drop) -> Result<(), CudaError> {
        let radius_nodes = drop.radius / self.h;
        let bits = radius_nodes.to_bits();
        let index = match self.stencils.iter().position(|s| s.radius_bits == bits) {
            Some(index) => index,
            None => {
                let stencil = Stencil::new(radius_nodes);
                let weights = self
                    .stream
                    .clone_htod(&stencil.weights)
                    .map_err(CudaError::driver("copying a drop's stencil to the GPU"))?;
                if self.stencils.len() >= STENCILS {
                    self.stencils.remove(0);
                }
                self.stencils.push(GpuStencil {
                    radius_bits: bits,
                    reach: stencil.reach,
                    weights,
                });
                self.stencils.len() - 1
            }
        };
        let stencil = &self.stencils[index];
        let record = PoolDrop::new(
            drop.position,
            drop.amplitude,
            stencil.reach,
            (self.n, self.h),
        );
        let (k, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
        let field = match drop.target {
            Target::Height => &mut b.height,
            Target::Velocity => &mut b.velocity,
        };
        k.disturb(s, &record, &stencil.weights, &b.flags, field)
    }

    /// The statistics of `params`' state into the slots: kinetic and potential energy, Σu,
    /// the largest |u| and the non-finite nodes, then the front around `last_drop` (if any).
    pub(super) fn reduce_statistics(
        &mut self,
        params: &PoolParams,
        last_drop: Option<[f32; 2]>,
    ) -> Result<(), CudaError> {
        let g = PoolGrid::new(&StepConstants::new(params));
        let count = g.nodes();
        let (k, s, b) = (&self.kernels, &self.stream, &mut self.buffers);
        let state = State {
            height: &b.height,
            velocity: &b.velocity,
            offset: &b.offset,
            velocity_h: &b.velocity_h,
        };
        k.stats_partials(s, &g, &state, &mut b.partials)?;
        let max = 1 << slot::MAX_HEIGHT;
        k.reduce_finish(s, &b.partials, count, (5, max), &mut b.stats, 0)?;
        if let Some(centre) = last_drop {
            k.stats_front(s, &g, &b.height, &b.stats, centre, &mut b.partials)?;
            k.reduce_finish(s, &b.partials, count, (1, 1), &mut b.stats, slot::FRONT)?;
        }
        Ok(())
    }
}
