//! The grabber: a left drag that starts on a cloth or jelly node picks it (the front-most node
//! within a few pixels of the pointer) and drags it on the plane through it facing the camera.
//! A held node is pinned (it never moves by itself; the springs pull its neighbours after it)
//! and gets its own pin state back when let go.

use super::body::Body;
use crate::gfx::camera::Camera;
use glam::{Mat4, Vec3, Vec4};

/// How close, in pixels, the pointer must be to a node to pick it.
pub const PICK_PIXELS: f32 = 16.0;

/// The node held and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    /// The node.
    pub node: usize,
    /// Whether it was pinned before.
    pub was_pinned: bool,
    /// Its depth along the camera's forward axis when picked, m (the drag plane).
    pub depth: f32,
}

/// The grabber's state between pointer events.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Grabber {
    /// The node held, if any.
    pub held: Option<Held>,
    /// Whether the left button was down at the last event.
    pressed: bool,
}

/// The pointer's ray through output pixel `position` of an output of `size`: its origin on
/// the near plane and its unit direction.
pub fn ray(camera: &Camera, position: [f32; 2], size: [u32; 2]) -> (Vec3, Vec3) {
    let (w, h) = (size[0].max(1) as f32, size[1].max(1) as f32);
    let ndc = [2.0 * position[0] / w - 1.0, 1.0 - 2.0 * position[1] / h];
    let inverse = view_projection(camera, size).inverse();
    let unproject = |z: f32| {
        let p = inverse * Vec4::new(ndc[0], ndc[1], z, 1.0);
        p.truncate() / p.w
    };
    let (near, far) = (unproject(-1.0), unproject(1.0));
    (near, (far - near).normalize_or_zero())
}

fn view_projection(camera: &Camera, size: [u32; 2]) -> Mat4 {
    let aspect = size[0].max(1) as f32 / size[1].max(1) as f32;
    camera.projection(aspect) * camera.view()
}

/// The front-most node of `body` within [`PICK_PIXELS`] of output pixel `position`.
pub fn pick(body: &Body, camera: &Camera, position: [f32; 2], size: [u32; 2]) -> Option<usize> {
    let transform = view_projection(camera, size);
    let (w, h) = (size[0] as f32, size[1] as f32);
    let mut best: Option<(usize, f32)> = None;
    for (k, p) in body.position.iter().enumerate() {
        let clip = transform * p.extend(1.0);
        if clip.w <= 0.0 {
            continue;
        }
        let ndc = clip.truncate() / clip.w;
        let pixel = [(ndc.x + 1.0) * 0.5 * w, (1.0 - ndc.y) * 0.5 * h];
        let (dx, dy) = (pixel[0] - position[0], pixel[1] - position[1]);
        if dx * dx + dy * dy <= PICK_PIXELS * PICK_PIXELS && best.is_none_or(|(_, z)| ndc.z < z) {
            best = Some((k, ndc.z));
        }
    }
    best.map(|(k, _)| k)
}

impl Grabber {
    /// One pointer event (see [`crate::sims::Sim::pointer`]): a drag that starts on a node
    /// picks it, moving drags it, letting go releases it. Returns whether a node is held.
    pub fn pointer(
        &mut self,
        body: &mut Body,
        camera: &Camera,
        position: [f32; 2],
        size: [u32; 2],
        dragging: bool,
    ) -> bool {
        let starting = dragging && !self.pressed;
        self.pressed = dragging;
        if !dragging {
            self.release(body);
            return false;
        }
        let forward = (camera.target - camera.eye()).normalize_or_zero();
        if starting {
            if let Some(node) = pick(body, camera, position, size) {
                self.held = Some(Held {
                    node,
                    was_pinned: body.pinned[node],
                    depth: (body.position[node] - camera.eye()).dot(forward),
                });
                body.pinned[node] = true;
            }
        }
        let Some(held) = self.held else {
            return false;
        };
        let (origin, direction) = ray(camera, position, size);
        let along = direction.dot(forward);
        if along > 1e-6 {
            let t = (held.depth - (origin - camera.eye()).dot(forward)) / along;
            let target = origin + direction * t;
            body.position[held.node] = target;
            body.previous[held.node] = target;
        }
        true
    }

    /// Lets go of the node held (it gets its pin state back).
    pub fn release(&mut self, body: &mut Body) {
        if let Some(held) = self.held.take() {
            if let Some(pinned) = body.pinned.get_mut(held.node) {
                *pinned = held.was_pinned;
            }
        }
    }

    /// Forgets the node held without touching a body (the body was replaced).
    pub fn forget(&mut self) {
        *self = Grabber::default();
    }
}
