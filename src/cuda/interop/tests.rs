//! The interop's registration life against a stand-in driver (no GPU needed).

use super::*;
use sys::CUresult::*;

/// A driver that records its calls and fails where told; buffers map `mapped_sizes` bytes,
/// textures `mapped_sizes` × 64 texels.
#[derive(Default)]
struct FakeDriver {
    refuse_registration: bool,
    map_error: Option<sys::CUresult>,
    mapped_sizes: Vec<usize>,
    calls: Vec<String>,
}

impl FakeDriver {
    fn count(&self, call: &str) -> usize {
        self.calls.iter().filter(|c| c.starts_with(call)).count()
    }
}

impl GraphicsDriver for FakeDriver {
    fn register(&mut self, object: GlObject) -> Result<sys::CUgraphicsResource, String> {
        self.calls.push(format!("register {object}"));
        if self.refuse_registration {
            return Err("refused".into());
        }
        Ok(std::ptr::NonNull::dangling().as_ptr())
    }
    unsafe fn map(
        &mut self,
        _: sys::CUgraphicsResource,
        object: GlObject,
        _: sys::CUstream,
    ) -> Result<Mapping, CallFailure> {
        self.calls.push("map".into());
        if let Some(code) = self.map_error {
            return Err(CallFailure {
                code,
                message: format!("cuGraphicsMapResources: {code:?}"),
            });
        }
        let size = if self.mapped_sizes.is_empty() {
            1 << 20
        } else {
            self.mapped_sizes.remove(0)
        };
        Ok(match object {
            GlObject::Buffer(_) => Mapping::Buffer {
                pointer: 0x1000,
                bytes: size,
            },
            GlObject::Texture2d(_) => Mapping::Array(MappedArray {
                array: std::ptr::NonNull::dangling().as_ptr(),
                width: size,
                height: 64,
            }),
        })
    }
    unsafe fn unmap(
        &mut self,
        _: sys::CUgraphicsResource,
        _: sys::CUstream,
    ) -> Result<(), CallFailure> {
        self.calls.push("unmap".into());
        Ok(())
    }
    unsafe fn unregister(&mut self, _: sys::CUgraphicsResource) {
        self.calls.push("unregister".into());
    }
}

fn write(interop: &mut GlInterop<FakeDriver>, buffer: u32) -> Result<bool, CudaError> {
    // SAFETY: the fake driver never uses the stream.
    unsafe { interop.write_buffer(std::ptr::null_mut(), buffer, 1024, |_| Ok(())) }
}

fn write_texture(
    interop: &mut GlInterop<FakeDriver>,
    texture: u32,
) -> Result<Option<MappedArray>, CudaError> {
    let mut seen = None;
    let stream = std::ptr::null_mut();
    // SAFETY: the fake driver never uses the stream.
    let written = unsafe {
        interop.write_texture(stream, texture, (256, 64), |array| {
            seen = Some(array);
            Ok::<_, CudaError>(())
        })?
    };
    assert_eq!(written, seen.is_some());
    Ok(seen)
}

#[test]
fn a_mapped_buffer_is_written_and_unmapped() {
    let mut interop = GlInterop::with_driver(FakeDriver::default());
    assert!(write(&mut interop, 7).unwrap());
    assert!(write(&mut interop, 7).unwrap());
    assert_eq!(
        interop.driver.calls,
        ["register GL buffer 7", "map", "unmap", "map", "unmap"]
    );
    interop.release();
    assert_eq!(interop.driver.count("unregister"), 1);
    assert!(!interop.is_registered());
}

/// A registration that succeeds but cannot be mapped falls back to host copies, like a
/// refused registration: released, reported once, not retried every frame.
#[test]
fn a_map_failure_after_registration_falls_back_to_host_copies() {
    let mut interop = GlInterop::with_driver(FakeDriver {
        map_error: Some(CUDA_ERROR_UNKNOWN),
        ..Default::default()
    });
    assert!(!write(&mut interop, 7).unwrap());
    assert!(!write(&mut interop, 7).unwrap());
    assert_eq!(
        interop.driver.calls,
        ["register GL buffer 7", "map", "unregister"]
    );
    assert!(!interop.is_registered());
}

