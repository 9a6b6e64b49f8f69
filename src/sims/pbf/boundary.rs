//! Walls and obstacles in the density: the solid next to a particle counts as layers of virtual
//! particles that continue the fluid's seeding lattice into it.
//!
//! A particle next to a wall is missing the neighbours the wall displaces; without a boundary
//! term its density is ~20 % low, the constraint does not hold it, and fluid at walls packs a
//! spacing closer than the interior (Akinci et al. 2012 fix this with sampled boundary
//! particles, Koschier & Bender 2017 with precomputed density maps). Here the solid's
//! contribution is a lattice sum evaluated on the fly, needing no boundary particles and no
//! precomputation: along a wall's normal, layers of virtual particles start half a spacing
//! inside the solid and repeat every spacing; along the wall they are aligned with the particle
//! (a smooth wall). So a particle of the seeded lattice next to a wall (half a spacing from it)
//! sees exactly the neighbours it would have inside the fluid, and sits at ρ₀ like the interior;
//! edges and corners follow from the same construction. Spheres use the same layers in the
//! particle's local frame, keeping only virtual particles inside the sphere (curvature).
//!
//! The constraint gets ρᵢ += m Σ_b W(xᵢ − x_b) and ∇ᵢCᵢ += V Σ_b ∇W(xᵢ − x_b); the wall does
//! not move, so in Δp it adds λᵢ V Σ_b ∇W (as SPlisHSPlasH's PBF does for its boundaries).
//! `kernels/pbf_common.cuh` (`boundary_sums`) mirrors this file in the same operation order.

use super::kernel::SphKernel;
use super::{Obstacle, World};
use glam::Vec3A;

/// Σ_b W and Σ_b ∇W over the virtual boundary particles within h of a point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BoundarySums {
    /// Σ_b W(x − x_b), m⁻³ (times the particle mass gives the boundary's density).
    pub density: f32,
    /// Σ_b ∇W(x − x_b), m⁻⁴ (times V gives the boundary's part of ∇ᵢCᵢ).
    pub gradient: Vec3A,
}

/// The layers of virtual particles along one axis, as up to three index ranges with offsets
/// (relative to the particle) computed from the index: solid layers before, lattice sites in
/// the fluid, solid layers after.
#[derive(Clone, Copy, Debug)]
struct AxisLayers {
    /// Solid layers on the negative side: offset −(before_distance + (k + ½) s), k < before.
    before: i32,
    before_distance: f32,
    /// Lattice sites k s for k in first..=last (empty when first > last).
    first: i32,
    last: i32,
    /// Solid layers on the positive side: offset after_distance + (k + ½) s, k < after.
    after: i32,
    after_distance: f32,
}

impl AxisLayers {
    const EMPTY: AxisLayers = AxisLayers {
        before: 0,
        before_distance: 0.0,
        first: 1,
        last: 0,
        after: 0,
        after_distance: 0.0,
    };

    /// Layers `k < count` of offset distance + (k + ½) s below h.
    fn layer_count(distance: f32, spacing: f32, radius: f32, limit: f32) -> i32 {
        let mut count = 0;
        loop {
            let offset = distance + (count as f32 + 0.5) * spacing;
            if offset >= radius || offset >= limit || count >= 64 {
                return count;
            }
            count += 1;
        }
    }

    /// Lattice sites k s (|k s| < h) strictly between `lo` and `hi` (relative to the particle).
    fn sites(lo: f32, hi: f32, spacing: f32, radius: f32, steps: i32) -> (i32, i32) {
        let (mut first, mut last) = (-steps, steps);
        while first <= last {
            let o = first as f32 * spacing;
            if o > lo && o > -radius {
                break;
            }
            first += 1;
        }
        while last >= first {
            let o = last as f32 * spacing;
            if o < hi && o < radius {
                break;
            }
            last -= 1;
        }
        (first, last)
    }

    fn has_solid(&self) -> bool {
        self.before > 0 || self.after > 0
    }
}

/// Which of an axis's ranges a sum visits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Solid,
    Sites,
    All,
}

