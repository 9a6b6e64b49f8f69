//! PBF's panel sections (live parameters, set-up, rendering) and keys (views, smoothing): they
//! edit the running [`PbfSim`] through [`PbfEdit`]s.

use super::render::{RenderSettings, SmoothingFilter, View};
use super::setup::{FluidShape, CONTAINERS};
use super::sim::{PbfEdit, PbfSim};
use anyhow::Result;
use imgui::{TreeNodeFlags, Ui};
use winit::keyboard::KeyCode;

/// Upper bound of the smoothing-iterations control.
pub const MAX_SMOOTHING: u32 = 20;

/// PBF's keys, as the help overlay lists them.
pub const KEYS: &[(&str, &str)] = &[
    (
        "1 2 3 4 5 6 7",
        "view: fluid, particles (speed), depth, smoothed depth, thickness, normals, particles (density)",
    ),
    ("F", "smoothing filter: bilateral / narrow-range"),
    ("+ -", "more / fewer smoothing iterations"),
];

/// The render settings a key asks for, or `None` when the key is not PBF's.
pub fn render_for_key(key: KeyCode, current: &RenderSettings) -> Option<RenderSettings> {
    let mut s = current.clone();
    match key {
        KeyCode::Digit1 => s.view = View::Fluid,
        KeyCode::Digit2 => s.view = View::Particles,
        KeyCode::Digit3 => s.view = View::Depth,
        KeyCode::Digit4 => s.view = View::SmoothedDepth,
        KeyCode::Digit5 => s.view = View::Thickness,
        KeyCode::Digit6 => s.view = View::Normals,
        KeyCode::Digit7 => s.view = View::Density,
        KeyCode::KeyF => {
            s.smoothing_filter = match s.smoothing_filter {
                SmoothingFilter::Bilateral => SmoothingFilter::NarrowRange,
                SmoothingFilter::NarrowRange => SmoothingFilter::Bilateral,
            }
        }
        KeyCode::Equal | KeyCode::NumpadAdd => {
            s.smoothing_iterations = (s.smoothing_iterations + 1).min(MAX_SMOOTHING)
        }
        KeyCode::Minus | KeyCode::NumpadSubtract => {
            s.smoothing_iterations = s.smoothing_iterations.saturating_sub(1)
        }
        _ => return None,
    }
    Some(s)
}

/// Draws PBF's sections and applies their edits; returns whether a restart was asked for.
pub fn sections(ui: &Ui, sim: &mut PbfSim) -> Result<bool> {
    live_parameters(ui, sim)?;
    let restart = set_up(ui, sim)?;
    rendering(ui, sim)?;
    foam(ui, sim)?;
    Ok(restart)
}

/// The `foam` stage's controls (`[foam]` in a scene file).
fn foam(ui: &Ui, sim: &mut PbfSim) -> Result<()> {
    if !ui.collapsing_header("Foam", TreeNodeFlags::empty()) {
        return Ok(());
    }
    let mut f = sim.foam.clone();
    let mut changed = ui.checkbox("foam, spray and bubbles", &mut f.enabled);
    changed |= ui.slider(
        "trapped-air rate (1/s)",
        0.0,
        2000.0,
        &mut f.trapped_air_rate,
    );
    changed |= ui.slider("wave-crest rate (1/s)", 0.0, 2000.0, &mut f.wave_crest_rate);
    changed |= ui.slider("foam lifetime (s)", 0.1, 20.0, &mut f.lifetime);
    changed |= ui.slider("max count", 0, 1_000_000, &mut f.max_count);
    if changed {
        sim.apply(PbfEdit::Foam(f))?;
    }
    Ok(())
}

fn live_parameters(ui: &Ui, sim: &mut PbfSim) -> Result<()> {
    if !ui.collapsing_header("Live parameters", TreeNodeFlags::DEFAULT_OPEN) {
        return Ok(());
    }
    let mut p = sim.live_params.clone();
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
        sim.apply(PbfEdit::LiveParams(p))?;
    }
    Ok(())
}

fn set_up(ui: &Ui, sim: &mut PbfSim) -> Result<bool> {
    if !ui.collapsing_header("Set-up (applies on restart)", TreeNodeFlags::empty()) {
        return Ok(false);
    }
    let mut setup = sim.setup.clone();
    let mut changed = false;
    let mut containers = vec![format!("as in the scene ({})", sim.loaded.name)];
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
        sim.apply(PbfEdit::Setup(setup))?;
    }
    Ok(ui.button("Restart with this set-up"))
}

fn rendering(ui: &Ui, sim: &mut PbfSim) -> Result<()> {
    if !ui.collapsing_header("Rendering", TreeNodeFlags::DEFAULT_OPEN) {
        return Ok(());
    }
    let mut s = sim.render.clone();
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
        MAX_SMOOTHING,
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
    if s.smoothing_filter == SmoothingFilter::NarrowRange {
        changed |= ui.checkbox(
            "last iteration in 2-D (smooth_depth_2d)",
            &mut s.smooth_depth_2d,
        );
        changed |= ui.checkbox("bias correction (mirrored pairs)", &mut s.bias_correction);
    }
    changed |= ui.color_edit3("fluid colour", &mut s.fluid_color);
    changed |= ui.slider("refraction index", 1.0, 2.0, &mut s.refraction_index);
    changed |= ui.slider("point size", 0.5, 3.0, &mut s.point_size);
    changed |= ui.slider("attenuation red (1/m)", 0.0, 10.0, &mut s.attenuation[0]);
    changed |= ui.slider("attenuation green (1/m)", 0.0, 10.0, &mut s.attenuation[1]);
    changed |= ui.slider("attenuation blue (1/m)", 0.0, 10.0, &mut s.attenuation[2]);
    changed |= ui.checkbox("anisotropy (ellipsoids)", &mut s.anisotropy);
    changed |= ui.checkbox("shadow and caustics", &mut s.fluid_light);
    changed |= ui.slider("exposure", 0.25, 4.0, &mut s.exposure);
    changed |= ui.checkbox("antialiasing (FXAA)", &mut s.antialias);
    if changed {
        sim.apply(PbfEdit::Render(s))?;
    }
    Ok(())
}
