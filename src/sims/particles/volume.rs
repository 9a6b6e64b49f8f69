//! `volume`: the jelly's signed volume term, one per lattice cell. Spring lengths do not change
//! when a cell is mirrored, so a cell turned inside out costs the springs nothing
//! (docs/particles/physics.md, "The volume term"); a signed volume does: the rest volume V₀ is
//! positive, an inverted cell's V is negative, and the energy ½·(K/V₀)·(V − V₀)² (K the
//! scene's `volume_stiffness`, a bulk modulus in Pa) pushes it back through zero.
//!
//! A cell's V is the mean of its eight corner terms: at corner c the parallelepiped of the
//! cell's three edges from c, s_c·a·(b × d) (a, b, d the edges along x, y, z, s_c = −1 at the
//! corners an odd number of steps from corner 0, which makes a right-handed cube's every term
//! +h³). It is the trilinear cell's Jacobian determinant sampled at its corners: the cell's
//! volume exactly for affine motion (so for the rest cubes and a mirrored cell, V = −V₀), for a
//! distorted cell a quadrature of the trilinear volume (a frustum with its top face halved:
//! 0.625 against 0.583), which can stay positive with one corner folded through (one corner
//! term −1.4, V = +0.4: no push from this term for that cell). It is symmetric (no diagonal is
//! chosen, unlike a split into 5 or 6 tetrahedra, whose alternating splits would push a
//! sloshing jelly unevenly), and each corner term is the corner tetrahedron the tangles
//! measurements count inverted (times 6).
//!
//! Verlet and Euler: the cells' pressures p = (K/V₀)·(V − V₀) (cells in parallel), then each
//! node gathers −p·∂V/∂x from the up to 8 cells around it (nodes in parallel, no atomics), as
//! `springs` gathers its links' pulls. XPBD: a constraint C = V − V₀ of compliance V₀/K per
//! cell, projected after the springs in each sweep, cells in 8 colours by the parity of their
//! (i, j, k) (no two cells of a colour share a node), as the springs' colours.

use super::body::Body;
use glam::Vec3;
use rayon::prelude::*;

/// Nodes or cells per rayon task.
const MIN_ITEMS: usize = 1024;

/// A jelly's cells: the (n − 1)³ cubes of its n³ lattice (none for a cloth).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cells {
    /// Nodes per side of the lattice; 0: no cells (a cloth).
    pub side: usize,
    /// Each cell's rest volume V₀ (its volume at the start), m³, cell (i, j, k) at
    /// (k·(n − 1) + j)·(n − 1) + i.
    pub rest: Vec<f32>,
    /// The bulk modulus K, Pa (N/m²): a cell's energy ½·(K/V₀)·(V − V₀)²; 0: off.
    pub modulus: f32,
    /// Each cell's pressure (K/V₀)·(V − V₀), N/m² (the `volume` stage's scratch).
    pub pressure: Vec<f32>,
    /// Each cell's pull on each corner, ∂V/∂x·p, N (the `volume` stage's scratch: computed
    /// once a cell, gathered by the nodes).
    pub pull: Vec<[Vec3; 8]>,
    /// Each cell's multiplier λ over the substep (XPBD's scratch).
    pub lambda: Vec<f32>,
}

impl Cells {
    /// The cells of an n³ lattice at `position` (their rest volumes from it), of modulus 0.
    pub fn lattice(n: usize, position: &[Vec3]) -> Cells {
        let count = n.saturating_sub(1).pow(3);
        let rest = (0..count)
            .map(|c| volume(&corners(position, n, c)))
            .collect();
        Cells {
            side: n,
            rest,
            modulus: 0.0,
            pressure: vec![0.0; count],
            pull: vec![[Vec3::ZERO; 8]; count],
            lambda: vec![0.0; count],
        }
    }

    /// Cells.
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// Whether there are none (a cloth).
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Whether the term acts: cells and a modulus above 0.
    pub fn active(&self) -> bool {
        !self.is_empty() && self.modulus > 0.0
    }

    /// The term's energy Σ ½·(K/V₀)·(V − V₀)² at `position`, J.
    pub fn energy(&self, position: &[Vec3]) -> f64 {
        if !self.active() {
            return 0.0;
        }
        let k = f64::from(self.modulus);
        (0..self.len())
            .map(|c| {
                let rest = f64::from(self.rest[c]);
                let change = f64::from(volume(&corners(position, self.side, c))) - rest;
                0.5 * k / rest * change * change
            })
            .sum()
    }

