//! The particles scene's validation: every value's range, naming its key (the parsing and
//! the defaults are `scene.rs`'s; docs/particles.md lists each key with unit, default and
//! range).

use super::{Orientation, ParticlesScene, Pins, Which};
use crate::scene::Invalid;
use crate::sims::pool::params::MAX_SUBSTEPS;
use glam::Vec3;

/// Most fountain particles emitted per second (`fountain.rate`).
pub const MAX_RATE: f32 = 1e8;
/// Most fountain particles alive at once (`fountain.max_particles`).
pub const MAX_FOUNTAIN_PARTICLES: usize = 1 << 26;
/// Longest frame (`dt`), s.
pub const MAX_DT: f32 = 0.1;
/// Most nodes per side of a cloth (`n`).
pub const MAX_CLOTH_N: usize = 1024;
/// Most nodes per side of a jelly (`n`).
pub const MAX_JELLY_N: usize = 64;
/// Stiffest spring (`stiffness`), N/m.
pub const MAX_STIFFNESS: f32 = 1e9;
/// Stiffest volume term (`volume_stiffness`, a bulk modulus), Pa: the springs' limit per m.
pub const MAX_VOLUME_STIFFNESS: f32 = 1e9;
/// Longest growth of springs switched on live (`grow_seconds`), s.
pub const MAX_GROW_SECONDS: f32 = 60.0;
/// Most substeps of a body's frame (`substeps`).
pub const MAX_BODY_SUBSTEPS: u32 = 4096;
/// Most XPBD iterations a substep (`iterations`).
pub const MAX_ITERATIONS: u32 = 1000;
/// Fastest wind (`world.wind`'s length, whatever its direction), m/s: past the strongest
/// measured gusts (about 110 m/s). The one bound of every way to set the wind: a file, the
/// panel and the arrow keys ([`fastest_wind`]), a drag of the arrow (its longest); the drag
/// of the wind on a cloth and the fountain's follow what they are given.
pub const MAX_WIND: f32 = 100.0;
/// The red speed's range (`red_speed`, **P**'s panel slider), m/s: at 0 a resting node's
/// energy would be 0/0 on the scale.
pub const RED_SPEEDS: [f32; 2] = [0.1, 20.0];
/// The decades' range (`energy_decades`, **P**'s panel slider): at 0 every level would be ±∞
/// (0/0 at red), below it the ramp turned over.
pub const DECADES: [f32; 2] = [1.0, 10.0];
/// `thickness` with `self_collision` on, in spacings (size/(n − 1); the panel's slider too):
/// below 1/√2 a node slips through a square's middle (0.75); at √2 a cloth's diagonals, which
/// share no spring once shear is 0, would touch at rest, and past it a flat cloth at rest
/// pushes itself apart (2.3 spacings: 0.16 J and 4 % wider; 4: 6.4 J, 26 % wider) and the
/// stage's cost grows as (h/spacing)²: 1.4 keeps every resting lattice out of contact.
pub const THICKNESS_SPACINGS: [f32; 2] = [0.75, 1.4];
/// Largest gravity component (`world.gravity`), m/s²: ten times the Earth's (Jupiter 25);
/// the panel's gravity spans it.
pub const MAX_GRAVITY: f32 = 100.0;

/// ` unit` when there is one.
fn spaced(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// `value` in [low, high], else an error naming `key` and `unit`.
fn within(key: &str, value: f32, low: f32, high: f32, unit: &str) -> Result<(), Invalid> {
    if value.is_finite() && (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            format!("must be in [{low}, {high}]{}, got {value}", spaced(unit)),
        ))
    }
}

/// `value` in (low, high].
fn above(key: &str, value: f32, low: f32, high: f32, unit: &str) -> Result<(), Invalid> {
    if value.is_finite() && value > low && value <= high {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            format!("must be in ({low}, {high}]{}, got {value}", spaced(unit)),
        ))
    }
}

/// An integer `value` in [low, high].
fn count(key: &str, value: u64, low: u64, high: u64, unit: &str) -> Result<(), Invalid> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            format!("must be {low} to {high}{}, got {value}", spaced(unit)),
        ))
    }
}

/// Every component of `value` finite and at most `bound` in size.
fn vector(key: &str, value: [f32; 3], bound: f32, unit: &str) -> Result<(), Invalid> {
    if value.iter().all(|v| v.is_finite() && v.abs() <= bound) {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            format!(
                "components must be finite and at most {bound}{} in size, got [{}, {}, {}]",
                spaced(unit),
                value[0],
                value[1],
                value[2]
            ),
        ))
    }
}

/// `wind` (m/s) scaled down to [`MAX_WIND`] in length where it is faster, its direction kept:
/// the panel's and the arrow keys' wind, each component of which may reach `MAX_WIND`.
pub fn fastest_wind(wind: [f32; 3]) -> [f32; 3] {
    let w = Vec3::from(wind);
    let speed = w.length();
    if speed <= MAX_WIND {
        return wind;
    }
    // Scaled, then a hair shorter while rounding leaves it past (100.00001 m/s happens).
    let mut kept = w * (MAX_WIND / speed);
    while kept.length() > MAX_WIND {
        kept *= 1.0 - f32::EPSILON;
    }
    kept.into()
}

