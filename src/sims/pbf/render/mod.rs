//! The screen-space fluid renderer (van der Laan, Green & Sainz 2009, with the narrow-range
//! filter of Truong & Yuksel 2018 as an option), shared by the window and headless rendering.
//!
//! A frame of the fluid view runs these passes, each with a shader of the same name in
//! `shaders/pbf/` (or `shaders/common/`) and a method of the same name on [`Renderer`]:
//!
//! | pass | draws | into |
//! |---|---|---|
//! | `anisotropy` | the ellipsoids (CPU stage + upload, or the CUDA kernel by interop), timed in `update_particles` | particle buffer |
//! | `light_depth` | particles seen from the sun (orthographic), nearest surface | light depth |
//! | `light_thickness` | the same, additive, then blurred as `smooth_thickness` | light thickness |
//! | `light_smooth` | the `smooth_depth` filter on the light depth | smoothed light depth |
//! | `caustics` | sunlight refracted through that surface onto the floor | caustics (RGBA16F) |
//! | `scene` | sky, floor, container walls, obstacles, in the fluid's shadow | scene colour + depth |
//! | `sphere_depth` | particles as sphere sprites (or their ellipsoids), nearest surface; marks the fluid's face on the glass | eye depth (R32F), the mark in its lowest bits |
//! | `thickness` | the same sprites, additive | thickness (R32F) |
//! | `smooth_thickness` | a separable Gaussian blur of the thickness, σ ≈ a sprite radius | thickness |
//! | `smooth_depth` | N separable iterations of the bilateral or narrow-range filter (N − 1 when `smooth_depth_2d` runs), the face on the glass kept apart | smoothed depth |
//! | `smooth_depth_2d` | the narrow-range filter's last iteration as one 2-D pass | smoothed depth |
//! | `normals` | normals from the smoothed depth | eye normals (RGBA32F) |
//! | `foam` | the `foam` stage's diffuse particles as soft lit sprites (when there are any) | foam (RGBA16F) |
//! | `composite` | Fresnel, reflection, refraction, absorption, GGX sun highlight, foam over it | HDR colour + depth |
//! | `edges` | the container's edges, hidden by water in front | HDR colour |
//! | `post` | exposure, ACES tone mapping, sRGB, FXAA ([`crate::gfx::post`]) | the output |
//!
//! The four light passes run when [`RenderSettings::fluid_light`] is on. With
//! [`RenderSettings::anisotropy`] the sprites of `sphere_depth`, `thickness` and the two light
//! sprite passes are the ellipsoids of the `anisotropy` stage ([`crate::sims::pbf::anisotropy`]),
//! stored after the particle records in the particle buffer; the fragment shaders intersect the
//! view ray with each (`shaders/pbf/ellipsoid.glsl`). The `particles` debug
//! view draws lit spheres into the scene buffers, then `edges` and `post`; the buffer views show
//! one intermediate buffer (`debug_view`), untouched by tone mapping.
//!
//! Here: the frame's order of passes and the renderer's life; `settings.rs` holds what the user
//! can change, `particles.rs` the particle buffer and the sprite passes' shared uniforms,
//! `surface.rs` the fluid surface's buffers and passes, `scene_mesh.rs` the solid scene and its
//! `scene` and `edges` passes, `filter.rs` the depth filters, `light.rs` the sun's view and the
//! shadow and caustics passes. The kind-agnostic parts (programs, targets, sky, timer, capture)
//! are [`crate::gfx`]'s.

