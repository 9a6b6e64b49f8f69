//! Keyboard shortcuts: one table drives both the mapping and the help overlay.

use super::panel::Action;
use crate::sims::pbf::render::{SmoothingFilter, View};
use crate::viewer::state::{AppState, Edit, RunMode};
use winit::keyboard::KeyCode;

/// Every key and mouse control, as the help overlay lists them.
pub const KEYS: &[(&str, &str)] = &[
    ("Left drag", "orbit the camera"),
    ("Right or middle drag", "pan the camera"),
    ("Wheel", "zoom"),
    ("W A S D", "fly forward, left, back, right"),
    ("Q E", "fly down, up"),
    ("Shift (held)", "fly faster"),
    ("R", "reset the camera"),
    ("Space", "pause / resume"),
    ("N", "advance one frame (step mode or paused)"),
    ("M", "continuous / step-by-step mode"),
    ("Backspace", "restart with the set-up"),
    (
        "1 2 3 4 5 6 7",
        "view: fluid, particles (speed), depth, smoothed depth, thickness, normals, particles (density)",
    ),
    ("F", "smoothing filter: bilateral / narrow-range"),
    ("+ -", "more / fewer smoothing iterations"),
    ("P or F12", "save a screenshot (fluidlab-screenshot-N.png)"),
    ("Tab", "hide / show the panels"),
    ("H or F1", "show / hide this help"),
    ("Esc", "quit"),
];

/// Keys held to fly: (key, forward, right, up) direction.
pub const FLY_KEYS: &[(KeyCode, f32, f32, f32)] = &[
    (KeyCode::KeyW, 1.0, 0.0, 0.0),
    (KeyCode::KeyS, -1.0, 0.0, 0.0),
    (KeyCode::KeyD, 0.0, 1.0, 0.0),
    (KeyCode::KeyA, 0.0, -1.0, 0.0),
    (KeyCode::KeyE, 0.0, 0.0, 1.0),
    (KeyCode::KeyQ, 0.0, 0.0, -1.0),
];

/// What a key press does, given the current state (toggles need it).
pub fn action_for_key(key: KeyCode, state: &AppState) -> Option<Action> {
    let render = |change: &dyn Fn(&mut crate::sims::pbf::render::RenderSettings)| {
        let mut settings = state.render.clone();
        change(&mut settings);
        Some(Action::Edit(Edit::Render(settings)))
    };
    let view = |view: View| render(&|s| s.view = view);
    match key {
        KeyCode::KeyR => Some(Action::Edit(Edit::ResetCamera)),
        KeyCode::Space => Some(Action::Edit(Edit::TogglePause)),
        KeyCode::KeyN => Some(Action::Edit(Edit::StepOnce)),
        KeyCode::KeyM => Some(Action::Edit(Edit::RunMode(match state.run_mode {
            RunMode::Continuous => RunMode::StepByStep,
            RunMode::StepByStep => RunMode::Continuous,
        }))),
        KeyCode::Backspace => Some(Action::Edit(Edit::Restart)),
        KeyCode::Digit1 => view(View::Fluid),
        KeyCode::Digit2 => view(View::Particles),
        KeyCode::Digit3 => view(View::Depth),
        KeyCode::Digit4 => view(View::SmoothedDepth),
        KeyCode::Digit5 => view(View::Thickness),
        KeyCode::Digit6 => view(View::Normals),
        KeyCode::Digit7 => view(View::Density),
        KeyCode::KeyF => render(&|s| {
            s.smoothing_filter = match s.smoothing_filter {
                SmoothingFilter::Bilateral => SmoothingFilter::NarrowRange,
                SmoothingFilter::NarrowRange => SmoothingFilter::Bilateral,
            }
        }),
        KeyCode::Equal | KeyCode::NumpadAdd => {
            render(&|s| s.smoothing_iterations = (s.smoothing_iterations + 1).min(MAX_SMOOTHING))
        }
        KeyCode::Minus | KeyCode::NumpadSubtract => {
            render(&|s| s.smoothing_iterations = s.smoothing_iterations.saturating_sub(1))
        }
        KeyCode::KeyP | KeyCode::F12 => Some(Action::Screenshot),
        KeyCode::Tab => Some(Action::Edit(Edit::ToggleUi)),
        KeyCode::KeyH | KeyCode::F1 => Some(Action::Edit(Edit::ToggleHelp)),
        KeyCode::Escape => Some(Action::Quit),
        _ => None,
    }
}

/// Upper bound of the smoothing-iterations control.
pub const MAX_SMOOTHING: u32 = 20;
