//! The screen-space fluid renderer (van der Laan, Green & Sainz 2009, with the narrow-range
//! filter of Truong & Yuksel 2018 as an option), shared by the window and headless rendering.
//!
//! A frame of the fluid view runs these passes, each with a shader of the same name in
//! `shaders/` and a method of the same name on [`Renderer`]:
//!
//! | pass | draws | into |
//! |---|---|---|
//! | `scene` | sky, floor, container walls and edges, obstacles | scene colour + depth |
//! | `sphere_depth` | particles as sphere sprites, nearest surface | eye depth (R32F) |
//! | `thickness` | the same sprites, additive | thickness (R32F) |
//! | `smooth_depth` | N iterations of the bilateral or narrow-range filter | smoothed depth |
//! | `normals` | normals from the smoothed depth | eye normals (RGBA32F) |
//! | `composite` | Fresnel, reflection, refraction, absorption, specular | the output |
//!
//! The `particles` debug view draws lit spheres into the scene buffers and copies them out
//! (`present`); the buffer views show one intermediate buffer (`debug_view`).

pub mod scene_mesh;

pub use crate::gfx::camera::Camera;
pub use crate::gfx::targets::{read_image, save_png, Image};
pub use crate::gfx::timing::PassClock;
use crate::gfx::{program, skybox, targets, timing};

use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::{RenderScalar, Solver};
use anyhow::{anyhow, bail, Result};
use glam::{Mat3, Vec2, Vec3};
use glow::HasContext;
use program::{shader, Program};
use scene_mesh::Mesh;
use std::rc::Rc;
use targets::{ColorFormat, Depth, TextureTarget};
use timing::PassTimer;

/// What the renderer shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// The shaded fluid surface.
    Fluid,
    /// Particles as lit spheres coloured by speed.
    Particles,
    /// Particles as lit spheres coloured by density.
    Density,
    /// The `sphere_depth` buffer.
    Depth,
    /// The `smooth_depth` buffer.
    SmoothedDepth,
    /// The `thickness` buffer.
    Thickness,
    /// The `normals` buffer.
    Normals,
}

impl View {
    /// Every view, in menu order.
    pub const ALL: [View; 7] = [
        View::Fluid,
        View::Particles,
        View::Density,
        View::Depth,
        View::SmoothedDepth,
        View::Thickness,
        View::Normals,
    ];

    /// Label in the UI and the CLI (`--view`).
    pub fn name(self) -> &'static str {
        match self {
            View::Fluid => "fluid",
            View::Particles => "particles",
            View::Density => "density",
            View::Depth => "depth",
            View::SmoothedDepth => "smoothed-depth",
            View::Thickness => "thickness",
            View::Normals => "normals",
        }
    }
}

/// The depth filter of the `smooth_depth` pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmoothingFilter {
    /// Bilateral: spatial × range Gaussian.
    Bilateral,
    /// Narrow-range filter (Truong & Yuksel 2018).
    NarrowRange,
}

impl SmoothingFilter {
    /// Label in the UI.
    pub fn name(self) -> &'static str {
        match self {
            SmoothingFilter::Bilateral => "bilateral",
            SmoothingFilter::NarrowRange => "narrow-range",
        }
    }
}

/// Everything the user can change about the picture.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSettings {
    /// What to show.
    pub view: View,
    /// Iterations of the `smooth_depth` filter (0 = none).
    pub smoothing_iterations: u32,
    /// Which filter `smooth_depth` runs.
    pub smoothing_filter: SmoothingFilter,
    /// Colour the fluid takes where it is thick (linear RGB 0..1).
    pub fluid_color: [f32; 3],
    /// Beer–Lambert attenuation per RGB channel, 1/m.
    pub attenuation: [f32; 3],
    /// Refraction index n (water 1.33); sets Fresnel F0 and the refraction offset.
    pub refraction_index: f32,
    /// Point-sprite radius as a multiple of the particle radius (half the spacing).
    pub point_size: f32,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            view: View::Fluid,
            smoothing_iterations: 4,
            smoothing_filter: SmoothingFilter::NarrowRange,
            fluid_color: [0.02, 0.28, 0.52],
            attenuation: [4.0, 1.4, 0.6],
            refraction_index: 1.33,
            point_size: 1.3,
        }
    }
}

