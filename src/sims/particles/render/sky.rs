//! The kind's sky: an evening (or afternoon) sky over a ring of mountains, generated in code
//! into [`crate::gfx::skybox::Sky`]'s cube map (clamped to its edges, sampled seamlessly), and
//! the `sun` pass, a sharp disc with a corona drawn over it. The scene picks the sun, in the
//! picture of the kind's default camera (its flare shows): low for the cloth, higher for the
//! fountain's courtyard and the jelly.

use super::textures::fractal_noise;
use crate::gfx::camera::Orientation;
use crate::gfx::fullscreen::FullscreenTriangle;
use crate::gfx::program::{shader, Program, Uniform};
use crate::gfx::skybox::Sky;
use crate::sims::particles::scene::Which;
use anyhow::Result;
use glam::{Mat4, Vec2, Vec3};
use glow::HasContext;
use std::f32::consts::PI;

/// Texels along one face of the sky's cube map.
pub const FACE_SIZE: usize = 256;

/// The sun's angular radius, radians (the real one is 0.0047; drawn larger).
pub const SUN_RADIUS: f32 = 0.02;

/// The sun of a scene and the light it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Light {
    /// Towards the sun, normalised.
    pub sun: Vec3,
    /// The sun's colour and strength on a lit surface.
    pub color: Vec3,
    /// The sky's light on surfaces, a multiple of the sky's colour seen along the normal.
    pub ambient: f32,
}

/// The direction the kind's default camera frames a scene from
/// ([`crate::sims::Sim::orientation`]): from the side of the sun, pitched down less than the
/// other kinds' [`Orientation::FRONT`] (0.55 rad, which saw nothing above the horizon) so the
/// horizon, the sky, the sun and its flare are in the picture over the bodies or the basin.
/// Yaw −0.5 looks along azimuth 0.5; at pitch p the picture reaches 0.45 − p above the
/// horizon (half the 0.9 rad field of view) and ±0.71 rad across (16:9).
pub fn orientation(which: Which) -> Orientation {
    let pitch = match which {
        Which::Cloth => 0.3,
        Which::Fountain | Which::Jelly => 0.2,
    };
    Orientation { yaw: -0.5, pitch }
}

/// The elevation (radians) and azimuth (radians from −z towards +x) of a scene's sun, in the
/// picture of the default camera ([`orientation`]) and right of the viewer's panel: the cloth's
/// 3.5° up and 17° right of the view's azimuth, low and red; the fountain's 8.6° up and 14°
/// right, the jelly's 6.9° up and 23° right (an earlier evening).
pub fn sun_angles(which: Which) -> (f32, f32) {
    match which {
        Which::Cloth => (0.061, 0.8),
        Which::Fountain => (0.15, 0.75),
        Which::Jelly => (0.12, 0.9),
    }
}

/// A scene's light.
pub fn light(which: Which) -> Light {
    let (elevation, azimuth) = sun_angles(which);
    let sun = Vec3::new(
        elevation.cos() * azimuth.sin(),
        elevation.sin(),
        -elevation.cos() * azimuth.cos(),
    );
    let evening = evening(sun);
    Light {
        sun,
        color: Vec3::new(1.0, 0.95, 0.88).lerp(Vec3::new(1.0, 0.66, 0.4), evening) * 1.25,
        ambient: 1.0 + 1.6 * evening,
    }
}

/// How much of an evening it is: 1 with the sun at the horizon, 0 from 25° up.
fn evening(sun: Vec3) -> f32 {
    (1.0 - sun.y.max(0.0) / 0.42).clamp(0.0, 1.0)
}

/// Elevation of the mountains' far and near ridges (radians) at azimuth direction `xz` (a unit
/// horizontal vector), lowered into a valley where the sun sets.
pub fn ridges(xz: Vec2, sun: Vec3) -> (f32, f32) {
    let sun_xz = Vec2::new(sun.x, sun.z).normalize_or(Vec2::X);
    let apart = xz.dot(sun_xz).clamp(-1.0, 1.0).acos();
    let valley = 1.0 - 0.85 * (-(apart / 0.3).powi(2)).exp();
    let far = (0.03 + 0.09 * fractal_noise(xz * 2.5 + Vec2::splat(7.3), 0)) * valley;
    let near = (0.01 + 0.06 * fractal_noise(xz * 4.5 + Vec2::new(1.7, -3.1), 0)) * valley;
    (far, near)
}

