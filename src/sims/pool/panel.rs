//! Pool's panel: the model and the original's scenarios, the wave speed (or the springs'
//! stiffness), damping, drops and rain, the tools left drag uses, the grid (on restart) and
//! the light. Every edit but the grid applies before the next frame.

use super::drops::Target;
use super::params::{Edges, Model};
use super::scene::Island;
use super::sim::{PoolSim, Tool};
use crate::sims::choose;
use anyhow::Result;

/// The original's four scenarios and the open sea, as settings of the edges, horizontal
/// motion and islands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Edge nodes move only vertically: reflection and interference.
    Pool,
    /// Edge nodes fixed.
    Shore,
    /// No horizontal motion anywhere (springs): a pure height field.
    HeightField,
    /// Interior nodes fixed on islands.
    Islands,
    /// Absorbing edges.
    OpenSea,
}

impl Scenario {
    /// Every scenario, in menu order.
    pub const ALL: [Scenario; 5] = [
        Scenario::Pool,
        Scenario::Shore,
        Scenario::HeightField,
        Scenario::Islands,
        Scenario::OpenSea,
    ];

    /// The menu name.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Pool => "pool (walls reflect)",
            Scenario::Shore => "pond (fixed shore)",
            Scenario::HeightField => "pure height field",
            Scenario::Islands => "islands",
            Scenario::OpenSea => "open sea (absorbing)",
        }
    }
}

impl Tool {
    /// Every tool, in menu order.
    pub const ALL: [Tool; 3] = [Tool::Drops, Tool::PaintIsland, Tool::EraseIsland];

    /// The menu name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Drops => "drops",
            Tool::PaintIsland => "paint island",
            Tool::EraseIsland => "erase island",
        }
    }
}

impl PoolSim {
    /// The scenario the settings amount to (the first that matches).
    pub fn scenario(&self) -> Scenario {
        let p = self.params();
        match p.edges {
            Edges::Shore => Scenario::Shore,
            Edges::Open => Scenario::OpenSea,
            Edges::Pool if !self.scene.islands.is_empty() => Scenario::Islands,
            Edges::Pool if p.model == Model::Springs && !p.horizontal => Scenario::HeightField,
            Edges::Pool => Scenario::Pool,
        }
    }

    /// Sets the edges, horizontal motion and islands of `scenario` (Islands adds one in the
    /// middle when the scene has none; the others keep the scene's islands but Pool and
    /// height field, which have none).
    pub fn set_scenario(&mut self, scenario: Scenario) {
        let p = &mut self.scene.params;
        p.edges = match scenario {
            Scenario::Shore => Edges::Shore,
            Scenario::OpenSea => Edges::Open,
            _ => Edges::Pool,
        };
        p.horizontal = scenario != Scenario::HeightField;
        match scenario {
            Scenario::Islands if self.scene.islands.is_empty() => {
                let size = p.size;
                self.scene.islands.push(Island {
                    center: Some([0.5 * size, 0.5 * size]),
                    radius: Some(0.12 * size),
                    outline: None,
                });
            }
            Scenario::Pool | Scenario::HeightField => self.scene.islands.clear(),
            _ => {}
        }
        self.refresh_flags();
    }

    /// The panel; returns whether the user asked for a restart (a new grid).
    pub(super) fn panel_ui(&mut self, ui: &imgui::Ui) -> Result<bool> {
        use imgui::TreeNodeFlags;
        let mut restart = false;
        if ui.collapsing_header("Pool", TreeNodeFlags::DEFAULT_OPEN) {
            let mut flags_changed = false;
            if let Some(s) = choose(ui, "scenario", &Scenario::ALL, self.scenario(), |s| {
                s.name()
            }) {
                self.set_scenario(s);
            }
            let p = &mut self.scene.params;
            if let Some(m) = choose(ui, "model", &Model::ALL, p.model, Model::name) {
                p.model = m;
                flags_changed = true;
            }
            if let Some(e) = choose(ui, "edges", &Edges::ALL, p.edges, Edges::name) {
                p.edges = e;
                flags_changed = true;
            }
            let mut c = p.wave_speed;
            if ui.slider("wave speed (m/s)", 0.05, 5.0, &mut c) {
                p.wave_speed = c;
            }
            if p.model == Model::Springs {
                let mut k = p.stiffness();
                if ui
                    .input_float("stiffness k/m (1/s²)", &mut k)
                    .display_format("%.4g")
                    .build()
                    && k.is_finite()
                    && k > 0.0
                {
                    p.wave_speed = p.wave_speed_of(k);
                }
                ui.slider("pre-tension (spacing / rest)", 1.05, 4.0, &mut p.tension);
                flags_changed |= ui.checkbox("horizontal motion", &mut p.horizontal);
                ui.checkbox("shear springs", &mut p.shear);
                ui.text_disabled("only k/m matters: the node mass scales out");
            }
            ui.slider("damping (1/s)", 0.0, 5.0, &mut p.damping);
            ui.slider("frame time (s)", 0.002, 0.05, &mut p.dt);
            ui.text(format!(
                "{} substeps of {:.3} ms (c·dt/h = {:.2})",
                p.substeps(),
                1e3 * p.substep_dt(),
                p.wave_speed * p.substep_dt() / p.spacing()
            ));
            if flags_changed {
                self.refresh_flags();
            }
        }
        if ui.collapsing_header("Drops and rain", TreeNodeFlags::DEFAULT_OPEN) {
            if let Some(tool) = choose(ui, "left drag", &Tool::ALL, self.tool, Tool::name) {
                self.tool = tool;
            }
            let size = self.scene.params.size;
            let d = &mut self.scene.drops;
            ui.slider("drop radius (m)", 0.002 * size, 0.2 * size, &mut d.radius);
            ui.slider(
                "drop amplitude",
                -0.05 * size,
                0.05 * size,
                &mut d.amplitude,
            );
            if let Some(t) = choose(ui, "drops change", &Target::ALL, d.target, Target::name) {
                d.target = t;
            }
            ui.slider("rain (drops/s)", 0.0, 200.0, &mut d.rain);
            if ui.button("drop (G)") {
                self.drop_at_random();
            }
            ui.same_line();
            if ui.button("calm (C)") {
                self.clear();
            }
        }
        if ui.collapsing_header("Grid and light", TreeNodeFlags::empty()) {
            ui.slider("nodes per side (restart)", 16, 2048, &mut self.nodes_edit);
            restart |= ui.button("restart with this grid");
            let look = &mut self.scene.look;
            let mut light = look.light;
            if ui.slider_config("light", -1.0, 1.0).build_array(&mut light) && light[1] > 0.0 {
                look.light = light;
            }
            ui.checkbox("fine detail (bump map)", &mut look.detail);
        }
        Ok(restart)
    }
}
