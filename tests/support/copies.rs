//! What the tests that count a run's copies between the host and the GPU share
//! (tests/emulated_driver_edits.rs, tests/emulated_driver_grab.rs): the copies a trace of the
//! emulated driver (tests/support/emulated_driver.rs) reports, the test binary run again for
//! one ignored test with the driver traced, and the floats a run printed as bits. Included
//! with `#[path]` next to `mod emulated_driver`.

use std::process::Command;

/// Bytes copied to the GPU and back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Copies {
    /// To the GPU (`cuMemcpyHtoD*`).
    pub up: usize,
    /// Back (`cuMemcpyDtoH*`).
    pub down: usize,
}

impl Copies {
    /// Counts the copy a line of the driver's trace (`FLUIDLAB_EMULATED_TRACE`) reports;
    /// other lines count nothing.
    pub fn add(&mut self, text: &str) {
        let Some(rest) = text.strip_prefix("emulated CUDA driver: cuMemcpy") else {
            return;
        };
        let bytes = || -> usize {
            let (_, n) = rest.split_once(' ').unwrap();
            n.trim_end_matches(" bytes").parse().unwrap()
        };
        if rest.starts_with("HtoD") {
            self.up += bytes();
        } else if rest.starts_with("DtoH") {
            self.down += bytes();
        }
    }
}

/// This test binary again for its ignored test `test` alone (on one thread, its output
/// shown), the driver's calls traced: a run in a process of its own.
pub fn rerun(test: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--ignored"])
        .args(["--nocapture", "--test-threads", "1"])
        .env("FLUIDLAB_EMULATED_TRACE", "1");
    command
}

/// The floats a run printed as hexadecimal bits on its line starting `what`.
pub fn bits(stdout: &str, what: &str) -> Vec<u32> {
    crate::emulated_driver::line(stdout, what)
        .split_whitespace()
        .map(|word| u32::from_str_radix(word, 16).unwrap())
        .collect()
}
