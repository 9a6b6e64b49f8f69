//! The screen-space fluid surface: the viewport-sized buffers, the passes that turn particles
//! into a shaded surface (`sphere_depth` → `thickness` → the filters of `filter.rs` → `normals`
//! → `composite`), and `debug_view`, which shows one of their buffers.

use super::particles::SpriteUniforms;
use super::{FrameSetup, Output, RenderSettings, Renderer, View};
use crate::gfx::program::{shader, Program, ShaderSource, Uniform};
use crate::gfx::skybox;
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use anyhow::Result;
use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};
use glow::HasContext;

/// The sun's radiance in the specular highlight (the sky's brightest texels are 1).
const SUN_RADIANCE: f32 = 6.0;
/// Foam's albedo: the `foam` pass's light (the solids' lighting model) times this.
const FOAM_ALBEDO: f32 = 0.95;

/// The viewport-sized buffers of the passes.
pub(super) struct Targets {
    pub(super) width: i32,
    pub(super) height: i32,
    pub(super) scene: TextureTarget,
    /// The shaded fluid over the scene (`composite`, then `edges`), linear light.
    pub(super) hdr: TextureTarget,
    pub(super) sphere_depth: TextureTarget,
    pub(super) thickness: TextureTarget,
    /// `smooth_thickness`'s horizontal half.
    pub(super) thickness_blur: TextureTarget,
    pub(super) smoothing: [TextureTarget; 2],
    pub(super) normals: TextureTarget,
    /// The `foam` pass's sprites: r in front, g bubbles under the surface.
    pub(super) foam: TextureTarget,
}

impl Targets {
    pub(super) fn new(gl: &glow::Context, width: i32, height: i32) -> Result<Targets> {
        // Linear light, tone-mapped by `post`.
        let scene = TextureTarget::new(gl, width, height, ColorFormat::RGBA16F, Depth::Texture)?;
        scene.filter_linearly(gl);
        let hdr = TextureTarget::new(gl, width, height, ColorFormat::RGBA16F, Depth::Renderbuffer)?;
        hdr.filter_linearly(gl);
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
            hdr,
            sphere_depth,
            thickness,
            thickness_blur: TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::None)?,
            smoothing: [
                TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::None)?,
                TextureTarget::new(gl, width, height, ColorFormat::R32F, Depth::None)?,
            ],
            normals: TextureTarget::new(gl, width, height, ColorFormat::RGBA32F, Depth::None)?,
            foam: TextureTarget::new(gl, width, height, ColorFormat::RGBA16F, Depth::None)?,
        })
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        self.scene.delete(gl);
        self.hdr.delete(gl);
        self.sphere_depth.delete(gl);
        self.thickness.delete(gl);
        self.thickness_blur.delete(gl);
        for target in &self.smoothing {
            target.delete(gl);
        }
        self.normals.delete(gl);
        self.foam.delete(gl);
    }
}

/// A sprite pass's program: `particle_sprite.vert` and `shaders/pbf/<fragment>` with
/// `ellipsoid.glsl` and the `appended` files appended, for the spheres (`ANISOTROPIC` 0) or the
/// ellipsoids (1): a program each, as llvmpipe runs both sides of a branch on a uniform (the
/// spheres' `sphere_depth` 108.8 → 64.9 ms, `thickness` 80.2 → 22.9 ms;
/// docs/render-timings.md).
macro_rules! sprite_shader {
    ($name:expr, $fragment:literal, $anisotropic:literal $(, $appended:literal)*) => {
        ShaderSource {
            name: $name,
            vertex: concat!(
                "#version 330 core\n#define ANISOTROPIC ",
                $anisotropic,
                "\n",
                pbf_glsl!("particle_sprite.vert"),
            ),
            fragment: concat!(
                "#version 330 core\n#define ANISOTROPIC ",
                $anisotropic,
                "\n",
                pbf_glsl!($fragment, "ellipsoid.glsl" $(, $appended)*),
            ),
            geometry: None,
        }
    };
}

/// The uniforms of `ellipsoid.glsl`: the ray through a fragment.
struct RayUniforms {
    inverse_projection: Uniform,
    viewport: Uniform,
}

