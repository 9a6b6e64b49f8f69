//! The pool render tests' aliasing metric (tests/pool_render_aliasing.rs and pool_render_edges.rs use it,
//! docs/pool-filtering.md quotes it): a low picture against the same picture at SUPER times its resolution,
//! box-downsampled (SUPER² samples a pixel: what the pixel should show); their difference over
//! the water is the aliasing energy.

// Each test file that includes it reads part of a Measure.
#![allow(dead_code)]

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;

/// The reference's samples per pixel along each axis.
pub const SUPER: u32 = 4;

/// What the low picture and its reference show over the water.
pub struct Measure {
    /// |low − reference| summed over the colour channels, per pixel.
    pub aliasing: f64,
    /// The same over the farthest sixth of the rows that see the water (the top ones, where a
    /// pixel spans several of the surface's cells) and over the nearest sixth.
    pub far: f64,
    pub near: f64,
    /// The brightness' standard deviation over the nearest sixth of the rows, the low picture's
    /// and the reference's: the detail near by, which a filter for the far rows must not blur.
    pub near_deviations: [f64; 2],
    /// The mean brightness (channels' mean, 0–255) of the low picture and the reference.
    pub means: [f64; 2],
    /// The aliasing over the waterline's band: the pixels whose centre meets the rest level
    /// inside the pool but within 2 cm of its walls (left out of the rest), where a tap over
    /// the footprint may land past the wall.
    pub waterline: f64,
    /// The reference's brightness' standard deviation over the water: the detail there is to
    /// filter (a renderer that blurs it away, draws it flat or black scores low aliasing too).
    pub reference_deviation: f64,
}

/// Over the pixels of `low` that see the water (all four corners' rays from `camera` meet the
/// rest level inside the pool of side `size`, 2 cm in from its walls): the aliasing, the mean
/// of |low − reference| summed over the colour channels, the reference `high` (SUPER times
/// `low`'s size) averaged over each pixel's SUPER² samples; the mean brightnesses and the
/// reference's spread.
pub fn measure(camera: &Camera, low: &Image, high: &Image, size: f32) -> Measure {
    let (width, height) = (low.width(), low.height());
    assert_eq!(
        (high.width(), high.height()),
        (SUPER * width, SUPER * height),
        "the reference is SUPER times the low picture"
    );
    let eye = camera.eye();
    let on_water = |x: f32, y: f32| {
        let ray = camera.ray([x, y], [width, height]).1;
        if ray.y >= 0.0 {
            return false;
        }
        let hit = eye + ray * (-eye.y / ray.y);
        let inside = 0.02..size - 0.02;
        inside.contains(&hit.x) && inside.contains(&hit.z)
    };
    let in_pool = |x: f32, y: f32| {
        let ray = camera.ray([x, y], [width, height]).1;
        let hit = eye + ray * (-eye.y / ray.y);
        ray.y < 0.0 && (0.0..size).contains(&hit.x) && (0.0..size).contains(&hit.z)
    };
    let (mut band_sum, mut band_pixels) = (0.0, 0usize);
    let (mut sum, mut pixels) = (0.0, 0usize);
    // Per row: the aliasing summed and the pixels.
    let mut rows = vec![(0.0, 0usize); height as usize];
    // Per row: the low picture's and the reference's brightness over the water.
    let mut brightness_rows = vec![Vec::new(); height as usize];
    let (mut low_sum, mut reference_sum, mut reference_squares) = (0.0, 0.0, 0.0);
    for y in 0..height {
        for x in 0..width {
            let (fx, fy) = (x as f32, y as f32);
            if ![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
                .iter()
                .all(|&(dx, dy)| on_water(fx + dx, fy + dy))
            {
                if in_pool(fx + 0.5, fy + 0.5) {
                    band_sum += difference(low, high, x, y);
                    band_pixels += 1;
                }
                continue;
            }
            let mut reference = [0.0f64; 3];
            for sy in 0..SUPER {
                for sx in 0..SUPER {
                    let p = high.get_pixel(SUPER * x + sx, SUPER * y + sy);
                    for c in 0..3 {
                        reference[c] += f64::from(p[c]);
                    }
                }
            }
            let p = low.get_pixel(x, y);
            let brightness = reference.iter().sum::<f64>() / f64::from(3 * SUPER * SUPER);
            reference_sum += brightness;
            reference_squares += brightness * brightness;
            low_sum += (0..3).map(|c| f64::from(p[c])).sum::<f64>() / 3.0;
            let difference = (0..3)
                .map(|c| (f64::from(p[c]) - reference[c] / f64::from(SUPER * SUPER)).abs())
                .sum::<f64>();
            sum += difference;
            pixels += 1;
            rows[y as usize].0 += difference;
            rows[y as usize].1 += 1;
            let low_brightness = (0..3).map(|c| f64::from(p[c])).sum::<f64>() / 3.0;
            brightness_rows[y as usize].push([low_brightness, brightness]);
        }
    }
    assert!(
        pixels > (width * height / 5) as usize,
        "only {pixels} pixels see the water"
    );
    let count = pixels as f64;
    let reference_mean = reference_sum / count;
    let water: Vec<_> = rows.iter().filter(|r| r.1 > 0).collect();
    let sixth = water.len().div_ceil(6);
    let near_rows: Vec<[f64; 2]> = brightness_rows
        .iter()
        .filter(|r| !r.is_empty())
        .skip(water.len() - sixth)
        .flatten()
        .copied()
        .collect();
    let deviation = |k: usize| {
        let n = near_rows.len() as f64;
        let mean = near_rows.iter().map(|b| b[k]).sum::<f64>() / n;
        (near_rows.iter().map(|b| (b[k] - mean).powi(2)).sum::<f64>() / n).sqrt()
    };
    let mean_of = |rows: &[&(f64, usize)]| {
        let (s, n) = rows.iter().fold((0.0, 0), |(s, n), r| (s + r.0, n + r.1));
        s / n as f64
    };
    Measure {
        aliasing: sum / count,
        far: mean_of(&water[..sixth]),
        near: mean_of(&water[water.len() - sixth..]),
        near_deviations: [deviation(0), deviation(1)],
        waterline: band_sum / band_pixels.max(1) as f64,
        means: [low_sum / count, reference_mean],
        reference_deviation: (reference_squares / count - reference_mean * reference_mean)
            .max(0.0)
            .sqrt(),
    }
}

/// |low − reference| at pixel (x, y) summed over the colour channels, the reference the mean of
/// the high picture's SUPER × SUPER samples over the pixel.
pub fn difference(low: &Image, high: &Image, x: u32, y: u32) -> f64 {
    let p = low.get_pixel(x, y);
    (0..3)
        .map(|c| {
            let reference = (0..SUPER * SUPER)
                .map(|s| f64::from(high.get_pixel(SUPER * x + s % SUPER, SUPER * y + s / SUPER)[c]))
                .sum::<f64>();
            (f64::from(p[c]) - reference / f64::from(SUPER * SUPER)).abs()
        })
        .sum::<f64>()
}
