//! The kind's pictures, all generated in code (nothing downloaded or shipped): the two water
//! sprites, the lens flare's elements, the cloth's and the jelly's fabrics and the landscape's
//! grass. Each texel is a pure function of its coordinates, so tests can compute what a pixel
//! should be.

use anyhow::{anyhow, Result};
use glam::{Vec2, Vec3};
use glow::HasContext;

/// Texels along a water sprite's side.
pub const SPRITE_SIZE: usize = 64;
/// Texels along a flare element's side.
pub const FLARE_SIZE: usize = 128;
/// Flare element tiles in the atlas, left to right.
pub const FLARE_TILES: usize = 4;
/// Texels along a fabric's or the grass's side.
pub const FABRIC_SIZE: usize = 256;

/// Integer hash to [0, 1).
pub fn hash(x: i32, y: i32) -> f32 {
    let mut h = (x as u32).wrapping_mul(374_761_393) ^ (y as u32).wrapping_mul(668_265_263);
    h = (h ^ (h >> 13)).wrapping_mul(1_274_126_177);
    (h ^ (h >> 16)) as f32 / (u32::MAX as f32 + 1.0)
}

/// Smooth value noise in [0, 1) on the integer lattice, wrapping with `period` cells.
pub fn value_noise(p: Vec2, period: i32) -> f32 {
    let cell = p.floor();
    let f = p - cell;
    let s = f * f * (Vec2::splat(3.0) - 2.0 * f);
    let wrap = |v: i32| if period > 0 { v.rem_euclid(period) } else { v };
    let (x, y) = (cell.x as i32, cell.y as i32);
    let at = |dx: i32, dy: i32| hash(wrap(x + dx), wrap(y + dy));
    let top = at(0, 0) + (at(1, 0) - at(0, 0)) * s.x;
    let bottom = at(0, 1) + (at(1, 1) - at(0, 1)) * s.x;
    top + (bottom - top) * s.y
}

/// Four octaves of [`value_noise`], in [0, 1).
pub fn fractal_noise(p: Vec2, period: i32) -> f32 {
    (0..4)
        .map(|o| value_noise(p * 2f32.powi(o), period << o) * 0.5f32.powi(o + 1))
        .sum::<f32>()
        / 0.9375
}

/// Water sprite `sprite` (0: a round drop with a bright core, 1: a splash, longer than wide
/// along the texture's v, the billboard's velocity axis) at texel (`x`, `y`): white-blue RGB
/// and an opacity, all symmetric about the tile's centre lines.
pub fn sprite_texel(sprite: usize, x: usize, y: usize) -> [u8; 4] {
    let n = SPRITE_SIZE as f32;
    let u = (x as f32 + 0.5) / n * 2.0 - 1.0;
    let v = (y as f32 + 0.5) / n * 2.0 - 1.0;
    let (rgb, alpha) = if sprite == 0 {
        // Clear from 0.95 of the half-side, so the rim texels are 0.
        let r = (u * u + v * v).sqrt() / 0.95;
        let a = (1.0 - r * r).max(0.0).powf(1.5);
        let core = (1.0 - r / 0.45).max(0.0);
        (Vec3::new(0.8, 0.92, 1.0).lerp(Vec3::ONE, core), a)
    } else {
        let r = ((u / 0.55).powi(2) + v * v).sqrt();
        let ripple = 0.75 + 0.25 * (6.0 * v.abs()).cos();
        let a = (1.0 - r).max(0.0).powf(0.8) * ripple * 0.9;
        (Vec3::new(0.75, 0.88, 1.0), a)
    };
    let byte = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
    [byte(rgb.x), byte(rgb.y), byte(rgb.z), byte(alpha)]
}

