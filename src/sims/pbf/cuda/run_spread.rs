//! The statistics long parity runs are compared by: a run's window averages ([`WindowStats`]),
//! how far two runs' windows are apart ([`RunSpread`], each statistic's [`Worst`] window) and
//! the allowances they are held to ([`RunTolerance`]). `parity.rs` runs the solvers and
//! applies them; tests/cuda.rs and the emulation derive the tolerances from them.

use crate::sims::pbf::stats::FrameStats;
use glam::Vec3A;

/// How far the window statistics of two runs may drift apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunTolerance {
    /// Relative difference allowed in the mean of |ρ/ρ₀ − 1|, beyond the floor.
    pub density_relative: f64,
    /// Absolute difference always allowed in the mean of |ρ/ρ₀ − 1|.
    pub density_floor: f64,
    /// Kinetic-energy difference allowed, as a fraction of the runs' peak (window) energy.
    pub energy_of_peak: f64,
    /// Centre-of-mass difference allowed per axis, fraction of the container's extent.
    pub center_of_mass_of_extent: f64,
    /// Allowed mean over the windows of the signed relative kinetic-energy difference,
    /// (E_candidate − E_reference) / max(E_candidate, E_reference). Rounding moves a window's
    /// energy up as often as down, so this mean stays small; a physics difference (less
    /// viscosity, more vorticity, a wrong time step) moves every window the same way.
    pub energy_drift: f64,
}

/// One statistic of a run, averaged over the frames `first_frame..=last_frame`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WindowStats {
    /// First frame of the window (frame 1 is after the first step).
    pub first_frame: u64,
    /// Last frame of the window.
    pub last_frame: u64,
    /// Mean over the window of the mean |ρ/ρ₀ − 1|.
    pub density_error_mean: f64,
    /// Mean kinetic energy, joules.
    pub kinetic_energy: f64,
    /// Mean centre of mass, metres.
    pub center_of_mass: [f64; 3],
}

impl WindowStats {
    pub(super) fn add(&mut self, frame: &FrameStats) {
        if self.last_frame == 0 {
            self.first_frame = frame.step;
        }
        self.last_frame = frame.step;
        self.density_error_mean += frame.density_error_mean;
        self.kinetic_energy += frame.kinetic_energy;
        for (sum, x) in self.center_of_mass.iter_mut().zip(frame.center_of_mass) {
            *sum += x;
        }
    }

    pub(super) fn mean(mut self) -> Self {
        let frames = (self.last_frame + 1 - self.first_frame) as f64;
        self.density_error_mean /= frames;
        self.kinetic_energy /= frames;
        for x in &mut self.center_of_mass {
            *x /= frames;
        }
        self
    }
}

/// The worst window of one statistic: the allowance it needs, and the frames it covers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Worst {
    /// The smallest allowance (in the units of the [`RunTolerance`] field) that passes.
    pub needed: f64,
    /// First and last frame of the window that needs it.
    pub frames: (u64, u64),
}

impl Worst {
    fn update(&mut self, needed: f64, window: &WindowStats) {
        // A NaN, once seen, stays: it fails every check.
        let first = self.frames == (0, 0);
        if !self.needed.is_nan() && (first || needed.is_nan() || needed > self.needed) {
            *self = Worst {
                needed,
                frames: (window.first_frame, window.last_frame),
            };
        }
    }

    /// Whether `allowed` covers it (NaN never is covered).
    pub fn within(&self, allowed: f64) -> bool {
        self.needed <= allowed
    }

    /// The larger of two (NaN wins: it fails every check).
    pub fn max(self, other: Worst) -> Worst {
        if self.needed.is_nan() || other.needed <= self.needed {
            self
        } else {
            other
        }
    }
}

/// How far apart two runs' window statistics are: per statistic, the tightest tolerance field
/// the pair passes (with a given density floor).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunSpread {
    /// Needed [`RunTolerance::density_relative`].
    pub density_relative: Worst,
    /// Needed [`RunTolerance::energy_of_peak`].
    pub energy_of_peak: Worst,
    /// Needed [`RunTolerance::center_of_mass_of_extent`].
    pub center_of_mass_of_extent: Worst,
    /// Needed [`RunTolerance::energy_drift`] (its frames are the whole run).
    pub energy_drift: Worst,
}

