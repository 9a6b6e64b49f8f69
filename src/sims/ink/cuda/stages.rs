//! The launches of each stage of an ink step (docs/ink-cuda.md), in the order the CPU solver
//! runs its functions of the same names. `tests/emulation/ink.cpp` runs the same sequences with
//! the kernels compiled as C++.

#[cfg(doc)]
use super::kernels::SplatLattice;
use super::kernels::{lattice_rows, splat_records, InkSplat};
use super::{slot, CudaInk};
use crate::cuda::CudaError;
use crate::sims::ink::params::{Advection, PressureSolver};
use crate::sims::ink::{BrushStamp, InkStage, Stamp};

/// A step's `splat` launches: `slots` (the stamps with something to add, padded to a power of
/// two: the same for any count up to it), each over `capacity` points a lattice (the largest
/// [`InkSplat::capacity`] of the step's records: the same wherever a brush's stamps lie).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SplatLaunches {
    pub slots: usize,
    pub capacity: usize,
}

impl CudaInk {
    /// Enqueues `stage` of a step of `dt` with the brush `stamps` (`report`: reduce what the
    /// report needs), and its end event when a frame is being timed. The parity checks run
    /// stages one at a time through this.
    pub fn run_stage(
        &mut self,
        stage: InkStage,
        dt: f32,
        stamps: &[Stamp],
        report: bool,
    ) -> Result<(), CudaError> {
        match stage {
            InkStage::Advect => self.advect(dt)?,
            InkStage::Splat => self.splat(dt, stamps)?,
            InkStage::Curl => {
                // The ghost faces mirror the advected and splatted velocity first (the CPU's
                // compute_curl).
                self.mirror_ghosts()?;
                let b = &mut self.buffers;
                self.kernels
                    .curl(&self.stream, &self.grid, (&b.u, &b.v), &mut b.curl)?
            }
            InkStage::Vorticity => {
                let epsilon = self.params.vorticity * self.grid.dx;
                let b = &mut self.buffers;
                self.kernels.vorticity(
                    &self.stream,
                    &self.grid,
                    &b.curl,
                    (&b.u_open, &b.v_open),
                    (&mut b.u, &mut b.v),
                    dt,
                    epsilon,
                )?
            }
            InkStage::Divergence => {
                let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
                k.divergence(
                    s,
                    g,
                    (&b.u, &b.v),
                    &b.solid,
                    Some(&mut b.divergence),
                    &mut b.partials,
                )?;
                k.reduce_finish(
                    s,
                    &b.partials,
                    g.cells(),
                    1,
                    0,
                    &mut b.stats,
                    slot::DIVERGENCE_BEFORE,
                )?
            }
            InkStage::Pressure => self.pressure(report)?,
            InkStage::SubtractGradient => {
                let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
                k.subtract_gradient(s, g, &b.p, (&b.u_open, &b.v_open), (&mut b.u, &mut b.v))?;
                // The ghost faces mirror the projected velocity.
                self.mirror_ghosts()?;
                let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
                if report {
                    k.divergence(s, g, (&b.u, &b.v), &b.solid, None, &mut b.partials)?;
                    k.reduce_finish(
                        s,
                        &b.partials,
                        g.cells(),
                        1,
                        0,
                        &mut b.stats,
                        slot::DIVERGENCE_AFTER,
                    )?;
                }
            }
        }
        if self.frame_open && self.stage_timing {
            self.timer.end(&self.stream, stage)?;
        }
        Ok(())
    }

    /// With obstacles, the ghost faces mirror the fluid's velocity now (`close_walls` over
    /// every row: the CPU's `Flow::mirror_rows`; the other closed faces keep their fixed
    /// velocities).
    fn mirror_ghosts(&mut self) -> Result<(), CudaError> {
        // The mirror's count, kept where cells change: no scan of the host's mask.
        if !self.mirror.flow_unguarded().has_obstacles() {
            return Ok(());
        }
        let b = &mut self.buffers;
        self.kernels.close_walls(
            &self.stream,
            &self.grid,
            0..self.grid.ny as usize,
            (&mut b.u, &mut b.v, &mut b.p),
            (&b.u_open, &b.v_open, &b.solid),
            (&b.u_fixed, &b.v_fixed),
        )
    }

    /// Velocity and ink carried along the velocity of the step's start (the CPU's `advect`):
    /// semi-Lagrangian in one pass per lattice, MacCormack in two; the outputs become the
    /// fields.
    fn advect(&mut self, dt: f32) -> Result<(), CudaError> {
        let damping = (-self.params.velocity_damping * dt).exp();
        let fade = (-self.params.ink_fade * dt).exp();
        let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
        let velocity = (&b.u, &b.v);
        let open = (&b.u_open, &b.v_open);
        match self.params.advection {
            Advection::SemiLagrangian => {
                let out = (&mut b.u_next, &mut b.v_next);
                k.advect_velocity(s, g, false, velocity, open, out, dt, damping)?;
                k.advect_ink(s, g, false, velocity, &b.ink, &mut b.ink_next, dt, fade)?;
            }
            Advection::Maccormack => {
                let hat = (&mut b.u_hat, &mut b.v_hat);
                k.advect_velocity(s, g, true, velocity, open, hat, dt, damping)?;
                k.advect_ink(s, g, true, velocity, &b.ink, &mut b.ink_hat, dt, fade)?;
                let (hat, out) = ((&b.u_hat, &b.v_hat), (&mut b.u_next, &mut b.v_next));
                k.advect_velocity_correct(s, g, velocity, hat, open, out, dt, damping)?;
                let ink = (&b.ink, &b.ink_hat);
                k.advect_ink_correct(s, g, velocity, ink.0, ink.1, &mut b.ink_next, dt, fade)?;
            }
        }
        std::mem::swap(&mut b.u, &mut b.u_next);
        std::mem::swap(&mut b.v, &mut b.v_next);
        std::mem::swap(&mut b.ink, &mut b.ink_next);
        Ok(())
    }

