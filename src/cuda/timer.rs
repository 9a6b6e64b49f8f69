//! GPU times of the stages of a frame: CUDA events recorded on the stream between stages, read
//! after the frame's synchronisation. Keyed by whatever names a kind's stages (PBF's `Stage`).

use super::CudaError;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
use std::sync::Arc;

/// Events between the stages of a frame; the events are created once and reused every frame.
pub struct EventTimer<K> {
    context: Arc<CudaContext>,
    events: Vec<CudaEvent>,
    stages: Vec<K>,
}

impl<K: Copy> EventTimer<K> {
    /// A timer for streams of `context`.
    pub fn new(context: Arc<CudaContext>) -> Self {
        Self {
            context,
            events: Vec::new(),
            stages: Vec::new(),
        }
    }

    fn record(&mut self, stream: &CudaStream, slot: usize) -> Result<(), CudaError> {
        if self.events.len() <= slot {
            let event = self
                .context
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(CudaError::driver("creating a CUDA event"))?;
            self.events.push(event);
        }
        self.events[slot]
            .record(stream)
            .map_err(CudaError::driver("recording a CUDA event"))
    }

    /// Starts a frame: the event every stage time is measured from.
    pub fn begin(&mut self, stream: &CudaStream) -> Result<(), CudaError> {
        self.stages.clear();
        self.record(stream, 0)
    }

    /// Marks the end of `stage` (begun where the previous stage ended).
    pub fn end(&mut self, stream: &CudaStream, stage: K) -> Result<(), CudaError> {
        self.stages.push(stage);
        self.record(stream, self.stages.len())
    }

    /// Calls `add` with each stage of the frame and its time in seconds, in order (the stream
    /// must have reached the last event).
    pub fn collect(&self, mut add: impl FnMut(K, f64)) -> Result<(), CudaError> {
        for (k, &stage) in self.stages.iter().enumerate() {
            let ms = self.events[k]
                .elapsed_ms(&self.events[k + 1])
                .map_err(CudaError::driver("reading a CUDA event"))?;
            add(stage, f64::from(ms) * 1e-3);
        }
        Ok(())
    }
}
