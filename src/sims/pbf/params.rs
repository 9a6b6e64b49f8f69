//! Solver parameters and the quantities derived from them.

use super::kernel::SphKernel;
use std::ops::RangeInclusive;

/// Every number the PBF step uses. Built from a scene's `[params]` table; the viewer edits the
/// live ones (see [`Params::check_live_edit`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Initial particle spacing, metres. Fixed once particles are seeded.
    pub spacing: f32,
    /// Kernel radius h, metres (default 2 × spacing); also the grid cell size.
    pub kernel_radius: f32,
    /// Rest density ρ₀, kg/m³.
    pub rest_density: f32,
    /// Particle mass m, kg: calibrated so a seeded lattice sits exactly at ρ₀.
    pub particle_mass: f32,
    /// Constraint iterations per step (when `max_density_error` is 0: a fixed count).
    pub iterations: u32,
    /// The stopping rule: iterate until the mean compression (mean of max(ρ/ρ₀ − 1, 0) over
    /// all particles) is at most this, between `min_iterations` and `max_iterations`; 0 runs
    /// exactly `iterations` (the fastest path).
    pub max_density_error: f32,
    /// Fewest constraint iterations per step under the density-error rule.
    pub min_iterations: u32,
    /// Most constraint iterations per step under the density-error rule.
    pub max_iterations: u32,
    /// Solve the density constraint's long wavelengths on the neighbour grid once per step
    /// (`coarse_correction`, see docs/solver.md): what keeps deep fluid incompressible and calm
    /// at a few iterations. Off gives the paper's plain Jacobi PBF.
    pub coarse_correction: bool,
    /// Solver steps per frame (at least; see `cfl`).
    pub substeps: u32,
    /// Courant number: a frame takes more than `substeps` steps when the fastest particle
    /// would otherwise move more than `cfl × spacing` in one step (0 disables).
    pub cfl: f32,
    /// Frame time step, seconds (each substep takes dt / substeps).
    pub dt: f32,
    /// Body acceleration, m/s² (any direction).
    pub gravity: [f32; 3],
    /// Constraint force mixing ε in λ = −C / (Σ|∇C|² + ε·Σ|∇C|²₀), as a fraction of the
    /// rest-state stiffness Σ|∇C|²₀ (dimensionless; see docs/scenes.md).
    pub relaxation: f32,
    /// Artificial pressure strength k (dimensionless, a fraction of the rest stiffness).
    pub scorr_k: f32,
    /// Artificial pressure exponent n.
    pub scorr_n: i32,
    /// Artificial pressure reference distance Δq as a fraction of h.
    pub scorr_dq: f32,
    /// XSPH viscosity blend c (0 = none, 1 = full neighbourhood average).
    pub xsph_c: f32,
    /// Vorticity confinement strength ε_vort, m/s.
    pub vorticity: f32,
}

impl Params {
    /// Spacing of a scene whose `[params]` gives none, metres.
    pub const DEFAULT_SPACING: f32 = 0.02;

    /// The issue's / paper's defaults for a given spacing, with the mass calibrated.
    pub fn with_spacing(spacing: f32) -> Self {
        let mut params = Params {
            spacing,
            kernel_radius: 2.0 * spacing,
            rest_density: 1000.0,
            particle_mass: 0.0,
            iterations: 4,
            max_density_error: 0.0,
            min_iterations: 1,
            max_iterations: 100,
            coarse_correction: true,
            substeps: 2,
            cfl: 1.0,
            dt: 1.0 / 60.0,
            gravity: [0.0, -9.81, 0.0],
            relaxation: 1e-6,
            scorr_k: 0.0,
            scorr_n: 4,
            scorr_dq: 0.2,
            xsph_c: 0.01,
            vorticity: 0.01,
        };
        params.calibrate_mass();
        params
    }

    /// Sets the particle mass so an interior particle of a lattice at `spacing` has density ρ₀:
    /// m = ρ₀ / Σⱼ W(xⱼ) (a mass that disagrees with the lattice makes the fluid shrink or jump
    /// on its first frames).
    ///
    /// With inputs outside their ranges ([`Params::validate_inputs`]) the mass is NaN, which
    /// [`Params::validate`] refuses by the input's name: the lattice sum over a kernel radius of
    /// 10⁹ spacings would not finish.
    pub fn calibrate_mass(&mut self) {
        if self.validate_inputs().is_err() {
            self.particle_mass = f32::NAN;
            return;
        }
        let kernel = SphKernel::new(self.kernel_radius);
        self.particle_mass = self.rest_density / kernel.lattice_density_sum(self.spacing);
    }

