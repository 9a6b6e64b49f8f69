//! The grabber: a left drag that starts on a cloth or jelly node picks it (the front-most node
//! within a few pixels of the pointer) and drags it on the plane through it facing the camera.
//! A held node is pinned (it never moves by itself; the springs pull its neighbours after it)
//! and gets its own pin state back when let go. A drag that starts on the wind arrow's head
//! holds the arrow instead: the head moves with the pointer on the horizontal plane through
//! the arrow's base (by as much as the pointer's point on that plane: a press alone changes
//! nothing), which sets the wind's direction and speed (a horizontal wind). With no wind the
//! arrow is a handle at its base, grabbed the same way, so a drag can start a wind. Whichever
//! of the arrow and a node is nearer the camera under the pointer is grabbed.

use super::body::Body;
use super::render::{arrow_length, arrow_speed, ARROW_LONGEST, ARROW_SHORTEST, NO_WIND};
use super::scene::{fastest_wind, Orientation, ParticlesScene, Which};
use crate::gfx::camera::Camera;
use glam::{Mat4, Vec3};

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
    /// Whether the wind arrow is held.
    pub arrow: bool,
    /// While the arrow is held: where the drag first met the base's horizontal plane.
    grip: Option<Grip>,
}

/// Where a drag of the arrow first met the horizontal plane through its base.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Grip {
    /// The pointer's point on the plane (the head moves as far as this point has since).
    point: Vec3,
    /// The wind then.
    wind: Vec3,
    /// The arrow's base then: the plane stays there while the arrow is held, though the base
    /// follows a moving body, so a pointer held still keeps the wind.
    base: Vec3,
}

/// The wind arrow's base in `scene`: on the fountain's jet axis, `emitter_depth` + 1.8 cube
/// sides from the nozzle (tilted with the jet; upright, 1.8 cube sides above the cube's top,
/// where the preset's jet reaches 1.2; validation keeps the jet rising out of the top, so the
/// base is above it); over the middle of a body's box `body` (its nodes' lowest and highest
/// corners now, [`Body::bounds`]), 0.6 m above the cloth's top and 0.8 m above the jelly's, so
/// it follows a cloth that swings or a jelly that falls. `None` (no finite node): over the
/// body's starting place.
pub fn arrow_base(scene: &ParticlesScene, body: Option<[Vec3; 2]>) -> Vec3 {
    let b = &scene.body;
    let start = Vec3::from(b.start);
    let [lo, hi] = body.unwrap_or(match scene.which {
        Which::Cloth => {
            let down = match b.orientation {
                Orientation::Hanging => Vec3::NEG_Y,
                Orientation::Flat | Orientation::Folded => Vec3::Z,
            };
            let far = start + Vec3::X * b.size + down * b.size;
            [start.min(far), start.max(far)]
        }
        _ => [start, start + Vec3::splat(b.size)],
    });
    let over = |above: f32| {
        let middle = 0.5 * (lo + hi);
        Vec3::new(middle.x, hi.y + above, middle.z)
    };
    match scene.which {
        Which::Fountain => {
            let f = &scene.fountain;
            f.nozzle() + f.jet() * (f.emitter_depth + 1.8 * f.cube)
        }
        Which::Cloth => over(0.6),
        Which::Jelly => over(0.8),
    }
}

/// Where along the arrow its head is picked and held, of its length (the head spans 0.7–1).
pub const HEAD_AT: f32 = 0.85;

/// The middle of the head of the arrow at `base` drawn for `wind`: with no wind, the base (the
/// handle drawn there).
pub fn arrow_head(base: Vec3, wind: Vec3) -> Vec3 {
    let speed = wind.length();
    if speed > NO_WIND {
        base + wind / speed * (HEAD_AT * arrow_length(speed))
    } else {
        base
    }
}

/// The slowest wind a drag sets, m/s (a drag from the handle shows an arrow at once).
pub const SLOWEST_DRAGGED: f32 = 0.1;

/// The horizontal wind whose arrow at `base` has its head's middle at `head`'s horizontal
/// place (its speed kept within what the arrow's length can show): the inverse of
/// [`arrow_head`]. `None` when `head` is straight above or below the base.
pub fn wind_for_head(base: Vec3, head: Vec3) -> Option<Vec3> {
    let offset = Vec3::new(head.x - base.x, 0.0, head.z - base.z);
    let distance = offset.length();
    (distance > 1e-4).then(|| {
        let length = (distance / HEAD_AT).clamp(ARROW_SHORTEST, ARROW_LONGEST);
        wind_toward(offset / distance, arrow_speed(length).max(SLOWEST_DRAGGED))
    })
}

