//! The viewer's imgui panels laid out by imgui itself, with no window and no GL: every label of
//! every kind's panel fits the `fluidlab` panel at the default 1280×720 window.

use fluidlab::sims::Backend;
use fluidlab::viewer::panel::{self, FrameInfo, PanelText, WINDOW_SIZE};
use fluidlab::viewer::state::AppState;
use imgui::Ui;
use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};

/// imgui allows one context at a time: the tests take turns.
static IMGUI: Mutex<()> = Mutex::new(());

/// The sections that start folded, in the viewer's panel and the kinds' (a folded section's
/// controls are not laid out, so the test unfolds them).
const FOLDED: &[&str] = &[
    "Scene file",
    "Camera",
    "Set-up (applies on restart)",
    "Foam",
    "Box and grid",
    "Grid and light",
    "Rendering",
];

/// The viewer's panels on a running simulation, drawn by an imgui context of their own with
/// the window's settings (imgui's default font and style, no ini file).
struct Panels {
    imgui: imgui::Context,
    state: AppState,
    info: FrameInfo,
    text: PanelText,
    _turn: MutexGuard<'static, ()>,
}

impl Panels {
    fn open(scene: &str) -> Panels {
        let turn = IMGUI
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut imgui = imgui::Context::create();
        imgui.set_ini_filename(None);
        imgui.fonts().build_rgba32_texture();
        Panels {
            imgui,
            state: AppState::open(scene, Backend::Cpu).expect("the preset opens on the CPU"),
            info: FrameInfo::default(),
            text: PanelText::default(),
            _turn: turn,
        }
    }

    /// One frame in a window of `display` logical pixels; `after` runs once the panels are
    /// drawn.
    fn frame(&mut self, display: [f32; 2], after: impl FnOnce(&Ui)) {
        let io = self.imgui.io_mut();
        io.display_size = display;
        io.delta_time = 1.0 / 60.0;
        let ui = self.imgui.new_frame();
        let actions = panel::panels(ui, &mut self.state, &self.info, &mut self.text);
        assert!(actions.is_empty(), "{actions:?}");
        after(ui);
        self.imgui.render();
    }

    /// How far the widest item of the `fluidlab` panel reaches past the panel's inner edge,
    /// pixels (imgui's horizontal scroll range, from the last frame's layout), every section
    /// unfolded.
    fn overflow(&mut self) -> f32 {
        let display = [WINDOW_SIZE.0, WINDOW_SIZE.1];
        for _ in 0..3 {
            self.frame(display, unfold);
        }
        let mut overflow = None;
        self.frame(display, |ui| {
            overflow = ui.window("fluidlab").build(|| ui.scroll_max_x());
        });
        overflow.expect("the fluidlab panel is open")
    }
}

/// Unfolds every section of the `fluidlab` panel from the next frame on.
fn unfold(ui: &Ui) {
    ui.window("fluidlab").build(|| {
        for label in FOLDED {
            let label = CString::new(*label).unwrap();
            // SAFETY: inside the window, whose state storage keeps a header's open flag under
            // the header's ID.
            unsafe {
                let id = imgui::sys::igGetID_Str(label.as_ptr());
                imgui::sys::ImGuiStorage_SetInt(imgui::sys::igGetStateStorage(), id, 1);
            }
        }
    });
}

/// Every label and line of text in every kind's panel is whole at the default window: no item
/// reaches past the panel's edge, where imgui clips it (ink's "pressure carry-over" showed as
/// "pressure carry-o"). Each of particles' scenes, and the pool's spring lattice, has
/// controls of its own.
#[test]
fn every_kinds_panel_fits_its_labels() {
    let overflows = [
        "dam-break",
        "ink-painting",
        "pool",
        "pond",
        "fountain",
        "cloth",
        "jelly",
    ]
    .map(|scene| (scene, Panels::open(scene).overflow()));
    assert!(
        overflows.iter().all(|&(_, overflow)| overflow == 0.0),
        "items reach past the panel by (px): {overflows:?}"
    );
}