    /// The SPH kernels for this kernel radius.
    pub fn kernel(&self) -> SphKernel {
        SphKernel::new(self.kernel_radius)
    }

    /// Most solver steps the CFL condition may ask for in one frame.
    pub const MAX_SUBSTEPS: u32 = 64;

    /// Solver steps for a frame whose fastest particle moves at `max_speed` (m/s): `substeps`,
    /// or more so that (max_speed + |g|·dt)·dt/steps ≤ cfl·spacing, at most
    /// [`Params::MAX_SUBSTEPS`]. Large steps let particles overrun each other within one step;
    /// the corrections that undo it turn into spray (docs/solver.md).
    pub fn substeps_for(&self, max_speed: f32) -> u32 {
        if self.cfl <= 0.0 || !max_speed.is_finite() {
            return self.substeps;
        }
        let gravity =
            (self.gravity[0].powi(2) + self.gravity[1].powi(2) + self.gravity[2].powi(2)).sqrt();
        let travel = (max_speed + gravity * self.dt) * self.dt;
        let needed = (travel / (self.cfl * self.spacing)).ceil();
        (needed.min(Self::MAX_SUBSTEPS as f32) as u32).max(self.substeps)
    }

    /// Particle volume V = m / ρ₀, m³. With it C = Σ V W − 1 and ∇C = V Σ ∇W.
    pub fn particle_volume(&self) -> f32 {
        self.particle_mass / self.rest_density
    }

    /// Radius of the sphere a particle stands for: half the spacing. Walls and obstacles keep
    /// particle centres this far away.
    pub fn particle_radius(&self) -> f32 {
        0.5 * self.spacing
    }

    /// The factor λ is scaled by in every constraint iteration: 4 / (3 μ_max), at most 1, where
    /// μ_max is the Jacobi iteration's peak response on the seeding lattice
    /// ([`SphKernel::lattice_jacobi_peak`], 2.6 at h = 2 spacings, so 0.51). Every density wave
    /// then shrinks each iteration (|1 − ωμ| < 1), and none flips sign by more than a third,
    /// which keeps a wave stable for any iteration count when velocities carry it into the next
    /// step (docs/solver.md). Plain Jacobi (ω = 1) let the overshooting waves keep a pool at
    /// rest jittering at 1.6 cm/s; relaxed Jacobi is IISPH's choice too (ω = 0.5).
    pub fn jacobi_relaxation(&self) -> f32 {
        let peak = self.kernel().lattice_jacobi_peak(self.spacing);
        if peak > 0.0 {
            (4.0 / (3.0 * peak)).min(1.0)
        } else {
            1.0
        }
    }

    /// Σ|∇C|² of an interior particle of the seeded lattice (m⁻²). s_corr is divided by it so
    /// `scorr_k` reads as a constraint value (a fraction of ρ₀), independent of h and ρ₀.
    pub fn rest_stiffness(&self) -> f32 {
        let volume = self.particle_volume();
        volume * volume * self.kernel().lattice_gradient_square_sum(self.spacing)
    }

    /// The constraint iterations of one step: `(fewest, most, tolerance)`. With a tolerance the
    /// solver stops after the fewest iterations at which the mean compression is at most it;
    /// without, it runs exactly `iterations`.
    pub fn iteration_rule(&self) -> (u32, u32, Option<f32>) {
        if self.max_density_error > 0.0 {
            (
                self.min_iterations,
                self.max_iterations,
                Some(self.max_density_error),
            )
        } else {
            (self.iterations, self.iterations, None)
        }
    }

    /// Replaces `self` with `new` when [`Params::check_live_edit`] allows it (what every
    /// solver's `set_params` does); else leaves `self` as it is.
    pub fn apply_live_edit(&mut self, new: &Params) -> Result<(), super::SolverError> {
        self.check_live_edit(new)
            .map_err(super::SolverError::Params)?;
        *self = new.clone();
        Ok(())
    }

