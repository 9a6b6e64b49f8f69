//! `flare`, `blinding`: the lens flare and the white overlay of looking into the sun
//! (`shaders/particles/flare.*`), drawn last over the finished picture, depth test off.
//!
//! Elements sit on the line from the sun through the screen's centre, three.js `Lensflare`'s
//! convention: an element at `distance` d is drawn at `sun + (−2·sun)·d` in NDC, so 0 is on the
//! sun, 0.5 the centre and 1 the sun's mirror image. Halos are drawn first, then bursts, added
//! to the picture. Their opacity falls with the sun's distance r = |sun| (NDC) from the centre
//! (and they shrink a little), and — all but those on the sun itself — near the centre too, so
//! they do not cloud the sun looked at straight on. Nothing is drawn when the sun is behind the
//! camera (its eye-space z ≥ 0) or off the screen; how much of the sun is not hidden by the
//! scene is read on the GPU from the scene's depth buffer (a 5 × 5 probe over the sun's disc
//! that still holds the far plane) and scales every element and the overlay. The overlay, a
//! white full-screen quad, fades in as the sun comes within [`BLINDING_RADIUS`] of the centre.

use super::sky::{Light, SUN_RADIUS};
use super::textures::{self, Sampling, FLARE_SIZE, FLARE_TILES};
use crate::gfx::program::{shader, Program, Uniform};
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec2, Vec3, Vec4};
use glow::HasContext;

/// One element of the flare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Element {
    /// Atlas tile: 0 glow, 1 ring, 2 hexagon, 3 burst.
    pub tile: usize,
    /// Where on the sun–centre line: 0 on the sun, 0.5 the centre, 1 mirrored.
    pub distance: f32,
    /// Half its side as a fraction of the picture's height.
    pub size: f32,
    /// Colour.
    pub color: Vec3,
    /// Opacity before the fades.
    pub opacity: f32,
}

const fn element(tile: usize, distance: f32, size: f32, color: [f32; 3], opacity: f32) -> Element {
    Element {
        tile,
        distance,
        size,
        color: Vec3::from_array(color),
        opacity,
    }
}

/// The halos, drawn first.
pub const HALOS: [Element; 8] = [
    element(0, 0.0, 0.45, [1.0, 0.8, 0.55], 0.45),
    element(1, 0.2, 0.05, [0.6, 0.8, 1.0], 0.5),
    element(2, 0.35, 0.06, [0.9, 0.6, 1.0], 0.5),
    element(0, 0.5, 0.035, [1.0, 1.0, 0.8], 0.5),
    element(2, 0.6, 0.08, [0.5, 1.0, 0.6], 0.45),
    element(1, 0.7, 0.12, [1.0, 0.7, 0.4], 0.45),
    element(2, 0.85, 0.05, [0.6, 0.7, 1.0], 0.55),
    element(1, 1.0, 0.2, [0.8, 0.9, 1.0], 0.35),
];

/// The bursts, drawn after the halos.
pub const BURSTS: [Element; 3] = [
    element(3, 0.0, 0.3, [1.0, 0.95, 0.85], 0.8),
    element(3, 0.45, 0.06, [1.0, 0.9, 0.7], 0.5),
    element(3, 0.92, 0.09, [0.8, 0.9, 1.0], 0.4),
];

/// The sun within this distance (NDC) of the centre whitens the picture.
pub const BLINDING_RADIUS: f32 = 0.3;
/// The overlay's opacity with the sun at the centre.
pub const BLINDING_OPACITY: f32 = 0.85;

/// The sun's position in NDC seen through `view` and `projection` (a direction, at infinity);
/// `None` when it is behind the camera or off the screen (a tenth of the screen's margin).
pub fn sun_on_screen(view: Mat4, projection: Mat4, sun: Vec3) -> Option<Vec2> {
    let eye = view.transform_vector3(sun);
    if eye.z >= 0.0 {
        return None;
    }
    let clip = projection * eye.extend(0.0);
    let ndc = Vec2::new(clip.x, clip.y) / clip.w;
    (ndc.abs().max_element() <= 1.1).then_some(ndc)
}

