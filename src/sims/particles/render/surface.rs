//! `surface`: a spring-mass body's textured skin — the cloth's sheet, or the jelly's six outer
//! faces (each its own grid of vertices, so its texture and normals stop at the cube's edges) —
//! with smooth normals from the area-weighted normals of the triangles around each vertex.

use super::mesh::{Mesh, Shape, Vertex};
use crate::sims::particles::body::Body;
use crate::sims::particles::scene::Which;
use anyhow::Result;
use glam::{Vec2, Vec3};

/// The skin: which node each vertex follows, its texture coordinates, and the mesh.
pub struct Surface {
    node: Vec<u32>,
    uv: Vec<Vec2>,
    indices: Vec<u32>,
    mesh: Mesh,
    scratch: Vec<Vertex>,
    normals: Vec<Vec3>,
}

/// The skin's vertices (node, texture coordinates) and triangles for `body` of scene `which`.
/// Cloth node (i, j) gets (i, j)/(n − 1) — the original's (i/n, j/n), reaching 1 at the last
/// node; a jelly face's node (u, v) on the face's grid the same.
pub fn layout(body: &Body, which: Which) -> (Vec<u32>, Vec<Vec2>, Vec<u32>) {
    let count = body.len();
    let (faces, n) = match which {
        Which::Jelly => (6, (count as f64).cbrt().round() as usize),
        _ => (1, (count as f64).sqrt().round() as usize),
    };
    let per_face = body.triangles.len() / faces;
    let last = (n.max(2) - 1) as f32;
    let mut node = Vec::new();
    let mut uv = Vec::new();
    let mut indices = Vec::new();
    for face in 0..faces {
        let mut local = std::collections::HashMap::new();
        for triangle in &body.triangles[face * per_face..(face + 1) * per_face] {
            for &k in triangle {
                let index = *local.entry(k).or_insert_with(|| {
                    let k = k as usize;
                    let (i, j, l) = (k % n, (k / n) % n, k / (n * n));
                    let coordinates = match (which, face / 2) {
                        (Which::Jelly, 0) => Vec2::new(i as f32, j as f32),
                        (Which::Jelly, 1) => Vec2::new(i as f32, l as f32),
                        (Which::Jelly, _) => Vec2::new(j as f32, l as f32),
                        _ => Vec2::new(i as f32, j as f32),
                    };
                    node.push(k as u32);
                    uv.push(coordinates / last);
                    node.len() as u32 - 1
                });
                indices.push(index);
            }
        }
    }
    (node, uv, indices)
}

impl Surface {
    /// The skin of `body` (scene `which`).
    pub fn new(gl: &glow::Context, body: &Body, which: Which) -> Result<Surface> {
        let (node, uv, indices) = layout(body, which);
        let shape = Shape {
            vertices: vec![Vertex::default(); node.len()],
            indices: indices.clone(),
        };
        Ok(Surface {
            mesh: Mesh::new(gl, &shape, true)?,
            node,
            uv,
            indices,
            scratch: Vec::new(),
            normals: Vec::new(),
        })
    }

    /// Whether this skin was made for a body of `count` nodes and `triangles` triangles.
    pub fn fits(&self, count: usize, triangles: usize) -> bool {
        self.indices.len() == 3 * triangles && self.node.iter().all(|&k| (k as usize) < count)
    }

    /// Moves the vertices to the body's nodes and recomputes the normals.
    pub fn update(&mut self, gl: &glow::Context, body: &Body) {
        self.normals.clear();
        self.normals.resize(self.node.len(), Vec3::ZERO);
        let at = |v: u32| body.position[self.node[v as usize] as usize];
        for t in self.indices.chunks_exact(3) {
            let normal = (at(t[1]) - at(t[0])).cross(at(t[2]) - at(t[0]));
            for &v in t {
                self.normals[v as usize] += normal;
            }
        }
        self.scratch.clear();
        for (v, &k) in self.node.iter().enumerate() {
            self.scratch.push(Vertex {
                position: body.position[k as usize].into(),
                normal: self.normals[v].normalize_or(Vec3::Y).into(),
                uv: self.uv[v].into(),
            });
        }
        self.mesh.update(gl, &self.scratch);
    }

    /// The mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// Frees the mesh.
    pub fn delete(&self, gl: &glow::Context) {
        self.mesh.delete(gl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloth_and_jelly_skins_cover_their_nodes_with_unit_texture_coordinates() {
        let cloth = Body::cloth(5, 1.0, Vec3::ZERO, Vec3::NEG_Y, 1.0, [1.0, 1.0, 0.0]);
        let (node, uv, indices) = layout(&cloth, Which::Cloth);
        assert_eq!(node.len(), 25);
        assert_eq!(indices.len(), 3 * cloth.triangles.len());
        let last = node.iter().position(|&k| k == 24).unwrap();
        assert_eq!(uv[last], Vec2::ONE);
        let jelly = Body::jelly(3, 1.0, Vec3::ZERO, 1.0, [1.0, 1.0, 1.0]);
        let (node, uv, _) = layout(&jelly, Which::Jelly);
        // Six faces of 3 × 3 vertices; the centre node of the cube is on none.
        assert_eq!(node.len(), 6 * 9);
        assert!(!node.contains(&13));
        assert!(uv
            .iter()
            .all(|t| t.min_element() >= 0.0 && t.max_element() <= 1.0));
        // Each face's vertices reach every corner of the texture.
        for face in node.chunks(9).zip(uv.chunks(9)) {
            assert!(face.1.contains(&Vec2::ZERO) && face.1.contains(&Vec2::ONE));
        }
    }
}