impl RayUniforms {
    fn locate(gl: &glow::Context, program: &Program) -> Result<RayUniforms> {
        Ok(RayUniforms {
            inverse_projection: program.uniform(gl, "inverse_projection")?,
            viewport: program.uniform(gl, "viewport")?,
        })
    }

    fn set(&self, gl: &glow::Context, frame: &FrameSetup) {
        self.inverse_projection.set(gl, frame.projection.inverse());
        self.viewport
            .set(gl, Vec2::new(frame.width as f32, frame.height as f32));
    }
}

/// `sphere_depth`: the sprites' nearest surface.
pub(super) struct SphereDepthProgram {
    pub(super) program: Program,
    sprite: SpriteUniforms,
    ray: RayUniforms,
    walls: WallUniforms,
}

impl SphereDepthProgram {
    /// The program for spheres, or for ellipsoids where `anisotropic`.
    pub(super) fn new(gl: &glow::Context, anisotropic: bool) -> Result<SphereDepthProgram> {
        let source = if anisotropic {
            sprite_shader!("sphere_depth", "sphere_depth.frag", 1, "glass_mark.glsl")
        } else {
            sprite_shader!("sphere_depth", "sphere_depth.frag", 0, "glass_mark.glsl")
        };
        let program = Program::new(gl, &source)?;
        Ok(SphereDepthProgram {
            sprite: SpriteUniforms::locate(gl, &program, false)?,
            ray: RayUniforms::locate(gl, &program)?,
            walls: WallUniforms::locate(gl, &program)?,
            program,
        })
    }
}

/// `thickness`: the sprites' additive thickness.
pub(super) struct ThicknessProgram {
    pub(super) program: Program,
    sprite: SpriteUniforms,
    ray: RayUniforms,
    volume_scale: Uniform,
}

impl ThicknessProgram {
    /// The program for spheres, or for ellipsoids where `anisotropic`.
    pub(super) fn new(gl: &glow::Context, anisotropic: bool) -> Result<ThicknessProgram> {
        let source = if anisotropic {
            sprite_shader!("thickness", "thickness.frag", 1)
        } else {
            sprite_shader!("thickness", "thickness.frag", 0)
        };
        let program = Program::new(gl, &source)?;
        Ok(ThicknessProgram {
            sprite: SpriteUniforms::locate(gl, &program, false)?,
            ray: RayUniforms::locate(gl, &program)?,
            volume_scale: program.uniform(gl, "volume_scale")?,
            program,
        })
    }
}

/// A splatted surface within a particle radius and this many sprite radii of a wall's plane
/// (facing the eye) may be the fluid's face on that wall (`normals.frag`): the particles
/// touching it keep their centres a particle radius from it, and the ellipsoids there are
/// flattened against it, so their surface lies 0.3–1 sprite radii off the glass (0.4–1.3
/// particle radii at `point_size` 1.3). The band follows the particle radius, as the contact
/// does, plus a part of the sprite, as the ellipsoids' reach does; 0.5 is the least that keeps
/// `tests/render_wall.rs`'s flecks at their floor (2 at 45°; 3 at 0.25, 40 at 0).
const WALL_MARGIN: f32 = 0.5;

/// The near walls of a view: the side and floor walls the eye is outside of, whose glass it
/// looks through (the lid is none: the container is drawn open, docs/render-notes-glass.md), as
/// `normals.frag` and `narrow_range.glsl` take them.
pub(super) struct NearWalls {
    /// A wall a column, in eye space: xyz its outward normal, w its offset (a point p lies
    /// xyz · p + w outside its plane).
    planes: Mat4,
    count: i32,
    /// m: a splatted surface this near a wall's plane may be the fluid's face on it.
    distance: f32,
}

impl NearWalls {
    /// None: the sun's view.
    pub(super) const NONE: NearWalls = NearWalls {
        planes: Mat4::ZERO,
        count: 0,
        distance: 0.0,
    };
}

