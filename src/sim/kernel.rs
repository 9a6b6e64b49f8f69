//! SPH smoothing kernels used by Position Based Fluids (Müller et al. 2003, as used by
//! Macklin & Müller 2013): Poly6 for density, Spiky's gradient for the constraint gradient.
//!
//! The CUDA kernels mirror these formulas in `kernels/pbf_common.cuh`.

use glam::{Vec3A, Vec4};
use std::f32::consts::PI;

/// Poly6 value and Spiky gradient for one kernel radius `h`, with the constants precomputed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphKernel {
    /// Kernel radius h (support of both kernels), metres.
    pub radius: f32,
    radius_squared: f32,
    poly6_coefficient: f32,
    spiky_gradient_coefficient: f32,
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
    /// Kernels of support `radius` (h > 0).
    pub fn new(radius: f32) -> Self {
        let h = radius;
        Self {
            radius: h,
            radius_squared: h * h,
            poly6_coefficient: 315.0 / (64.0 * PI * h.powi(9)),
            spiky_gradient_coefficient: -45.0 / (PI * h.powi(6)),
            coincident_squared: (1e-4 * h) * (1e-4 * h),
        }
    }

    /// Poly6 W(r) = 315 / (64 π h⁹) · (h² − r²)³ for r < h, else 0; takes r².
    #[inline(always)]
    pub fn poly6(&self, distance_squared: f32) -> f32 {
        if distance_squared >= self.radius_squared {
            return 0.0;
        }
        let d = self.radius_squared - distance_squared;
        self.poly6_coefficient * d * d * d
    }

    /// Spiky gradient ∇ᵢW(xᵢ − xⱼ) = −45 / (π h⁶) · (h − r)² · r̂ for 0 < r < h, else 0.
    ///
    /// `offset` is xᵢ − xⱼ; the gradient points from i towards j. Coincident particles (r = 0)
    /// get a zero gradient instead of a NaN.
    #[inline(always)]
    pub fn spiky_gradient(&self, offset: Vec3A, distance_squared: f32) -> Vec3A {
        if distance_squared >= self.radius_squared || distance_squared <= 0.0 {
            return Vec3A::ZERO;
        }
        let r = distance_squared.sqrt();
        let d = self.radius - r;
        offset * (self.spiky_gradient_coefficient * d * d / r)
    }

    /// Poly6 of four squared distances at once.
    #[inline(always)]
    pub fn poly6_x4(&self, distance_squared: Vec4) -> Vec4 {
        let d = (Vec4::splat(self.radius_squared) - distance_squared).max(Vec4::ZERO);
        d * d * d * self.poly6_coefficient
    }

    /// The scalar s with ∇W = s · offset for four squared distances (0 beyond h). Every lane
    /// must be beyond the coincidence threshold (see [`SphKernel::any_coincident`]).
    #[inline(always)]
    pub fn spiky_gradient_scale_x4(&self, distance_squared: Vec4) -> Vec4 {
        let r = distance_squared.sqrt();
        let d = (Vec4::splat(self.radius) - r).max(Vec4::ZERO);
        d * d * self.spiky_gradient_coefficient / r
    }

    /// Whether any of four pairs is so close that [`SphKernel::pair_gradient`] must take its
    /// coincident-particle branch.
    #[inline(always)]
    pub fn any_coincident(&self, distance_squared: Vec4) -> bool {
        distance_squared
            .cmple(Vec4::splat(self.coincident_squared))
            .any()
    }

    /// The gradient for a pair of particles with ids `id_i`, `id_j`: the Spiky gradient, except
    /// for (nearly) coincident particles, where the gradient direction is undefined and a
    /// fixed direction derived from the two ids is used instead (antisymmetric in i, j, so
    /// momentum stays conserved). Without it, particles clamped onto the same wall point stay
    /// stuck together and the fluid collapses.
    #[inline(always)]
    /// `ids` is only called in that rare case, so the hot loop does not load ids.
    pub fn pair_gradient(
        &self,
        offset: Vec3A,
        distance_squared: f32,
        ids: impl FnOnce() -> (u32, u32),
    ) -> Vec3A {
        if distance_squared > self.coincident_squared {
            return self.spiky_gradient(offset, distance_squared);
        }
        let (id_i, id_j) = ids();
        let (low, high, sign) = if id_i < id_j {
            (id_i, id_j, 1.0)
        } else {
            (id_j, id_i, -1.0)
        };
        let direction = pair_direction(low, high);
        direction * (sign * self.spiky_gradient_coefficient * self.radius_squared)
    }

    /// Σⱼ W(|xⱼ|) over an infinite cubic lattice of the given spacing, the particle itself
    /// included: the number density (per m³) an interior particle of a seeded block sees.
    pub fn lattice_poly6_sum(&self, spacing: f32) -> f32 {
        self.lattice_sum(spacing, |k, d2, _| k.poly6(d2))
    }

    /// Σⱼ |∇W(xⱼ)|² over the same lattice: the rest-state constraint stiffness up to the
    /// volume factor (see `Params::rest_stiffness`).
    pub fn lattice_gradient_square_sum(&self, spacing: f32) -> f32 {
        self.lattice_sum(spacing, |k, d2, offset| {
            k.spiky_gradient(offset, d2).length_squared()
        })
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
    fn poly6_integrates_to_one() {
        let kernel = SphKernel::new(0.1);
        let spacing = 0.1 / 40.0;
        let integral = kernel.lattice_poly6_sum(spacing) * spacing.powi(3);
        assert!((integral - 1.0).abs() < 2e-3, "∫W dV = {integral}");
    }

    #[test]
    fn kernels_vanish_at_and_beyond_the_radius() {
        let kernel = SphKernel::new(0.04);
        for r in [0.04f32, 0.0400001, 0.05, 1.0] {
            assert_eq!(kernel.poly6(r * r), 0.0);
            let offset = Vec3A::new(r, 0.0, 0.0);
            assert_eq!(kernel.spiky_gradient(offset, r * r), Vec3A::ZERO);
        }
        assert!(kernel.poly6(0.0399 * 0.0399) > 0.0);
        assert!(kernel.poly6(0.0) > kernel.poly6(0.02 * 0.02));
    }

    #[test]
    fn spiky_gradient_is_antisymmetric_and_points_towards_the_neighbour() {
        let kernel = SphKernel::new(0.05);
        let xi = Vec3A::new(0.1, 0.2, 0.3);
        let xj = Vec3A::new(0.12, 0.19, 0.31);
        let gij = kernel.spiky_gradient(xi - xj, (xi - xj).length_squared());
        let gji = kernel.spiky_gradient(xj - xi, (xj - xi).length_squared());
        assert!(gij.length() > 0.0);
        assert!((gij + gji).length() <= 1e-6 * gij.length());
        // Moving i towards j raises W: the gradient has a positive component along xj − xi.
        let towards = (xj - xi).normalize();
        assert!((gij.normalize().dot(towards) - 1.0).abs() < 1e-5);
        // Magnitude: 45/(π h⁶)(h − r)².
        let r = (xi - xj).length();
        let expected = 45.0 / (PI * 0.05f32.powi(6)) * (0.05 - r).powi(2);
        assert!((gij.length() - expected).abs() < 1e-4 * expected);
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
        assert_eq!(kernel.spiky_gradient(Vec3A::ZERO, 0.0), Vec3A::ZERO);
        assert!(kernel.poly6(0.0).is_finite());
    }
}
