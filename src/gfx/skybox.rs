//! The sky, generated at start-up into a cubemap: by default a zenith-to-horizon gradient, soft
//! clouds, a sun, and a darker ground below the horizon; a kind may give its own colour function
//! ([`Sky::with_colors`]). Nothing is downloaded or shipped. [`Sky`] draws it behind a scene and
//! lends its cubemap to reflections; [`Sky::linear_light`] makes one for a picture in linear
//! light that ends in an sRGB encoding ([`crate::gfx::post`]). The cubemap clamps to its edges
//! and is sampled seamlessly (`GL_TEXTURE_CUBE_MAP_SEAMLESS`), so no face edge shows.

use super::fullscreen::FullscreenTriangle;
use super::program::{shader, Program, Uniform};
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec3};
use glow::HasContext;

/// Texels along one cube face edge.
const FACE_SIZE: usize = 128;

/// Direction towards the sun (world space, normalised by [`sun_direction`]).
const SUN: Vec3 = Vec3::new(0.45, 0.6, 0.35);

/// Sky colour at the horizon (the floor fades into it).
pub const HORIZON: Vec3 = Vec3::new(0.62, 0.75, 0.90);

/// The direction towards the sun, world space.
pub fn sun_direction() -> Vec3 {
    SUN.normalize()
}

/// Sky colour (linear 0..1 RGB) seen along `direction`.
pub fn sky_color(direction: Vec3) -> Vec3 {
    sky_color_towards(direction, sun_direction())
}

/// The default sky's ground, seen straight down.
pub const GROUND: Vec3 = Vec3::new(0.45, 0.45, 0.43);

/// Sky colour (linear 0..1 RGB) seen along `direction` with the sun towards `sun` (unit).
pub fn sky_color_towards(direction: Vec3, sun: Vec3) -> Vec3 {
    sky_color_over(direction, sun, GROUND)
}

/// [`sky_color_towards`] with `ground` below the horizon (straight down; the horizon's colour
/// fades into it within 15° below the horizon).
pub fn sky_color_over(direction: Vec3, sun: Vec3, ground: Vec3) -> Vec3 {
    let d = direction.normalize();
    let zenith = Vec3::new(0.10, 0.30, 0.72);
    let horizon = HORIZON;
    if d.y < 0.0 {
        let t = (-d.y * 4.0).min(1.0);
        return horizon.lerp(ground, t.sqrt());
    }
    let mut color = horizon.lerp(zenith, d.y.powf(0.6));
    // Clouds: a few octaves of smooth value noise projected on a plane above the eye.
    if d.y > 0.02 {
        let plane = glam::Vec2::new(d.x, d.z) / (d.y + 0.15) * 2.0;
        let density = ((fractal_noise(plane) - 0.45) * 2.5).clamp(0.0, 1.0) * d.y.min(0.3) / 0.3;
        color = color.lerp(Vec3::splat(0.96), density * 0.8);
    }
    let sun_alignment = d.dot(sun).max(0.0);
    color += Vec3::new(1.0, 0.9, 0.7)
        * (sun_alignment.powf(800.0) * 4.0 + sun_alignment.powf(12.0) * 0.25);
    color.min(Vec3::ONE)
}

fn hash(x: i32, y: i32) -> f32 {
    let mut h = (x as u32).wrapping_mul(374_761_393) ^ (y as u32).wrapping_mul(668_265_263);
    h = (h ^ (h >> 13)).wrapping_mul(1_274_126_177);
    (h ^ (h >> 16)) as f32 / u32::MAX as f32
}

fn value_noise(p: glam::Vec2) -> f32 {
    let cell = p.floor();
    let f = p - cell;
    let smooth = f * f * (glam::Vec2::splat(3.0) - 2.0 * f);
    let (x, y) = (cell.x as i32, cell.y as i32);
    let top = hash(x, y) + (hash(x + 1, y) - hash(x, y)) * smooth.x;
    let bottom = hash(x, y + 1) + (hash(x + 1, y + 1) - hash(x, y + 1)) * smooth.x;
    top + (bottom - top) * smooth.y
}

fn fractal_noise(p: glam::Vec2) -> f32 {
    (0..4)
        .map(|octave| value_noise(p * 2f32.powi(octave)) * 0.5f32.powi(octave + 1))
        .sum::<f32>()
        / 0.9375
}

