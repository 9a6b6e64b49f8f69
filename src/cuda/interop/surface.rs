//! The surface object a kernel writes a mapped GL texture through: one per mapping.
//!
//! A mapped texture's CUDA array is valid only until the texture is unmapped, and the driver
//! may hand out another array at the next mapping ("the value set in pArray may change every
//! time that resource is mapped", `cuGraphicsSubResourceGetMappedArray`). A surface object made
//! over one mapping's array is therefore not reused for the next, even where the array handle
//! comes back equal: each mapping gets its own, and the previous one is destroyed once the
//! kernel that wrote through it has finished (an event, so no wait for the work queued since).
//! The emulated driver (tests/emulation/driver/) invalidates surfaces at the unmap, which is how
//! reusing them was found.

use super::create_surface;
use crate::cuda::CudaError;
use cudarc::driver::{sys, CudaEvent, CudaStream};

/// The surface object of the current mapping, and when the kernel writing through it is done.
#[derive(Default)]
pub struct MappedSurface {
    /// The surface object, and whether `done` records the kernel that writes through it.
    current: Option<(u64, bool)>,
    /// One event, recorded again after each mapping's kernel (made at the first).
    done: Option<CudaEvent>,
}

impl MappedSurface {
    /// A surface object over `array`, the level-0 array of the mapping in progress, for a
    /// kernel about to be queued on a stream; call [`MappedSurface::queued`] after queuing it.
    /// The previous mapping's surface is destroyed first, once its kernel has finished.
    pub fn create(&mut self, array: sys::CUarray) -> Result<u64, CudaError> {
        self.retire()?;
        let surface = create_surface(array)?;
        self.current = Some((surface, false));
        Ok(surface)
    }

    /// Records that the kernel writing through the current surface is queued on `stream`.
    pub fn queued(&mut self, stream: &CudaStream) -> Result<(), CudaError> {
        let Some((_, recorded)) = &mut self.current else {
            return Ok(());
        };
        let failed = CudaError::driver("recording the texture write's end");
        match &self.done {
            Some(done) => done.record(stream).map_err(failed)?,
            None => self.done = Some(stream.record_event(None).map_err(failed)?),
        }
        *recorded = true;
        Ok(())
    }

    /// Whether a surface object is held.
    pub fn is_some(&self) -> bool {
        self.current.is_some()
    }

    /// Destroys the current surface object once the kernel that used it has finished.
    pub fn retire(&mut self) -> Result<(), CudaError> {
        if let Some((surface, recorded)) = self.current.take() {
            if let (true, Some(done)) = (recorded, &self.done) {
                done.synchronize()
                    .map_err(CudaError::driver("waiting for the last texture write"))?;
            }
            // SAFETY: a surface object `create` made; the kernel that wrote through it has
            // finished (its event above), or none was queued.
            unsafe { sys::cuSurfObjectDestroy(surface) };
        }
        Ok(())
    }
}
