//! Every OpenGL context of fluidlab, all through EGL: the EGL devices of the machine and which of
//! them is a CUDA device (`EGL_CUDA_DEVICE_NV`), a surfaceless OpenGL 3.3 core context made
//! current on the best of them ([`HeadlessContext`]: `fluidlab render`, the headless target and
//! `fluidlab doctor`'s EGL and interop checks, so doctor checks the context rendering uses), and
//! the viewer's window context ([`WindowContext`], EGL on X11 and Wayland alike).
//!
//! libEGL is loaded at run time (by glutin): a machine without it, or whose EGL cannot list
//! devices, gets [`GlUnavailable`], a normal condition callers report or work around.

use anyhow::{anyhow, Context as _, Result};
use glow::HasContext;
use glutin::api::egl::context::PossiblyCurrentContext;
use glutin::api::egl::device::Device;
use glutin::api::egl::display::Display;
use glutin::config::{Api, ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::display::{Display as WindowDisplay, DisplayApiPreference};
use glutin::error::ErrorKind;
use glutin::prelude::*;
use glutin::surface::{Surface, SurfaceAttributesBuilder, SwapInterval, WindowSurface};
use glutin_winit::GlWindow;
use raw_window_handle::{HasWindowHandle, RawDisplayHandle};
use std::fmt;
use std::num::NonZeroU32;
use std::rc::Rc;
use winit::window::Window;

/// No EGL library could be loaded, it cannot enumerate devices, or no device gives a context:
/// rendering is impossible here (as opposed to a failure while rendering). The CLI falls back to
/// simulating on this error; doctor reports it as a SKIP.
#[derive(Debug, thiserror::Error)]
#[error(
    "no usable EGL/OpenGL library ({reason}); install Debian's libegl1 libegl-mesa0 \
     libgl1-mesa-dri (scripts/setup.sh does) to render"
)]
pub struct GlUnavailable {
    /// What failed.
    pub reason: String,
}

/// `EGL_CUDA_DEVICE_NV` (EGL_NV_device_cuda): the CUDA ordinal of an EGL device.
const EGL_CUDA_DEVICE_NV: i32 = 0x323A;

/// One EGL device, as its driver describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EglDevice {
    /// Its index in `eglQueryDevicesEXT`'s list.
    pub index: usize,
    /// Renderer, vendor or DRM device file, whichever the driver reports.
    pub description: String,
    /// The CUDA ordinal of the GPU behind it, for devices with `EGL_NV_device_cuda`: a GL
    /// context on this device can share buffers with CUDA contexts on that GPU.
    pub cuda_ordinal: Option<usize>,
    /// Mesa's software rasteriser (llvmpipe), `EGL_MESA_device_software`.
    pub software: bool,
    vendor_nvidia: bool,
}

impl EglDevice {
    /// The order [`HeadlessContext::create`] tries devices in (lowest first): the CUDA device
    /// 0, where the solver runs by default and interop works; then the other NVIDIA devices;
    /// then any other hardware; Mesa's software device last.
    fn preference(&self) -> u8 {
        match self.cuda_ordinal {
            Some(0) => 0,
            Some(_) => 1,
            None if self.vendor_nvidia => 1,
            None if self.software => 3,
            None => 2,
        }
    }
}

impl fmt::Display for EglDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.index, self.description)?;
        match self.cuda_ordinal {
            Some(ordinal) => write!(f, " (CUDA device {ordinal})"),
            None => Ok(()),
        }
    }
}

/// The EGL devices of this machine in EGL's order, or why there are none to use.
pub fn devices() -> Result<Vec<EglDevice>, GlUnavailable> {
    Ok(query()?.into_iter().map(|(_, device)| device).collect())
}

/// The device [`HeadlessContext::create`] tries first (it moves on when that one refuses a
/// context).
pub fn preferred(devices: &[EglDevice]) -> Option<&EglDevice> {
    devices.iter().min_by_key(|device| device.preference())
}

