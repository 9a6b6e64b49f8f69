//! The imgui panels: run control, the scene menu of every preset of every kind, the camera,
//! statistics and timings, around the running kind's own sections ([`Sim::panel`]). Viewer
//! edits come back as [`Action`]s; [`crate::viewer::state::AppState`] applies them.

use super::keys;
use crate::scene::PRESETS;
use crate::sims::{Kind, Sim};
use crate::viewer::state::{AppState, Edit, RunMode};
use imgui::{Condition, StyleColor, TreeNodeFlags, Ui};
use std::borrow::Cow;

/// What the user asked for this frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A change of state.
    Edit(Edit),
    /// Save the current view to a PNG.
    Screenshot,
    /// Close the viewer.
    Quit,
}

/// Measurements the panels display (the front end fills them).
#[derive(Clone, Debug, Default)]
pub struct FrameInfo {
    /// Frames per second, averaged.
    pub fps: f32,
    /// Milliseconds per simulation stage per frame, by stage name.
    pub stage_ms: Vec<(&'static str, f64)>,
    /// Milliseconds per render pass of the latest measured frame, by pass name.
    pub pass_ms: Vec<(&'static str, Option<f64>)>,
    /// Where the last screenshot went.
    pub last_screenshot: Option<String>,
    /// The kind's status lines (measured twice a second).
    pub status: Vec<String>,
}

/// The window's size at start, logical pixels (the default camera frames the scene for it).
pub const WINDOW_SIZE: (f32, f32) = (1280.0, 720.0);
/// The gap between a panel and the window's edges, logical pixels.
const MARGIN: f32 = 10.0;
/// The panels' top edge, below the menu bar, logical pixels.
const PANEL_TOP: f32 = 30.0;
/// The `fluidlab` panel's left edge and width at start, logical pixels: controls of at least
/// 170 px (a vector's three fields 54 px each) beside [`LABEL_WIDTH`], inside the panel's
/// padding and scroll bar.
const PANEL_LEFT: f32 = MARGIN;
const PANEL_WIDTH: f32 = 400.0;
/// Where the `fluidlab` panel ends at start: the default camera frames the scene right of it
/// (and ink's picture is letterboxed right of it, [`covered`]).
pub const PANEL_RIGHT: f32 = PANEL_LEFT + PANEL_WIDTH + MARGIN;
/// The room every control of the `fluidlab` panel leaves for its label on its right, logical
/// pixels: the kinds' longest labels ("brush-motion influence (1/s)", "pre-tension (spacing /
/// rest)": 28 characters of imgui's default font, 7 px each) and the 4 px before a label.
/// imgui's own default, 65 % of the panel for the control, left 14 characters.
const LABEL_WIDTH: f32 = 200.0;
/// The statistics window's size when opened at start, logical pixels.
const STATISTICS_SIZE: [f32; 2] = [320.0, 420.0];
/// The menu bar's height, logical pixels.
const MENU_BAR: f32 = 20.0;
/// Where the panels' top row ends at start (the menu bar, then the folded statistics window's
/// title bar), logical pixels.
const TOP_ROW_END: f32 = 52.0;

/// What the panels keep between frames: the scene-file path being typed, and the panels' sizes
/// as the user left them.
#[derive(Clone, Debug)]
pub struct PanelMemory {
    /// Scene file path field.
    pub scene_path: String,
    panel: Fit,
    statistics: Fit,
}

impl Default for PanelMemory {
    fn default() -> PanelMemory {
        PanelMemory {
            scene_path: String::new(),
            panel: Fit::new([PANEL_WIDTH, WINDOW_SIZE.1 - PANEL_TOP - MARGIN]),
            statistics: Fit::new(STATISTICS_SIZE),
        }
    }
}

/// A panel's size fitted to the window: a window that shrinks shrinks the panel to fit it, one
/// that grows again gives the panel back the size it had.
#[derive(Clone, Copy, Debug)]
struct Fit {
    /// The size the panel has where the window leaves room, logical pixels.
    wanted: [f32; 2],
    /// The window's size the panel was last fitted to, logical pixels.
    display: [f32; 2],
}

impl Fit {
    fn new(wanted: [f32; 2]) -> Fit {
        Fit {
            wanted,
            display: [0.0; 2],
        }
    }

    /// The size to give the panel this frame when the window's size changed (and at the first
    /// frame): the wanted size, no larger than `largest`.
    fn resized(&mut self, display: [f32; 2], largest: [f32; 2]) -> Option<[f32; 2]> {
        if display == self.display {
            return None;
        }
        self.display = display;
        Some([
            self.wanted[0].min(largest[0]),
            self.wanted[1].min(largest[1]),
        ])
    }

    /// The panel was drawn at `size`: along an axis where the window did not limit it, that is
    /// the size the user wants.
    fn drawn(&mut self, size: [f32; 2], largest: [f32; 2]) {
        for axis in 0..2 {
            if size[axis] < largest[axis] {
                self.wanted[axis] = size[axis];
            }
        }
    }
}

/// The pixels along the left and top edges the panels cover at start, for a window of
/// `scale` physical pixels per logical one (`shown`: the panels are, else only the menu bar).
pub fn covered(shown: bool, scale: f32) -> [u32; 2] {
    let [left, top] = if shown {
        [PANEL_RIGHT, TOP_ROW_END]
    } else {
        [0.0, MENU_BAR]
    };
    [(left * scale).round() as u32, (top * scale).round() as u32]
}

/// Draws every panel, applies the kind's edits, and returns what the user asked of the viewer.
pub fn panels(
    ui: &Ui,
    state: &mut AppState,
    info: &FrameInfo,
    memory: &mut PanelMemory,
) -> Vec<Action> {
    let mut actions = Vec::new();
    menu_bar(ui, state, &mut actions);
    if state.show_ui {
        let display = ui.io().display_size;
        // The most either panel may take of the window, logical pixels.
        let largest = [
            (display[0] - 2.0 * MARGIN).max(0.0),
            (display[1] - PANEL_TOP - MARGIN).max(0.0),
        ];
        let mut panel = ui
            .window("fluidlab")
            .position([PANEL_LEFT, PANEL_TOP], Condition::FirstUseEver);
        if let Some(size) = memory.panel.resized(display, largest) {
            panel = panel.size(size, Condition::Always);
        }
        panel.build(|| {
            memory.panel.drawn(ui.window_size(), largest);
            // Every control leaves its label room on its right; lines of text wrap at the
            // panel's edge. Both hold for the kind's sections too.
            let _controls = ui.push_item_width(-LABEL_WIDTH);
            let _lines = ui.push_text_wrap_pos_with_pos(0.0);
            notices(ui, state, info);
            run_control(ui, state, &mut actions);
            match state.sim.panel(ui) {
                Ok(true) => actions.push(Action::Edit(Edit::Restart)),
                Ok(false) => {}
                Err(error) => state.message = Some(format!("{error:#}")),
            }
            scene_file(ui, &mut memory.scene_path, &mut actions);
            if !state.sim.flat() {
                camera(ui, &mut actions);
            }
        });
        // Held in the top-right corner at every frame, so it follows the window's right edge.
        let mut statistics = ui
            .window("statistics")
            .position([display[0] - MARGIN, PANEL_TOP], Condition::Always)
            .position_pivot([1.0, 0.0])
            .movable(false)
            // Starts folded to its title bar, so it does not cover the scene.
            .collapsed(true, Condition::FirstUseEver);
        if let Some(size) = memory.statistics.resized(display, largest) {
            statistics = statistics.size(size, Condition::Always);
        }
        let timings_shown = statistics.build(|| {
            memory.statistics.drawn(ui.window_size(), largest);
            let _lines = ui.push_text_wrap_pos_with_pos(0.0);
            status(ui, state, info);
            timings(ui, info)
        });
        state.stage_timing = timings_shown.unwrap_or(false);
    } else {
        state.stage_timing = false;
    }
    if state.show_help {
        help(ui, state.sim.as_ref());
    }
    actions
}

fn menu_bar(ui: &Ui, state: &mut AppState, actions: &mut Vec<Action>) {
    ui.main_menu_bar(|| {
        ui.menu("Scenes", || {
            for kind in Kind::ALL {
                let presets: Vec<_> = PRESETS.iter().filter(|p| p.kind == kind.name()).collect();
                if presets.is_empty() {
                    continue;
                }
                ui.text_disabled(kind.name());
                for preset in presets {
                    if ui.menu_item(preset.name) {
                        actions.push(Action::Edit(Edit::LoadScene(format!(
                            "{}/{}",
                            preset.kind, preset.name
                        ))));
                    }
                }
            }
        });
        ui.menu("View", || {
            let current = state.sim.view();
            for (index, name) in state.sim.views().iter().enumerate() {
                if ui.menu_item_config(name).selected(index == current).build() {
                    state.sim.set_view(index);
                }
            }
        });
        if ui.menu_item("Screenshot") {
            actions.push(Action::Screenshot);
        }
        if ui.menu_item("Help") {
            actions.push(Action::Edit(Edit::ToggleHelp));
        }
        if ui.menu_item("Quit") {
            actions.push(Action::Quit);
        }
    });
}

fn status(ui: &Ui, state: &AppState, info: &FrameInfo) {
    let sim = state.sim.as_ref();
    ui.text(format!("{:.1} FPS", info.fps));
    ui.text(format!(
        "{} scene {}: {} {}",
        sim.kind(),
        sim.scene_name(),
        sim.elements(),
        sim.element_unit()
    ));
    ui.text(format!("backend {}", sim.backend()));
    ui.text(format!("solver steps {}", sim.steps_taken()));
    for line in &info.status {
        ui.text_wrapped(displayable(line));
    }
}

/// The last error (a scene that did not load, an edit refused, a failed step) and where the
/// last screenshot went, at the top of the `fluidlab` panel, which starts open.
fn notices(ui: &Ui, state: &AppState, info: &FrameInfo) {
    if let Some(message) = &state.message {
        let _red = ui.push_style_color(StyleColor::Text, [1.0, 0.45, 0.35, 1.0]);
        ui.text_wrapped(displayable(message));
    }
    if let Some(path) = &info.last_screenshot {
        ui.text_wrapped(format!("saved {}", displayable(path)));
    }
}

/// `text` in the characters the panels' font has (Latin-1, imgui's default range): the
/// symbols the kinds' figures use are spelled out, anything else would show as `?`.
pub fn displayable(text: &str) -> Cow<'_, str> {
    if text.chars().all(|c| c <= '\u{ff}') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{0}'..='\u{ff}' => out.push(c),
            'ρ' => out.push_str("rho"),
            'φ' => out.push_str("phi"),
            'η' => out.push_str("eta"),
            'λ' => out.push_str("lambda"),
            'α' => out.push_str("alpha"),
            'β' => out.push_str("beta"),
            'γ' => out.push_str("gamma"),
            'δ' => out.push_str("delta"),
            'ε' => out.push_str("epsilon"),
            'θ' => out.push_str("theta"),
            'κ' => out.push_str("kappa"),
            'ν' => out.push_str("nu"),
            'π' => out.push_str("pi"),
            'σ' => out.push_str("sigma"),
            'τ' => out.push_str("tau"),
            'ω' => out.push_str("omega"),
            'Δ' => out.push('d'),
            'μ' => out.push('µ'),
            '−' | '–' | '—' => out.push('-'),
            '→' => out.push_str("->"),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '≈' => out.push('~'),
            '∞' => out.push_str("inf"),
            '…' => out.push_str("..."),
            '√' => out.push_str("sqrt"),
            '₀'..='₉' => out.push(char::from(b'0' + (c as u32 - '₀' as u32) as u8)),
            '⁰' | '⁴'..='⁹' => {
                let digit = if c == '⁰' {
                    0
                } else {
                    c as u32 - '⁰' as u32
                };
                out.push('^');
                out.push(char::from(b'0' + digit as u8));
            }
            _ => out.push('?'),
        }
    }
    Cow::Owned(out)
}