/// Flare element tile `tile` (0 glow, 1 ring, 2 hexagon, 3 burst) at texel (`x`, `y`): its
/// brightness 0..1, zero at the tile's border.
pub fn flare_texel(tile: usize, x: usize, y: usize) -> f32 {
    let n = FLARE_SIZE as f32;
    let p = Vec2::new(
        (x as f32 + 0.5) / n * 2.0 - 1.0,
        (y as f32 + 0.5) / n * 2.0 - 1.0,
    );
    let r = p.length();
    let edge = (1.0 - r).clamp(0.0, 1.0);
    let value = match tile {
        0 => edge.powi(3) + 0.5 * (1.0 - r / 0.2).max(0.0),
        1 => {
            let band = ((r - 0.78) / 0.09).powi(2);
            (-band).exp() * 0.9 + 0.08 * edge
        }
        2 => {
            // A regular hexagon's distance: the largest projection on its edge normals.
            let angle = p.y.atan2(p.x);
            let sector = std::f32::consts::FRAC_PI_3;
            let local = (angle.rem_euclid(sector) - 0.5 * sector).cos() * r;
            let inside = 1.0 - ((local - 0.7) / 0.06).clamp(0.0, 1.0);
            inside * (0.35 + 0.45 * local / 0.76)
        }
        _ => {
            let angle = p.y.atan2(p.x);
            let rays =
                (angle * 6.0).cos().abs().powf(24.0) + 0.6 * (angle * 17.0).cos().abs().powf(60.0);
            (rays * edge.powf(1.5) + edge.powi(6)).min(1.0)
        }
    };
    // Faded to 0 before the tile's border texels (r ≥ 0.98), so neither the quad's edge nor the
    // next tile in the atlas shows.
    value.clamp(0.0, 1.0) * ((0.98 - r) / 0.08).clamp(0.0, 1.0)
}

/// The cloth's fabric at texel (`x`, `y`): a tartan of crossing stripes over a fine weave.
pub fn cloth_texel(x: usize, y: usize) -> [u8; 4] {
    let n = FABRIC_SIZE as f32;
    let (u, v) = (x as f32 / n, y as f32 / n);
    let stripe = |t: f32| {
        let s = (t * 8.0).fract();
        if s < 0.12 {
            2
        } else if (0.45..0.6).contains(&s) {
            1
        } else {
            0
        }
    };
    let palette = [
        Vec3::new(0.62, 0.08, 0.07),
        Vec3::new(0.10, 0.22, 0.45),
        Vec3::new(0.95, 0.85, 0.45),
    ];
    let a = palette[stripe(u)];
    let b = palette[stripe(v)];
    let weave = if (x + y).is_multiple_of(2) { 1.0 } else { 0.88 };
    let color = a.lerp(b, 0.5) * weave;
    let byte = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
    [byte(color.x), byte(color.y), byte(color.z), 255]
}

/// The jelly's skin at texel (`x`, `y`): raspberry with lighter grid lines and speckles.
pub fn jelly_texel(x: usize, y: usize) -> [u8; 4] {
    let n = FABRIC_SIZE as f32;
    let p = Vec2::new(x as f32 / n, y as f32 / n);
    let grid = p * 4.0;
    let g = (grid - grid.round()).abs().min_element();
    let line = 1.0 - (g / 0.04).clamp(0.0, 1.0);
    let speckle = fractal_noise(p * 16.0, 16);
    let base = Vec3::new(0.78, 0.12, 0.25) * (0.8 + 0.3 * speckle);
    let color = base.lerp(Vec3::new(1.0, 0.75, 0.8), 0.6 * line);
    let byte = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
    [byte(color.x), byte(color.y), byte(color.z), 255]
}

/// The landscape's grass at texel (`x`, `y`) (tiles seamlessly).
pub fn grass_texel(x: usize, y: usize) -> [u8; 4] {
    let n = FABRIC_SIZE as f32;
    let p = Vec2::new(x as f32, y as f32) / n;
    let large = fractal_noise(p * 4.0, 4);
    let fine = value_noise(p * 64.0, 64);
    let color =
        Vec3::new(0.20, 0.32, 0.10).lerp(Vec3::new(0.42, 0.40, 0.18), large) * (0.8 + 0.3 * fine);
    let byte = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
    [byte(color.x), byte(color.y), byte(color.z), 255]
}

/// How a texture is sampled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Mipmapped, repeating (fabrics, grass).
    Repeat,
    /// Mipmapped, clamped to its edges (sprites, flare elements).
    Clamp,
}