/// The files of `shaders/pbf/` named, one after the other: a pass's own shader, then the shared
/// parts it calls (`ellipsoid.glsl`, `narrow_range.glsl`, `glass_mark.glsl`), whose prototypes
/// it declares.
macro_rules! pbf_glsl {
    ($($file:literal),+) => {
        concat!($(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/pbf/", $file))),+)
    };
}

mod filter;
mod foam;
mod light;
#[cfg(test)]
mod normals_tests;
mod particles;
pub mod scene_mesh;
mod settings;
mod surface;

use crate::gfx::camera::Camera;
use crate::gfx::check_gl;
use crate::gfx::fullscreen::FullscreenTriangle;
use crate::gfx::post::Post;
use crate::gfx::program::Program;
use crate::gfx::skybox::Sky;
use crate::gfx::targets::TextureTarget;
use crate::gfx::timing::{PassClock, PassTimer};
pub use crate::gfx::Output;
use crate::sims::pbf::scene::Scene;
use anyhow::{Context, Result};
use filter::{SmoothDepth2dProgram, SmoothDepthProgram, SmoothThicknessProgram};
use foam::{FoamBuffer, FoamProgram};
use glam::{Mat4, Vec3};
use glow::HasContext;
use light::{CausticsProgram, LightTargets};
use particles::{ParticleBuffer, ParticlesProgram};
use scene_mesh::{Mesh, SceneProgram};
pub use settings::{RenderSettings, SmoothingFilter, View};
use std::rc::Rc;
use surface::{
    CompositeProgram, DebugViewProgram, NormalsProgram, SphereDepthProgram, Targets,
    ThicknessProgram,
};

/// One render pass; its name is the shader's and the method's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Nearest sphere depth seen from the sun.
    LightDepth,
    /// Additive thickness seen from the sun.
    LightThickness,
    /// Depth filtering of the sun's view.
    LightSmooth,
    /// Sunlight refracted onto the floor.
    Caustics,
    /// Sky, floor, container, obstacles.
    Scene,
    /// Nearest sphere depth.
    SphereDepth,
    /// Additive thickness.
    Thickness,
    /// The thickness blur.
    SmoothThickness,
    /// Depth filtering, separable iterations.
    SmoothDepth,
    /// The narrow-range filter's 2-D iteration.
    SmoothDepth2d,
    /// Normals from depth.
    Normals,
    /// Diffuse particles' sprites.
    Foam,
    /// Fluid shading over the scene.
    Composite,
    /// The container's edges over the picture.
    Edges,
    /// Debug view: lit particle spheres.
    Particles,
    /// Tone mapping, sRGB and FXAA into the output.
    Post,
    /// Debug view: one buffer.
    DebugView,
}

impl Pass {
    /// The pass's name (shader file stem, docs, UI).
    pub fn name(self) -> &'static str {
        match self {
            Pass::LightDepth => "light_depth",
            Pass::LightThickness => "light_thickness",
            Pass::LightSmooth => "light_smooth",
            Pass::Caustics => "caustics",
            Pass::Scene => "scene",
            Pass::SphereDepth => "sphere_depth",
            Pass::Thickness => "thickness",
            Pass::SmoothThickness => "smooth_thickness",
            Pass::SmoothDepth => "smooth_depth",
            Pass::SmoothDepth2d => "smooth_depth_2d",
            Pass::Normals => "normals",
            Pass::Foam => "foam",
            Pass::Composite => "composite",
            Pass::Edges => "edges",
            Pass::Particles => "particles",
            Pass::Post => "post",
            Pass::DebugView => "debug_view",
        }
    }
}

/// How far `composite`'s refraction looks up the scene behind the fluid: the normal's screen
/// components (uv) times this, times 1 − 1/n and the thickness (m, at most 1).
pub const REFRACTION_STRENGTH: f32 = 0.25;

/// An intermediate buffer that can be read back (tests, tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// `sphere_depth` output: eye distance along −z, metres (0 = no fluid).
    Depth,
    /// The filters' output (`smooth_depth`, `smooth_depth_2d`), metres (0 = no fluid); its two
    /// lowest bits the pixel's mark (`glass_mark.glsl`: `sphere_depth`'s, or 3 for a seam of
    /// the face the camera's first filter pass found).
    SmoothedDepth,
    /// `thickness` output (blurred by `smooth_thickness` when it runs), metres.
    Thickness,
    /// `normals` output: xyz eye-space normal, w 1 inside the fluid, 2 on the fluid's face on a
    /// near wall (water behind glass) and 0 elsewhere.
    Normals,
}

/// The fluid passes' programs, each with its uniforms located.
struct Programs {
    scene: SceneProgram,
    /// For spheres and for ellipsoids (`FrameSetup::anisotropic` indexes them).
    sphere_depth: [SphereDepthProgram; 2],
    thickness: [ThicknessProgram; 2],
    particles: ParticlesProgram,
    smooth_depth: SmoothDepthProgram,
    smooth_depth_2d: SmoothDepth2dProgram,
    smooth_thickness: SmoothThicknessProgram,
    normals: NormalsProgram,
    composite: CompositeProgram,
    debug_view: DebugViewProgram,
    caustics: CausticsProgram,
    foam: FoamProgram,
}

