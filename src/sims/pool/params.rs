//! Pool's parameters: the grid, the surface model and its edges, the wave speed and damping,
//! and the time step split into stable substeps.

use crate::scene::Invalid;
use serde::Deserialize;

/// Fewest nodes per side.
pub const MIN_NODES: usize = 8;
/// Most nodes per side: 8192² nodes hold ~1.9 GiB of state on the springs model.
pub const MAX_NODES: usize = 8192;
/// The height field's Courant number c·dt/h per substep (the symplectic scheme is stable up to
/// 1/√2; the spec's `c ≤ 0.5·h/dt`).
pub const WAVE_COURANT: f32 = 0.5;
/// The springs' substep as a fraction of the stability limit 2/ω_max (ω_max bounded by
/// Gershgorin's theorem from the springs at a node).
pub const SPRING_SAFETY: f32 = 0.7;
/// Most substeps a frame may take; a scene needing more is refused (slow it down or coarsen it).
pub const MAX_SUBSTEPS: u32 = 4096;

/// The open edges' horizontal sponge: σ_max = SPONGE·c_L/W (`PoolParams::sponge_strength`), so
/// a horizontal wave crossing the layer and back keeps e^(−8) of its energy.
pub const SPONGE: f32 = 12.0;

/// The surface model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// The linear wave equation on a height field (Müller 2008): f = c²(Σ₄u − 4u)/h².
    Wave,
    /// The original's lattice of nodes joined by pre-tensioned Hookean springs, free to move in
    /// three dimensions.
    Springs,
}

/// What the pool's edge nodes do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Edges {
    /// Walls: edge nodes move only vertically; waves reflect.
    Pool,
    /// A fixed shoreline: edge nodes never move; waves reflect inverted.
    Shore,
    /// Open sea: waves leave through the edges (Mur's absorbing condition).
    Open,
}

impl Model {
    /// Both models, in the panel's order.
    pub const ALL: [Model; 2] = [Model::Wave, Model::Springs];

    /// The name in scene files and the panel.
    pub fn name(self) -> &'static str {
        match self {
            Model::Wave => "wave",
            Model::Springs => "springs",
        }
    }
}

impl Edges {
    /// Every kind of edge, in the panel's order.
    pub const ALL: [Edges; 3] = [Edges::Pool, Edges::Shore, Edges::Open];

    /// The name in scene files and the panel.
    pub fn name(self) -> &'static str {
        match self {
            Edges::Pool => "pool",
            Edges::Shore => "shore",
            Edges::Open => "open",
        }
    }
}

/// The simulation's parameters (SI units; the pool spans [0, size]² in x and z, the rest
/// surface is y = 0, y up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolParams {
    /// Nodes per side (N); the grid is N × N.
    pub nodes: usize,
    /// The pool's side, m.
    pub size: f32,
    /// The water's depth, m (the floor the renderer draws and caustics land on).
    pub depth: f32,
    /// Simulated seconds per frame.
    pub dt: f32,
    /// The surface model.
    pub model: Model,
    /// The edge condition.
    pub edges: Edges,
    /// Wave speed c, m/s: the height field's, and the spring lattice's transverse speed (its
    /// stiffness is derived from it, [`PoolParams::stiffness`]).
    pub wave_speed: f32,
    /// Velocity damping, 1/s: velocities fall by e^(−damping·t).
    pub damping: f32,
    /// Springs: pre-tension τ = spacing / rest length (> 1: the lattice carries waves).
    pub tension: f32,
    /// Springs: whether interior nodes move horizontally (false: a pure, nonlinear height
    /// field; edge nodes never move horizontally).
    pub horizontal: bool,
    /// Springs: diagonal (shear) springs at their natural length, which keep the lattice's
    /// cells from shearing.
    pub shear: bool,
}

impl Default for PoolParams {
    /// evanw/webgl-water's pool: 256² nodes over 2 m, c = 0.7 m/s, 60 frames per second.
    fn default() -> Self {
        PoolParams {
            nodes: 256,
            size: 2.0,
            depth: 1.0,
            dt: 1.0 / 60.0,
            model: Model::Wave,
            edges: Edges::Pool,
            wave_speed: 0.7,
            damping: 0.3,
            tension: 1.5,
            horizontal: true,
            shear: true,
        }
    }
}

impl PoolParams {
    /// Node spacing h, m.
    pub fn spacing(&self) -> f32 {
        self.size / (self.nodes - 1) as f32
    }

    /// Nodes in the grid.
    pub fn node_count(&self) -> usize {
        self.nodes * self.nodes
    }

    /// The structural springs' stiffness per unit node mass k/m, 1/s², chosen so small
    /// vertical waves travel at `wave_speed`: a spring of rest length h/τ stretched to h pulls
    /// with tension T = k·h(1 − 1/τ), and the lattice's transverse wave speed is c² = T·h/m.
    pub fn stiffness(&self) -> f32 {
        let h = self.spacing();
        self.wave_speed * self.wave_speed / (h * h * (1.0 - 1.0 / self.tension))
    }

    /// The wave speed a stiffness per unit mass gives (the inverse of [`PoolParams::stiffness`]).
    pub fn wave_speed_of(&self, stiffness: f32) -> f32 {
        let h = self.spacing();
        (stiffness * h * h * (1.0 - 1.0 / self.tension)).sqrt()
    }