/// Uploads `width` × `height` texels of `channels` bytes (1: red, 4: RGBA) as a mipmapped 2D
/// texture.
pub fn upload(
    gl: &glow::Context,
    width: usize,
    height: usize,
    channels: usize,
    texels: &[u8],
    sampling: Sampling,
) -> Result<glow::Texture> {
    let (internal, format) = if channels == 1 {
        (glow::R8, glow::RED)
    } else {
        (glow::RGBA8, glow::RGBA)
    };
    let wrap = match sampling {
        Sampling::Repeat => glow::REPEAT,
        Sampling::Clamp => glow::CLAMP_TO_EDGE,
    };
    // SAFETY: GL calls on the current context; `texels` holds width × height × channels bytes
    // and the unpack alignment is 1.
    unsafe {
        let texture = gl.create_texture().map_err(|e| anyhow!("texture: {e}"))?;
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            internal as i32,
            width as i32,
            height as i32,
            0,
            format,
            glow::UNSIGNED_BYTE,
            Some(texels),
        );
        gl.generate_mipmap(glow::TEXTURE_2D);
        for (parameter, value) in [
            (glow::TEXTURE_MIN_FILTER, glow::LINEAR_MIPMAP_LINEAR),
            (glow::TEXTURE_MAG_FILTER, glow::LINEAR),
            (glow::TEXTURE_WRAP_S, wrap),
            (glow::TEXTURE_WRAP_T, wrap),
        ] {
            gl.tex_parameter_i32(glow::TEXTURE_2D, parameter, value as i32);
        }
        gl.bind_texture(glow::TEXTURE_2D, None);
        Ok(texture)
    }
}

/// Texels of a `size`² picture, row by row, from `texel(x, y)`.
pub fn generate(size: usize, texel: impl Fn(usize, usize) -> [u8; 4]) -> Vec<u8> {
    (0..size * size)
        .flat_map(|k| texel(k % size, k / size))
        .collect()
}

/// The two sprites side by side (2·SPRITE_SIZE × SPRITE_SIZE, RGBA).
pub fn sprite_atlas() -> Vec<u8> {
    let width = 2 * SPRITE_SIZE;
    (0..width * SPRITE_SIZE)
        .flat_map(|k| {
            let (x, y) = (k % width, k / width);
            sprite_texel(x / SPRITE_SIZE, x % SPRITE_SIZE, y)
        })
        .collect()
}

/// The flare elements side by side (FLARE_TILES·FLARE_SIZE × FLARE_SIZE, one channel).
pub fn flare_atlas() -> Vec<u8> {
    let width = FLARE_TILES * FLARE_SIZE;
    (0..width * FLARE_SIZE)
        .map(|k| {
            let (x, y) = (k % width, k / width);
            (flare_texel(x / FLARE_SIZE, x % FLARE_SIZE, y) * 255.0).round() as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprites_are_opaque_in_the_middle_clear_at_the_rim_and_symmetric() {
        let n = SPRITE_SIZE;
        for sprite in 0..2 {
            assert!(sprite_texel(sprite, n / 2, n / 2)[3] > 150);
            assert_eq!(sprite_texel(sprite, 0, n / 2)[3], 0);
            assert_eq!(
                sprite_texel(sprite, n / 2 - 1, n / 2 - 1),
                sprite_texel(sprite, n / 2, n / 2)
            );
            assert_eq!(
                sprite_texel(sprite, 3, 9),
                sprite_texel(sprite, n - 4, n - 10)
            );
        }
    }

    #[test]
    fn flare_elements_vanish_at_their_border() {
        for tile in 0..FLARE_TILES {
            for k in 0..FLARE_SIZE {
                assert!(flare_texel(tile, k, 0) < 1e-6 && flare_texel(tile, 0, k) < 1e-6);
            }
        }
        // A glow is brightest at its centre; a ring is dark there and bright on its band.
        let c = FLARE_SIZE / 2;
        assert!(flare_texel(0, c, c) > 0.9);
        assert!(flare_texel(1, c, c) < 0.2);
        assert!(flare_texel(1, c + (0.78 * c as f32) as usize, c) > 0.8);
    }
}
