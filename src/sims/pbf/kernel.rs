//! The SPH smoothing kernel: Wendland C2 in 3D (Wendland 1995; Dehnen & Aly 2012), used for
//! the density *and* its gradient.
//!
//! The PBF paper takes Poly6 for the density and Spiky's gradient for ∇C (after Müller et al.
//! 2003). The two disagree, so the correction λ ∇C is not the direction that changes the
//! density C measures; the projection then also slides particles along the constraint, and
//! under gravity a fluid at rest never stops jittering: a 15-layer pool kept 0.03 m/s rms (1.8 %
//! of √(g·depth)) after 3 s, more with more iterations. With one kernel for both (docs/solver.md
//! compares Spiky–Spiky, cubic spline and Wendland C2) the same pool settles to 0.007 m/s;
//! Wendland C2 is also free of the pairing instability (its Fourier transform is positive) and
//! smooth at the origin and the support's edge.
//!
//! `kernels/pbf_common.cuh` mirrors these formulas in the same operation order.

use glam::{Vec3A, Vec4};
use std::f32::consts::PI;

/// Wendland C2 value and gradient for one support radius `h`, with the constants precomputed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphKernel {
    /// Support radius h (the kernel is zero from h on), metres.
    pub radius: f32,
    radius_squared: f32,
    inverse_radius: f32,
    density_coefficient: f32,
    gradient_coefficient: f32,
    coincident_squared: f32,
}

/// xⁿ for a small non-negative n by repeated squaring, inlined (`f32::powi` is a libgcc call
/// that cost 7% of a step in s_corr).
#[inline(always)]
pub fn integer_power(mut x: f32, mut n: i32) -> f32 {
    let mut result = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            result *= x;
        }
        x *= x;
        n >>= 1;
    }
    result
}

/// Lane-wise xⁿ of four values, as [`integer_power`].
#[inline(always)]
pub fn integer_power_x4(mut x: Vec4, mut n: i32) -> Vec4 {
    let mut result = Vec4::ONE;
    while n > 0 {
        if n & 1 == 1 {
            result *= x;
        }
        x *= x;
        n >>= 1;
    }
    result
}

/// A unit vector that depends only on the (ordered) pair of ids: a cheap integer hash
/// mapped to a direction.
#[inline(always)]
pub fn pair_direction(low: u32, high: u32) -> Vec3A {
    let mut x = low.wrapping_mul(0x9E37_79B9) ^ high.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    let component = |shift: u32| ((x >> shift) & 0x3FF) as f32 / 511.5 - 1.0;
    let v = Vec3A::new(component(0), component(10), component(20));
    if v.length_squared() < 1e-6 {
        Vec3A::Y
    } else {
        v.normalize()
    }
}

impl SphKernel {
    /// The kernel of support `radius` (h > 0).
    pub fn new(radius: f32) -> Self {
        let h = radius;
        Self {
            radius: h,
            radius_squared: h * h,
            inverse_radius: 1.0 / h,
            density_coefficient: 21.0 / (2.0 * PI * h * h * h),
            gradient_coefficient: -210.0 / (PI * h.powi(5)),
            coincident_squared: (1e-4 * h) * (1e-4 * h),
        }
    }

    /// W(r) = 21 / (2π h³) · (1 − q)⁴ (1 + 4q), q = r/h < 1, else 0; takes r².
    #[inline(always)]
    pub fn density(&self, distance_squared: f32) -> f32 {
        if distance_squared >= self.radius_squared {
            return 0.0;
        }
        let q = distance_squared.sqrt() * self.inverse_radius;
        let a = 1.0 - q;
        let a2 = a * a;
        self.density_coefficient * a2 * a2 * (1.0 + 4.0 * q)
    }

    /// ∇ᵢW(xᵢ − xⱼ) = −210 / (π h⁵) · (1 − q)³ · (xᵢ − xⱼ) for r < h, else 0.
    ///
    /// `offset` is xᵢ − xⱼ; the gradient points from i towards j. It vanishes linearly at r = 0
    /// (no division by r).
    #[inline(always)]
    pub fn gradient(&self, offset: Vec3A, distance_squared: f32) -> Vec3A {
        if distance_squared >= self.radius_squared {
            return Vec3A::ZERO;
        }
        let a = 1.0 - distance_squared.sqrt() * self.inverse_radius;
        offset * (self.gradient_coefficient * a * a * a)
    }