/// One render pass; its name is the shader's and the method's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Sky, floor, container, obstacles.
    Scene,
    /// Nearest sphere depth.
    SphereDepth,
    /// Additive thickness.
    Thickness,
    /// Depth filtering.
    SmoothDepth,
    /// Normals from depth.
    Normals,
    /// Fluid shading over the scene.
    Composite,
    /// Debug view: lit particle spheres.
    Particles,
    /// Copies the scene buffer to the output (particles view).
    Present,
    /// Debug view: one buffer.
    DebugView,
}

impl Pass {
    /// Every pass in execution order.
    pub const ALL: [Pass; 9] = [
        Pass::Scene,
        Pass::SphereDepth,
        Pass::Thickness,
        Pass::SmoothDepth,
        Pass::Normals,
        Pass::Composite,
        Pass::Particles,
        Pass::Present,
        Pass::DebugView,
    ];

    /// The pass's name (shader file stem, docs, UI).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Scene => "scene",
            Pass::SphereDepth => "sphere_depth",
            Pass::Thickness => "thickness",
            Pass::SmoothDepth => "smooth_depth",
            Pass::Normals => "normals",
            Pass::Composite => "composite",
            Pass::Particles => "particles",
            Pass::Present => "present",
            Pass::DebugView => "debug_view",
        }
    }
}

/// An intermediate buffer that can be read back (tests, tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// `sphere_depth` output: eye distance along −z, metres (0 = no fluid).
    Depth,
    /// `smooth_depth` output, metres (0 = no fluid).
    SmoothedDepth,
    /// `thickness` output, metres.
    Thickness,
    /// `normals` output: xyz eye-space normal, w 1 inside the fluid and 0 elsewhere.
    Normals,
}

/// Where a frame goes: a framebuffer (`None`: the window's) of a size in pixels.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    /// Target framebuffer; `None` is the default framebuffer.
    pub framebuffer: Option<glow::Framebuffer>,
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
}

struct Programs {
    scene: Program,
    skybox: Program,
    sphere_depth: Program,
    thickness: Program,
    particles: Program,
    smooth_depth: Program,
    normals: Program,
    composite: Program,
    present: Program,
    debug_view: Program,
}

impl Programs {
    fn new(gl: &glow::Context) -> Result<Programs> {
        Ok(Programs {
            scene: Program::new(gl, &shader!("scene", "scene.vert", "scene.frag"))?,
            skybox: Program::new(gl, &shader!("skybox", "skybox.vert", "skybox.frag"))?,
            sphere_depth: Program::new(
                gl,
                &shader!("sphere_depth", "particle_sprite.vert", "sphere_depth.frag"),
            )?,
            thickness: Program::new(
                gl,
                &shader!("thickness", "particle_sprite.vert", "thickness.frag"),
            )?,
            particles: Program::new(
                gl,
                &shader!("particles", "particle_sprite.vert", "particles.frag"),
            )?,
            smooth_depth: Program::new(
                gl,
                &shader!("smooth_depth", "fullscreen.vert", "smooth_depth.frag"),
            )?,
            normals: Program::new(gl, &shader!("normals", "fullscreen.vert", "normals.frag"))?,
            composite: Program::new(
                gl,
                &shader!("composite", "fullscreen.vert", "composite.frag"),
            )?,
            present: Program::new(gl, &shader!("present", "fullscreen.vert", "present.frag"))?,
            debug_view: Program::new(
                gl,
                &shader!("debug_view", "fullscreen.vert", "debug_view.frag"),
            )?,
        })
    }

