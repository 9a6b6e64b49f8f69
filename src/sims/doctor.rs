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

/// The width of the report's name column: the longest check's name (`ink parity: painting
/// obstacles`), so that every line's detail starts in the same column.
pub const NAME_WIDTH: usize = 30;

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}  {:<NAME_WIDTH$} {}",
            self.status, self.name, self.detail
        )
    }
}

/// A parity check on a device (its ordinal): passed or not, with the figures; or why it could
/// not run.
pub type ParityCheck = fn(usize) -> Result<(bool, String), String>;

/// A parity check's result: passed when nothing failed, with `detail` (its worst figures) and
/// then every failure.
pub fn verdict(detail: String, failures: Vec<String>) -> (bool, String) {
    if failures.is_empty() {
        (true, detail)
    } else {
        (false, format!("{detail}; {}", failures.join("; ")))
    }
}

/// A kind's CUDA checks on the default device: its kernels load (`kernels`: the line's name and
/// the loader, which says how many kernels and where their code came from), then each parity
/// check in order. Without a CUDA driver every line is a skip.
pub fn cuda_checks(
    cuda_available: bool,
    kernels: (&'static str, &dyn Fn(usize) -> Result<String, String>),
    parity: &[(&'static str, ParityCheck)],
    add: &mut dyn FnMut(Check),
) {
    let mut add = |name: &'static str, status: Status, detail: String| {
        add(Check {
            name,
            status,
            detail,
        })
    };
    if !cuda_available {
        for name in std::iter::once(kernels.0).chain(parity.iter().map(|(name, _)| *name)) {
            add(name, Status::Skip, "needs the CUDA driver".into());
        }
        return;
    }
    let device = crate::cuda::DEFAULT_DEVICE;
    match kernels.1(device) {
        Ok(detail) => add(kernels.0, Status::Pass, detail),
        Err(error) => add(kernels.0, Status::Fail, error),
    }
    for &(name, check) in parity {
        match check(device) {
            Ok((true, detail)) => add(name, Status::Pass, detail),
            Ok((false, detail)) | Err(detail) => add(name, Status::Fail, detail),
        }
    }
}

/// Runs `kind`'s checks, passing each line to `add` as soon as it is known. Without a CUDA
/// driver the kind says which checks it skips.
pub fn kind_checks(kind: Kind, cuda_available: bool, add: &mut dyn FnMut(Check)) {
    match kind {
        Kind::Pbf => super::pbf::doctor::checks(cuda_available, add),
        Kind::Ink => super::ink::doctor::checks(cuda_available, add),
        Kind::Particles => super::particles::doctor::checks(cuda_available, add),
        Kind::Pool => super::pool::doctor::checks(cuda_available, add),
        #[cfg(test)]
        Kind::Probe => add(Check {
            name: "probe",
            status: Status::Pass,
            detail: "a CPU-only test kind".into(),
        }),
    }
}