    /// W and the scalar s with ∇W = s · offset for four squared distances at once (0 from h
    /// on), sharing the square root.
    #[inline(always)]
    pub fn density_and_gradient_scale_x4(&self, distance_squared: Vec4) -> (Vec4, Vec4) {
        let q = (distance_squared.sqrt() * self.inverse_radius).min(Vec4::ONE);
        let a = Vec4::ONE - q;
        let a2 = a * a;
        (
            a2 * a2 * (Vec4::ONE + 4.0 * q) * self.density_coefficient,
            a2 * a * self.gradient_coefficient,
        )
    }

    /// Whether any of four pairs is so close that [`SphKernel::pair_gradient`] must take its
    /// coincident-particle branch.
    #[inline(always)]
    pub fn any_coincident(&self, distance_squared: Vec4) -> bool {
        distance_squared
            .cmple(Vec4::splat(self.coincident_squared))
            .any()
    }

    /// (10⁻⁴ h)²: pairs closer than this take [`SphKernel::pair_gradient`]'s hashed direction.
    pub fn coincident_squared(&self) -> f32 {
        self.coincident_squared
    }

    /// h².
    pub fn radius_squared(&self) -> f32 {
        self.radius_squared
    }

    /// 1 / h.
    pub fn inverse_radius(&self) -> f32 {
        self.inverse_radius
    }

    /// 21 / (2π h³).
    pub fn density_coefficient(&self) -> f32 {
        self.density_coefficient
    }

    /// −210 / (π h⁵).
    pub fn gradient_coefficient(&self) -> f32 {
        self.gradient_coefficient
    }

    /// The largest |∇W|, at q = ¼: 210 / (π h⁴) · ¼ · (¾)³.
    pub fn gradient_peak(&self) -> f32 {
        -self.gradient_coefficient * self.radius * 0.25 * 0.421_875
    }

    /// The gradient for a pair of particles with ids `id_i`, `id_j`: ∇W, except for (nearly)
    /// coincident particles, where ∇W vanishes with the distance and its direction is
    /// undefined: there a fixed direction derived from the two ids, of the kernel's largest
    /// gradient magnitude, antisymmetric in i, j (momentum stays conserved). Without it, two
    /// particles projected onto the same wall point would never separate. `ids` is only
    /// called in that rare case, so the hot loop does not load ids.
    #[inline(always)]
    pub fn pair_gradient(
        &self,
        offset: Vec3A,
        distance_squared: f32,
        ids: impl FnOnce() -> (u32, u32),
    ) -> Vec3A {
        if distance_squared > self.coincident_squared {
            return self.gradient(offset, distance_squared);
        }
        let (id_i, id_j) = ids();
        let (low, high, sign) = if id_i < id_j {
            (id_i, id_j, 1.0)
        } else {
            (id_j, id_i, -1.0)
        };
        pair_direction(low, high) * (sign * self.gradient_peak())
    }

    /// Σⱼ W(|xⱼ|) over an infinite cubic lattice of the given spacing, the particle itself
    /// included: the number density (per m³) an interior particle of a seeded block sees.
    pub fn lattice_density_sum(&self, spacing: f32) -> f32 {
        self.lattice_sum(spacing, |k, d2, _| k.density(d2))
    }

    /// Points of an infinite cubic lattice of the given spacing within h of a lattice point,
    /// the point itself not counted: an interior particle's neighbours at rest (32 at h = 2
    /// spacings). Points at exactly h count: the slightest compression brings them inside.
    /// The loop spans (2h/spacing + 1)³ points: call it with a validated ratio.
    pub fn lattice_neighbours(&self, spacing: f32) -> u32 {
        let reach = (self.radius / spacing).ceil() as i32;
        let mut count = 0;
        for i in -reach..=reach {
            for j in -reach..=reach {
                for k in -reach..=reach {
                    let offset = Vec3A::new(i as f32, j as f32, k as f32) * spacing;
                    let distance_squared = offset.length_squared();
                    if distance_squared > 0.0 && distance_squared <= self.radius_squared {
                        count += 1;
                    }
                }
            }
        }
        count
    }

    /// Σⱼ |∇W(xⱼ)|² over the same lattice: the rest-state constraint stiffness up to the
    /// volume factor (see `Params::rest_stiffness`).
    pub fn lattice_gradient_square_sum(&self, spacing: f32) -> f32 {
        self.lattice_sum(spacing, |k, d2, offset| {
            k.gradient(offset, d2).length_squared()
        })
    }