    fn delete(&self, gl: &glow::Context) {
        for program in [
            &self.scene,
            &self.skybox,
            &self.sphere_depth,
            &self.thickness,
            &self.particles,
            &self.smooth_depth,
            &self.normals,
            &self.composite,
            &self.present,
            &self.debug_view,
        ] {
            program.delete(gl);
        }
    }
}

/// The viewport-sized buffers of the passes.
struct Targets {
    width: i32,
    height: i32,
    scene: TextureTarget,
    sphere_depth: TextureTarget,
    thickness: TextureTarget,
    smoothing: [TextureTarget; 2],
    normals: TextureTarget,
}

impl Targets {
    fn new(gl: &glow::Context, width: i32, height: i32) -> Result<Targets> {
        let scene = TextureTarget::new(gl, width, height, ColorFormat::RGBA8, Depth::Texture)?;
        let sphere_depth =
            TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::Renderbuffer)?;
        let thickness = TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::None)?;
        // The thickness pass is depth-tested (not written) against the scene, so solids in
        // front hide the fluid behind them.
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(thickness.framebuffer));
            gl.framebuffer_texture_2d(
                glow::FRAMEBUFFER,
                glow::DEPTH_ATTACHMENT,
                glow::TEXTURE_2D,
                scene.depth_texture(),
                0,
            );
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        }
        Ok(Targets {
            width,
            height,
            scene,
            sphere_depth,
            thickness,
            smoothing: [
                TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::None)?,
                TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::None)?,
            ],
            normals: TextureTarget::new(gl, width, height, ColorFormat::RGBA32F, Depth::None)?,
        })
    }

    fn delete(&self, gl: &glow::Context) {
        self.scene.delete(gl);
        self.sphere_depth.delete(gl);
        self.thickness.delete(gl);
        for target in &self.smoothing {
            target.delete(gl);
        }
        self.normals.delete(gl);
    }
}

/// Per-frame values every pass needs.
struct FrameSetup {
    view: glam::Mat4,
    projection: glam::Mat4,
    clip_planes: (f32, f32),
    sprite_radius: f32,
    width: i32,
    height: i32,
    eye_distance: f32,
    eye_position: Vec3,
}

/// The renderer: programs, the sky, scene meshes, the particle buffer and the pass targets.
pub struct Renderer {
    gl: Rc<glow::Context>,
    programs: Programs,
    skybox: glow::Texture,
    empty_vertex_array: glow::VertexArray,
    particle_array: glow::VertexArray,
    particle_buffer: glow::Buffer,
    particle_capacity: usize,
    particle_count: usize,
    particle_scratch: Vec<[f32; 4]>,
    max_speed: f32,
    rest_density: f32,
    interop: Option<bool>,
    meshes: Vec<Mesh>,
    particle_radius: f32,
    particle_volume: f32,
    container_diagonal: f32,
    targets: Targets,
    smoothed: usize,
    timer: PassTimer,
    passes_run: Vec<Pass>,
}