/// The uniforms of the near walls (`wall_planes`, `wall_count`, `wall_distance`).
pub(super) struct WallUniforms {
    planes: Uniform,
    count: Uniform,
    distance: Uniform,
}

impl WallUniforms {
    pub(super) fn locate(gl: &glow::Context, program: &Program) -> Result<WallUniforms> {
        Ok(WallUniforms {
            planes: program.uniform(gl, "wall_planes")?,
            count: program.uniform(gl, "wall_count")?,
            distance: program.uniform(gl, "wall_distance")?,
        })
    }

    pub(super) fn set(&self, gl: &glow::Context, walls: &NearWalls) {
        self.planes.set(gl, walls.planes);
        self.count.set(gl, walls.count);
        self.distance.set(gl, walls.distance);
    }
}

impl Renderer {
    /// The near walls seen from `frame`'s eye.
    pub(super) fn near_walls(&self, frame: &FrameSetup) -> NearWalls {
        let (min, max) = (self.scale.container_min, self.scale.container_max);
        let eye = frame.eye_position;
        // Planes map from world to eye space by the transpose of the eye-to-world matrix.
        let to_eye = frame.view.inverse().transpose();
        let mut planes = [Vec4::ZERO; 4];
        let mut count = 0;
        for axis in 0..3 {
            for (bound, outward) in [(min[axis], -1.0), (max[axis], 1.0)] {
                let lid = axis == 1 && outward > 0.0;
                if lid || (eye[axis] - bound) * outward <= 0.0 {
                    continue;
                }
                let mut normal = Vec3::ZERO;
                normal[axis] = outward;
                planes[count] = to_eye * normal.extend(-outward * bound);
                count += 1;
            }
        }
        NearWalls {
            planes: Mat4::from_cols(planes[0], planes[1], planes[2], planes[3]),
            count: count as i32,
            distance: self.scale.particle_radius + WALL_MARGIN * frame.sprite_radius,
        }
    }
}

/// `normals`: eye-space normals from depth.
pub(super) struct NormalsProgram {
    pub(super) program: Program,
    depth_texture: Uniform,
    texel: Uniform,
    projection_scale: Uniform,
    sprite_pixels: Uniform,
    layer_step: Uniform,
    splatted_depth: Uniform,
    walls: WallUniforms,
}

impl NormalsProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<NormalsProgram> {
        let source = ShaderSource {
            name: "normals",
            vertex: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/shaders/common/fullscreen.vert"
            )),
            fragment: pbf_glsl!("normals.frag", "glass_mark.glsl"),
            geometry: None,
        };
        let program = Program::new(gl, &source)?;
        Ok(NormalsProgram {
            depth_texture: program.uniform(gl, "depth_texture")?,
            texel: program.uniform(gl, "texel")?,
            projection_scale: program.uniform(gl, "projection_scale")?,
            sprite_pixels: program.uniform(gl, "sprite_pixels")?,
            layer_step: program.uniform(gl, "layer_step")?,
            splatted_depth: program.uniform(gl, "splatted_depth")?,
            walls: WallUniforms::locate(gl, &program)?,
            program,
        })
    }
}

/// `composite`: the fluid's shading over the scene.
pub(super) struct CompositeProgram {
    pub(super) program: Program,
    /// The samplers, in texture-unit order: scene colour, scene depth, fluid depth, fluid
    /// normal, fluid thickness, the sky's cubemap, then the foam.
    samplers: [Uniform; 7],
    foam: Uniform,
    foam_color: Uniform,
    inverse_view_rotation: Uniform,
    projection_scale: Uniform,
    clip_planes: Uniform,
    fluid_color: Uniform,
    attenuation: Uniform,
    refraction_index: Uniform,
    refraction_strength: Uniform,
    sun_direction: Uniform,
    sun_radiance: Uniform,
    roughness: Uniform,
}

