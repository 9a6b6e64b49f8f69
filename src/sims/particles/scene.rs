//! The particles kind's scene section: which scene (`fountain`, `cloth`, `jelly`), the frame
//! time, the scene's own section (`[fountain]`, `[cloth]` or `[jelly]`) and the world's
//! (`[world]`: gravity, wind, ground, sphere). Every constant is a key; a bad one is an error
//! naming the file, line and key (docs/particles.md lists each with unit, default and range).
//! Here: the types, their defaults and the parsing; `scene/validate.rs` the ranges.

use super::dynamics::Integrator;
use super::fountain::FountainParams;
use crate::scene::{syntax_error, Invalid, SceneError, Source};
use serde::Deserialize;

mod validate;

pub use validate::{
    fastest_wind, DECADES, MAX_BODY_SUBSTEPS, MAX_CLOTH_N, MAX_DT, MAX_FOUNTAIN_PARTICLES,
    MAX_GRAVITY, MAX_GROW_SECONDS, MAX_ITERATIONS, MAX_JELLY_N, MAX_RATE, MAX_STIFFNESS,
    MAX_VOLUME_STIFFNESS, MAX_WIND, RED_SPEEDS, THICKNESS_SPACINGS,
};

/// The three scenes of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Which {
    /// Water particles from a cube into a rippling basin.
    Fountain,
    /// A spring-mass cloth in the wind.
    Cloth,
    /// A spring-mass jelly cube dropping on the floor.
    Jelly,
}

impl Which {
    /// The scene's name: its `scene` value, its section and its preset.
    pub fn name(self) -> &'static str {
        match self {
            Which::Fountain => "fountain",
            Which::Cloth => "cloth",
            Which::Jelly => "jelly",
        }
    }
}

/// Which nodes of a cloth are pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pins {
    /// The two top corners (the original, Ten Minute Physics #14).
    Corners,
    /// The whole top row.
    Top,
    /// None: it falls.
    None,
}

impl Pins {
    /// Every choice, in the panel's order.
    pub const ALL: [Pins; 3] = [Pins::Corners, Pins::Top, Pins::None];

    /// The name in scene files and the panel.
    pub fn name(self) -> &'static str {
        match self {
            Pins::Corners => "corners",
            Pins::Top => "top",
            Pins::None => "none",
        }
    }
}

/// How a cloth starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Orientation {
    /// Hanging in the xy plane from its top row (at rest).
    Hanging,
    /// Lying flat in the xz plane (it falls and swings).
    Flat,
    /// Lying flat in the xz plane folded in half: the rows past the middle laid back over the
    /// first ones, 2·`thickness` above them, round a half-circle crease (`setup.rs` `fold`).
    Folded,
}

impl Orientation {
    /// All three, in the panel's order.
    pub const ALL: [Orientation; 3] =
        [Orientation::Hanging, Orientation::Flat, Orientation::Folded];

    /// The name in scene files and the panel.
    pub fn name(self) -> &'static str {
        match self {
            Orientation::Hanging => "hanging",
            Orientation::Flat => "flat",
            Orientation::Folded => "folded",
        }
    }
}

/// The default `grow_seconds`: springs switched on live grow to their rest lengths over
/// 0.5 s (30 frames).
pub const GROW_SECONDS: f32 = 0.5;

/// The jelly's default `volume_stiffness`, Pa: docs/particles/physics.md, "The volume term".
pub const VOLUME_STIFFNESS: f32 = 100.0;

