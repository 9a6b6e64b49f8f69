//! Solid shapes used for fluid bodies and obstacles, with the geometric tests validation needs.

use glam::{Vec2, Vec3A};

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3A,
    /// Upper corner.
    pub max: Vec3A,
}

impl Aabb {
    /// The box from `min` to `max`.
    pub fn new(min: impl Into<Vec3A>, max: impl Into<Vec3A>) -> Self {
        Self {
            min: min.into(),
            max: max.into(),
        }
    }

    /// Edge lengths.
    pub fn size(&self) -> Vec3A {
        self.max - self.min
    }
}

/// A region of space. Cylinders stand upright: axis along y, `center` at mid-height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// Axis-aligned box.
    Box(Aabb),
    /// Sphere.
    Sphere {
        /// Centre.
        center: Vec3A,
        /// Radius.
        radius: f32,
    },
    /// Upright cylinder.
    Cylinder {
        /// Centre of the axis (mid-height).
        center: Vec3A,
        /// Radius.
        radius: f32,
        /// Full height along y.
        height: f32,
    },
}

impl Shape {
    /// The shape's keyword in scene files.
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Box(_) => "box",
            Shape::Sphere { .. } => "sphere",
            Shape::Cylinder { .. } => "cylinder",
        }
    }

    /// Axis-aligned bounds.
    pub fn bounds(&self) -> Aabb {
        match *self {
            Shape::Box(aabb) => aabb,
            Shape::Sphere { center, radius } => Aabb {
                min: center - Vec3A::splat(radius),
                max: center + Vec3A::splat(radius),
            },
            Shape::Cylinder {
                center,
                radius,
                height,
            } => {
                let half = Vec3A::new(radius, 0.5 * height, radius);
                Aabb {
                    min: center - half,
                    max: center + half,
                }
            }
        }
    }

    /// Whether `point` lies inside (boundary included).
    pub fn contains(&self, point: Vec3A) -> bool {
        match *self {
            Shape::Box(aabb) => point.cmpge(aabb.min).all() && point.cmple(aabb.max).all(),
            Shape::Sphere { center, radius } => {
                (point - center).length_squared() <= radius * radius
            }
            Shape::Cylinder {
                center,
                radius,
                height,
            } => {
                let d = point - center;
                d.y.abs() <= 0.5 * height && Vec2::new(d.x, d.z).length_squared() <= radius * radius
            }
        }
    }

    /// The point of the shape nearest to `point` (itself when inside).
    fn closest_point(&self, point: Vec3A) -> Vec3A {
        match *self {
            Shape::Box(aabb) => point.clamp(aabb.min, aabb.max),
            Shape::Sphere { center, radius } => {
                let d = point - center;
                let length = d.length();
                if length <= radius {
                    point
                } else {
                    center + d * (radius / length)
                }
            }
            Shape::Cylinder {
                center,
                radius,
                height,
            } => {
                let d = point - center;
                let y = d.y.clamp(-0.5 * height, 0.5 * height);
                let radial = Vec2::new(d.x, d.z);
                let radial = if radial.length() > radius {
                    radial * (radius / radial.length())
                } else {
                    radial
                };
                center + Vec3A::new(radial.x, y, radial.y)
            }
        }
    }

    /// Whether the two shapes share volume deeper than `tolerance` (touching faces do not
    /// count). Exact for every pair: boxes and cylinders are compared as a y interval times a
    /// 2D region; a sphere against the closest point of the other shape.
    pub fn overlaps(&self, other: &Shape, tolerance: f32) -> bool {
        match (self, other) {
            (Shape::Sphere { center, radius }, other)
            | (other, Shape::Sphere { center, radius }) => {
                let nearest = other.closest_point(*center);
                let reach = if let Shape::Sphere {
                    radius: r2,
                    center: c2,
                } = other
                {
                    return (*center - *c2).length() < radius + r2 - tolerance;
                } else {
                    *radius - tolerance
                };
                (nearest - *center).length() < reach
            }
            (a, b) => {
                let (ba, bb) = (a.bounds(), b.bounds());
                let y_overlap = ba.max.y.min(bb.max.y) - ba.min.y.max(bb.min.y);
                if y_overlap <= tolerance {
                    return false;
                }
                match (a, b) {
                    (Shape::Box(_), Shape::Box(_)) => {
                        let overlap = ba.max.min(bb.max) - ba.min.max(bb.min);
                        overlap.x > tolerance && overlap.z > tolerance
                    }
                    (
                        Shape::Cylinder {
                            center: c1,
                            radius: r1,
                            ..
                        },
                        Shape::Cylinder {
                            center: c2,
                            radius: r2,
                            ..
                        },
                    ) => Vec2::new(c1.x - c2.x, c1.z - c2.z).length() < r1 + r2 - tolerance,
                    (Shape::Cylinder { center, radius, .. }, Shape::Box(aabb))
                    | (Shape::Box(aabb), Shape::Cylinder { center, radius, .. }) => {
                        let nearest = Vec2::new(
                            center.x.clamp(aabb.min.x, aabb.max.x),
                            center.z.clamp(aabb.min.z, aabb.max.z),
                        );
                        (nearest - Vec2::new(center.x, center.z)).length() < radius - tolerance
                    }
                    _ => unreachable!("spheres are handled above"),
                }
            }
        }
    }

    /// Whether the shape lies inside `container` (within `tolerance`).
    pub fn inside(&self, container: &Aabb, tolerance: f32) -> bool {
        let b = self.bounds();
        b.min.cmpge(container.min - Vec3A::splat(tolerance)).all()
            && b.max.cmple(container.max + Vec3A::splat(tolerance)).all()
    }

    /// Every point of a cubic lattice of `spacing` that lies inside the shape, x fastest. The
    /// lattice is centred in the shape's bounds, so a box of edge n·s holds n points per axis
    /// at s/2 from its faces, and symmetric shapes get symmetric lattices.
    pub fn lattice_points(&self, spacing: f32) -> impl Iterator<Item = Vec3A> + '_ {
        let bounds = self.bounds();
        let [nx, ny, nz] = Self::lattice_counts(&bounds, spacing);
        let first = bounds.min
            + (bounds.size()
                - Vec3A::new(nx as f32 - 1.0, ny as f32 - 1.0, nz as f32 - 1.0) * spacing)
                * 0.5;
        (0..nz)
            .flat_map(move |k| (0..ny).flat_map(move |j| (0..nx).map(move |i| [i, j, k])))
            .map(move |[i, j, k]| first + Vec3A::new(i as f32, j as f32, k as f32) * spacing)
            .filter(|&p| self.contains(p))
    }

    /// Lattice points per axis over the bounds (an upper bound of the shape's particle count).
    pub fn lattice_counts(bounds: &Aabb, spacing: f32) -> [u64; 3] {
        let size = bounds.size() / spacing;
        // The small slack keeps 0.4 / 0.02 at 20 despite rounding.
        [size.x, size.y, size.z].map(|n| (n + 1e-3).floor().max(0.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(min: [f32; 3], max: [f32; 3]) -> Shape {
        Shape::Box(Aabb::new(min, max))
    }

    #[test]
    fn overlap_tests_are_exact_for_every_pair() {
        let a = boxed([0.0, 0.0, 0.0], [0.4, 0.4, 0.4]);
        let touching = boxed([0.4, 0.0, 0.0], [0.8, 0.4, 0.4]);
        let crossing = boxed([0.3, 0.3, 0.3], [0.8, 0.8, 0.8]);
        assert!(!a.overlaps(&touching, 1e-6));
        assert!(a.overlaps(&crossing, 1e-6));

        let sphere = Shape::Sphere {
            center: Vec3A::new(0.6, 0.2, 0.2),
            radius: 0.19,
        };
        assert!(!a.overlaps(&sphere, 1e-6) && !sphere.overlaps(&a, 1e-6));
        let sphere = Shape::Sphere {
            center: Vec3A::new(0.5, 0.2, 0.2),
            radius: 0.11,
        };
        assert!(a.overlaps(&sphere, 1e-6) && sphere.overlaps(&a, 1e-6));
        // Near a box corner the bounds overlap but the sphere does not reach the box.
        let corner = Shape::Sphere {
            center: Vec3A::new(0.5, 0.5, 0.5),
            radius: 0.15,
        };
        assert!(!a.overlaps(&corner, 1e-6));

        let cylinder = Shape::Cylinder {
            center: Vec3A::new(0.7, 0.2, 0.7),
            radius: 0.3,
            height: 0.4,
        };
        // The circle misses the box's xz corner (0.4, 0.4): distance 0.424 > 0.3.
        assert!(!cylinder.overlaps(&a, 1e-6) && !a.overlaps(&cylinder, 1e-6));
        let tall = Shape::Cylinder {
            center: Vec3A::new(0.2, 1.0, 0.2),
            radius: 0.1,
            height: 0.2,
        };
        assert!(!tall.overlaps(&a, 1e-6), "separated along y");
        let inside = Shape::Cylinder {
            center: Vec3A::new(0.2, 0.3, 0.2),
            radius: 0.1,
            height: 0.2,
        };
        assert!(inside.overlaps(&a, 1e-6));
        assert!(cylinder.overlaps(
            &Shape::Cylinder {
                center: Vec3A::new(0.9, 0.0, 0.7),
                radius: 0.1,
                height: 1.0
            },
            1e-6
        ));
        let ball = Shape::Sphere {
            center: Vec3A::new(0.7, 0.5, 0.7),
            radius: 0.15,
        };
        assert!(
            ball.overlaps(&cylinder, 1e-6),
            "sphere dips into the cylinder's top face"
        );
    }

    #[test]
    fn box_lattice_is_centred_and_exact() {
        let shape = boxed([0.0, 0.0, 0.0], [0.4, 0.2, 0.1]);
        let points: Vec<Vec3A> = shape.lattice_points(0.02).collect();
        assert_eq!(points.len(), 20 * 10 * 5);
        assert!((points[0] - Vec3A::splat(0.01)).length() < 1e-6);
        assert!((points.last().unwrap().x - 0.39).abs() < 1e-6);
    }

    #[test]
    fn sphere_lattice_fills_the_sphere_volume() {
        let shape = Shape::Sphere {
            center: Vec3A::new(0.5, 0.5, 0.5),
            radius: 0.2,
        };
        let mut count = 0usize;
        for p in shape.lattice_points(0.01) {
            assert!(shape.contains(p));
            count += 1;
        }
        let expected = 4.0 / 3.0 * std::f64::consts::PI * 0.2f64.powi(3) / 1e-6;
        assert!(
            (count as f64 / expected - 1.0).abs() < 0.02,
            "{count} vs {expected}"
        );
    }
}
