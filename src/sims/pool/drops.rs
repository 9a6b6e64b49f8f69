//! `disturb`: drops. A drop adds a Gaussian a·e^(−d²/r²) to the heights or to the vertical
//! velocities around a node; the Gaussian is computed once per radius into a stencil (the
//! original's precomputed kernel) and added at run time.

use super::surface::{Surface, FIXED};
use serde::Deserialize;

/// What a drop changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// Heights, m: the surface starts displaced.
    Height,
    /// Vertical velocities, m/s: the surface is struck.
    Velocity,
}

impl Target {
    /// Both targets, in the panel's order.
    pub const ALL: [Target; 2] = [Target::Height, Target::Velocity];

    /// The name in scene files and the panel.
    pub fn name(self) -> &'static str {
        match self {
            Target::Height => "height",
            Target::Velocity => "velocity",
        }
    }
}

/// One drop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drop {
    /// Centre (x, z), m.
    pub position: [f32; 2],
    /// Gaussian radius r, m.
    pub radius: f32,
    /// Amplitude at the centre: m (height) or m/s (velocity); negative pushes down.
    pub amplitude: f32,
    /// What it changes.
    pub target: Target,
}

/// A Gaussian precomputed on the node lattice: weights over a square of 2·reach + 1 nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    /// Radius in nodes it was computed for (bits, so a change is seen exactly).
    radius_nodes: f32,
    /// Half-width in nodes.
    pub reach: usize,
    /// Row-major weights, (2·reach + 1)².
    pub weights: Vec<f32>,
}

impl Stencil {
    /// The Gaussian e^(−d²/r²) for r = `radius_nodes` spacings, out to 3r (below e⁻⁹).
    pub fn new(radius_nodes: f32) -> Stencil {
        let reach = (3.0 * radius_nodes).ceil().max(1.0) as usize;
        let side = 2 * reach + 1;
        let mut weights = Vec::with_capacity(side * side);
        for b in 0..side {
            for a in 0..side {
                let (x, y) = (a as f32 - reach as f32, b as f32 - reach as f32);
                weights.push((-(x * x + y * y) / (radius_nodes * radius_nodes)).exp());
            }
        }
        Stencil {
            radius_nodes,
            reach,
            weights,
        }
    }
}

/// The stencils in use, one per radius seen (drops of a scene share a few radii).
#[derive(Clone, Debug, Default)]
pub struct Stencils(Vec<Stencil>);

impl Stencils {
    /// The stencil for `radius_nodes`, computed the first time.
    pub fn get(&mut self, radius_nodes: f32) -> &Stencil {
        let found = self
            .0
            .iter()
            .position(|s| s.radius_nodes.to_bits() == radius_nodes.to_bits());
        let index = found.unwrap_or_else(|| {
            if self.0.len() >= 16 {
                self.0.remove(0);
            }
            self.0.push(Stencil::new(radius_nodes));
            self.0.len() - 1
        });
        &self.0[index]
    }
}

/// The node nearest `position` and the stencil's clipped index ranges (columns, rows) there.
pub fn footprint(
    position: [f32; 2],
    h: f32,
    n: usize,
    reach: usize,
) -> (usize, usize, std::ops::Range<usize>, std::ops::Range<usize>) {
    let node = |v: f32| ((v / h).round().max(0.0) as usize).min(n - 1);
    let (ci, cj) = (node(position[0]), node(position[1]));
    let range = |c: usize| c.saturating_sub(reach)..(c + reach + 1).min(n);
    (ci, cj, range(ci), range(cj))
}

/// `disturb`: adds `drop` to the surface through its stencil, skipping fixed nodes.
pub fn disturb(s: &mut Surface, drop: &Drop, stencils: &mut Stencils) {
    let n = s.n;
    let stencil = stencils.get(drop.radius / s.h);
    let (ci, cj, columns, rows) = footprint(drop.position, s.h, n, stencil.reach);
    let side = 2 * stencil.reach + 1;
    let field = match drop.target {
        Target::Height => &mut s.height,
        Target::Velocity => &mut s.velocity,
    };
    for j in rows {
        let b = j + stencil.reach - cj;
        for i in columns.clone() {
            let m = j * n + i;
            if s.flags[m] & FIXED == 0 {
                let a = i + stencil.reach - ci;
                field[m] += drop.amplitude * stencil.weights[b * side + a];
            }
        }
    }
}

/// A small deterministic generator (xorshift64*) for rain and random start drops, so a run
/// is reproducible from its seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A uniform number in [0, 1).
    pub fn unit(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 24) as f32
    }

    /// A Poisson-distributed count with mean `mean` (Knuth's method; a normal approximation
    /// above 30).
    pub fn poisson(&mut self, mean: f32) -> u32 {
        if mean <= 0.0 {
            return 0;
        }
        if mean > 30.0 {
            let (a, b) = (self.unit().max(1e-7), self.unit());
            let normal = (-2.0 * a.ln()).sqrt() * (std::f32::consts::TAU * b).cos();
            return (mean + mean.sqrt() * normal).round().max(0.0) as u32;
        }
        let limit = (-mean).exp();
        let mut product = self.unit();
        let mut count = 0;
        while product > limit {
            product *= self.unit();
            count += 1;
        }
        count
    }
}