/// glutin's handle and our description of every device.
fn query() -> Result<Vec<(Device, EglDevice)>, GlUnavailable> {
    let devices = Device::query_devices().map_err(|e| GlUnavailable {
        reason: match e.error_kind() {
            ErrorKind::NotFound => "libEGL.so.1 cannot be loaded".into(),
            _ => format!("EGL cannot list its devices: {e}"),
        },
    })?;
    Ok(devices
        .enumerate()
        .map(|(index, device)| {
            let extensions = device.extensions();
            let software = extensions.contains("EGL_MESA_device_software");
            let description = device
                .name()
                .or(device.vendor())
                .map(str::to_string)
                .or_else(|| {
                    device
                        .drm_device_node_path()
                        .map(|path| path.display().to_string())
                })
                .unwrap_or_else(|| {
                    if software {
                        "software renderer (Mesa)".into()
                    } else {
                        "unnamed device".into()
                    }
                });
            let info = EglDevice {
                index,
                description,
                cuda_ordinal: cuda_ordinal(&device),
                software,
                vendor_nvidia: device.vendor().is_some_and(|v| v.contains("NVIDIA")),
            };
            (device, info)
        })
        .collect())
}

/// The CUDA ordinal of an NVIDIA EGL device, when the driver exposes it.
fn cuda_ordinal(device: &Device) -> Option<usize> {
    if !device.extensions().contains("EGL_NV_device_cuda") {
        return None;
    }
    // A display is needed for the EGL function table. glutin never terminates displays, so
    // this one does not invalidate a context later made on the same device.
    // SAFETY: `device` comes from this EGL's own device list and outlives the display.
    let display = unsafe { Display::with_device(device, None) }.ok()?;
    let mut ordinal: glutin_egl_sys::egl::types::EGLAttrib = -1;
    // SAFETY: EGL_CUDA_DEVICE_NV query on a valid device handle into a local attribute.
    let ok = unsafe {
        display
            .egl()
            .QueryDeviceAttribEXT(device.raw_device(), EGL_CUDA_DEVICE_NV, &mut ordinal)
    };
    (ok != 0 && ordinal >= 0).then_some(ordinal as usize)
}

/// A current, surfaceless OpenGL 3.3 core context on one EGL device. Field order matters: the
/// context is released before the display.
pub struct HeadlessContext {
    /// The GL function table.
    pub gl: Rc<glow::Context>,
    device: EglDevice,
    description: String,
    _context: PossiblyCurrentContext,
    display: Display,
}

impl HeadlessContext {
    /// Creates the context on the first device, in [`preferred`] order, that accepts one and
    /// makes it current on this thread. Fails with [`GlUnavailable`] when there is no EGL or
    /// no device gives a context.
    pub fn create() -> Result<HeadlessContext> {
        let mut devices = query()?;
        if devices.is_empty() {
            return Err(GlUnavailable {
                reason: "EGL lists no devices".into(),
            }
            .into());
        }
        devices.sort_by_key(|(_, info)| info.preference());
        let mut failures = Vec::new();
        for (device, info) in devices {
            match Self::on_device(device, info) {
                Ok(context) => return Ok(context),
                Err((info, error)) => failures.push(format!("EGL device {info}: {error:#}")),
            }
        }
        Err(GlUnavailable {
            reason: format!(
                "no EGL device gives a GL 3.3 core context: {}",
                failures.join("; ")
            ),
        }
        .into())
    }

    fn on_device(
        device: Device,
        info: EglDevice,
    ) -> Result<HeadlessContext, (EglDevice, anyhow::Error)> {
        match Self::current_on(&device) {
            Ok((display, context, gl)) => {
                // SAFETY: the context was just made current on this thread.
                let renderer = unsafe { gl.get_parameter_string(glow::RENDERER) };
                Ok(HeadlessContext {
                    gl: Rc::new(gl),
                    description: format!("EGL device {info}, GL renderer {renderer}"),
                    device: info,
                    _context: context,
                    display,
                })
            }
            Err(error) => Err((info, error)),
        }
    }