    /// Checks that only parameters that may change while particles exist differ from `self`:
    /// rest density, XSPH, vorticity, s_corr, relaxation, the iteration rule, the coarse
    /// correction, substeps, cfl, dt and gravity.
    pub fn check_live_edit(&self, new: &Params) -> Result<(), String> {
        let fixed = [
            ("spacing", self.spacing, new.spacing),
            ("kernel_radius", self.kernel_radius, new.kernel_radius),
            ("particle_mass", self.particle_mass, new.particle_mass),
        ];
        for (name, old, value) in fixed {
            if old != value {
                return Err(format!(
                    "`{name}` cannot change while the simulation runs ({old} → {value}); restart the scene"
                ));
            }
        }
        new.validate().map_err(|e| e.to_string())
    }

    /// Initial particle spacing, metres. Below 0.1 mm the kernel's f32 constants lose their
    /// range (|∇W|² grows as h⁻⁸ and overflows near h = 10⁻⁵ m); above 1 m a "particle" is a
    /// cubic metre of liquid, no longer a fluid a lab simulates.
    pub const SPACING: RangeInclusive<f32> = 1e-4..=1.0;

    /// Kernel radius as a multiple of the spacing. At h = spacing the seeding lattice's nearest
    /// neighbours sit on the kernel's edge, where W and ∇W vanish: the rest stiffness is 0 and
    /// every λ explodes; below 1.5 spacings only the 6 nearest neighbours count (the next 12 lie
    /// at 1.41) and the stiffness falls fast (57 % of its value at 2 at h = 1.4 spacings; at
    /// 1.5, 90 %; docs/scenes.md has the table). Above 4
    /// spacings every particle has over 250 neighbours (memory and time grow as the cube of the
    /// ratio) and the Jacobi relaxation ω falls below 0.1, so each iteration corrects a tenth.
    pub const KERNEL_RATIO: RangeInclusive<f32> = 1.5..=4.0;

    /// Rest density, kg/m³: every liquid lies within 400–23 000. The constraint is ρ/ρ₀ − 1,
    /// so ρ₀ only scales the mass; the range keeps it well inside f32 at every spacing.
    pub const REST_DENSITY: RangeInclusive<f32> = 1.0..=1e5;

    /// Constraint iterations (fixed, fewest and most), substeps per frame.
    pub const COUNT: RangeInclusive<u32> = 1..=1000;

    /// Frame time step, seconds: from 10 kHz to 10 Hz. Below, a substep's motion nears f32's
    /// resolution of a position (1.2·10⁻⁷ m at 1 m); above, even the CFL rule's 64 substeps
    /// leave steps too long for a stable projection.
    pub const DT: RangeInclusive<f32> = 1e-4..=0.1;

    /// Largest |gravity|, m/s² (about 100 g). Beyond, one frame's fall from rest outruns
    /// the CFL rule's 64 substeps, and 10³⁰ overflows f32 in g·dt².
    pub const MAX_GRAVITY: f32 = 1000.0;

    /// Courant numbers allowed besides 0 (off). Below 0.1 every frame takes the 64-substep
    /// cap; above 10 a particle may cross ten spacings in one step, past any stable step.
    pub const CFL: RangeInclusive<f32> = 0.1..=10.0;

    /// `relaxation`, `scorr_k`, `xsph_c` (fractions) and `vorticity` (m/s): 1 is already the
    /// strongest meaningful value (a constraint softened by half; the push of a 100 %
    /// over-density; the full neighbourhood average; the viewer slider's top).
    pub const FRACTION: RangeInclusive<f32> = 0.0..=1.0;

    /// Artificial pressure exponent n (the paper uses 4).
    pub const SCORR_N: RangeInclusive<i32> = 0..=16;