fn run_control(ui: &Ui, state: &AppState, actions: &mut Vec<Action>) {
    if !ui.collapsing_header("Run", TreeNodeFlags::DEFAULT_OPEN) {
        return;
    }
    let mut mode = state.run_mode;
    let continuous = ui.radio_button("continuous", &mut mode, RunMode::Continuous);
    ui.same_line();
    let stepped = ui.radio_button("step-by-step", &mut mode, RunMode::StepByStep);
    if continuous || stepped {
        actions.push(Action::Edit(Edit::RunMode(mode)));
    }
    if ui.button(if state.paused { "Resume" } else { "Pause" }) {
        actions.push(Action::Edit(Edit::TogglePause));
    }
    ui.same_line();
    if ui.button("Step") {
        actions.push(Action::Edit(Edit::StepOnce));
    }
    ui.same_line();
    if ui.button("Restart") {
        actions.push(Action::Edit(Edit::Restart));
    }
}

fn scene_file(ui: &Ui, path: &mut String, actions: &mut Vec<Action>) {
    if !ui.collapsing_header("Scene file", TreeNodeFlags::empty()) {
        return;
    }
    ui.input_text("path", path).build();
    if ui.button("Load scene file") && !path.trim().is_empty() {
        actions.push(Action::Edit(Edit::LoadScene(path.trim().to_string())));
    }
}

