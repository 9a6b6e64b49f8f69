//! The pool's state, shared by both models and both backends: per node a height and a vertical
//! velocity, a horizontal offset and velocity (the springs' lattice), and flags saying what the
//! node may do. Node (i, j) rests at (i·h, 0, j·h) and is stored at index j·N + i.

use super::params::{Edges, Model, PoolParams};

/// The node never moves (a fixed shore, an island).
pub const FIXED: u8 = 1;
/// The node moves only vertically (the pool's edges; every node when horizontal motion is off).
pub const LOCK_H: u8 = 2;
/// The node is on an open (absorbing) edge.
pub const OPEN: u8 = 4;

/// Bytes of state per node: height, velocity, acceleration, the horizontal offset, velocity
/// and acceleration (pairs), the flags (the CUDA buffers hold the same, `cuda::gpu_bytes`).
pub const BYTES_PER_NODE: usize = 9 * 4 + 1;

/// The surface's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Surface {
    /// Nodes per side.
    pub n: usize,
    /// Spacing, m.
    pub h: f32,
    /// Height above the rest level, m.
    pub height: Vec<f32>,
    /// Vertical velocity, m/s.
    pub velocity: Vec<f32>,
    /// Vertical acceleration of the last `forces` stage, m/s².
    pub accel: Vec<f32>,
    /// Horizontal offset from the rest position (x, z), m (springs).
    pub offset: Vec<[f32; 2]>,
    /// Horizontal velocity, m/s (springs).
    pub velocity_h: Vec<[f32; 2]>,
    /// Horizontal acceleration of the last `forces` stage, m/s² (springs).
    pub accel_h: Vec<[f32; 2]>,
    /// [`FIXED`], [`LOCK_H`], [`OPEN`] per node.
    pub flags: Vec<u8>,
}

impl Surface {
    /// A surface at rest for `params`, with `island(x, z)` saying which nodes are land.
    pub fn new(params: &PoolParams, island: impl Fn(f32, f32) -> bool) -> Surface {
        let n = params.nodes;
        let count = n * n;
        let mut surface = Surface {
            n,
            h: params.spacing(),
            height: vec![0.0; count],
            velocity: vec![0.0; count],
            accel: vec![0.0; count],
            offset: vec![[0.0; 2]; count],
            velocity_h: vec![[0.0; 2]; count],
            accel_h: vec![[0.0; 2]; count],
            flags: vec![0; count],
        };
        surface.set_flags(params, island);
        surface
    }

    /// Bytes its fields hold (their lengths; [`BYTES_PER_NODE`] a node).
    pub fn bytes(&self) -> u64 {
        let f32s = [&self.height, &self.velocity, &self.accel];
        let pairs = [&self.offset, &self.velocity_h, &self.accel_h];
        let f32s: usize = f32s
            .iter()
            .map(|v| std::mem::size_of_val(v.as_slice()))
            .sum();
        let pairs: usize = pairs
            .iter()
            .map(|v| std::mem::size_of_val(v.as_slice()))
            .sum();
        (f32s + pairs + self.flags.len()) as u64
    }

    /// Recomputes every node's flags for `params` (edges, horizontal motion) and the islands;
    /// a node that becomes fixed is put back at rest.
    pub fn set_flags(&mut self, params: &PoolParams, island: impl Fn(f32, f32) -> bool) {
        self.flags = node_flags(params, self.n, self.h, island);
        self.settle();
    }

    /// Puts the fixed nodes at rest and takes the locked ones' horizontal offset and motion
    /// away (after the flags changed; the kernel `settle_flags`).
    pub fn settle(&mut self) {
        for k in 0..self.n * self.n {
            if self.flags[k] & FIXED != 0 {
                self.height[k] = 0.0;
                self.velocity[k] = 0.0;
            }
            if self.flags[k] & LOCK_H != 0 {
                self.offset[k] = [0.0; 2];
                self.velocity_h[k] = [0.0; 2];
            }
        }
    }

    /// Fixes or frees node (i, j) (the panel's island brush), keeping the edge's own flags.
    pub fn set_island_node(&mut self, params: &PoolParams, i: usize, j: usize, land: bool) {
        let k = j * self.n + i;
        self.flags[k] = island_node_flags(self.flags[k], params, self.n, (i, j), land);
        if land {
            self.height[k] = 0.0;
            self.velocity[k] = 0.0;
            self.offset[k] = [0.0; 2];
            self.velocity_h[k] = [0.0; 2];
        }
    }

    /// Puts every node back at rest (the panel's Clear), keeping the flags.
    pub fn clear(&mut self) {
        for v in [&mut self.height, &mut self.velocity, &mut self.accel] {
            v.fill(0.0);
        }
        for v in [&mut self.offset, &mut self.velocity_h, &mut self.accel_h] {
            v.fill([0.0; 2]);
        }
    }

    /// Node (i, j)'s position, m.
    pub fn position(&self, i: usize, j: usize) -> [f32; 3] {
        let k = j * self.n + i;
        [
            i as f32 * self.h + self.offset[k][0],
            self.height[k],
            j as f32 * self.h + self.offset[k][1],
        ]
    }

