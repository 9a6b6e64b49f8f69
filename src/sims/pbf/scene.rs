//! Scenes: the container, the initial fluid bodies, static obstacles and solver parameters,
//! read from TOML files (see `docs/scenes.md`), validated with messages that name the file,
//! line, key and value, and seeded into particles.

use super::foam::FoamSettings;
use super::grid::UniformGrid;
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
    /// The `foam` stage's settings (`[foam]`).
    pub foam: FoamSettings,
}

/// Largest particle count any backend accepts (ids are 32-bit; the GPU grid uses 32-bit indices).
pub const MAX_PARTICLES: u64 = 1 << 30;

/// Most `[[fluid]]` bodies and most `[[obstacle]]`s a scene may have: fluid bodies are checked
/// pairwise for overlap, and every particle is tested against every obstacle when seeded and
/// projected out of each in every stage of every step.
pub const MAX_SHAPES: usize = 64;

/// How far from the origin, in spacings, a coordinate of the container or an obstacle may lie.
/// Positions are f32: 16384 spacings out a position is still resolved to 1/512 of a spacing,
/// which the constraint's corrections (a fraction of a spacing) need.
pub const MAX_REACH_SPACINGS: f32 = 16384.0;

/// Fastest initial velocity of a fluid body, m/s (a fire hose's jet is 30 m/s): beyond, the CFL
/// rule's 64 substeps no longer keep a step within a few spacings at the default dt.
pub const MAX_SPEED: f32 = 100.0;

/// The largest particle target [`Scene::with_particle_target`] refines by counting lattice
/// points; above, the volume estimate's rounding is under 1 % and each count would take
/// seconds.
const COUNTED_TARGET: u64 = 1 << 26;

/// What a solver allocates, for [`Scene::check_memory`]: bytes per particle, per neighbour-list
/// entry and per grid cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// What allocates it, for the message ("CPU solver").
    pub what: &'static str,
    /// Bytes per particle: state, scratch, and the seeded initial state it is made from.
    pub per_particle: u64,
    /// Bytes per neighbour-list entry (0 for a solver that keeps no lists).
    pub per_neighbour: u64,
    /// Bytes per cell of the neighbour grid (its sort and the coarse correction).
    pub per_cell: u64,
}

/// The memory a scene needs for one [`Footprint`], by part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Particles counted.
    pub particles: u64,
    /// Neighbour-list entries budgeted per particle.
    pub neighbours: u64,
    /// Grid cells.
    pub cells: u64,
    /// Bytes for particle state.
    pub particle_bytes: u128,
    /// Bytes for neighbour lists.
    pub neighbour_bytes: u128,
    /// Bytes for the grid.
    pub cell_bytes: u128,
}

