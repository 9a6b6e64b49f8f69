//! EGL device discovery for `fluidlab doctor`: which EGL devices exist and which one is the CUDA
//! device (`EGL_CUDA_DEVICE_NV`), the one a headless renderer must create its display on for
//! CUDA–GL interop to work. libEGL is opened at run time, so machines without it are fine.

use libloading::Library;
use std::ffi::{c_char, c_void, CStr};

type EglDevice = *mut c_void;
type GetProcAddress = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type QueryString = unsafe extern "C" fn(*mut c_void, i32) -> *const c_char;
type QueryDevices = unsafe extern "C" fn(i32, *mut EglDevice, *mut i32) -> u32;
type QueryDeviceString = unsafe extern "C" fn(EglDevice, i32) -> *const c_char;
type QueryDeviceAttrib = unsafe extern "C" fn(EglDevice, i32, *mut isize) -> u32;

const EGL_EXTENSIONS: i32 = 0x3055;
const EGL_VENDOR: i32 = 0x3053;
const EGL_RENDERER_EXT: i32 = 0x335F;
const EGL_DRM_DEVICE_FILE_EXT: i32 = 0x3233;
const EGL_CUDA_DEVICE_NV: i32 = 0x323A;

/// One EGL device.
#[derive(Clone, Debug, PartialEq)]
pub struct EglDeviceInfo {
    /// Its index in `eglQueryDevicesEXT`'s list.
    pub index: usize,
    /// Vendor, renderer or DRM device file, whichever the driver reports.
    pub description: String,
    /// The CUDA device ordinal, for devices with `EGL_NV_device_cuda`.
    pub cuda_ordinal: Option<i64>,
}

/// The EGL devices of this machine, or why they cannot be listed (no libEGL, no device
/// enumeration extension).
pub fn devices() -> Result<Vec<EglDeviceInfo>, String> {
    // SAFETY: libEGL's documented entry points, called with the EGL 1.5 / EXT_device_* C
    // signatures; strings returned by EGL are static and NUL-terminated.
    unsafe {
        let library = Library::new("libEGL.so.1")
            .map_err(|e| format!("libEGL.so.1 is not installed ({e})"))?;
        let get_proc = *library
            .get::<GetProcAddress>(b"eglGetProcAddress\0")
            .map_err(|e| format!("libEGL has no eglGetProcAddress ({e})"))?;
        let query_string = *library
            .get::<QueryString>(b"eglQueryString\0")
            .map_err(|e| format!("libEGL has no eglQueryString ({e})"))?;
        let client = query_string(std::ptr::null_mut(), EGL_EXTENSIONS);
        let client = text(client).unwrap_or_default();
        if !client.contains("EGL_EXT_device_enumeration") && !client.contains("EGL_EXT_device_base")
        {
            return Err("EGL has no device enumeration (EGL_EXT_device_enumeration)".into());
        }
        let lookup = |name: &[u8]| {
            let address = get_proc(name.as_ptr().cast());
            (!address.is_null()).then_some(address)
        };
        let (Some(query_devices), Some(query_string_of), Some(query_attrib)) = (
            lookup(b"eglQueryDevicesEXT\0"),
            lookup(b"eglQueryDeviceStringEXT\0"),
            lookup(b"eglQueryDeviceAttribEXT\0"),
        ) else {
            return Err(
                "EGL lacks eglQueryDevicesEXT / eglQueryDeviceStringEXT / eglQueryDeviceAttribEXT"
                    .into(),
            );
        };
        let query_devices: QueryDevices = std::mem::transmute(query_devices);
        let query_string_of: QueryDeviceString = std::mem::transmute(query_string_of);
        let query_attrib: QueryDeviceAttrib = std::mem::transmute(query_attrib);
        let mut count = 0;
        if query_devices(0, std::ptr::null_mut(), &mut count) == 0 {
            return Err("eglQueryDevicesEXT failed".into());
        }
        let mut handles = vec![std::ptr::null_mut(); count.max(0) as usize];
        if query_devices(count, handles.as_mut_ptr(), &mut count) == 0 {
            return Err("eglQueryDevicesEXT failed".into());
        }
        handles.truncate(count.max(0) as usize);
        Ok(handles
            .iter()
            .enumerate()
            .map(|(index, &device)| {
                let extensions = text(query_string_of(device, EGL_EXTENSIONS)).unwrap_or_default();
                let cuda_ordinal = extensions
                    .contains("EGL_NV_device_cuda")
                    .then(|| {
                        let mut ordinal: isize = -1;
                        let ok = query_attrib(device, EGL_CUDA_DEVICE_NV, &mut ordinal) != 0;
                        (ok && ordinal >= 0).then_some(ordinal as i64)
                    })
                    .flatten();
                let description = [EGL_RENDERER_EXT, EGL_VENDOR, EGL_DRM_DEVICE_FILE_EXT]
                    .iter()
                    .find_map(|&name| text(query_string_of(device, name)))
                    .unwrap_or_else(|| {
                        if extensions.contains("EGL_MESA_device_software") {
                            "software renderer (Mesa)".into()
                        } else {
                            "unnamed device".into()
                        }
                    });
                EglDeviceInfo {
                    index,
                    description,
                    cuda_ordinal,
                }
            })
            .collect())
    }
}

/// # Safety
/// `pointer` is null or a NUL-terminated string that outlives the call.
unsafe fn text(pointer: *const c_char) -> Option<String> {
    (!pointer.is_null()).then(|| CStr::from_ptr(pointer).to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where libEGL is installed (scripts/setup.sh installs Mesa's), at least one device is
    /// listed: Mesa's software device, or a GPU.
    #[test]
    fn devices_are_listed_where_libegl_is_installed() {
        // SAFETY: only opens and closes the library.
        if unsafe { Library::new("libEGL.so.1") }.is_err() {
            println!("SKIP: libEGL.so.1 is not installed");
            return;
        }
        let devices = devices().expect("EGL devices");
        println!("{devices:?}");
        assert!(!devices.is_empty());
        assert!(devices.iter().enumerate().all(|(k, d)| d.index == k));
    }
}
