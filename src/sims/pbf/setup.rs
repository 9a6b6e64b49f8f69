//! The viewer's set-up for PBF's next restart: container, fluid shape, position, size and the
//! parameters particles are seeded with.

use super::scene::{FluidBody, Scene};
use super::{Aabb, Params};
use crate::scene::Shape;
use anyhow::{Context, Result};
use glam::Vec3A;

/// Container presets offered before a restart: name and size in metres (the box starts at the
/// origin).
pub const CONTAINERS: &[(&str, [f32; 3])] = &[
    ("tank 1.6 × 1.0 × 0.6", [1.6, 1.0, 0.6]),
    ("cube 1 m", [1.0, 1.0, 1.0]),
    ("tall 0.6 × 1.6 × 0.6", [0.6, 1.6, 0.6]),
    ("wide 2.4 × 0.8 × 1.2", [2.4, 0.8, 1.2]),
];

/// The initial fluid body chosen before a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FluidShape {
    /// The bodies the loaded scene defines.
    FromScene,
    /// A cube.
    Cube,
    /// A sphere.
    Sphere,
    /// An upright cylinder as tall as it is wide.
    Cylinder,
}

impl FluidShape {
    /// Every choice, in menu order.
    pub const ALL: [FluidShape; 4] = [
        FluidShape::FromScene,
        FluidShape::Cube,
        FluidShape::Sphere,
        FluidShape::Cylinder,
    ];

    /// Label in the UI.
    pub fn name(self) -> &'static str {
        match self {
            FluidShape::FromScene => "as in the scene",
            FluidShape::Cube => "cube",
            FluidShape::Sphere => "sphere",
            FluidShape::Cylinder => "cylinder",
        }
    }
}

/// What the next restart builds.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    /// Index into [`CONTAINERS`], or `None` for the loaded scene's container.
    pub container: Option<usize>,
    /// The initial fluid body.
    pub shape: FluidShape,
    /// Centre of the body as a fraction of the container on each axis (0..1); the body is
    /// moved inwards as needed to fit.
    pub position: [f32; 3],
    /// Width of the body (cube edge, sphere and cylinder diameter) as a fraction of the
    /// container's smallest edge.
    pub size: f32,
    /// Fluid parameters the scene starts with (spacing sets the particle count).
    pub params: Params,
}

impl Setup {
    /// The set-up that rebuilds `scene` as it is.
    pub fn of(scene: &Scene) -> Setup {
        Setup {
            container: None,
            shape: FluidShape::FromScene,
            position: [0.5, 0.35, 0.5],
            size: 0.5,
            params: scene.params.clone(),
        }
    }

    /// The scene this set-up describes, built on `base` (its obstacles, and its container and
    /// bodies where the set-up keeps them), validated.
    pub fn build(&self, base: &Scene) -> Result<Scene> {
        let mut scene = base.clone();
        if let Some(index) = self.container {
            let size = CONTAINERS
                .get(index)
                .with_context(|| format!("no container preset {index}"))?
                .1;
            scene.container = Aabb::new([0.0; 3], size);
            // Obstacles of the scene that no longer fit are dropped with the old container.
            let container = scene.container;
            scene.obstacles.retain(|o| {
                let b = o.bounds();
                b.min.cmpge(container.min).all() && b.max.cmple(container.max).all()
            });
        }
        let container = scene.container;
        let extent = container.size();
        let half = 0.5 * self.size.clamp(0.05, 1.0) * extent.min_element();
        let half_extents = Vec3A::splat(half);
        let wanted = container.min + extent * Vec3A::from(self.position);
        let center = wanted.clamp(container.min + half_extents, container.max - half_extents);
        let shape = match self.shape {
            FluidShape::FromScene => None,
            FluidShape::Cube => Some(Shape::Box(Aabb {
                min: center - half_extents,
                max: center + half_extents,
            })),
            FluidShape::Sphere => Some(Shape::Sphere {
                center,
                radius: half,
            }),
            FluidShape::Cylinder => Some(Shape::Cylinder {
                center,
                radius: half,
                height: 2.0 * half,
            }),
        };
        if let Some(shape) = shape {
            scene.fluids = vec![FluidBody {
                shape,
                velocity: Vec3A::ZERO,
            }];
        }
        scene.params = self.params.clone();
        scene.params.calibrate_mass();
        scene
            .validate()
            .map_err(|invalid| anyhow::anyhow!("{}: {}", invalid.key, invalid.message))?;
        Ok(scene)
    }
}
