//! What `fluidlab doctor` reports, line by line, and each kind's own checks (its kernels,
//! parity with its CPU reference, interop), which the command runs after the shared ones.

use super::Kind;
use std::fmt;

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Works.
    Pass,
    /// Broken, or missing where it is needed.
    Fail,
    /// Not checked, for the reason given.
    Skip,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        })
    }
}

/// One line of the report.
#[derive(Clone, Debug)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// The outcome.
    pub status: Status,
    /// Figures or the reason.
    pub detail: String,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}  {:<20} {}", self.status, self.name, self.detail)
    }
}

/// Runs `kind`'s checks, passing each line to `add` as soon as it is known. Without a CUDA
/// driver the kind says which checks it skips.
pub fn kind_checks(kind: Kind, cuda_available: bool, add: &mut dyn FnMut(Check)) {
    match kind {
        Kind::Pbf => super::pbf::doctor::checks(cuda_available, add),
        Kind::Ink => super::ink::doctor::checks(cuda_available, add),
        Kind::Particles => add(Check {
            name: "particles",
            status: Status::Skip,
            detail: "the particles kind has no CUDA path yet".into(),
        }),
        Kind::Pool => super::pool::doctor::checks(cuda_available, add),
        #[cfg(test)]
        Kind::Probe => add(Check {
            name: "probe",
            status: Status::Pass,
            detail: "a CPU-only test kind".into(),
        }),
    }
}