impl Renderer {
    /// Compiles the shaders, generates the sky and builds `scene`'s meshes. `clock` chooses
    /// how pass times are measured.
    pub fn new(gl: Rc<glow::Context>, scene: &Scene, clock: PassClock) -> Result<Renderer> {
        let programs = Programs::new(&gl)?;
        let skybox = skybox::create_cubemap(&gl)?;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        let (empty_vertex_array, particle_array, particle_buffer) = unsafe {
            let empty = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let particles = gl
                .create_vertex_array()
                .map_err(|e| anyhow!("vertex array: {e}"))?;
            let buffer = gl.create_buffer().map_err(|e| anyhow!("buffer: {e}"))?;
            gl.bind_vertex_array(Some(particles));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 4, glow::FLOAT, false, 16, 0);
            gl.bind_vertex_array(None);
            (empty, particles, buffer)
        };
        // Resized to the output by the first draw.
        let targets = Targets::new(&gl, 1, 1)?;
        let mut renderer = Renderer {
            gl,
            programs,
            skybox,
            empty_vertex_array,
            particle_array,
            particle_buffer,
            particle_capacity: 0,
            particle_count: 0,
            particle_scratch: Vec::new(),
            max_speed: 1.0,
            rest_density: 1000.0,
            interop: None,
            meshes: Vec::new(),
            particle_radius: 0.01,
            particle_volume: 1e-6,
            container_diagonal: 1.0,
            targets,
            smoothed: usize::MAX,
            timer: PassTimer::new(clock),
            passes_run: Vec::new(),
        };
        renderer.set_scene(scene)?;
        check_gl(&renderer.gl, "renderer set-up")?;
        Ok(renderer)
    }

    /// Rebuilds the scene meshes and particle size for `scene` (after a restart or a load).
    pub fn set_scene(&mut self, scene: &Scene) -> Result<()> {
        for mesh in self.meshes.drain(..) {
            mesh.delete(&self.gl);
        }
        self.meshes = scene_mesh::build(&self.gl, scene)?;
        self.particle_radius = scene.params.particle_radius();
        self.particle_volume = scene.params.spacing.powi(3);
        self.container_diagonal = scene.container.size().length();
        self.max_speed = (2.0 * 9.81 * scene.container.size().y).sqrt();
        self.rest_density = scene.params.rest_density;
        Ok(())
    }

    /// Copies the solver's particles into the particle buffer: through the solver's own GL
    /// path (CUDA–GL interop) when it has one, else with `glBufferSubData`. The records' fourth
    /// lane carries what `view` colours by (density for the density view, else speed).
    pub fn update_particles(&mut self, solver: &mut dyn Solver, view: View) -> Result<()> {
        let scalar = if view == View::Density {
            RenderScalar::Density
        } else {
            RenderScalar::Speed
        };
        let count = solver.particle_count();
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.particle_buffer));
            if count > self.particle_capacity {
                gl.buffer_data_size(glow::ARRAY_BUFFER, (count * 16) as i32, glow::DYNAMIC_DRAW);
                self.particle_capacity = count;
            }
        }
        let written = solver
            .write_gl_buffer(self.particle_buffer.0.get(), scalar)
            .map_err(|e| anyhow!("writing particles into the GL buffer: {e}"))?;
        self.interop = Some(written);
        if !written {
            solver
                .render_positions(scalar, &mut self.particle_scratch)
                .map_err(|e| anyhow!("reading particles back for drawing: {e}"))?;
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.particle_buffer));
                gl.buffer_sub_data_u8_slice(
                    glow::ARRAY_BUFFER,
                    0,
                    bytemuck::cast_slice(&self.particle_scratch),
                );
            }
        }
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.bind_buffer(glow::ARRAY_BUFFER, None) };
        self.particle_count = count;
        check_gl(&self.gl, "particle upload")
    }

    /// The records of the last upload as OpenGL holds them in the particle buffer (xyz, then
    /// the scalar the view colours by): what the passes draw, whichever path wrote them.
    pub fn read_particles(&self) -> Result<Vec<[f32; 4]>> {
        let mut records = vec![[0f32; 4]; self.particle_count];
        // SAFETY: GL calls on this thread's current context; the buffer holds at least
        // `particle_count` records (it grows before every upload) and `records` that many.
        unsafe {
            self.gl
                .bind_buffer(glow::ARRAY_BUFFER, Some(self.particle_buffer));
            self.gl.get_buffer_sub_data(
                glow::ARRAY_BUFFER,
                0,
                bytemuck::cast_slice_mut(&mut records),
            );
            self.gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
        check_gl(&self.gl, "particle read-back")?;
        Ok(records)
    }

    /// Whether the last upload went through interop (`None` before the first upload).
    pub fn interop(&self) -> Option<bool> {
        self.interop
    }

    /// Seconds of each pass in the latest measured frame (`None`: not run, or its timer-query
    /// result has not arrived yet).
    pub fn pass_times(&self) -> Vec<(Pass, Option<f64>)> {
        self.timer.latest()
    }

    /// Draws one frame of `settings.view` seen by `camera` into `output`. Checks `glGetError`
    /// after every pass and fails naming the pass.
    pub fn draw(
        &mut self,
        camera: &Camera,
        settings: &RenderSettings,
        output: Output,
    ) -> Result<()> {
        let width = output.width.max(1) as i32;
        let height = output.height.max(1) as i32;
        if self.targets.width != width || self.targets.height != height {
            let resized = Targets::new(&self.gl, width, height)?;
            std::mem::replace(&mut self.targets, resized).delete(&self.gl);
        }
        let frame = FrameSetup {
            view: camera.view(),
            projection: camera.projection(width as f32 / height as f32),
            clip_planes: camera.clip_planes(),
            sprite_radius: self.particle_radius * settings.point_size,
            width,
            height,
            eye_distance: camera.distance,
            eye_position: camera.eye(),
        };
        self.passes_run.clear();
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            let gl = &self.gl;
            gl.disable(glow::BLEND);
            gl.disable(glow::CULL_FACE);
            gl.disable(glow::SCISSOR_TEST);
            gl.enable(glow::PROGRAM_POINT_SIZE);
            gl.depth_mask(true);
            gl.color_mask(true, true, true, true);
            gl.viewport(0, 0, width, height);
        }
        self.run(Pass::Scene, |r| r.scene(&frame))?;
        match settings.view {
            View::Particles | View::Density => {
                let view = settings.view;
                self.run(Pass::Particles, |r| r.particles(&frame, view))?;
                self.run(Pass::Present, |r| r.present(output))?;
            }
            view => {
                self.run(Pass::SphereDepth, |r| r.sphere_depth(&frame))?;
                self.run(Pass::Thickness, |r| r.thickness(&frame))?;
                self.run(Pass::SmoothDepth, |r| r.smooth_depth(&frame, settings))?;
                self.run(Pass::Normals, |r| r.normals(&frame))?;
                if view == View::Fluid {
                    self.run(Pass::Composite, |r| r.composite(&frame, settings, output))?;
                } else {
                    self.run(Pass::DebugView, |r| r.debug_view(&frame, view, output))?;
                }
            }
        }
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            self.gl.bind_vertex_array(None);
            self.gl.use_program(None);
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
        }
        let passes_run = std::mem::take(&mut self.passes_run);
        self.timer.end_frame(&self.gl, &passes_run);
        self.passes_run = passes_run;
        Ok(())
    }

    fn run(&mut self, pass: Pass, body: impl FnOnce(&mut Renderer)) -> Result<()> {
        let gl = Rc::clone(&self.gl);
        self.timer.begin(&gl, pass);
        body(self);
        self.timer.end(&gl);
        self.passes_run.push(pass);
        check_gl(&gl, pass.name())
    }

    fn targets(&self) -> &Targets {
        &self.targets
    }

    fn bind_texture(&self, unit: u32, target: u32, texture: Option<glow::Texture>) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            self.gl.active_texture(glow::TEXTURE0 + unit);
            self.gl.bind_texture(target, texture);
        }
    }

    fn draw_fullscreen(&self) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            self.gl.bind_vertex_array(Some(self.empty_vertex_array));
            self.gl.draw_arrays(glow::TRIANGLES, 0, 3);
        }
    }

    fn draw_particles(&self) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            self.gl.bind_vertex_array(Some(self.particle_array));
            self.gl
                .draw_arrays(glow::POINTS, 0, self.particle_count as i32);
        }
    }

    fn set_sprite_uniforms(&self, program: &Program, frame: &FrameSetup) {
        let gl = &self.gl;
        program.set(gl, "view", frame.view);
        program.set(gl, "projection", frame.projection);
        program.set(gl, "sprite_radius", frame.sprite_radius);
        program.set(gl, "viewport_height", frame.height as f32);
    }

    /// `scene`: sky, floor, container and obstacles into the scene colour and depth.
    fn scene(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        let targets = self.targets();
        let view_projection = frame.projection * frame.view;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(targets.scene.framebuffer));
            gl.clear_color(0.0, 0.0, 0.0, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
        }
        let sky = &self.programs.skybox;
        sky.bind(gl);
        sky.set(gl, "inverse_view_projection", view_projection.inverse());
        sky.set(gl, "skybox", 0);
        self.bind_texture(0, glow::TEXTURE_CUBE_MAP, Some(self.skybox));
        self.draw_fullscreen();

        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        let program = &self.programs.scene;
        program.bind(gl);
        program.set(gl, "view_projection", view_projection);
        program.set(gl, "sun_direction", skybox::sun_direction());
        program.set(gl, "checker_size", 0.1 * self.container_diagonal.max(0.1));
        program.set(gl, "eye_position", frame.eye_position);
        program.set(gl, "fog_color", skybox::HORIZON);
        program.set(gl, "fog_distance", 6.0 * self.container_diagonal.max(0.1));
        for mesh in &self.meshes {
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                if mesh.back_faces_only {
                    gl.enable(glow::CULL_FACE);
                    gl.cull_face(glow::FRONT);
                } else {
                    gl.disable(glow::CULL_FACE);
                }
                if mesh.color.w < 1.0 {
                    gl.enable(glow::BLEND);
                    gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA);
                }
            }
            program.set(gl, "surface_kind", mesh.surface as i32);
            program.set(gl, "base_color", mesh.color);
            mesh.draw(gl);
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe { gl.disable(glow::BLEND) };
        }
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::CULL_FACE) };
    }

    /// `sphere_depth`: nearest sphere surface per pixel.
    fn sphere_depth(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(
                glow::FRAMEBUFFER,
                Some(self.targets().sphere_depth.framebuffer),
            );
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        let program = &self.programs.sphere_depth;
        program.bind(gl);
        self.set_sprite_uniforms(program, frame);
        self.draw_particles();
    }

    /// `thickness`: additive sphere thickness, hidden by solids in front.
    fn thickness(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(
                glow::FRAMEBUFFER,
                Some(self.targets().thickness.framebuffer),
            );
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.enable(glow::DEPTH_TEST);
            gl.depth_mask(false);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        let program = &self.programs.thickness;
        program.bind(gl);
        self.set_sprite_uniforms(program, frame);
        let sprite_volume = 4.0 / 3.0 * std::f32::consts::PI * frame.sprite_radius.powi(3);
        program.set(gl, "volume_scale", self.particle_volume / sprite_volume);
        self.draw_particles();
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.disable(glow::BLEND);
            gl.depth_mask(true);
            gl.disable(glow::DEPTH_TEST);
        }
    }

    /// `smooth_depth`: N iterations, each a horizontal then a vertical filter half.
    fn smooth_depth(&mut self, frame: &FrameSetup, settings: &RenderSettings) {
        let gl = Rc::clone(&self.gl);
        let targets = self.targets();
        let program = &self.programs.smooth_depth;
        program.bind(&gl);
        program.set(&gl, "depth_texture", 0);
        program.set(
            &gl,
            "projected_scale",
            frame.projection.y_axis.y * frame.height as f32 * 0.5,
        );
        program.set(&gl, "filter_radius", 5.0 * frame.sprite_radius);
        program.set(&gl, "range_sigma", 3.0 * frame.sprite_radius);
        let kind = match settings.smoothing_filter {
            SmoothingFilter::Bilateral => 0,
            SmoothingFilter::NarrowRange => 1,
        };
        program.set(&gl, "filter_kind", kind);
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::DEPTH_TEST) };
        let mut source = targets.sphere_depth.texture;
        let mut written = None;
        let texel = Vec2::new(1.0 / frame.width as f32, 1.0 / frame.height as f32);
        for half in 0..2 * settings.smoothing_iterations as usize {
            let destination = &targets.smoothing[half % 2];
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                gl.bind_framebuffer(glow::FRAMEBUFFER, Some(destination.framebuffer));
            }
            let direction = if half % 2 == 0 {
                Vec2::new(texel.x, 0.0)
            } else {
                Vec2::new(0.0, texel.y)
            };
            program.set(&gl, "direction", direction);
            self.bind_texture(0, glow::TEXTURE_2D, Some(source));
            self.draw_fullscreen();
            source = destination.texture;
            written = Some(half % 2);
        }
        self.smoothed = written.map_or(usize::MAX, |index| index);
    }

    /// The depth the later passes use: the last smoothing output, or the raw sphere depth.
    fn smoothed_depth(&self) -> &TextureTarget {
        let targets = self.targets();
        targets
            .smoothing
            .get(self.smoothed)
            .unwrap_or(&targets.sphere_depth)
    }

    /// `normals`: eye-space normals from the smoothed depth.
    fn normals(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.targets().normals.framebuffer));
        }
        let program = &self.programs.normals;
        program.bind(gl);
        program.set(gl, "depth_texture", 0);
        program.set(
            gl,
            "texel",
            Vec2::new(1.0 / frame.width as f32, 1.0 / frame.height as f32),
        );
        program.set(gl, "projection_scale", projection_scale(frame));
        self.bind_texture(0, glow::TEXTURE_2D, Some(self.smoothed_depth().texture));
        self.draw_fullscreen();
    }

    /// `composite`: the shaded fluid over the scene, into the output.
    fn composite(&self, frame: &FrameSetup, settings: &RenderSettings, output: Output) {
        let gl = &self.gl;
        let targets = self.targets();
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer) };
        let program = &self.programs.composite;
        program.bind(gl);
        let textures = [
            ("scene_color", Some(targets.scene.texture)),
            ("scene_depth", targets.scene.depth_texture()),
            ("fluid_depth", Some(self.smoothed_depth().texture)),
            ("fluid_normal", Some(targets.normals.texture)),
            ("fluid_thickness", Some(targets.thickness.texture)),
        ];
        for (unit, (name, texture)) in textures.into_iter().enumerate() {
            program.set(gl, name, unit as i32);
            self.bind_texture(unit as u32, glow::TEXTURE_2D, texture);
        }
        program.set(gl, "skybox", textures.len() as i32);
        self.bind_texture(
            textures.len() as u32,
            glow::TEXTURE_CUBE_MAP,
            Some(self.skybox),
        );
        let view_rotation = Mat3::from_mat4(frame.view);
        program.set(gl, "inverse_view_rotation", view_rotation.transpose());
        program.set(gl, "projection_scale", projection_scale(frame));
        program.set(
            gl,
            "clip_planes",
            Vec2::new(frame.clip_planes.0, frame.clip_planes.1),
        );
        program.set(gl, "fluid_color", Vec3::from(settings.fluid_color));
        program.set(gl, "attenuation", Vec3::from(settings.attenuation));
        program.set(gl, "refraction_index", settings.refraction_index.max(1.0));
        program.set(gl, "refraction_strength", 0.25);
        program.set(gl, "sun_direction", view_rotation * skybox::sun_direction());
        self.draw_fullscreen();
    }

    /// `particles`: lit spheres coloured by speed (0 to the speed of a fall from the container's
    /// top) or by density (0.6 ρ₀ to 1.1 ρ₀), drawn into the scene buffers.
    fn particles(&self, frame: &FrameSetup, view: View) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.targets().scene.framebuffer));
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        let program = &self.programs.particles;
        program.bind(gl);
        self.set_sprite_uniforms(program, frame);
        let (low, high) = match view {
            View::Density => (0.6 * self.rest_density, 1.1 * self.rest_density),
            _ => (0.0, self.max_speed),
        };
        program.set(gl, "scalar_low", low);
        program.set(gl, "scalar_high", high);
        program.set(
            gl,
            "light_direction",
            Mat3::from_mat4(frame.view) * skybox::sun_direction(),
        );
        self.draw_particles();
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::DEPTH_TEST) };
    }

    /// `present`: the scene buffer to the output.
    fn present(&self, output: Output) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer) };
        let program = &self.programs.present;
        program.bind(gl);
        program.set(gl, "scene_color", 0);
        self.bind_texture(0, glow::TEXTURE_2D, Some(self.targets().scene.texture));
        self.draw_fullscreen();
    }

    /// `debug_view`: one intermediate buffer to the output.
    fn debug_view(&self, frame: &FrameSetup, view: View, output: Output) {
        let gl = &self.gl;
        let targets = self.targets();
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer) };
        let (texture, kind) = match view {
            View::Depth => (targets.sphere_depth.texture, 0),
            View::Thickness => (targets.thickness.texture, 1),
            View::Normals => (targets.normals.texture, 2),
            _ => (self.smoothed_depth().texture, 0),
        };
        let program = &self.programs.debug_view;
        program.bind(gl);
        program.set(gl, "buffer_texture", 0);
        program.set(gl, "buffer_kind", kind);
        let half = 0.6 * self.container_diagonal;
        program.set(
            gl,
            "depth_range",
            Vec2::new(
                (frame.eye_distance - half).max(0.0),
                frame.eye_distance + half,
            ),
        );
        program.set(gl, "thickness_scale", 0.25 * self.container_diagonal);
        self.bind_texture(0, glow::TEXTURE_2D, Some(texture));
        self.draw_fullscreen();
    }

    /// Reads an intermediate buffer of the last fluid frame, rows bottom to top; one value per
    /// pixel (four for [`Buffer::Normals`]).
    pub fn read_buffer(&self, buffer: Buffer) -> Result<Vec<f32>> {
        let targets = &self.targets;
        let (target, channels) = match buffer {
            Buffer::Depth => (&targets.sphere_depth, 1),
            Buffer::SmoothedDepth => (self.smoothed_depth(), 1),
            Buffer::Thickness => (&targets.thickness, 1),
            Buffer::Normals => (&targets.normals, 4),
        };
        let values = target.read_floats(&self.gl, targets.width, targets.height, channels);
        check_gl(&self.gl, "buffer read-back")?;
        Ok(values)
    }
}

fn projection_scale(frame: &FrameSetup) -> Vec2 {
    Vec2::new(frame.projection.x_axis.x, frame.projection.y_axis.y)
}

/// Fails with the GL error code and `what` when `glGetError` reports one.
pub fn check_gl(gl: &glow::Context, what: &str) -> Result<()> {
    // SAFETY: GL calls on this thread's current context (front ends make it current
    // before calling the renderer); every object named is this renderer's and alive.
    let error = unsafe { gl.get_error() };
    if error == glow::NO_ERROR {
        Ok(())
    } else {
        bail!("OpenGL error 0x{error:04x} in {what}")
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        let gl = Rc::clone(&self.gl);
        self.targets.delete(&gl);
        for mesh in self.meshes.drain(..) {
            mesh.delete(&gl);
        }
        self.timer.delete(&gl);
        self.programs.delete(&gl);
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.delete_texture(self.skybox);
            gl.delete_vertex_array(self.empty_vertex_array);
            gl.delete_vertex_array(self.particle_array);
            gl.delete_buffer(self.particle_buffer);
        }
    }
}
