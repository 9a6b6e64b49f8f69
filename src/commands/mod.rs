//! The `fluidlab` subcommands, callable from the binary and from tests.

pub mod bench;
pub mod doctor;
pub mod render;
pub mod simulate;
pub mod validate;

use crate::scene::{Source, PRESETS};
use crate::sims::{self, Kind};

use indicatif::{ProgressBar, ProgressStyle};
use nix::libc::c_int;
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that ask a run to stop: Ctrl-C, `kill` and a closed terminal.
const STOP_SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// The first stop signal received (its number), 0 while none was.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(number: c_int) {
    if STOP_SIGNAL
        .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // A second signal: whoever sends it will not wait for the step in progress, so the
        // signal does what it does by default (the process ends). Both calls are
        // async-signal-safe; the signal is blocked while this handler runs and is delivered
        // when it returns.
        if let Ok(signal) = Signal::try_from(number) {
            // SAFETY: restores the default action; no handler of ours is involved.
            let _ = unsafe { signal::signal(signal, SigHandler::SigDfl) };
            let _ = signal::raise(signal);
        }
    }
}

/// Makes Ctrl-C (SIGINT), SIGTERM and SIGHUP ask a long command to stop after the step in
/// progress instead of killing the process mid-write; a second one ends it at once. Call once,
/// from the binary, before a command that polls [`interrupted`] (`simulate`): any other
/// command keeps the signals' default action, so they stop it at once.
pub fn install_interrupt_handler() -> anyhow::Result<()> {
    let action = SigAction::new(
        SigHandler::Handler(on_stop_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for signal in STOP_SIGNALS {
        // SAFETY: the handler only touches an atomic and calls async-signal-safe functions.
        unsafe { signal::sigaction(signal, &action) }
            .map_err(|e| anyhow::anyhow!("cannot install the {signal} handler: {e}"))?;
    }
    Ok(())
}

/// The stop signal received since the start, if any.
pub(crate) fn interrupted() -> Option<Signal> {
    Signal::try_from(STOP_SIGNAL.load(Ordering::SeqCst)).ok()
}

/// A run stopped by a stop signal; the binary exits with [`Interrupted::exit_status`].
#[derive(Debug, thiserror::Error)]
#[error("interrupted ({}) after step {step}{kept}", signal_name(*.signal))]
pub struct Interrupted {
    /// The signal that stopped it.
    pub signal: Signal,
    /// Last step completed.
    pub step: u64,
    /// What was written and is complete, as a sentence tail.
    pub kept: String,
}

impl Interrupted {
    /// 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP): what a
    /// shell reports for a process the signal ended, so scripts see the same status either way.
    pub fn exit_status(&self) -> u8 {
        128 + self.signal as u8
    }
}

fn signal_name(signal: Signal) -> &'static str {
    match signal {
        Signal::SIGINT => "Ctrl-C",
        other => other.as_str(),
    }
}

/// The largest count of steps or frames a command takes: 10⁹ steps are 190 days of simulated
/// time at 60 Hz, hours of computing at the very least, so a larger count is a slip of the
/// keyboard; it also keeps sums of counts (warm-up + steps) far from overflowing.
pub const MAX_COUNT: u64 = 1_000_000_000;

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

/// `n` things: "1 step", "2 steps".
pub(crate) fn counted(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}
