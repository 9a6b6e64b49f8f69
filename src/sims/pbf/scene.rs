//! Scenes: the container, the initial fluid bodies, static obstacles and solver parameters,
//! read from TOML files (see `docs/scenes.md`), validated with messages that name the file,
//! line, key and value, and seeded into particles.

use super::scene_file;
use super::{Aabb, InitialState, Obstacle, Params, World};
use crate::host::format_bytes;
use crate::scene::{fmt3, Invalid, SceneError, Shape, Source};
use glam::Vec3A;

/// One initial body of fluid.
#[derive(Clone, Debug, PartialEq)]
pub struct FluidBody {
    /// The region the fluid fills.
    pub shape: Shape,
    /// Initial velocity of every particle of the body, m/s.
    pub velocity: Vec3A,
}

/// A validated scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Preset name or file stem.
    pub name: String,
    /// One line saying what the scene shows.
    pub description: String,
    /// The closed box the fluid lives in.
    pub container: Aabb,
    /// Initial bodies of fluid.
    pub fluids: Vec<FluidBody>,
    /// Static solids (boxes and spheres).
    pub obstacles: Vec<Shape>,
    /// Solver parameters, particle mass calibrated for `params.spacing`.
    pub params: Params,
}

/// Largest particle count any backend accepts (ids are 32-bit; the GPU grid uses 32-bit indices).
pub const MAX_PARTICLES: u64 = 1 << 30;

impl Scene {
    /// Loads a pbf preset by name or a pbf scene file by path, and validates it.
    pub fn load(name_or_path: &str) -> Result<Scene, SceneError> {
        Scene::from_source(&Source::load(name_or_path)?)
    }

    /// Parses and validates a loaded scene source, which must be of kind `pbf`.
    pub fn from_source(source: &Source) -> Result<Scene, SceneError> {
        if source.kind != super::KIND {
            return Err(source.error_at_kind(format!(
                "this is a \"{}\" scene, not a pbf one",
                source.kind
            )));
        }
        scene_file::parse(&source.text, &source.name, &source.origin)
    }

    /// Parses and validates TOML text. `origin` names the source in error messages.
    pub fn parse(text: &str, name: &str, origin: &str) -> Result<Scene, SceneError> {
        Scene::from_source(&Source::parse(text, name, origin)?)
    }

