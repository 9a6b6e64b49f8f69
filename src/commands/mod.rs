//! The `fluidlab` subcommands, callable from the binary and from tests.

pub mod bench;
pub mod doctor;
pub mod render;
pub mod simulate;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar on standard error (hidden when it is not a terminal).
pub(crate) fn progress_bar(length: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    let template = format!("{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}})");
    bar.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