/// Calls `visit(offset)` for the axis's layers of `part`, in the order before, sites, after.
#[inline(always)]
fn for_each_layer(axis: &AxisLayers, part: Part, spacing: f32, mut visit: impl FnMut(f32)) {
    if part != Part::Sites {
        for k in 0..axis.before {
            visit(-(axis.before_distance + (k as f32 + 0.5) * spacing));
        }
    }
    if part != Part::Solid {
        for k in axis.first..=axis.last {
            visit(k as f32 * spacing);
        }
    }
    if part != Part::Sites {
        for k in 0..axis.after {
            visit(axis.after_distance + (k as f32 + 0.5) * spacing);
        }
    }
}

/// The lattice and kernel the boundary sums are taken with.
#[derive(Clone, Copy, Debug)]
pub struct BoundaryLattice {
    spacing: f32,
    kernel: SphKernel,
    /// Lattice steps within h: k s < h for |k| ≤ steps.
    steps: i32,
}

impl BoundaryLattice {
    /// Layers of `spacing` seen through kernels of radius h = `kernel.radius`.
    pub fn new(spacing: f32, kernel: SphKernel) -> Self {
        let mut steps = 0;
        while ((steps + 1) as f32) * spacing < kernel.radius && steps < 64 {
            steps += 1;
        }
        Self {
            spacing,
            kernel,
            steps,
        }
    }

    /// Lattice steps within h (k s < h for |k| ≤ steps).
    pub fn steps(&self) -> i32 {
        self.steps
    }

    /// Σ W and Σ ∇W over the virtual particles of the container's walls and of every obstacle
    /// within h of `x`.
    pub fn sums(&self, world: &World, x: Vec3A) -> BoundarySums {
        let mut sums = BoundarySums::default();
        self.add_container(world, x, &mut sums);
        for obstacle in &world.obstacles {
            match *obstacle {
                Obstacle::Box(b) => self.add_box(world, x, b.min, b.max, &mut sums),
                Obstacle::Sphere { center, radius } => {
                    self.add_sphere(world, x, center, radius, &mut sums)
                }
            }
        }
        sums
    }

    /// Adds W and ∇W of the virtual particle at `offset` from x.
    #[inline(always)]
    fn add(&self, offset: Vec3A, sums: &mut BoundarySums) {
        let r2 = offset.length_squared();
        if r2 >= self.kernel.radius * self.kernel.radius {
            return;
        }
        sums.density += self.kernel.density(r2);
        sums.gradient += self.kernel.gradient(-offset, r2);
    }

    /// The container: layers beyond each wall, lattice sites inside. A virtual particle is any
    /// combination with at least one solid coordinate, visited as three disjoint products
    /// (solid x; site x and solid y; site x, site y and solid z).
    fn add_container(&self, world: &World, x: Vec3A, sums: &mut BoundarySums) {
        let (s, h) = (self.spacing, self.kernel.radius);
        let (lo, hi) = (world.container.min, world.container.max);
        // Most particles are more than h − s/2 from every wall: no layer reaches them.
        let nearest = (x - lo).min(hi - x) + Vec3A::splat(0.5 * s);
        if nearest.cmpge(Vec3A::splat(h)).all() {
            return;
        }
        let mut axes = [AxisLayers::EMPTY; 3];
        for a in 0..3 {
            let before_distance = (x[a] - lo[a]).max(0.0);
            let after_distance = (hi[a] - x[a]).max(0.0);
            let (first, last) = AxisLayers::sites(lo[a] - x[a], hi[a] - x[a], s, h, self.steps);
            axes[a] = AxisLayers {
                before: AxisLayers::layer_count(before_distance, s, h, f32::INFINITY),
                before_distance,
                first,
                last,
                after: AxisLayers::layer_count(after_distance, s, h, f32::INFINITY),
                after_distance,
            };
        }
        if !axes.iter().any(AxisLayers::has_solid) {
            return;
        }
        let parts = [
            [Part::Solid, Part::All, Part::All],
            [Part::Sites, Part::Solid, Part::All],
            [Part::Sites, Part::Sites, Part::Solid],
        ];
        for (k, part) in parts.iter().enumerate() {
            if axes[k].has_solid() {
                self.add_product(&axes, *part, |_| true, sums);
            }
        }
    }

