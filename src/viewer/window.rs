//! The window front end: winit 0.30 [`ApplicationHandler`] + glutin (EGL, GL 3.3 core) + imgui,
//! letting the running simulation draw itself ([`crate::sims::Sim::draw`]) and feeding user
//! input to [`AppState`].

use super::state::AppState;
use crate::gfx::capture::{read_image, save_png};
use crate::gfx::context::WindowContext;
use crate::gfx::timing::PassClock;
use crate::gfx::Output;
use crate::sims::Backend;
use crate::viewer::keys;
use crate::viewer::panel::{self as ui, Action, FrameInfo, PanelMemory};
use anyhow::{anyhow, Context, Result};
use raw_window_handle::HasDisplayHandle;
use std::collections::HashSet;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::{ElementState, Event, KeyEvent, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{KeyCode, ModifiersState, PhysicalKey};
use winit::window::{Window, WindowId};

/// What `fluidlab view` opens.
#[derive(Clone, Debug, clap::Args)]
pub struct ViewerOptions {
    /// Preset name (any kind, see `fluidlab scenes`) or scene file path.
    #[arg(default_value = crate::scene::DEFAULT_SCENE)]
    pub scene: String,
    /// Solver: auto picks CUDA when an NVIDIA driver and GPU are present, else the CPU.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Close the window after N frames (exit status 0; tests, scripted screenshots).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::commands::MAX_COUNT))]
    pub exit_after_frames: Option<u64>,
    /// Save the view to FILE (a .png, checked before the window opens): at the last frame
    /// with --exit-after-frames, and on the screenshot key (instead of
    /// `fluidlab-screenshot-N.png`).
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<PathBuf>,
}

/// Opens the viewer and runs until the window closes.
pub fn run(options: ViewerOptions) -> Result<()> {
    if let Some(path) = &options.screenshot {
        check_screenshot(path)?;
    }
    let state = AppState::open(&options.scene, options.backend)?;
    let event_loop = EventLoop::new().map_err(|error| {
        // winit's OS errors start with the file and line of winit's source that raised them
        // (`os error at /…/winit-0.30.13/src/…/mod.rs:765: …`): the user gets the reason.
        let text = error.to_string();
        let reason = match text
            .strip_prefix("os error at ")
            .and_then(|rest| rest.split_once(": "))
        {
            Some((_, reason)) => reason.to_string(),
            None => text,
        };
        anyhow::anyhow!(
            "cannot connect to a display (is $DISPLAY or $WAYLAND_DISPLAY set? `fluidlab \
             render` works without one): {reason}"
        )
    })?;
    run_in(event_loop, options, state)
}

/// Refuses a `--screenshot` path the screenshot could not be written to, or that would
/// replace what is not a picture, before the window opens (not at the last frame, after the
/// session ran): a name not ending `.png`, a directory, a folder it cannot be written in.
fn check_screenshot(path: &std::path::Path) -> Result<()> {
    let shown = path.display();
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !png {
        anyhow::bail!("--screenshot {shown}: the screenshot is a PNG: name a .png file");
    }
    if path.is_dir() {
        anyhow::bail!("--screenshot {shown}: a directory, not a file");
    }
    crate::output::check_writable("--screenshot", path, false)
}

/// Runs the viewer on `state` in `event_loop` until the window closes (tests build both).
pub fn run_in(event_loop: EventLoop<()>, options: ViewerOptions, state: AppState) -> Result<()> {
    let mut viewer = Viewer {
        options,
        state,
        gfx: None,
        error: None,
        frames: 0,
        screenshots: 0,
        screenshot_requested: false,
        input: Input::default(),
        info: FrameInfo::default(),
        panel_memory: PanelMemory::default(),
        last_frame: Instant::now(),
        meter: Meter::new(),
    };
    event_loop
        .run_app(&mut viewer)
        .context("the window event loop failed")?;
    match viewer.error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Keyboard state between events (the mouse's is [`AppState::pointer`]).
#[derive(Default)]
struct Input {
    held: HashSet<KeyCode>,
    modifiers: ModifiersState,
}

/// Averages FPS and per-stage times over half-second windows.
struct Meter {
    started: Instant,
    frames: u32,
    stepped: u32,
}

impl Meter {
    fn new() -> Meter {
        Meter {
            started: Instant::now(),
            frames: 0,
            stepped: 0,
        }
    }
}

/// The GL side of the window (the simulation's renderer lives in the simulation, which lets
/// go of it first, in [`ApplicationHandler::exiting`]). Field order is drop order: GL objects
/// go before the context.
struct Gfx {
    imgui_renderer: imgui_glow_renderer::Renderer,
    textures: imgui_glow_renderer::SimpleTextureMap,
    platform: imgui_winit_support::WinitPlatform,
    imgui: imgui::Context,
    gl: Rc<glow::Context>,
    context: WindowContext,
    window: Window,
}

impl Drop for Gfx {
    fn drop(&mut self) {
        self.imgui_renderer.destroy(&self.gl);
    }
}

struct Viewer {
    options: ViewerOptions,
    state: AppState,
    gfx: Option<Gfx>,
    error: Option<anyhow::Error>,
    frames: u64,
    screenshots: u32,
    screenshot_requested: bool,
    input: Input,
    info: FrameInfo,
    panel_memory: PanelMemory,
    last_frame: Instant,
    meter: Meter,
}

fn create_gfx(event_loop: &ActiveEventLoop, state: &AppState) -> Result<Gfx> {
    let attributes = Window::default_attributes()
        .with_title(format!("fluidlab — {}", state.sim.scene_name()))
        .with_inner_size(LogicalSize::new(
            super::panel::WINDOW_SIZE.0,
            super::panel::WINDOW_SIZE.1,
        ));
    let window = event_loop
        .create_window(attributes)
        .context("cannot create the window")?;
    let raw_display = event_loop
        .display_handle()
        .context("no display handle")?
        .as_raw();
    let context = WindowContext::create(raw_display, &window)?;
    let gl = Rc::clone(&context.gl);
    let mut imgui = imgui::Context::create();
    imgui.set_ini_filename(None);
    let mut platform = imgui_winit_support::WinitPlatform::new(&mut imgui);
    platform.attach_window(
        imgui.io_mut(),
        &window,
        imgui_winit_support::HiDpiMode::Default,
    );
    let mut textures = imgui_glow_renderer::SimpleTextureMap::default();
    let imgui_renderer = imgui_glow_renderer::Renderer::new(&gl, &mut imgui, &mut textures, false)
        .map_err(|e| anyhow!("imgui renderer: {e}"))?;
    Ok(Gfx {
        imgui_renderer,
        textures,
        platform,
        imgui,
        gl,
        context,
        window,
    })
}

impl Viewer {
    fn fail(&mut self, event_loop: &ActiveEventLoop, error: anyhow::Error) {
        self.error.get_or_insert(error);
        event_loop.exit();
    }

    fn screenshot_path(&mut self) -> PathBuf {
        if let Some(path) = &self.options.screenshot {
            return path.clone();
        }
        // The next number no file has yet: an earlier session's screenshots stay.
        loop {
            self.screenshots += 1;
            let path = PathBuf::from(format!("fluidlab-screenshot-{}.png", self.screenshots));
            if std::fs::symlink_metadata(&path).is_err() {
                return path;
            }
        }
    }

    fn fly(&mut self, seconds: f32) {
        let (mut forward, mut right, mut up) = (0.0, 0.0, 0.0);
        for (key, f, r, u) in keys::FLY_KEYS {
            if self.input.held.contains(key) {
                forward += f;
                right += r;
                up += u;
            }
        }
        if forward == 0.0 && right == 0.0 && up == 0.0 {
            return;
        }
        let fast = if self.input.modifiers.shift_key() {
            4.0
        } else {
            1.0
        };
        let speed = 0.5 * self.state.camera.distance * fast * seconds;
        self.state
            .camera
            .fly(forward * speed, right * speed, up * speed);
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let now = Instant::now();
        let seconds = (now - self.last_frame).as_secs_f32();
        self.last_frame = now;
        self.fly(seconds);

        match self.state.advance() {
            Ok(stepped) => self.meter.stepped += u32::from(stepped),
            Err(error) => self.state.pause_after(&error),
        }
        let Some(gfx) = self.gfx.as_mut() else {
            return Ok(());
        };
        if self.state.sim_replaced {
            self.state
                .sim
                .attach_gl(Rc::clone(&gfx.gl), PassClock::GpuQueries)?;
            gfx.window
                .set_title(&format!("fluidlab — {}", self.state.sim.scene_name()));
            self.state.sim_replaced = false;
        }
        let size = gfx.window.inner_size();
        let covered = super::panel::covered(self.state.show_ui, gfx.window.scale_factor() as f32);
        self.state.sim.draw(
            &self.state.camera,
            Output {
                framebuffer: None,
                width: size.width,
                height: size.height,
                covered,
            },
        )?;

        self.frames += 1;
        let last_frame = self
            .options
            .exit_after_frames
            .is_some_and(|n| self.frames >= n);
        let scripted = last_frame && self.options.screenshot.is_some();
        if self.screenshot_requested || scripted {
            self.screenshot_requested = false;
            let image = read_image(&gfx.gl, None, size.width.max(1), size.height.max(1))?;
            let path = self.screenshot_path();
            save_png(&image, &path)?;
            let path = std::path::absolute(&path).unwrap_or(path);
            eprintln!("saved {}", path.display());
            self.info.last_screenshot = Some(path.display().to_string());
        }

        // Measurements for the panels, refreshed twice a second.
        self.meter.frames += 1;
        let elapsed = self.meter.started.elapsed().as_secs_f64();
        if elapsed >= 0.5 {
            self.info.fps = (self.meter.frames as f64 / elapsed) as f32;
            let sim = &mut self.state.sim;
            let per_frame = 1e3 / f64::from(self.meter.stepped.max(1));
            self.info.stage_ms = sim
                .stages()
                .iter()
                .zip(sim.stage_seconds())
                .map(|(&stage, seconds)| (stage, seconds * per_frame))
                .collect();
            sim.reset_stage_times();
            self.info.status = sim.status()?;
            self.meter = Meter::new();
        }
        let Some(gfx) = self.gfx.as_mut() else {
            return Ok(());
        };
        self.info.pass_ms = self
            .state
            .sim
            .pass_times()
            .into_iter()
            .map(|(pass, seconds)| (pass, seconds.map(|s| s * 1e3)))
            .collect();

        gfx.imgui
            .io_mut()
            .update_delta_time(std::time::Duration::from_secs_f32(seconds.max(1e-4)));
        gfx.platform
            .prepare_frame(gfx.imgui.io_mut(), &gfx.window)
            .map_err(|e| anyhow!("imgui frame: {e}"))?;
        let ui_frame = gfx.imgui.new_frame();
        let actions = ui::panels(
            ui_frame,
            &mut self.state,
            &self.info,
            &mut self.panel_memory,
        );
        gfx.platform.prepare_render(ui_frame, &gfx.window);
        let draw_data = gfx.imgui.render();
        gfx.imgui_renderer
            .render(&gfx.gl, &gfx.textures, draw_data)
            .map_err(|e| anyhow!("imgui render: {e}"))?;
        gfx.context.swap_buffers()?;

        for action in actions {
            self.perform(action, event_loop);
        }
        if last_frame {
            event_loop.exit();
        } else if let Some(gfx) = &self.gfx {
            gfx.window.request_redraw();
        }
        Ok(())
    }

    fn perform(&mut self, action: Action, event_loop: &ActiveEventLoop) {
        match action {
            Action::Edit(edit) => self.state.apply_or_report(edit),
            Action::Screenshot => self.screenshot_requested = true,
            Action::Quit => event_loop.exit(),
        }
    }

    fn mouse(&mut self, event: &WindowEvent) {
        let Some(gfx) = &self.gfx else { return };
        let captured = gfx.imgui.io().want_capture_mouse;
        let size = gfx.window.inner_size();
        let size = [size.width, size.height];
        match *event {
            WindowEvent::MouseInput { state, button, .. } => {
                let pressed = state == ElementState::Pressed;
                self.state.mouse_button(button, pressed, captured, size);
            }
            WindowEvent::CursorMoved { position, .. } => {
                self.state
                    .cursor_moved([position.x as f32, position.y as f32], size);
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 50.0,
                };
                self.state.wheel(steps, captured);
            }
            _ => {}
        }
    }

    fn key(&mut self, event: &KeyEvent, event_loop: &ActiveEventLoop) {
        let PhysicalKey::Code(code) = event.physical_key else {
            return;
        };
        if event.state == ElementState::Released {
            self.input.held.remove(&code);
            return;
        }
        let captured = self
            .gfx
            .as_ref()
            .is_some_and(|g| g.imgui.io().want_capture_keyboard);
        if captured {
            return;
        }
        self.input.held.insert(code);
        if event.repeat {
            return;
        }
        match keys::action_for_key(code, &self.state) {
            Some(action) => self.perform(action, event_loop),
            None => {
                self.state.key(code);
            }
        }
    }
}

impl ApplicationHandler for Viewer {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_some() {
            return;
        }
        match create_gfx(event_loop, &self.state) {
            Ok(gfx) => {
                gfx.window.request_redraw();
                self.gfx = Some(gfx);
                self.last_frame = Instant::now();
                // Simulate on the GPU that renders, so interop can share the particle buffer.
                if let Some(device) = crate::cuda::gl_device() {
                    if let Err(error) = self.state.use_cuda_device(device) {
                        self.fail(event_loop, error);
                    }
                }
            }
            Err(error) => self.fail(event_loop, error),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, id: WindowId, event: WindowEvent) {
        if let Some(gfx) = self.gfx.as_mut() {
            gfx.platform.handle_event::<()>(
                gfx.imgui.io_mut(),
                &gfx.window,
                &Event::WindowEvent {
                    window_id: id,
                    event: event.clone(),
                },
            );
        }
        match &event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(_) => {
                if let Some(gfx) = &self.gfx {
                    gfx.context.resize(&gfx.window);
                }
            }
            WindowEvent::ModifiersChanged(modifiers) => self.input.modifiers = modifiers.state(),
            WindowEvent::KeyboardInput { event, .. } => self.key(event, event_loop),
            WindowEvent::MouseInput { .. }
            | WindowEvent::CursorMoved { .. }
            | WindowEvent::MouseWheel { .. } => self.mouse(&event),
            WindowEvent::RedrawRequested => {
                if let Err(error) = self.redraw(event_loop) {
                    self.fail(event_loop, error);
                }
            }
            _ => {}
        }
    }

    /// The simulation lets go of its GL objects (and CUDA's hold on them) while the window's
    /// GL context is still current; only then does the GL side go.
    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        self.state.sim.release_gl();
        self.gfx = None;
    }
}
