//! The particles kind's scene section: which scene (`fountain`, `cloth`, `jelly`), the frame
//! time and substeps, and every constant of the scene's section and of the world (gravity,
//! wind, ground, sphere).

use super::dynamics::Integrator;
use super::fountain::FountainParams;
use crate::scene::{syntax_error, Invalid, SceneError, Source};
use crate::sims::ink::scene::line_of_key;
use glam::Vec3;
use serde::Deserialize;

/// The three scenes of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Which {
    /// Water particles from a cube into a rippling basin.
    Fountain,
    /// A spring-mass cloth hanging from two corners in the wind.
    Cloth,
    /// A spring-mass jelly cube dropping on the floor.
    Jelly,
}

/// Which nodes of a cloth are pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pins {
    /// The two top corners (the original).
    Corners,
    /// The whole top edge.
    Top,
    /// None (it falls).
    None,
}

/// A cloth's or jelly's constants.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BodyParams {
    /// Nodes per side.
    pub n: usize,
    /// Side, m.
    pub size: f32,
    /// Total mass, kg.
    pub mass: f32,
    /// Structural springs' stiffness, N/m.
    pub stiffness: f32,
    /// Shear springs' stiffness as a fraction of the structural.
    pub shear: f32,
    /// Bending (cloth) or next-nearest "genbo" (jelly) springs' stiffness fraction; 0: none.
    pub bend: f32,
    /// Velocity damping, 1/s.
    pub damping: f32,
    /// The integrator.
    pub integrator: Integrator,
    /// XPBD's Gauss–Seidel sweeps per substep.
    pub iterations: u32,
    /// Cloth: which nodes are pinned.
    pub pins: Pins,
    /// Where the body starts: the cloth's top-left corner, the jelly's lowest corner, m.
    pub start: [f32; 3],
}

impl BodyParams {
    /// The original's cloth: 32 × 32 over 2 m, 0.5 kg, pinned at its top corners.
    pub fn cloth() -> BodyParams {
        BodyParams {
            n: 32,
            size: 2.0,
            mass: 0.5,
            stiffness: 800.0,
            shear: 0.5,
            bend: 0.1,
            damping: 0.3,
            integrator: Integrator::Verlet,
            iterations: 10,
            pins: Pins::Corners,
            start: [-1.0, 3.0, 0.0],
        }
    }

    /// The jelly: 8³ nodes over 1 m, 2 kg, dropped from 1.5 m.
    pub fn jelly() -> BodyParams {
        BodyParams {
            n: 8,
            size: 1.0,
            mass: 2.0,
            stiffness: 1500.0,
            shear: 0.5,
            bend: 0.3,
            damping: 0.2,
            integrator: Integrator::Verlet,
            iterations: 10,
            pins: Pins::None,
            start: [-0.5, 1.5, -0.5],
        }
    }
}

impl Default for BodyParams {
    fn default() -> Self {
        BodyParams::cloth()
    }
}

/// Gravity, wind, the ground and a sphere.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct World {
    /// Gravity, m/s².
    pub gravity: [f32; 3],
    /// Wind, m/s.
    pub wind: [f32; 3],
    /// Wind force per m² per m/s along the normal, N·s/m³.
    pub wind_drag: f32,
    /// Ground height, m.
    pub ground: f32,
    /// Sphere centre, m (radius 0: none).
    pub sphere_center: [f32; 3],
    /// Sphere radius, m.
    pub sphere_radius: f32,
    /// Tangential velocity lost on contact.
    pub friction: f32,
}