/// The sky's colour (linear 0..1 RGB) along `direction` with the sun towards `sun`: a zenith
/// blue over a horizon that warms towards the sun in the evening, a glow around the sun, two
/// ridges of mountains and a dark valley floor below the horizon.
pub fn sky_color(direction: Vec3, sun: Vec3) -> Vec3 {
    let d = direction.normalize();
    let elevation = d.y.clamp(-1.0, 1.0).asin();
    let xz = Vec2::new(d.x, d.z).normalize_or(Vec2::X);
    let sun_xz = Vec2::new(sun.x, sun.z).normalize_or(Vec2::X);
    let toward = 0.5 + 0.5 * xz.dot(sun_xz);
    let evening = evening(sun);
    let zenith = Vec3::new(0.16, 0.34, 0.72).lerp(Vec3::new(0.10, 0.15, 0.38), evening);
    let horizon_day = Vec3::new(0.66, 0.78, 0.92);
    let horizon_evening =
        Vec3::new(0.78, 0.50, 0.52).lerp(Vec3::new(1.0, 0.60, 0.28), toward * toward);
    let horizon = horizon_day.lerp(horizon_evening, evening);
    let height = (elevation.max(0.0) / (0.5 * PI)).powf(0.4);
    let mut color = horizon.lerp(zenith, height);
    let alignment = d.dot(sun).max(0.0);
    let warm = Vec3::new(1.0, 0.7, 0.4).lerp(Vec3::new(1.0, 0.9, 0.7), 1.0 - evening);
    color += warm * (0.35 * alignment.powf(8.0) + 0.5 * alignment.powf(90.0));
    // The mountains: a hazy far ridge, a dark near ridge, each edge a texel soft.
    let (far, near) = ridges(xz, sun);
    let soft = 0.004;
    let haze = Vec3::new(0.36, 0.30, 0.44).lerp(Vec3::new(0.42, 0.50, 0.55), 1.0 - evening);
    let far_color = haze.lerp(
        horizon,
        0.35 - 0.25 * (elevation / far.max(1e-3)).clamp(0.0, 1.0),
    );
    let near_color = Vec3::new(0.13, 0.10, 0.16).lerp(Vec3::new(0.16, 0.22, 0.16), 1.0 - evening);
    let cover = |ridge: f32| 1.0 - ((elevation - ridge) / soft * 0.5 + 0.5).clamp(0.0, 1.0);
    color = color.lerp(far_color, cover(far));
    color = color.lerp(near_color * (0.85 + 0.3 * toward), cover(near));
    if elevation < 0.0 {
        let floor = near_color * 0.9;
        color = color.lerp(floor, (-elevation / 0.05).clamp(0.0, 1.0));
    }
    color.min(Vec3::ONE)
}

/// The scene's sky (its cube map and program).
pub fn create(gl: &glow::Context, light: &Light) -> Result<Sky> {
    let sun = light.sun;
    Sky::with_colors(gl, FACE_SIZE, move |d| sky_color(d, sun))
}

/// The `sun` pass's program (`shaders/common/skybox.vert`, `shaders/particles/sun.frag`).
pub struct SunProgram {
    program: Program,
    inverse_view_projection: Uniform,
    sun_direction: Uniform,
    sun_color: Uniform,
    sun_radius: Uniform,
}

impl SunProgram {
    /// Builds the program.
    pub fn new(gl: &glow::Context) -> Result<SunProgram> {
        let program = Program::new(
            gl,
            &shader!("sun", "common/skybox.vert", "particles/sun.frag"),
        )?;
        Ok(SunProgram {
            inverse_view_projection: program.uniform(gl, "inverse_view_projection")?,
            sun_direction: program.uniform(gl, "sun_direction")?,
            sun_color: program.uniform(gl, "sun_color")?,
            sun_radius: program.uniform(gl, "sun_radius")?,
            program,
        })
    }

    /// `sun`: the disc and its corona added over the sky (depth untouched, so what is drawn
    /// later covers it).
    pub fn draw(
        &self,
        gl: &glow::Context,
        view_projection: Mat4,
        light: &Light,
        triangle: &FullscreenTriangle,
    ) {
        self.program.bind(gl);
        self.inverse_view_projection
            .set(gl, view_projection.inverse());
        self.sun_direction.set(gl, light.sun);
        self.sun_color.set(gl, Vec3::new(1.0, 0.92, 0.75));
        self.sun_radius.set(gl, SUN_RADIUS);
        // SAFETY: GL state calls on the current context.
        unsafe {
            gl.enable(glow::BLEND);
            gl.blend_func(glow::ONE, glow::ONE);
        }
        triangle.draw(gl);
        // SAFETY: as above.
        unsafe { gl.disable(glow::BLEND) };
    }

    /// Frees the program.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cloths_sun_sets_in_a_valley_above_the_mountains() {
        let light = light(Which::Cloth);
        let xz = Vec2::new(light.sun.x, light.sun.z).normalize();
        let (far, near) = ridges(xz, light.sun);
        let elevation = light.sun.y.asin();
        assert!(
            elevation - SUN_RADIUS > far.max(near) + 0.004,
            "{elevation} vs {far}, {near}"
        );
        // Away from the sun the mountains stand higher than the sun.
        let away = ridges(-xz, light.sun);
        assert!(away.0 > elevation);
    }

    #[test]
    fn the_sky_is_brighter_towards_the_sun_and_dark_below_the_horizon() {
        let light = light(Which::Cloth);
        let up_a_little = |d: Vec3| Vec3::new(d.x, 0.3, d.z);
        let toward = sky_color(up_a_little(light.sun), light.sun);
        let away = sky_color(up_a_little(-light.sun), light.sun);
        assert!(toward.x > away.x + 0.1, "{toward} vs {away}");
        assert!(sky_color(Vec3::new(0.3, -0.5, 0.2), light.sun).length() < 0.4);
    }
}
