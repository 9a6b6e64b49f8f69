//! The `anisotropy` stage (Yu & Turk, "Reconstructing Surfaces of Particle-Based Fluids Using
//! Anisotropic Kernels", TOG 2013), CPU reference: each particle's ellipsoid from the weighted
//! covariance of its neighbours within `radius`, for the renderer to splat instead of spheres,
//! so a calm surface is flat and thin sheets stay thin.
//!
//! Per particle i, over its neighbour list (the solver's: every j ≠ i within the kernel radius h
//! at the step's start, so no search of its own) and i itself, with weights
//! w = max(0, 1 − (|xⱼ − xᵢ| / h)³) on the current positions: the weighted mean
//! x̄ᵢ = Σ w xⱼ / Σ w and covariance Cᵢ = Σ w (xⱼ − x̄ᵢ)(xⱼ − x̄ᵢ)ᵀ / Σ w; its eigenvalues
//! σ₁ ≥ σ₂ ≥ σ₃ (Jacobi rotations) are clamped to σ₁ / [`MAX_STRETCH`] from below and the axes
//! scaled to keep the sphere's volume: aₖ = r_p σₖ / ∛(σ₁σ₂σ₃). A particle with fewer than
//! [`MIN_NEIGHBOURS`] (itself included) stays a sphere of [`LONE_SCALE`] r_p (spray). The centre
//! moves towards the mean by [`CENTRE_SMOOTHING`] (the paper's λ), which pulls the surface layer
//! in line.
//!
//! The renderer takes each ellipsoid as three records `[aₖ.xyz, centreₖ]` ([`Ellipsoid::records`])
//! after the particle records in the particle buffer; `kernels/pbf.cu`'s `anisotropy` writes the
//! same records there through interop.

use super::grid::UniformGrid;
use super::Aabb;
use glam::{Mat3, Vec3, Vec3A};
use rayon::prelude::*;

/// Largest ratio of an ellipsoid's longest to shortest axis (the paper's k_r).
pub const MAX_STRETCH: f32 = 4.0;
/// Fewer particles than this in the neighbourhood (itself included): a sphere (the paper's N_ε,
/// scaled to a neighbourhood of radius h = 2 spacings, which holds 33 inside the fluid and about
/// 20 at a flat surface).
pub const MIN_NEIGHBOURS: usize = 10;
/// The sphere a particle with too few neighbours gets, in particle radii (the paper's k_n).
pub const LONE_SCALE: f32 = 0.5;
/// How far the centre moves towards the neighbours' weighted mean (the paper's λ).
pub const CENTRE_SMOOTHING: f32 = 0.9;

/// One particle's ellipsoid: its (smoothed) centre and three principal semi-axes, metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ellipsoid {
    /// Centre.
    pub center: Vec3,
    /// Principal semi-axes (orthogonal), longest first.
    pub axes: [Vec3; 3],
}

impl Ellipsoid {
    /// The three records the renderer reads: `[aₖ.x, aₖ.y, aₖ.z, centre[k]]`, k = 0, 1, 2.
    pub fn records(&self) -> [[f32; 4]; 3] {
        [0, 1, 2].map(|k| {
            let a = self.axes[k];
            [a.x, a.y, a.z, self.center[k]]
        })
    }
}

/// The `anisotropy` stage: the ellipsoids of `positions` from CSR neighbour lists
/// (`neighbors[neighbor_start[i]..neighbor_start[i + 1]]`, i excluded) within `radius`, with
/// spheres of `particle_radius` as the isotropic size.
pub fn anisotropy(
    positions: &[Vec3A],
    neighbor_start: &[u32],
    neighbors: &[u32],
    radius: f32,
    particle_radius: f32,
) -> Vec<Ellipsoid> {
    (0..positions.len())
        .into_par_iter()
        .map(|i| {
            let list = &neighbors[neighbor_start[i] as usize..neighbor_start[i + 1] as usize];
            ellipsoid_of(positions, i, list, radius, particle_radius)
        })
        .collect()
}