impl Default for World {
    fn default() -> Self {
        World {
            gravity: [0.0, -9.81, 0.0],
            wind: [0.0; 3],
            wind_drag: 0.6,
            ground: 0.0,
            sphere_center: [0.0, 1.0, 0.6],
            sphere_radius: 0.0,
            friction: 0.3,
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
    /// Substeps per frame (fixed: a slow frame cannot make a body explode).
    pub substeps: u32,
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
    substeps: Option<u32>,
    fountain: Option<FountainFile>,
    cloth: Option<BodyParams>,
    jelly: Option<BodyParams>,
    world: Option<World>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FountainFile {
    rate: Option<f32>,
    lifetime: Option<f32>,
    fade: Option<f32>,
    max_particles: Option<usize>,
    spread: Option<f32>,
    speed: Option<[f32; 2]>,
    horizontal: Option<f32>,
    direction: Option<[f32; 3]>,
    drag: Option<f32>,
    cube: Option<f32>,
    cut: Option<f32>,
    boost: Option<f32>,
    bounce: Option<f32>,
    basin: Option<f32>,
    level: Option<f32>,
    push: Option<f32>,
    splash_radius: Option<f32>,
    surface_nodes: Option<usize>,
    surface_speed: Option<f32>,
    surface_damping: Option<f32>,
    seed: Option<u64>,
}

impl ParticlesScene {
    /// Parses and validates a particles scene source.
    pub fn from_source(source: &Source) -> Result<ParticlesScene, SceneError> {
        let file: File = toml::from_str(&source.text)
            .map_err(|error| syntax_error(&source.text, &source.origin, &error))?;
        let mut fountain = FountainParams::default();
        if let Some(f) = &file.fountain {
            macro_rules! take {
                ($($key:ident),*) => { $(if let Some(v) = f.$key { fountain.$key = v; })* };
            }
            take!(
                rate,
                lifetime,
                fade,
                max_particles,
                spread,
                speed,
                horizontal,
                drag,
                cube,
                cut,
                boost,
                bounce,
                basin,
                level,
                push,
                splash_radius,
                surface_nodes,
                surface_speed,
                surface_damping,
                seed
            );
            if let Some(d) = f.direction {
                fountain.direction = Vec3::from(d);
            }
        }
        let world = file.world.unwrap_or_default();
        fountain.gravity = Vec3::from(world.gravity);
        fountain.wind = Vec3::from(world.wind);
        let body = match file.scene {
            Which::Jelly => file.jelly.unwrap_or_else(BodyParams::jelly),
            _ => file.cloth.unwrap_or_else(BodyParams::cloth),
        };
        let scene = ParticlesScene {
            name: source.name.clone(),
            description: file.description.clone().unwrap_or_default(),
            which: file.scene,
            dt: file.dt.unwrap_or(1.0 / 60.0),
            substeps: file.substeps.unwrap_or(8),
            fountain,
            body,
            world,
        };
        scene.validate().map_err(|invalid| SceneError {
            origin: source.origin.clone(),
            line: line_of_key(&source.text, &invalid.key),
            key: Some(invalid.key),
            message: invalid.message,
        })?;
        Ok(scene)
    }

    /// Checks the ranges of the values that size or drive the simulation.
    pub fn validate(&self) -> Result<(), Invalid> {
        let check = |key: &str, ok: bool, what: String| {
            if ok {
                Ok(())
            } else {
                Err(Invalid::new(key, what))
            }
        };
        check(
            "dt",
            self.dt.is_finite() && self.dt > 0.0 && self.dt <= 0.1,
            format!("must be in (0, 0.1] s, got {}", self.dt),
        )?;
        check(
            "substeps",
            (1..=256).contains(&self.substeps),
            format!("must be 1 to 256, got {}", self.substeps),
        )?;
        let f = &self.fountain;
        check(
            "fountain.rate",
            f.rate.is_finite() && (0.0..=1e8).contains(&f.rate),
            format!("must be in [0, 1e8] particles/s, got {}", f.rate),
        )?;
        check(
            "fountain.lifetime",
            f.lifetime.is_finite() && f.lifetime > 0.0 && f.lifetime <= 1e3,
            format!("must be in (0, 1000] s, got {}", f.lifetime),
        )?;
        check(
            "fountain.max_particles",
            (1..=1 << 26).contains(&f.max_particles),
            format!("must be 1 to {}, got {}", 1 << 26, f.max_particles),
        )?;
        check(
            "fountain.surface_nodes",
            (8..=2048).contains(&f.surface_nodes),
            format!("must be 8 to 2048, got {}", f.surface_nodes),
        )?;
        let finite = [
            f.fade,
            f.spread,
            f.speed[0],
            f.speed[1],
            f.horizontal,
            f.drag,
            f.cube,
            f.cut,
            f.boost,
            f.bounce,
            f.basin,
            f.level,
            f.push,
            f.splash_radius,
            f.surface_speed,
            f.surface_damping,
        ];
        check(
            "fountain",
            finite.iter().all(|v| v.is_finite() && v.abs() <= 1e4)
                && f.cube > 0.0
                && f.basin > 0.5 * f.cube
                && f.splash_radius > 0.0
                && f.surface_speed > 0.0,
            "values must be finite, the cube and splash radius positive, the basin wider than \
             the cube"
                .into(),
        )?;
        let b = &self.body;
        let section = if self.which == Which::Jelly {
            "jelly"
        } else {
            "cloth"
        };
        let most = if self.which == Which::Jelly { 64 } else { 1024 };
        check(
            &format!("{section}.n"),
            (2..=most).contains(&b.n),
            format!("must be 2 to {most} nodes per side, got {}", b.n),
        )?;
        for (key, v) in [
            ("size", b.size),
            ("mass", b.mass),
            ("stiffness", b.stiffness),
        ] {
            check(
                &format!("{section}.{key}"),
                v.is_finite() && v > 0.0 && v <= 1e9,
                format!("must be in (0, 1e9], got {v}"),
            )?;
        }
        for (key, v) in [("shear", b.shear), ("bend", b.bend), ("damping", b.damping)] {
            check(
                &format!("{section}.{key}"),
                v.is_finite() && (0.0..=100.0).contains(&v),
                format!("must be in [0, 100], got {v}"),
            )?;
        }
        check(
            &format!("{section}.iterations"),
            (1..=1000).contains(&b.iterations),
            format!("must be 1 to 1000, got {}", b.iterations),
        )?;
        let w = &self.world;
        let all = w
            .gravity
            .iter()
            .chain(&w.wind)
            .chain(&w.sphere_center)
            .chain(&b.start)
            .chain([&w.wind_drag, &w.ground, &w.sphere_radius, &w.friction]);
        check(
            "world",
            all.clone().all(|v| v.is_finite() && v.abs() <= 1e4)
                && (0.0..=1.0).contains(&w.friction)
                && w.sphere_radius >= 0.0,
            "values must be finite and at most 1e4 in size, friction in [0, 1], the sphere's \
             radius at least 0"
                .into(),
        )
    }
}
