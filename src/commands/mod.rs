//! The `fluidlab` subcommands, callable from the binary and from tests.

pub mod bench;
pub mod doctor;
pub mod render;
pub mod simulate;
pub mod validate;

use crate::scene::PRESETS;
use crate::sims::pbf::scene::Scene;

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Makes Ctrl-C (SIGINT) ask long commands to stop after the step in progress instead of
/// killing the process mid-write. Call once, from the binary.
pub fn install_interrupt_handler() -> anyhow::Result<()> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))
        .map_err(|e| anyhow::anyhow!("cannot install the Ctrl-C handler: {e}"))
}

/// Whether Ctrl-C was pressed since the start.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// A run stopped by Ctrl-C; the binary exits with status 130 for it.
#[derive(Debug, thiserror::Error)]
#[error("interrupted (Ctrl-C) after step {step}{kept}")]
pub struct Interrupted {
    /// Last step completed.
    pub step: u64,
    /// What was written and is complete, as a sentence tail.
    pub kept: String,
}

/// `fluidlab scenes`: every preset with its description.
pub fn scenes() -> anyhow::Result<()> {
    for preset in PRESETS {
        let name = preset.name;
        let scene = Scene::load(name)?;
        println!("{name:<18} {}", scene.description);
    }
    Ok(())
}

/// A progress bar on standard error (hidden when it is not a terminal).
pub(crate) fn progress_bar(length: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    let template = format!("{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}})");
    bar.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
