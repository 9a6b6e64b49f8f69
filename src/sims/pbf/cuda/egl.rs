//! EGL for `fluidlab doctor`: which EGL devices exist and which one is the CUDA device
//! (`EGL_CUDA_DEVICE_NV`), the one a headless renderer must create its display on for CUDA–GL
//! interop to work; and a minimal surfaceless OpenGL 3.3 context on such a device, enough to
//! create a buffer, let CUDA write it and read it back. libEGL is opened at run time, so
//! machines without it are fine. The renderer proper lives in the viewer, not here.

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
        let query_devices: QueryDevices = cast_fn(query_devices);
        let query_string_of: QueryDeviceString = cast_fn(query_string_of);
        let query_attrib: QueryDeviceAttrib = cast_fn(query_attrib);
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

/// A function pointer from an address `eglGetProcAddress` returned.
///
/// # Safety
/// `F` must be the C function pointer type of the entry point at `address`.
unsafe fn cast_fn<F: Copy>(address: *mut c_void) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    std::mem::transmute_copy(&address)
}

/// # Safety
/// `pointer` is null or a NUL-terminated string that outlives the call.
unsafe fn text(pointer: *const c_char) -> Option<String> {
    (!pointer.is_null()).then(|| CStr::from_ptr(pointer).to_string_lossy().into_owned())
}

type GetPlatformDisplay = unsafe extern "C" fn(u32, *mut c_void, *const i32) -> *mut c_void;
type Initialize = unsafe extern "C" fn(*mut c_void, *mut i32, *mut i32) -> u32;
type BindApi = unsafe extern "C" fn(u32) -> u32;
type ChooseConfig =
    unsafe extern "C" fn(*mut c_void, *const i32, *mut *mut c_void, i32, *mut i32) -> u32;
type CreateContext =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *const i32) -> *mut c_void;
type MakeCurrent = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *mut c_void) -> u32;
type DestroyContext = unsafe extern "C" fn(*mut c_void, *mut c_void) -> u32;
type Terminate = unsafe extern "C" fn(*mut c_void) -> u32;
type GenBuffers = unsafe extern "C" fn(i32, *mut u32);
type BindBuffer = unsafe extern "C" fn(u32, u32);
type BufferData = unsafe extern "C" fn(u32, isize, *const c_void, u32);
type GetBufferSubData = unsafe extern "C" fn(u32, isize, isize, *mut c_void);
type DeleteBuffers = unsafe extern "C" fn(i32, *const u32);
type Finish = unsafe extern "C" fn();
type GetString = unsafe extern "C" fn(u32) -> *const u8;

const EGL_PLATFORM_DEVICE_EXT: u32 = 0x313F;
const EGL_OPENGL_API: u32 = 0x30A2;
const EGL_RENDERABLE_TYPE: i32 = 0x3040;
const EGL_OPENGL_BIT: i32 = 0x0008;
const EGL_SURFACE_TYPE: i32 = 0x3033;
const EGL_NONE: i32 = 0x3038;
const EGL_CONTEXT_MAJOR_VERSION: i32 = 0x3098;
const EGL_CONTEXT_MINOR_VERSION: i32 = 0x30FB;
const EGL_CONTEXT_OPENGL_PROFILE_MASK: i32 = 0x30FD;
const EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT: i32 = 0x1;
const GL_ARRAY_BUFFER: u32 = 0x8892;
const GL_DYNAMIC_DRAW: u32 = 0x88E8;
const GL_RENDERER: u32 = 0x1F01;

/// A surfaceless OpenGL 3.3 core context made current on one EGL device, with the handful of
/// buffer calls the interop check needs. Dropping it releases the context and the display.
pub struct HeadlessGl {
    _library: Library,
    display: *mut c_void,
    context: *mut c_void,
    make_current: MakeCurrent,
    destroy_context: DestroyContext,
    terminate: Terminate,
    gen_buffers: GenBuffers,
    bind_buffer: BindBuffer,
    buffer_data: BufferData,
    get_buffer_sub_data: GetBufferSubData,
    delete_buffers: DeleteBuffers,
    finish: Finish,
    /// `GL_RENDERER`.
    pub renderer: String,
}