    /// Cells turned inside out at `position`: those with a corner term s_c·a·(b × d) below 0
    /// (a corner tetrahedron of negative volume; a mirrored cell has all eight).
    pub fn inverted(&self, position: &[Vec3]) -> usize {
        (0..self.len())
            .filter(|&c| {
                let q = corners(position, self.side, c);
                (0..8).any(|corner| {
                    let (a, b, d) = edges(&q, corner);
                    let term = a.dot(b.cross(d));
                    (if odd(corner) { -term } else { term }) < 0.0
                })
            })
            .count()
    }

    /// A bound on the term's stiffness at a node, N/m (for [`Body::omega_max`]): Gershgorin's
    /// row sum at rest, diagonal and off-diagonal together, per cell (K/V₀)·|∂V/∂x_i|·Σ_j
    /// |∂V/∂x_j| = 1.5·K·h for a cube of side h (|∂V/∂x| = √3·h²/4 at each corner), over the 8
    /// cells around an inner node: 12·K·h, added once (a spring's k is doubled, its diagonal
    /// and off-diagonal). The assembled term's largest eigenvalue on a 10³ lattice is 3.7·K·h
    /// (power iteration, in review), so the bound is about 3× loose; it leaves out the geometric
    /// stiffness p·∂²V/∂x², which grows when a cell is crushed or inverted (p down to −K).
    pub fn node_stiffness(&self) -> f32 {
        if !self.active() {
            return 0.0;
        }
        let most = self.rest.iter().fold(0.0f32, |m, &v| m.max(v));
        12.0 * self.modulus * most.cbrt()
    }
}

/// Cell `cell`'s corners, corner m = x + 2y + 4z at node (i + x, j + y, k + z) of an n³ lattice.
pub fn corners(position: &[Vec3], n: usize, cell: usize) -> [Vec3; 8] {
    let m = n - 1;
    let (i, j, k) = (cell % m, (cell / m) % m, cell / (m * m));
    std::array::from_fn(|c| position[((k + (c >> 2)) * n + j + ((c >> 1) & 1)) * n + i + (c & 1)])
}

/// The edges from corner `c` along x, y and z.
fn edges(q: &[Vec3; 8], c: usize) -> (Vec3, Vec3, Vec3) {
    let p = q[c];
    (q[c ^ 1] - p, q[c ^ 2] - p, q[c ^ 4] - p)
}

/// Whether corner `c` is an odd number of steps from corner 0 (its term's sign is −).
fn odd(c: usize) -> bool {
    (c ^ (c >> 1) ^ (c >> 2)) & 1 == 1
}

/// The cell's signed volume: the mean of its corner terms s_c·a·(b × d), m³.
pub fn volume(q: &[Vec3; 8]) -> f32 {
    let mut sum = 0.0f32;
    for c in 0..8 {
        let (a, b, d) = edges(q, c);
        let term = a.dot(b.cross(d));
        sum += if odd(c) { -term } else { term };
    }
    sum * 0.125
}

/// ∂V/∂x of corner `m`, m²: the corner terms it is in, its own (−(b×d + d×a + a×b)) and its
/// three neighbours' along x, y, z (where it ends the neighbour's edge a, b or d: b×d, d×a
/// or a×b), each with its corner's sign, over 8.
pub fn gradient(q: &[Vec3; 8], m: usize) -> Vec3 {
    let mut sum = Vec3::ZERO;
    for step in [0, 1, 2, 4] {
        let c = m ^ step;
        let (a, b, d) = edges(q, c);
        let term = match step {
            0 => -((b.cross(d) + d.cross(a)) + a.cross(b)),
            1 => b.cross(d),
            2 => d.cross(a),
            _ => a.cross(b),
        };
        sum += if odd(c) { -term } else { term };
    }
    sum * 0.125
}

/// ∂V/∂x of every corner, as [`gradient`] computes each (the same operations on the same
/// floats, so the same bits) with each corner's three cross products computed once.
pub fn gradients(q: &[Vec3; 8]) -> [Vec3; 8] {
    let crosses: [[Vec3; 3]; 8] = std::array::from_fn(|c| {
        let (a, b, d) = edges(q, c);
        [b.cross(d), d.cross(a), a.cross(b)]
    });
    let signed = |c: usize, term: Vec3| if odd(c) { -term } else { term };
    std::array::from_fn(|m| {
        let [bd, da, ab] = crosses[m];
        let mut sum = Vec3::ZERO;
        sum += signed(m, -((bd + da) + ab));
        sum += signed(m ^ 1, crosses[m ^ 1][0]);
        sum += signed(m ^ 2, crosses[m ^ 2][1]);
        sum += signed(m ^ 4, crosses[m ^ 4][2]);
        sum * 0.125
    })
}