    /// Each stamp's Gaussians (one launch a slot of the records sent before: a stamp on the
    /// three lattices), then the ink's buoyancy.
    fn splat(&mut self, dt: f32, stamps: &[Stamp]) -> Result<(), CudaError> {
        self.upload_stamp_texture()?;
        let launches = self.upload_splats(dt, stamps)?;
        let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
        for slot in 0..launches.slots {
            k.splat(
                s,
                (b.splats.slots(), slot, launches.capacity),
                (&mut b.u, &mut b.v, &mut b.ink),
                g.ink_cells(),
                (&b.u_open, &b.v_open),
                &b.stamp,
            )?;
        }
        if self.params.buoyancy != 0.0 {
            let lift = self.params.buoyancy * dt / 3.0;
            k.splat_buoyancy(s, g, &b.ink, &b.v_open, &mut b.v, lift)?;
        }
        Ok(())
    }

    /// The brush stamp's texture, sent when the stamp changed (before a step: a copy from the
    /// host cannot be part of a CUDA graph).
    pub(super) fn upload_stamp_texture(&mut self) -> Result<(), CudaError> {
        let kind = self.params.brush_stamp;
        let b = &mut self.buffers;
        if b.stamp_kind != kind {
            if let Some(texture) = kind.texture() {
                self.stream
                    .memcpy_htod(&texture, &mut b.stamp)
                    .map_err(CudaError::driver("copying the brush stamp to the GPU"))?;
            }
            b.stamp_kind = kind;
        }
        Ok(())
    }

    /// The splat records of `stamps` in a step of `dt` sent to the GPU where they differ from
    /// those it holds (before a step: a copy from the host cannot be part of a CUDA graph; the
    /// array grows when they outnumber it), and the step's `splat` launches. A stamp is a slot
    /// of three records, one per lattice ([`SplatLattice`]'s order; a lattice it leaves alone
    /// gets an empty box); the slots are padded with empty ones to a power of two
    /// ([`SplatLaunches`]), so a drag whose stamp count follows the hand's speed runs a few
    /// launch sequences, not one per count (`step_graph.rs`).
    pub(super) fn upload_splats(
        &mut self,
        dt: f32,
        stamps: &[Stamp],
    ) -> Result<SplatLaunches, CudaError> {
        let textured = self.params.brush_stamp != BrushStamp::Round;
        let g = &self.grid;
        let mut capacity = 0;
        let mut records: Vec<InkSplat> = Vec::with_capacity(3 * stamps.len());
        for stamp in stamps {
            let mut slot = [InkSplat::default(); 3];
            for (lattice, record) in splat_records(g, stamp, dt, textured) {
                capacity = capacity.max(record.capacity(lattice_rows(g, lattice)));
                slot[lattice as usize] = record;
            }
            if slot.iter().any(|record| record.points() > 0) {
                records.extend(slot);
            }
        }
        let used = records.len() / 3;
        let launches = SplatLaunches {
            slots: if used == 0 {
                0
            } else {
                used.next_power_of_two()
            },
            capacity,
        };
        records.resize(3 * launches.slots, InkSplat::default());
        if !records.is_empty() {
            self.buffers.splats.set(&self.stream, &records)?;
        }
        Ok(launches)
    }

    /// `iterations` Jacobi sweeps from the last pressure × the carry-over (folded into the
    /// first sweep), or as many multigrid V-cycles (`multigrid.rs`); with `report`, the
    /// residual.
    fn pressure(&mut self, report: bool) -> Result<(), CudaError> {
        if self.params.pressure_solver == PressureSolver::Multigrid {
            self.multigrid_pressure()?;
        } else {
            self.jacobi_pressure()?;
        }
        let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
        if report {
            let weight = 1.0 / (g.dx * g.dx);
            k.pressure_residual(
                s,
                g,
                &b.stencil,
                &b.divergence,
                &b.p,
                weight,
                &mut b.partials,
            )?;
            k.reduce_finish(
                s,
                &b.partials,
                g.cells(),
                1,
                0,
                &mut b.stats,
                slot::RESIDUAL,
            )?;
        }
        Ok(())
    }

    /// `iterations` Jacobi sweeps, the carry-over folded into the first.
    fn jacobi_pressure(&mut self) -> Result<(), CudaError> {
        let carry = self.params.pressure_carry_over;
        let dx2 = self.grid.dx * self.grid.dx;
        let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
        for iteration in 0..self.params.iterations {
            let scale = if iteration == 0 { carry } else { 1.0 };
            k.pressure(
                s,
                g,
                &b.stencil,
                &b.divergence,
                &b.p,
                &mut b.p_next,
                scale,
                dx2,
            )?;
            std::mem::swap(&mut b.p, &mut b.p_next);
        }
        Ok(())
    }

    /// Σ ink, Σ ½|u|², the largest |u|² and the non-finite faces into the statistics.
    pub(super) fn reduce_totals(&mut self) -> Result<(), CudaError> {
        let (k, s, g, b) = (&self.kernels, &self.stream, &self.grid, &mut self.buffers);
        k.reduce_totals(s, g, (&b.u, &b.v, &b.solid), &b.ink, &mut b.partials)?;
        k.reduce_finish(
            s,
            &b.partials,
            g.ink_cells(),
            4,
            0b100,
            &mut b.stats,
            slot::TOTALS,
        )
    }
}