    /// A box obstacle: every combination of the box's layers (face-aligned along an axis where x
    /// is outside the box's extent, lattice sites where it is within), inside the container.
    fn add_box(&self, world: &World, x: Vec3A, min: Vec3A, max: Vec3A, sums: &mut BoundarySums) {
        let (s, h) = (self.spacing, self.kernel.radius);
        let mut axes = [AxisLayers::EMPTY; 3];
        for a in 0..3 {
            let (lo, hi) = (min[a] - x[a], max[a] - x[a]);
            axes[a] = if lo >= 0.0 {
                AxisLayers {
                    after: AxisLayers::layer_count(lo, s, h, hi),
                    after_distance: lo,
                    ..AxisLayers::EMPTY
                }
            } else if hi <= 0.0 {
                AxisLayers {
                    before: AxisLayers::layer_count(-hi, s, h, -lo),
                    before_distance: -hi,
                    ..AxisLayers::EMPTY
                }
            } else {
                let (first, last) = AxisLayers::sites(lo, hi, s, h, self.steps);
                AxisLayers {
                    first,
                    last,
                    ..AxisLayers::EMPTY
                }
            };
            if axes[a].before == 0 && axes[a].after == 0 && axes[a].first > axes[a].last {
                return;
            }
        }
        let inside = container_test(world, x);
        self.add_product(&axes, [Part::All; 3], inside, sums);
    }

    /// A sphere: layers along the particle's outward normal starting half a spacing inside the
    /// surface, lattice sites along two tangents, keeping virtual particles inside the sphere
    /// and the container.
    fn add_sphere(
        &self,
        world: &World,
        x: Vec3A,
        center: Vec3A,
        radius: f32,
        sums: &mut BoundarySums,
    ) {
        let (s, h) = (self.spacing, self.kernel.radius);
        let from_center = x - center;
        let distance = from_center.length();
        if distance >= radius + h {
            return;
        }
        let normal = if distance > 0.0 {
            from_center / distance
        } else {
            Vec3A::Y
        };
        let (tangent, bitangent) = orthonormal_basis(normal);
        let depth = distance - radius;
        let layers = AxisLayers::layer_count(depth, s, h, f32::INFINITY);
        let inside = container_test(world, x);
        let radius_squared = radius * radius;
        for k in 0..layers {
            let along = -(depth + (k as f32 + 0.5) * s);
            for i in -self.steps..=self.steps {
                for j in -self.steps..=self.steps {
                    let offset =
                        normal * along + tangent * (i as f32 * s) + bitangent * (j as f32 * s);
                    let point = from_center + offset;
                    if point.length_squared() < radius_squared && inside(offset) {
                        self.add(offset, sums);
                    }
                }
            }
        }
    }

    /// Adds every combination of the three axes' layers of `parts` that `keep` accepts.
    #[inline(always)]
    fn add_product(
        &self,
        axes: &[AxisLayers; 3],
        parts: [Part; 3],
        keep: impl Fn(Vec3A) -> bool,
        sums: &mut BoundarySums,
    ) {
        let s = self.spacing;
        let h2 = self.kernel.radius * self.kernel.radius;
        for_each_layer(&axes[0], parts[0], s, |ox| {
            for_each_layer(&axes[1], parts[1], s, |oy| {
                if ox * ox + oy * oy >= h2 {
                    return;
                }
                for_each_layer(&axes[2], parts[2], s, |oz| {
                    let offset = Vec3A::new(ox, oy, oz);
                    if keep(offset) {
                        self.add(offset, sums);
                    }
                });
            });
        });
    }
}

/// Whether x + offset lies strictly inside the container (obstacle layers beyond a wall are
/// the wall's, not counted twice).
fn container_test(world: &World, x: Vec3A) -> impl Fn(Vec3A) -> bool {
    let (lo, hi) = (world.container.min - x, world.container.max - x);
    move |offset: Vec3A| offset.cmpgt(lo).all() && offset.cmplt(hi).all()
}