/// One particle's ellipsoid (see the module's text).
fn ellipsoid_of(
    positions: &[Vec3A],
    i: usize,
    list: &[u32],
    radius: f32,
    particle_radius: f32,
) -> Ellipsoid {
    let p = positions[i];
    let weight = |q: Vec3A| (1.0 - ((q - p).length() / radius).powi(3)).max(0.0);
    let members = || std::iter::once(p).chain(list.iter().map(|&j| positions[j as usize]));
    let (mut weight_sum, mut mean) = (0.0f32, Vec3A::ZERO);
    for q in members() {
        let w = weight(q);
        weight_sum += w;
        mean += w * q;
    }
    mean /= weight_sum;
    let mut covariance = Mat3::ZERO;
    for q in members() {
        let d = Vec3::from(q - mean);
        covariance += Mat3::from_cols(d * d.x, d * d.y, d * d.z) * weight(q);
    }
    covariance *= 1.0 / weight_sum;
    Ellipsoid {
        center: Vec3::from(p).lerp(Vec3::from(mean), CENTRE_SMOOTHING),
        axes: axes_of(covariance, list.len() + 1, particle_radius),
    }
}

/// CSR neighbour lists of `positions` within `radius` (i excluded), from a uniform grid: for
/// callers without a solver's lists (tests, the host fallback of other backends).
pub fn neighbour_lists(positions: &[Vec3A], radius: f32) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; positions.len() + 1];
    if positions.is_empty() {
        return (start, Vec::new());
    }
    let (min, max) = positions.iter().fold(
        (Vec3A::splat(f32::MAX), Vec3A::splat(f32::MIN)),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    );
    let bounds = Aabb {
        min: min - Vec3A::splat(radius),
        max: max + Vec3A::splat(radius),
    };
    let mut grid = UniformGrid::new(&bounds, radius);
    grid.build(positions);
    let order = grid.order();
    let radius_squared = radius * radius;
    let lists: Vec<Vec<u32>> = positions
        .par_iter()
        .enumerate()
        .map(|(i, &p)| {
            let mut list = Vec::new();
            grid.for_each_neighbor_range(p, |range| {
                for &j in &order[range] {
                    let d2 = (positions[j as usize] - p).length_squared();
                    if j as usize != i && d2 < radius_squared {
                        list.push(j);
                    }
                }
            });
            list
        })
        .collect();
    for (i, list) in lists.iter().enumerate() {
        start[i + 1] = start[i] + list.len() as u32;
    }
    (start, lists.concat())
}

/// The ellipsoids' records ([`Ellipsoid::records`]) of `positions` with lists found by
/// [`neighbour_lists`]: the stage for a backend that has no lists on the host.
pub fn anisotropy_records(
    positions: &[Vec3A],
    radius: f32,
    particle_radius: f32,
    out: &mut Vec<[f32; 4]>,
) {
    let (start, lists) = neighbour_lists(positions, radius);
    let ellipsoids = anisotropy(positions, &start, &lists, radius, particle_radius);
    out.clear();
    out.extend(ellipsoids.iter().flat_map(Ellipsoid::records));
}

/// The semi-axes for covariance `c` of `count` neighbours (see the module's text).
fn axes_of(c: Mat3, count: usize, particle_radius: f32) -> [Vec3; 3] {
    let (values, vectors) = symmetric_eigen(c);
    let largest = values[0];
    if count < MIN_NEIGHBOURS || largest <= 0.0 {
        let r = LONE_SCALE * particle_radius;
        return [Vec3::X * r, Vec3::Y * r, Vec3::Z * r];
    }
    let clamped = values.map(|v| v.max(largest / MAX_STRETCH));
    let scale = particle_radius / (clamped[0] * clamped[1] * clamped[2]).cbrt();
    [0, 1, 2].map(|k| vectors[k] * clamped[k] * scale)
}

