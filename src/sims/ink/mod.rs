//! Ink: a 2D incompressible fluid on a grid (Stam 1999, "Stable Fluids"; GPU Gems ch. 38) that
//! carries ink painted by scripted brush strokes and splats (`specs/003-ink.md`). CPU solver in
//! `cpu.rs`; the scene section in `scene.rs`; behind the [`crate::sims::Sim`] door in `sim.rs`;
//! its fields and pictures for `simulate` in `export.rs`.

mod advect;
pub mod bandwidth;
pub mod boundary;
pub mod brush;
pub mod cpu;
pub mod cuda;
mod discs;
pub mod doctor;
mod export;
pub mod fields;
mod frame;
mod multigrid;
mod panel;
pub mod params;
pub mod patch;
mod picture;
pub mod scene;
mod sim;
pub mod solver;
pub mod stamp;

pub use boundary::{Boundary, SideKind, Walls};
pub use brush::Brush;
pub use params::{Advection, InkParams, PressureSolver};
pub use sim::InkSim;
pub use stamp::BrushStamp;

/// The name of this kind in scene files (`kind = "ink"`) and in `scenes/ink/`.
pub const KIND: &str = "ink";

/// The stages of one ink step, in order; one CPU function (and one kernel) each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InkStage {
    /// Velocity and ink carried along the flow (semi-Lagrangian or MacCormack), then damping
    /// and fade.
    Advect,
    /// Brush stamps: Gaussian velocity and ink (the ink × the brush stamp's alpha); the ink's
    /// buoyancy.
    Splat,
    /// ω = ∂v/∂x − ∂u/∂y.
    Curl,
    /// Vorticity confinement.
    Vorticity,
    /// ∇·u.
    Divergence,
    /// The pressure Poisson equation (Jacobi or multigrid), warm-started.
    Pressure,
    /// u −= ∇p.
    SubtractGradient,
}

impl InkStage {
    /// Every stage in execution order.
    pub const ALL: [InkStage; 7] = [
        InkStage::Advect,
        InkStage::Splat,
        InkStage::Curl,
        InkStage::Vorticity,
        InkStage::Divergence,
        InkStage::Pressure,
        InkStage::SubtractGradient,
    ];

    /// The stages' names in code, kernels, docs, bench output and the UI, in order.
    pub const NAMES: [&'static str; 7] = [
        "advect",
        "splat",
        "curl",
        "vorticity",
        "divergence",
        "pressure",
        "subtract_gradient",
    ];

    /// The stage's name.
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// One brush stamp: a Gaussian of velocity and ink centred at `position`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    /// Centre, m.
    pub position: [f32; 2],
    /// Gaussian radius r (weight e^(−d²/r²)), m.
    pub radius: f32,
    /// Velocity added at the centre: m/s (a splat), or m/s² times dt when `per_second`.
    pub velocity: [f32; 2],
    /// Ink added at the centre per channel: an amount (a splat), or per second.
    pub ink: [f32; 3],
    /// Whether `velocity` and `ink` are rates (a stroke, applied every step for its duration).
    pub per_second: bool,
    /// A brush's stamp: the unit direction it moves in, along which the brush stamp
    /// (`stamp.rs`, [`InkParams::brush_stamp`]) is turned to modulate the ink it lays; `None`
    /// for a splat (the plain Gaussian).
    pub direction: Option<[f32; 2]>,
}

impl Stamp {
    /// The square the stamp touches, [x0, y0, x1, y1] m: three Gaussian radii around its
    /// centre, beyond which the weight is below e⁻⁹.
    pub fn region(&self) -> [f32; 4] {
        let reach = 3.0 * self.radius;
        let [x, y] = self.position;
        [x - reach, y - reach, x + reach, y + reach]
    }
}

/// The points of a `size` lattice (offset `offset` spacings, spacing `h`) inside `region`
/// ([x0, y0, x1, y1] m), as index ranges (columns, rows), each clamped to the lattice; the
/// CPU splat and the CUDA splat's launch boxes share it.
pub fn splat_box(
    region: [f32; 4],
    size: (usize, usize),
    offset: [f32; 2],
    h: f32,
) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let (nx, ny) = size;
    let index = |v: f32, o: f32, n: usize| ((v / h - o).max(0.0) as usize).min(n);
    let (i0, i1) = (
        index(region[0], offset[0], nx),
        index(region[2], offset[0], nx - 1) + 1,
    );
    let (j0, j1) = (
        index(region[1], offset[1], ny),
        index(region[3], offset[1], ny - 1) + 1,
    );
    (i0..i1.min(nx), j0..j1.min(ny))
}

/// What the last step's projection did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolveReport {
    /// Pressure iterations run.
    pub iterations: u32,
    /// RMS divergence before the projection, 1/s.
    pub divergence_before: f64,
    /// RMS divergence after it, 1/s.
    pub divergence_after: f64,
    /// RMS residual of the pressure equation after the iterations, 1/s.
    pub residual: f64,
}

#[cfg(test)]
mod ghost_tests;
#[cfg(test)]
mod moving_tests;
#[cfg(test)]
mod stage_tests;
#[cfg(test)]
mod tests;
