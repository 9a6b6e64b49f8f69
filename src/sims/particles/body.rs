//! A spring-mass body: nodes, Hookean springs between them, and the triangles the wind pushes
//! on. The cloth (an n × n sheet) and the jelly (an n × n × n lattice) are built here. Each
//! node lists its springs (compressed rows), so a node's force is one gather — one thread
//! per node, no atomics, on the CPU as in a kernel.

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
    /// Node k's springs are `node_springs[node_start[k]..node_start[k + 1]]`.
    pub node_start: Vec<u32>,
    /// Spring indices by node.
    pub node_springs: Vec<u32>,
    /// Triangles the wind pushes on (outward normals by winding), node indices.
    pub triangles: Vec<[u32; 3]>,
}

impl Body {
    /// A body of `positions` with `springs`, at rest.
    fn new(positions: Vec<Vec3>, mass: f32, springs: Vec<(Spring, SpringKind)>) -> Body {
        let count = positions.len();
        let mut node_start = vec![0u32; count + 1];
        for (s, _) in &springs {
            node_start[s.a as usize + 1] += 1;
            node_start[s.b as usize + 1] += 1;
        }
        for k in 0..count {
            node_start[k + 1] += node_start[k];
        }
        let mut fill = node_start.clone();
        let mut node_springs = vec![0u32; 2 * springs.len()];
        for (index, (s, _)) in springs.iter().enumerate() {
            for end in [s.a, s.b] {
                node_springs[fill[end as usize] as usize] = index as u32;
                fill[end as usize] += 1;
            }
        }
        Body {
            previous: positions.clone(),
            velocity: vec![Vec3::ZERO; count],
            force: vec![Vec3::ZERO; count],
            pinned: vec![false; count],
            position: positions,
            mass,
            kinds: springs.iter().map(|(_, k)| *k).collect(),
            springs: springs.into_iter().map(|(s, _)| s).collect(),
            node_start,
            node_springs,
            triangles: Vec::new(),
        }
    }

    /// An n × n cloth of side `size` hanging in the xy plane from its top edge at `top` (its
    /// top-left corner), node (i, j) at top + (i·h, −j·h, 0): structural, shear and
    /// (with `bend`) bending springs of stiffness `stiffness` (shear and bend scaled by
    /// `shear_ratio` and `bend_ratio`), total mass `mass`.
    pub fn cloth(n: usize, size: f32, top: Vec3, mass: f32, stiffness: [f32; 3]) -> Body {
        let h = size / (n - 1) as f32;
        let index = |i: usize, j: usize| (j * n + i) as u32;
        let positions = (0..n * n)
            .map(|k| top + Vec3::new((k % n) as f32 * h, -((k / n) as f32) * h, 0.0))
            .collect::<Vec<_>>();
        let mut springs = Vec::new();
        let mut add = |a: u32, b: u32, kind: SpringKind| {
            let rest = positions[a as usize].distance(positions[b as usize]);
            let k = match kind {
                SpringKind::Structural => stiffness[0],
                SpringKind::Shear => stiffness[1],
                SpringKind::Bend => stiffness[2],
            };
            if k > 0.0 {
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
        let mut body = Body::new(positions, mass / (n * n) as f32, springs);
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let (a, b, c, d) = (
                    index(i, j),
                    index(i + 1, j),
                    index(i, j + 1),
                    index(i + 1, j + 1),
                );
                body.triangles.push([a, c, b]);
                body.triangles.push([b, c, d]);
            }
        }
        body
    }

    /// An n × n × n jelly cube of side `size` with its lowest corner at `corner`: springs to
    /// the face, edge (face diagonal) and corner (body diagonal) neighbours and to the
    /// next-nearest along each axis (the original's "genbo" springs); the wind's triangles are
    /// the six outer faces, wound outwards.
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
        let mut springs = Vec::new();
        let inside = |v: isize| (0..n as isize).contains(&v);
        for k in 0..n as isize {
            for j in 0..n as isize {
                for i in 0..n as isize {
                    let a = index(i as usize, j as usize, k as usize);
                    // Each neighbour offset once (the lexicographically positive half).
                    for dk in -2..=2isize {
                        for dj in -2..=2isize {
                            for di in -2..=2isize {
                                if (dk, dj, di) <= (0, 0, 0) {
                                    continue;
                                }
                                let steps = [di.abs(), dj.abs(), dk.abs()];
                                let kind = match (steps.iter().max(), steps.iter().sum::<isize>()) {
                                    (Some(1), 1) => SpringKind::Structural,
                                    (Some(1), _) => SpringKind::Shear,
                                    (Some(2), 2) => SpringKind::Bend,
                                    _ => continue,
                                };
                                let (x, y, z) = (i + di, j + dj, k + dk);
                                if !(inside(x) && inside(y) && inside(z)) {
                                    continue;
                                }
                                let b = index(x as usize, y as usize, z as usize);
                                let rest = positions[a as usize].distance(positions[b as usize]);
                                let s = match kind {
                                    SpringKind::Structural => stiffness[0],
                                    SpringKind::Shear => stiffness[1],
                                    SpringKind::Bend => stiffness[2],
                                };
                                springs.push((
                                    Spring {
                                        a,
                                        b,
                                        rest,
                                        stiffness: s,
                                    },
                                    kind,
                                ));
                            }
                        }
                    }
                }
            }
        }
        let mut body = Body::new(positions, mass / (n * n * n) as f32, springs);
        // The six faces: for each, a grid of (u, v) with an outward winding.
        let last = n - 1;
        let faces: [(fn(usize, usize, usize) -> (usize, usize, usize), bool); 6] = [
            (|u, v, _| (u, v, 0), false),
            (|u, v, l| (u, v, l), true),
            (|u, v, _| (u, 0, v), true),
            (|u, v, l| (u, l, v), false),
            (|u, v, _| (0, u, v), false),
            (|u, v, l| (l, u, v), true),
        ];
        for (at, flip) in faces {
            for v in 0..last {
                for u in 0..last {
                    let p = |du: usize, dv: usize| {
                        let (i, j, k) = at(u + du, v + dv, last);
                        index(i, j, k)
                    };
                    let (a, b, c, d) = (p(0, 0), p(1, 0), p(0, 1), p(1, 1));
                    if flip {
                        body.triangles.push([a, b, c]);
                        body.triangles.push([b, d, c]);
                    } else {
                        body.triangles.push([a, c, b]);
                        body.triangles.push([b, c, d]);
                    }
                }
            }
        }
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

    /// Kinetic, gravitational (above y = 0) and elastic energy, J.
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
        (kinetic, potential, elastic)
    }
}