    fn current_on(device: &Device) -> Result<(Display, PossiblyCurrentContext, glow::Context)> {
        let display =
            // SAFETY: `device` comes from this EGL's own device list and outlives the display.
            unsafe { Display::with_device(device, None) }.context("eglGetPlatformDisplay")?;
        let template = ConfigTemplateBuilder::new()
            .with_api(Api::OPENGL)
            .with_surface_type(ConfigSurfaceTypes::empty())
            .build();
        // SAFETY: the display is initialised; the template is a plain attribute list.
        let config = unsafe { display.find_configs(template) }
            .context("eglChooseConfig")?
            .next()
            .ok_or_else(|| anyhow!("no OpenGL config"))?;
        let attributes = ContextAttributesBuilder::new()
            .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
            .with_profile(GlProfile::Core)
            .build(None);
        // SAFETY: `config` belongs to this display.
        let context = unsafe { display.create_context(&config, &attributes) }
            .context("creating a GL 3.3 core context")?
            .make_current_surfaceless()
            .context(
                "making the context current without a surface (EGL_KHR_surfaceless_context)",
            )?;
        // SAFETY: the functions come from this display's EGL for the context made current above.
        let gl = unsafe {
            glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name).cast())
        };
        Ok((display, context, gl))
    }

    /// `parameter` (`GL_TEXTURE_WIDTH`, `GL_TEXTURE_INTERNAL_FORMAT`, …) of `texture`'s
    /// `level`, as GL reports it (`glGetTexLevelParameteriv`, which glow does not wrap); 0 for
    /// a level never allocated, `None` where EGL does not give the function.
    pub fn texture_level_parameter(
        &self,
        texture: glow::Texture,
        level: i32,
        parameter: u32,
    ) -> Option<i32> {
        type GetTexLevelParameteriv = unsafe extern "system" fn(u32, i32, u32, *mut i32);
        let address = self.display.get_proc_address(c"glGetTexLevelParameteriv");
        if address.is_null() {
            return None;
        }
        // SAFETY: the address is EGL's glGetTexLevelParameteriv, of this signature; the context
        // is current on this thread and `texture` one of its 2D textures.
        unsafe {
            let get: GetTexLevelParameteriv = std::mem::transmute(address);
            let mut value = 0;
            self.gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            get(glow::TEXTURE_2D, level, parameter, &mut value);
            self.gl.bind_texture(glow::TEXTURE_2D, None);
            Some(value)
        }
    }

    /// The EGL device the context is on.
    pub fn device(&self) -> &EglDevice {
        &self.device
    }

    /// The EGL device and the GL renderer, for logs and reports.
    pub fn description(&self) -> &str {
        &self.description
    }
}

/// A window's OpenGL 3.3 core context, current, with its surface (vsync where offered). Field
/// order is drop order: the surface and context go before the display.
pub struct WindowContext {
    /// The GL function table.
    pub gl: Rc<glow::Context>,
    surface: Surface<WindowSurface>,
    context: glutin::context::PossiblyCurrentContext,
    _display: WindowDisplay,
}

