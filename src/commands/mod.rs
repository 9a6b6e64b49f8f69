//! The `fluidlab` subcommands, callable from the binary and from tests.

pub mod bench;
pub mod doctor;
pub mod render;
pub mod simulate;
pub mod validate;

use crate::scene::{Source, PRESETS};
use crate::sims::{self, Kind};

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

/// `fluidlab scenes`: every preset of every kind with its description, grouped by kind.
pub fn scenes() -> anyhow::Result<()> {
    print!("{}", scene_list()?);
    Ok(())
}

/// The text `fluidlab scenes` prints: a heading per kind, then `name  description` lines.
pub fn scene_list() -> anyhow::Result<String> {
    let mut text = String::new();
    for kind in Kind::ALL {
        let presets: Vec<_> = PRESETS.iter().filter(|p| p.kind == kind.name()).collect();
        if presets.is_empty() {
            continue;
        }
        text += &format!("{kind}:\n");
        for preset in presets {
            let source = Source::load(&format!("{}/{}", preset.kind, preset.name))?;
            text += &format!("  {:<18} {}\n", preset.name, sims::describe(&source)?);
        }
    }
    Ok(text)
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