/// Eigenvalues (descending) and unit eigenvectors of a symmetric 3 × 3 matrix, by cyclic Jacobi
/// rotations.
pub fn symmetric_eigen(m: Mat3) -> ([f32; 3], [Vec3; 3]) {
    let mut a = m.to_cols_array_2d().map(|c| c.map(f64::from));
    let mut v = [[1.0f64, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..32 {
        let off = a[0][1].powi(2) + a[0][2].powi(2) + a[1][2].powi(2);
        if off < 1e-30 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q].abs() < 1e-300 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let (c, s) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
            // A ← Jᵀ A J, V ← V J, J the rotation in the (p, q) plane.
            for column in &mut a {
                let (akp, akq) = (column[p], column[q]);
                column[p] = c * akp - s * akq;
                column[q] = s * akp + c * akq;
            }
            let (column_p, column_q) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| c * column_p[k] - s * column_q[k]);
            a[q] = std::array::from_fn(|k| s * column_p[k] + c * column_q[k]);
            for row in &mut v {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    let mut pairs: Vec<(f64, Vec3)> = (0..3)
        .map(|k| {
            let column = Vec3::new(v[0][k] as f32, v[1][k] as f32, v[2][k] as f32);
            (a[k][k], column.normalize())
        })
        .collect();
    pairs.sort_by(|x, y| y.0.total_cmp(&x.0));
    (
        [pairs[0].0 as f32, pairs[1].0 as f32, pairs[2].0 as f32],
        [pairs[0].1, pairs[1].1, pairs[2].1],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lattice(nx: i32, ny: i32, nz: i32, spacing: f32) -> Vec<Vec3A> {
        let mut points = Vec::new();
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    points.push(Vec3A::new(x as f32, y as f32, z as f32) * spacing);
                }
            }
        }
        points
    }

    fn with_lists(positions: &[Vec3A], radius: f32, particle_radius: f32) -> Vec<Ellipsoid> {
        let (start, lists) = neighbour_lists(positions, radius);
        anisotropy(positions, &start, &lists, radius, particle_radius)
    }

    #[test]
    fn jacobi_finds_the_eigenpairs_of_a_rotated_diagonal_matrix() {
        let rotation = Mat3::from_rotation_y(0.7) * Mat3::from_rotation_x(-0.4);
        let m = rotation * Mat3::from_diagonal(Vec3::new(0.5, 3.0, 1.0)) * rotation.transpose();
        let (values, vectors) = symmetric_eigen(m);
        for (value, expected) in values.iter().zip([3.0, 1.0, 0.5]) {
            assert!((value - expected).abs() < 1e-5, "{values:?}");
        }
        for k in 0..3 {
            let residual = m * vectors[k] - vectors[k] * values[k];
            assert!(residual.length() < 1e-5, "{k}: {residual}");
        }
    }

    #[test]
    fn particles_inside_a_block_stay_spheres_and_a_flat_sheet_flattens() {
        let spacing = 0.02;
        let (radius, particle_radius) = (2.0 * spacing, 0.5 * spacing);
        // Deep inside a 9³ block: isotropic, radius r_p, centre unmoved.
        let block = lattice(9, 9, 9, spacing);
        let ellipsoids = with_lists(&block, radius, particle_radius);
        let middle = ellipsoids[4 + 9 * (4 + 9 * 4)];
        for axis in middle.axes {
            assert!(
                (axis.length() - particle_radius).abs() < 1e-4 * particle_radius,
                "{middle:?}"
            );
        }
        assert!((middle.center - Vec3::from(block[4 + 9 * (4 + 9 * 4)])).length() < 1e-6);
        // One layer of a 15 × 15 sheet in x and z (a radius of 3.2 spacings reaches 37
        // neighbours in the plane): the shortest axis along y, stretched to the limit, the
        // volume of the sphere kept.
        let sheet = lattice(15, 1, 15, spacing);
        let ellipsoids = with_lists(&sheet, 3.2 * spacing, particle_radius);
        let inner = ellipsoids[7 + 15 * 7];
        let lengths = inner.axes.map(|a| a.length());
        assert!(inner.axes[2].normalize().y.abs() > 0.999, "{inner:?}");
        assert!(
            (lengths[0] / lengths[2] - MAX_STRETCH).abs() < 1e-3,
            "{lengths:?}"
        );
        let volume = lengths[0] * lengths[1] * lengths[2];
        assert!(
            (volume / particle_radius.powi(3) - 1.0).abs() < 1e-4,
            "{volume}"
        );
    }

    #[test]
    fn the_top_layer_of_a_block_flattens_along_the_normal_with_the_solvers_radius() {
        let spacing = 0.02;
        let block = lattice(9, 5, 9, spacing);
        let ellipsoids = with_lists(&block, 2.0 * spacing, 0.5 * spacing);
        let top = ellipsoids[4 + 9 * (4 + 5 * 4)];
        let lengths = top.axes.map(|a| a.length());
        assert!(top.axes[2].normalize().y.abs() > 0.99, "{top:?}");
        assert!(lengths[0] / lengths[2] > 1.5, "{lengths:?}");
        // The centre moves down into the fluid (the neighbours' mean is below).
        assert!(
            top.center.y < block[4 + 9 * (4 + 5 * 4)].y - 0.1 * spacing,
            "{top:?}"
        );
    }

    #[test]
    fn a_lone_particle_is_a_small_sphere() {
        let ellipsoids = with_lists(&[Vec3A::ZERO, Vec3A::new(0.01, 0.0, 0.0)], 0.04, 0.01);
        for e in ellipsoids {
            for axis in e.axes {
                assert!((axis.length() - LONE_SCALE * 0.01).abs() < 1e-7, "{e:?}");
            }
        }
    }
}