fn camera(ui: &Ui, actions: &mut Vec<Action>) {
    if !ui.collapsing_header("Camera", TreeNodeFlags::empty()) {
        return;
    }
    ui.text("left drag orbit, right drag pan, wheel zoom, WASD/QE fly");
    if ui.button("Reset camera") {
        actions.push(Action::Edit(Edit::ResetCamera));
    }
}

/// The stage and pass times, under a header; whether the header is open.
fn timings(ui: &Ui, info: &FrameInfo) -> bool {
    if !ui.collapsing_header("Timings", TreeNodeFlags::DEFAULT_OPEN) {
        return false;
    }
    ui.text("simulation (ms per frame)");
    for (stage, ms) in &info.stage_ms {
        ui.text(format!("  {stage:<18} {ms:7.2}"));
    }
    ui.text("render (ms, GL timer queries)");
    for (pass, ms) in &info.pass_ms {
        if let Some(ms) = ms {
            ui.text(format!("  {pass:<18} {ms:7.2}"));
        }
    }
    true
}

fn help(ui: &Ui, sim: &dyn Sim) {
    let size = ui.io().display_size;
    ui.window("Keys")
        .position([size[0] * 0.5, size[1] * 0.5], Condition::Always)
        .position_pivot([0.5, 0.5])
        .always_auto_resize(true)
        .build(|| {
            for (key, action) in keys::help(sim) {
                ui.text(displayable(&format!("{key:<22} {action}")));
            }
        });
}

