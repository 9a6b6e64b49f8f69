//! What the user can change about the particles picture: the views of each scene (`--view`,
//! the View menu, **P** and **T**), the lens flare, the droplets' size and stretch, the
//! energy scale of a body's nodes and springs, and the panel's Rendering section.

use crate::sims::particles::scene::{BodyParams, ParticlesScene, Which, DECADES, RED_SPEEDS};
use imgui::SliderFlags;

/// The fountain's views (`--view`, the View menu), the first the default.
pub const FOUNTAIN_VIEWS: [&str; 4] = ["scene", "additive", "basin-nodes", "lines"];
/// The cloth's and jelly's views: the textured surface (**T**), nodes and springs coloured by
/// energy (**P**), or both.
pub const BODY_VIEWS: [&str; 3] = ["surface", "nodes", "both"];

/// The views of a scene.
pub fn views(which: Which) -> &'static [&'static str] {
    match which {
        Which::Fountain => &FOUNTAIN_VIEWS,
        _ => &BODY_VIEWS,
    }
}

/// Whether the fountain's view shows the basin's nodes (not its water).
pub(super) fn shows_basin_nodes(settings: &RenderSettings) -> bool {
    FOUNTAIN_VIEWS[settings.view.min(FOUNTAIN_VIEWS.len() - 1)] == "basin-nodes"
}

/// What the user can change about the picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderSettings {
    /// Index into [`views`].
    pub view: usize,
    /// The lens flare and the blinding overlay.
    pub flare: bool,
    /// A droplet's half-width, m.
    pub particle_size: f32,
    /// A droplet's extra length per m/s of on-screen speed, s.
    pub stretch: f32,
    /// A node moving this fast is drawn red, m/s: its kinetic energy ½mv² is the energy drawn
    /// red, for nodes and springs alike (`nodes::red_energy`); read through
    /// [`RenderSettings::red_speed`], within [`RED_SPEEDS`].
    pub speed_scale: f32,
    /// Decades of energy from red down to blue-grey (`nodes::energy_level`); read through
    /// [`RenderSettings::decades`], within [`DECADES`].
    pub energy_decades: f32,
}

impl Default for RenderSettings {
    /// **P**'s scale the cloth's (`BodyParams::cloth`).
    fn default() -> Self {
        let cloth = BodyParams::cloth();
        RenderSettings {
            view: 0,
            flare: true,
            particle_size: 0.02,
            stretch: 0.05,
            speed_scale: cloth.red_speed,
            energy_decades: cloth.energy_decades,
        }
    }
}

impl RenderSettings {
    /// The settings `scene` starts with: **P**'s scale from its body's `red_speed` and
    /// `energy_decades`.
    pub fn of(scene: &ParticlesScene) -> RenderSettings {
        RenderSettings {
            speed_scale: scene.body.red_speed,
            energy_decades: scene.body.energy_decades,
            ..RenderSettings::default()
        }
    }

    /// [`RenderSettings::speed_scale`] within [`RED_SPEEDS`] (a typed or set value past them
    /// draws as the nearest end).
    pub fn red_speed(&self) -> f32 {
        self.speed_scale.clamp(RED_SPEEDS[0], RED_SPEEDS[1])
    }

    /// [`RenderSettings::energy_decades`] within [`DECADES`].
    pub fn decades(&self) -> f32 {
        self.energy_decades.clamp(DECADES[0], DECADES[1])
    }

    /// Whether a body's textured surface is shown.
    pub fn shows_surface(&self) -> bool {
        self.view != 1
    }

    /// Whether a body's nodes and springs are shown.
    pub fn shows_nodes(&self) -> bool {
        self.view >= 1
    }

    /// **P** (`nodes`) or **T** (`surface`) toggled on a body's views; never both off.
    pub fn toggle(&mut self, nodes: bool) {
        let (mut surface, mut springs) = (self.shows_surface(), self.shows_nodes());
        if nodes {
            springs = !springs;
            surface |= !springs;
        } else {
            surface = !surface;
            springs |= !surface;
        }
        self.view = match (surface, springs) {
            (true, false) => 0,
            (false, true) => 1,
            _ => 2,
        };
    }
}

/// The render section of the panel.
pub fn panel(ui: &imgui::Ui, settings: &mut RenderSettings, which: Which) {
    if !ui.collapsing_header("Rendering", imgui::TreeNodeFlags::empty()) {
        return;
    }
    ui.checkbox("lens flare", &mut settings.flare);
    match which {
        Which::Fountain => {
            ui.slider_config("droplet size (m)", 0.002, 0.05)
                .flags(SliderFlags::ALWAYS_CLAMP)
                .build(&mut settings.particle_size);
            ui.slider_config("stretch (s)", 0.0, 0.2)
                .flags(SliderFlags::ALWAYS_CLAMP)
                .build(&mut settings.stretch);
        }
        _ => {
            // Energy: red at the kinetic energy ½mv² of a node at this speed, blue-grey
            // `energy_decades` decades below; a value typed (Ctrl+click) past the ends is
            // clamped to them.
            let [slow, fast] = RED_SPEEDS;
            ui.slider_config("red: ½mv² at (m/s)", slow, fast)
                .flags(SliderFlags::ALWAYS_CLAMP)
                .build(&mut settings.speed_scale);
            let [fewest, most] = DECADES;
            ui.slider_config("decades to blue", fewest, most)
                .flags(SliderFlags::ALWAYS_CLAMP)
                .build(&mut settings.energy_decades);
        }
    }
}
