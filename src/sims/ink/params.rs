//! Ink's parameters: the grid, the time step, the solver's choices and the rates, all per
//! second so that behaviour does not depend on the frame rate (the original's per-frame factors
//! did, `specs/003-ink.md` ambiguity 5).

use super::boundary::Boundary;
use super::stamp::BrushStamp;
use crate::scene::Invalid;

/// How fields are carried along the flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Advection {
    /// Semi-Lagrangian: trace back, interpolate bilinearly (Stam 1999).
    SemiLagrangian,
    /// MacCormack: a forward and a backward semi-Lagrangian step correct each other's error,
    /// clamped to the values traced from (Selle et al. 2008): sharper ink.
    Maccormack,
}

impl Advection {
    /// Every scheme, in menu order.
    pub const ALL: [Advection; 2] = [Advection::SemiLagrangian, Advection::Maccormack];

    /// The scene-file and UI name.
    pub fn name(self) -> &'static str {
        match self {
            Advection::SemiLagrangian => "semi-lagrangian",
            Advection::Maccormack => "maccormack",
        }
    }
}

/// How the pressure equation is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PressureSolver {
    /// Jacobi sweeps (the original's; every cell independent, as on a GPU).
    Jacobi,
    /// Geometric multigrid V-cycles (`multigrid.rs`): `iterations` counts cycles, each about
    /// five sweeps' work, each removing most of the residual at every scale.
    Multigrid,
}

impl PressureSolver {
    /// Every solver, in menu order.
    pub const ALL: [PressureSolver; 2] = [PressureSolver::Jacobi, PressureSolver::Multigrid];

    /// The scene-file and UI name.
    pub fn name(self) -> &'static str {
        match self {
            PressureSolver::Jacobi => "jacobi",
            PressureSolver::Multigrid => "multigrid",
        }
    }
}

/// Ink's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct InkParams {
    /// Velocity (and pressure) cells across the domain's width.
    pub cells_x: usize,
    /// Velocity cells up its height.
    pub cells_y: usize,
    /// Ink cells per velocity cell along each axis (1–4): the ink can be finer than the flow.
    pub ink_scale: usize,
    /// The domain's width, m (the height follows from the cell counts: square cells).
    pub width: f32,
    /// Time per frame, s.
    pub dt: f32,
    /// Solver steps per frame.
    pub substeps: u32,
    /// Pressure iterations per step: Jacobi sweeps, or multigrid V-cycles.
    pub iterations: u32,
    /// The pressure solver.
    pub pressure_solver: PressureSolver,
    /// The fraction of the last step's pressure the next solve starts from (0–1; the
    /// original's "density damping").
    pub pressure_carry_over: f32,
    /// The advection scheme.
    pub advection: Advection,
    /// Vorticity confinement strength ε (0 switches it off; dimensionless, scaled by the cell
    /// size).
    pub vorticity: f32,
    /// Velocity damping rate, 1/s (v decays as e^(−rate·t)).
    pub velocity_damping: f32,
    /// Ink fade rate, 1/s.
    pub ink_fade: f32,
    /// Body force on the ink (buoyancy), m/s² per unit of ink along +y.
    pub buoyancy: f32,
    /// The box's sides: walls, inflow, outflow.
    pub boundary: Boundary,
    /// The stamp brush strokes lay their ink with (the scene's `brush.stamp`).
    pub brush_stamp: BrushStamp,
}

impl Default for InkParams {
    fn default() -> Self {
        InkParams {
            cells_x: 256,
            cells_y: 256,
            ink_scale: 1,
            width: 1.0,
            dt: 1.0 / 60.0,
            substeps: 1,
            iterations: 20,
            pressure_solver: PressureSolver::Jacobi,
            pressure_carry_over: 0.8,
            advection: Advection::Maccormack,
            vorticity: 0.0,
            velocity_damping: 0.0,
            ink_fade: 0.0,
            buoyancy: 0.0,
            boundary: Boundary::default(),
            brush_stamp: BrushStamp::Round,
        }
    }
}