    /// The largest eigenvalue μ of one Jacobi constraint iteration's response on the seeded
    /// lattice: a density wave of wave vector κ, corrected by λ = −C / Σ|∇C|², changes by −μ(κ)
    /// of itself, μ(κ) = |V Σⱼ ∇W(xⱼ) sin(κ·xⱼ)|² / Σ|∇C|²₀ (the iteration matrix's symbol).
    /// Waves with μ > 2 grow under plain Jacobi; at h = 2 spacings μ peaks at 2.6 (κ ≈ π/3s
    /// along a diagonal). Scanned over [0, π/s]³ on a 24³ grid.
    pub fn lattice_jacobi_peak(&self, spacing: f32) -> f32 {
        // A scan costs milliseconds; solvers ask at every step. Memoised per (h, spacing).
        type Peaks = std::sync::Mutex<std::collections::HashMap<(u32, u32), f32>>;
        static PEAKS: std::sync::OnceLock<Peaks> = std::sync::OnceLock::new();
        let key = (self.radius.to_bits(), spacing.to_bits());
        let peaks = PEAKS.get_or_init(Default::default);
        if let Some(&peak) = peaks
            .lock()
            .ok()
            .and_then(|p| p.get(&key).copied())
            .as_ref()
        {
            return peak;
        }
        let peak = self.scan_jacobi_peak(spacing);
        if let Ok(mut p) = peaks.lock() {
            p.insert(key, peak);
        }
        peak
    }

    fn scan_jacobi_peak(&self, spacing: f32) -> f32 {
        let reach = (self.radius / spacing).ceil() as i32;
        let mut pairs = Vec::new();
        for i in -reach..=reach {
            for j in -reach..=reach {
                for k in -reach..=reach {
                    let offset = Vec3A::new(i as f32, j as f32, k as f32) * spacing;
                    let gradient = self.gradient(offset, offset.length_squared());
                    if gradient != Vec3A::ZERO {
                        pairs.push((offset, gradient));
                    }
                }
            }
        }
        let squares: f64 = pairs.iter().map(|(_, g)| g.length_squared() as f64).sum();
        if squares == 0.0 {
            return 0.0;
        }
        const STEPS: usize = 24;
        let mut peak = 0.0f64;
        for a in 0..=STEPS {
            for b in 0..=STEPS {
                for c in 0..=STEPS {
                    let wave = Vec3A::new(a as f32, b as f32, c as f32)
                        * (std::f32::consts::PI / (STEPS as f32 * spacing));
                    let mut sum = glam::DVec3::ZERO;
                    for (offset, gradient) in &pairs {
                        let phase = wave.dot(*offset) as f64;
                        sum += glam::DVec3::new(
                            gradient.x as f64,
                            gradient.y as f64,
                            gradient.z as f64,
                        ) * phase.sin();
                    }
                    peak = peak.max(sum.length_squared() / squares);
                }
            }
        }
        peak as f32
    }