/// A wind of `speed` (m/s, at most [`MAX_WIND`](super::scene::MAX_WIND)) along the unit
/// `direction`, its length kept within it ([`fastest_wind`]): a speed a hair under it along a
/// direction whose length rounds a hair over 1 can come out past it (the longest arrow's speed
/// where `log1pf`/`expm1f` round it to 99.99999 m/s, along (-1.7, 0, -1.81) normalized, is
/// 100.00001 m/s), which the next step's validation refuses, pausing the viewer.
pub fn wind_toward(direction: Vec3, speed: f32) -> Vec3 {
    Vec3::from(fastest_wind((direction * speed).into()))
}

/// Where `p` falls in an output of `size` seen by `camera`: pixels from the top left and the
/// NDC depth (`None`: behind the camera).
pub fn to_pixel(camera: &Camera, p: Vec3, size: [u32; 2]) -> Option<([f32; 2], f32)> {
    let clip = view_projection(camera, size) * p.extend(1.0);
    if clip.w <= 0.0 {
        return None;
    }
    let ndc = clip.truncate() / clip.w;
    let (w, h) = (size[0] as f32, size[1] as f32);
    Some(([(ndc.x + 1.0) * 0.5 * w, (1.0 - ndc.y) * 0.5 * h], ndc.z))
}

/// The NDC depth of the arrow's head (the handle with no wind) when output pixel `position`
/// is within [`PICK_PIXELS`] of it.
pub fn picks_arrow(
    base: Vec3,
    wind: Vec3,
    camera: &Camera,
    position: [f32; 2],
    size: [u32; 2],
) -> Option<f32> {
    let (pixel, z) = to_pixel(camera, arrow_head(base, wind), size)?;
    let (dx, dy) = (pixel[0] - position[0], pixel[1] - position[1]);
    (dx * dx + dy * dy <= PICK_PIXELS * PICK_PIXELS).then_some(z)
}

fn view_projection(camera: &Camera, size: [u32; 2]) -> Mat4 {
    let aspect = size[0].max(1) as f32 / size[1].max(1) as f32;
    camera.projection(aspect) * camera.view()
}

/// The front-most of the nodes at `nodes` within [`PICK_PIXELS`] of output pixel `position`.
pub fn pick(nodes: &[Vec3], camera: &Camera, position: [f32; 2], size: [u32; 2]) -> Option<usize> {
    pick_depth(nodes, camera, position, size).map(|(k, _)| k)
}

/// [`pick`] with the node's NDC depth.
fn pick_depth(
    nodes: &[Vec3],
    camera: &Camera,
    position: [f32; 2],
    size: [u32; 2],
) -> Option<(usize, f32)> {
    let mut best: Option<(usize, f32)> = None;
    for (k, p) in nodes.iter().enumerate() {
        let Some((pixel, z)) = to_pixel(camera, *p, size) else {
            continue;
        };
        let (dx, dy) = (pixel[0] - position[0], pixel[1] - position[1]);
        if dx * dx + dy * dy <= PICK_PIXELS * PICK_PIXELS && best.is_none_or(|(_, b)| z < b) {
            best = Some((k, z));
        }
    }
    best
}

/// What a pointer event changes of the node held: its pin (the press pins it, the release
/// gives its own back) and its place (the press and each move put it, still, on the drag's
/// plane: position and previous position, as the integrators keep a pinned node). The rest of
/// the body is untouched: on CUDA only these bytes go to the GPU (`upload_node`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeEdit {
    /// The node.
    pub node: usize,
    /// Its pin, when the event sets it.
    pub pin: Option<bool>,
    /// Its place, when the event moves it.
    pub place: Option<Vec3>,
}

impl NodeEdit {
    /// Makes the edit in `body` (nothing for a node it does not have).
    pub fn apply(&self, body: &mut Body) {
        let k = self.node;
        if k >= body.len() {
            return;
        }
        if let Some(pin) = self.pin {
            body.pinned[k] = pin;
        }
        if let Some(place) = self.place {
            body.position[k] = place;
            body.previous[k] = place;
        }
    }
}

