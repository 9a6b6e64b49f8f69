//! A spring-mass body: nodes, Hookean springs between them, and the triangles the wind pushes
//! on. The cloth (an n × n sheet) and the jelly (an n × n × n lattice) are built here. Each
//! node lists its springs (compressed rows), so a node's force is one gather — one thread
//! per node, no atomics, on the CPU as in a kernel.

use super::growth::Growth;
use super::self_collide::Contacts;
use super::volume::Cells;
use glam::Vec3;

/// A spring between nodes `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    /// One end.
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Rest length, m.
    pub rest: f32,
    /// Stiffness, N/m.
    pub stiffness: f32,
}

/// A spring seen from one of its ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// The node at the other end.
    pub other: u32,
    /// Rest length, m.
    pub rest: f32,
    /// Stiffness, N/m.
    pub stiffness: f32,
    /// The spring's index in [`Body::springs`].
    pub spring: u32,
}

/// [`Body::link_pulls`]' flag: the node is the spring's higher-index end.
pub const HIGHER_END: u32 = 1 << 31;

/// What a spring joins, for its stiffness and the panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpringKind {
    /// Neighbours along an axis.
    Structural,
    /// Diagonal neighbours (cloth: across a cell; jelly: across faces and the cube's corners).
    Shear,
    /// Next-nearest along an axis (the cloth's bending springs, the jelly's "genbo" springs).
    Bend,
}

/// A spring-mass body.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Node positions, m.
    pub position: Vec<Vec3>,
    /// Positions one step ago (Verlet, XPBD), m.
    pub previous: Vec<Vec3>,
    /// Velocities, m/s (symplectic Euler, statistics).
    pub velocity: Vec<Vec3>,
    /// Forces of the last force stage, N.
    pub force: Vec<Vec3>,
    /// Whether a node is pinned (never moves; the grabber pins the node it holds).
    pub pinned: Vec<bool>,
    /// Mass per node, kg.
    pub mass: f32,
    /// The springs.
    pub springs: Vec<Spring>,
    /// Each spring's kind.
    pub kinds: Vec<SpringKind>,
    /// Node k's springs are `links[node_start[k]..node_start[k + 1]]`.
    pub node_start: Vec<u32>,
    /// Each node's springs as seen from it (every spring twice, once from each end), node by
    /// node: the other end, rest length and stiffness without looking the spring up (the
    /// stability bound, `set_stiffness`, the CUDA `springs` and `body_stats` kernels); the CPU
    /// `springs` stage's gather reads [`Body::link_pulls`] instead.
    pub links: Vec<Link>,
    /// Each link's spring index, with [`HIGHER_END`] set where the node is the spring's
    /// higher-index end (its pull is subtracted there), in [`Body::links`]' order: all that
    /// `springs`' gather reads of a link, 4 bytes instead of a [`Link`]'s 16 (the 64² cloth's
    /// links no longer fill the cache the stage shares with the springs and their pulls).
    pub link_pulls: Vec<u32>,
    /// Triangles the wind pushes on (outward normals by winding), node indices.
    pub triangles: Vec<[u32; 3]>,
    /// Node k's triangles are `node_triangles[node_triangle_start[k]..node_triangle_start[k + 1]]`.
    pub node_triangle_start: Vec<u32>,
    /// Triangle indices by node.
    pub node_triangles: Vec<u32>,
    /// Each triangle's wind force on each of its corners, N (the `wind` stage's scratch).
    pub triangle_force: Vec<Vec3>,
    /// Each spring's pull on its lower-index end, N (the `springs` stage's scratch; the
    /// other end gets its negative).
    pub spring_force: Vec<Vec3>,
    /// Each node's displacement Δ over the substep, m (XPBD's scratch, kept so a substep
    /// allocates nothing).
    pub displacement: Vec<Vec3>,
    /// Each spring's multiplier λ over the substep (XPBD's scratch, zeroed each substep).
    pub lambda: Vec<f32>,
    /// The springs by colour: colour c is `coloured[colour_start[c]..colour_start[c + 1]]`,
    /// no two springs of a colour sharing a node (greedy colouring in spring order). XPBD
    /// sweeps them in this order, so that the kernels, one launch per colour, do the same
    /// Gauss–Seidel sweep.
    pub coloured: Vec<u32>,
    /// Where each colour starts in `coloured` (one more entry than colours).
    pub colour_start: Vec<u32>,
    /// Springs switched on live, growing to their rest lengths (`growth.rs`).
    pub growth: Growth,
    /// The jelly's lattice cells and their signed volume term (`volume.rs`; a cloth has none).
    pub cells: Cells,
    /// `self_collide`'s sorted cells and scratch (`self_collide.rs`; boxed: five vectors).
    pub contacts: Box<Contacts>,
}

