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
    /// The default view of a container in a full 16:9 output (what `fluidlab render` draws):
    /// [`Camera::framing_in`] with the whole frame uncovered.
    pub fn framing(container: &Aabb) -> Camera {
        Camera::framing_in(container, 16.0 / 9.0, [-1.0, 1.0])
    }

    /// The default view of a container seen from the front, a little above and to the side,
    /// fitted to an output of `aspect` (width / height) of which the horizontal band
    /// `uncovered` (normalised device x, −1 left to 1 right) is not under a panel: the box's
    /// eight corners end up in the central [`FRAMED_FRACTION`] of that band and of the height,
    /// filling it along the tighter axis. The distance and the target (shifted in the view
    /// plane) are found by fixed-point iteration on the projected corners.
    pub fn framing_in(container: &Aabb, aspect: f32, uncovered: [f32; 2]) -> Camera {
        let center = Vec3::from(0.5 * (container.min + container.max));
        let size = Vec3::from(container.size()).max(Vec3::splat(1e-3));
        let mut camera = Camera {
            target: center,
            yaw: -0.5,
            pitch: 0.55,
            distance: size.length() / (0.5 * FIELD_OF_VIEW).tan(),
        };
        let band_center = 0.5 * (uncovered[0] + uncovered[1]);
        let half_width = FRAMED_FRACTION * 0.5 * (uncovered[1] - uncovered[0]).abs().max(0.1);
        let half_height = FRAMED_FRACTION;
        let tan = (0.5 * FIELD_OF_VIEW).tan();
        for _ in 0..64 {
            let [x0, y0, x1, y1] = camera.projected_bounds(container, aspect);
            let scale = ((x1 - x0) / (2.0 * half_width)).max((y1 - y0) / (2.0 * half_height));
            let offset = glam::Vec2::new(0.5 * (x0 + x1) - band_center, 0.5 * (y0 + y1));
            let view = camera.view();
            let (right, up) = (view.row(0).truncate(), view.row(1).truncate());
            camera.target += (right * offset.x * aspect + up * offset.y) * camera.distance * tan;
            camera.distance *= scale.clamp(0.5, 2.0);
            if (scale - 1.0).abs() < 1e-4 && offset.length() < 1e-4 {
                break;
            }
        }
        camera
    }

    /// The normalised device coordinates [x min, y min, x max, y max] of `aabb`'s eight
    /// corners seen by this camera in an output of `aspect`.
    pub fn projected_bounds(&self, aabb: &Aabb, aspect: f32) -> [f32; 4] {
        let clip = self.projection(aspect) * self.view();
        let mut bounds = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for i in 0..8 {
            let corner = Vec3::new(
                [aabb.min[0], aabb.max[0]][i & 1],
                [aabb.min[1], aabb.max[1]][(i >> 1) & 1],
                [aabb.min[2], aabb.max[2]][(i >> 2) & 1],
            );
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

    /// The default camera puts the container in the central 80 % of the frame and fills it
    /// along the tighter axis (to 2 %), for boxes of every proportion and for a band beside a
    /// panel.
    #[test]
    fn framing_fits_the_container_into_the_central_80_percent() {
        let boxes = [
            Aabb::new([0.0, 0.0, 0.0], [1.6, 1.0, 0.6]),
            Aabb::new([-0.5, 0.0, -0.2], [0.5, 2.0, 0.2]),
            Aabb::new([0.0, 0.0, 0.0], [4.0, 0.5, 1.0]),
            Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
        ];
        for container in boxes {
            for (aspect, band) in [
                (16.0 / 9.0, [-1.0, 1.0]),
                (4.0 / 3.0, [-1.0, 1.0]),
                (16.0 / 9.0, [-0.35, 1.0]),
            ] {
                let camera = Camera::framing_in(&container, aspect, band);
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