    /// The vector from node (i, j) to node (a, b), m, as the forces take it: the difference of
    /// their offsets and heights plus the lattice's exact step, not of [`Surface::position`]s.
    pub fn spring(&self, (i, j): (usize, usize), (a, b): (usize, usize)) -> [f32; 3] {
        let (p, q) = (j * self.n + i, b * self.n + a);
        let step = self.step((i, j), (a, b));
        [
            self.offset[q][0] - self.offset[p][0] + step[0],
            self.height[q] - self.height[p],
            self.offset[q][1] - self.offset[p][1] + step[2],
        ]
    }

    /// [`Surface::spring`] in f64: the same differences plus the same step, not rounded to f32
    /// (the statistics' energy: the f32 sum's rounding, up to half an ulp of h per spring, is
    /// energy at first order through the pre-tension).
    pub fn spring_f64(&self, (i, j): (usize, usize), (a, b): (usize, usize)) -> [f64; 3] {
        let (p, q) = (j * self.n + i, b * self.n + a);
        let step = self.step((i, j), (a, b));
        let d = |from: f32, to: f32| f64::from(to) - f64::from(from);
        [
            d(self.offset[p][0], self.offset[q][0]) + f64::from(step[0]),
            d(self.height[p], self.height[q]),
            d(self.offset[p][1], self.offset[q][1]) + f64::from(step[2]),
        ]
    }

    /// The vector from node (i, j) to node (a, b) at rest, m: the lattice's exact step, as
    /// [`Surface::spring`] adds it (its value when every offset and height is 0).
    pub fn step(&self, (i, j): (usize, usize), (a, b): (usize, usize)) -> [f32; 3] {
        let step = |from: usize, to: usize| (to as f32 - from as f32) * self.h;
        [step(i, a), 0.0, step(j, b)]
    }

    /// The renderer's texels, one per node: (offset x, height, offset z, 1 if fixed).
    pub fn texels(&self, out: &mut Vec<[f32; 4]>) {
        out.clear();
        out.extend((0..self.n * self.n).map(|k| {
            let fixed = if self.flags[k] & FIXED != 0 { 1.0 } else { 0.0 };
            [self.offset[k][0], self.height[k], self.offset[k][1], fixed]
        }));
    }

    /// The water displaced above the rest level, h²·Σu, m³.
    pub fn volume(&self) -> f64 {
        let sum: f64 = self.height.iter().map(|&u| f64::from(u)).sum();
        sum * f64::from(self.h) * f64::from(self.h)
    }

    /// The largest |height|, m (a NaN is passed over, as the kernel's `fmaxf` does: ask
    /// [`Surface::non_finite_nodes`] whether the surface still holds).
    pub fn max_height(&self) -> f32 {
        self.height.iter().fold(0.0f32, |m, u| m.max(u.abs()))
    }

    /// The nodes whose height or vertical velocity is not finite (the statistics kernel's
    /// count, `kernels/pool.cu`).
    pub fn non_finite_nodes(&self) -> usize {
        self.height
            .iter()
            .zip(&self.velocity)
            .filter(|(u, v)| !(u.is_finite() && v.is_finite()))
            .count()
    }
}

/// Every node's flags on a grid of `n`² at spacing `h` for `params` (edges, horizontal motion),
/// with `island(x, z)` saying which nodes are land.
pub fn node_flags(
    params: &PoolParams,
    n: usize,
    h: f32,
    island: impl Fn(f32, f32) -> bool,
) -> Vec<u8> {
    let mut out = vec![0; n * n];
    for j in 0..n {
        for i in 0..n {
            let edge = i == 0 || j == 0 || i == n - 1 || j == n - 1;
            let mut flags = 0;
            if edge {
                flags |= LOCK_H;
                match params.edges {
                    Edges::Pool => {}
                    Edges::Shore => flags |= FIXED,
                    Edges::Open => flags |= OPEN,
                }
            }
            if params.model == Model::Wave || !params.horizontal {
                flags |= LOCK_H;
            }
            if island(i as f32 * h, j as f32 * h) {
                flags |= FIXED | LOCK_H;
            }
            out[j * n + i] = flags;
        }
    }
    out
}

/// The flags of node (i, j) (now `flags`) of a grid of `n`² once the island brush made it land
/// or water: a shore's edge stays fixed, edges and locked models stay locked.
pub fn island_node_flags(
    flags: u8,
    params: &PoolParams,
    n: usize,
    (i, j): (usize, usize),
    land: bool,
) -> u8 {
    let edge = i == 0 || j == 0 || i == n - 1 || j == n - 1;
    if land {
        return flags | FIXED | LOCK_H;
    }
    if edge && params.edges == Edges::Shore {
        return flags;
    }
    let locked = edge || params.model == Model::Wave || !params.horizontal;
    if locked {
        flags & !FIXED
    } else {
        flags & !(FIXED | LOCK_H)
    }
}