impl HeadlessGl {
    /// A context on EGL device `index` (see [`devices`]), current on this thread.
    pub fn new(index: usize) -> Result<Self, String> {
        // SAFETY: EGL 1.5 / EXT_platform_device / KHR_surfaceless_context entry points with their
        // C signatures; every handle is checked before use.
        unsafe {
            let library = Library::new("libEGL.so.1")
                .map_err(|e| format!("libEGL.so.1 is not installed ({e})"))?;
            let get_proc = *library
                .get::<GetProcAddress>(b"eglGetProcAddress\0")
                .map_err(|e| format!("libEGL has no eglGetProcAddress ({e})"))?;
            let proc = |name: &str| -> Result<*mut c_void, String> {
                let c_name = std::ffi::CString::new(name).expect("no NUL in the name");
                let address = get_proc(c_name.as_ptr());
                if address.is_null() {
                    Err(format!("EGL/GL entry point {name} not found"))
                } else {
                    Ok(address)
                }
            };
            let query_devices: QueryDevices = cast_fn(proc("eglQueryDevicesEXT")?);
            let get_display: GetPlatformDisplay = cast_fn(proc("eglGetPlatformDisplayEXT")?);
            let initialize: Initialize = cast_fn(proc("eglInitialize")?);
            let bind_api: BindApi = cast_fn(proc("eglBindAPI")?);
            let choose_config: ChooseConfig = cast_fn(proc("eglChooseConfig")?);
            let create_context: CreateContext = cast_fn(proc("eglCreateContext")?);
            let make_current: MakeCurrent = cast_fn(proc("eglMakeCurrent")?);
            let destroy_context: DestroyContext = cast_fn(proc("eglDestroyContext")?);
            let terminate: Terminate = cast_fn(proc("eglTerminate")?);

            let mut count = 0;
            let mut handles = vec![std::ptr::null_mut(); 64];
            if query_devices(64, handles.as_mut_ptr(), &mut count) == 0 || index >= count as usize {
                return Err(format!("EGL device {index} does not exist"));
            }
            let display = get_display(EGL_PLATFORM_DEVICE_EXT, handles[index], std::ptr::null());
            let (mut major, mut minor) = (0, 0);
            if display.is_null() || initialize(display, &mut major, &mut minor) == 0 {
                return Err(format!("eglInitialize failed on EGL device {index}"));
            }
            let fail = |what: &str| {
                terminate(display);
                Err(format!("{what} failed on EGL device {index}"))
            };
            if bind_api(EGL_OPENGL_API) == 0 {
                return fail("eglBindAPI(EGL_OPENGL_API)");
            }
            let config_attributes = [
                EGL_RENDERABLE_TYPE,
                EGL_OPENGL_BIT,
                EGL_SURFACE_TYPE,
                0,
                EGL_NONE,
            ];
            let (mut config, mut configs) = (std::ptr::null_mut(), 0);
            if choose_config(
                display,
                config_attributes.as_ptr(),
                &mut config,
                1,
                &mut configs,
            ) == 0
                || configs < 1
            {
                return fail("eglChooseConfig (OpenGL, no surface)");
            }
            let context_attributes = [
                EGL_CONTEXT_MAJOR_VERSION,
                3,
                EGL_CONTEXT_MINOR_VERSION,
                3,
                EGL_CONTEXT_OPENGL_PROFILE_MASK,
                EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                EGL_NONE,
            ];
            let context = create_context(
                display,
                config,
                std::ptr::null_mut(),
                context_attributes.as_ptr(),
            );
            if context.is_null() {
                return fail("eglCreateContext (OpenGL 3.3 core)");
            }
            let none = std::ptr::null_mut();
            if make_current(display, none, none, context) == 0 {
                destroy_context(display, context);
                return fail("eglMakeCurrent without a surface");
            }
            let gl = |name: &str| proc(name);
            let get_string: GetString = cast_fn(gl("glGetString")?);
            let renderer = get_string(GL_RENDERER);
            let renderer = if renderer.is_null() {
                "unknown renderer".to_string()
            } else {
                CStr::from_ptr(renderer.cast())
                    .to_string_lossy()
                    .into_owned()
            };
            Ok(Self {
                gen_buffers: cast_fn(gl("glGenBuffers")?),
                bind_buffer: cast_fn(gl("glBindBuffer")?),
                buffer_data: cast_fn(gl("glBufferData")?),
                get_buffer_sub_data: cast_fn(gl("glGetBufferSubData")?),
                delete_buffers: cast_fn(gl("glDeleteBuffers")?),
                finish: cast_fn(gl("glFinish")?),
                _library: library,
                display,
                context,
                make_current,
                destroy_context,
                terminate,
                renderer,
            })
        }
    }

