//! The closed container and the static obstacles particles collide with.

pub use crate::scene::Aabb;
use crate::scene::Shape;
use glam::Vec3A;

/// A static solid inside the container.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Obstacle {
    /// Axis-aligned box.
    Box(Aabb),
    /// Sphere.
    Sphere {
        /// Centre, metres.
        center: Vec3A,
        /// Radius, metres.
        radius: f32,
    },
}

impl Obstacle {
    /// The obstacle a scene shape stands for: boxes and spheres; `None` for a cylinder.
    pub fn from_shape(shape: &Shape) -> Option<Obstacle> {
        match *shape {
            Shape::Box(aabb) => Some(Obstacle::Box(aabb)),
            Shape::Sphere { center, radius } => Some(Obstacle::Sphere { center, radius }),
            Shape::Cylinder { .. } => None,
        }
    }

    /// Whether the obstacle grown by `margin` contains all of `bounds` (both are convex, so
    /// the 8 corners decide): a fluid body in such bounds seeds nothing.
    pub fn covers(&self, bounds: &Aabb, margin: f32) -> bool {
        (0..8).all(|corner: usize| {
            let pick = |axis: usize| {
                if corner >> axis & 1 == 0 {
                    bounds.min[axis]
                } else {
                    bounds.max[axis]
                }
            };
            let point = Vec3A::new(pick(0), pick(1), pick(2));
            match *self {
                Obstacle::Box(aabb) => {
                    point.cmpge(aabb.min - Vec3A::splat(margin)).all()
                        && point.cmple(aabb.max + Vec3A::splat(margin)).all()
                }
                Obstacle::Sphere { center, radius } => (point - center).length() <= radius + margin,
            }
        })
    }

    /// Pushes `point` out of the obstacle grown by `margin` onto its nearest surface point.
    #[inline]
    pub fn project(&self, point: Vec3A, margin: f32) -> Vec3A {
        self.project_within(point, margin, Vec3A::NEG_INFINITY, Vec3A::INFINITY)
    }

    /// As [`Obstacle::project`], but within `lo`..`hi` (the admissible part of the container):
    /// a box's face at or beyond a side of it reaches through that wall (a box standing on the
    /// floor holds the floor under it too, and is never left through its bottom face, from
    /// where the container clamp would put the particle straight back inside the box), and a
    /// box is left only through a face whose exit point lies within `lo`..`hi`. The nearest
    /// face is the fallback when no face qualifies.
    #[inline]
    pub fn project_within(&self, point: Vec3A, margin: f32, lo: Vec3A, hi: Vec3A) -> Vec3A {
        self.push_out(point, margin, lo, hi)
            .map_or(point, |(projected, _)| projected)
    }

    /// [`Obstacle::project_within`] of a point inside the grown obstacle: where it is put and
    /// the outward unit normal of the surface there (a sphere's radial direction, a box face's
    /// axis); `None` for a point outside (or on the surface) or not finite.
    #[inline]
    pub fn push_out(
        &self,
        point: Vec3A,
        margin: f32,
        lo: Vec3A,
        hi: Vec3A,
    ) -> Option<(Vec3A, Vec3A)> {
        match *self {
            Obstacle::Sphere { center, radius } => {
                let offset = point - center;
                let distance_squared = offset.length_squared();
                let reach = radius + margin;
                // A NaN distance is outside too: the point stays NaN, to be found.
                if distance_squared >= reach * reach || distance_squared.is_nan() {
                    return None;
                }
                let distance = distance_squared.sqrt();
                // A point exactly at the centre leaves upwards (y), any direction is as good.
                let direction = if distance > 0.0 {
                    offset / distance
                } else {
                    Vec3A::Y
                };
                Some((center + direction * reach, direction))
            }
            Obstacle::Box(aabb) => {
                let mut min = aabb.min - Vec3A::splat(margin);
                let mut max = aabb.max + Vec3A::splat(margin);
                // A face at or beyond a wall reaches through it: a point on the floor under a
                // box standing on it is inside (foam lies exactly on the floor, margin 0).
                for axis in 0..3 {
                    if min[axis] <= lo[axis] {
                        min[axis] = f32::NEG_INFINITY;
                    }
                    if max[axis] >= hi[axis] {
                        max[axis] = f32::INFINITY;
                    }
                }
                if point.cmple(min).any() || point.cmpge(max).any() {
                    return None;
                }
                // (distance, axis, exit, side: −1 the min face, +1 the max face)
                let mut nearest = (f32::INFINITY, 0, point.x, -1.0);
                let mut admissible = nearest;
                for axis in 0..3 {
                    for (distance, exit, side) in [
                        (point[axis] - min[axis], min[axis], -1.0),
                        (max[axis] - point[axis], max[axis], 1.0),
                    ] {
                        if distance < nearest.0 {
                            nearest = (distance, axis, exit, side);
                        }
                        if distance < admissible.0 && (lo[axis]..=hi[axis]).contains(&exit) {
                            admissible = (distance, axis, exit, side);
                        }
                    }
                }
                if !nearest.0.is_finite() {
                    return None; // A NaN coordinate: no face is nearer than infinity.
                }
                let (_, axis, exit, side) = if admissible.0.is_finite() {
                    admissible
                } else {
                    nearest
                };
                let (mut p, mut normal) = (point, Vec3A::ZERO);
                p[axis] = exit;
                normal[axis] = side;
                Some((p, normal))
            }
        }
    }
}

