//! What a frame is asked to draw: the scene's values ([`DrawScene`]), the views ([`VIEWS`])
//! and the passes ([`Pass`]) a frame runs.

use crate::sims::pool::scene::LOWEST_SUN;
use glam::Vec3;

/// What the pool shows.
pub const VIEWS: [&str; 4] = ["surface", "wireframe", "nodes", "caustics"];

/// What a frame draws besides the surface texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawScene {
    /// Nodes per side.
    pub nodes: usize,
    /// The pool's side, m (it spans [0, size]² in x and z).
    pub size: f32,
    /// The water's depth, m (the floor is y = −depth).
    pub depth: f32,
    /// Towards the sun (any length).
    pub light: [f32; 3],
    /// Fine-detail normal map.
    pub detail: bool,
    /// Far pixels the mean of taps over their footprint (`[light] far_taps`).
    pub far_taps: bool,
    /// Index into [`VIEWS`].
    pub view: usize,
    /// Simulated time, s (the fine detail's ripples move with it).
    pub time: f32,
    /// Open (absorbing) edges: no walls or deck; the water goes on past the pool to the
    /// horizon, over the floor continued, fading into the water's colour.
    pub open: bool,
}

/// The walls' height above the rest level, m, of a pool of side `size`: the deck around the
/// pool lies at this height.
pub fn rim_height(size: f32) -> f32 {
    0.05 * size
}

impl DrawScene {
    /// The walls' height above the rest level, m ([`rim_height`]).
    pub fn rim_height(&self) -> f32 {
        rim_height(self.size)
    }

    /// The land's height above the rest level well inland, m.
    pub fn land_height(&self) -> f32 {
        0.04 * self.size
    }

    /// The light's direction, unit, kept at or above the lowest sun (scenes and the panel
    /// give none lower: [`LOWEST_SUN`]).
    pub fn light_direction(&self) -> Vec3 {
        let l = Vec3::from(self.light);
        let l = if l.is_finite() && l.length() > 0.0 {
            l.normalize()
        } else {
            Vec3::Y
        };
        if l.y >= LOWEST_SUN {
            return l;
        }
        let level = Vec3::new(l.x, 0.0, l.z).normalize_or(Vec3::X);
        level * (1.0 - LOWEST_SUN * LOWEST_SUN).sqrt() + Vec3::Y * LOWEST_SUN
    }
}

/// One render pass; its name is the shader's and the method's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The caustics texture.
    Caustics,
    /// The sky behind.
    Sky,
    /// Floor, walls, deck.
    Pool,
    /// Shores and islands.
    Land,
    /// The water.
    Surface,
    /// The mesh's edges.
    Wireframe,
    /// The mesh's nodes.
    Nodes,
    /// The caustics texture shown.
    CausticsView,
    /// The frame copied to the output.
    Present,
}

impl Pass {
    /// The pass's name (shader file stem, docs, timings).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Caustics => "caustics",
            Pass::Sky => "sky",
            Pass::Pool => "pool",
            Pass::Land => "land",
            Pass::Surface => "surface",
            Pass::Wireframe => "wireframe",
            Pass::Nodes => "nodes",
            Pass::CausticsView => "caustics_view",
            Pass::Present => "present",
        }
    }
}