    /// Checks every parameter a scene sets against its range, in the order of the `[params]`
    /// table (docs/scenes.md), then the particle mass derived from them. The error names the
    /// offending key as spelled in a scene's `[params]` table, and never the derived mass when
    /// an input is at fault.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_inputs()?;
        if !(self.particle_mass.is_finite() && self.particle_mass > 0.0) {
            return Err(ParamError::new(
                "particle_mass",
                format!(
                    "must be a positive number, got {:?} (Params::calibrate_mass sets it)",
                    self.particle_mass
                ),
            ));
        }
        Ok(())
    }

    /// [`Params::validate`] without the derived particle mass: what must hold before the mass
    /// can be calibrated (the calibration's lattice sum spans (2h/spacing + 1)³ points).
    pub fn validate_inputs(&self) -> Result<(), ParamError> {
        within("spacing", self.spacing, Self::SPACING, " m")?;
        let (low, high) = (
            Self::KERNEL_RATIO.start() * self.spacing,
            Self::KERNEL_RATIO.end() * self.spacing,
        );
        if !(low..=high).contains(&self.kernel_radius) {
            return Err(ParamError::new(
                "kernel_radius",
                format!(
                    "must be between {} and {} × spacing ({low} to {high} m at spacing {}), got {:?}; \
                     below, the nearest neighbours sit at the kernel's edge and the fluid has no \
                     stiffness, above, every particle has hundreds of neighbours (docs/scenes.md)",
                    Self::KERNEL_RATIO.start(),
                    Self::KERNEL_RATIO.end(),
                    self.spacing,
                    self.kernel_radius
                ),
            ));
        }
        within(
            "rest_density",
            self.rest_density,
            Self::REST_DENSITY,
            " kg/m³",
        )?;
        for (name, value) in [
            ("iterations", self.iterations),
            ("min_iterations", self.min_iterations),
            ("max_iterations", self.max_iterations),
        ] {
            within_count(name, value)?;
        }
        if !(0.0..1.0).contains(&self.max_density_error) {
            return Err(ParamError::new(
                "max_density_error",
                format!(
                    "is a fraction of the rest density (0.001 is 0.1 %) and must be at least 0 and \
                     below 1, got {:?}",
                    self.max_density_error
                ),
            ));
        }
        if self.min_iterations > self.max_iterations {
            return Err(ParamError::new(
                "min_iterations",
                format!(
                    "must not exceed max_iterations ({}), got {}",
                    self.max_iterations, self.min_iterations
                ),
            ));
        }
        within_count("substeps", self.substeps)?;
        if self.cfl != 0.0 && !Self::CFL.contains(&self.cfl) {
            return Err(ParamError::new(
                "cfl",
                format!(
                    "must be 0 (off) or between {} and {}, got {:?}",
                    Self::CFL.start(),
                    Self::CFL.end(),
                    self.cfl
                ),
            ));
        }
        within("dt", self.dt, Self::DT, " s")?;
        let gravity = glam::Vec3A::from(self.gravity).length();
        if !(0.0..=Self::MAX_GRAVITY).contains(&gravity) {
            return Err(ParamError::new(
                "gravity",
                format!(
                    "must be finite with a magnitude of at most {} m/s² (about 100 g), got {:?}",
                    Self::MAX_GRAVITY,
                    self.gravity
                ),
            ));
        }
        within("relaxation", self.relaxation, Self::FRACTION, "")?;
        within("scorr_k", self.scorr_k, Self::FRACTION, "")?;
        if !Self::SCORR_N.contains(&self.scorr_n) {
            return Err(ParamError::new(
                "scorr_n",
                format!(
                    "must be between {} and {}, got {}",
                    Self::SCORR_N.start(),
                    Self::SCORR_N.end(),
                    self.scorr_n
                ),
            ));
        }
        if !(0.0..1.0).contains(&self.scorr_dq) {
            return Err(ParamError::new(
                "scorr_dq",
                format!(
                    "is a fraction of h and must be at least 0 and below 1, got {:?}",
                    self.scorr_dq
                ),
            ));
        }
        within("xsph_c", self.xsph_c, Self::FRACTION, "")?;
        within("vorticity", self.vorticity, Self::FRACTION, " m/s")?;
        Ok(())
    }
}

/// `value` within `range` (NaN never is), else an error naming `key`, the range and the value.
fn within(
    key: &'static str,
    value: f32,
    range: RangeInclusive<f32>,
    unit: &str,
) -> Result<(), ParamError> {
    if range.contains(&value) {
        return Ok(());
    }
    Err(ParamError::new(
        key,
        format!(
            "must be between {} and {}{unit}, got {value:?}",
            range.start(),
            range.end()
        ),
    ))
}

