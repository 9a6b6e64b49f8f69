//! The viewer's keyboard shortcuts: one table drives both the mapping and the help overlay,
//! which also lists the running kind's keys ([`crate::sims::Sim::key_help`]).

use super::panel::Action;
use crate::sims::Sim;
use crate::viewer::state::{AppState, Edit, RunMode};
use winit::keyboard::KeyCode;

/// The camera's keys and mouse controls, as the help overlay lists them (for the kinds drawn
/// through the camera: not a flat picture, [`crate::sims::Sim::flat`]).
pub const CAMERA_KEYS: &[(&str, &str)] = &[
    ("Left drag", "orbit the camera"),
    ("Right or middle drag", "pan the camera"),
    ("Wheel", "zoom"),
    ("W A S D", "fly forward, left, back, right"),
    ("Q E", "fly down, up"),
    ("Shift (held)", "fly faster"),
    ("R", "reset the camera"),
];

/// The viewer's other keys, as the help overlay lists them.
pub const KEYS: &[(&str, &str)] = &[
    ("Space", "pause / resume"),
    ("N", "advance one frame (step mode or paused)"),
    ("M", "continuous / step-by-step mode"),
    ("Backspace", "restart with the set-up"),
    ("F12", "save a screenshot (fluidlab-screenshot-N.png)"),
    ("Tab", "hide / show the panels"),
    ("H", "show / hide this help"),
    ("Esc", "quit"),
];

/// What the help overlay lists for `sim`: the camera's controls (unless its picture is flat),
/// the viewer's keys, the kind's.
pub fn help(sim: &dyn Sim) -> impl Iterator<Item = &(&'static str, &'static str)> {
    let camera: &[(&str, &str)] = if sim.flat() { &[] } else { CAMERA_KEYS };
    camera.iter().chain(KEYS).chain(sim.key_help())
}

/// Keys held to fly: (key, forward, right, up) direction.
pub const FLY_KEYS: &[(KeyCode, f32, f32, f32)] = &[
    (KeyCode::KeyW, 1.0, 0.0, 0.0),
    (KeyCode::KeyS, -1.0, 0.0, 0.0),
    (KeyCode::KeyD, 0.0, 1.0, 0.0),
    (KeyCode::KeyA, 0.0, -1.0, 0.0),
    (KeyCode::KeyE, 0.0, 0.0, 1.0),
    (KeyCode::KeyQ, 0.0, 0.0, -1.0),
];

/// What a key press does in the viewer, given the current state (toggles need it); `None`
/// leaves the key to the running kind ([`crate::sims::Sim::key`]).
pub fn action_for_key(key: KeyCode, state: &AppState) -> Option<Action> {
    match key {
        KeyCode::KeyR => Some(Action::Edit(Edit::ResetCamera)),
        KeyCode::Space => Some(Action::Edit(Edit::TogglePause)),
        KeyCode::KeyN => Some(Action::Edit(Edit::StepOnce)),
        KeyCode::KeyM => Some(Action::Edit(Edit::RunMode(match state.run_mode {
            RunMode::Continuous => RunMode::StepByStep,
            RunMode::StepByStep => RunMode::Continuous,
        }))),
        KeyCode::Backspace => Some(Action::Edit(Edit::Restart)),
        KeyCode::F12 => Some(Action::Screenshot),
        KeyCode::Tab => Some(Action::Edit(Edit::ToggleUi)),
        KeyCode::KeyH => Some(Action::Edit(Edit::ToggleHelp)),
        KeyCode::Escape => Some(Action::Quit),
        _ => None,
    }
}