/// A finite `value` (m/s) at most `bound` long, else an error naming `key`.
fn speed(key: &str, value: [f32; 3], bound: f32) -> Result<(), Invalid> {
    let v = Vec3::from(value);
    if v.is_finite() && v.length() <= bound {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            format!(
                "must be finite with a speed of at most {bound} m/s, got [{}, {}, {}] ({} m/s)",
                value[0],
                value[1],
                value[2],
                v.length()
            ),
        ))
    }
}

impl ParticlesScene {
    /// Checks every value's range, naming its key.
    pub fn validate(&self) -> Result<(), Invalid> {
        above("dt", self.dt, 0.0, MAX_DT, "s")?;
        self.validate_world()?;
        match self.which {
            Which::Fountain => self.validate_fountain(),
            _ => self.validate_body(),
        }
    }

    fn validate_world(&self) -> Result<(), Invalid> {
        let w = &self.world;
        vector("world.gravity", w.gravity, MAX_GRAVITY, "m/s²")?;
        speed("world.wind", w.wind, MAX_WIND)?;
        within("world.wind_drag", w.wind_drag, 0.0, 1e3, "N·s/m³")?;
        within("world.ground", w.ground, -1e4, 1e4, "m")?;
        vector("world.sphere_center", w.sphere_center, 1e4, "m")?;
        within("world.sphere_radius", w.sphere_radius, 0.0, 1e4, "m")?;
        within("world.friction", w.friction, 0.0, 1.0, "")
    }

    fn validate_fountain(&self) -> Result<(), Invalid> {
        let f = &self.fountain;
        within("fountain.rate", f.rate, 0.0, MAX_RATE, "particles/s")?;
        above("fountain.lifetime", f.lifetime, 0.0, 1e3, "s")?;
        within(
            "fountain.fade",
            f.fade,
            0.0,
            f.lifetime,
            "s (at most the lifetime)",
        )?;
        count(
            "fountain.max_particles",
            f.max_particles as u64,
            1,
            MAX_FOUNTAIN_PARTICLES as u64,
            "particles",
        )?;
        above("fountain.cube", f.cube, 0.0, 1e3, "m")?;
        within(
            "fountain.spread",
            f.spread,
            0.0,
            0.5 * f.cube,
            "m (at most half the cube)",
        )?;
        within(
            "fountain.emitter_depth",
            f.emitter_depth,
            0.0,
            f.cube,
            "m (at most the cube)",
        )?;
        within("fountain.speed", f.speed[0], 0.0, 1e3, "m/s")?;
        within(
            "fountain.speed",
            f.speed[1],
            f.speed[0],
            1e3,
            "m/s (max ≥ min)",
        )?;
        within("fountain.horizontal", f.horizontal, 0.0, 1e3, "m/s")?;
        vector("fountain.direction", f.direction, 1e3, "")?;
        if Vec3::from(f.direction).length() < 1e-6 {
            return Err(Invalid::new("fountain.direction", "must not be zero"));
        }
        // The jet must leave the cube through its top: a particle inside the cube that does not
        // rise out of it is never collided (it falls through the floor or out of a side).
        let jet = f.jet();
        let run = f.emitter_depth * jet.x.abs().max(jet.z.abs()) / jet.y;
        if !(jet.y > 0.0 && run < 0.5 * f.cube) {
            let [x, y, z] = f.direction;
            return Err(Invalid::new(
                "fountain.direction",
                format!(
                    "must point upwards, out through the cube's top (its axis from the \
                     nozzle, {} m below the top, must reach the top within the cube's half \
                     side, {} m, of its centre), got [{x}, {y}, {z}]",
                    f.emitter_depth,
                    0.5 * f.cube
                ),
            ));
        }
        within("fountain.drag", f.drag, 0.0, 1e3, "1/s")?;
        within("fountain.cut", f.cut, 0.0, 1.0, "")?;
        within("fountain.boost", f.boost, 0.0, 100.0, "")?;
        within("fountain.sheet", f.sheet, 0.0, 100.0, "")?;
        within("fountain.bounce", f.bounce, 0.0, 1.0, "")?;
        let half = 0.5 * f.cube;
        if !(f.basin.is_finite() && f.basin > half && f.basin <= 1e3) {
            return Err(Invalid::new(
                "fountain.basin",
                format!(
                    "must be in ({half}, 1000] m (wider than the cube's half side), got {}",
                    f.basin
                ),
            ));
        }
        within(
            "fountain.level",
            f.level,
            0.0,
            f.cube,
            "m (at most the cube)",
        )?;
        within("fountain.push", f.push, -100.0, 100.0, "(m/s)/(m/s)")?;
        above(
            "fountain.splash_radius",
            f.splash_radius,
            0.0,
            f.basin,
            "m (at most the basin)",
        )?;
        count(
            "fountain.surface_nodes",
            f.surface_nodes as u64,
            8,
            2048,
            "nodes per side",
        )?;
        above("fountain.surface_speed", f.surface_speed, 0.0, 1e3, "m/s")?;
        within(
            "fountain.surface_damping",
            f.surface_damping,
            0.0,
            1e3,
            "1/s",
        )?;
        within("fountain.kill_height", f.kill_height, -1e4, 1e4, "m")?;
        let substeps = f.basin_params(self.dt).substeps();
        if substeps > MAX_SUBSTEPS {
            return Err(Invalid::new(
                "fountain.surface_speed",
                format!(
                    "{} m/s on {} nodes over {} m needs {substeps} substeps per frame (at most \
                     {MAX_SUBSTEPS}); lower the wave speed or the node count",
                    f.surface_speed,
                    f.surface_nodes,
                    2.0 * f.basin
                ),
            ));
        }
        Ok(())
    }