/// The direction through texel (`s`, `t`) ∈ [−1, 1]² of cube face `face` (OpenGL's order
/// +x, −x, +y, −y, +z, −z and its face orientations).
pub fn face_direction(face: usize, s: f32, t: f32) -> Vec3 {
    match face {
        0 => Vec3::new(1.0, -t, -s),
        1 => Vec3::new(-1.0, -t, s),
        2 => Vec3::new(s, 1.0, t),
        3 => Vec3::new(s, -1.0, -t),
        4 => Vec3::new(s, -t, 1.0),
        _ => Vec3::new(-s, -t, -1.0),
    }
}

/// The sky's cubemap and the program that draws it (`shaders/common/skybox.*`).
pub struct Sky {
    cubemap: glow::Texture,
    /// Whether the texels are sRGB-decoded on sampling (a picture in linear light).
    linear_light: bool,
    program: Program,
    inverse_view_projection: Uniform,
    skybox: Uniform,
}

impl Sky {
    /// Generates the default cubemap ([`sky_color`]) and builds the program.
    pub fn new(gl: &glow::Context) -> Result<Sky> {
        Sky::with_sun(gl, sun_direction())
    }

    /// Generates the cubemap with the sun towards `sun` (any length) and builds the program;
    /// sampling returns the colours as stored, for a picture written without an sRGB encoding.
    pub fn with_sun(gl: &glow::Context, sun: Vec3) -> Result<Sky> {
        let sun = sun.normalize();
        Sky::build(
            gl,
            FACE_SIZE,
            &|direction| sky_color_towards(direction, sun),
            false,
        )
    }

    /// Like [`Sky::new`], for a picture drawn in linear light that ends in an sRGB encoding
    /// ([`crate::gfx::post`]): the texels are sRGB-encoded and sampling returns linear light.
    pub fn linear_light(gl: &glow::Context) -> Result<Sky> {
        Sky::build(gl, FACE_SIZE, &sky_color, true)
    }

    /// Like [`Sky::linear_light`], with `ground` below the horizon ([`sky_color_over`]): for a
    /// scene whose floor covers the lower half, so that what reflects the sky below the
    /// horizon shows the floor rather than a ground the picture never shows.
    pub fn linear_light_over(gl: &glow::Context, ground: Vec3) -> Result<Sky> {
        let sun = sun_direction();
        Sky::build(gl, FACE_SIZE, &|d| sky_color_over(d, sun, ground), true)
    }

    /// Generates a cubemap of `face_size`² texels per face from `color` (linear 0..1 RGB seen
    /// along a direction) and builds the program; sampling returns the colours as stored.
    pub fn with_colors(
        gl: &glow::Context,
        face_size: usize,
        color: impl Fn(Vec3) -> Vec3,
    ) -> Result<Sky> {
        Sky::build(gl, face_size, &color, false)
    }

    fn build(
        gl: &glow::Context,
        face_size: usize,
        color: &dyn Fn(Vec3) -> Vec3,
        linear_light: bool,
    ) -> Result<Sky> {
        let program = Program::new(
            gl,
            &shader!("skybox", "common/skybox.vert", "common/skybox.frag"),
        )?;
        Ok(Sky {
            cubemap: create_cubemap(gl, face_size, color, linear_light)?,
            linear_light,
            inverse_view_projection: program.uniform(gl, "inverse_view_projection")?,
            skybox: program.uniform(gl, "skybox")?,
            program,
        })
    }

    /// Generates the cubemap again with the sun towards `sun` (any length).
    pub fn set_sun(&mut self, gl: &glow::Context, sun: Vec3) -> Result<()> {
        let sun = sun.normalize();
        let cubemap = create_cubemap(
            gl,
            FACE_SIZE,
            &|direction| sky_color_towards(direction, sun),
            self.linear_light,
        )?;
        // SAFETY: GL call on this thread's current context; the old cubemap is this sky's.
        unsafe { gl.delete_texture(std::mem::replace(&mut self.cubemap, cubemap)) };
        Ok(())
    }

    /// The cubemap texture, for reflections (see [`Sky::linear_light`]).
    pub fn cubemap(&self) -> glow::Texture {
        self.cubemap
    }