    /// A new `GL_ARRAY_BUFFER` of `bytes` bytes holding `contents` (zeros when shorter).
    pub fn create_buffer(&self, bytes: usize, contents: &[u8]) -> u32 {
        let mut data = contents.to_vec();
        data.resize(bytes, 0);
        let mut buffer = 0;
        // SAFETY: the context is current; `data` holds `bytes` bytes.
        unsafe {
            (self.gen_buffers)(1, &mut buffer);
            (self.bind_buffer)(GL_ARRAY_BUFFER, buffer);
            (self.buffer_data)(
                GL_ARRAY_BUFFER,
                bytes as isize,
                data.as_ptr().cast(),
                GL_DYNAMIC_DRAW,
            );
            (self.bind_buffer)(GL_ARRAY_BUFFER, 0);
            (self.finish)();
        }
        buffer
    }

    /// The first `bytes` bytes of `buffer`, read by OpenGL after all GL work finished.
    pub fn read_buffer(&self, buffer: u32, bytes: usize) -> Vec<u8> {
        let mut data = vec![0u8; bytes];
        // SAFETY: the context is current; `data` holds `bytes` bytes.
        unsafe {
            (self.finish)();
            (self.bind_buffer)(GL_ARRAY_BUFFER, buffer);
            (self.get_buffer_sub_data)(
                GL_ARRAY_BUFFER,
                0,
                bytes as isize,
                data.as_mut_ptr().cast(),
            );
            (self.bind_buffer)(GL_ARRAY_BUFFER, 0);
        }
        data
    }

    /// Deletes `buffer`.
    pub fn delete_buffer(&self, buffer: u32) {
        // SAFETY: the context is current.
        unsafe { (self.delete_buffers)(1, &buffer) }
    }
}

impl Drop for HeadlessGl {
    fn drop(&mut self) {
        let none = std::ptr::null_mut();
        // SAFETY: the display and context were created by `new` and are released once.
        unsafe {
            (self.make_current)(self.display, none, none, none);
            (self.destroy_context)(self.display, self.context);
            (self.terminate)(self.display);
        }
    }
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

    /// The context the interop check uses: a buffer written by OpenGL reads back the same.
    #[test]
    fn a_headless_context_creates_and_reads_buffers() {
        // SAFETY: only opens and closes the library.
        if unsafe { Library::new("libEGL.so.1") }.is_err() {
            println!("SKIP: libEGL.so.1 is not installed");
            return;
        }
        let gl = HeadlessGl::new(0).expect("a context on EGL device 0");
        println!("GL renderer: {}", gl.renderer);
        let contents: Vec<u8> = (0..=255).collect();
        let buffer = gl.create_buffer(1024, &contents);
        assert_ne!(buffer, 0);
        let back = gl.read_buffer(buffer, 1024);
        assert_eq!(&back[..256], &contents[..]);
        assert!(back[256..].iter().all(|&b| b == 0));
        gl.delete_buffer(buffer);
    }
}