    /// Checks every rule a scene must satisfy, so that seeding and simulating cannot fail on
    /// the scene's account: positive sizes, fluids and obstacles inside the container, no two
    /// fluid bodies overlapping, parameters in range, a particle count within [`MAX_PARTICLES`].
    pub fn validate(&self) -> Result<(), Invalid> {
        let c = &self.container;
        if !(c.min.is_finite() && c.max.is_finite()) || c.max.cmple(c.min).any() {
            return Err(Invalid::new(
                "container.max",
                format!(
                    "must exceed container.min on every axis (min {}, max {})",
                    fmt3(c.min),
                    fmt3(c.max)
                ),
            ));
        }
        self.params
            .validate()
            .map_err(|e| Invalid::new(format!("params.{}", e.key), e.message))?;
        let tolerance = 1e-4 * self.params.spacing;
        if self.fluids.is_empty() {
            return Err(Invalid::new("fluid", "the scene has no [[fluid]] body"));
        }
        for (k, body) in self.fluids.iter().enumerate() {
            let key = format!("fluid[{k}]");
            check_shape(&body.shape, &key)?;
            if !body.shape.inside(c, tolerance) {
                let b = body.shape.bounds();
                return Err(Invalid::new(
                    key,
                    format!(
                        "the {} spans {}–{}, outside the container {}–{}",
                        body.shape.kind(),
                        fmt3(b.min),
                        fmt3(b.max),
                        fmt3(c.min),
                        fmt3(c.max)
                    ),
                ));
            }
            if !body.velocity.is_finite() {
                return Err(Invalid::new(
                    format!("{key}.velocity"),
                    format!("must be finite, got {}", fmt3(body.velocity)),
                ));
            }
            let counts = Shape::lattice_counts(&body.shape.bounds(), self.params.spacing);
            if counts.contains(&0) {
                return Err(Invalid::new(
                    key,
                    format!(
                        "the {} is thinner than one particle spacing ({})",
                        body.shape.kind(),
                        self.params.spacing
                    ),
                ));
            }
            for (m, other) in self.fluids[..k].iter().enumerate() {
                if body.shape.overlaps(&other.shape, tolerance) {
                    return Err(Invalid::new(
                        key,
                        format!("this {} overlaps fluid[{m}] (a {}); fluid bodies must not share volume", body.shape.kind(), other.shape.kind()),
                    ));
                }
            }
        }
        for (k, obstacle) in self.obstacles.iter().enumerate() {
            let key = format!("obstacle[{k}]");
            check_shape(obstacle, &key)?;
            if Obstacle::from_shape(obstacle).is_none() {
                return Err(Invalid::new(
                    format!("{key}.shape"),
                    format!(
                        "obstacles are \"box\" or \"sphere\", got \"{}\"",
                        obstacle.kind()
                    ),
                ));
            }
            let b = obstacle.bounds();
            if b.max.cmple(c.min).any() || b.min.cmpge(c.max).any() {
                return Err(Invalid::new(
                    key,
                    format!(
                        "the {} ({}–{}) lies entirely outside the container",
                        obstacle.kind(),
                        fmt3(b.min),
                        fmt3(b.max)
                    ),
                ));
            }
        }
        let upper_bound = self.particle_upper_bound();
        if upper_bound > MAX_PARTICLES {
            return Err(Invalid::new(
                "params.spacing",
                format!(
                    "spacing {} gives up to {upper_bound} particles, beyond the limit of {MAX_PARTICLES}; use a larger spacing",
                    self.params.spacing
                ),
            ));
        }
        Ok(())
    }

    /// Lattice points in the fluid bodies' bounds: an upper bound of the particle count,
    /// computed without allocating.
    pub fn particle_upper_bound(&self) -> u64 {
        self.fluids
            .iter()
            .map(|b| {
                Shape::lattice_counts(&b.shape.bounds(), self.params.spacing)
                    .iter()
                    .product::<u64>()
            })
            .sum()
    }

    /// The exact number of particles [`Scene::seed`] creates, counted without allocating.
    pub fn particle_count(&self) -> u64 {
        let world = self.world();
        let margin = self.params.particle_radius();
        let mut count = 0;
        for body in &self.fluids {
            if let (Shape::Box(aabb), true) = (body.shape, world.obstacles.is_empty()) {
                // Every lattice point of a box's bounds is inside it.
                count += Shape::lattice_counts(&aabb, self.params.spacing)
                    .iter()
                    .product::<u64>();
                continue;
            }
            body.shape.for_each_lattice_point(self.params.spacing, |p| {
                if world.obstacles.iter().all(|o| o.project(p, margin) == p) {
                    count += 1;
                }
            });
        }
        count
    }

    /// Grid cells over the container (cell size h).
    pub fn grid_cells(&self) -> u64 {
        crate::sims::pbf::grid::UniformGrid::dims_for(&self.container, self.params.kernel_radius)
            .iter()
            .product()
    }

    /// Fails with a message naming the particle count and the memory needed when
    /// `bytes_per_particle` × particles (+ 8 bytes per grid cell) exceeds `available` bytes.
    pub fn check_memory(
        &self,
        what: &str,
        bytes_per_particle: u64,
        available: u64,
    ) -> Result<(), Invalid> {
        let particles = self.particle_count();
        let needed = particles * bytes_per_particle + self.grid_cells() * 8;
        if needed > available {
            return Err(Invalid::new(
                "params.spacing",
                format!(
                    "{particles} particles need about {} for the {what} ({bytes_per_particle} bytes per particle \
                     plus the grid), but only {} is available; use a larger spacing or smaller fluid bodies",
                    format_bytes(needed),
                    format_bytes(available)
                ),
            ));
        }
        Ok(())
    }

