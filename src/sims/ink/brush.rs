//! The brush: its settings (the scene's `[brush]` section, the viewer's defaults), and the
//! viewer's drag turned into strokes. A drag is gathered into one straight segment per
//! simulation frame — from where the brush was when the last frame was stepped to where the
//! pointer is now — and painted as a scripted [`Stroke`] lasting that frame, so the ink laid is
//! a rate per second and does not depend on how many pointer events arrive (`specs/003-ink.md`
//! ambiguity 5: the original added a stamp per event).

use super::params::{in_range, positive};
use super::scene::Stroke;
use super::{BrushStamp, Stamp};
use crate::scene::Invalid;
use serde::Deserialize;

/// The viewer's brush: where the pointer drags, it pushes the fluid by `force` × its velocity
/// and paints `color` × `concentration` per second (the original's brush size, concentration
/// and brush-motion influence, as rates).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brush {
    /// Gaussian radius, m.
    pub radius: f32,
    /// Ink colour (0–1 per channel).
    pub color: [f32; 3],
    /// Ink added per second at the brush centre (times the colour).
    pub concentration: f32,
    /// Brush-motion influence, 1/s: the fluid under the brush is accelerated by force × the
    /// brush's velocity.
    pub force: f32,
    /// Whether each stroke takes a new random colour.
    pub random_colours: bool,
}

impl Brush {
    /// The brush when the scene says nothing: 2 % of the domain's width, white, 20 ink/s,
    /// 30 /s.
    pub fn default_for(width: f32) -> Brush {
        Brush {
            radius: 0.02 * width,
            color: [1.0; 3],
            concentration: 20.0,
            force: 30.0,
            random_colours: false,
        }
    }

    /// The brush with the `[brush]` section's values over the defaults.
    pub(super) fn with(mut self, file: &BrushFile) -> Brush {
        self.radius = file.radius.unwrap_or(self.radius);
        self.color = file.color.unwrap_or(self.color);
        self.concentration = file.concentration.unwrap_or(self.concentration);
        self.force = file.force.unwrap_or(self.force);
        self.random_colours = file.random_colours.unwrap_or(self.random_colours);
        self
    }

    /// Checks the ranges the panel's sliders allow, naming the `[brush]` keys; `size` is the
    /// domain's larger side, m.
    pub fn validate(&self, size: f32) -> Result<(), Invalid> {
        positive("brush.radius", self.radius, size, "m")?;
        in_range(
            "brush.concentration",
            self.concentration,
            0.0,
            1000.0,
            "ink/s",
        )?;
        in_range("brush.force", self.force, 0.0, 1000.0, "1/s")?;
        match self
            .color
            .iter()
            .find(|c| !(c.is_finite() && (0.0..=1.0).contains(*c)))
        {
            Some(c) => Err(Invalid::new(
                "brush.color",
                format!("each channel must be in [0, 1], got {c}"),
            )),
            None => Ok(()),
        }
    }

    /// The stroke this brush paints along `from` → `to` over one frame of `duration` s.
    fn stroke(&self, from: [f32; 2], to: [f32; 2], duration: f32) -> Stroke {
        Stroke {
            start: 0.0,
            duration,
            path: vec![from, to],
            radius: self.radius,
            ink: self.color.map(|c| c * self.concentration),
            force: self.force,
        }
    }
}

/// The scene's `[brush]` section: the viewer's brush at start.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrushFile {
    /// Gaussian radius, m.
    radius: Option<f32>,
    /// Ink per second at the centre.
    concentration: Option<f32>,
    /// Brush-motion influence, 1/s.
    force: Option<f32>,
    /// Ink colour, 0–1 per channel.
    color: Option<[f32; 3]>,
    /// A new random colour for each stroke.
    random_colours: Option<bool>,
    /// The stamp the ink is laid with: `round`, `bristle` or `dry`.
    pub(super) stamp: Option<BrushStamp>,
}

/// A drag under way: the segment the pointer covered since the last simulated frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drag {
    /// Where the brush was when the last frame was stepped (or where the drag began), m.
    pub from: [f32; 2],
    /// Where the pointer is now, m.
    pub to: [f32; 2],
    /// The button was let go: the segment is painted once more, then the drag ends (so a click
    /// between two frames paints one frame's ink).
    pub released: bool,
}

impl Drag {
    /// A drag starting at `point`.
    pub fn new(point: [f32; 2]) -> Drag {
        Drag {
            from: point,
            to: point,
            released: false,
        }
    }