/// Greedy edge colouring of `springs` over `count` nodes: each spring, in order, takes the
/// lowest colour neither end has yet. Returns the springs grouped by colour (in spring order
/// within one) and the colours' starts.
fn colour(count: usize, springs: &[(Spring, SpringKind)]) -> (Vec<u32>, Vec<u32>) {
    let mut used = vec![0u128; count];
    let mut colours: Vec<Vec<u32>> = Vec::new();
    for (k, (s, _)) in springs.iter().enumerate() {
        let (a, b) = (s.a as usize, s.b as usize);
        let c = (!(used[a] | used[b])).trailing_zeros() as usize;
        assert!(c < 128, "a node with more than 64 springs");
        used[a] |= 1 << c;
        used[b] |= 1 << c;
        if colours.len() <= c {
            colours.resize(c + 1, Vec::new());
        }
        colours[c].push(k as u32);
    }
    let mut start = vec![0u32];
    for list in &colours {
        start.push(start.last().unwrap() + list.len() as u32);
    }
    (colours.concat(), start)
}

/// Compressed rows: item lists per node, `items[start[k]..start[k + 1]]` for node k.
fn compressed(
    count: usize,
    pairs: impl Iterator<Item = (u32, u32)> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; count + 1];
    for (node, _) in pairs.clone() {
        start[node as usize + 1] += 1;
    }
    for k in 0..count {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut items = vec![0u32; start[count] as usize];
    for (node, item) in pairs {
        items[fill[node as usize] as usize] = item;
        fill[node as usize] += 1;
    }
    (start, items)
}

impl Body {
    /// A body of `positions` (each of mass `mass`) joined by `springs`, at rest, wind acting on
    /// `triangles`.
    ///
    /// # Panics
    ///
    /// If a spring joins a node to itself. Springs come only from the builders here (a scene
    /// names a lattice, never a spring), which make none: one has no direction to pull along,
    /// and it would count in the CPU's figures ([`Body::energy`], [`Body::max_strain`]) but not
    /// in `body_stats`, which counts a spring at its lower-index end only
    /// (`kernels/particles_stats.cuh`).
    pub fn new(
        positions: Vec<Vec3>,
        mass: f32,
        springs: Vec<(Spring, SpringKind)>,
        triangles: Vec<[u32; 3]>,
    ) -> Body {
        for (k, (s, _)) in springs.iter().enumerate() {
            assert!(s.a != s.b, "spring {k} joins node {} to itself", s.a);
        }
        let count = positions.len();
        let ends = springs
            .iter()
            .enumerate()
            .flat_map(|(k, (s, _))| [(s.a, k as u32), (s.b, k as u32)]);
        let (node_start, node_springs) = compressed(count, ends);
        let links = (0..count)
            .flat_map(|k| {
                let list = &node_springs[node_start[k] as usize..node_start[k + 1] as usize];
                list.iter().map(move |&index| (k as u32, index))
            })
            .map(|(k, index)| {
                let s = springs[index as usize].0;
                Link {
                    other: if s.a == k { s.b } else { s.a },
                    rest: s.rest,
                    stiffness: s.stiffness,
                    spring: index,
                }
            })
            .collect::<Vec<Link>>();
        assert!(
            springs.len() < HIGHER_END as usize,
            "too many springs: {}, at most {} (a link's spring index shares its u32 with the \
             HIGHER_END flag)",
            springs.len(),
            HIGHER_END - 1
        );
        let link_pulls = (0..count)
            .flat_map(|k| {
                let list = &links[node_start[k] as usize..node_start[k + 1] as usize];
                list.iter().map(move |l| {
                    l.spring
                        | if (l.other as usize) < k {
                            HIGHER_END
                        } else {
                            0
                        }
                })
            })
            .collect();
        let corners = triangles
            .iter()
            .enumerate()
            .flat_map(|(k, t)| t.map(|node| (node, k as u32)));
        let (node_triangle_start, node_triangles) = compressed(count, corners);
        let (coloured, colour_start) = colour(count, &springs);
        Body {
            coloured,
            colour_start,
            previous: positions.clone(),
            velocity: vec![Vec3::ZERO; count],
            force: vec![Vec3::ZERO; count],
            pinned: vec![false; count],
            position: positions,
            mass,
            kinds: springs.iter().map(|(_, k)| *k).collect(),
            lambda: vec![0.0; springs.len()],
            spring_force: vec![Vec3::ZERO; springs.len()],
            springs: springs.into_iter().map(|(s, _)| s).collect(),
            node_start,
            links,
            link_pulls,
            triangle_force: vec![Vec3::ZERO; triangles.len()],
            displacement: vec![Vec3::ZERO; count],
            triangles,
            node_triangle_start,
            node_triangles,
            growth: Growth::default(),
            cells: Cells::default(),
            contacts: Box::default(),
        }
    }

