//! Records in device memory that kernels read through a pointer, sent only when their bits
//! change and grown when outnumbered: what a CUDA graph may not freeze (a graph holds its
//! by-value arguments as captured) lives here, written before the graph's launch, so a replay
//! reads the values of the step or frame it runs. Used for a body's substep records and the
//! fountain's frame records (`sims::particles::cuda`) and the ink's splat records
//! (`sims::ink::cuda`).

use crate::cuda::CudaError;
use bytemuck::Pod;
use cudarc::driver::{CudaSlice, CudaStream, CudaView, DevicePtr};
use std::marker::PhantomData;
use std::sync::Arc;

/// Slots of records of type `T` on the GPU (slot k at `k × size_of::<T>()` bytes), and what
/// the slots hold as the host last sent it.
pub struct Records<T> {
    device: CudaSlice<u32>,
    /// The slots' words as last sent; only the first `known` are known to be on the device
    /// (none after a failed copy).
    uploaded: Vec<u32>,
    known: usize,
    kind: PhantomData<T>,
}

impl<T: Pod> Records<T> {
    /// The 4-byte words of a record. Checked when compiled for each `T`: the host compares and
    /// sends records as `u32` words (`bytemuck::cast_slice`, which needs the alignment) and the
    /// kernels read them as structs of 4-byte fields from a `u32` array, so a record is a whole
    /// number of words (else the last bytes would be neither compared nor sent, and slot `k`
    /// would start mid-record) aligned to at least 4.
    const WORDS: usize = {
        assert!(
            std::mem::size_of::<T>().is_multiple_of(4) && std::mem::align_of::<T>() >= 4,
            "Records<T>: T's size must be a multiple of 4 bytes and its alignment at least 4"
        );
        std::mem::size_of::<T>() / 4
    };

    /// Zeroed slots for `count` records (at least one).
    pub fn new(s: &Arc<CudaStream>, count: usize) -> Result<Self, CudaError> {
        let device = s
            .alloc_zeros(Self::WORDS * count.max(1))
            .map_err(CudaError::driver(
                "allocating GPU memory for kernels' records",
            ))?;
        Ok(Records {
            uploaded: vec![0; device.len()],
            known: device.len(),
            device,
            kind: PhantomData,
        })
    }

    /// `records` into the first slots, queued on `s` (after the work queued before, which
    /// reads the old ones): copied only where the slots hold other bits (a record whose only
    /// change is a zero's sign is sent too); more slots made where there are too few (a new
    /// allocation: a graph's key that names [`Records::pointer`] changes with it). `records` may
    /// be dropped on return: cudarc's `memcpy_htod` from pageable memory stages it first.
    pub fn set(&mut self, s: &Arc<CudaStream>, records: &[T]) -> Result<(), CudaError> {
        let words: &[u32] = bytemuck::cast_slice(records);
        if words.len() > self.device.len() {
            *self = Self::new(s, records.len())?;
        }
        if words.len() > self.known || self.uploaded[..words.len()] != *words {
            // Known again only once the copy succeeded: after a failure nothing is.
            let before = std::mem::take(&mut self.known);
            s.memcpy_htod(words, &mut self.device.slice_mut(..words.len()))
                .map_err(CudaError::driver("copying kernels' records to the GPU"))?;
            self.uploaded[..words.len()].copy_from_slice(words);
            self.known = before.max(words.len());
        }
        Ok(())
    }

    /// Slot `k`, a kernel's record.
    pub fn at(&self, k: usize) -> CudaView<'_, u32> {
        self.device.slice(k * Self::WORDS..(k + 1) * Self::WORDS)
    }

    /// Every slot, for a kernel that indexes them (`records[k]`).
    pub fn slots(&self) -> &CudaSlice<u32> {
        &self.device
    }

    /// The slots' device pointer (a graph's key names it).
    pub fn pointer(&self, s: &CudaStream) -> u64 {
        self.device.device_ptr(s).0
    }
}
