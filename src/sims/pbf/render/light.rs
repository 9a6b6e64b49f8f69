//! The sunlight through the fluid: the particles seen from the sun (an orthographic view of the
//! container along the sky's sun direction), as the nearest surface (`light_depth`), the
//! fluid's thickness along the sunlight (`light_thickness`) and that surface smoothed
//! (`light_smooth`); then `caustics` refracts the sunlight through the smoothed surface onto the
//! floor. The `scene` pass shades the floor and the obstacles with them: the fluid's shadow and
//! its caustics.

use super::{FrameSetup, RenderSettings, Renderer};
use crate::gfx::camera::{look_at, orthographic_gl};
use crate::gfx::program::{shader, Program, Uniform};
use crate::gfx::skybox;
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use anyhow::Result;
use glam::{Mat4, Vec3, Vec4};
use glow::HasContext;

/// Texels along each side of the light-space buffers (256 until the caustics' issue 14 audit:
/// its texels were 1 cm wide on the dam break's container, the caustic splats 6 cm).
pub(super) const LIGHT_SIZE: i32 = 512;
/// Caustic points along each side (one per texel).
const CAUSTIC_GRID: i32 = LIGHT_SIZE;

/// The light-space buffers.
pub(super) struct LightTargets {
    pub(super) depth: TextureTarget,
    pub(super) thickness: TextureTarget,
    pub(super) smoothing: [TextureTarget; 2],
    pub(super) caustics: TextureTarget,
    /// Which of `smoothing` holds the smoothed surface (`None`: the raw depth).
    pub(super) smoothed: Option<usize>,
}

impl LightTargets {
    pub(super) fn new(gl: &glow::Context) -> Result<LightTargets> {
        let size = LIGHT_SIZE;
        let caustics = TextureTarget::new(gl, size, size, ColorFormat::RGBA16F, Depth::None)?;
        caustics.filter_linearly(gl);
        // Sampled linearly by the scene's shadow, so its edge is not stair-stepped by texels
        // (the depth stays nearest: it is 0 outside the fluid).
        let thickness = TextureTarget::new(gl, size, size, ColorFormat::R32F, Depth::None)?;
        thickness.filter_linearly(gl);
        Ok(LightTargets {
            depth: TextureTarget::new(gl, size, size, ColorFormat::R32F, Depth::Renderbuffer)?,
            thickness,
            smoothing: [
                TextureTarget::new(gl, size, size, ColorFormat::R32F, Depth::None)?,
                TextureTarget::new(gl, size, size, ColorFormat::R32F, Depth::None)?,
            ],
            caustics,
            smoothed: None,
        })
    }

    /// The smoothed surface seen from the sun.
    pub(super) fn surface(&self) -> glow::Texture {
        self.smoothed
            .and_then(|index| self.smoothing.get(index))
            .unwrap_or(&self.depth)
            .texture
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        for target in [&self.depth, &self.thickness, &self.caustics] {
            target.delete(gl);
        }
        for target in &self.smoothing {
            target.delete(gl);
        }
    }
}

/// The sun's orthographic view of a container of centre `center` and diagonal `diagonal`:
/// (world → light eye, light eye → clip). The eye stands a diagonal away towards the sun.
pub(super) fn light_view(center: Vec3, diagonal: f32) -> (Mat4, Mat4) {
    let sun = skybox::sun_direction();
    let radius = 0.5 * diagonal.max(1e-3) * 1.05;
    let up = if sun.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
    let view = look_at(center + sun * 2.0 * radius, center, up);
    let projection = orthographic_gl(-radius, radius, -radius, radius, 0.5 * radius, 3.5 * radius);
    (view, projection)
}

/// `caustics`: the grid of refracted sunlight points.
pub(super) struct CausticsProgram {
    pub(super) program: Program,
    light_depth: Uniform,
    light_thickness: Uniform,
    grid: Uniform,
    light_scale: Uniform,
    floor_plane: Uniform,
    refraction_index: Uniform,
    attenuation: Uniform,
    splat_size: Uniform,
    splat_sigma: Uniform,
    flux: Uniform,
}

impl CausticsProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<CausticsProgram> {
        let program = Program::new(
            gl,
            &shader!("caustics", "pbf/caustics.vert", "pbf/caustics.frag"),
        )?;
        let uniform = |name| program.uniform(gl, name);
        Ok(CausticsProgram {
            light_depth: uniform("light_depth")?,
            light_thickness: uniform("light_thickness")?,
            grid: uniform("grid")?,
            light_scale: uniform("light_scale")?,
            floor_plane: uniform("floor_plane")?,
            refraction_index: uniform("refraction_index")?,
            attenuation: uniform("attenuation")?,
            splat_size: uniform("splat_size")?,
            splat_sigma: uniform("splat_sigma")?,
            flux: uniform("flux")?,
            program,
        })
    }
}