    /// An n × n cloth of side `size`, node (i, j) at `corner` + i·h·x̂ + j·h·`down`
    /// (`down` is −ŷ for a cloth hanging in the xy plane, +ẑ for one lying flat): structural,
    /// shear and bending springs of stiffness `stiffness` = [structural, shear, bending] (a
    /// zero stiffness leaves that kind out), total mass `mass`. Triangles (a, c, b), (b, c, d)
    /// per cell, the original's two per cell.
    pub fn cloth(
        n: usize,
        size: f32,
        corner: Vec3,
        down: Vec3,
        mass: f32,
        stiffness: [f32; 3],
    ) -> Body {
        let h = size / (n - 1) as f32;
        let index = |i: usize, j: usize| (j * n + i) as u32;
        let positions = (0..n * n)
            .map(|k| corner + h * ((k % n) as f32 * Vec3::X + (k / n) as f32 * down))
            .collect::<Vec<_>>();
        let mut springs = Vec::new();
        let mut add = |a: u32, b: u32, kind: SpringKind| {
            let k = stiffness[kind as usize];
            if k > 0.0 {
                let rest = positions[a as usize].distance(positions[b as usize]);
                springs.push((
                    Spring {
                        a,
                        b,
                        rest,
                        stiffness: k,
                    },
                    kind,
                ));
            }
        };
        for j in 0..n {
            for i in 0..n {
                if i + 1 < n {
                    add(index(i, j), index(i + 1, j), SpringKind::Structural);
                }
                if j + 1 < n {
                    add(index(i, j), index(i, j + 1), SpringKind::Structural);
                }
                if i + 1 < n && j + 1 < n {
                    add(index(i, j), index(i + 1, j + 1), SpringKind::Shear);
                    add(index(i + 1, j), index(i, j + 1), SpringKind::Shear);
                }
                if i + 2 < n {
                    add(index(i, j), index(i + 2, j), SpringKind::Bend);
                }
                if j + 2 < n {
                    add(index(i, j), index(i, j + 2), SpringKind::Bend);
                }
            }
        }
        let mut triangles = Vec::with_capacity(2 * (n - 1) * (n - 1));
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let (a, b) = (index(i, j), index(i + 1, j));
                let (c, d) = (index(i, j + 1), index(i + 1, j + 1));
                triangles.push([a, c, b]);
                triangles.push([b, c, d]);
            }
        }
        Body::new(positions, mass / (n * n) as f32, springs, triangles)
    }

    /// An n × n × n jelly cube of side `size` with its lowest corner at `corner`: springs to
    /// the face, edge (face diagonal) and corner (body diagonal) neighbours and to the
    /// next-nearest along each axis (the original's "genbo" springs; no diagonal genbo), of
    /// stiffness [structural, shear (both diagonals), genbo]; the wind's triangles are the six
    /// outer faces, wound outwards.
    pub fn jelly(n: usize, size: f32, corner: Vec3, mass: f32, stiffness: [f32; 3]) -> Body {
        let h = size / (n - 1) as f32;
        let index = |i: usize, j: usize, k: usize| ((k * n + j) * n + i) as u32;
        let mut positions = Vec::with_capacity(n * n * n);
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    positions.push(corner + h * Vec3::new(i as f32, j as f32, k as f32));
                }
            }
        }
        // Each neighbour offset once: the lexicographically positive half of the 5³ block.
        let mut offsets = Vec::new();
        for dk in -2..=2isize {
            for dj in -2..=2isize {
                for di in -2..=2isize {
                    let steps = [di.abs(), dj.abs(), dk.abs()];
                    let (most, sum) = (steps.into_iter().max(), steps.iter().sum::<isize>());
                    let kind = match (most, sum) {
                        (Some(1), 1) => SpringKind::Structural,
                        (Some(1), _) => SpringKind::Shear,
                        (Some(2), 2) => SpringKind::Bend,
                        _ => continue,
                    };
                    if (dk, dj, di) > (0, 0, 0) && stiffness[kind as usize] > 0.0 {
                        offsets.push(([di, dj, dk], kind));
                    }
                }
            }
        }
        let side = 0..n as isize;
        let mut springs = Vec::new();
        for k in side.clone() {
            for j in side.clone() {
                for i in side.clone() {
                    let a = index(i as usize, j as usize, k as usize);
                    for &([di, dj, dk], kind) in &offsets {
                        let (x, y, z) = (i + di, j + dj, k + dk);
                        if side.contains(&x) && side.contains(&y) && side.contains(&z) {
                            let b = index(x as usize, y as usize, z as usize);
                            let rest = positions[a as usize].distance(positions[b as usize]);
                            let stiffness = stiffness[kind as usize];
                            springs.push((
                                Spring {
                                    a,
                                    b,
                                    rest,
                                    stiffness,
                                },
                                kind,
                            ));
                        }
                    }
                }
            }
        }
        // The six faces: a (u, v) grid on each, (u, v, normal) a right-handed frame outwards.
        let last = n - 1;
        type Face = fn(usize, usize, usize) -> (usize, usize, usize);
        let faces: [Face; 6] = [
            |u, v, _| (v, u, 0), // z = 0, normal −z
            |u, v, l| (u, v, l), // z = 1, normal +z
            |u, v, _| (u, 0, v), // y = 0, normal −y
            |u, v, l| (v, l, u), // y = 1, normal +y
            |u, v, _| (0, v, u), // x = 0, normal −x
            |u, v, l| (l, u, v), // x = 1, normal +x
        ];
        let mut triangles = Vec::with_capacity(12 * last * last);
        for at in faces {
            for v in 0..last {
                for u in 0..last {
                    let p = |du: usize, dv: usize| {
                        let (i, j, k) = at(u + du, v + dv, last);
                        index(i, j, k)
                    };
                    let (a, b, c, d) = (p(0, 0), p(1, 0), p(0, 1), p(1, 1));
                    triangles.push([a, b, c]);
                    triangles.push([b, d, c]);
                }
            }
        }
        let mut body = Body::new(positions, mass / (n * n * n) as f32, springs, triangles);
        body.cells = Cells::lattice(n, &body.position);
        body
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// Whether the body has no nodes.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// The mean position, m.
    pub fn centre(&self) -> Vec3 {
        self.position.iter().sum::<Vec3>() / self.len().max(1) as f32
    }

    /// The box around the finite nodes, (lowest corner, highest corner), m; `None` when no
    /// node is finite ([`bounds`]).
    pub fn bounds(&self) -> Option<[Vec3; 2]> {
        bounds(&self.position)
    }

    /// A bound on the highest angular frequency of the springs, rad/s: ω² ≤ max over nodes of
    /// (2·Σk + the cells' row sum 12·K·h)/m, Σk over the node's springs (Gershgorin's theorem
    /// on the stiffness matrix; a stretched spring's transverse stiffness is below its axial k;
    /// [`Cells::node_stiffness`]). Symplectic Euler and Verlet are stable while dt·ω < 2.
    pub fn omega_max(&self) -> f32 {
        let most = (0..self.len())
            .map(|k| {
                let list = &self.links[self.node_start[k] as usize..][..self.degree(k)];
                list.iter().map(|l| l.stiffness).sum::<f32>()
            })
            .fold(0.0f32, f32::max);
        ((2.0 * most + self.cells.node_stiffness()) / self.mass).sqrt()
    }

    /// Sets every spring's stiffness by its kind: [structural, shear, bending], N/m.
    pub fn set_stiffness(&mut self, stiffness: [f32; 3]) {
        for (spring, kind) in self.springs.iter_mut().zip(&self.kinds) {
            spring.stiffness = stiffness[*kind as usize];
        }
        for link in &mut self.links {
            link.stiffness = self.springs[link.spring as usize].stiffness;
        }
    }

    /// Springs at node `k`.
    pub fn degree(&self, k: usize) -> usize {
        (self.node_start[k + 1] - self.node_start[k]) as usize
    }

    /// The largest strain |l − l₀|/l₀ over the springs.
    pub fn max_strain(&self) -> f32 {
        self.springs
            .iter()
            .map(|s| {
                let l = self.position[s.a as usize].distance(self.position[s.b as usize]);
                (l - s.rest).abs() / s.rest
            })
            .fold(0.0, f32::max)
    }

    /// Kinetic, gravitational (above y = 0) and elastic energy (the springs' and the cells'
    /// volume term's), J.
    pub fn energy(&self, gravity: Vec3) -> (f64, f64, f64) {
        let m = f64::from(self.mass);
        let kinetic: f64 = self
            .velocity
            .iter()
            .map(|v| 0.5 * m * f64::from(v.length_squared()))
            .sum();
        let potential: f64 = self
            .position
            .iter()
            .map(|p| -m * f64::from(gravity.dot(*p)))
            .sum();
        let elastic: f64 = self
            .springs
            .iter()
            .map(|s| {
                let l = self.position[s.a as usize].distance(self.position[s.b as usize]);
                0.5 * f64::from(s.stiffness) * f64::from(l - s.rest).powi(2)
            })
            .sum();
        (
            kinetic,
            potential,
            elastic + self.cells.energy(&self.position),
        )
    }
}

