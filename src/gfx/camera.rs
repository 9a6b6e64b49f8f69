//! The orbit camera: a target point, yaw and pitch around it, and a distance. The mouse orbits,
//! pans and zooms it; the keyboard flies it (moves the target along the view axes).

use crate::scene::Aabb;
use glam::{Mat4, Vec3, Vec4};

/// Vertical field of view, radians.
const FIELD_OF_VIEW: f32 = 0.9;
/// Pitch is kept away from the poles so the up vector stays defined.
const PITCH_LIMIT: f32 = 1.5;
/// The share of the uncovered output (per axis, centred) a framed box fills.
pub const FRAMED_FRACTION: f32 = 0.8;

/// The direction a default view looks from: [`Camera::yaw`] and [`Camera::pitch`], radians.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orientation {
    /// Rotation around the y axis.
    pub yaw: f32,
    /// Elevation above the horizontal (positive looks down).
    pub pitch: f32,
}

impl Orientation {
    /// From the front, a little above and to the side: every kind's default but where a
    /// simulation chooses its own ([`crate::sims::Sim::orientation`]).
    pub const FRONT: Orientation = Orientation {
        yaw: -0.5,
        pitch: 0.55,
    };
}

/// An orbit camera looking at `target` from `distance` away.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The point looked at, metres.
    pub target: Vec3,
    /// Rotation around the y axis, radians (0 looks along −z).
    pub yaw: f32,
    /// Elevation above the horizontal, radians (positive looks down on the target).
    pub pitch: f32,
    /// Distance from the eye to the target, metres.
    pub distance: f32,
}

impl Camera {
    /// The default view of a container in a full 16:9 output (what `fluidlab render` draws),
    /// seen from the front, a little above and to the side ([`Orientation::FRONT`]).
    pub fn framing(container: &Aabb) -> Camera {
        Camera::oriented_framing(container, Orientation::FRONT)
    }

    /// [`Camera::framing_in`] in a full 16:9 output, as [`Camera::framing`].
    pub fn oriented_framing(container: &Aabb, orientation: Orientation) -> Camera {
        Camera::framing_in(container, orientation, 16.0 / 9.0, [-1.0, 1.0])
    }

    /// The default view of a container seen from `orientation`, fitted to an output of
    /// `aspect` (width / height) of which the horizontal band `uncovered` (normalised device
    /// x, −1 left to 1 right) is not under a panel: the box's
    /// eight corners end up in the central [`FRAMED_FRACTION`] of that band and of the height,
    /// filling it along the tighter axis and centred along the other.
    ///
    /// Solved for the eye, the orientation being fixed: the corners' projections span a band
    /// of one axis exactly when the frustum's two planes through the eye at the band's edges
    /// touch the box ([`fit`]), which fixes the eye's depth and its coordinate along that axis.
    /// The tighter axis is the one that needs the eye farther back; along the other the band
    /// is narrowed about its centre (by bisection) until it needs that same depth. (A
    /// fixed-point iteration on the projected corners stalled in a two-cycle for flat boxes
    /// seen from close by, such as the pool's opening, 5 % of the frame off.)
    pub fn framing_in(
        container: &Aabb,
        orientation: Orientation,
        aspect: f32,
        uncovered: [f32; 2],
    ) -> Camera {
        let orientation = Camera {
            target: Vec3::ZERO,
            yaw: orientation.yaw,
            pitch: orientation.pitch,
            distance: 1.0,
        };
        let view = orientation.view();
        let (right, up) = (view.row(0).truncate(), view.row(1).truncate());
        let forward = -view.row(2).truncate();
        let corners = corners(container);
        let depth = corners.map(|c| forward.dot(c));
        let across = [corners.map(|c| right.dot(c)), corners.map(|c| up.dot(c))];
        let tan_y = (0.5 * FIELD_OF_VIEW).tan();
        let tan = [tan_y * aspect.max(1e-3), tan_y];
        let band_center = 0.5 * (uncovered[0] + uncovered[1]);
        let half_width = FRAMED_FRACTION * 0.5 * (uncovered[1] - uncovered[0]).abs().max(0.1);
        let bands = [
            [band_center - half_width, band_center + half_width],
            [-FRAMED_FRACTION, FRAMED_FRACTION],
        ];
        let fits = [0, 1].map(|axis| fit(&across[axis], &depth, tan[axis], bands[axis]));
        let tighter = if fits[0].0 <= fits[1].0 { 0 } else { 1 };
        let looser = 1 - tighter;
        let eye_depth = fits[tighter].0;
        let [low, high] = bands[looser];
        let (center, half) = (0.5 * (low + high), 0.5 * (high - low));
        let narrowed = |share: f32| [center - share * half, center + share * half];
        // A narrower band needs the eye farther back: find the share of the looser band whose
        // fit needs the tighter axis's depth.
        let (mut narrow, mut wide) = (0.0_f32, 1.0_f32);
        for _ in 0..40 {
            let share = 0.5 * (narrow + wide);
            if fit(&across[looser], &depth, tan[looser], narrowed(share)).0 < eye_depth {
                narrow = share;
            } else {
                wide = share;
            }
        }
        let mut eye_across = [0.0; 2];
        eye_across[tighter] = fits[tighter].1;
        eye_across[looser] = fit(&across[looser], &depth, tan[looser], narrowed(wide)).1;
        let eye = right * eye_across[0] + up * eye_across[1] + forward * eye_depth;
        let middle = Vec3::from(0.5 * (container.min + container.max));
        let distance = (forward.dot(middle) - eye_depth).max(1e-3);
        Camera {
            target: eye + forward * distance,
            distance,
            ..orientation
        }
    }

