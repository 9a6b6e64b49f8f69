//! The emitter's random numbers: a counter-based hash of (seed, particle, draw), so a particle's
//! numbers depend on nothing but its emission index — the CPU and the kernel (`particles_unit`
//! in `kernels/particles.cu`, the same integer operations) draw the same ones in any order.

/// Chris Wellons' `lowbias32` integer hash (bijective on u32, full avalanche).
pub fn hash(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// The 32-bit key of `seed` the draws start from.
pub fn key(seed: u64) -> u32 {
    hash(seed as u32 ^ hash((seed >> 32) as u32 ^ 0x9e37_79b9))
}

/// Draw `draw` of particle `particle` (its emission index) under `key`: uniform in [0, 1),
/// 24 bits.
pub fn unit(key: u32, particle: u64, draw: u32) -> f32 {
    let h = hash(hash(key ^ draw.wrapping_mul(0x9e37_79b9)) ^ particle as u32);
    let h = hash(h ^ (particle >> 32) as u32);
    (h >> 8) as f32 * (1.0 / 16_777_216.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draws are uniform (mean ½, variance 1/12, each tenth holding a tenth) and distinct
    /// draws of one particle, and one draw of neighbouring particles, are uncorrelated.
    #[test]
    fn draws_are_uniform_and_uncorrelated() {
        let k = key(1);
        let n = 100_000u64;
        let values: Vec<f32> = (0..n).map(|p| unit(k, p, 0)).collect();
        let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
        let variance = values
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        assert!((variance - 1.0 / 12.0).abs() < 0.002, "{variance}");
        let mut bins = [0u32; 10];
        for &v in &values {
            assert!((0.0..1.0).contains(&v));
            bins[(v * 10.0) as usize] += 1;
        }
        for b in bins {
            assert!((f64::from(b) - 10_000.0).abs() < 400.0, "{bins:?}");
        }
        let correlation = |a: &dyn Fn(u64) -> f32, b: &dyn Fn(u64) -> f32| {
            (0..n)
                .map(|p| (f64::from(a(p)) - 0.5) * (f64::from(b(p)) - 0.5))
                .sum::<f64>()
                / n as f64
                * 12.0
        };
        let draws = correlation(&|p| unit(k, p, 0), &|p| unit(k, p, 1));
        let neighbours = correlation(&|p| unit(k, p, 2), &|p| unit(k, p + 1, 2));
        let seeds = correlation(&|p| unit(k, p, 0), &|p| unit(key(2), p, 0));
        for c in [draws, neighbours, seeds] {
            assert!(c.abs() < 0.02, "{draws} {neighbours} {seeds}");
        }
    }
}