impl WindowContext {
    /// Creates the context for `window` on the display `raw_display` (the window's event
    /// loop's) and makes it current.
    pub fn create(raw_display: RawDisplayHandle, window: &Window) -> Result<WindowContext> {
        let raw_window = window.window_handle().context("no window handle")?.as_raw();
        // EGL on both X11 and Wayland: Mesa and NVIDIA ship it, and it needs no X visual
        // matching.
        // SAFETY: `raw_display` is the live window's display, which outlives the EGL display
        // (both belong to the viewer).
        let display = unsafe { WindowDisplay::new(raw_display, DisplayApiPreference::Egl) }
            .context("cannot open EGL on this display (install libegl1 libegl-mesa0)")?;
        let template = ConfigTemplateBuilder::new()
            .compatible_with_native_window(raw_window)
            .build();
        // SAFETY: the display is initialised; the template is a plain attribute list.
        let config = unsafe { display.find_configs(template) }
            .context("eglChooseConfig")?
            .next()
            .ok_or_else(|| anyhow!("the display offers no OpenGL framebuffer configuration"))?;
        let context_attributes = ContextAttributesBuilder::new()
            .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
            .with_profile(GlProfile::Core)
            .build(Some(raw_window));
        // SAFETY: `config` belongs to this display; `raw_window` is the live window.
        let not_current = unsafe { display.create_context(&config, &context_attributes) }
            .context("cannot create an OpenGL 3.3 core context")?;
        let size = window.inner_size();
        let surface_attributes = SurfaceAttributesBuilder::<WindowSurface>::new().build(
            raw_window,
            NonZeroU32::new(size.width.max(1)).unwrap_or(NonZeroU32::MIN),
            NonZeroU32::new(size.height.max(1)).unwrap_or(NonZeroU32::MIN),
        );
        // SAFETY: `config` belongs to this display; the attributes name the live window.
        let surface = unsafe { display.create_window_surface(&config, &surface_attributes) }
            .context("cannot create the window surface")?;
        let context = not_current
            .make_current(&surface)
            .context("cannot make the GL context current")?;
        // Vsync where offered; the viewer still runs without it.
        let _ = surface.set_swap_interval(&context, SwapInterval::Wait(NonZeroU32::MIN));
        // SAFETY: the functions come from this display's EGL for the context made current
        // above.
        let gl = Rc::new(unsafe {
            glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name).cast())
        });
        Ok(WindowContext {
            gl,
            surface,
            context,
            _display: display,
        })
    }

    /// Shows the frame drawn.
    pub fn swap_buffers(&self) -> Result<()> {
        self.surface
            .swap_buffers(&self.context)
            .context("swapping buffers")
    }

    /// Resizes the surface to the window's size.
    pub fn resize(&self, window: &Window) {
        window.resize_surface(&self.surface, &self.context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(index: usize, cuda_ordinal: Option<usize>, software: bool) -> EglDevice {
        EglDevice {
            index,
            description: format!("device {index}"),
            cuda_ordinal,
            software,
            vendor_nvidia: cuda_ordinal.is_some(),
        }
    }

    /// The headless context goes to CUDA device 0 before any other GPU and to Mesa's software
    /// device last, whatever EGL's order.
    #[test]
    fn the_cuda_device_is_preferred_and_software_comes_last() {
        let devices = [
            device(0, None, true),
            device(1, None, false),
            device(2, Some(1), false),
            device(3, Some(0), false),
        ];
        assert_eq!(preferred(&devices).map(|d| d.index), Some(3));
        assert_eq!(preferred(&devices[..2]).map(|d| d.index), Some(1));
        assert_eq!(devices[3].to_string(), "3: device 3 (CUDA device 0)");
        assert_eq!(devices[0].to_string(), "0: device 0");
    }

    /// Every device is listed with its index, and the context made on the preferred one reads
    /// back what GL wrote. Needs libEGL, as every rendering test does (scripts/setup.sh installs
    /// Mesa's).
    #[test]
    fn devices_are_listed_and_a_context_reads_back_its_buffers() {
        let listed = devices().unwrap_or_else(|unavailable| panic!("{unavailable}"));
        println!("{listed:?}");
        assert!(!listed.is_empty());
        assert!(listed.iter().enumerate().all(|(k, d)| d.index == k));
        let context = HeadlessContext::create().expect("a context on a listed device");
        println!("{}", context.description());
        assert!(listed.contains(context.device()));
        let contents: Vec<u8> = (0..=255).collect();
        let gl = &context.gl;
        // SAFETY: GL calls on the context made current above; `back` holds the bytes read.
        let back = unsafe {
            let buffer = gl.create_buffer().expect("a buffer");
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &contents, glow::STATIC_DRAW);
            let mut back = vec![0u8; contents.len()];
            gl.get_buffer_sub_data(glow::ARRAY_BUFFER, 0, &mut back);
            gl.delete_buffer(buffer);
            back
        };
        assert_eq!(back, contents);
    }
}