/// The box around the finite points of `points`, (lowest corner, highest corner); `None` when
/// none is finite. A body's (`reduce_nodes` reduces the same on the GPU).
pub fn bounds(points: &[Vec3]) -> Option<[Vec3; 2]> {
    let finite = points.iter().filter(|p| p.is_finite());
    finite.fold(None, |bounds, &p| match bounds {
        None => Some([p, p]),
        Some([lo, hi]) => Some([lo.min(p), hi.max(p)]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The box of known points, each corner's coordinate from a different point; NaN and
    /// infinite points (one coordinate or all) left out; none finite: `None`.
    #[test]
    fn bounds_box_the_finite_points() {
        let points = [
            Vec3::new(1.0, -2.0, 0.5),
            Vec3::NAN,
            Vec3::new(-3.0, 4.0, 0.25),
            Vec3::new(100.0, f32::INFINITY, -100.0),
            Vec3::new(0.0, 0.0, 7.0),
            Vec3::new(f32::NEG_INFINITY, 0.0, 0.0),
            Vec3::new(0.0, f32::NAN, -9.0),
        ];
        assert_eq!(
            bounds(&points),
            Some([Vec3::new(-3.0, -2.0, 0.25), Vec3::new(1.0, 4.0, 7.0)])
        );
        assert_eq!(bounds(&points[..1]), Some([Vec3::new(1.0, -2.0, 0.5); 2]));
        assert_eq!(bounds(&[Vec3::NAN, Vec3::splat(f32::INFINITY)]), None);
        assert_eq!(bounds(&[]), None);
    }
}
