//! Pool's panel: the model and the original's scenarios, the wave speed (or the springs'
//! stiffness), damping, drops and rain, the tools left drag uses, the grid (on restart) and
//! the light. Every edit but the grid applies before the next frame.

use super::drops::Target;
use super::memory::GridBytes;
use super::params::{Edges, Model, PoolParams, MAX_NODES, MIN_NODES};
use super::scene::{too_stiff, Island, HIGHEST_SUN, LOWEST_SUN};
use super::sim::{PoolSim, Tool};
use crate::scene::Invalid;
use crate::sims::choose;
use anyhow::Result;
use imgui::SliderFlags;

/// The original's four scenarios and the open sea, as settings of the edges, horizontal
/// motion and islands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Edge nodes move only vertically: reflection and interference.
    Pool,
    /// Edge nodes fixed.
    Shore,
    /// No horizontal motion anywhere: the spring lattice, nodes moving only vertically (a
    /// pure, nonlinear height field; the wave model has no horizontal motion to turn off, so
    /// this scenario switches to the springs).
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
            Edges::Pool if !self.scene.islands.is_empty() || self.has_painted_land() => {
                Scenario::Islands
            }
            Edges::Pool if p.model == Model::Springs && !p.horizontal => Scenario::HeightField,
            Edges::Pool => Scenario::Pool,
        }
    }

    /// Sets the edges, horizontal motion and islands of `scenario` (Islands adds one in the
    /// middle when there is no land; the others keep the scene's islands and painted land but
    /// Pool and height field, which have none: they take both away). The height field
    /// switches the wave model to the springs; when the springs would need more substeps
    /// than a frame may take, nothing changes and the error says why.
    pub fn set_scenario(&mut self, scenario: Scenario) -> Result<(), Invalid> {
        let before = self.scene.params;
        let p = &mut self.scene.params;
        p.edges = match scenario {
            Scenario::Shore => Edges::Shore,
            Scenario::OpenSea => Edges::Open,
            _ => Edges::Pool,
        };
        p.horizontal = scenario != Scenario::HeightField;
        if scenario == Scenario::HeightField {
            p.model = Model::Springs;
        }
        self.check_edit(before)?;
        let no_land = self.scene.islands.is_empty() && !self.has_painted_land();
        match scenario {
            Scenario::Islands if no_land => {
                let size = self.scene.params.size;
                self.scene.islands.push(Island {
                    center: Some([0.5 * size, 0.5 * size]),
                    radius: Some(0.12 * size),
                    outline: None,
                });
            }
            Scenario::Pool | Scenario::HeightField => {
                self.scene.islands.clear();
                self.painted.clear();
            }
            _ => {}
        }
        self.refresh_flags();
        Ok(())
    }

    /// Checks the parameters after a panel edit from `before` as a scene file's are checked
    /// ([`PoolParams::validate`]: ranges, at most `MAX_SUBSTEPS` substeps per frame); a refused
    /// edit puts `before` back.
    pub fn check_edit(&mut self, before: PoolParams) -> Result<(), Invalid> {
        self.scene.params.validate().inspect_err(|_| {
            self.scene.params = before;
        })
    }

    /// Sets the springs' stiffness per unit node mass k/m (1/s²), which sets the wave speed;
    /// refused, with the largest this lattice takes (`PoolParams::most_stiffness`), when it
    /// would fail the scene file's checks.
    pub fn set_stiffness(&mut self, k: f32) -> Result<(), Invalid> {
        if !(k.is_finite() && k > 0.0) {
            return Err(Invalid::new(
                "springs.stiffness",
                format!("must be a positive number of 1/s² (per unit node mass), got {k}"),
            ));
        }
        let before = self.scene.params;
        self.scene.params.wave_speed = before.wave_speed_of(k);
        let tried = self.scene.params;
        self.check_edit(before)
            .map_err(|error| match error.key.as_str() {
                "surface.wave_speed" => too_stiff(&tried, k),
                _ => error,
            })
    }

    /// Remembers the outcome of a panel edit: a refusal is shown until an edit is accepted.
    fn note_edit(&mut self, outcome: Result<(), Invalid>) -> bool {
        match outcome {
            Ok(()) => {
                self.refusal = None;
                true
            }
            Err(error) => {
                self.refusal = Some(format!("refused: {}: {}", error.key, error.message));
                false
            }
        }
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
                let outcome = self.set_scenario(s);
                self.note_edit(outcome);
            }
            if ui.is_item_hovered() && self.scene.params.model == Model::Wave {
                ui.tooltip_text(
                    "pure height field: the wave model has no horizontal motion; picking it \
                     switches to the springs with horizontal motion off",
                );
            }
            let before = self.scene.params;
            let mut stiffness = None;
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
                    .enter_returns_true(true)
                    .build()
                {
                    stiffness = Some(k);
                }
                ui.slider("pre-tension (spacing / rest)", 1.05, 4.0, &mut p.tension);
                flags_changed |= ui.checkbox("horizontal motion", &mut p.horizontal);
                ui.checkbox("shear springs", &mut p.shear);
                ui.text_disabled("only k/m matters: the node mass scales out");
            }
            ui.slider("damping (1/s)", 0.0, 5.0, &mut p.damping);
            ui.slider("frame time (s)", 0.002, 0.05, &mut p.dt);
            if self.scene.params != before {
                let outcome = self.check_edit(before);
                flags_changed &= self.note_edit(outcome);
            }
            if let Some(k) = stiffness {
                let outcome = self.set_stiffness(k);
                self.note_edit(outcome);
            }
            if let Some(refusal) = &self.refusal {
                let _colour = ui.push_style_color(imgui::StyleColor::Text, [1.0, 0.45, 0.35, 1.0]);
                ui.text_wrapped(refusal);
            }
            let p = &self.scene.params;
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
            ui.slider_config("nodes per side (restart)", MIN_NODES, MAX_NODES)
                .flags(SliderFlags::LOGARITHMIC | SliderFlags::ALWAYS_CLAMP)
                .build(&mut self.nodes_edit);
            if ui.is_item_hovered() {
                ui.tooltip_text(
                    "what scene files allow; memory and the time a frame takes grow as the \
                     square (the CPU: about 0.4 ms a frame at 256² on the wave model)",
                );
            }
            let bytes = self.edit_bytes();
            let available = crate::host::available_memory();
            if available.is_some_and(|a| bytes.host > a) && self.nodes_edit != self.params().nodes {
                let _colour = ui.push_style_color(imgui::StyleColor::Text, [1.0, 0.45, 0.35, 1.0]);
                ui.text_wrapped(format!(
                    "{}; more than the {} of host memory available",
                    grid_cost(self.nodes_edit, &bytes),
                    crate::host::format_bytes(available.unwrap_or(0)),
                ));
            } else {
                ui.text_disabled(grid_cost(self.nodes_edit, &bytes));
            }
            let again = self.confirming == Some(self.nodes_edit);
            let label = match again {
                true => "restart again to allocate it",
                false => "restart with this grid",
            };
            restart |= ui.button(label);
            let look = &mut self.scene.look;
            let (mut elevation, mut azimuth) = look.sun_angles();
            let lowest = LOWEST_SUN.asin().to_degrees();
            let mut moved = ui
                .slider_config("sun elevation (°)", lowest, HIGHEST_SUN)
                .flags(SliderFlags::ALWAYS_CLAMP)
                .build(&mut elevation);
            if ui.is_item_hovered() {
                ui.tooltip_text(format!(
                    "above the horizon: {lowest:.1}° (scenes allow no lower) to {HIGHEST_SUN}° \
                     (short of overhead, where the azimuth would be lost)"
                ));
            }
            moved |= ui
                .slider_config("sun azimuth (°)", -180.0, 180.0)
                .flags(SliderFlags::ALWAYS_CLAMP)
                .build(&mut azimuth);
            if moved {
                look.set_sun(elevation, azimuth);
            }
            ui.checkbox("fine detail (bump map)", &mut look.detail);
            let mut taps = look.far_taps.unwrap_or(true);
            if ui.checkbox("far taps (filter far waves)", &mut taps) {
                look.far_taps = Some(taps);
                self.gl_note = None;
            }
            if let Some(note) = self.gl_note.as_deref().filter(|_| ui.is_item_hovered()) {
                ui.tooltip_text(note);
            }
        }
        Ok(restart)
    }
}

/// What a grid of `nodes` a side costs (`bytes`, [`grid_bytes`](super::memory::grid_bytes) on
/// this backend): its node count, the state's memory and what drawing it adds, and where they
/// lie: host memory, and GPU memory when there is any.
pub fn grid_cost(nodes: usize, bytes: &GridBytes) -> String {
    let count = (nodes * nodes) as u64;
    let many = if count < 1_000_000 {
        count.to_string()
    } else {
        format!("{:.1} M", count as f64 * 1e-6)
    };
    let format = crate::host::format_bytes;
    let gpu = match bytes.gpu {
        0 => String::new(),
        gpu => format!(", {} of GPU memory", format(gpu)),
    };
    format!(
        "{nodes}² = {many} nodes: {} of state, {} to draw them: {} of host memory{gpu}",
        format(bytes.state),
        format(bytes.drawing),
        format(bytes.host),
    )
}