/// Largest cell count along an axis: 4096² (the largest GPU grid) keeps the CPU
/// solver near 1.2 GiB and one CPU step within seconds.
pub const MAX_CELLS: usize = 4096;

impl InkParams {
    /// The cell size, m.
    pub fn dx(&self) -> f32 {
        self.width / self.cells_x as f32
    }

    /// The domain's height, m.
    pub fn height(&self) -> f32 {
        self.dx() * self.cells_y as f32
    }

    /// Bytes the CPU solver holds: per velocity cell the two velocities, pressure, curl,
    /// divergence, the Jacobi scratch and the advection's copies (≈ 12 floats), per ink cell
    /// three channels with MacCormack's forward values and bounds (≈ 15 floats).
    pub fn memory_bytes(&self) -> u64 {
        let cells = (self.cells_x * self.cells_y) as u64;
        let ink_cells = cells * (self.ink_scale * self.ink_scale) as u64;
        4 * (12 * cells + 15 * ink_cells)
    }

    /// Checks every range (docs/ink.md states them), naming the key as the file writes it.
    pub fn validate(&self) -> Result<(), Invalid> {
        let (x, y) = (self.cells_x, self.cells_y);
        if ![x, y].iter().all(|n| (8..=MAX_CELLS).contains(n)) {
            return Err(Invalid::new(
                "grid.cells",
                format!("must be 8 to {MAX_CELLS} cells each, got [{x}, {y}]"),
            ));
        }
        if !(1..=4).contains(&self.ink_scale) {
            return Err(Invalid::new(
                "grid.ink_scale",
                format!("must be 1 to 4, got {}", self.ink_scale),
            ));
        }
        if x.max(y) * self.ink_scale > MAX_CELLS {
            return Err(Invalid::new(
                "grid.ink_scale",
                format!(
                    "the ink grid, grid.cells [{x}, {y}] × {}, would exceed {MAX_CELLS} cells \
                     along an axis",
                    self.ink_scale
                ),
            ));
        }
        positive("grid.width", self.width, 1e4, "m")?;
        positive("params.dt", self.dt, 1.0, "s")?;
        let params = |key: &str, value: f32, least: f32, most: f32| {
            in_range(&format!("params.{key}"), value, least, most, "")
        };
        params("pressure_carry_over", self.pressure_carry_over, 0.0, 1.0)?;
        params("vorticity", self.vorticity, 0.0, 100.0)?;
        params("velocity_damping", self.velocity_damping, 0.0, 1000.0)?;
        params("ink_fade", self.ink_fade, 0.0, 1000.0)?;
        params("buoyancy", self.buoyancy, -1000.0, 1000.0)?;
        self.boundary.validate()?;
        if !(1..=64).contains(&self.substeps) {
            return Err(Invalid::new(
                "params.substeps",
                format!("must be 1 to 64, got {}", self.substeps),
            ));
        }
        if !(1..=1000).contains(&self.iterations) {
            return Err(Invalid::new(
                "params.iterations",
                format!("must be 1 to 1000, got {}", self.iterations),
            ));
        }
        Ok(())
    }
}

/// `value` in (0, `most`], finite; else an error naming `key` and the range in `unit`.
pub(super) fn positive(key: &str, value: f32, most: f32, unit: &str) -> Result<(), Invalid> {
    if value.is_finite() && value > 0.0 && value <= most {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            format!("must be in (0, {most}] {unit}, got {value}"),
        ))
    }
}

/// `value` in [`least`, `most`], finite; else an error naming `key` and the range (in `unit`,
/// when there is one).
pub(super) fn in_range(
    key: &str,
    value: f32,
    least: f32,
    most: f32,
    unit: &str,
) -> Result<(), Invalid> {
    if value.is_finite() && (least..=most).contains(&value) {
        Ok(())
    } else {
        let unit = if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        };
        Err(Invalid::new(
            key,
            format!("must be in [{least}, {most}]{unit}, got {value}"),
        ))
    }
}
