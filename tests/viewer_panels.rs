//! The viewer's imgui panels laid out by imgui itself, with no window and no GL: every label of
//! every kind's panel fits the `fluidlab` panel at the default 1280×720 window, and the panels
//! stay inside the window after it shrinks (and the statistics window in its top-right corner
//! after it grows again).

use fluidlab::sims::Backend;
use fluidlab::viewer::panel::{self, FrameInfo, PanelMemory, WINDOW_SIZE};
use fluidlab::viewer::state::AppState;
use imgui::Ui;
use std::ffi::{CStr, CString};
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
    memory: PanelMemory,
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
            memory: PanelMemory::default(),
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
        let actions = panel::panels(ui, &mut self.state, &self.info, &mut self.memory);
        assert!(actions.is_empty(), "{actions:?}");
        after(ui);
        self.imgui.render();
    }

    /// The rectangles [x0, y0, x1, y1] of the `fluidlab` and `statistics` windows (a folded
    /// window's: its title bar) as a frame in a window of `display` places them.
    fn rectangles(&mut self, display: [f32; 2]) -> [[f32; 4]; 2] {
        let mut rectangles = [[0.0; 4]; 2];
        self.frame(display, |_| {
            for (name, rectangle) in [c"fluidlab", c"statistics"].iter().zip(&mut rectangles) {
                *rectangle = window_rectangle(name);
            }
        });
        rectangles
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

/// Opens or folds the statistics window.
fn fold_statistics(folded: bool) {
    // SAFETY: a public imgui call by window name, between new_frame and render.
    unsafe {
        imgui::sys::igSetWindowCollapsed_Str(
            c"statistics".as_ptr(),
            folded,
            imgui::sys::ImGuiCond_Always as i32,
        );
    }
}

/// The rectangle [x0, y0, x1, y1] of the imgui window `name`, folded or not, as this frame
/// placed it.
fn window_rectangle(name: &CStr) -> [f32; 4] {
    let (mut position, mut size) = (imgui::sys::ImVec2::zero(), imgui::sys::ImVec2::zero());
    // SAFETY: appends to a window this frame already began (Begin's flags apply only at the
    // first Begin of a frame); End is called whether or not it is folded, as imgui requires.
    unsafe {
        imgui::sys::igBegin(name.as_ptr(), std::ptr::null_mut(), 0);
        imgui::sys::igGetWindowPos(&mut position);
        imgui::sys::igGetWindowSize(&mut size);
        imgui::sys::igEnd();
    }
    [
        position.x,
        position.y,
        position.x + size.x,
        position.y + size.y,
    ]
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

/// After the window shrinks, both panels lie inside it, the statistics window folded or open;
/// when it grows back, the panels have their sizes back and the statistics window is in the
/// window's top-right corner again.
#[test]
fn the_panels_stay_inside_a_resized_window() {
    let mut panels = Panels::open("pool");
    let full = [WINDOW_SIZE.0, WINDOW_SIZE.1];
    panels.frame(full, |_| fold_statistics(false));
    let at_start = panels.rectangles(full);
    for (small, folded) in [([640.0, 360.0], true), ([500.0, 300.0], false)] {
        for _ in 0..3 {
            panels.frame(small, |_| fold_statistics(folded));
        }
        let rectangles = panels.rectangles(small);
        let inside =
            |[x0, y0, x1, y1]: [f32; 4]| x0 >= 0.0 && y0 >= 0.0 && x1 <= small[0] && y1 <= small[1];
        assert!(
            rectangles.into_iter().all(inside),
            "fluidlab at {:?}, statistics (folded: {folded}) at {:?} in a {small:?} window",
            rectangles[0],
            rectangles[1]
        );
    }
    for _ in 0..3 {
        panels.frame(full, |_| {});
    }
    let [panel, statistics] = panels.rectangles(full);
    assert_eq!(panel, at_start[0]);
    assert_eq!(statistics, at_start[1]);
    assert!(
        statistics[2] == full[0] - 10.0 && statistics[1] == 30.0,
        "statistics at {statistics:?}"
    );
}

/// The simulation times its stages only while the statistics window shows them (on CUDA the
/// events between stages would keep PBF's frames from running as CUDA graphs): not at start
/// (the window starts folded), yes once unfolded, not again when folded or the panels hidden.
#[test]
fn stages_are_timed_only_while_the_statistics_show_them() {
    let mut panels = Panels::open("dam-break");
    let full = [WINDOW_SIZE.0, WINDOW_SIZE.1];
    panels.frame(full, |_| {});
    assert!(!panels.state.stage_timing, "timed at start, folded");
    panels.frame(full, |_| fold_statistics(false));
    panels.frame(full, |_| {});
    assert!(
        panels.state.stage_timing,
        "not timed with the timings shown"
    );
    panels.frame(full, |_| fold_statistics(true));
    panels.frame(full, |_| {});
    assert!(
        !panels.state.stage_timing,
        "timed with the statistics folded"
    );
    panels.frame(full, |_| fold_statistics(false));
    panels.frame(full, |_| {});
    assert!(panels.state.stage_timing);
    panels.state.show_ui = false;
    panels.frame(full, |_| {});
    assert!(!panels.state.stage_timing, "timed with the panels hidden");
}