/// Where element `e` is drawn with the sun at `sun` (NDC).
pub fn element_center(sun: Vec2, e: &Element) -> Vec2 {
    sun + (-2.0 * sun) * e.distance
}

/// The opacity factor of element `e` with the sun `r` (NDC) from the centre, and its scale.
pub fn element_fade(e: &Element, r: f32) -> (f32, f32) {
    let far = 1.0 - smoothstep(0.8, 1.45, r);
    let near = if e.distance > 0.0 {
        smoothstep(0.04, 0.3, r)
    } else {
        1.0
    };
    (far * near, 1.0 - 0.25 * r.min(1.0))
}

/// The overlay's opacity with the sun `r` (NDC) from the centre (before the occlusion).
pub fn blinding_opacity(r: f32) -> f32 {
    BLINDING_OPACITY * (1.0 - r / BLINDING_RADIUS).max(0.0).powi(2)
}

fn smoothstep(low: f32, high: f32, x: f32) -> f32 {
    let t = ((x - low) / (high - low)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The flare's program and element atlas.
pub struct Flare {
    program: Program,
    center: Uniform,
    half_size: Uniform,
    sun_uv: Uniform,
    probe: Uniform,
    scene_depth: Uniform,
    elements: Uniform,
    tile: Uniform,
    tiles: Uniform,
    tint: Uniform,
    atlas: glow::Texture,
    quad: glow::VertexArray,
}

impl Flare {
    /// Builds the program and generates the elements' atlas.
    pub fn new(gl: &glow::Context) -> Result<Flare> {
        let program = Program::new(
            gl,
            &shader!("flare", "particles/flare.vert", "particles/flare.frag"),
        )?;
        let atlas = textures::upload(
            gl,
            FLARE_TILES * FLARE_SIZE,
            FLARE_SIZE,
            1,
            &textures::flare_atlas(),
            Sampling::Clamp,
        )?;
        // SAFETY: GL call on the current context (an empty vertex array: corners come from
        // gl_VertexID).
        let quad = unsafe { gl.create_vertex_array() }.map_err(|e| anyhow!("vertex array: {e}"))?;
        let u = |name: &str| program.uniform(gl, name);
        Ok(Flare {
            center: u("center")?,
            half_size: u("half_size")?,
            sun_uv: u("sun_uv")?,
            probe: u("probe")?,
            scene_depth: u("scene_depth")?,
            elements: u("elements")?,
            tile: u("tile")?,
            tiles: u("tiles")?,
            tint: u("tint")?,
            program,
            atlas,
            quad,
        })
    }

    /// Binds the program with the sun at `sun` (NDC) and the probe of its disc in `depth`.
    fn begin(&self, gl: &glow::Context, sun: Vec2, projection: Mat4, depth: glow::Texture) {
        self.program.bind(gl);
        self.sun_uv.set(gl, sun * 0.5 + Vec2::splat(0.5));
        let probe = Vec2::new(projection.x_axis.x, projection.y_axis.y) * (0.5 * 0.8 * SUN_RADIUS);
        self.probe.set(gl, probe);
        self.scene_depth.set(gl, 1);
        self.elements.set(gl, 0);
        self.tiles.set(gl, FLARE_TILES as f32);
        // SAFETY: GL calls on the current context; the textures are the renderer's.
        unsafe {
            gl.active_texture(glow::TEXTURE1);
            gl.bind_texture(glow::TEXTURE_2D, Some(depth));
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(self.atlas));
            gl.disable(glow::DEPTH_TEST);
            gl.enable(glow::BLEND);
            gl.bind_vertex_array(Some(self.quad));
        }
    }

    fn end(&self, gl: &glow::Context) {
        // SAFETY: GL state calls on the current context.
        unsafe {
            gl.bind_vertex_array(None);
            gl.disable(glow::BLEND);
            gl.enable(glow::DEPTH_TEST);
        }
    }

    fn quad(&self, gl: &glow::Context, center: Vec2, half_size: Vec2, tile: i32, tint: Vec4) {
        self.center.set(gl, center);
        self.half_size.set(gl, half_size);
        self.tile.set(gl, tile);
        self.tint.set(gl, tint);
        // SAFETY: a draw on the current context with the empty vertex array bound.
        unsafe { gl.draw_arrays(glow::TRIANGLE_STRIP, 0, 4) };
    }

    /// `flare`: the halos, then the bursts, added over the bound framebuffer, with the sun at
    /// `sun` (NDC) in a picture of `aspect` (width / height); `depth` is the scene's depth.
    pub fn draw(
        &self,
        gl: &glow::Context,
        sun: Vec2,
        aspect: f32,
        projection: Mat4,
        depth: glow::Texture,
        light: &Light,
    ) {
        self.begin(gl, sun, projection, depth);
        // SAFETY: GL state call on the current context.
        unsafe { gl.blend_func(glow::SRC_ALPHA, glow::ONE) };
        let r = sun.length();
        let warm = light.color / light.color.max_element();
        for e in HALOS.iter().chain(&BURSTS) {
            let (fade, scale) = element_fade(e, r);
            if fade <= 0.0 {
                continue;
            }
            let size = e.size * scale;
            let color = if e.distance == 0.0 {
                e.color * warm
            } else {
                e.color
            };
            self.quad(
                gl,
                element_center(sun, e),
                Vec2::new(size / aspect, size),
                e.tile as i32,
                color.extend(e.opacity * fade),
            );
        }
        self.end(gl);
    }

    /// `blinding`: the white overlay over the bound framebuffer, with the sun at `sun` (NDC).
    pub fn draw_blinding(
        &self,
        gl: &glow::Context,
        sun: Vec2,
        projection: Mat4,
        depth: glow::Texture,
    ) {
        let opacity = blinding_opacity(sun.length());
        if opacity <= 0.0 {
            return;
        }
        self.begin(gl, sun, projection, depth);
        // SAFETY: GL state call on the current context.
        unsafe { gl.blend_func(glow::SRC_ALPHA, glow::ONE_MINUS_SRC_ALPHA) };
        self.quad(
            gl,
            Vec2::ZERO,
            Vec2::ONE,
            -1,
            Vec4::new(1.0, 1.0, 1.0, opacity),
        );
        self.end(gl);
    }

    /// Frees the GL objects.
    pub fn delete(&self, gl: &glow::Context) {
        self.program.delete(gl);
        // SAFETY: GL calls on the current context; the objects are this pass's.
        unsafe {
            gl.delete_texture(self.atlas);
            gl.delete_vertex_array(self.quad);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx::camera::Camera;

    #[test]
    fn elements_follow_the_three_js_convention() {
        let sun = Vec2::new(0.4, 0.3);
        let at = |d: f32| element_center(sun, &element(0, d, 0.1, [1.0; 3], 1.0));
        assert_eq!(at(0.0), sun);
        assert!(at(0.5).length() < 1e-6);
        assert!((at(1.0) + sun).length() < 1e-6);
    }

    #[test]
    fn fades_far_from_and_near_the_centre_and_blinds_only_near_it() {
        let ring = &HALOS[1];
        assert!(element_fade(ring, 0.5).0 > 0.95);
        assert!(element_fade(ring, 0.02).0 < 1e-6);
        assert!(element_fade(ring, 1.5).0 < 1e-6);
        assert_eq!(element_fade(&HALOS[0], 0.0).0, 1.0);
        assert!(blinding_opacity(0.0) > 0.8 && blinding_opacity(BLINDING_RADIUS) == 0.0);
    }

    #[test]
    fn the_sun_behind_the_camera_is_not_on_the_screen() {
        let mut camera = Camera {
            target: Vec3::ZERO,
            yaw: 0.0,
            pitch: 0.0,
            distance: 5.0,
        };
        let projection = camera.projection(16.0 / 9.0);
        let ahead = Vec3::new(0.1, 0.1, -1.0).normalize();
        let ndc = sun_on_screen(camera.view(), projection, ahead).unwrap();
        assert!(ndc.x > 0.0 && ndc.y > 0.0 && ndc.length() < 0.5);
        camera.yaw = std::f32::consts::PI;
        assert_eq!(sun_on_screen(camera.view(), projection, ahead), None);
    }
}