    fn lattice_sum(&self, spacing: f32, term: impl Fn(&Self, f32, Vec3A) -> f32) -> f32 {
        let reach = (self.radius / spacing).ceil() as i32;
        let mut sum = 0.0f64;
        for i in -reach..=reach {
            for j in -reach..=reach {
                for k in -reach..=reach {
                    let offset = Vec3A::new(i as f32, j as f32, k as f32) * spacing;
                    sum += term(self, offset.length_squared(), offset) as f64;
                }
            }
        }
        sum as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ W(xⱼ) · ΔV over a lattice much finer than h approximates ∫W dV = 1.
    #[test]
    fn the_kernel_integrates_to_one() {
        let kernel = SphKernel::new(0.1);
        let spacing = 0.1 / 40.0;
        let integral = kernel.lattice_density_sum(spacing) * spacing.powi(3);
        assert!((integral - 1.0).abs() < 2e-3, "∫W dV = {integral}");
    }

    #[test]
    fn the_kernel_vanishes_at_and_beyond_the_radius() {
        let kernel = SphKernel::new(0.04);
        for r in [0.04f32, 0.0400001, 0.05, 1.0] {
            assert_eq!(kernel.density(r * r), 0.0);
            let offset = Vec3A::new(r, 0.0, 0.0);
            assert_eq!(kernel.gradient(offset, r * r), Vec3A::ZERO);
        }
        assert!(kernel.density(0.0399 * 0.0399) > 0.0);
        assert!(kernel.density(0.0) > kernel.density(0.02 * 0.02));
    }

    #[test]
    fn the_gradient_is_the_derivative_of_the_density() {
        let kernel = SphKernel::new(0.05);
        for r in [0.004f32, 0.0125, 0.02, 0.037, 0.049] {
            let step = 1e-4 * 0.05;
            let slope = (kernel.density((r + step).powi(2)) - kernel.density((r - step).powi(2)))
                / (2.0 * step);
            let gradient = kernel.gradient(Vec3A::new(r, 0.0, 0.0), r * r).x;
            assert!(
                (gradient - slope).abs() <= 2e-3 * kernel.gradient_peak(),
                "r = {r}: {gradient} vs {slope}"
            );
        }
    }

    #[test]
    fn the_gradient_is_antisymmetric_and_points_towards_the_neighbour() {
        let kernel = SphKernel::new(0.05);
        let xi = Vec3A::new(0.1, 0.2, 0.3);
        let xj = Vec3A::new(0.12, 0.19, 0.31);
        let gij = kernel.gradient(xi - xj, (xi - xj).length_squared());
        let gji = kernel.gradient(xj - xi, (xj - xi).length_squared());
        assert!(gij.length() > 0.0);
        assert!((gij + gji).length() <= 1e-6 * gij.length());
        // Moving i towards j raises W: the gradient has a positive component along xj − xi.
        let towards = (xj - xi).normalize();
        assert!((gij.normalize().dot(towards) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn four_lane_forms_match_the_scalar_ones() {
        let kernel = SphKernel::new(0.04);
        let r2 = Vec4::new(0.0001, 0.0004, 0.001, 0.002);
        let (w, s) = kernel.density_and_gradient_scale_x4(r2);
        for lane in 0..4 {
            let offset = Vec3A::new(r2[lane].sqrt(), 0.0, 0.0);
            assert!((w[lane] - kernel.density(r2[lane])).abs() <= 1e-6 * w[lane].max(1.0));
            let g = kernel.gradient(offset, r2[lane]).x;
            assert!((s[lane] * offset.x - g).abs() <= 1e-5 * g.abs().max(1.0));
        }
    }

    #[test]
    fn the_peak_gradient_is_the_largest() {
        let kernel = SphKernel::new(0.05);
        let peak = kernel.gradient_peak();
        for k in 1..100 {
            let r = 0.05 * k as f32 / 100.0;
            let g = kernel.gradient(Vec3A::new(r, 0.0, 0.0), r * r).length();
            assert!(g <= peak * 1.0001, "r = {r}: {g} > {peak}");
        }
        let at_quarter = kernel.gradient(Vec3A::new(0.0125, 0.0, 0.0), 0.0125f32.powi(2));
        assert!((at_quarter.length() / peak - 1.0).abs() < 1e-5);
    }

    /// The Jacobi iteration's peak response at h = 2 spacings (Wendland C2): 2.6, above 2, so
    /// plain Jacobi (λ unscaled) lets some density waves grow; Fourier-analysed in
    /// docs/solver.md.
    #[test]
    fn the_jacobi_peak_at_two_spacings_is_above_two() {
        let kernel = SphKernel::new(0.04);
        let peak = kernel.lattice_jacobi_peak(0.02);
        assert!((2.55..2.65).contains(&peak), "μ_max = {peak}");
        // Wider kernels overlap more constraints: the peak grows.
        assert!(SphKernel::new(0.05).lattice_jacobi_peak(0.02) > 3.0);
    }

    #[test]
    fn integer_power_matches_powi() {
        for n in 0..=16 {
            for x in [0.0f32, 0.3, 1.0, 1.13] {
                let expected = x.powi(n);
                assert!(
                    (integer_power(x, n) - expected).abs() <= 1e-6 * expected.max(1.0),
                    "{x}^{n}"
                );
            }
        }
    }

    #[test]
    fn coincident_particles_get_no_gradient_and_finite_density() {
        let kernel = SphKernel::new(0.04);
        assert_eq!(kernel.gradient(Vec3A::ZERO, 0.0), Vec3A::ZERO);
        assert!(kernel.density(0.0).is_finite());
    }
}