#[cfg(test)]
mod tests {
    use super::{displayable, Fit};

    /// A panel shrinks with the window and gets its size back when the window grows; a size
    /// the user gives it while the window is small is the one it keeps.
    #[test]
    fn a_panel_fits_the_window_and_keeps_the_users_size() {
        let mut fit = Fit::new([400.0, 680.0]);
        let largest = [1260.0, 680.0];
        assert_eq!(fit.resized([1280.0, 720.0], largest), Some([400.0, 680.0]));
        fit.drawn([400.0, 680.0], largest);
        assert_eq!(fit.resized([1280.0, 720.0], largest), None, "unchanged");
        let small = [300.0, 260.0];
        assert_eq!(fit.resized([320.0, 300.0], small), Some([300.0, 260.0]));
        fit.drawn([300.0, 260.0], small);
        assert_eq!(fit.resized([1280.0, 720.0], largest), Some([400.0, 680.0]));
        fit.resized([320.0, 300.0], small);
        fit.drawn([300.0, 200.0], small);
        assert_eq!(
            fit.resized([1280.0, 720.0], largest),
            Some([400.0, 200.0]),
            "made 200 px high by the user"
        );
    }

    #[test]
    fn the_kinds_symbols_are_spelled_in_the_fonts_characters() {
        assert_eq!(
            displayable("bottom layer ρ/ρ₀ − 1 +0.2 %, bounds [0]–[1]"),
            "bottom layer rho/rho0 - 1 +0.2 %, bounds [0]-[1]"
        );
        assert_eq!(
            displayable("m⁴/s², 1.0 → 0.5, ≥ 2"),
            "m^4/s², 1.0 -> 0.5, >= 2"
        );
        assert_eq!(displayable("τ = 0.5 s, α ≈ 2"), "tau = 0.5 s, alpha ~ 2");
        assert!(matches!(
            displayable("m/s² · °"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