/// Two unit vectors completing `n` to an orthonormal basis (Duff et al. 2017, "Building an
/// orthonormal basis, revisited").
pub fn orthonormal_basis(n: Vec3A) -> (Vec3A, Vec3A) {
    let sign = 1.0f32.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    (
        Vec3A::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x),
        Vec3A::new(b, sign + n.y * n.y * a, -n.y),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::pbf::{Aabb, Params};

    fn lattice(params: &Params) -> BoundaryLattice {
        BoundaryLattice::new(params.spacing, params.kernel())
    }

    /// The fluid lattice's own sum at x over sites inside the container and outside every box
    /// obstacle (what real neighbours give a particle of the seeded lattice), the particle
    /// itself included.
    fn fluid_sum(params: &Params, world: &World, x: Vec3A) -> f32 {
        let kernel = params.kernel();
        let s = params.spacing;
        let mut sum = 0.0;
        for i in -4..=4 {
            for j in -4..=4 {
                for k in -4..=4 {
                    let q = x + Vec3A::new(i as f32, j as f32, k as f32) * s;
                    let in_box = world.obstacles.iter().any(|o| match o {
                        Obstacle::Box(b) => q.cmpgt(b.min).all() && q.cmplt(b.max).all(),
                        Obstacle::Sphere { .. } => false,
                    });
                    if q.cmpgt(world.container.min).all()
                        && q.cmplt(world.container.max).all()
                        && !in_box
                    {
                        sum += kernel.density((q - x).length_squared());
                    }
                }
            }
        }
        sum
    }

    #[test]
    fn a_lattice_particle_at_a_wall_edge_or_corner_has_the_interior_density() {
        let params = Params::with_spacing(0.02);
        let world = World {
            container: Aabb::new([0.0, 0.0, 0.0], [0.4, 0.4, 0.4]),
            obstacles: vec![],
        };
        let b = lattice(&params);
        let interior = params.kernel().lattice_density_sum(params.spacing);
        let s = params.spacing;
        // Seeded-lattice sites: at a face, an edge, a corner, one layer in, and in the interior.
        for site in [
            [0.5, 5.5, 7.5],
            [0.5, 0.5, 7.5],
            [0.5, 0.5, 0.5],
            [1.5, 0.5, 19.5],
            [9.5, 9.5, 9.5],
        ] {
            let x = Vec3A::from(site) * s;
            let total = fluid_sum(&params, &world, x) + b.sums(&world, x).density;
            assert!(
                (total / interior - 1.0).abs() < 1e-5,
                "site {site:?}: {total} vs {interior}"
            );
        }
        // Far from every wall the boundary adds nothing.
        let x = Vec3A::splat(0.2);
        assert_eq!(b.sums(&world, x), BoundarySums::default());
    }

    #[test]
    fn a_lattice_particle_at_a_box_face_edge_or_corner_has_the_interior_density() {
        let params = Params::with_spacing(0.02);
        let s = params.spacing;
        // A box on lattice lines, standing on the floor, a thin one beside it.
        let world = World {
            container: Aabb::new([0.0, 0.0, 0.0], [0.4, 0.4, 0.4]),
            obstacles: vec![
                Obstacle::Box(Aabb::new([0.1, 0.0, 0.1], [0.2, 0.16, 0.3])),
                Obstacle::Box(Aabb::new([0.26, 0.0, 0.1], [0.28, 0.2, 0.3])),
            ],
        };
        let b = lattice(&params);
        let interior = params.kernel().lattice_density_sum(s);
        for site in [
            [4.5, 4.5, 10.5],  // in front of the -x face
            [10.5, 8.5, 10.5], // on top
            [10.5, 8.5, 4.5],  // beside a top edge
            [4.5, 8.5, 4.5],   // beside a top corner
            [4.5, 0.5, 4.5],   // beside a bottom corner, on the floor
            [12.5, 3.5, 7.5],  // between the two boxes
        ] {
            let x = Vec3A::from(site) * s;
            let total = fluid_sum(&params, &world, x) + b.sums(&world, x).density;
            assert!(
                (total / interior - 1.0).abs() < 1e-5,
                "site {site:?}: {total} vs {interior}"
            );
        }
    }

    #[test]
    fn the_wall_pushes_away_and_weakens_with_distance() {
        let params = Params::with_spacing(0.02);
        let world = World {
            container: Aabb::new([0.0, 0.0, 0.0], [0.4, 0.4, 0.4]),
            obstacles: vec![],
        };
        let b = lattice(&params);
        let mut previous = f32::INFINITY;
        for d in [0.3, 0.5, 0.8, 1.1, 1.4] {
            let x = Vec3A::new(0.2, d * params.spacing, 0.2);
            let sums = b.sums(&world, x);
            // ∇ᵢW points from the particle towards its neighbours: into the floor. λ < 0 then
            // moves the particle by λ V ∇: up, away from the wall.
            assert!(sums.gradient.y < 0.0, "d = {d}: {:?}", sums.gradient);
            assert!(sums.gradient.x.abs() < 1e-3 * sums.gradient.y.abs());
            assert!(sums.density < previous, "d = {d}");
            previous = sums.density;
        }
        let x = Vec3A::new(0.2, 1.5 * params.spacing + 1e-5, 0.2);
        assert_eq!(b.sums(&world, x).density, 0.0);
    }

    #[test]
    fn box_obstacles_count_like_walls_and_thin_boxes_count_less() {
        let params = Params::with_spacing(0.02);
        let s = params.spacing;
        let container = Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]);
        let wall = World {
            container,
            obstacles: vec![],
        };
        // A thick box whose +x face is at 0.5: a particle half a spacing in front of it sees
        // what a particle half a spacing from the container's x = 0 wall sees.
        let thick = World {
            container,
            obstacles: vec![Obstacle::Box(Aabb::new([0.2, 0.2, 0.2], [0.5, 0.8, 0.8]))],
        };
        let b = lattice(&params);
        let at_wall = b.sums(&wall, Vec3A::new(0.5 * s, 0.5, 0.5));
        let at_box = b.sums(&thick, Vec3A::new(0.5 + 0.5 * s, 0.5, 0.5));
        assert!((at_wall.density - at_box.density).abs() < 1e-5 * at_wall.density);
        assert!((at_wall.gradient - at_box.gradient).length() < 1e-4 * at_wall.gradient.length());
        // A quarter spacing from the face, h reaches two layers of a thick box and one of a box
        // one spacing thick.
        let thin = World {
            container,
            obstacles: vec![Obstacle::Box(Aabb::new([0.48, 0.2, 0.2], [0.5, 0.8, 0.8]))],
        };
        let x = Vec3A::new(0.5 + 0.25 * s, 0.5, 0.5);
        let (thick, thin) = (b.sums(&thick, x).density, b.sums(&thin, x).density);
        assert!(
            thin < 0.999 * thick && thin > 0.9 * thick,
            "{thin} vs {thick}"
        );
    }

    #[test]
    fn a_large_sphere_is_locally_a_wall_and_a_small_one_counts_less() {
        let params = Params::with_spacing(0.02);
        let s = params.spacing;
        let container = Aabb::new([-2.0, -2.0, -2.0], [2.0, 2.0, 2.0]);
        let plane = World {
            container: Aabb::new([0.0, -2.0, -2.0], [2.0, 2.0, 2.0]),
            obstacles: vec![],
        };
        let b = lattice(&params);
        let wall = b.sums(&plane, Vec3A::new(0.5 * s, 0.0, 0.0)).density;
        for (radius, low, high) in [(1.5f32, 0.97, 1.0001), (0.025, 0.5, 0.99)] {
            let world = World {
                container,
                obstacles: vec![Obstacle::Sphere {
                    center: Vec3A::ZERO,
                    radius,
                }],
            };
            let x = Vec3A::new(radius + 0.5 * s, 0.0, 0.0);
            let ratio = b.sums(&world, x).density / wall;
            assert!((low..=high).contains(&ratio), "R = {radius}: {ratio}");
        }
    }

    #[test]
    fn the_basis_is_orthonormal() {
        for n in [
            Vec3A::X,
            Vec3A::Y,
            Vec3A::Z,
            -Vec3A::Z,
            Vec3A::new(0.3, -0.5, 0.8).normalize(),
        ] {
            let (t, b) = orthonormal_basis(n);
            for (u, v) in [(t, b), (t, n), (b, n)] {
                assert!(u.dot(v).abs() < 1e-6);
            }
            for u in [t, b] {
                assert!((u.length() - 1.0).abs() < 1e-6);
            }
        }
    }
}
