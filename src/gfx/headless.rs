//! The headless front end: an OpenGL 3.3 core context with no window (EGL device platform,
//! surfaceless context), an offscreen colour target, and the shared [`Renderer`].

use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use crate::sims::pbf::render::{
    read_image, Buffer, Camera, Image, Output, PassClock, RenderSettings, Renderer,
};
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::Solver;
use anyhow::{anyhow, Context, Result};
use glow::HasContext;
use glutin::api::egl::context::PossiblyCurrentContext;
use glutin::api::egl::device::Device;
use glutin::api::egl::display::Display;
use glutin::config::{Api, ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::prelude::*;
use std::rc::Rc;

/// No EGL library could be loaded or it cannot enumerate devices: rendering is impossible here
/// (as opposed to a failure while rendering). The CLI falls back to simulating on this error.
#[derive(Debug, thiserror::Error)]
#[error(
    "no usable EGL/OpenGL library ({reason}); install Debian's libegl1 libegl-mesa0 \
     libgl1-mesa-dri (scripts/setup.sh does) to render"
)]
pub struct GlUnavailable {
    /// What failed.
    pub reason: String,
}

/// A current, surfaceless GL 3.3 core context. Field order matters: the context is released
/// before the display.
pub struct HeadlessGl {
    /// The GL function table.
    pub gl: Rc<glow::Context>,
    /// Which EGL device was chosen and why, and the GL renderer string.
    pub description: String,
    _context: PossiblyCurrentContext,
    _display: Display,
}

/// `EGL_CUDA_DEVICE_NV` (EGL_NV_device_cuda): the CUDA ordinal of an EGL device.
const EGL_CUDA_DEVICE_NV: i32 = 0x323A;

/// The EGL devices in the order they are tried, each with a note saying why.
///
/// NVIDIA selection (EGL_NV_device_cuda): the device whose CUDA ordinal is 0 comes first, so
/// the GL context sits on the GPU the CUDA solver uses and interop can work; then the other
/// NVIDIA devices (by CUDA ordinal or vendor string); then any other hardware device; Mesa's
/// software device (llvmpipe) last. Devices that refuse a context are skipped.
fn ordered_devices() -> Result<Vec<(Device, String)>, GlUnavailable> {
    let devices: Vec<Device> = Device::query_devices()
        .map_err(|e| GlUnavailable {
            reason: e.to_string(),
        })?
        .collect();
    let mut ranked: Vec<(u8, Device, String)> = devices
        .into_iter()
        .map(|device| {
            let name = device
                .name()
                .or(device.vendor())
                .unwrap_or("unnamed device");
            if let Some(ordinal) = cuda_ordinal(&device) {
                let rank = if ordinal == 0 { 0 } else { 1 };
                return (rank, device, format!("{name} (CUDA device {ordinal})"));
            }
            let nvidia = device.vendor().is_some_and(|v| v.contains("NVIDIA"));
            if nvidia {
                (1, device, format!("{name} (NVIDIA)"))
            } else if device.extensions().contains("EGL_MESA_device_software") {
                (3, device, format!("{name} (software)"))
            } else {
                (2, device, name.to_string())
            }
        })
        .collect();
    ranked.sort_by_key(|(rank, _, _)| *rank);
    Ok(ranked
        .into_iter()
        .map(|(_, device, note)| (device, note))
        .collect())
}

/// The CUDA ordinal of an NVIDIA EGL device, when the driver exposes it.
fn cuda_ordinal(device: &Device) -> Option<i64> {
    if !device.extensions().contains("EGL_NV_device_cuda") {
        return None;
    }
    // A display is needed for the EGL function table; creating it is cheap.
    // SAFETY: `device` comes from this EGL's own device list and outlives the display.
    let display = unsafe { Display::with_device(device, None) }.ok()?;
    let mut ordinal: glutin_egl_sys::egl::types::EGLAttrib = -1;
    // SAFETY: EGL_CUDA_DEVICE_NV query on a valid device handle into a local attribute.
    let ok = unsafe {
        display
            .egl()
            .QueryDeviceAttribEXT(device.raw_device(), EGL_CUDA_DEVICE_NV, &mut ordinal)
    };
    (ok != 0 && ordinal >= 0).then_some(ordinal as i64)
}

impl HeadlessGl {
    /// Creates the context on the best EGL device that accepts one. Fails with
    /// [`GlUnavailable`] when no EGL library is present.
    pub fn create() -> Result<HeadlessGl> {
        let devices = ordered_devices()?;
        if devices.is_empty() {
            return Err(GlUnavailable {
                reason: "EGL lists no devices".into(),
            }
            .into());
        }
        let mut failures = Vec::new();
        for (device, note) in devices {
            match Self::on_device(&device) {
                Ok((display, context, gl)) => {
                    // SAFETY: the context was just made current on this thread.
                    let renderer = unsafe { gl.get_parameter_string(glow::RENDERER) };
                    return Ok(HeadlessGl {
                        gl: Rc::new(gl),
                        description: format!("EGL device {note}, GL renderer {renderer}"),
                        _context: context,
                        _display: display,
                    });
                }
                Err(error) => failures.push(format!("{note}: {error:#}")),
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

    fn on_device(device: &Device) -> Result<(Display, PossiblyCurrentContext, glow::Context)> {
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
}

/// Headless rendering of frames to images: the renderer and an offscreen colour target.
pub struct HeadlessRenderer {
    /// The shared renderer.
    pub renderer: Renderer,
    target: TextureTarget,
    width: u32,
    height: u32,
    gl: HeadlessGl,
}

impl HeadlessRenderer {
    /// A `width` × `height` renderer for `scene`.
    pub fn new(
        scene: &Scene,
        width: u32,
        height: u32,
        clock: PassClock,
    ) -> Result<HeadlessRenderer> {
        let gl = HeadlessGl::create()?;
        let renderer = Renderer::new(Rc::clone(&gl.gl), scene, clock)?;
        let target = TextureTarget::new(
            &gl.gl,
            width as i32,
            height as i32,
            ColorFormat::RGBA8,
            Depth::Renderbuffer,
        )?;
        Ok(HeadlessRenderer {
            renderer,
            target,
            width,
            height,
            gl,
        })
    }

    /// The EGL device and GL renderer in use.
    pub fn description(&self) -> &str {
        &self.gl.description
    }

    /// Uploads the solver's particles and renders one frame to an image.
    pub fn render(
        &mut self,
        solver: &mut dyn Solver,
        camera: &Camera,
        settings: &RenderSettings,
    ) -> Result<Image> {
        self.renderer.update_particles(solver, settings.view)?;
        self.renderer.draw(
            camera,
            settings,
            Output {
                framebuffer: Some(self.target.framebuffer),
                width: self.width,
                height: self.height,
            },
        )?;
        let image = read_image(
            &self.gl.gl,
            Some(self.target.framebuffer),
            self.width,
            self.height,
        );
        crate::sims::pbf::render::check_gl(&self.gl.gl, "image read-back")?;
        Ok(image)
    }

    /// An intermediate buffer of the last frame (see [`Renderer::read_buffer`]).
    pub fn read_buffer(&self, buffer: Buffer) -> Result<Vec<f32>> {
        self.renderer.read_buffer(buffer)
    }
}

impl Drop for HeadlessRenderer {
    fn drop(&mut self) {
        self.target.delete(&self.gl.gl);
    }
}