    /// The largest stiffness per unit node mass (1/s²) this lattice, edge and frame time take
    /// through `springs.stiffness`: the one whose derived wave speed ([`PoolParams::wave_speed_of`])
    /// is 1000 m/s or, when less, the one that needs [`MAX_SUBSTEPS`] substeps per frame.
    pub fn most_stiffness(&self) -> f32 {
        let h = self.spacing();
        let per_speed = 1.0 / (h * h * (1.0 - 1.0 / self.tension));
        let by_speed = 1e6 * per_speed;
        let by_substeps = match self.model {
            Model::Wave => (MAX_SUBSTEPS as f32 * WAVE_COURANT * h / self.dt).powi(2) * per_speed,
            Model::Springs => {
                let springs = if self.shear { 8.0 } else { 4.0 };
                (MAX_SUBSTEPS as f32 * SPRING_SAFETY * 2.0 / self.dt).powi(2) / (2.0 * springs)
            }
        };
        by_speed.min(by_substeps)
    }

    /// The spring lattice's in-plane wave speeds [longitudinal, shear], m/s, for long waves
    /// along a row: with c the vertical (transverse) speed, c_L² = c²·(1 + s)/(1 − 1/τ) and
    /// c_S² = c²·(1 − 1/τ + s)/(1 − 1/τ), s = 1 with shear springs, else 0 (docs/pool.md,
    /// "Open edges on the free spring lattice": k/m·h² times the row springs' axial stiffness
    /// 1, their pre-tension's 1 − 1/τ across, and the diagonals' 1 both ways).
    pub fn horizontal_speeds(&self) -> [f32; 2] {
        let h = self.spacing();
        let k = self.stiffness() * h * h;
        let s = if self.shear { 1.0 } else { 0.0 };
        [
            (k * (1.0 + s)).sqrt(),
            (k * (1.0 - 1.0 / self.tension + s)).sqrt(),
        ]
    }

    /// The width in nodes of the sponge that takes the spring lattice's horizontal waves
    /// away at open edges: an eighth of the side, at least one node.
    pub fn sponge_nodes(&self) -> usize {
        ((self.nodes - 1) / 8).max(1)
    }

    /// The sponge's damping per substep on the edge, σ_max·dt, with σ_max = SPONGE·c_L/W (W
    /// the width in m, c_L the longitudinal speed): a horizontal wave crossing the layer and
    /// back keeps e^(−2·SPONGE/3) of its energy (σ·r² averages σ_max/3 over the layer); at most
    /// 0.5 a substep, a clamp that weakens the layer below about 97 nodes a side. 0 unless the edges are open on the spring lattice free to move in 3D.
    pub fn sponge_strength(&self) -> f32 {
        if self.edges != Edges::Open || self.model != Model::Springs || !self.horizontal {
            return 0.0;
        }
        let width = self.sponge_nodes() as f32 * self.spacing();
        (SPONGE * self.horizontal_speeds()[0] / width * self.substep_dt()).min(0.5)
    }

    /// The structural springs' rest length, m.
    pub fn rest_length(&self) -> f32 {
        self.spacing() / self.tension
    }

    /// Substeps per frame: the height field keeps c·dt ≤ 0.5·h; the springs keep dt·ω_max ≤
    /// 1.4 with ω_max² ≤ 2·Σ k/m over a node's springs (Gershgorin), each spring's linear
    /// stiffness bounded by its axial k.
    pub fn substeps(&self) -> u32 {
        let limit = match self.model {
            Model::Wave => WAVE_COURANT * self.spacing() / self.wave_speed,
            Model::Springs => {
                let springs = if self.shear { 8.0 } else { 4.0 };
                let omega = (2.0 * springs * self.stiffness()).sqrt();
                SPRING_SAFETY * 2.0 / omega
            }
        };
        let n = (self.dt / limit).ceil();
        if n.is_finite() {
            (n as u32).max(1)
        } else {
            u32::MAX
        }
    }

    /// Seconds per substep.
    pub fn substep_dt(&self) -> f32 {
        self.dt / self.substeps() as f32
    }

    /// Checks every value's range, naming the scene key.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !(MIN_NODES..=MAX_NODES).contains(&self.nodes) {
            return Err(Invalid::new(
                "pool.nodes",
                format!(
                    "must be {MIN_NODES} to {MAX_NODES} nodes per side, got {}",
                    self.nodes
                ),
            ));
        }
        let ranged = |key: &str, value: f32, low: f32, high: f32, unit: &str| {
            if value.is_finite() && value > low && value <= high {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!("must be in ({low}, {high}] {unit}, got {value}"),
                ))
            }
        };
        ranged("pool.size", self.size, 0.0, 1e4, "m")?;
        ranged("pool.depth", self.depth, 0.0, 1e4, "m")?;
        ranged("surface.dt", self.dt, 0.0, 1.0, "s")?;
        ranged("surface.wave_speed", self.wave_speed, 0.0, 1e3, "m/s")?;
        if !(self.damping.is_finite() && (0.0..=1e3).contains(&self.damping)) {
            return Err(Invalid::new(
                "surface.damping",
                format!("must be in [0, 1000] 1/s, got {}", self.damping),
            ));
        }
        if !(self.tension.is_finite() && self.tension > 1.0 && self.tension <= 100.0) {
            return Err(Invalid::new(
                "springs.tension",
                format!(
                    "must be in (1, 100] (spacing / rest length; at 1 the lattice is slack and \
                     carries no waves), got {}",
                    self.tension
                ),
            ));
        }
        let substeps = self.substeps();
        if substeps > MAX_SUBSTEPS {
            return Err(Invalid::new(
                "surface.wave_speed",
                format!(
                    "{} m/s over a {} m spacing needs {substeps} substeps per frame of {} s \
                     (at most {MAX_SUBSTEPS}); lower the wave speed, the frame time or the \
                     node count",
                    self.wave_speed,
                    self.spacing(),
                    self.dt
                ),
            ));
        }
        Ok(())
    }
}