    /// The stamps of substep `k` of `substeps` in a frame of `frame_dt` s: the brush's stroke
    /// from `from` to `to` over the frame, the substep's share of it (stamps spaced at most
    /// half the radius apart, [`Stroke::stamps`]).
    pub fn stamps(
        &self,
        brush: &Brush,
        frame_dt: f32,
        k: u32,
        substeps: u32,
        out: &mut Vec<Stamp>,
    ) {
        let stroke = brush.stroke(self.from, self.to, frame_dt);
        let n = substeps as f32;
        stroke.stamps(k as f32 / n, (k + 1) as f32 / n, out);
    }

    /// After a frame was stepped: the next segment starts where this one ended; `None` when
    /// the button was let go.
    pub fn after_frame(self) -> Option<Drag> {
        (!self.released).then_some(Drag {
            from: self.to,
            ..self
        })
    }

    /// A frame was shown without a step (the viewer is paused): the pointer's motion since is
    /// not a stroke, so the segment starts over where the pointer is.
    pub fn idle(self) -> Drag {
        Drag {
            from: self.to,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Source;
    use crate::sims::ink::InkSim;
    use crate::sims::{Backend, OpenOptions, Sim};

    /// 64² cells over 1 m, nothing scripted; a white brush of radius 0.05 m laying 10 ink/s.
    const SCENE: &str = "kind = \"ink\"\n[grid]\ncells = [64, 64]\n[params]\ndt = 0.02\n\
                         [brush]\nradius = 0.05\nconcentration = 10.0\nforce = 30.0\n";

    /// Ink one frame of a held brush lays: 3 channels × 10 ink/s × 0.02 s × π r² (the
    /// Gaussian's integral), m².
    const ONE_FRAME: f64 = 3.0 * 10.0 * 0.02 * std::f64::consts::PI * 0.05 * 0.05;

    fn open(text: &str) -> anyhow::Result<InkSim> {
        let source = Source::parse(text, "test", "test.toml")?;
        let options = OpenOptions {
            backend: Backend::Cpu,
            ..OpenOptions::default()
        };
        InkSim::open(&source, &options)
    }

    fn ink(sim: &InkSim) -> f64 {
        sim.solver.with_state(|_, ink, _, _| ink.total()).unwrap()
    }

    /// The picture spans pixels 50–150 of a 200 × 100 output: pixel x is 0.01·(x − 50) m.
    const SIZE: [u32; 2] = [200, 100];

    /// A drag from x = 0.3 m to 0.6 m within one frame, carried by `events` pointer events.
    fn drag(sim: &mut InkSim, events: usize) {
        for e in 0..events {
            let x = 80.0 + 30.0 * e as f32 / (events - 1) as f32;
            assert!(sim.pointer([x, 50.0], SIZE, true));
        }
    }

    /// The same drag delivered as 2 or as 16 events in one frame lays the same ink — one
    /// frame's worth, 10 ink/s × 0.02 s over the Gaussian — and the same push.
    #[test]
    fn a_drag_lays_the_same_ink_however_many_events_carry_it() {
        let mut laid = Vec::new();
        for events in [2, 16] {
            let mut sim = open(SCENE).unwrap();
            drag(&mut sim, events);
            sim.step().unwrap();
            let momentum = sim.solver.with_state(|flow, _, _, _| flow.u.sum()).unwrap();
            laid.push((ink(&sim), momentum));
        }
        let (two, sixteen) = (laid[0], laid[1]);
        assert!(
            (two.0 - sixteen.0).abs() < 0.03 * two.0,
            "ink {} vs {}",
            two.0,
            sixteen.0
        );
        assert!(
            (two.0 - ONE_FRAME).abs() < 0.05 * ONE_FRAME,
            "ink {} m², {ONE_FRAME} expected",
            two.0
        );
        assert!(
            two.1 > 0.0 && (two.1 - sixteen.1).abs() < 0.03 * two.1,
            "{laid:?}"
        );
    }

    /// While paused (frames shown, none stepped) a drag lays nothing and piles nothing up: the
    /// step after lays one frame of a brush held still where the pointer is, with no push.
    #[test]
    fn a_paused_sim_receives_nothing() {
        let mut sim = open(SCENE).unwrap();
        sim.frame_shown();
        for e in 0..16 {
            sim.pointer([80.0 + 2.0 * e as f32, 50.0], SIZE, true);
            sim.frame_shown();
        }
        assert_eq!(ink(&sim), 0.0);
        assert!(sim.extra_stamps.is_empty());
        sim.step().unwrap();
        let laid = ink(&sim);
        assert!(
            (laid - ONE_FRAME).abs() < 0.05 * ONE_FRAME,
            "ink {laid} m², one frame's {ONE_FRAME} expected"
        );
        let fastest = sim.solver.totals().2;
        assert!(fastest < 1e-3, "pushed at {fastest} m/s");
    }

    /// A restart starts the pause check again with the step count: a drag made after it and
    /// before any step is not painted as motion (its segment starts over at the pointer).
    #[test]
    fn after_a_restart_a_drag_before_any_step_is_not_painted_as_motion() {
        let mut sim = open(SCENE).unwrap();
        for _ in 0..3 {
            sim.step().unwrap();
            sim.frame_shown();
        }
        sim.restart().unwrap();
        for e in 0..16 {
            sim.pointer([80.0 + 2.0 * e as f32, 50.0], SIZE, true);
        }
        sim.frame_shown();
        sim.step().unwrap();
        let fastest = sim.solver.totals().2;
        assert!(fastest < 1e-3, "pushed at {fastest} m/s");
    }

    /// A stroke's stamps in one step lie along its path at most half a radius apart, and their
    /// shares add up to the stroke's rates.
    #[test]
    fn stroke_stamps_are_spaced_at_most_half_a_radius() {
        let stroke = Stroke {
            start: 0.0,
            duration: 1.0,
            path: vec![[0.1, 0.1], [0.5, 0.1], [0.5, 0.4]],
            radius: 0.02,
            ink: [2.0, 1.0, 0.0],
            force: 10.0,
        };
        let mut stamps = Vec::new();
        stroke.stamps(0.2, 0.6, &mut stamps);
        // 0.4 of a 0.7 m path: 0.28 m, at most 0.01 m apart → 28 stamps (29 when rounding
        // puts 0.28 / 0.01 a hair above 28).
        assert!((28..=29).contains(&stamps.len()), "{} stamps", stamps.len());
        for pair in stamps.windows(2) {
            let [a, b] = [pair[0].position, pair[1].position];
            assert!((a[0] - b[0]).hypot(a[1] - b[1]) <= 0.0100001, "{a:?} {b:?}");
        }
        let ink: f32 = stamps.iter().map(|s| s.ink[0]).sum();
        assert!((ink - 2.0).abs() < 1e-5, "{ink}");
        // The brush moves at 0.7 m/s: the pushes add up to force × 0.7 along x then y.
        let push: f32 = stamps.iter().map(|s| s.velocity[0] + s.velocity[1]).sum();
        assert!((push - 7.0).abs() < 1e-4, "{push}");
        assert!(stamps.iter().all(|s| s.per_second));
    }

    /// `[brush]` sets the viewer's brush; bad values name the file, line and key.
    #[test]
    fn the_brush_section_sets_the_brush_and_bad_values_are_named() {
        let sim = open(&format!("{SCENE}color = [0.2, 0.4, 0.6]\n")).unwrap();
        let b = sim.brush;
        assert_eq!(
            (b.radius, b.concentration, b.force, b.color),
            (0.05, 10.0, 30.0, [0.2, 0.4, 0.6])
        );
        let error = |text: String| open(&text).err().unwrap().to_string();
        assert_eq!(
            error(SCENE.replace("radius = 0.05", "radius = 2.0")),
            "test.toml:7: brush.radius: must be in (0, 1] m, got 2"
        );
        assert_eq!(
            error(SCENE.replace("force = 30.0", "force = -1.0")),
            "test.toml:9: brush.force: must be in [0, 1000] 1/s, got -1"
        );
        assert_eq!(
            error(format!("{SCENE}color = [0.2, 1.5, 0.6]\n")),
            "test.toml:10: brush.color: each channel must be in [0, 1], got 1.5"
        );
        let stamp = open(&format!("{SCENE}stamp = \"bristle\"\n")).unwrap();
        assert_eq!(stamp.solver.params.brush_stamp, BrushStamp::Bristle);
        let felt = error(format!("{SCENE}stamp = \"felt\"\n"));
        assert!(
            felt.starts_with("test.toml:10:")
                && felt
                    .contains("unknown variant `felt`, expected one of `round`, `bristle`, `dry`"),
            "{felt}"
        );
        let unknown = error(format!("{SCENE}size = 3\n"));
        assert!(
            unknown.starts_with("test.toml:10: brush.size: unknown field `size`"),
            "{unknown}"
        );
    }
}
