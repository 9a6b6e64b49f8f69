//! A frame of the ink solver on the GPU: its steps enqueued stage by stage with no host
//! synchronisation ([`CudaInk::step`]), and its end ([`CudaInk::end_frame`]): the totals
//! reduced, the statistics copied back in the frame's one synchronisation, the report, totals
//! and stage times set from them.

use super::{slot, CudaInk, Totals};
use crate::cuda::launch::read_back;
use crate::cuda::CudaError;
use crate::sims::ink::{InkStage, SolveReport, Stamp};

impl CudaInk {
    /// Enqueues one solver step of `dt` with the brush `stamps`; `last`: the frame's last
    /// step, whose projection the report describes (the residual and the divergence after it
    /// are reduced then only). Nothing waits: [`CudaInk::end_frame`] does, once. The step's
    /// launches go as one CUDA graph where they can (`step_graph.rs`).
    pub fn step(&mut self, dt: f32, stamps: &[Stamp], last: bool) -> Result<(), CudaError> {
        if !self.frame_open {
            if self.stage_timing {
                self.timer.begin(&self.stream)?;
            }
            self.frame_open = true;
        }
        self.context
            .bind_to_thread()
            .map_err(CudaError::driver("binding the CUDA context"))?;
        self.step_stages(dt, stamps, last)
    }

    /// A step's stages, each kernel launched by itself (`step_graph.rs` captures these).
    pub(super) fn step_launches(
        &mut self,
        dt: f32,
        stamps: &[Stamp],
        last: bool,
    ) -> Result<(), CudaError> {
        self.run_stage(InkStage::Advect, dt, stamps, last)?;
        self.run_stage(InkStage::Splat, dt, stamps, last)?;
        if self.params.vorticity > 0.0 {
            self.run_stage(InkStage::Curl, dt, stamps, last)?;
            self.run_stage(InkStage::Vorticity, dt, stamps, last)?;
        }
        for stage in [
            InkStage::Divergence,
            InkStage::Pressure,
            InkStage::SubtractGradient,
        ] {
            self.run_stage(stage, dt, stamps, last)?;
        }
        Ok(())
    }

    /// The statistics slots as the last reductions left them (waits for the stream).
    pub fn statistics(&self) -> Result<Vec<f64>, CudaError> {
        let mut stats = vec![0.0; slot::COUNT];
        let copy = CudaError::driver("copying the statistics from the GPU");
        read_back(&self.stream, &self.buffers.stats, &mut stats, copy)?;
        Ok(stats)
    }

    /// Ends the frame: the totals reduced, the statistics copied back (the frame's one
    /// synchronisation), the report and the stage times updated.
    pub fn end_frame(&mut self) -> Result<(), CudaError> {
        self.reduce_totals()?;
        let mut stats = [0.0f64; slot::COUNT];
        let synchronised = self.kernels.sync_check();
        let failed =
            crate::cuda::launch::waited("a CUDA kernel of the ink step failed", synchronised);
        read_back(&self.stream, &self.buffers.stats, &mut stats, failed)?;
        let rms = |sum: f64, count: usize| (sum / count.max(1) as f64).sqrt();
        let mirror = self.mirror.flow_unguarded();
        let fluid_cells = mirror.nx * mirror.ny - mirror.solid_cells();
        let s = |slot: u32| stats[slot as usize];
        self.report = SolveReport {
            iterations: self.params.iterations,
            divergence_before: rms(s(slot::DIVERGENCE_BEFORE), fluid_cells),
            divergence_after: rms(s(slot::DIVERGENCE_AFTER), fluid_cells),
            residual: rms(s(slot::RESIDUAL), self.solved_cells),
        };
        let h = f64::from(self.grid.ink_h);
        let area = f64::from(self.grid.dx * self.grid.dx);
        self.totals = Totals {
            ink: s(slot::TOTALS) * h * h,
            kinetic_energy: s(slot::TOTALS + 1) * area,
            max_speed: s(slot::TOTALS + 2).sqrt(),
            non_finite: s(slot::TOTALS + 3) as u64,
        };
        if self.frame_open && self.stage_timing {
            let seconds = &mut self.stage_seconds;
            self.timer
                .collect(|stage, time| seconds[stage as usize] += time)?;
        }
        self.frame_open = false;
        Ok(())
    }
}