/// A cloth's or jelly's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyParams {
    /// Nodes per side.
    pub n: usize,
    /// Side, m.
    pub size: f32,
    /// Total mass, kg.
    pub mass: f32,
    /// Structural springs' stiffness, N/m.
    pub stiffness: f32,
    /// Shear (diagonal) springs' stiffness, a fraction of the structural.
    pub shear: f32,
    /// Bending (cloth) or next-nearest "genbo" (jelly) springs' stiffness fraction; 0: none.
    pub bend: f32,
    /// Velocity damping, 1/s.
    pub damping: f32,
    /// How long springs switched on live take to grow to their rest lengths, s (`growth.rs`;
    /// 0: they are at them at once).
    pub grow_seconds: f32,
    /// The jelly's signed volume term per lattice cell, a bulk modulus K in Pa: a cell's
    /// energy ½·(K/V₀)·(V − V₀)² (`volume.rs`); 0: off (the cloth's is always 0).
    pub volume_stiffness: f32,
    /// Whether the body's nodes collide with each other (`self_collide.rs`; off: a folded
    /// cloth passes through itself).
    pub self_collision: bool,
    /// `self_collide`'s thickness h, m: nodes sharing no spring are kept this far apart.
    /// Default: the spacing, size/(n − 1) (below spacing/√2 a node slips through the middle of
    /// a cell of the layer it meets).
    pub thickness: f32,
    /// The integrator.
    pub integrator: Integrator,
    /// XPBD's Gauss–Seidel sweeps per substep.
    pub iterations: u32,
    /// Substeps per frame, each of the same length (a slow frame cannot make a body explode).
    pub substeps: u32,
    /// Cloth: which nodes are pinned (the jelly's are none).
    pub pins: Pins,
    /// Cloth: hanging or flat at the start.
    pub orientation: Orientation,
    /// The cloth's first node (top-left corner), the jelly's lowest corner, m.
    pub start: [f32; 3],
    /// **P**'s scale as the body starts (the panel's "red: ½mv² at (m/s)"): a node this fast
    /// is drawn red, m/s.
    pub red_speed: f32,
    /// **P**'s scale as the body starts (the panel's "decades to blue").
    pub energy_decades: f32,
}

impl BodyParams {
    /// The cloth: 32 × 32 nodes over 2 m, 0.4 kg (0.1 kg/m²), 200 N/m, hanging from its top
    /// corners.
    pub fn cloth() -> BodyParams {
        BodyParams {
            n: 32,
            size: 2.0,
            mass: 0.4,
            stiffness: 200.0,
            shear: 0.5,
            bend: 0.0,
            damping: 0.2,
            grow_seconds: GROW_SECONDS,
            volume_stiffness: 0.0,
            self_collision: false,
            thickness: 2.0 / 31.0,
            integrator: Integrator::Verlet,
            iterations: 10,
            substeps: 24,
            pins: Pins::Corners,
            orientation: Orientation::Hanging,
            start: [-1.0, 3.0, 0.0],
            red_speed: 3.0,
            energy_decades: 5.0,
        }
    }

    /// The jelly: 8³ nodes over 1 m, 2 kg, 40 N/m, dropped from 1.5 m; **P** red at the speed
    /// it lands at, √(2·9.82·1.5) = 5.4 m/s, blue-grey at 1 % of it (4 decades of ½mv²: its
    /// sloshing nodes, 0.1–4 m/s, spread over the ramp; at the cloth's 3 m/s and 5 decades
    /// 79 % of them drew in its top third).
    pub fn jelly() -> BodyParams {
        BodyParams {
            n: 8,
            size: 1.0,
            mass: 2.0,
            stiffness: 40.0,
            shear: 0.5,
            bend: 0.3,
            damping: 0.3,
            grow_seconds: GROW_SECONDS,
            volume_stiffness: VOLUME_STIFFNESS,
            self_collision: false,
            thickness: 1.0 / 7.0,
            integrator: Integrator::Verlet,
            iterations: 10,
            substeps: 12,
            pins: Pins::None,
            orientation: Orientation::Hanging,
            start: [-0.5, 1.5, -0.5],
            red_speed: 5.4,
            energy_decades: 4.0,
        }
    }

    /// The spacing of the lattice, size/(n − 1), m.
    pub fn spacing(&self) -> f32 {
        self.size / (self.n.max(2) - 1) as f32
    }

    /// The stiffness of [structural, shear, bending] springs, N/m.
    pub fn stiffnesses(&self) -> [f32; 3] {
        [
            self.stiffness,
            self.stiffness * self.shear,
            self.stiffness * self.bend,
        ]
    }
}

