//! Validation cases: the solver against theory and experiment, each a short simulation that
//! measures what a textbook or a laboratory says it should be, checks it against an allowance,
//! and draws its curves (`fluidlab validate`, docs/validation.md).
//!
//! - `rest`: pools of 10, 30, 60 and 100 layers at rest at the defaults (kinetic energy, the
//!   centre of mass, the surface height against volume / area, the density profile);
//! - `dam-break`: the surge front of a collapsing column against Martin & Moyce (1952);
//! - `sloshing`: the first mode's period of a tank against linear wave theory,
//!   ω² = g k tanh(k d).

mod cases;

pub use cases::{dam_break, resting_pool, sloshing, DamBreak, RestingPool, Sloshing, MARTIN_MOYCE};

use crate::sims::pbf::Backend;
use std::fmt;

/// One measured quantity and what it must be.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// What was measured.
    pub name: String,
    /// The measured value.
    pub value: f64,
    /// The bound it must meet, as text (e.g. "< 0.017 m/s").
    pub bound: String,
    /// Whether it meets it.
    pub passed: bool,
}

impl Check {
    /// A check that `value` is at most `limit` (`unit` follows both numbers).
    pub fn at_most(name: impl Into<String>, value: f64, limit: f64, unit: &str) -> Self {
        Self {
            name: name.into(),
            value,
            bound: format!("≤ {} {unit}", significant(limit)),
            passed: value <= limit,
        }
    }

    /// A check that `value` lies in `low..=high`.
    pub fn within(name: impl Into<String>, value: f64, low: f64, high: f64, unit: &str) -> Self {
        Self {
            name: name.into(),
            value,
            bound: format!("in [{}, {}] {unit}", significant(low), significant(high)),
            passed: (low..=high).contains(&value),
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {} (must be {})",
            if self.passed { "PASS" } else { "FAIL" },
            self.name,
            significant(self.value),
            self.bound
        )
    }
}

/// Four significant digits, without trailing noise.
pub fn significant(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    if !(-3..5).contains(&magnitude) {
        return format!("{value:.3e}");
    }
    let decimals = (3 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

/// The validation cases by name.
pub const CASES: [&str; 3] = ["rest", "dam-break", "sloshing"];

/// How a case runs: which backend, and whether shortened (fewer depths, shorter times) for
/// tests.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// Solver backend.
    pub backend: Backend,
    /// Run the shortened form.
    pub quick: bool,
}