#[test]
fn a_refused_registration_falls_back_once() {
    let mut interop = GlInterop::with_driver(FakeDriver {
        refuse_registration: true,
        ..Default::default()
    });
    assert!(!write(&mut interop, 7).unwrap());
    assert!(!write(&mut interop, 7).unwrap());
    assert_eq!(interop.driver.calls, ["register GL buffer 7"]);
}

/// An earlier kernel's execution error surfacing at the map is an error, not a fallback.
#[test]
fn an_execution_error_at_the_map_is_reported() {
    let mut interop = GlInterop::with_driver(FakeDriver {
        map_error: Some(CUDA_ERROR_ILLEGAL_ADDRESS),
        ..Default::default()
    });
    let error = write(&mut interop, 7).unwrap_err();
    assert!(
        error.to_string().contains("cuGraphicsMapResources"),
        "{error}"
    );
}

/// A buffer re-specified larger after registration maps too few bytes: registered again.
#[test]
fn a_stale_registration_is_renewed_once() {
    let mut interop = GlInterop::with_driver(FakeDriver {
        mapped_sizes: vec![512, 4096],
        ..Default::default()
    });
    assert!(write(&mut interop, 7).unwrap());
    assert_eq!(
        interop.driver.calls,
        [
            "register GL buffer 7",
            "map",
            "unmap",
            "unregister",
            "register GL buffer 7",
            "map",
            "unmap"
        ]
    );
}

/// A buffer still too small after registering again is an error naming the sizes.
#[test]
fn a_buffer_too_small_is_an_error() {
    let mut interop = GlInterop::with_driver(FakeDriver {
        mapped_sizes: vec![512, 512],
        ..Default::default()
    });
    let error = write(&mut interop, 7).unwrap_err();
    assert_eq!(
        error.to_string(),
        "GL buffer 7 is smaller than the 1024 bytes to be written"
    );
    assert!(!interop.is_registered());
}

#[test]
fn another_buffer_replaces_the_registration() {
    let mut interop = GlInterop::with_driver(FakeDriver::default());
    assert!(write(&mut interop, 7).unwrap());
    assert!(write(&mut interop, 8).unwrap());
    assert_eq!(interop.driver.count("unregister"), 1);
    assert_eq!(interop.driver.count("register"), 2);
}

/// A texture is registered as an image and its level-0 array handed to the writer.
#[test]
fn a_mapped_texture_hands_its_array_to_the_writer() {
    let mut interop = GlInterop::with_driver(FakeDriver::default());
    let array = write_texture(&mut interop, 3).unwrap().expect("written");
    assert_eq!((array.width, array.height), (1 << 20, 64));
    assert_eq!(
        interop.driver.calls,
        ["register GL texture 3", "map", "unmap"]
    );
}

/// Textures take the buffers' fallbacks: a refusal once, a stale registration renewed, one
/// still too small an error in texels.
#[test]
fn textures_fall_back_and_renew_as_buffers_do() {
    let mut refused = GlInterop::with_driver(FakeDriver {
        refuse_registration: true,
        ..Default::default()
    });
    assert_eq!(write_texture(&mut refused, 3).unwrap(), None);
    assert_eq!(write_texture(&mut refused, 3).unwrap(), None);
    assert_eq!(refused.driver.calls, ["register GL texture 3"]);

    let mut stale = GlInterop::with_driver(FakeDriver {
        mapped_sizes: vec![128, 256],
        ..Default::default()
    });
    assert!(write_texture(&mut stale, 3).unwrap().is_some());
    assert_eq!(stale.driver.count("register"), 2);

    let mut small = GlInterop::with_driver(FakeDriver {
        mapped_sizes: vec![128, 128],
        ..Default::default()
    });
    let error = write_texture(&mut small, 3).unwrap_err();
    assert_eq!(
        error.to_string(),
        "GL texture 3 is smaller than the 256×64 texels to be written"
    );
}

/// A buffer and a texture with the same id are different objects: switching re-registers.
#[test]
fn a_texture_replaces_a_buffer_of_the_same_id() {
    let mut interop = GlInterop::with_driver(FakeDriver::default());
    assert!(write(&mut interop, 7).unwrap());
    assert!(write_texture(&mut interop, 7).unwrap().is_some());
    assert_eq!(
        interop.driver.calls,
        [
            "register GL buffer 7",
            "map",
            "unmap",
            "unregister",
            "register GL texture 7",
            "map",
            "unmap"
        ]
    );
}