/// Gravity, wind, the ground and a sphere.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct World {
    /// Gravity, m/s².
    pub gravity: [f32; 3],
    /// Wind velocity, m/s.
    pub wind: [f32; 3],
    /// Cloth and jelly: wind force per m² per m/s along the normal, N·s/m³.
    pub wind_drag: f32,
    /// Cloth and jelly: whether the wind is felt relative to the triangle's velocity.
    pub wind_relative: bool,
    /// Ground height, m.
    pub ground: f32,
    /// Sphere centre, m.
    pub sphere_center: [f32; 3],
    /// Sphere radius, m (0: no sphere).
    pub sphere_radius: f32,
    /// Fraction of the tangential velocity lost per substep in contact.
    pub friction: f32,
}

impl Default for World {
    /// "Normal Danish gravity" (the original's 9.82 m/s²), no wind, the ground at 0.
    fn default() -> Self {
        World {
            gravity: [0.0, -9.82, 0.0],
            wind: [0.0; 3],
            wind_drag: 0.5,
            wind_relative: true,
            ground: 0.0,
            sphere_center: [0.0, 1.0, 0.0],
            sphere_radius: 0.0,
            friction: 0.1,
        }
    }
}

/// A validated particles scene.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticlesScene {
    /// Preset name or file stem.
    pub name: String,
    /// One line saying what the scene shows.
    pub description: String,
    /// Which scene.
    pub which: Which,
    /// Seconds per frame.
    pub dt: f32,
    /// The fountain's constants.
    pub fountain: FountainParams,
    /// The cloth's or jelly's constants.
    pub body: BodyParams,
    /// The world.
    pub world: World,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    kind: String,
    description: Option<String>,
    scene: Which,
    dt: Option<f32>,
    fountain: Option<FountainParams>,
    cloth: Option<BodyFile>,
    jelly: Option<BodyFile>,
    world: Option<World>,
}

/// A body section as written: what it leaves out keeps its scene's default.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyFile {
    n: Option<usize>,
    size: Option<f32>,
    mass: Option<f32>,
    stiffness: Option<f32>,
    shear: Option<f32>,
    bend: Option<f32>,
    damping: Option<f32>,
    grow_seconds: Option<f32>,
    volume_stiffness: Option<f32>,
    self_collision: Option<bool>,
    thickness: Option<f32>,
    integrator: Option<Integrator>,
    iterations: Option<u32>,
    substeps: Option<u32>,
    pins: Option<Pins>,
    orientation: Option<Orientation>,
    start: Option<[f32; 3]>,
    red_speed: Option<f32>,
    energy_decades: Option<f32>,
}

impl BodyFile {
    fn over(self, base: BodyParams) -> BodyParams {
        let mut body = BodyParams {
            n: self.n.unwrap_or(base.n),
            size: self.size.unwrap_or(base.size),
            mass: self.mass.unwrap_or(base.mass),
            stiffness: self.stiffness.unwrap_or(base.stiffness),
            shear: self.shear.unwrap_or(base.shear),
            bend: self.bend.unwrap_or(base.bend),
            damping: self.damping.unwrap_or(base.damping),
            grow_seconds: self.grow_seconds.unwrap_or(base.grow_seconds),
            volume_stiffness: self.volume_stiffness.unwrap_or(base.volume_stiffness),
            self_collision: self.self_collision.unwrap_or(base.self_collision),
            thickness: base.thickness,
            integrator: self.integrator.unwrap_or(base.integrator),
            iterations: self.iterations.unwrap_or(base.iterations),
            substeps: self.substeps.unwrap_or(base.substeps),
            pins: self.pins.unwrap_or(base.pins),
            orientation: self.orientation.unwrap_or(base.orientation),
            start: self.start.unwrap_or(base.start),
            red_speed: self.red_speed.unwrap_or(base.red_speed),
            energy_decades: self.energy_decades.unwrap_or(base.energy_decades),
        };
        // Left out: the spacing of the body as written.
        body.thickness = self.thickness.unwrap_or(body.spacing());
        body
    }
}

/// The `[world]` keys of cloth and jelly scenes that a fountain does not use.
const BODY_ONLY_WORLD_KEYS: [&str; 6] = [
    "wind_drag",
    "wind_relative",
    "ground",
    "sphere_center",
    "sphere_radius",
    "friction",
];

