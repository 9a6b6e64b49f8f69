//! Caustics computed from the surface each frame (as evanw/webgl-water does, with the light
//! added up rather than overwritten): the `caustics` pass draws the surface mesh where each
//! node's refracted sunbeam lands — on the floor, or on a wall and then carried along the calm
//! water's refracted light down to the floor plane, so one texture serves floor and walls — and
//! gives each triangle's pixels the ratio of its area on the rest plane (seen along the
//! incoming light: the light it lets through) to its area where it lands, blended additively.
//! A value of 1 is calm water's irradiance; the texture's total is the light through the
//! surface. `caustics_view` shows the texture.

use super::grid::Grid;
use super::shared::{pool_shader, FrameValues, Shared};
use crate::gfx::fullscreen::FullscreenTriangle;
use crate::gfx::program::{shader, Program, Uniform};
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use anyhow::Result;
use glam::Vec3;
use glow::HasContext;

/// Refractive index of water (the shaders' `IOR_WATER`).
pub const IOR_WATER: f32 = 1.333;

/// The sunlight's direction in calm water for a sun towards `light` (unit): GLSL's
/// `refract(−light, up, 1/n)`.
pub fn refracted_light(light: Vec3) -> Vec3 {
    let eta = 1.0 / IOR_WATER;
    let incident = -light;
    let cos = incident.y; // dot(up, incident)
    let k = 1.0 - eta * eta * (1.0 - cos * cos);
    eta * incident - (eta * cos + k.max(0.0).sqrt()) * Vec3::Y
}

/// The part of the floor plane (y = −depth) the caustics texture covers: where the calm water's
/// refracted sunlight through any point of the pool, floor to a little above the rest level,
/// meets that plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CausticsDomain {
    /// The (x, z) corner, m.
    pub origin: [f32; 2],
    /// The extent along x and z, m.
    pub extent: [f32; 2],
}

impl CausticsDomain {
    /// The domain for a pool of side `size` and `depth` lit from `light` (unit).
    pub fn new(light: Vec3, size: f32, depth: f32) -> CausticsDomain {
        let r = refracted_light(light);
        let margin = 0.01 * size;
        let mut origin = [0.0; 2];
        let mut extent = [0.0; 2];
        for (axis, along) in [r.x, r.z].into_iter().enumerate() {
            // From a point 10 % of the depth above the rest level down to the floor.
            let reach = 1.1 * depth * along / -r.y;
            origin[axis] = reach.min(0.0) - margin;
            extent[axis] = size + reach.abs() + 2.0 * margin;
        }
        CausticsDomain { origin, extent }
    }
}

/// Texels per side of the caustics texture for a grid of `nodes` per side: about two per node,
/// 512 to 2048.
pub fn resolution(nodes: usize) -> usize {
    (2 * nodes).next_power_of_two().clamp(512, 2048)
}

/// Bytes of the caustics texture for a grid of `nodes` per side ([`chain_bytes`] of its
/// [`resolution`]; on a GL whose textures are smaller, at most that).
pub fn texture_bytes(nodes: usize) -> u64 {
    chain_bytes(resolution(nodes))
}

/// Bytes of a caustics texture `side` texels a side: R32F, its mipmaps down to 1 × 1 included
/// (the first frame's `generate_mipmap` makes them).
pub fn chain_bytes(side: usize) -> u64 {
    let mut side = side as u64;
    let mut texels = 0;
    while side > 0 {
        texels += side * side;
        side /= 2;
    }
    4 * texels
}

/// The caustics texture read back.
#[derive(Clone, Debug)]
pub struct CausticsImage {
    /// Relative irradiance per texel (1: calm water), rows along z from the domain's origin.
    pub values: Vec<f32>,
    /// Texels per side.
    pub resolution: usize,
    /// The floor-plane area it covers.
    pub domain: CausticsDomain,
}

impl CausticsImage {
    /// One texel's area on the floor plane, m².
    pub fn texel_area(&self) -> f64 {
        let n = self.resolution as f64;
        f64::from(self.domain.extent[0]) * f64::from(self.domain.extent[1]) / (n * n)
    }

    /// The light that arrives, in m² of calm water's irradiance: Σ value · texel area.
    pub fn total(&self) -> f64 {
        self.values.iter().map(|&v| f64::from(v)).sum::<f64>() * self.texel_area()
    }

    /// The value at floor-plane point (x, z), m (nearest texel), 0 outside.
    pub fn at(&self, x: f32, z: f32) -> f32 {
        let d = &self.domain;
        let u = (x - d.origin[0]) / d.extent[0] * self.resolution as f32;
        let v = (z - d.origin[1]) / d.extent[1] * self.resolution as f32;
        if !(0.0..self.resolution as f32).contains(&u)
            || !(0.0..self.resolution as f32).contains(&v)
        {
            return 0.0;
        }
        self.values[v as usize * self.resolution + u as usize]
    }
}

/// The caustics texture and the `caustics` pass.
pub(super) struct CausticsPass {
    target: TextureTarget,
    resolution: usize,
    domain: CausticsDomain,
    program: Program,
    shared: Shared,
}