    /// Draws the sky seen through `view_projection` over the whole bound framebuffer, at the
    /// far plane, through texture unit 0.
    pub fn draw(&self, gl: &glow::Context, view_projection: Mat4, triangle: &FullscreenTriangle) {
        self.program.bind(gl);
        self.inverse_view_projection
            .set(gl, view_projection.inverse());
        self.skybox.set(gl, 0);
        // SAFETY: GL calls on this thread's current context; the cubemap is this sky's, alive.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_CUBE_MAP, Some(self.cubemap));
        }
        triangle.draw(gl);
    }

    /// Frees the cubemap and the program.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
        // SAFETY: GL call on this thread's current context; the cubemap is this sky's.
        unsafe { gl.delete_texture(self.cubemap) };
    }
}

/// Generates the sky cubemap texture from `color`, sRGB-decoded on sampling if `linear_light`.
fn create_cubemap(
    gl: &glow::Context,
    face_size: usize,
    color: &dyn Fn(Vec3) -> Vec3,
    linear_light: bool,
) -> Result<glow::Texture> {
    // SAFETY: GL calls on this thread's current context (front ends make it current
    // before calling the renderer); every object named is this renderer's and alive.
    unsafe {
        let texture = gl
            .create_texture()
            .map_err(|e| anyhow!("skybox texture: {e}"))?;
        gl.bind_texture(glow::TEXTURE_CUBE_MAP, Some(texture));
        // Seamless filtering across face edges (core since 3.2): a texel at an edge blends with
        // the neighbouring face's, not with its own clamped border.
        gl.enable(glow::TEXTURE_CUBE_MAP_SEAMLESS);
        let mut texels = vec![0u8; face_size * face_size * 3];
        for face in 0..6 {
            for row in 0..face_size {
                for column in 0..face_size {
                    let s = (column as f32 + 0.5) / face_size as f32 * 2.0 - 1.0;
                    let t = (row as f32 + 0.5) / face_size as f32 * 2.0 - 1.0;
                    let color = color(face_direction(face, s, t));
                    let at = (row * face_size + column) * 3;
                    for channel in 0..3 {
                        texels[at + channel] =
                            (color[channel].clamp(0.0, 1.0) * 255.0).round() as u8;
                    }
                }
            }
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            gl.tex_image_2d(
                glow::TEXTURE_CUBE_MAP_POSITIVE_X + face as u32,
                0,
                // The texels are sRGB-encoded colours; with SRGB8 sampling returns linear light,
                // which a drawing that ends in an sRGB encoding (`crate::gfx::post`) shows as made.
                if linear_light {
                    glow::SRGB8
                } else {
                    glow::RGB8
                } as i32,
                face_size as i32,
                face_size as i32,
                0,
                glow::RGB,
                glow::UNSIGNED_BYTE,
                Some(&texels),
            );
        }
        for (parameter, value) in [
            (glow::TEXTURE_MIN_FILTER, glow::LINEAR),
            (glow::TEXTURE_MAG_FILTER, glow::LINEAR),
            (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
            (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
            (glow::TEXTURE_WRAP_R, glow::CLAMP_TO_EDGE),
        ] {
            gl.tex_parameter_i32(glow::TEXTURE_CUBE_MAP, parameter, value as i32);
        }
        gl.bind_texture(glow::TEXTURE_CUBE_MAP, None);
        Ok(texture)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sky_is_bluer_above_than_at_the_horizon_and_ground_is_dark() {
        let up = sky_color(Vec3::new(-0.3, 1.0, -0.9));
        let horizon = sky_color(Vec3::new(-1.0, 0.0, 0.0));
        let ground = sky_color(Vec3::NEG_Y);
        assert!(up.z > up.x && up.z > horizon.z * 0.8);
        assert!(ground.length() < horizon.length());
    }

    #[test]
    fn cube_faces_point_outwards() {
        let axes = [
            Vec3::X,
            Vec3::NEG_X,
            Vec3::Y,
            Vec3::NEG_Y,
            Vec3::Z,
            Vec3::NEG_Z,
        ];
        for (face, axis) in axes.iter().enumerate() {
            assert_eq!(face_direction(face, 0.0, 0.0), *axis);
        }
    }
}