/// A count within [`Params::COUNT`].
fn within_count(key: &'static str, value: u32) -> Result<(), ParamError> {
    if Params::COUNT.contains(&value) {
        return Ok(());
    }
    Err(ParamError::new(
        key,
        format!(
            "must be between {} and {}, got {value}",
            Params::COUNT.start(),
            Params::COUNT.end()
        ),
    ))
}

/// A parameter outside its range: the key (as in a scene's `[params]`) and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("`{key}` {message}")]
pub struct ParamError {
    /// The parameter's key.
    pub key: &'static str,
    /// What is wrong with its value.
    pub message: String,
}

impl ParamError {
    fn new(key: &'static str, message: String) -> Self {
        Self { key, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sims::pbf::constants::StepConstants;

    #[test]
    fn calibrated_mass_gives_rest_density_on_the_lattice() {
        let params = Params::with_spacing(0.02);
        let kernel = params.kernel();
        let density = params.particle_mass * kernel.lattice_density_sum(params.spacing);
        assert!((density / params.rest_density - 1.0).abs() < 1e-5);
        // The calibrated volume is close to spacing³ (within the kernel's discretisation error).
        let ratio = params.particle_volume() / params.spacing.powi(3);
        assert!((0.8..1.2).contains(&ratio), "V / s³ = {ratio}");
    }

    #[test]
    fn fast_particles_get_more_substeps() {
        let mut params = Params::with_spacing(0.02);
        params.gravity = [0.0, 0.0, 0.0];
        assert_eq!(params.substeps_for(0.0), 2);
        // 4 m/s for 1/60 s is 0.067 m: 1.0 × 0.02 m per step needs 4 steps.
        assert_eq!(params.substeps_for(4.0), 4);
        params.cfl = 0.4;
        assert_eq!(params.substeps_for(4.0), 9);
        assert_eq!(params.substeps_for(1e6), Params::MAX_SUBSTEPS);
        params.cfl = 0.0;
        assert_eq!(params.substeps_for(4.0), 2);
    }

    #[test]
    fn every_corner_of_the_ranges_gives_finite_step_constants() {
        let corners = |range: &RangeInclusive<f32>| [*range.start(), *range.end()];
        for spacing in corners(&Params::SPACING) {
            for ratio in corners(&Params::KERNEL_RATIO) {
                for rest_density in corners(&Params::REST_DENSITY) {
                    for dt in corners(&Params::DT) {
                        let mut params = Params::with_spacing(spacing);
                        params.kernel_radius = ratio * spacing;
                        params.rest_density = rest_density;
                        params.dt = dt;
                        params.scorr_k = 1.0;
                        params.calibrate_mass();
                        params.validate().unwrap();
                        let c = StepConstants::new(&params, dt);
                        let values = [
                            c.mass,
                            c.volume,
                            c.self_density,
                            c.relaxation,
                            c.scorr_scale,
                            c.inverse_scorr_reference,
                            c.jacobi_relaxation,
                            c.xsph_scale,
                        ];
                        assert!(
                            values.iter().all(|v| v.is_finite() && *v > 0.0),
                            "spacing {spacing}, h/s {ratio}, ρ₀ {rest_density}: {values:?}"
                        );
                    }
                }
            }
        }
        // A decade below the smallest spacing, the rest stiffness (∝ h⁻⁸ before the volume
        // factor) no longer fits in f32.
        let mut tiny = Params::with_spacing(1e-4);
        tiny.spacing = 1e-5;
        tiny.kernel_radius = 1.5e-5;
        let kernel = tiny.kernel();
        assert!(!kernel.lattice_gradient_square_sum(tiny.spacing).is_finite());
    }

    #[test]
    fn live_edit_refuses_seed_time_parameters() {
        let params = Params::with_spacing(0.02);
        let mut edited = params.clone();
        edited.rest_density = 800.0;
        edited.gravity = [1.0, 0.0, 0.0];
        assert!(params.check_live_edit(&edited).is_ok());
        edited.kernel_radius = 0.05;
        let error = params.check_live_edit(&edited).unwrap_err();
        assert!(error.contains("kernel_radius"), "{error}");
    }
}