    /// The container and obstacles as the solver sees them.
    pub fn world(&self) -> World {
        World {
            container: self.container,
            obstacles: self
                .obstacles
                .iter()
                .filter_map(Obstacle::from_shape)
                .collect(),
        }
    }

    /// The initial particles: each fluid body filled with a lattice of `spacing`, minus the
    /// points inside obstacles (grown by the particle radius). Ids follow body order.
    pub fn seed(&self) -> InitialState {
        let world = self.world();
        let margin = self.params.particle_radius();
        let mut state = InitialState::default();
        let capacity = self.particle_upper_bound() as usize;
        state.positions.reserve(capacity);
        state.velocities.reserve(capacity);
        for body in &self.fluids {
            body.shape.for_each_lattice_point(self.params.spacing, |p| {
                if world.obstacles.iter().all(|o| o.project(p, margin) == p) {
                    state.positions.push(p);
                    state.velocities.push(body.velocity);
                }
            });
        }
        state
    }

    /// The same scene with the spacing scaled so it seeds about `particles` particles
    /// (geometry unchanged; kernel radius keeps its ratio to the spacing; mass recalibrated).
    /// Starts from volume / N and corrects for the lattice's rounding with a few counts.
    pub fn with_particle_target(&self, particles: u64) -> Scene {
        let target = particles.max(1) as f64;
        let volume: f64 = self.fluids.iter().map(|b| shape_volume(&b.shape)).sum();
        let ratio = self.params.kernel_radius / self.params.spacing;
        let mut scene = self.clone();
        let mut spacing = (volume / target).cbrt();
        for _ in 0..4 {
            scene.params.spacing = spacing as f32;
            let count = scene.particle_count().max(1) as f64;
            if (count / target - 1.0).abs() < 0.01 {
                break;
            }
            spacing *= (count / target).cbrt();
        }
        scene.params.spacing = spacing as f32;
        scene.params.kernel_radius = ratio * scene.params.spacing;
        scene.params.calibrate_mass();
        scene
    }
}

fn shape_volume(shape: &Shape) -> f64 {
    match *shape {
        Shape::Box(aabb) => {
            let s = aabb.size();
            (s.x * s.y * s.z) as f64
        }
        Shape::Sphere { radius, .. } => 4.0 / 3.0 * std::f64::consts::PI * (radius as f64).powi(3),
        Shape::Cylinder { radius, height, .. } => {
            std::f64::consts::PI * (radius as f64).powi(2) * height as f64
        }
    }
}

fn check_shape(shape: &Shape, key: &str) -> Result<(), Invalid> {
    match *shape {
        Shape::Box(aabb) => {
            if !(aabb.min.is_finite() && aabb.max.is_finite()) || aabb.max.cmple(aabb.min).any() {
                return Err(Invalid::new(
                    format!("{key}.max"),
                    format!(
                        "must exceed min on every axis (min {}, max {})",
                        fmt3(aabb.min),
                        fmt3(aabb.max)
                    ),
                ));
            }
        }
        Shape::Sphere { center, radius } | Shape::Cylinder { center, radius, .. } => {
            if !center.is_finite() {
                return Err(Invalid::new(
                    format!("{key}.center"),
                    format!("must be finite, got {}", fmt3(center)),
                ));
            }
            if !(radius.is_finite() && radius > 0.0) {
                return Err(Invalid::new(
                    format!("{key}.radius"),
                    format!("must be positive, got {radius}"),
                ));
            }
        }
    }
    if let Shape::Cylinder { height, .. } = *shape {
        if !(height.is_finite() && height > 0.0) {
            return Err(Invalid::new(
                format!("{key}.height"),
                format!("must be positive, got {height}"),
            ));
        }
    }
    Ok(())
}