    /// The normalised device coordinates [x min, y min, x max, y max] of `aabb`'s eight
    /// corners seen by this camera in an output of `aspect`.
    pub fn projected_bounds(&self, aabb: &Aabb, aspect: f32) -> [f32; 4] {
        let clip = self.projection(aspect) * self.view();
        let mut bounds = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for corner in corners(aabb) {
            let p = clip.project_point3(corner);
            bounds = [
                bounds[0].min(p.x),
                bounds[1].min(p.y),
                bounds[2].max(p.x),
                bounds[3].max(p.y),
            ];
        }
        bounds
    }

    /// An orbit camera whose eye is at `eye`, looking at `target` (the inverse of
    /// [`Camera::eye`]).
    pub fn looking_at(eye: Vec3, target: Vec3) -> Camera {
        let d = (target - eye).normalize();
        Camera {
            target,
            yaw: (-d.x).atan2(-d.z),
            pitch: (-d.y).asin(),
            distance: eye.distance(target),
        }
    }

    /// The ray through pixel `position` (from the top left) of an output of `size` pixels: its
    /// origin on the near plane and its unit direction.
    pub fn ray(&self, position: [f32; 2], size: [u32; 2]) -> (Vec3, Vec3) {
        let (w, h) = (size[0].max(1) as f32, size[1].max(1) as f32);
        let ndc = [2.0 * position[0] / w - 1.0, 1.0 - 2.0 * position[1] / h];
        let inverse = (self.projection(w / h) * self.view()).inverse();
        let unproject = |z: f32| {
            let p = inverse * Vec4::new(ndc[0], ndc[1], z, 1.0);
            p.truncate() / p.w
        };
        let (near, far) = (unproject(-1.0), unproject(1.0));
        (near, (far - near).normalize_or_zero())
    }

    /// Position of the eye, metres.
    pub fn eye(&self) -> Vec3 {
        let direction = Vec3::new(
            self.pitch.cos() * self.yaw.sin(),
            self.pitch.sin(),
            self.pitch.cos() * self.yaw.cos(),
        );
        self.target + direction * self.distance
    }

    /// World → eye transform (right-handed, y up).
    pub fn view(&self) -> Mat4 {
        look_at(self.eye(), self.target, Vec3::Y)
    }

    /// Near and far clip distances, metres, scaled with the distance so depth precision holds.
    pub fn clip_planes(&self) -> (f32, f32) {
        (
            0.01 * self.distance.max(0.05),
            100.0 * self.distance.max(1.0),
        )
    }

