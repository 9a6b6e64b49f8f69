//! The orbit camera below the surface stays in the water: orbiting under the pool would
//! otherwise carry the eye through the floor or a wall, into the ground, where the picture is
//! the deck from beneath, the walls' outer faces and the sky below the horizon. The eye is
//! pulled in along its ray from the target to where that ray leaves the water's box (the
//! viewer's and `render`'s cameras both pass through [`keep_in_water`] before drawing).

use crate::gfx::camera::Camera;

/// How far (a share of the smaller of the pool's side and depth) the eye stays from the floor
/// and the walls, so the near plane never cuts through them.
pub const MARGIN: f32 = 0.02;

/// `camera` with its distance shortened, when its eye is below the rest surface (y < 0) and
/// outside the water's box ([0, size]² × [−depth, 0], less [`MARGIN`]), to where the ray from
/// the target towards the eye leaves the box. Above the surface, inside the box, or when that
/// ray never meets the box (the target flown far outside), the camera is returned unchanged.
pub fn keep_in_water(camera: Camera, size: f32, depth: f32) -> Camera {
    let eye = camera.eye();
    if eye.y >= 0.0 {
        return camera;
    }
    let margin = MARGIN * size.min(depth);
    let low = [margin, -depth + margin, margin];
    let high = [size - margin, f32::INFINITY, size - margin];
    let inside = (0..3).all(|a| (low[a]..=high[a]).contains(&eye[a]));
    if inside {
        return camera;
    }
    // The segment target + t·(eye − target), t in [0, 1], clipped to the box (slabs).
    let (start, along) = (camera.target, eye - camera.target);
    let (mut enter, mut leave) = (0.0_f32, 1.0_f32);
    for a in 0..3 {
        if along[a].abs() < 1e-12 {
            if !(low[a]..=high[a]).contains(&start[a]) {
                return camera;
            }
            continue;
        }
        let (t0, t1) = (
            (low[a] - start[a]) / along[a],
            (high[a] - start[a]) / along[a],
        );
        enter = enter.max(t0.min(t1));
        leave = leave.min(t0.max(t1));
    }
    if enter > leave || leave <= 0.0 {
        return camera;
    }
    Camera {
        distance: camera.distance * leave,
        ..camera
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn orbit(yaw: f32, pitch: f32, distance: f32) -> Camera {
        Camera {
            target: Vec3::new(1.0, 0.0, 1.0),
            yaw: yaw.to_radians(),
            pitch: pitch.to_radians(),
            distance,
        }
    }

    fn in_box(p: Vec3, size: f32, depth: f32) -> bool {
        let m = MARGIN * size.min(depth) - 1e-4;
        p.x >= m && p.x <= size - m && p.z >= m && p.z <= size - m && p.y >= -depth + m
    }

    /// The audit's cameras (through the floor; through a wall) end inside the water, on their
    /// ray from the target, at the box less the margin; cameras above the water or already in
    /// it are left alone.
    #[test]
    fn an_eye_under_the_ground_is_pulled_back_into_the_water() {
        let (size, depth) = (2.0, 1.0);
        for (camera, floor) in [
            (orbit(30.0, -20.0, 3.5), false),
            (orbit(30.0, -10.0, 2.0), false),
            (orbit(0.0, -80.0, 3.0), true),
        ] {
            assert!(
                !in_box(camera.eye(), size, depth),
                "{camera:?} starts outside"
            );
            let kept = keep_in_water(camera, size, depth);
            let eye = kept.eye();
            assert!(in_box(eye, size, depth), "{eye} outside the water");
            assert!(eye.y < 0.0, "{eye} left the water upwards");
            assert!(kept.distance < camera.distance);
            let direction = (camera.eye() - camera.target).normalize();
            assert!(((eye - kept.target).normalize() - direction).length() < 1e-5);
            let m = MARGIN * size.min(depth);
            let on_face = if floor {
                (eye.y - (-depth + m)).abs() < 1e-4
            } else {
                (eye.x - (size - m)).abs() < 1e-4 || (eye.z - (size - m)).abs() < 1e-4
            };
            assert!(on_face, "{eye} is not on the face it crossed");
        }
        for camera in [orbit(30.0, 40.0, 3.5), orbit(30.0, -20.0, 0.5)] {
            assert_eq!(keep_in_water(camera, size, depth), camera);
        }
    }
}