impl CausticsPass {
    /// The pass for a grid of `nodes` per side on a GL whose textures are at most `limit` a
    /// side (`None`: not known): [`resolution`], or the limit where it is smaller (GL 3.3
    /// promises 1024).
    pub(super) fn new(
        gl: &glow::Context,
        nodes: usize,
        limit: Option<usize>,
    ) -> Result<CausticsPass> {
        let resolution = limit.map_or(resolution(nodes), |limit| resolution(nodes).min(limit));
        let n = resolution as i32;
        let target = TextureTarget::new(gl, n, n, ColorFormat::R32F, Depth::None)?;
        // SAFETY: GL calls on the current context; the texture is this pass's.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(target.texture));
            gl.tex_parameter_i32(
                glow::TEXTURE_2D,
                glow::TEXTURE_MIN_FILTER,
                glow::LINEAR_MIPMAP_LINEAR as i32,
            );
            gl.tex_parameter_i32(
                glow::TEXTURE_2D,
                glow::TEXTURE_MAG_FILTER,
                glow::LINEAR as i32,
            );
            gl.bind_texture(glow::TEXTURE_2D, None);
        }
        let program = Program::new(
            gl,
            &pool_shader!("caustics", "caustics.vert", "caustics.frag"),
        )?;
        Ok(CausticsPass {
            target,
            resolution,
            domain: CausticsDomain::new(Vec3::Y, 1.0, 1.0),
            shared: Shared::locate(gl, &program)?,
            program,
        })
    }

    /// The texture (R32F, mipmapped: the passes reading it average over a pixel's footprint,
    /// `textureGrad`).
    pub(super) fn texture(&self) -> glow::Texture {
        self.target.texture
    }

    /// Texels per side of the texture, as allocated.
    pub(super) fn resolution(&self) -> usize {
        self.resolution
    }

    /// `caustics`: clears the texture and adds every surface triangle's light to it (the
    /// renderer then builds its mipmaps, `PoolRenderer::draw`).
    pub(super) fn draw(&mut self, gl: &glow::Context, grid: &Grid, values: &FrameValues) {
        self.domain = values.domain;
        self.program.bind(gl);
        self.shared.set(gl, values);
        self.shared.set_grid(gl, grid);
        let n = self.resolution as i32;
        // SAFETY: GL calls on the current context; the target is this pass's.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.target.framebuffer));
            gl.viewport(0, 0, n, n);
            gl.clear_color(0.0, 0.0, 0.0, 0.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
            gl.enable(glow::BLEND);
            gl.blend_equation(glow::FUNC_ADD);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        grid.draw_triangles(gl);
        // SAFETY: GL call on the current context.
        unsafe { gl.disable(glow::BLEND) };
    }

    /// The texture of the last frame, read back.
    pub(super) fn read(&self, gl: &glow::Context) -> CausticsImage {
        let n = self.resolution as i32;
        CausticsImage {
            values: self.target.read_floats(gl, n, n, 1),
            resolution: self.resolution,
            domain: self.domain,
        }
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        self.target.delete(gl);
        self.program.delete(gl);
    }
}

/// `caustics_view`: the caustics texture over the viewport.
pub(super) struct CausticsViewProgram {
    program: Program,
    caustics: Uniform,
}

impl CausticsViewProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<CausticsViewProgram> {
        let program = Program::new(
            gl,
            &shader!(
                "caustics_view",
                "common/fullscreen.vert",
                "pool/caustics_view.frag"
            ),
        )?;
        Ok(CausticsViewProgram {
            caustics: program.uniform(gl, "caustics")?,
            program,
        })
    }

    /// Draws `texture` over the bound framebuffer through texture unit 0.
    pub(super) fn draw(
        &self,
        gl: &glow::Context,
        texture: glow::Texture,
        triangle: &FullscreenTriangle,
    ) {
        self.program.bind(gl);
        self.caustics.set(gl, 0);
        // SAFETY: GL calls on the current context; the texture is the caller's, alive.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        }
        triangle.draw(gl);
    }

    pub(super) fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refraction_follows_snells_law_and_the_domain_holds_the_light() {
        let light = Vec3::new(2.0, 2.0, -1.0).normalize();
        let r = refracted_light(light);
        assert!((r.length() - 1.0).abs() < 1e-5);
        let sin_in = (1.0 - light.y * light.y).sqrt();
        let sin_out = (1.0 - r.y * r.y).sqrt();
        assert!(
            (sin_in - IOR_WATER * sin_out).abs() < 1e-5,
            "{sin_in} {sin_out}"
        );
        // The refracted beam keeps the light's horizontal direction, pointing away from it.
        assert!(r.x < 0.0 && r.z > 0.0 && (r.x / r.z - 2.0 / -1.0).abs() < 1e-4);
        let domain = CausticsDomain::new(light, 2.0, 1.0);
        // Calm water's light lands at (x, z) + depth · r.xz / −r.y for (x, z) in the pool.
        for corner in [[0.0f32, 0.0], [2.0, 2.0], [0.0, 2.0], [2.0, 0.0]] {
            let x = corner[0] + r.x / -r.y;
            let z = corner[1] + r.z / -r.y;
            assert!(x > domain.origin[0] && x < domain.origin[0] + domain.extent[0]);
            assert!(z > domain.origin[1] && z < domain.origin[1] + domain.extent[1]);
        }
        assert_eq!(resolution(256), 512);
        assert_eq!(resolution(1024), 2048);
        assert_eq!(resolution(100), 512);
    }
}