impl Programs {
    fn new(gl: &glow::Context) -> Result<Programs> {
        Ok(Programs {
            scene: SceneProgram::new(gl)?,
            sphere_depth: [
                SphereDepthProgram::new(gl, false)?,
                SphereDepthProgram::new(gl, true)?,
            ],
            thickness: [
                ThicknessProgram::new(gl, false)?,
                ThicknessProgram::new(gl, true)?,
            ],
            particles: ParticlesProgram::new(gl)?,
            smooth_depth: SmoothDepthProgram::new(gl)?,
            smooth_depth_2d: SmoothDepth2dProgram::new(gl)?,
            smooth_thickness: SmoothThicknessProgram::new(gl)?,
            normals: NormalsProgram::new(gl)?,
            composite: CompositeProgram::new(gl)?,
            debug_view: DebugViewProgram::new(gl)?,
            caustics: CausticsProgram::new(gl)?,
            foam: FoamProgram::new(gl)?,
        })
    }

    fn delete(&self, gl: &glow::Context) {
        let programs: [&Program; 14] = [
            &self.scene.program,
            &self.sphere_depth[0].program,
            &self.sphere_depth[1].program,
            &self.thickness[0].program,
            &self.thickness[1].program,
            &self.particles.program,
            &self.smooth_depth.program,
            &self.smooth_depth_2d.program,
            &self.smooth_thickness.program,
            &self.normals.program,
            &self.composite.program,
            &self.debug_view.program,
            &self.caustics.program,
            &self.foam.program,
        ];
        for program in programs {
            program.delete(gl);
        }
    }
}

/// Per-frame values every pass needs.
struct FrameSetup {
    view: Mat4,
    projection: Mat4,
    clip_planes: (f32, f32),
    sprite_radius: f32,
    width: i32,
    height: i32,
    eye_distance: f32,
    eye_position: Vec3,
    /// The sprites are the particles' ellipsoids (the buffer holds them and the settings ask).
    anisotropic: bool,
    /// The ellipsoids' scale: `sprite_radius` / particle radius.
    axis_scale: f32,
}

impl FrameSetup {
    /// P[0][0] and P[1][1]: eye-space x and y per unit depth to normalised device coordinates.
    fn projection_scale(&self) -> glam::Vec2 {
        glam::Vec2::new(self.projection.x_axis.x, self.projection.y_axis.y)
    }
}

/// What the passes need to know of the scene, set by [`Renderer::set_scene`].
struct SceneScale {
    /// Radius of the sphere a particle stands for, metres.
    particle_radius: f32,
    /// Volume each particle stands for, the solver's V = m / ρ₀, m³: the thickness pass sums it
    /// along view rays.
    particle_volume: f32,
    /// The container's diagonal, metres: scales the floor, fog and debug views.
    container_diagonal: f32,
    /// The container's centre, metres: the sun's view looks at it.
    container_center: Vec3,
    /// The container's corners, metres: the normals pass's wall planes (`normals.frag`).
    container_min: Vec3,
    container_max: Vec3,
    /// The floor's height, metres (the caustics land on it).
    floor_height: f32,
    /// The top of the speed colour ramp ([`fall_speed`]), m/s.
    max_speed: f32,
    /// ρ₀, kg/m³: the density colour ramp is around it.
    rest_density: f32,
}

/// The renderer: programs, the sky, scene meshes, the particle buffer and the pass targets.
pub struct Renderer {
    gl: Rc<glow::Context>,
    programs: Programs,
    sky: Sky,
    post: Post,
    fullscreen: FullscreenTriangle,
    particles: ParticleBuffer,
    foam: FoamBuffer,
    meshes: Vec<Mesh>,
    scale: SceneScale,
    targets: Targets,
    smoothed: usize,
    light: LightTargets,
    timer: PassTimer,
}

