//! The mouse over the picture: whether a left drag is the kind's (an ink brush, a pool drop,
//! a grabbed node: [`crate::sims::Sim::pointer`]) or the camera's is decided when the button
//! goes down, so a click without motion already paints, drops or grabs, and letting go without
//! motion lets go. The front end forwards its events here; tests drive them the same way.

use crate::viewer::state::AppState;
use std::collections::HashSet;
use winit::event::MouseButton;

/// The buttons held and where the cursor is, between events.
#[derive(Clone, Debug, Default)]
pub struct Pointer {
    /// Buttons pressed over the picture (a press on a panel is the panel's).
    held: HashSet<MouseButton>,
    /// The cursor, output pixels from the top-left.
    cursor: Option<[f32; 2]>,
    /// The left drag under way is the kind's (its pointer took the press).
    kind_drag: bool,
}

impl Pointer {
    /// Whether a left drag under way is the kind's, not the camera's.
    pub fn kind_drag(&self) -> bool {
        self.kind_drag
    }
}

impl AppState {
    /// `button` went down (`pressed`) or up where the cursor last moved to, in an output of
    /// `size` pixels; `over_panel`: the panels take the mouse, so a press is theirs. A left
    /// press the kind takes starts its drag, any other left press orbits the camera.
    pub fn mouse_button(
        &mut self,
        button: MouseButton,
        pressed: bool,
        over_panel: bool,
        size: [u32; 2],
    ) {
        let cursor = self.pointer.cursor;
        if pressed {
            if over_panel {
                return;
            }
            self.pointer.held.insert(button);
            if button == MouseButton::Left {
                self.pointer.kind_drag = cursor.is_some_and(|c| self.sim.pointer(c, size, true));
            }
        } else if self.pointer.held.remove(&button) && button == MouseButton::Left {
            if let Some(c) = cursor {
                self.sim.pointer(c, size, false);
            }
            self.pointer.kind_drag = false;
        }
    }

    /// The cursor moved to `position` in an output of `size` pixels: the kind's drag goes on,
    /// or the camera orbits (left) or pans (right, middle); without a button the kind sees the
    /// pointer hover.
    pub fn cursor_moved(&mut self, position: [f32; 2], size: [u32; 2]) {
        let previous = self.pointer.cursor.replace(position);
        let held = |b| self.pointer.held.contains(&b);
        let (left, pan) = (
            held(MouseButton::Left),
            held(MouseButton::Right) || held(MouseButton::Middle),
        );
        if left && self.pointer.kind_drag {
            self.sim.pointer(position, size, true);
            return;
        }
        if !left {
            self.sim.pointer(position, size, false);
        }
        let Some([x, y]) = previous else { return };
        let (dx, dy) = (position[0] - x, position[1] - y);
        if left {
            self.camera.orbit(dx, dy);
        } else if pan {
            self.camera.pan(dx, dy, size[1] as f32);
        }
    }

    /// The wheel turned by `steps` notches (up positive); over a panel it scrolls the panel.
    pub fn wheel(&mut self, steps: f32, over_panel: bool) {
        if !over_panel {
            self.camera.zoom(steps);
        }
    }

    /// Forgets buttons and drags (a new simulation starts with no drag under way).
    pub(super) fn forget_pointer(&mut self) {
        self.pointer.held.clear();
        self.pointer.kind_drag = false;
    }
}