impl Grabber {
    /// One pointer event for the wind arrow at `base` drawn for `wind`, before
    /// [`Grabber::pointer`]: a drag that starts on the arrow's head (and on no node of a body,
    /// at `nodes` then, nearer the camera there) holds the arrow. The first event that meets
    /// the horizontal plane through the base keeps the wind and notes the pointer's point
    /// there; later ones set the wind [`wind_for_head`] gives for the head moved as far as
    /// that point has, so only moving changes the wind. Returns the wind while the arrow is
    /// held (then skip [`Grabber::pointer`]); `None` otherwise.
    #[allow(clippy::too_many_arguments)]
    pub fn pointer_arrow(
        &mut self,
        base: Vec3,
        wind: Vec3,
        nodes: Option<&[Vec3]>,
        camera: &Camera,
        position: [f32; 2],
        size: [u32; 2],
        dragging: bool,
    ) -> Option<Vec3> {
        if !dragging {
            self.arrow = false;
            self.grip = None;
            return None;
        }
        let starting = !self.pressed;
        if starting && self.held.is_none() {
            if let Some(z) = picks_arrow(base, wind, camera, position, size) {
                let node = nodes.and_then(|n| pick_depth(n, camera, position, size));
                self.arrow = node.is_none_or(|(_, node)| z <= node);
                self.grip = None;
            }
        }
        if !self.arrow {
            return None;
        }
        self.pressed = true;
        let plane = self.grip.map_or(base, |grip| grip.base);
        let (origin, direction) = camera.ray(position, size);
        let t = (plane.y - origin.y) / direction.y;
        if !t.is_finite() || t <= 0.0 {
            return Some(wind);
        }
        let point = origin + direction * t;
        let Some(grip) = self.grip else {
            self.grip = Some(Grip { point, wind, base });
            return Some(wind);
        };
        if point == grip.point {
            return Some(grip.wind);
        }
        let head = arrow_head(plane, grip.wind) + point - grip.point;
        Some(wind_for_head(plane, head).unwrap_or(wind))
    }

    /// Whether an event with the button `dragging` starts a drag.
    pub fn starting(&self, dragging: bool) -> bool {
        dragging && !self.pressed
    }

    /// Follows the button where no body takes pointer events (the fountain): a drag that
    /// started off the arrow cannot pick it up midway, and the next press can start on it.
    pub fn track(&mut self, dragging: bool) {
        self.pressed = dragging;
    }

    /// One pointer event (see [`crate::sims::Sim::pointer`]) over a body whose nodes are
    /// pinned as `pinned`: a drag that starts on a node picks it (the front-most of the nodes
    /// at `nodes`, which only a press reads: `None` picks nothing), moving drags it, letting
    /// go releases it. Returns what the event changes of the node held, for the caller to
    /// make in the body ([`NodeEdit::apply`]; on CUDA on the GPU too). [`Grabber::held`]
    /// says whether a node is held after it.
    pub fn pointer(
        &mut self,
        nodes: Option<&[Vec3]>,
        pinned: &[bool],
        camera: &Camera,
        position: [f32; 2],
        size: [u32; 2],
        dragging: bool,
    ) -> Option<NodeEdit> {
        let starting = dragging && !self.pressed;
        self.pressed = dragging;
        if !dragging {
            return self.release();
        }
        let forward = (camera.target - camera.eye()).normalize_or_zero();
        let mut pin = None;
        if let (true, Some(nodes)) = (starting, nodes) {
            if let Some(node) = pick(nodes, camera, position, size) {
                self.held = Some(Held {
                    node,
                    was_pinned: pinned.get(node).copied().unwrap_or(false),
                    depth: (nodes[node] - camera.eye()).dot(forward),
                });
                pin = Some(true);
            }
        }
        let held = self.held?;
        let (origin, direction) = camera.ray(position, size);
        let along = direction.dot(forward);
        let place = (along > 1e-6).then(|| {
            let t = (held.depth - (origin - camera.eye()).dot(forward)) / along;
            origin + direction * t
        });
        Some(NodeEdit {
            node: held.node,
            pin,
            place,
        })
    }

    /// Lets go of the node held: the edit giving it its pin state back.
    pub fn release(&mut self) -> Option<NodeEdit> {
        self.held.take().map(|held| NodeEdit {
            node: held.node,
            pin: Some(held.was_pinned),
            place: None,
        })
    }