impl Renderer {
    /// Compiles the shaders, generates the sky and builds `scene`'s meshes. `clock` chooses
    /// how pass times are measured.
    pub fn new(gl: Rc<glow::Context>, scene: &Scene, clock: PassClock) -> Result<Renderer> {
        let programs = Programs::new(&gl)?;
        let sky = Sky::linear_light_over(&gl, scene_mesh::floor_from_afar())?;
        let post = Post::new(&gl)?;
        let light = LightTargets::new(&gl)?;
        let fullscreen = FullscreenTriangle::new(&gl)?;
        let particles = ParticleBuffer::new(&gl)?;
        let foam = FoamBuffer::new(&gl)?;
        // Resized to the output by the first draw.
        let targets = Targets::new(&gl, 1, 1)?;
        let mut renderer = Renderer {
            gl,
            programs,
            sky,
            post,
            fullscreen,
            particles,
            foam,
            meshes: Vec::new(),
            scale: SceneScale {
                particle_radius: 0.01,
                particle_volume: 1e-6,
                container_diagonal: 1.0,
                container_center: Vec3::ZERO,
                container_min: Vec3::splat(-1e6),
                container_max: Vec3::splat(1e6),
                floor_height: 0.0,
                max_speed: 1.0,
                rest_density: 1000.0,
            },
            targets,
            smoothed: usize::MAX,
            light,
            timer: PassTimer::new(clock),
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
        self.scale = SceneScale {
            particle_radius: scene.params.particle_radius(),
            particle_volume: scene.params.particle_volume(),
            container_diagonal: scene.container.size().length(),
            container_center: Vec3::from(0.5 * (scene.container.min + scene.container.max)),
            container_min: Vec3::from(scene.container.min),
            container_max: Vec3::from(scene.container.max),
            floor_height: scene_mesh::floor_height(&scene.container),
            max_speed: fall_speed(scene.params.gravity, scene.container.size().into()),
            rest_density: scene.params.rest_density,
        };
        Ok(())
    }

    /// Seconds of each pass in the latest measured frame (`None`: not run, or its timer-query
    /// result has not arrived yet), by pass name, in the order the passes first ran.
    pub fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
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
            sprite_radius: self.scale.particle_radius * settings.point_size,
            width,
            height,
            eye_distance: camera.distance,
            eye_position: camera.eye(),
            anisotropic: settings.anisotropy && self.particles.has_ellipsoids(),
            axis_scale: settings.point_size,
        };
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
        let fluid_view = !matches!(settings.view, View::Particles | View::Density);
        let light = (settings.fluid_light && fluid_view).then(|| self.light_frame(&frame));
        if let Some(light) = &light {
            self.run(Pass::LightDepth, |r| r.light_depth(light))?;
            self.run(Pass::LightThickness, |r| r.light_thickness(light, settings))?;
            self.run(Pass::LightSmooth, |r| r.light_smooth(light, settings))?;
            self.run(Pass::Caustics, |r| r.caustics(light, settings))?;
            // SAFETY: GL call on this thread's current context.
            unsafe { self.gl.viewport(0, 0, width, height) };
        }
        self.run(Pass::Scene, |r| r.scene(&frame, light.as_ref(), settings))?;
        match settings.view {
            View::Particles | View::Density => {
                let view = settings.view;
                self.run(Pass::Particles, |r| r.particles(&frame, view))?;
                let scene = self.targets.scene.framebuffer;
                self.run(Pass::Edges, |r| r.edges(&frame, scene))?;
                let picture = self.targets.scene.texture;
                self.run_fallible(Pass::Post, |r| r.post(picture, settings, output))?;
            }
            view => {
                self.run(Pass::SphereDepth, |r| r.sphere_depth(&frame))?;
                self.run(Pass::Thickness, |r| r.thickness(&frame))?;
                if settings.smooth_thickness {
                    let sigma = filter::thickness_sigma_px(&frame, true);
                    self.run(Pass::SmoothThickness, |r| {
                        let targets = &r.targets;
                        r.smooth_thickness(
                            &targets.thickness,
                            &targets.thickness_blur,
                            width,
                            height,
                            sigma,
                        )
                    })?;
                }
                self.run(Pass::SmoothDepth, |r| r.smooth_depth(&frame, settings))?;
                if settings.runs_smooth_depth_2d() {
                    self.run(Pass::SmoothDepth2d, |r| r.smooth_depth_2d(&frame, settings))?;
                }
                self.run(Pass::Normals, |r| r.normals(&frame))?;
                let foam = view == View::Fluid && self.foam.count > 0;
                if foam {
                    self.run(Pass::Foam, |r| r.foam(&frame, light.as_ref(), settings))?;
                }
                if view == View::Fluid {
                    self.run(Pass::Composite, |r| r.composite(&frame, settings, foam))?;
                    let hdr = self.targets.hdr.framebuffer;
                    self.run(Pass::Edges, |r| r.edges(&frame, hdr))?;
                    let picture = self.targets.hdr.texture;
                    self.run_fallible(Pass::Post, |r| r.post(picture, settings, output))?;
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
        self.timer.end_frame(&self.gl);
        Ok(())
    }

    fn run(&mut self, pass: Pass, body: impl FnOnce(&mut Renderer)) -> Result<()> {
        let gl = Rc::clone(&self.gl);
        self.timer.begin(&gl, pass.name());
        body(self);
        self.timer.end(&gl);
        check_gl(&gl, pass.name())
    }

    fn run_fallible(
        &mut self,
        pass: Pass,
        body: impl FnOnce(&mut Renderer) -> Result<()>,
    ) -> Result<()> {
        let mut result = Ok(());
        self.run(pass, |r| result = body(r))?;
        result.with_context(|| pass.name())
    }

    fn bind_texture(&self, unit: u32, target: u32, texture: Option<glow::Texture>) {
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            self.gl.active_texture(glow::TEXTURE0 + unit);
            self.gl.bind_texture(target, texture);
        }
    }

    /// `post`: the linear picture `texture` tone-mapped, sRGB-encoded and antialiased into
    /// the output.
    fn post(
        &mut self,
        texture: glow::Texture,
        settings: &RenderSettings,
        output: Output,
    ) -> Result<()> {
        self.post.draw(
            &self.gl,
            texture,
            output,
            settings.exposure,
            settings.antialias,
            &self.fullscreen,
        )
    }

    /// Reads an intermediate buffer of the last fluid frame, rows bottom to top; one value per
    /// pixel (four for [`Buffer::Normals`]).
    pub fn read_buffer(&self, buffer: Buffer) -> Result<Vec<f32>> {
        let targets = &self.targets;
        let (target, channels): (&TextureTarget, usize) = match buffer {
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

/// Standard gravity, m/s²: the speed ramp's scale for a weightless scene.
const STANDARD_GRAVITY: f32 = 9.81;

/// The speed of a fall through a container of extent `size` under `gravity` (m/s²), √(2 |g| d)
/// with d the container's extent along g (Σ |gᵢ| sizeᵢ = |g| d for a box): the top of the speed
/// colour ramp. A weightless scene has no such speed; it gets the fall through the container's
/// height under standard gravity, so its ramp still spans speeds of that scale.
fn fall_speed(gravity: [f32; 3], size: Vec3) -> f32 {
    let drop = Vec3::from(gravity).abs().dot(size);
    if drop > 0.0 {
        (2.0 * drop).sqrt()
    } else {
        (2.0 * STANDARD_GRAVITY * size.y).sqrt()
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        let gl = Rc::clone(&self.gl);
        self.targets.delete(&gl);
        self.light.delete(&gl);
        for mesh in self.meshes.drain(..) {
            mesh.delete(&gl);
        }
        self.timer.delete(&gl);
        self.programs.delete(&gl);
        self.post.delete(&gl);
        self.sky.delete(&gl);
        self.fullscreen.delete(&gl);
        self.particles.delete(&gl);
        self.foam.delete(&gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speed_ramp_follows_the_scenes_gravity() {
        let size = Vec3::new(2.0, 1.0, 0.5);
        let earth = fall_speed([0.0, -9.81, 0.0], size);
        assert_eq!(earth, (2.0 * 9.81 * 1.0f32).sqrt());
        let moon = fall_speed([0.0, -1.62, 0.0], size);
        assert!((moon - (2.0 * 1.62f32).sqrt()).abs() < 1e-6, "{moon}");
        // Sideways gravity falls across the container's 2 m width.
        let sideways = fall_speed([4.0, 0.0, 0.0], size);
        assert!((sideways - 4.0).abs() < 1e-6, "{sideways}");
        assert_eq!(fall_speed([0.0; 3], size), earth);
    }
}
