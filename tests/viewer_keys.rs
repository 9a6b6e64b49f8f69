//! The keys of every kind reach it: a key the viewer's own table takes (or flies the camera
//! with) never gets to the kind, so no kind may claim one.

use fluidlab::sims::Backend;
use fluidlab::viewer::keys;
use fluidlab::viewer::panel::displayable;
use fluidlab::viewer::state::AppState;
use fluidlab::viewer::state::Edit;
use winit::keyboard::KeyCode;

/// The keys a user can press that either side could use.
const CANDIDATES: &[KeyCode] = {
    use KeyCode::*;
    &[
        KeyA,
        KeyB,
        KeyC,
        KeyD,
        KeyE,
        KeyF,
        KeyG,
        KeyH,
        KeyI,
        KeyJ,
        KeyK,
        KeyL,
        KeyM,
        KeyN,
        KeyO,
        KeyP,
        KeyQ,
        KeyR,
        KeyS,
        KeyT,
        KeyU,
        KeyV,
        KeyW,
        KeyX,
        KeyY,
        KeyZ,
        Digit0,
        Digit1,
        Digit2,
        Digit3,
        Digit4,
        Digit5,
        Digit6,
        Digit7,
        Digit8,
        Digit9,
        F1,
        F2,
        F3,
        F4,
        F5,
        F6,
        F7,
        F8,
        F9,
        F10,
        F11,
        F12,
        Space,
        Tab,
        Backspace,
        Enter,
        Escape,
        Equal,
        Minus,
        NumpadAdd,
        NumpadSubtract,
        ArrowLeft,
        ArrowRight,
        ArrowUp,
        ArrowDown,
    ]
};

#[test]
fn no_kind_claims_a_key_the_viewer_takes_first() {
    // One preset of each kind; the particles' bodies have keys the fountain lacks.
    for preset in ["tall-tank", "karman", "pool", "fountain", "cloth", "jelly"] {
        let mut state = AppState::open(preset, Backend::Cpu).expect("the preset");
        for &key in CANDIDATES {
            let viewer = keys::action_for_key(key, &state).is_some()
                || keys::FLY_KEYS.iter().any(|(k, ..)| *k == key);
            if viewer {
                assert!(
                    !state.sim.key(key),
                    "{preset}: the kind uses {key:?}, which the viewer takes first"
                );
            }
        }
    }
}

/// What the panels show from a kind (its status lines, its keys) is spelled in the characters
/// the panels' font has (Latin-1): none comes out as `?`.
#[test]
fn the_status_lines_and_keys_of_every_kind_show_in_the_panels_font() {
    let latin1 = |text: &str| {
        let shown = displayable(text);
        assert!(
            shown.chars().all(|c| c <= '\u{ff}') && !shown.contains('?'),
            "{text:?} shows as {shown:?}"
        );
    };
    for preset in ["tall-tank", "karman", "pool", "fountain", "cloth"] {
        let mut state = AppState::open(preset, Backend::Cpu).expect("the preset");
        state.apply(Edit::StepOnce).unwrap();
        assert!(state.advance().unwrap());
        for line in state.sim.status().expect("status") {
            latin1(&line);
        }
        for (key, action) in keys::help(state.sim.as_ref()) {
            latin1(key);
            latin1(action);
        }
    }
}

/// The particles' bodies toggle nodes and springs with P and the surface with T, as the
/// original's **p** did (the viewer's screenshot is F12 alone, so P reaches the kind).
#[test]
fn p_and_t_toggle_a_bodys_nodes_and_surface() {
    use winit::keyboard::KeyCode::{KeyP, KeyT};
    let mut state = AppState::open("cloth", Backend::Cpu).expect("the preset");
    let views = state.sim.views();
    let shown = |state: &AppState| views[state.sim.view()];
    assert_eq!(shown(&state), "surface");
    assert!(keys::action_for_key(KeyP, &state).is_none());
    assert!(state.sim.key(KeyP));
    assert_eq!(shown(&state), "both");
    assert!(state.sim.key(KeyT));
    assert_eq!(shown(&state), "nodes");
    assert!(state.sim.key(KeyP));
    assert_eq!(shown(&state), "surface");
    assert!(
        state.sim.key_help().iter().any(|(key, _)| *key == "P"),
        "the help lists P"
    );
}

/// The help overlay lists the camera's controls for the kinds the camera moves, and none for
/// ink's flat picture (whose orbit, pan, zoom and fly do nothing).
#[test]
fn the_help_lists_camera_controls_only_where_the_camera_moves_the_picture() {
    for (preset, camera) in [
        ("tall-tank", true),
        ("karman", false),
        ("pool", true),
        ("cloth", true),
    ] {
        let state = AppState::open(preset, Backend::Cpu).expect("the preset");
        let help: Vec<&str> = keys::help(state.sim.as_ref())
            .map(|(key, _)| *key)
            .collect();
        for (key, _) in keys::CAMERA_KEYS {
            assert_eq!(help.contains(key), camera, "{preset}: {key}");
        }
        assert!(help.contains(&"Space") && help.contains(&"F12"), "{preset}");
        assert_eq!(state.sim.flat(), !camera, "{preset}");
    }
}