impl CompositeProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<CompositeProgram> {
        let program = Program::new(
            gl,
            &shader!("composite", "common/fullscreen.vert", "pbf/composite.frag"),
        )?;
        let uniform = |name| program.uniform(gl, name);
        Ok(CompositeProgram {
            samplers: [
                uniform("scene_color")?,
                uniform("scene_depth")?,
                uniform("fluid_depth")?,
                uniform("fluid_normal")?,
                uniform("fluid_thickness")?,
                uniform("skybox")?,
                uniform("foam_texture")?,
            ],
            foam: uniform("foam")?,
            foam_color: uniform("foam_color")?,
            inverse_view_rotation: uniform("inverse_view_rotation")?,
            projection_scale: uniform("projection_scale")?,
            clip_planes: uniform("clip_planes")?,
            fluid_color: uniform("fluid_color")?,
            attenuation: uniform("attenuation")?,
            refraction_index: uniform("refraction_index")?,
            refraction_strength: uniform("refraction_strength")?,
            sun_direction: uniform("sun_direction")?,
            sun_radiance: uniform("sun_radiance")?,
            roughness: uniform("roughness")?,
            program,
        })
    }
}

/// `debug_view`: one intermediate buffer as an image.
pub(super) struct DebugViewProgram {
    pub(super) program: Program,
    buffer_texture: Uniform,
    buffer_kind: Uniform,
    depth_range: Uniform,
    thickness_scale: Uniform,
}

impl DebugViewProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<DebugViewProgram> {
        let program = Program::new(
            gl,
            &shader!(
                "debug_view",
                "common/fullscreen.vert",
                "pbf/debug_view.frag"
            ),
        )?;
        Ok(DebugViewProgram {
            buffer_texture: program.uniform(gl, "buffer_texture")?,
            buffer_kind: program.uniform(gl, "buffer_kind")?,
            depth_range: program.uniform(gl, "depth_range")?,
            thickness_scale: program.uniform(gl, "thickness_scale")?,
            program,
        })
    }
}

impl Renderer {
    /// `sphere_depth`: nearest sphere surface per pixel.
    pub(super) fn sphere_depth(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(
                glow::FRAMEBUFFER,
                Some(self.targets.sphere_depth.framebuffer),
            );
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        self.sphere_depth_into(frame, &self.near_walls(frame));
    }

    /// The `sphere_depth` sprites seen from `frame`'s view into the bound framebuffer, their
    /// faces on `walls` marked.
    pub(super) fn sphere_depth_into(&self, frame: &FrameSetup, walls: &NearWalls) {
        let gl = &self.gl;
        let pass = &self.programs.sphere_depth[usize::from(frame.anisotropic)];
        pass.program.bind(gl);
        pass.sprite.set(gl, frame, true);
        pass.ray.set(gl, frame);
        pass.walls.set(gl, walls);
        self.particles.draw(gl);
    }