/// The container box and the obstacles in it.
#[derive(Clone, Debug, PartialEq)]
pub struct World {
    /// The closed box the fluid lives in.
    pub container: Aabb,
    /// Static solids.
    pub obstacles: Vec<Obstacle>,
}

impl World {
    /// Projects a particle centre onto the admissible region: inside the container and outside
    /// every obstacle, keeping `margin` (the particle radius) from each surface.
    #[inline]
    pub fn project(&self, point: Vec3A, margin: f32) -> Vec3A {
        let lo = self.container.min + Vec3A::splat(margin);
        let hi = self.container.max - Vec3A::splat(margin);
        let mut p = point;
        for obstacle in &self.obstacles {
            p = obstacle.project_within(p, margin, lo, hi);
        }
        p.clamp(lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_keeps_points_inside_the_container_and_outside_obstacles() {
        let world = World {
            container: Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
            obstacles: vec![
                Obstacle::Sphere {
                    center: Vec3A::new(0.5, 0.5, 0.5),
                    radius: 0.1,
                },
                Obstacle::Box(Aabb::new([0.1, 0.0, 0.1], [0.3, 0.2, 0.3])),
            ],
        };
        let p = world.project(Vec3A::new(-1.0, 2.0, 0.5), 0.01);
        assert_eq!(p, Vec3A::new(0.01, 0.99, 0.5));
        let p = world.project(Vec3A::new(0.55, 0.5, 0.5), 0.01);
        assert!(((p - Vec3A::splat(0.5)).length() - 0.11).abs() < 1e-6);
        assert!(p.x > 0.5);
        // Inside the box obstacle near its top face: pushed up through that face.
        let p = world.project(Vec3A::new(0.2, 0.19, 0.2), 0.01);
        assert!((p.y - 0.21).abs() < 1e-6 && p.x == 0.2 && p.z == 0.2, "{p}");
        // A box standing on the floor: a point just above the floor inside it leaves sideways,
        // not through the bottom face (below the floor, where the clamp would undo it).
        let p = world.project(Vec3A::new(0.15, 0.012, 0.2), 0.01);
        assert!((p.x - 0.09).abs() < 1e-6 && p.y == 0.012, "{p}");
        // Points already admissible stay put.
        let q = Vec3A::new(0.8, 0.8, 0.2);
        assert_eq!(world.project(q, 0.01), q);
        // A point predicted below the floor under that box: inside it (its bottom face reaches
        // through the floor), out sideways, then up onto the floor by the clamp; not left
        // inside the box by the clamp alone.
        let p = world.project(Vec3A::new(0.15, -0.05, 0.2), 0.01);
        assert_eq!(p, Vec3A::new(0.09, 0.01, 0.2));
    }

    #[test]
    fn push_out_with_no_margin_holds_the_walls_a_box_stands_on_and_leaves_nan_alone() {
        let (lo, hi) = (Vec3A::ZERO, Vec3A::ONE);
        let floor_box = Obstacle::Box(Aabb::new([0.4, 0.0, 0.0], [0.6, 0.3, 1.0]));
        // On the floor (y = 0 exactly, the box's bottom), the box spanning the container in
        // z: inside, out through the nearer x face with its normal.
        let pushed = floor_box.push_out(Vec3A::new(0.45, 0.0, 0.5), 0.0, lo, hi);
        assert_eq!(pushed, Some((Vec3A::new(0.4, 0.0, 0.5), -Vec3A::X)));
        // Without a container (project's infinite range) the bottom face is a face.
        let outside = floor_box.push_out(
            Vec3A::new(0.45, 0.0, 0.5),
            0.0,
            Vec3A::NEG_INFINITY,
            Vec3A::INFINITY,
        );
        assert_eq!(outside, None);
        // Not finite: untouched by either kind, so the solver's check still finds it.
        let sphere = Obstacle::Sphere {
            center: Vec3A::splat(0.5),
            radius: 0.2,
        };
        for point in [Vec3A::new(f32::NAN, 0.5, 0.5), Vec3A::splat(f32::NAN)] {
            assert_eq!(sphere.push_out(point, 0.0, lo, hi), None, "{point}");
            assert_eq!(floor_box.push_out(point, 0.0, lo, hi), None, "{point}");
            assert!(sphere.project(point, 0.01).is_nan(), "{point}");
        }
    }
}