/// The cells around node `node` of an n³ lattice: (cell, the node's corner in it), corner
/// order, up to 8.
pub fn around(n: usize, node: usize) -> impl Iterator<Item = (usize, usize)> {
    let m = n - 1;
    let (i, j, k) = (node % n, (node / n) % n, node / (n * n));
    (0..8).filter_map(move |corner: usize| {
        let (x, y, z) = (corner & 1, (corner >> 1) & 1, corner >> 2);
        let inside = |at: usize, step: usize| at >= step && at - step < m;
        (inside(i, x) && inside(j, y) && inside(k, z))
            .then(|| (((k - z) * m + j - y) * m + i - x, corner))
    })
}

/// `volume` under Verlet and Euler: each cell's pressure p = (K/V₀)·(V − V₀) and its pull
/// ∂V/∂x·p on each corner, once a cell (cells in parallel), then each node's force less its
/// cells' pulls, in corner order (nodes in parallel, no atomics). The kernels compute the
/// pulls at the nodes (`volume_gather`: each node its cells' gradients): the same operations
/// on the same floats, so the same sums bit for bit (as `springs`). Nothing without cells or
/// at K = 0.
pub fn volume_forces(body: &mut Body) {
    let cells = &mut body.cells;
    if !cells.active() {
        return;
    }
    let (n, modulus, position) = (cells.side, cells.modulus, &body.position);
    cells
        .pressure
        .par_iter_mut()
        .zip(cells.pull.par_iter_mut())
        .zip(cells.rest.par_iter())
        .enumerate()
        .with_min_len(MIN_ITEMS)
        .for_each(|(c, ((p, pull), &rest))| {
            let q = corners(position, n, c);
            *p = modulus / rest * (volume(&q) - rest);
            let g = gradients(&q);
            *pull = std::array::from_fn(|corner| g[corner] * *p);
        });
    let pull = &cells.pull;
    body.force
        .par_iter_mut()
        .enumerate()
        .with_min_len(MIN_ITEMS)
        .for_each(|(k, f)| {
            let mut sum = *f;
            for (cell, corner) in around(n, k) {
                sum -= pull[cell][corner];
            }
            *f = sum;
        });
}

/// XPBD's volume constraints, one sweep: C = V − V₀ of compliance α = V₀/K (α̃ = α/dt²) per
/// cell on the positions `previous` + Δ, Δλ = (−C − α̃λ)/(Σ w|∂V/∂x|² + α̃), each corner's Δ
/// moved by w·Δλ·∂V/∂x; colour by colour (a cell's colour: the parities of its i, j, k), the
/// cells of a colour sharing no node.
pub fn xpbd_volume(
    cells: &mut Cells,
    (inverse_mass, dt): (f32, f32),
    pinned: &[bool],
    previous: &[Vec3],
    displacement: &mut [Vec3],
) {
    if !cells.active() {
        return;
    }
    let (n, m) = (cells.side, cells.side - 1);
    for colour in 0..8 {
        for c in 0..cells.len() {
            let (i, j, k) = (c % m, (c / m) % m, c / (m * m));
            if (i & 1) | (j & 1) << 1 | (k & 1) << 2 != colour {
                continue;
            }
            project(
                cells,
                c,
                (n, inverse_mass, dt),
                pinned,
                previous,
                displacement,
            );
        }
    }
}

/// One cell's volume constraint projected (as `xpbd_volume` in the kernels).
fn project(
    cells: &mut Cells,
    c: usize,
    (n, inverse_mass, dt): (usize, f32, f32),
    pinned: &[bool],
    previous: &[Vec3],
    displacement: &mut [Vec3],
) {
    let m = n - 1;
    let (i, j, k) = (c % m, (c / m) % m, c / (m * m));
    let node =
        |corner: usize| ((k + (corner >> 2)) * n + j + ((corner >> 1) & 1)) * n + i + (corner & 1);
    let q: [Vec3; 8] = std::array::from_fn(|corner| {
        let at = node(corner);
        previous[at] + displacement[at]
    });
    let rest = cells.rest[c];
    let weight = |corner: usize| {
        if pinned[node(corner)] {
            0.0
        } else {
            inverse_mass
        }
    };
    let mut sum = 0.0f32;
    let g = gradients(&q);
    for (corner, g) in g.iter().enumerate() {
        sum += weight(corner) * g.dot(*g);
    }
    if sum == 0.0 {
        return;
    }
    let compliance = rest / (cells.modulus * dt * dt);
    let lambda = cells.lambda[c];
    let delta = (rest - volume(&q) - compliance * lambda) / (sum + compliance);
    cells.lambda[c] = lambda + delta;
    for (corner, g) in g.iter().enumerate() {
        let at = node(corner);
        displacement[at] += *g * (weight(corner) * delta);
    }
}