    /// Forgets the node held and the arrow without touching a body (the body was replaced:
    /// F1–F3, a restart, a shape edit). The button's state is kept: a drag under way goes on
    /// holding nothing, and only the next press can grab the new scene's arrow or a node.
    pub fn forget(&mut self) {
        *self = Grabber {
            pressed: self.pressed,
            ..Grabber::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wind_for_a_head_puts_the_head_there() {
        let base = Vec3::new(0.5, 2.0, -0.3);
        for head in [
            Vec3::new(1.5, 2.0, -0.3),
            Vec3::new(0.1, 2.0, 1.0),
            Vec3::new(-0.4, 2.0, -1.0),
        ] {
            let wind = wind_for_head(base, head).expect("a wind");
            assert_eq!(wind.y, 0.0);
            let back = arrow_head(base, wind);
            assert!(back.distance(head) < 1e-4, "{back} for {head}");
        }
        // Nearer than the shortest arrow: the slowest wind, still pointing there.
        let wind = wind_for_head(base, base + Vec3::new(0.0, 0.0, 0.1)).unwrap();
        assert!((wind.length() - SLOWEST_DRAGGED).abs() < 1e-6 && wind.z > 0.0);
        // Farther than the longest: the longest arrow's speed.
        let far = wind_for_head(base, base + Vec3::new(50.0, 0.0, 0.0)).unwrap();
        assert!((arrow_length(far.length()) - ARROW_LONGEST).abs() < 1e-4);
        assert!(wind_for_head(base, base + Vec3::Y).is_none());
    }

    /// The drag reaches every speed a wind may have (before, its longest arrow
    /// meant 9.3 m/s of the 100): the arrow's length and its inverse from no wind (0.6 m) to
    /// 100 m/s (2 m), strictly growing, finest near no wind (0.30 m per m/s there; 100 m/s'
    /// neighbourhood 0.003 m per m/s), and a head dragged anywhere along it gives back its
    /// wind; a length that is not finite is no wind (NaN was 100 m/s).
    #[test]
    fn the_arrow_spans_every_wind_finely_near_none() {
        use crate::sims::particles::render::ARROW_FASTEST;
        use crate::sims::particles::scene::MAX_WIND;
        assert_eq!(ARROW_FASTEST, MAX_WIND);
        assert_eq!(arrow_length(0.0), ARROW_SHORTEST);
        assert!((arrow_length(MAX_WIND) - ARROW_LONGEST).abs() < 1e-6);
        assert_eq!(arrow_length(2.0 * MAX_WIND), ARROW_LONGEST);
        assert_eq!(arrow_speed(ARROW_SHORTEST), 0.0);
        assert!((arrow_speed(ARROW_LONGEST) - MAX_WIND).abs() < 1e-3);
        for length in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(arrow_speed(length), 0.0, "{length}");
        }
        let mut before = (arrow_length(0.0), 0.0);
        for k in 1..=10_000 {
            let speed = MAX_WIND * k as f32 / 10_000.0;
            let length = arrow_length(speed);
            assert!(length > before.0, "{speed} m/s: {length} m");
            assert!(
                (arrow_speed(length) - speed).abs() <= 1e-4 * speed.max(1.0),
                "{speed} m/s back as {}",
                arrow_speed(length)
            );
            before = (length, speed);
        }
        // Fine near none: 1 cm of arrow is 0.033 m/s there, 3.3 m/s at the top.
        let near = (arrow_length(0.1) - arrow_length(0.0)) / 0.1;
        let top = (arrow_length(MAX_WIND) - arrow_length(MAX_WIND - 1.0)) / 1.0;
        assert!(near > 0.25 && near < 0.31, "{near} m per m/s");
        assert!(top < 0.004, "{top} m per m/s");
        // A head dragged to the longest arrow sets the fastest wind.
        let base = Vec3::new(0.5, 2.0, -0.3);
        let far = wind_for_head(base, base + Vec3::new(HEAD_AT * ARROW_LONGEST, 0.0, 0.0));
        assert!((far.unwrap().length() - MAX_WIND).abs() < 1e-2, "{far:?}");
    }

    #[test]
    fn dragging_the_arrow_head_sets_the_wind_under_the_pointer() {
        let size = [800, 450];
        let base = Vec3::new(0.0, 2.0, 0.0);
        let camera = Camera::looking_at(Vec3::new(0.5, 4.0, 6.0), base);
        let wind = Vec3::new(3.0, 0.0, 0.0);
        let head = arrow_head(base, wind);
        let (at_head, _) = to_pixel(&camera, head, size).unwrap();
        let mut grabber = Grabber::default();
        // A drag starting 40 px off the head does not hold it.
        let off = [at_head[0], at_head[1] + 40.0];
        assert_eq!(
            grabber.pointer_arrow(base, wind, None, &camera, off, size, true),
            None
        );
        grabber.pointer_arrow(base, wind, None, &camera, off, size, false);
        // On the head: held, the wind unchanged where it starts (the head's pixel).
        let start = grabber
            .pointer_arrow(base, wind, None, &camera, at_head, size, true)
            .expect("held");
        assert!(start.distance(wind) < 0.01 * wind.length(), "{start}");
        // Moved to the pixel of a point of the base's plane: the head goes there.
        let goal = base + Vec3::new(-0.6, 0.0, 1.2);
        let (pixel, _) = to_pixel(&camera, goal, size).unwrap();
        let moved = grabber
            .pointer_arrow(base, start, None, &camera, pixel, size, true)
            .expect("still held");
        let head = arrow_head(base, moved);
        assert!(head.distance(goal) < 0.01, "{head} for {goal}");
        assert!(grabber.arrow);
        // Let go: not held; the next drag elsewhere is not the arrow's.
        assert_eq!(
            grabber.pointer_arrow(base, moved, None, &camera, pixel, size, false),
            None
        );
        assert!(!grabber.arrow);
    }
}
