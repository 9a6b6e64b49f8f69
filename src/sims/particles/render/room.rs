//! The scenes' static pieces: the landscape's ground (fogged into the horizon) under every
//! scene, the fountain's courtyard — tiled floor, stone walls facing in (so the near ones are
//! culled from outside), the cube, the basin's floor and rim — or the bodies' collision sphere.

use super::mesh::{Material, Mesh, Shape};
use crate::sims::particles::scene::{ParticlesScene, Which};
use anyhow::Result;
use glam::Vec3;

/// A static mesh of the scene and how it is drawn.
pub struct Piece {
    /// The mesh.
    pub mesh: Mesh,
    /// Its material.
    pub material: Material,
    /// Back faces culled (the room's walls facing in).
    pub cull: bool,
}

/// What a scene's static pieces are made from: they are made again when it changes (F1–F3, the
/// panel's scene, ground, sphere or basin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Key {
    which: Which,
    ground: f32,
    sphere: [f32; 4],
    fountain: [f32; 3],
}

impl Key {
    /// The key of `scene`.
    pub fn of(scene: &ParticlesScene) -> Key {
        let (w, f) = (&scene.world, &scene.fountain);
        let c = w.sphere_center;
        Key {
            which: scene.which,
            ground: w.ground,
            sphere: [c[0], c[1], c[2], w.sphere_radius],
            fountain: [f.basin, f.cube, f.level],
        }
    }
}

/// The scene's static pieces: the landscape's ground, and the fountain's room (tiled floor,
/// stone walls facing in so the near ones vanish from outside), cube, basin floor and rim, or
/// the bodies' sphere.
pub fn pieces(
    gl: &glow::Context,
    scene: &ParticlesScene,
    grass: glow::Texture,
) -> Result<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut add = |shape: Shape, material: Material, cull: bool| -> Result<()> {
        pieces.push(Piece {
            mesh: Mesh::new(gl, &shape, false)?,
            material,
            cull,
        });
        Ok(())
    };
    let stone = |pattern: i32, scale: f32, rgb: Vec3| Material {
        pattern,
        uv_scale: scale,
        gloss: 0.1,
        ..Material::plain(rgb)
    };
    let far = 150.0;
    let ground_y = match scene.which {
        Which::Fountain => -0.01,
        _ => scene.world.ground,
    };
    let ground = Shape::quad(
        Vec3::new(-far, ground_y, -far),
        Vec3::Z * (2.0 * far),
        Vec3::X * (2.0 * far),
    );
    let grass_material = Material {
        fog: 45.0,
        gloss: 0.0,
        ..Material::textured(grass, 0.25)
    };
    add(ground, grass_material, false)?;
    match scene.which {
        Which::Fountain => {
            let f = &scene.fountain;
            let (b, c) = (f.basin, f.cube);
            let room = b + 1.5;
            let floor = Shape::quad(
                Vec3::new(-room, 0.0, -room),
                Vec3::Z * (2.0 * room),
                Vec3::X * (2.0 * room),
            );
            add(floor, stone(2, 1.0, Vec3::new(0.78, 0.74, 0.68)), false)?;
            let walls = Shape::walls(Vec3::new(-room, 0.0, -room), Vec3::new(room, 1.6, room));
            add(walls, stone(3, 3.0, Vec3::new(0.80, 0.72, 0.62)), true)?;
            let cube = Shape::cuboid(
                Vec3::new(-0.5 * c, 0.0, -0.5 * c),
                Vec3::new(0.5 * c, c, 0.5 * c),
                false,
            );
            add(cube, stone(3, 4.0, Vec3::new(0.72, 0.70, 0.68)), false)?;
            let basin_floor = Shape::quad(
                Vec3::new(-b, 0.002, -b),
                Vec3::Z * (2.0 * b),
                Vec3::X * (2.0 * b),
            );
            add(
                basin_floor,
                stone(2, 4.0, Vec3::new(0.45, 0.66, 0.72)),
                false,
            )?;
            let (rim, top) = (0.15, f.level + 0.12);
            let mut rims = Shape::default();
            for (min, max) in [
                (
                    Vec3::new(-b - rim, 0.0, -b - rim),
                    Vec3::new(b + rim, top, -b),
                ),
                (
                    Vec3::new(-b - rim, 0.0, b),
                    Vec3::new(b + rim, top, b + rim),
                ),
                (Vec3::new(-b - rim, 0.0, -b), Vec3::new(-b, top, b)),
                (Vec3::new(b, 0.0, -b), Vec3::new(b + rim, top, b)),
            ] {
                rims.append(Shape::cuboid(min, max, false));
            }
            add(rims, stone(3, 6.0, Vec3::new(0.70, 0.68, 0.66)), false)?;
        }
        _ => {
            let w = &scene.world;
            if w.sphere_radius > 0.0 {
                let sphere = Shape::sphere(Vec3::from(w.sphere_center), w.sphere_radius, 24, 48);
                let material = Material {
                    gloss: 0.7,
                    ..Material::plain(Vec3::new(0.55, 0.58, 0.65))
                };
                add(sphere, material, false)?;
            }
        }
    }
    Ok(pieces)
}
