//! The imgui panels: functions from the viewer's state to the edits the user made this frame.
//! No simulation logic here; [`crate::viewer::state::AppState`] applies the edits.

use super::keys;
use crate::scene::PRESETS;
use crate::sims::pbf::render::{SmoothingFilter, View};
use crate::sims::pbf::Stage;
use crate::viewer::state::{AppState, Edit, FluidShape, RunMode, CONTAINERS};
use imgui::{Condition, TreeNodeFlags, Ui};

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
    /// Milliseconds per simulation stage per frame.
    pub stage_ms: Vec<(Stage, f64)>,
    /// Milliseconds per render pass of the latest measured frame, by pass name.
    pub pass_ms: Vec<(&'static str, Option<f64>)>,
    /// Whether particles reach GL through CUDA interop.
    pub interop: Option<bool>,
    /// Where the last screenshot went.
    pub last_screenshot: Option<String>,
    /// Statistics of the fluid (measured twice a second).
    pub fluid: Option<crate::output::FrameStats>,
}

/// Text the panels keep between frames (the scene-file path being typed).
#[derive(Clone, Debug, Default)]
pub struct PanelText {
    /// Scene file path field.
    pub scene_path: String,
}

/// Draws every panel and returns what the user asked for.
pub fn panels(ui: &Ui, state: &AppState, info: &FrameInfo, text: &mut PanelText) -> Vec<Action> {
    let mut actions = Vec::new();
    menu_bar(ui, state, &mut actions);
    if state.show_ui {
        ui.window("fluidlab")
            .position([10.0, 30.0], Condition::FirstUseEver)
            .size([440.0, 680.0], Condition::FirstUseEver)
            .build(|| {
                run_control(ui, state, &mut actions);
                live_parameters(ui, state, &mut actions);
                set_up(ui, state, text, &mut actions);
                rendering(ui, state, &mut actions);
                camera(ui, &mut actions);
            });
        let width = ui.io().display_size[0];
        ui.window("statistics")
            .position([width - 330.0, 30.0], Condition::FirstUseEver)
            .size([320.0, 420.0], Condition::FirstUseEver)
            .build(|| {
                status(ui, state, info);
                timings(ui, info);
            });
    }
    if state.show_help {
        help(ui);
    }
    actions
}

