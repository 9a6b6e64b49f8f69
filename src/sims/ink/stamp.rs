//! The brush stamp: a small alpha texture that modulates the ink a brush stroke lays (not its
//! push), as the original's 64-px `brushTex` did (`specs/003-ink.md`, "Splat": `c +=
//! splat·color·brushAlpha`, `v += splat·mouseDelta`). The textures are generated here, not
//! loaded: `round` is none (the plain Gaussian), `bristle` a row of bristles that leave
//! streaks, `dry` fewer, thinner bristles with breaks along them (a dry brush).
//!
//! The texture spans the stamp's square — three Gaussian radii either side of its centre, the
//! box the splat touches — so it scales with the brush radius. Its columns run **along** the
//! stroke and its rows across it: a stamp is turned to the brush's direction of motion, so the
//! bristles draw streaks parallel to the stroke, as a real brush does. It is sampled
//! bilinearly (texel centres, clamped at the edges) on the CPU and in the CUDA `splat` kernel
//! with the same operations.

use serde::Deserialize;

/// Texels along each side of a stamp texture (the original's `brushSize`).
pub const STAMP_TEXELS: usize = 64;

/// Which stamp the brush lays ink with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrushStamp {
    /// No texture: the plain Gaussian.
    #[default]
    Round,
    /// Bristles of varied width and strength: streaks along the stroke.
    Bristle,
    /// Fewer, thinner bristles that break off along the stroke.
    Dry,
}

impl BrushStamp {
    /// Every stamp, in menu order.
    pub const ALL: [BrushStamp; 3] = [BrushStamp::Round, BrushStamp::Bristle, BrushStamp::Dry];

    /// The scene-file and UI name.
    pub fn name(self) -> &'static str {
        match self {
            BrushStamp::Round => "round",
            BrushStamp::Bristle => "bristle",
            BrushStamp::Dry => "dry",
        }
    }

    /// The stamp's alpha, [`STAMP_TEXELS`]² values in 0–1, row-major: a row per position
    /// across the stroke, a column per position along it; `None` for the round brush.
    pub fn texture(self) -> Option<Vec<f32>> {
        match self {
            BrushStamp::Round => None,
            BrushStamp::Bristle => Some(bristles(11, 0.30, 0.0, 0x5eed_b415)),
            BrushStamp::Dry => Some(bristles(8, 0.18, 0.7, 0x000d_1eb7)),
        }
    }
}

/// A deterministic pseudo-random sequence in [0, 1) (xorshift64*).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `count` bristles spread over ±1.7 Gaussian radii across the stroke, each of a random
/// width (about `width` of the spacing between bristles) and strength; with `breaks` > 0 each
/// bristle also fades in and out along the stroke (a dry brush skipping).
fn bristles(count: usize, width: f32, breaks: f32, seed: u64) -> Vec<f32> {
    let mut noise = Noise(seed);
    // A texel is 6/64 radii: the texture spans ±3 radii.
    let radii = |texel: usize| (texel as f32 + 0.5) / STAMP_TEXELS as f32 * 6.0 - 3.0;
    let spacing = 3.4 / count as f32;
    let hairs: Vec<[f32; 5]> = (0..count)
        .map(|k| {
            let centre = -1.7 + spacing * (k as f32 + 0.2 + 0.6 * noise.next());
            let half_width = spacing * width * (0.6 + 0.8 * noise.next());
            let strength = 0.65 + 0.35 * noise.next();
            let phase = std::f32::consts::TAU * noise.next();
            let wavelength = 1.5 + 2.0 * noise.next();
            [centre, half_width, strength, phase, wavelength]
        })
        .collect();
    let mut texture = vec![0.0; STAMP_TEXELS * STAMP_TEXELS];
    for (row, line) in texture.chunks_mut(STAMP_TEXELS).enumerate() {
        let across = radii(row);
        for (column, alpha) in line.iter_mut().enumerate() {
            let along = radii(column);
            let sum: f32 = hairs
                .iter()
                .map(|&[centre, half_width, strength, phase, wavelength]| {
                    let d = (across - centre) / half_width;
                    let skip = 1.0
                        - breaks
                            * (0.5
                                + 0.5 * (std::f32::consts::TAU * along / wavelength + phase).sin());
                    strength * skip * (-d * d).exp()
                })
                .sum();
            *alpha = sum.min(1.0);
        }
    }
    texture
}