    /// Eye → clip transform (OpenGL conventions) for a viewport of this aspect ratio.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let (near, far) = self.clip_planes();
        perspective_gl(FIELD_OF_VIEW, aspect.max(1e-3), near, far)
    }

    /// Orbits by a mouse drag of `dx`, `dy` pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-PITCH_LIMIT, PITCH_LIMIT);
    }

    /// Moves the target in the view plane by a mouse drag of `dx`, `dy` pixels.
    pub fn pan(&mut self, dx: f32, dy: f32, viewport_height: f32) {
        let metres_per_pixel =
            2.0 * self.distance * (0.5 * FIELD_OF_VIEW).tan() / viewport_height.max(1.0);
        let view = self.view();
        let right = view.row(0).truncate();
        let up = view.row(1).truncate();
        self.target += (-dx * right + dy * up) * metres_per_pixel;
    }

    /// Zooms by `steps` wheel notches (positive comes closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.9f32.powf(steps)).clamp(0.05, 500.0);
    }

    /// Flies: moves the target `forward`, `right` and `up` metres along the view axes.
    pub fn fly(&mut self, forward: f32, right: f32, up: f32) {
        let view = self.view();
        let right_axis = view.row(0).truncate();
        let back_axis = view.row(2).truncate();
        self.target += right_axis * right - back_axis * forward + Vec3::Y * up;
    }
}

/// The eight corners of `aabb`.
fn corners(aabb: &Aabb) -> [Vec3; 8] {
    std::array::from_fn(|i| {
        Vec3::new(
            [aabb.min[0], aabb.max[0]][i & 1],
            [aabb.min[1], aabb.max[1]][(i >> 1) & 1],
            [aabb.min[2], aabb.max[2]][(i >> 2) & 1],
        )
    })
}

/// Where an eye must be for points at `across` along one of its view axes (right or up) and
/// `depth` along its forward axis to project onto exactly `band` = [low, high] of that axis
/// (normalised device coordinates; `tan`: the tangent of the half field of view along it):
/// (the eye's depth, its coordinate along the axis). A point projects to (across − a) /
/// ((depth − d)·tan) for an eye at a, d, so it lies at or below `high` when a − high·tan·d ≥
/// across − high·tan·depth and at or above `low` when a − low·tan·d ≤ across − low·tan·depth:
/// the band is spanned exactly when each holds with equality for some point.
fn fit(across: &[f32; 8], depth: &[f32; 8], tan: f32, [low, high]: [f32; 2]) -> (f32, f32) {
    let mut upper = f32::MIN;
    let mut lower = f32::MAX;
    for (a, d) in across.iter().zip(depth) {
        upper = upper.max(a - high * tan * d);
        lower = lower.min(a - low * tan * d);
    }
    let eye_depth = (upper - lower) / ((low - high) * tan);
    (eye_depth, upper + high * tan * eye_depth)
}

/// Right-handed view matrix: the eye at `eye` looking at `target`, `up` roughly up
/// (gluLookAt).
pub fn look_at(eye: Vec3, target: Vec3, up: Vec3) -> Mat4 {
    let forward = (target - eye).normalize();
    let side = forward.cross(up).normalize();
    let true_up = side.cross(forward);
    Mat4::from_cols(
        Vec4::new(side.x, true_up.x, -forward.x, 0.0),
        Vec4::new(side.y, true_up.y, -forward.y, 0.0),
        Vec4::new(side.z, true_up.z, -forward.z, 0.0),
        Vec4::new(-side.dot(eye), -true_up.dot(eye), forward.dot(eye), 1.0),
    )
}

/// OpenGL orthographic projection (glOrtho): the box [`left`, `right`] × [`bottom`, `top`] ×
/// [−`near`, −`far`] of eye space to the clip cube.
pub fn orthographic_gl(left: f32, right: f32, bottom: f32, top: f32, near: f32, far: f32) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(2.0 / (right - left), 0.0, 0.0, 0.0),
        Vec4::new(0.0, 2.0 / (top - bottom), 0.0, 0.0),
        Vec4::new(0.0, 0.0, -2.0 / (far - near), 0.0),
        Vec4::new(
            -(right + left) / (right - left),
            -(top + bottom) / (top - bottom),
            -(far + near) / (far - near),
            1.0,
        ),
    )
}