impl Renderer {
    /// The per-frame values of the sun's view, for the sprite passes run from it.
    pub(super) fn light_frame(&self, camera: &FrameSetup) -> FrameSetup {
        let (view, projection) =
            light_view(self.scale.container_center, self.scale.container_diagonal);
        let (near, far) = (
            0.25 * self.scale.container_diagonal,
            1.75 * self.scale.container_diagonal,
        );
        FrameSetup {
            view,
            projection,
            clip_planes: (near, far),
            sprite_radius: camera.sprite_radius,
            width: LIGHT_SIZE,
            height: LIGHT_SIZE,
            eye_distance: self.scale.container_diagonal,
            eye_position: view.inverse().w_axis.truncate(),
            anisotropic: camera.anisotropic,
            axis_scale: camera.axis_scale,
        }
    }

    /// `light_depth`: the fluid's nearest surface seen from the sun.
    pub(super) fn light_depth(&self, light: &FrameSetup) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.light.depth.framebuffer));
            gl.viewport(0, 0, LIGHT_SIZE, LIGHT_SIZE);
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
        }
        self.sphere_depth_into(light, &super::surface::NearWalls::NONE);
        // SAFETY: as above.
        unsafe { gl.disable(glow::DEPTH_TEST) };
    }

    /// `light_thickness`: metres of fluid along the sunlight (all of it, nothing hides it),
    /// blurred as `smooth_thickness` blurs the camera's (the first smoothing buffer is free
    /// until `light_smooth`).
    pub(super) fn light_thickness(&self, light: &FrameSetup, settings: &RenderSettings) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.light.thickness.framebuffer));
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        self.thickness_into(light);
        // SAFETY: as above.
        unsafe { gl.disable(glow::BLEND) };
        if settings.smooth_thickness {
            self.smooth_thickness(
                &self.light.thickness,
                &self.light.smoothing[0],
                LIGHT_SIZE,
                LIGHT_SIZE,
                super::filter::thickness_sigma_px(light, false),
            );
        }
    }

    /// `light_smooth`: the `smooth_depth` filter over the surface seen from the sun.
    pub(super) fn light_smooth(&mut self, light: &FrameSetup, settings: &RenderSettings) {
        let source = self.light.depth.texture;
        let written = self.filter_depth(
            source,
            &self.light.smoothing,
            light,
            settings,
            settings.smoothing_iterations,
            false,
        );
        self.light.smoothed = written;
    }

    /// `caustics`: sunlight refracted through the smoothed surface onto the floor, splatted
    /// into the light's view.
    pub(super) fn caustics(&self, light: &FrameSetup, settings: &RenderSettings) {
        let gl = &self.gl;
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.light.caustics.framebuffer));
            gl.viewport(0, 0, LIGHT_SIZE, LIGHT_SIZE);
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
            gl.enable(glow::BLEND);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        let pass = &self.programs.caustics;
        pass.program.bind(gl);
        pass.light_depth.set(gl, 0);
        pass.light_thickness.set(gl, 1);
        self.bind_texture(0, glow::TEXTURE_2D, Some(self.light.surface()));
        self.bind_texture(1, glow::TEXTURE_2D, Some(self.light.thickness.texture));
        pass.grid.set(gl, CAUSTIC_GRID);
        pass.light_scale.set(gl, light.projection_scale());
        let normal = (light.view * Vec4::new(0.0, 1.0, 0.0, 0.0)).truncate();
        let point = light
            .view
            .transform_point3(Vec3::new(0.0, self.scale.floor_height, 0.0));
        pass.floor_plane.set(gl, normal.extend(normal.dot(point)));
        pass.refraction_index
            .set(gl, settings.refraction_index.max(1.0));
        pass.attenuation.set(gl, Vec3::from(settings.attenuation));
        // Gaussian splats of σ = 1.5 cells cut at 2σ: the grid's sum is flat to well under 1 %,
        // and each carries its cell's area of sunlight (the cut-off disc's integral is
        // 2πσ² (1 − e⁻²)).
        let cell = (LIGHT_SIZE / CAUSTIC_GRID) as f32;
        let sigma = 1.5 * cell;
        pass.splat_size.set(gl, 4.0 * sigma);
        pass.splat_sigma.set(gl, sigma);
        let integral = std::f32::consts::TAU * sigma * sigma * (1.0 - (-2.0f32).exp());
        pass.flux.set(gl, cell * cell / integral);
        // SAFETY: GL calls on this thread's current context; the empty vertex array is this
        // renderer's (points take their place from gl_VertexID).
        unsafe {
            self.fullscreen.bind(gl);
            gl.draw_arrays(glow::POINTS, 0, CAUSTIC_GRID * CAUSTIC_GRID);
            gl.disable(glow::BLEND);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_light_looks_along_the_sunlight_at_the_container() {
        let center = Vec3::new(0.8, 0.5, 0.3);
        let (view, projection) = light_view(center, 2.0);
        let clip = projection * view;
        let at = clip.project_point3(center);
        assert!(
            at.x.abs() < 1e-5 && at.y.abs() < 1e-5 && at.z.abs() < 1.0,
            "{at}"
        );
        // A step towards the sun comes nearer the light: smaller clip depth, same place.
        let nearer = clip.project_point3(center + 0.3 * skybox::sun_direction());
        assert!(nearer.z < at.z && (nearer.truncate() - at.truncate()).length() < 1e-5);
        // The whole container's sphere fits.
        for offset in [Vec3::X, Vec3::NEG_Y, Vec3::Z] {
            let p = clip.project_point3(center + offset);
            assert!(p.abs().max_element() <= 1.0, "{p}");
        }
    }
}
