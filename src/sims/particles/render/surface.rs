//! `surface`: a spring-mass body's textured skin — the cloth's sheet, or the jelly's six outer
//! faces (each its own grid of vertices, so its texture and normals stop at the cube's edges) —
//! with smooth normals from the area-weighted normals of the triangles around each vertex. On
//! CUDA the `surface` kernel builds the same vertices from the layout here ([`Skin`]) straight
//! into the mesh's GL buffer.

use super::mesh::{Mesh, Shape, Vertex};
use crate::sims::particles::body::Body;
use crate::sims::particles::scene::Which;
use anyhow::Result;
use glam::{Vec2, Vec3};

/// The skin's layout: which node each vertex follows, its texture coordinates, the triangles,
/// and each vertex's triangles (compressed rows, ascending: the order [`Surface::update`] adds
/// their normals in), as the `surface` kernel reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skin {
    /// The node each vertex follows.
    pub node: Vec<u32>,
    /// Texture coordinates.
    pub uv: Vec<Vec2>,
    /// Three vertex indices per triangle.
    pub indices: Vec<u32>,
    /// Vertex v's triangles are `vertex_triangles[vertex_start[v]..vertex_start[v + 1]]`.
    pub vertex_start: Vec<u32>,
    /// Triangle indices by vertex, ascending.
    pub vertex_triangles: Vec<u32>,
}

impl Skin {
    /// The skin of `body` of scene `which` ([`layout`], and each vertex's triangles).
    pub fn of(body: &Body, which: Which) -> Skin {
        let (node, uv, indices) = layout(body, which);
        let mut count = vec![0u32; node.len() + 1];
        for &v in &indices {
            count[v as usize + 1] += 1;
        }
        for v in 0..node.len() {
            count[v + 1] += count[v];
        }
        let vertex_start = count.clone();
        let mut vertex_triangles = vec![0u32; indices.len()];
        for (t, triangle) in indices.chunks_exact(3).enumerate() {
            for &v in triangle {
                vertex_triangles[count[v as usize] as usize] = t as u32;
                count[v as usize] += 1;
            }
        }
        Skin {
            node,
            uv,
            indices,
            vertex_start,
            vertex_triangles,
        }
    }

    /// Vertices.
    pub fn len(&self) -> usize {
        self.node.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.node.is_empty()
    }
}

/// The skin: its layout and the mesh.
pub struct Surface {
    skin: Skin,
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

/// The skin's vertices at the body's nodes into `out`: each vertex's normal is the sum of the
/// unnormalised normals of the triangles around it (added triangle by triangle, in order),
/// normalised — what the `surface` kernel computes, one vertex per thread. `normals`: scratch.
pub fn vertices(skin: &Skin, body: &Body, normals: &mut Vec<Vec3>, out: &mut Vec<Vertex>) {
    normals.clear();
    normals.resize(skin.len(), Vec3::ZERO);
    let at = |v: u32| body.position[skin.node[v as usize] as usize];
    for t in skin.indices.chunks_exact(3) {
        let normal = (at(t[1]) - at(t[0])).cross(at(t[2]) - at(t[0]));
        for &v in t {
            normals[v as usize] += normal;
        }
    }
    out.clear();
    for (v, &k) in skin.node.iter().enumerate() {
        out.push(Vertex {
            position: body.position[k as usize].into(),
            normal: normals[v].normalize_or(Vec3::Y).into(),
            uv: skin.uv[v].into(),
        });
    }
}

impl Surface {
    /// The skin of `body` (scene `which`).
    pub fn new(gl: &glow::Context, body: &Body, which: Which) -> Result<Surface> {
        let skin = Skin::of(body, which);
        let shape = Shape {
            vertices: vec![Vertex::default(); skin.len()],
            indices: skin.indices.clone(),
        };
        Ok(Surface {
            mesh: Mesh::new(gl, &shape, true)?,
            skin,
            scratch: Vec::new(),
            normals: Vec::new(),
        })
    }

    /// Whether this skin was made for a body of `count` nodes and `triangles` triangles.
    pub fn fits(&self, count: usize, triangles: usize) -> bool {
        let skin = &self.skin;
        skin.indices.len() == 3 * triangles && skin.node.iter().all(|&k| (k as usize) < count)
    }

    /// The layout.
    pub fn skin(&self) -> &Skin {
        &self.skin
    }

    /// The GL buffer of the vertices ([`Vertex`]'s layout, one per vertex of the skin), which
    /// a CUDA solver writes through interop instead of [`Surface::update`].
    pub fn vertex_buffer(&self) -> u32 {
        self.mesh.vertex_buffer()
    }

    /// Moves the vertices to the body's nodes and recomputes the normals.
    pub fn update(&mut self, gl: &glow::Context, body: &Body) {
        vertices(&self.skin, body, &mut self.normals, &mut self.scratch);
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
        // Each vertex's triangles, ascending, are those holding it.
        let skin = Skin::of(&jelly, Which::Jelly);
        for v in 0..skin.len() {
            let listed = &skin.vertex_triangles
                [skin.vertex_start[v] as usize..skin.vertex_start[v + 1] as usize];
            let holding: Vec<u32> = (0..skin.indices.len() / 3)
                .filter(|&t| skin.indices[3 * t..3 * t + 3].contains(&(v as u32)))
                .map(|t| t as u32)
                .collect();
            assert_eq!(listed, holding.as_slice());
        }
        // Each face's vertices reach every corner of the texture.
        for face in node.chunks(9).zip(uv.chunks(9)) {
            assert!(face.1.contains(&Vec2::ZERO) && face.1.contains(&Vec2::ONE));
        }
    }
}
