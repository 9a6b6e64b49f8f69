//! Per-stage GPU times: CUDA events between the stages of a frame.

use super::{driver_error, SolverError, Stage, StageTimes};
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
use std::sync::Arc;

/// CUDA events around each stage of a frame, read after the frame's synchronisation.
pub(super) struct StageTimer {
    events: Vec<CudaEvent>,
    stages: Vec<Stage>,
}

impl StageTimer {
    pub(super) fn new() -> Self {
        Self {
            events: Vec::new(),
            stages: Vec::new(),
        }
    }

    pub(super) fn record(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
        slot: usize,
    ) -> Result<(), SolverError> {
        if self.events.len() <= slot {
            let event = context
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_error("creating a CUDA event"))?;
            self.events.push(event);
        }
        self.events[slot]
            .record(stream)
            .map_err(driver_error("recording a CUDA event"))
    }

    /// Starts a frame: the event every stage time is measured from.
    pub(super) fn begin(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
    ) -> Result<(), SolverError> {
        self.stages.clear();
        self.record(context, stream, 0)
    }

    /// Marks the end of `stage` (begun where the previous stage ended).
    pub(super) fn end(
        &mut self,
        context: &Arc<CudaContext>,
        stream: &CudaStream,
        stage: Stage,
    ) -> Result<(), SolverError> {
        self.stages.push(stage);
        self.record(context, stream, self.stages.len())
    }

    /// Adds the frame's stage times to `times` (the stream must have reached the last event).
    pub(super) fn collect(&self, times: &mut StageTimes) -> Result<(), SolverError> {
        for (k, &stage) in self.stages.iter().enumerate() {
            let ms = self.events[k]
                .elapsed_ms(&self.events[k + 1])
                .map_err(driver_error("reading a CUDA event"))?;
            times.add(stage, ms as f64 * 1e-3);
        }
        Ok(())
    }
}