/// The stamp's alpha at offset (ex, ey) m from a stamp of Gaussian radius `radius` moving along
/// the unit vector `direction`: the texture sampled bilinearly at that point of the stamp's
/// square (turned to the direction), clamped to the edge texels beyond it. `kernels/ink.cu`
/// `stamp_alpha` does the same operations.
#[inline]
pub fn alpha(texture: &[f32], ex: f32, ey: f32, direction: [f32; 2], radius: f32) -> f32 {
    let n = STAMP_TEXELS as f32;
    // Texels per metre: the texture spans six radii.
    let scale = n / (6.0 * radius);
    let along = (ex * direction[0] + ey * direction[1]) * scale + 0.5 * n - 0.5;
    let across = (ey * direction[0] - ex * direction[1]) * scale + 0.5 * n - 0.5;
    let fx = along.max(0.0).min(n - 1.0);
    let fy = across.max(0.0).min(n - 1.0);
    let (i, j) = (
        (fx as usize).min(STAMP_TEXELS - 2),
        (fy as usize).min(STAMP_TEXELS - 2),
    );
    let (tx, ty) = (fx - i as f32, fy - j as f32);
    let k = j * STAMP_TEXELS + i;
    let (a, b) = (texture[k], texture[k + 1]);
    let (c, d) = (texture[k + STAMP_TEXELS], texture[k + STAMP_TEXELS + 1]);
    (a + (b - a) * tx) * (1.0 - ty) + (c + (d - c) * tx) * ty
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bristle stamp has bristles and gaps between them across the stroke, and is the
    /// same along it; the dry one breaks along it.
    #[test]
    fn the_bristle_stamps_have_bristles_and_gaps() {
        let bristle = BrushStamp::Bristle.texture().unwrap();
        // Across the middle column, within ±1.5 radii (rows 16–48).
        let column: Vec<f32> = (16..48).map(|r| bristle[r * STAMP_TEXELS + 32]).collect();
        let high = column.iter().filter(|&&a| a > 0.6).count();
        let low = column.iter().filter(|&&a| a < 0.2).count();
        assert!(high >= 6 && low >= 6, "{column:?}");
        let row = &bristle[30 * STAMP_TEXELS..31 * STAMP_TEXELS];
        assert!(row.iter().all(|&a| (a - row[0]).abs() < 1e-6), "{row:?}");
        let dry = BrushStamp::Dry.texture().unwrap();
        let along = (0..STAMP_TEXELS)
            .map(|c| (16..48).map(|r| dry[r * STAMP_TEXELS + c]).sum::<f32>())
            .fold((f32::MAX, 0.0f32), |(lo, hi), s| (lo.min(s), hi.max(s)));
        assert!(along.0 < 0.8 * along.1, "{along:?}");
        assert!(BrushStamp::Round.texture().is_none());
    }

    /// Sampling at a texel's centre gives the texel; turning the direction by 90° swaps the
    /// axes.
    #[test]
    fn alpha_samples_texel_centres_and_turns_with_the_direction() {
        let texture: Vec<f32> = (0..STAMP_TEXELS * STAMP_TEXELS).map(|k| k as f32).collect();
        let r = 0.64;
        // Texel (40, 20)'s centre: along (40.5 − 32)·(6r/64), across (20.5 − 32)·(6r/64).
        let texel = 6.0 * r / STAMP_TEXELS as f32;
        let (along, across) = (8.5 * texel, -11.5 * texel);
        let east = alpha(&texture, along, across, [1.0, 0.0], r);
        assert!((east - (20 * 64 + 40) as f32).abs() < 1e-2, "{east}");
        let north = alpha(&texture, -across, along, [0.0, 1.0], r);
        assert!((north - east).abs() < 1e-2, "{north} vs {east}");
    }
}