    /// `thickness`: additive sphere thickness, hidden by solids in front.
    pub(super) fn thickness(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.targets.thickness.framebuffer));
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.enable(glow::DEPTH_TEST);
            gl.depth_mask(false);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        self.thickness_into(frame);
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.disable(glow::BLEND);
            gl.depth_mask(true);
            gl.disable(glow::DEPTH_TEST);
        }
    }

    /// The `thickness` sprites seen from `frame`'s view, added into the bound framebuffer.
    pub(super) fn thickness_into(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        let pass = &self.programs.thickness[usize::from(frame.anisotropic)];
        pass.program.bind(gl);
        pass.sprite.set(gl, frame, true);
        pass.ray.set(gl, frame);
        let sprite_volume = 4.0 / 3.0 * std::f32::consts::PI * frame.sprite_radius.powi(3);
        pass.volume_scale
            .set(gl, self.scale.particle_volume / sprite_volume);
        self.particles.draw(gl);
    }

    /// `normals`: eye-space normals from the smoothed depth.
    pub(super) fn normals(&self, frame: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.targets.normals.framebuffer));
        }
        let pass = &self.programs.normals;
        pass.program.bind(gl);
        pass.depth_texture.set(gl, 0);
        pass.texel.set(
            gl,
            Vec2::new(1.0 / frame.width as f32, 1.0 / frame.height as f32),
        );
        pass.projection_scale.set(gl, frame.projection_scale());
        pass.sprite_pixels.set(
            gl,
            frame.sprite_radius * frame.projection_scale().y * frame.height as f32 * 0.5,
        );
        pass.layer_step.set(gl, super::filter::layer_step(frame));
        pass.splatted_depth.set(gl, 1);
        pass.walls.set(gl, &self.near_walls(frame));
        self.bind_texture(0, glow::TEXTURE_2D, Some(self.smoothed_depth().texture));
        self.bind_texture(1, glow::TEXTURE_2D, Some(self.targets.sphere_depth.texture));
        self.fullscreen.draw(gl);
    }

    /// `composite`: the shaded fluid over the scene, into the HDR target, with its depth.
    /// With `foam`, the `foam` pass's sprites over it.
    pub(super) fn composite(&self, frame: &FrameSetup, settings: &RenderSettings, foam: bool) {
        let gl = &self.gl;
        let targets = &self.targets;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(targets.hdr.framebuffer));
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::ALWAYS);
            gl.depth_mask(true);
        }
        let pass = &self.programs.composite;
        pass.program.bind(gl);
        let textures = [
            (glow::TEXTURE_2D, Some(targets.scene.texture)),
            (glow::TEXTURE_2D, targets.scene.depth_texture()),
            (glow::TEXTURE_2D, Some(self.smoothed_depth().texture)),
            (glow::TEXTURE_2D, Some(targets.normals.texture)),
            (glow::TEXTURE_2D, Some(targets.thickness.texture)),
            (glow::TEXTURE_CUBE_MAP, Some(self.sky.cubemap())),
            (glow::TEXTURE_2D, Some(targets.foam.texture)),
        ];
        for (unit, (sampler, (kind, texture))) in pass.samplers.iter().zip(textures).enumerate() {
            sampler.set(gl, unit as i32);
            self.bind_texture(unit as u32, kind, texture);
        }
        let view_rotation = Mat3::from_mat4(frame.view);
        pass.inverse_view_rotation
            .set(gl, view_rotation.transpose());
        pass.projection_scale.set(gl, frame.projection_scale());
        pass.clip_planes
            .set(gl, Vec2::new(frame.clip_planes.0, frame.clip_planes.1));
        pass.fluid_color.set(gl, Vec3::from(settings.fluid_color));
        pass.sun_radiance.set(gl, SUN_RADIANCE);
        pass.roughness.set(gl, 0.12);
        pass.attenuation.set(gl, Vec3::from(settings.attenuation));
        pass.refraction_index
            .set(gl, settings.refraction_index.max(1.0));
        pass.refraction_strength.set(gl, super::REFRACTION_STRENGTH);
        pass.sun_direction
            .set(gl, view_rotation * skybox::sun_direction());
        pass.foam.set(gl, i32::from(foam));
        pass.foam_color.set(gl, Vec3::splat(FOAM_ALBEDO));
        self.fullscreen.draw(gl);
        // SAFETY: as above.
        unsafe {
            gl.depth_func(glow::LESS);
            gl.disable(glow::DEPTH_TEST);
        }
    }

    /// `debug_view`: one intermediate buffer to the output.
    pub(super) fn debug_view(&self, frame: &FrameSetup, view: View, output: Output) {
        let gl = &self.gl;
        let targets = &self.targets;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer) };
        let (texture, kind) = match view {
            View::Depth => (targets.sphere_depth.texture, 0),
            View::Thickness => (targets.thickness.texture, 1),
            View::Normals => (targets.normals.texture, 2),
            _ => (self.smoothed_depth().texture, 0),
        };
        let pass = &self.programs.debug_view;
        pass.program.bind(gl);
        pass.buffer_texture.set(gl, 0);
        pass.buffer_kind.set(gl, kind);
        let half = 0.6 * self.scale.container_diagonal;
        pass.depth_range.set(
            gl,
            Vec2::new(
                (frame.eye_distance - half).max(0.0),
                frame.eye_distance + half,
            ),
        );
        pass.thickness_scale
            .set(gl, 0.25 * self.scale.container_diagonal);
        self.bind_texture(0, glow::TEXTURE_2D, Some(texture));
        self.fullscreen.draw(gl);
    }
}