fn menu_bar(ui: &Ui, state: &AppState, actions: &mut Vec<Action>) {
    ui.main_menu_bar(|| {
        ui.menu("Scenes", || {
            for preset in PRESETS {
                let name = &preset.name;
                if ui.menu_item(name) {
                    actions.push(Action::Edit(Edit::LoadScene(name.to_string())));
                }
            }
        });
        ui.menu("View", || {
            for view in View::ALL {
                if ui
                    .menu_item_config(view.name())
                    .selected(state.render.view == view)
                    .build()
                {
                    let mut settings = state.render.clone();
                    settings.view = view;
                    actions.push(Action::Edit(Edit::Render(settings)));
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
    ui.text(format!("{:.1} FPS", info.fps));
    ui.text(format!(
        "scene {}: {} particles",
        state.scene.name,
        state.solver.particle_count()
    ));
    let transfer = match info.interop {
        Some(true) => "CUDA-GL interop",
        Some(false) => "host upload",
        None => "-",
    };
    ui.text(format!("backend {} ({transfer})", state.backend_note));
    ui.text(format!("solver steps {}", state.solver.steps_taken()));
    if let Some(stats) = &info.fluid {
        incompressibility(ui, state, stats);
    }
    if let Some(path) = &info.last_screenshot {
        ui.text(format!("saved {path}"));
    }
    if let Some(message) = &state.message {
        ui.text_colored([1.0, 0.45, 0.35, 1.0], message);
    }
}

/// The statistics that show incompressibility rather than ask for belief in it.
fn incompressibility(ui: &Ui, state: &AppState, stats: &crate::output::FrameStats) {
    let params = state.solver.params();
    let rule = match params.iteration_rule() {
        (_, most, None) => format!("{most} fixed"),
        (_, _, Some(tolerance)) => format!("until ≤ {:.2} %", 100.0 * tolerance),
    };
    ui.text(format!(
        "iterations {:.1} per step ({rule})",
        stats.solve_iterations
    ));
    ui.text(format!(
        "compression {:.3} % mean, {:.2} % max",
        100.0 * stats.compression_mean,
        100.0 * stats.compression_max
    ));
    if let Some(bottom) = stats.bottom_compression {
        ui.text(format!("bottom layer ρ/ρ₀ − 1 {:+.3} %", 100.0 * bottom));
    }
    if let Some(surface) = stats.surface_height {
        ui.text(format!("surface height {surface:.4} m"));
    }
    ui.text(format!(
        "kinetic energy {:.3e} J, |ρ/ρ₀ − 1| {:.2} % mean",
        stats.kinetic_energy,
        100.0 * stats.density_error_mean
    ));
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

fn live_parameters(ui: &Ui, state: &AppState, actions: &mut Vec<Action>) {
    if !ui.collapsing_header("Live parameters", TreeNodeFlags::DEFAULT_OPEN) {
        return;
    }
    let mut p = state.live_params.clone();
    let mut changed = false;
    changed |= ui.slider("rest density", 100.0, 3000.0, &mut p.rest_density);
    changed |= ui.slider("XSPH viscosity", 0.0, 1.0, &mut p.xsph_c);
    changed |= ui.slider("vorticity", 0.0, 1.0, &mut p.vorticity);
    changed |= ui.checkbox("coarse correction", &mut p.coarse_correction);
    // The stopping rule: 0 % runs exactly `iterations`; above, iterate until the mean
    // compression is met (docs/solver.md).
    let mut error_percent = 100.0 * p.max_density_error;
    if ui
        .slider_config("max density error (%)", 0.0, 1.0)
        .display_format("%.3f")
        .build(&mut error_percent)
    {
        p.max_density_error = (error_percent / 100.0).max(0.0);
        changed = true;
    }
    if p.max_density_error > 0.0 {
        changed |= ui.slider("min iterations", 1, 20, &mut p.min_iterations);
        changed |= ui.slider("max iterations", 1, 200, &mut p.max_iterations);
        p.min_iterations = p.min_iterations.min(p.max_iterations);
    } else {
        changed |= ui.slider("iterations", 1, 20, &mut p.iterations);
    }
    changed |= ui.slider("substeps", 1, 10, &mut p.substeps);
    changed |= ui
        .slider_config("time step (s)", 0.001, 0.05)
        .display_format("%.4f")
        .build(&mut p.dt);
    changed |= ui.slider("gravity x", -20.0, 20.0, &mut p.gravity[0]);
    changed |= ui.slider("gravity y", -20.0, 20.0, &mut p.gravity[1]);
    changed |= ui.slider("gravity z", -20.0, 20.0, &mut p.gravity[2]);
    if changed {
        actions.push(Action::Edit(Edit::LiveParams(p)));
    }
}

fn set_up(ui: &Ui, state: &AppState, text: &mut PanelText, actions: &mut Vec<Action>) {
    if !ui.collapsing_header("Set-up (applies on restart)", TreeNodeFlags::empty()) {
        return;
    }
    let mut setup = state.setup.clone();
    let mut changed = false;
    let mut containers = vec![format!("as in the scene ({})", state.loaded.name)];
    containers.extend(CONTAINERS.iter().map(|(name, _)| name.to_string()));
    let mut container = setup.container.map_or(0, |i| i + 1);
    if ui.combo_simple_string("container", &mut container, &containers) {
        setup.container = container.checked_sub(1);
        changed = true;
    }
    let shapes: Vec<&str> = FluidShape::ALL.iter().map(|s| s.name()).collect();
    let mut shape = FluidShape::ALL
        .iter()
        .position(|s| *s == setup.shape)
        .unwrap_or(0);
    if ui.combo_simple_string("fluid shape", &mut shape, &shapes) {
        setup.shape = FluidShape::ALL[shape];
        changed = true;
    }
    changed |= ui.slider("position x", 0.0, 1.0, &mut setup.position[0]);
    changed |= ui.slider("position y", 0.0, 1.0, &mut setup.position[1]);
    changed |= ui.slider("position z", 0.0, 1.0, &mut setup.position[2]);
    changed |= ui.slider("size", 0.05, 1.0, &mut setup.size);
    let mut spacing = setup.params.spacing;
    if ui
        .slider_config("spacing (m)", 0.005, 0.1)
        .display_format("%.4f")
        .build(&mut spacing)
    {
        let ratio = setup.params.kernel_radius / setup.params.spacing;
        setup.params.spacing = spacing;
        setup.params.kernel_radius = ratio * spacing;
        changed = true;
    }
    changed |= ui.slider(
        "initial rest density",
        100.0,
        3000.0,
        &mut setup.params.rest_density,
    );
    changed |= ui.slider("initial XSPH viscosity", 0.0, 1.0, &mut setup.params.xsph_c);
    changed |= ui.slider("initial vorticity", 0.0, 1.0, &mut setup.params.vorticity);
    if changed {
        actions.push(Action::Edit(Edit::Setup(setup)));
    }
    if ui.button("Restart with this set-up") {
        actions.push(Action::Edit(Edit::Restart));
    }
    ui.input_text("scene file", &mut text.scene_path).build();
    if ui.button("Load scene file") && !text.scene_path.trim().is_empty() {
        actions.push(Action::Edit(Edit::LoadScene(
            text.scene_path.trim().to_string(),
        )));
    }
}

fn rendering(ui: &Ui, state: &AppState, actions: &mut Vec<Action>) {
    if !ui.collapsing_header("Rendering", TreeNodeFlags::DEFAULT_OPEN) {
        return;
    }
    let mut s = state.render.clone();
    let mut changed = false;
    let views: Vec<&str> = View::ALL.iter().map(|v| v.name()).collect();
    let mut view = View::ALL.iter().position(|v| *v == s.view).unwrap_or(0);
    if ui.combo_simple_string("view", &mut view, &views) {
        s.view = View::ALL[view];
        changed = true;
    }
    changed |= ui.slider(
        "smoothing iterations",
        0,
        keys::MAX_SMOOTHING,
        &mut s.smoothing_iterations,
    );
    let filters = [SmoothingFilter::Bilateral, SmoothingFilter::NarrowRange];
    let names: Vec<&str> = filters.iter().map(|f| f.name()).collect();
    let mut filter = filters
        .iter()
        .position(|f| *f == s.smoothing_filter)
        .unwrap_or(0);
    if ui.combo_simple_string("smoothing filter", &mut filter, &names) {
        s.smoothing_filter = filters[filter];
        changed = true;
    }
    changed |= ui.color_edit3("fluid colour", &mut s.fluid_color);
    changed |= ui.slider("refraction index", 1.0, 2.0, &mut s.refraction_index);
    changed |= ui.slider("point size", 0.5, 3.0, &mut s.point_size);
    changed |= ui.slider("attenuation red (1/m)", 0.0, 10.0, &mut s.attenuation[0]);
    changed |= ui.slider("attenuation green (1/m)", 0.0, 10.0, &mut s.attenuation[1]);
    changed |= ui.slider("attenuation blue (1/m)", 0.0, 10.0, &mut s.attenuation[2]);
    if changed {
        actions.push(Action::Edit(Edit::Render(s)));
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

fn timings(ui: &Ui, info: &FrameInfo) {
    if !ui.collapsing_header("Timings", TreeNodeFlags::DEFAULT_OPEN) {
        return;
    }
    ui.text("simulation (ms per frame)");
    for (stage, ms) in &info.stage_ms {
        ui.text(format!("  {:<18} {ms:7.2}", stage.name()));
    }
    ui.text("render (ms, GL timer queries)");
    for (pass, ms) in &info.pass_ms {
        if let Some(ms) = ms {
            ui.text(format!("  {pass:<18} {ms:7.2}"));
        }
    }
}

fn help(ui: &Ui) {
    let size = ui.io().display_size;
    ui.window("Keys")
        .position([size[0] * 0.5, size[1] * 0.5], Condition::Always)
        .position_pivot([0.5, 0.5])
        .always_auto_resize(true)
        .build(|| {
            for (key, action) in keys::KEYS {
                ui.text(format!("{key:<22} {action}"));
            }
        });
}