/// The first `[world]` key in `text` (valid TOML) that only cloth and jelly scenes use.
fn fountain_ignores(text: &str) -> Option<&'static str> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let world = table.get("world")?.as_table()?;
    BODY_ONLY_WORLD_KEYS
        .into_iter()
        .find(|key| world.contains_key(*key))
}

impl ParticlesScene {
    /// Parses and validates a particles scene source.
    pub fn from_source(source: &Source) -> Result<ParticlesScene, SceneError> {
        let file: File = toml::from_str(&source.text)
            .map_err(|error| syntax_error(&source.text, &source.origin, &error))?;
        let at = |invalid: Invalid| source.error_at(invalid);
        let (own, other) = match file.scene {
            Which::Fountain => (
                None,
                [
                    (Which::Cloth, file.cloth.is_some()),
                    (Which::Jelly, file.jelly.is_some()),
                ],
            ),
            Which::Cloth => (
                file.cloth,
                [
                    (Which::Jelly, file.jelly.is_some()),
                    (Which::Fountain, file.fountain.is_some()),
                ],
            ),
            Which::Jelly => (
                file.jelly,
                [
                    (Which::Cloth, file.cloth.is_some()),
                    (Which::Fountain, file.fountain.is_some()),
                ],
            ),
        };
        if let Some((which, _)) = other.iter().find(|(_, present)| *present) {
            return Err(at(Invalid::new(
                which.name(),
                format!(
                    "this is a {} scene; its section is [{}]",
                    file.scene.name(),
                    file.scene.name()
                ),
            )));
        }
        if file.scene == Which::Fountain {
            if let Some(key) = fountain_ignores(&source.text) {
                return Err(at(Invalid::new(
                    format!("world.{key}"),
                    "a fountain does not use it (its droplets meet the cube, the basin and the \
                     room's floor; their drag towards the wind is fountain.drag): it is for cloth \
                     and jelly scenes",
                )));
            }
        }
        let base = if file.scene == Which::Jelly {
            BodyParams::jelly()
        } else {
            BodyParams::cloth()
        };
        let scene = ParticlesScene {
            name: source.name.clone(),
            description: file.description.unwrap_or_default(),
            which: file.scene,
            dt: file.dt.unwrap_or(1.0 / 60.0),
            fountain: file.fountain.unwrap_or_default(),
            body: own.map_or(base, |b| b.over(base)),
            world: file.world.unwrap_or_default(),
        };
        scene.validate().map_err(at)?;
        Ok(scene)
    }

    /// The running scene's section name (`fountain`, `cloth`, `jelly`).
    pub fn section(&self) -> &'static str {
        self.which.name()
    }

    /// Nodes of the body.
    pub fn node_count(&self) -> usize {
        let n = self.body.n;
        if self.which == Which::Jelly {
            n * n * n
        } else {
            n * n
        }
    }

    /// Mass per node, kg.
    pub fn node_mass(&self) -> f32 {
        self.body.mass / self.node_count() as f32
    }

    /// The fewest substeps per frame an explicit integrator needs: dt·ω_max < 2, ω_max² ≤
    /// (2·Σk + 12·K·h)/m over the busiest node's springs and a jelly's cells (Gershgorin's
    /// bound, computed from the lattice: an interior node's).
    pub fn stable_substeps(&self) -> u32 {
        let [k, shear, bend] = self.body.stiffnesses();
        let (per_node, cells) = match self.which {
            // The volume term's row sum, 12·K·h, counted once (`Cells::node_stiffness`).
            Which::Jelly => {
                let h = self.body.size / (self.body.n.max(2) - 1) as f32;
                let springs = 6.0 * k + 20.0 * shear + 6.0 * bend;
                (springs, 12.0 * self.body.volume_stiffness * h)
            }
            _ => (4.0 * k + 4.0 * shear + 4.0 * bend, 0.0),
        };
        let omega = ((2.0 * per_node + cells) / self.node_mass()).sqrt();
        let substeps = (self.dt * omega / 2.0).floor() + 1.0;
        if substeps.is_finite() && substeps < u32::MAX as f32 {
            substeps as u32
        } else {
            u32::MAX
        }
    }
}