impl MemoryNeed {
    /// Every part together.
    pub fn total(&self) -> u128 {
        self.particle_bytes + self.neighbour_bytes + self.cell_bytes
    }
}

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
    /// the scene's account: parameters in their ranges, a grid of at most
    /// [`super::grid::MAX_CELLS`] cells, coordinates within [`MAX_REACH_SPACINGS`], positive
    /// sizes, fluids inside the container and not overlapping, at most [`MAX_SHAPES`] bodies
    /// and obstacles, a particle count within [`MAX_PARTICLES`] and no fluid body left empty
    /// by the obstacles. Every check before the last costs nothing that scales with the scene;
    /// the last walks a body's lattice only until it finds one particle.
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
        self.foam
            .check()
            .map_err(|(key, message)| Invalid::new(key, message))?;
        self.params
            .validate()
            .map_err(|e| Invalid::new(format!("params.{}", e.key), e.message))?;
        UniformGrid::check_size(c, self.params.kernel_radius)
            .map_err(|message| Invalid::new("container", message))?;
        let reach = MAX_REACH_SPACINGS * self.params.spacing;
        for (key, corner) in [("container.min", c.min), ("container.max", c.max)] {
            if corner.abs().max_element() > reach {
                return Err(Invalid::new(key, beyond_reach(corner, self.params.spacing)));
            }
        }
        let tolerance = 1e-4 * self.params.spacing;
        if self.fluids.is_empty() {
            return Err(Invalid::new("fluid", "the scene has no [[fluid]] body"));
        }
        for (what, count) in [
            ("fluid", self.fluids.len()),
            ("obstacle", self.obstacles.len()),
        ] {
            if count > MAX_SHAPES {
                return Err(Invalid::new(
                    format!("{what}[{MAX_SHAPES}]"),
                    format!("a scene has at most {MAX_SHAPES} [[{what}]] tables, this one {count}"),
                ));
            }
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
            let speed = body.velocity.length();
            if !(0.0..=MAX_SPEED).contains(&speed) {
                return Err(Invalid::new(
                    format!("{key}.velocity"),
                    format!(
                        "must be finite with a speed of at most {MAX_SPEED} m/s, got {}",
                        fmt3(body.velocity)
                    ),
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
            for corner in [b.min, b.max] {
                if corner.abs().max_element() > reach {
                    return Err(Invalid::new(
                        key.as_str(),
                        beyond_reach(corner, self.params.spacing),
                    ));
                }
            }
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
        if upper_bound > u128::from(MAX_PARTICLES) {
            return Err(Invalid::new(
                "params.spacing",
                format!(
                    "spacing {} gives up to {upper_bound} particles, beyond the limit of {MAX_PARTICLES}; use a larger spacing",
                    self.params.spacing
                ),
            ));
        }
        self.check_bodies_seed()
    }

    /// Fails when a fluid body seeds no particle: every lattice point lies inside an obstacle
    /// (grown by the particle radius). A scene that seeds nothing would run, silently, empty.
    fn check_bodies_seed(&self) -> Result<(), Invalid> {
        let world = self.world();
        if world.obstacles.is_empty() {
            // Without obstacles every body of at least one spacing per axis holds its lattice's
            // centre point.
            return Ok(());
        }
        let margin = self.params.particle_radius();
        for (k, body) in self.fluids.iter().enumerate() {
            let bounds = body.shape.bounds();
            let covered = world.obstacles.iter().any(|o| o.covers(&bounds, margin))
                || !body
                    .shape
                    .lattice_points(self.params.spacing)
                    .any(|p| world.obstacles.iter().all(|o| o.project(p, margin) == p));
            if covered {
                return Err(Invalid::new(
                    format!("fluid[{k}]"),
                    format!(
                        "the {} lies entirely inside obstacles: it would seed no particle",
                        body.shape.kind()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Lattice points in the fluid bodies' bounds: an upper bound of the particle count,
    /// computed without allocating (u128: no product of three axis counts can wrap).
    pub fn particle_upper_bound(&self) -> u128 {
        self.fluids
            .iter()
            .map(|b| {
                Shape::lattice_counts(&b.shape.bounds(), self.params.spacing)
                    .iter()
                    .fold(1u128, |product, &n| product.saturating_mul(u128::from(n)))
            })
            .fold(0u128, u128::saturating_add)
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
            count += body
                .shape
                .lattice_points(self.params.spacing)
                .filter(|&p| world.obstacles.iter().all(|o| o.project(p, margin) == p))
                .count() as u64;
        }
        count
    }

    /// Grid cells over the container (cell size h); a validated scene has at most
    /// [`super::grid::MAX_CELLS`].
    pub fn grid_cells(&self) -> u64 {
        UniformGrid::cell_count(&self.container, self.params.kernel_radius)
            .map_or(u64::MAX, |cells| u64::try_from(cells).unwrap_or(u64::MAX))
    }

    /// Neighbour-list entries a solver that keeps lists budgets per particle: the seeding
    /// lattice's neighbours within h, plus 40 %. A splashing fluid compresses locally and
    /// raises the mean; free surfaces lower it. (At h = 2 spacings: 32 neighbours, 45 slots.)
    pub fn neighbour_slots(&self) -> u64 {
        let neighbours = u64::from(self.params.kernel().lattice_neighbours(self.params.spacing));
        (neighbours * 7).div_ceil(5)
    }

    /// The memory `particles` particles of this scene need under `footprint`, by part.
    pub fn memory_need(&self, footprint: &Footprint, particles: u64) -> MemoryNeed {
        let neighbours = if footprint.per_neighbour > 0 {
            self.neighbour_slots()
        } else {
            0
        };
        let cells = self.grid_cells();
        let particles_128 = u128::from(particles);
        MemoryNeed {
            particles,
            neighbours,
            cells,
            particle_bytes: particles_128 * u128::from(footprint.per_particle),
            neighbour_bytes: particles_128
                * u128::from(neighbours)
                * u128::from(footprint.per_neighbour),
            cell_bytes: (u128::from(cells) + 1) * u128::from(footprint.per_cell),
        }
    }

    /// Fails, before anything is allocated, when the scene's particles, their neighbour lists
    /// and the grid need more than `available` bytes under `footprint`. The message names the
    /// memory and blames the part that needs the most: the spacing (particles), the kernel
    /// radius (neighbours) or the container (grid cells). The particles are counted exactly only
    /// when their upper bound does not fit.
    pub fn check_memory(&self, footprint: &Footprint, available: u64) -> Result<(), Invalid> {
        let upper_bound = u64::try_from(self.particle_upper_bound()).unwrap_or(u64::MAX);
        if self.memory_need(footprint, upper_bound).total() <= u128::from(available) {
            return Ok(());
        }
        self.check_memory_of(footprint, self.particle_count(), available)
    }

    /// [`Scene::check_memory`] for `particles` particles (an initial state made otherwise).
    pub fn check_memory_of(
        &self,
        footprint: &Footprint,
        particles: u64,
        available: u64,
    ) -> Result<(), Invalid> {
        let need = self.memory_need(footprint, particles);
        if need.total() <= u128::from(available) {
            return Ok(());
        }
        // Neighbour lists outweigh particle state at every ratio, so the kernel radius is to
        // blame only when the scene would fit at the usual h = 2 spacings.
        let mut usual = self.clone();
        usual.params.kernel_radius = 2.0 * self.params.spacing;
        let fits_at_usual_ratio =
            usual.memory_need(footprint, particles).total() <= u128::from(available);
        let (key, advice) = if need.cell_bytes >= need.particle_bytes.max(need.neighbour_bytes) {
            ("container", "shrink the container or enlarge kernel_radius")
        } else if fits_at_usual_ratio {
            (
                "params.kernel_radius",
                "use a smaller kernel_radius (2 × spacing is usual)",
            )
        } else {
            (
                "params.spacing",
                "use a larger spacing or smaller fluid bodies",
            )
        };
        let bytes = |b: u128| format_bytes(u64::try_from(b).unwrap_or(u64::MAX));
        Err(Invalid::new(
            key,
            format!(
                "{} particles need about {} for the {} ({} for particles, {} for {} neighbour \
                 entries each, {} for {} grid cells), but only {} is available; {advice}",
                need.particles,
                bytes(need.total()),
                footprint.what,
                bytes(need.particle_bytes),
                bytes(need.neighbour_bytes),
                need.neighbours,
                bytes(need.cell_bytes),
                need.cells,
                format_bytes(available)
            ),
        ))
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
        let capacity = usize::try_from(self.particle_upper_bound()).unwrap_or(0);
        state.positions.reserve(capacity);
        state.velocities.reserve(capacity);
        for body in &self.fluids {
            for p in body.shape.lattice_points(self.params.spacing) {
                if world.obstacles.iter().all(|o| o.project(p, margin) == p) {
                    state.positions.push(p);
                    state.velocities.push(body.velocity);
                }
            }
        }
        state
    }

    /// The same scene with the spacing scaled so it seeds about `particles` particles
    /// (geometry unchanged; kernel radius keeps its ratio to the spacing; mass recalibrated),
    /// validated. Starts from volume / N and corrects for the lattice's rounding with a few
    /// counts (up to 2²⁶ particles; beyond, the estimate is within 1 %). A count of 0 or beyond
    /// [`MAX_PARTICLES`] is refused at once, before anything is counted.
    pub fn with_particle_target(&self, particles: u64) -> Result<Scene, Invalid> {
        if !(1..=MAX_PARTICLES).contains(&particles) {
            return Err(Invalid::new(
                "--particles",
                format!(
                    "must be between 1 and {MAX_PARTICLES} (the particle limit), got {particles}"
                ),
            ));
        }
        let target = particles as f64;
        let volume: f64 = self.fluids.iter().map(|b| shape_volume(&b.shape)).sum();
        let ratio = self.params.kernel_radius / self.params.spacing;
        let mut scene = self.clone();
        let mut spacing = (volume / target).cbrt();
        if particles <= COUNTED_TARGET {
            for _ in 0..4 {
                scene.params.spacing = spacing as f32;
                if scene.particle_upper_bound() > u128::from(2 * COUNTED_TARGET) {
                    break;
                }
                let count = scene.particle_count().max(1) as f64;
                if (count / target - 1.0).abs() < 0.01 {
                    break;
                }
                spacing *= (count / target).cbrt();
            }
        }
        scene.params.spacing = spacing as f32;
        scene.params.kernel_radius = ratio * scene.params.spacing;
        scene.params.calibrate_mass();
        scene.validate().map_err(|invalid| Invalid {
            message: format!("with --particles {particles}: {}", invalid.message),
            ..invalid
        })?;
        Ok(scene)
    }
}

/// Why a coordinate lies too far out, for [`Scene::validate`].
fn beyond_reach(corner: Vec3A, spacing: f32) -> String {
    format!(
        "{} lies more than {MAX_REACH_SPACINGS} spacings ({} m at spacing {spacing}) from the \
         origin, where f32 positions can no longer resolve a fraction of a spacing; move the \
         scene towards the origin or use a larger spacing",
        fmt3(corner),
        MAX_REACH_SPACINGS * spacing
    )
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