impl RunSpread {
    /// Measures the pairs of `windows` (reference, candidate); `extent` is the container's size.
    pub fn of(windows: &[(WindowStats, WindowStats)], extent: Vec3A, density_floor: f64) -> Self {
        let peak_energy = windows
            .iter()
            .map(|(a, b)| a.kinetic_energy.max(b.kinetic_energy))
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        let mut spread = RunSpread::default();
        let mut drift = 0.0;
        for (a, b) in windows {
            let larger = a.kinetic_energy.max(b.kinetic_energy);
            if larger > 0.0 {
                drift += (b.kinetic_energy - a.kinetic_energy) / larger;
            }
            let density_gap = (a.density_error_mean - b.density_error_mean).abs() - density_floor;
            let density = if density_gap <= 0.0 {
                0.0
            } else {
                density_gap / a.density_error_mean.max(b.density_error_mean)
            };
            let energy = (a.kinetic_energy - b.kinetic_energy).abs() / peak_energy;
            let center = (0..3)
                .map(|axis| {
                    (a.center_of_mass[axis] - b.center_of_mass[axis]).abs() / extent[axis] as f64
                })
                .fold(
                    0.0,
                    |worst: f64, x| if x.is_nan() { x } else { worst.max(x) },
                );
            spread.density_relative.update(density, a);
            spread.energy_of_peak.update(energy, a);
            spread.center_of_mass_of_extent.update(center, a);
        }
        if let (Some(first), Some(last)) = (windows.first(), windows.last()) {
            spread.energy_drift = Worst {
                needed: (drift / windows.len() as f64).abs(),
                frames: (first.0.first_frame, last.0.last_frame),
            };
        }
        spread
    }

    /// Whether every statistic is within `tolerance` (NaN never is).
    pub fn within(&self, tolerance: &RunTolerance) -> bool {
        self.density_relative.within(tolerance.density_relative)
            && self.energy_of_peak.within(tolerance.energy_of_peak)
            && self
                .center_of_mass_of_extent
                .within(tolerance.center_of_mass_of_extent)
            && self.energy_drift.within(tolerance.energy_drift)
    }

    /// The worse of two spreads, statistic by statistic.
    pub fn max(self, other: RunSpread) -> RunSpread {
        RunSpread {
            density_relative: self.density_relative.max(other.density_relative),
            energy_of_peak: self.energy_of_peak.max(other.energy_of_peak),
            center_of_mass_of_extent: self
                .center_of_mass_of_extent
                .max(other.center_of_mass_of_extent),
            energy_drift: self.energy_drift.max(other.energy_drift),
        }
    }

    /// The tolerance this spread needs times `margin`, each field rounded up to two significant
    /// digits, with `density_floor` kept.
    pub fn tolerance(&self, margin: f64, density_floor: f64) -> RunTolerance {
        RunTolerance {
            density_relative: round_up(self.density_relative.needed * margin),
            density_floor,
            energy_of_peak: round_up(self.energy_of_peak.needed * margin),
            center_of_mass_of_extent: round_up(self.center_of_mass_of_extent.needed * margin),
            energy_drift: round_up(self.energy_drift.needed * margin),
        }
    }

    /// "density error 0.12 / 0.30 (frames 21–40), ..." against `tolerance`.
    pub fn describe(&self, tolerance: &RunTolerance) -> String {
        let field = |name: &str, worst: &Worst, allowed: f64| {
            format!(
                "{name} {:.4} / {allowed} (frames {}–{})",
                worst.needed, worst.frames.0, worst.frames.1
            )
        };
        [
            field(
                "density error",
                &self.density_relative,
                tolerance.density_relative,
            ),
            field(
                "kinetic energy",
                &self.energy_of_peak,
                tolerance.energy_of_peak,
            ),
            field(
                "centre of mass",
                &self.center_of_mass_of_extent,
                tolerance.center_of_mass_of_extent,
            ),
            field("energy drift", &self.energy_drift, tolerance.energy_drift),
        ]
        .join(", ")
    }
}

/// `x` rounded up to two significant digits (0.0 stays 0.0).
pub fn round_up(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x.max(0.0);
    }
    let unit = 10f64.powf(x.log10().floor() - 1.0);
    let rounded = (x / unit).ceil() * unit;
    // Undo the float noise of the division (0.30000000000000004).
    format!("{rounded:.12e}").parse().unwrap_or(rounded)
}
