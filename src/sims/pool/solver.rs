//! The pool's solver behind one type: the CPU stages (`cpu.rs`, `drops.rs`) on a [`Surface`]
//! in host memory, timed per stage.

use super::cpu::{self, StepConstants};
use super::drops::{self, Drop, Stencils};
use super::params::PoolParams;
use super::surface::Surface;
use super::PoolStage;
use std::time::Instant;

/// The CPU solver.
pub struct CpuPool {
    /// The state.
    pub surface: Surface,
    stencils: Stencils,
    seconds: [f64; PoolStage::ALL.len()],
    timing: bool,
}

impl CpuPool {
    /// A surface at rest for `params` with `land(x, z)` fixed.
    pub fn new(params: &PoolParams, land: impl Fn(f32, f32) -> bool) -> CpuPool {
        CpuPool {
            surface: Surface::new(params, land),
            stencils: Stencils::default(),
            seconds: [0.0; PoolStage::ALL.len()],
            timing: true,
        }
    }

    /// One frame: `disturb` with `drops`, then the substeps (`forces`, `integrate`, `edges`).
    pub fn step(&mut self, params: &PoolParams, drops: &[Drop]) {
        let clock = Instant::now();
        for drop in drops {
            drops::disturb(&mut self.surface, drop, &mut self.stencils);
        }
        self.lap(PoolStage::Disturb, clock);
        let k = StepConstants::new(params);
        for _ in 0..params.substeps() {
            let clock = Instant::now();
            cpu::forces(&mut self.surface, &k);
            let clock = self.lap(PoolStage::Forces, clock);
            cpu::integrate(&mut self.surface, &k);
            let clock = self.lap(PoolStage::Integrate, clock);
            cpu::edges(&mut self.surface, &k);
            self.lap(PoolStage::Edges, clock);
        }
    }

    fn lap(&mut self, stage: PoolStage, since: Instant) -> Instant {
        let now = Instant::now();
        if self.timing {
            self.seconds[stage as usize] += (now - since).as_secs_f64();
        }
        now
    }

    /// Seconds per stage since the last reset.
    pub fn stage_seconds(&self) -> Vec<f64> {
        self.seconds.to_vec()
    }

    /// Clears the stage times.
    pub fn reset_stage_times(&mut self) {
        self.seconds = [0.0; PoolStage::ALL.len()];
    }

    /// Turns stage timing on or off.
    pub fn set_stage_timing(&mut self, enabled: bool) {
        self.timing = enabled;
    }
}