/// OpenGL perspective projection (gluPerspective): clip z in [−w, w] between `near` and `far`.
fn perspective_gl(field_of_view: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    let f = 1.0 / (0.5 * field_of_view).tan();
    Mat4::from_cols(
        Vec4::new(f / aspect, 0.0, 0.0, 0.0),
        Vec4::new(0.0, f, 0.0, 0.0),
        Vec4::new(0.0, 0.0, (far + near) / (near - far), -1.0),
        Vec4::new(0.0, 0.0, 2.0 * far * near / (near - far), 0.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default camera puts the container in the central 80 % of the frame, centred, and
    /// fills it along the tighter axis (to 2 %), for boxes of every proportion and for a band
    /// beside a panel. The last box is the pool's opening, flat and seen from close by, where
    /// a fixed-point iteration stalled 5 % off.
    #[test]
    fn framing_fits_the_container_into_the_central_80_percent() {
        let boxes = [
            Aabb::new([0.0, 0.0, 0.0], [1.6, 1.0, 0.6]),
            Aabb::new([-0.5, 0.0, -0.2], [0.5, 2.0, 0.2]),
            Aabb::new([0.0, 0.0, 0.0], [4.0, 0.5, 1.0]),
            Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
            Aabb::new([0.0, 0.1, 0.0], [2.0, 0.1, 2.0]),
        ];
        for container in boxes {
            for (aspect, band) in [
                (16.0 / 9.0, [-1.0, 1.0]),
                (4.0 / 3.0, [-1.0, 1.0]),
                (16.0 / 9.0, [-0.35, 1.0]),
            ] {
                let camera = Camera::framing_in(&container, Orientation::FRONT, aspect, band);
                let [x0, y0, x1, y1] = camera.projected_bounds(&container, aspect);
                let center = 0.5 * (band[0] + band[1]);
                let half = FRAMED_FRACTION * 0.5 * (band[1] - band[0]);
                let tolerance = 1e-3;
                assert!(
                    x0 >= center - half - tolerance
                        && x1 <= center + half + tolerance
                        && y0 >= -FRAMED_FRACTION - tolerance
                        && y1 <= FRAMED_FRACTION + tolerance,
                    "{container:?} at {aspect} in {band:?}: {:?}",
                    [x0, y0, x1, y1]
                );
                let offset = [0.5 * (x0 + x1) - center, 0.5 * (y0 + y1)];
                assert!(
                    offset[0].abs() < tolerance && offset[1].abs() < tolerance,
                    "{container:?} at {aspect} in {band:?}: off by {offset:?}"
                );
                let fill = ((x1 - x0) / (2.0 * half)).max((y1 - y0) / (2.0 * FRAMED_FRACTION));
                assert!(fill > 0.98, "{container:?}: fills {fill}");
            }
        }
    }

    #[test]
    fn view_and_projection_follow_opengl_conventions() {
        let camera = Camera::framing(&Aabb::new([0.0; 3], [1.0; 3]));
        let view = camera.view();
        assert!(view.transform_point3(camera.eye()).length() < 1e-5);
        let target = view.transform_point3(camera.target);
        assert!(target.x.abs() < 1e-5 && target.y.abs() < 1e-5);
        assert!((target.z + camera.distance).abs() < 1e-4);
        let (near, far) = camera.clip_planes();
        let projection = camera.projection(1.0);
        let at_near = projection.project_point3(Vec3::new(0.0, 0.0, -near));
        let at_far = projection.project_point3(Vec3::new(0.0, 0.0, -far));
        assert!((at_near.z + 1.0).abs() < 1e-4 && (at_far.z - 1.0).abs() < 1e-3);
    }

    #[test]
    fn zoom_and_orbit_stay_in_range() {
        let mut camera = Camera::framing(&Aabb::new([0.0; 3], [1.0; 3]));
        let before = camera.distance;
        camera.zoom(1.0);
        assert!(camera.distance < before);
        camera.orbit(0.0, 1e6);
        assert!(camera.pitch <= PITCH_LIMIT);
        assert!(camera.eye().is_finite());
    }
}