    fn validate_body(&self) -> Result<(), Invalid> {
        let (b, section) = (&self.body, self.section());
        let key = |name: &str| format!("{section}.{name}");
        let most = if self.which == Which::Jelly {
            MAX_JELLY_N
        } else {
            MAX_CLOTH_N
        };
        count(&key("n"), b.n as u64, 2, most as u64, "nodes per side")?;
        above(&key("size"), b.size, 0.0, 1e3, "m")?;
        above(&key("mass"), b.mass, 0.0, 1e6, "kg")?;
        above(&key("stiffness"), b.stiffness, 0.0, MAX_STIFFNESS, "N/m")?;
        within(&key("shear"), b.shear, 0.0, 100.0, "(of the stiffness)")?;
        within(&key("bend"), b.bend, 0.0, 100.0, "(of the stiffness)")?;
        within(&key("damping"), b.damping, 0.0, 1e3, "1/s")?;
        within(
            &key("grow_seconds"),
            b.grow_seconds,
            0.0,
            MAX_GROW_SECONDS,
            "s",
        )?;
        within(
            &key("volume_stiffness"),
            b.volume_stiffness,
            0.0,
            MAX_VOLUME_STIFFNESS,
            "Pa",
        )?;
        if self.which == Which::Cloth && b.volume_stiffness != 0.0 {
            return Err(Invalid::new(
                key("volume_stiffness"),
                format!(
                    "is the jelly's: the cloth has no cells to keep a volume in, got {}",
                    b.volume_stiffness
                ),
            ));
        }
        // Any thickness up to the body's side while unused: an edit of n (tests, scripts) must
        // not make a cloth without self-collision invalid; with it, THICKNESS_SPACINGS.
        above(
            &key("thickness"),
            b.thickness,
            0.0,
            b.size,
            "m (the body's size)",
        )?;
        let [thin, thick] = THICKNESS_SPACINGS;
        let spacings = b.thickness / b.spacing();
        if b.self_collision && !(thin * 0.999..=thick * 1.001).contains(&spacings) {
            return Err(Invalid::new(
                key("thickness"),
                format!(
                    "must be {thin}–{thick} spacings (size/(n − 1) = {} m) with self_collision \
                     on, got {} m ({spacings:.2} spacings)",
                    b.spacing(),
                    b.thickness
                ),
            ));
        }
        count(
            &key("iterations"),
            u64::from(b.iterations),
            1,
            u64::from(MAX_ITERATIONS),
            "",
        )?;
        count(
            &key("substeps"),
            u64::from(b.substeps),
            1,
            u64::from(MAX_BODY_SUBSTEPS),
            "",
        )?;
        vector(&key("start"), b.start, 1e4, "m")?;
        let [slow, fast] = RED_SPEEDS;
        within(&key("red_speed"), b.red_speed, slow, fast, "m/s")?;
        let [fewest, most] = DECADES;
        within(&key("energy_decades"), b.energy_decades, fewest, most, "")?;
        if self.which == Which::Jelly && b.pins != Pins::None {
            return Err(Invalid::new(
                key("pins"),
                format!(
                    "the jelly is never pinned (only \"none\"), got \"{}\"",
                    b.pins.name()
                ),
            ));
        }
        if self.which == Which::Jelly && b.orientation != Orientation::Hanging {
            return Err(Invalid::new(
                key("orientation"),
                format!(
                    "is the cloth's: the jelly is a cube and always starts upright, got \"{}\"",
                    b.orientation.name()
                ),
            ));
        }
        if b.integrator.explicit() {
            let needed = self.stable_substeps();
            if needed > b.substeps {
                return Err(Invalid::new(
                    key("substeps"),
                    format!(
                        "{} springs of {} N/m{} on nodes of {:.3e} kg need at least \
                         {needed} substeps of a {} s frame to stay stable (dt·ω < 2), got {}; \
                         raise the substeps, lower the stiffness or use integrator = \"xpbd\"",
                        b.integrator.name(),
                        b.stiffness,
                        if b.volume_stiffness > 0.0 && self.which == Which::Jelly {
                            format!(" and a volume term of {} Pa", b.volume_stiffness)
                        } else {
                            String::new()
                        },
                        self.node_mass(),
                        self.dt,
                        b.substeps
                    ),
                ));
            }
        }
        Ok(())
    }
}
