//! The orbit camera: a target point, yaw and pitch around it, and a distance. The mouse orbits,
//! pans and zooms it; the keyboard flies it (moves the target along the view axes).

use crate::scene::Aabb;
use glam::{Mat4, Vec3, Vec4};

/// Vertical field of view, radians.
const FIELD_OF_VIEW: f32 = 0.9;
/// Pitch is kept away from the poles so the up vector stays defined.
const PITCH_LIMIT: f32 = 1.5;

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
    /// The default view of a container: from the front, a little above, the whole box in view.
    pub fn framing(container: &Aabb) -> Camera {
        let center = Vec3::from(0.5 * (container.min + container.max));
        let size = Vec3::from(container.size());
        Camera {
            target: center - Vec3::new(0.0, 0.15 * size.y, 0.0),
            yaw: -0.5,
            pitch: 0.32,
            distance: 1.25 * size.length() / (0.5 * FIELD_OF_VIEW).tan() * 0.5 + 0.2,
        }
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
fn look_at(eye: Vec3, target: Vec3, up: Vec3) -> Mat4 {
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

    #[test]
    fn framing_looks_at_the_container() {
        let container = Aabb::new([0.0, 0.0, 0.0], [1.6, 1.0, 0.6]);
        let camera = Camera::framing(&container);
        let clip = camera.projection(4.0 / 3.0) * camera.view();
        for corner in [
            [0.0, 0.0, 0.0],
            [1.6, 1.0, 0.6],
            [1.6, 0.0, 0.0],
            [0.0, 1.0, 0.6],
        ] {
            let p = clip.project_point3(Vec3::from(corner));
            assert!(p.x.abs() < 1.0 && p.y.abs() < 1.0, "{corner:?} → {p}");
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
