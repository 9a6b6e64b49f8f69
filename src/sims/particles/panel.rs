//! The particles panel: every constant of the running scene (live unless marked), the world's
//! gravity, wind, ground and sphere.

use super::dynamics::Integrator;
use super::scene::{Pins, Which};
use super::sim::{ParticlesSim, State};
use crate::sims::choose;

/// Draws the panel; returns whether the user asked for a restart.
pub fn panel_ui(sim: &mut ParticlesSim, ui: &imgui::Ui) -> bool {
    use imgui::TreeNodeFlags;
    let mut restart = false;
    let which = sim.scene.which;
    if which == Which::Fountain && ui.collapsing_header("Fountain", TreeNodeFlags::DEFAULT_OPEN) {
        let f = &mut sim.scene.fountain;
        ui.slider("rate (particles/s)", 0.0, 200_000.0, &mut f.rate);
        ui.slider("lifetime (s)", 0.1, 20.0, &mut f.lifetime);
        ui.slider("fade (last fraction)", 0.0, 1.0, &mut f.fade);
        ui.slider("emitter spread (m)", 0.0, 0.3, &mut f.spread);
        ui.slider("vertical speed min (m/s)", 0.0, 15.0, &mut f.speed[0]);
        ui.slider("vertical speed max (m/s)", 0.0, 15.0, &mut f.speed[1]);
        ui.slider("horizontal spread (m/s)", 0.0, 3.0, &mut f.horizontal);
        let mut direction = f.direction.to_array();
        if ui
            .slider_config("jet direction", -1.0, 1.0)
            .build_array(&mut direction)
        {
            f.direction = direction.into();
        }
        ui.slider("air drag (1/s)", 0.0, 5.0, &mut f.drag);
        ui.slider("first hit: vertical kept", 0.0, 1.0, &mut f.cut);
        ui.slider("first hit: horizontal boost", 0.0, 5.0, &mut f.boost);
        ui.slider("bounce", 0.0, 1.0, &mut f.bounce);
        ui.slider("landing push (m/s per m/s)", -0.2, 0.0, &mut f.push);
        if let State::Fountain(state) = &mut sim.state {
            state.params = *f;
            ui.text(format!("{} alive", state.len()));
        }
    }
    if which != Which::Fountain && ui.collapsing_header("Body", TreeNodeFlags::DEFAULT_OPEN) {
        let b = &mut sim.scene.body;
        if let Some(i) = choose(ui, "integrator", &Integrator::ALL, b.integrator, |i| {
            i.name()
        }) {
            b.integrator = i;
        }
        ui.slider("substeps", 1, 64, &mut sim.scene.substeps);
        ui.slider("XPBD iterations", 1, 100, &mut b.iterations);
        ui.slider("damping (1/s)", 0.0, 5.0, &mut b.damping);
        ui.separator();
        ui.text_disabled("applies on restart:");
        ui.slider("n (nodes per side)", 2, 256, &mut b.n);
        ui.slider("stiffness (N/m)", 1.0, 1e5, &mut b.stiffness);
        ui.slider("shear fraction", 0.0, 2.0, &mut b.shear);
        ui.slider("bend fraction", 0.0, 2.0, &mut b.bend);
        ui.slider("mass (kg)", 0.01, 20.0, &mut b.mass);
        if which == Which::Cloth {
            let pins = [Pins::Corners, Pins::Top, Pins::None];
            if let Some(p) = choose(ui, "pins", &pins, b.pins, |p| match p {
                Pins::Corners => "two corners",
                Pins::Top => "top edge",
                Pins::None => "none",
            }) {
                b.pins = p;
            }
        }
        restart |= ui.button("restart");
    }
    if ui.collapsing_header("World", TreeNodeFlags::empty()) {
        let w = &mut sim.scene.world;
        ui.slider_config("wind (m/s)", -20.0, 20.0)
            .build_array(&mut w.wind);
        ui.slider("wind drag", 0.0, 5.0, &mut w.wind_drag);
        ui.slider_config("gravity (m/s²)", -20.0, 20.0)
            .build_array(&mut w.gravity);
        ui.slider("sphere radius (m)", 0.0, 2.0, &mut w.sphere_radius);
        ui.slider("friction", 0.0, 1.0, &mut w.friction);
        if let State::Fountain(f) = &mut sim.state {
            f.params.wind = w.wind.into();
            f.params.gravity = w.gravity.into();
        }
    }
    restart
}
