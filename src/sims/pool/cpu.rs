//! The CPU (rayon) solver: one function per stage, named as the kernels in `kernels/pool.cu`.
//! A substep is `forces` → `integrate` → `edges`; `disturb` (drops) runs once per frame before.

use super::params::{Model, PoolParams};
use super::surface::{Surface, FIXED, LOCK_H, OPEN};
use rayon::prelude::*;

/// Rows per rayon task: small grids run on one thread.
const MIN_ROWS: usize = 16;

/// The per-substep constants every stage reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepConstants {
    /// Model.
    pub model: Model,
    /// Nodes per side.
    pub n: usize,
    /// Spacing, m.
    pub h: f32,
    /// Substep, s.
    pub dt: f32,
    /// c²/h², 1/s² (wave).
    pub wave_k: f32,
    /// Structural stiffness per unit mass, 1/s² (springs).
    pub spring_k: f32,
    /// Structural rest length, m.
    pub rest: f32,
    /// Whether shear springs exist.
    pub shear: bool,
    /// Velocity decay per substep, e^(−damping·dt).
    pub decay: f32,
    /// Mur's coefficient (c·dt − h)/(c·dt + h).
    pub mur: f32,
    /// The horizontal sponge's damping per substep next to an open edge, σ_max·dt (0 when
    /// there is none: edges not open, the wave model, horizontal motion off).
    pub sponge: f32,
    /// 1 / the sponge's width in nodes.
    pub sponge_width: f32,
}

impl StepConstants {
    /// The constants of `params`' substep.
    pub fn new(params: &PoolParams) -> StepConstants {
        let (h, dt, c) = (params.spacing(), params.substep_dt(), params.wave_speed);
        StepConstants {
            model: params.model,
            n: params.nodes,
            h,
            dt,
            wave_k: c * c / (h * h),
            spring_k: params.stiffness(),
            rest: params.rest_length(),
            shear: params.shear,
            decay: (-params.damping * dt).exp(),
            mur: (c * dt - h) / (c * dt + h),
            sponge: params.sponge_strength(),
            sponge_width: 1.0 / params.sponge_nodes() as f32,
        }
    }
}

/// `forces`: every node's acceleration. Wave: c²/h²·Σ(u_nb − u) over the neighbours that exist
/// (a missing one mirrors the node: the pool wall's reflection). Springs: the pull of the four
/// structural springs (rest length h/τ) and, with shear, the four diagonal ones (rest √2·h).
pub fn forces(s: &mut Surface, k: &StepConstants) {
    match k.model {
        Model::Wave => wave_forces(s, k),
        Model::Springs => spring_forces(s, k),
    }
}

fn wave_forces(s: &mut Surface, k: &StepConstants) {
    let n = s.n;
    let u = &s.height;
    s.accel
        .par_chunks_mut(n)
        .with_min_len(MIN_ROWS)
        .enumerate()
        .for_each(|(j, row)| {
            let here = &u[j * n..(j + 1) * n];
            let below = if j > 0 { &u[(j - 1) * n..j * n] } else { here };
            let above = if j + 1 < n {
                &u[(j + 1) * n..(j + 2) * n]
            } else {
                here
            };
            let lap = |i: usize, left: f32, right: f32| {
                (left - here[i]) + (right - here[i]) + (below[i] - here[i]) + (above[i] - here[i])
            };
            row[0] = k.wave_k * lap(0, here[0], here[1]);
            for i in 1..n - 1 {
                row[i] = k.wave_k * lap(i, here[i - 1], here[i + 1]);
            }
            row[n - 1] = k.wave_k * lap(n - 1, here[n - 2], here[n - 1]);
        });
}

/// The pull on a node of a spring along `d` (from the node to the other end, `Surface::spring`)
/// with stiffness `stiffness` and rest `rest`:
/// the per-node reference [`spring_forces`] is tested against (and the kernel's form).
#[cfg(test)]
pub fn pull(d: [f32; 3], stiffness: f32, rest: f32) -> [f32; 3] {
    let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    if length == 0.0 {
        return [0.0; 3];
    }
    let f = stiffness * (length - rest) / length;
    [f * d[0], f * d[1], f * d[2]]
}

/// The springs from a node, in the order their pulls are summed: the four structural ones,
/// then the four diagonal (shear) ones.
pub const SPRINGS: [(isize, isize); 8] = [
    (-1, 0),
    (1, 0),
    (0, -1),
    (0, 1),
    (-1, -1),
    (1, -1),
    (-1, 1),
    (1, 1),
];

/// Row `j`'s nodes as three arrays (offset x, height, offset z), m: a spring's vector is the
/// difference of its ends' plus the lattice's exact step (±h or 0 along x and z), never of
/// absolute positions i·h + offset, whose f32 rounding (1.2e-7 m between 1 and 2 m) stirred
/// the lattice with noise the open edges' sponge could only hold at a floor.
fn row_offsets(height: &[f32], offset: &[[f32; 2]], n: usize, j: usize, out: &mut [Vec<f32>; 3]) {
    for c in out.iter_mut() {
        c.clear();
    }
    for i in 0..n {
        let m = j * n + i;
        out[0].push(offset[m][0]);
        out[1].push(height[m]);
        out[2].push(offset[m][1]);
    }
}

/// `v[lo + shift .. hi + shift]`.
fn shifted(v: &[f32], lo: usize, hi: usize, shift: isize) -> &[f32] {
    &v[(lo as isize + shift) as usize..(hi as isize + shift) as usize]
}

/// A row task's buffers: the positions of the rows below, at and above it, and its forces.
type RowBuffers = [[Vec<f32>; 3]; 4];

/// Each row sums its nodes' pulls spring direction by spring direction over the row's
/// offsets and heights and its neighbours' (the same operations, in the same order, as [`pull`] per
/// node: plain loops over slices the compiler vectorises).
fn spring_forces(s: &mut Surface, k: &StepConstants) {
    let n = s.n;
    let springs = if k.shear { 8 } else { 4 };
    let diagonal_rest = std::f32::consts::SQRT_2 * s.h;
    let h = s.h;
    let (height, offset) = (&s.height, &s.offset);
    s.accel
        .par_chunks_mut(n)
        .zip(s.accel_h.par_chunks_mut(n))
        .with_min_len(MIN_ROWS)
        .enumerate()
        .for_each_init(
            RowBuffers::default,
            |[below, here, above, force], (j, (vertical, horizontal))| {
                row_offsets(height, offset, n, j, here);
                if j > 0 {
                    row_offsets(height, offset, n, j - 1, below);
                }
                if j + 1 < n {
                    row_offsets(height, offset, n, j + 1, above);
                }
                for f in force.iter_mut() {
                    f.clear();
                    f.resize(n, 0.0);
                }
                for &(di, dj) in &SPRINGS[..springs] {
                    let (stiffness, rest) = if di != 0 && dj != 0 {
                        (k.spring_k, diagonal_rest)
                    } else {
                        (k.spring_k, k.rest)
                    };
                    let other = match dj {
                        -1 if j > 0 => &*below,
                        0 => &*here,
                        1 if j + 1 < n => &*above,
                        _ => continue,
                    };
                    let (lo, hi) = ((-di).max(0) as usize, n - di.max(0) as usize);
                    let (step_x, step_z) = (di as f32 * h, dj as f32 * h);
                    let (qx, qy, qz) = (
                        shifted(&other[0], lo, hi, di),
                        shifted(&other[1], lo, hi, di),
                        shifted(&other[2], lo, hi, di),
                    );
                    let (px, py, pz) = (&here[0][lo..hi], &here[1][lo..hi], &here[2][lo..hi]);
                    let [fx, fy, fz] = force;
                    let (fx, fy, fz) = (&mut fx[lo..hi], &mut fy[lo..hi], &mut fz[lo..hi]);
                    for i in 0..hi - lo {
                        let d = [
                            qx[i] - px[i] + step_x,
                            qy[i] - py[i],
                            qz[i] - pz[i] + step_z,
                        ];
                        let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                        let f = if length == 0.0 {
                            0.0
                        } else {
                            stiffness * (length - rest) / length
                        };
                        fx[i] += f * d[0];
                        fy[i] += f * d[1];
                        fz[i] += f * d[2];
                    }
                }
                vertical.copy_from_slice(&force[1]);
                for (i, h) in horizontal.iter_mut().enumerate() {
                    *h = [force[0][i], force[2][i]];
                }
            },
        );
}

/// `integrate`: symplectic Euler. v ← (v + a·dt)·decay, then x ← x + v·dt; fixed nodes stay
/// at rest (their velocity is multiplied by 0), locked ones move only vertically. Near open
/// edges the spring lattice's horizontal velocity is also multiplied by 1 − σ·r² (the sponge,
/// [`sponge`]). Branch-free loops over row slices, which the compiler vectorises.
pub fn integrate(s: &mut Surface, k: &StepConstants) {
    let n = s.n;
    let (dt, decay) = (k.dt, k.decay);
    let free = |flags: u8, bit: u8| if flags & bit == 0 { 1.0f32 } else { 0.0 };
    s.height
        .par_chunks_mut(n)
        .zip(s.velocity.par_chunks_mut(n))
        .zip(s.accel.par_chunks(n))
        .zip(s.flags.par_chunks(n))
        .with_min_len(MIN_ROWS)
        .for_each(|(((u, v), a), flags)| {
            for i in 0..n {
                v[i] = (v[i] + a[i] * dt) * decay * free(flags[i], FIXED);
                u[i] += v[i] * dt;
            }
        });
    if k.model == Model::Springs {
        integrate_horizontal(s, k);
    }
}

/// `integrate`'s horizontal half: the lattice's offsets and velocities, the velocity multiplied
/// by the decay (by [`sponge`]'s factor within the sponge) and by 0 where locked. Each row's
/// factors go into a buffer first, [`sponge`] called only where the layer is, so the loop over
/// the nodes stays as plain as without it.
fn integrate_horizontal(s: &mut Surface, k: &StepConstants) {
    let (n, dt) = (s.n, k.dt);
    // The sponge's width in nodes (its factor is the plain decay beyond), 0 without one.
    let width = if k.sponge == 0.0 {
        0
    } else {
        (1.0 / k.sponge_width).round() as usize
    };
    s.offset
        .par_chunks_mut(n)
        .zip(s.velocity_h.par_chunks_mut(n))
        .zip(s.accel_h.par_chunks(n))
        .zip(s.flags.par_chunks(n))
        .with_min_len(MIN_ROWS)
        .enumerate()
        .for_each_init(Vec::new, |damp, (j, (((x, w), b), flags))| {
            damp.clear();
            damp.resize(n, k.decay);
            if width > 0 {
                let layer = |i: usize| i <= width || i + width >= n - 1;
                let whole = j <= width || j + width >= n - 1;
                for (i, d) in damp.iter_mut().enumerate() {
                    if whole || layer(i) {
                        *d = sponge(k, i, j);
                    }
                }
            }
            for i in 0..n {
                let keep = if flags[i] & LOCK_H == 0 { 1.0f32 } else { 0.0 };
                for c in 0..2 {
                    w[i][c] = (w[i][c] + b[i][c] * dt) * damp[i] * keep;
                    x[i][c] += w[i][c] * dt;
                }
            }
        });
}

/// The horizontal velocity's factor per substep at node (i, j): decay·(1 − σ·r²), with r = 1 −
/// (d − 1)/W falling from 1 on the first free node (d = 1; the edge's own nodes are locked) to
/// 0 at W + 1 nodes in (d the distance in nodes to the nearest edge, W =
/// [`PoolParams::sponge_nodes`]) and σ = [`StepConstants::sponge`]: a layer that
/// takes away the lattice's horizontal waves before and after they meet the edge nodes, which
/// stay locked (docs/pool.md, "Open edges on the free spring lattice"). Just decay where σ = 0.
pub fn sponge(k: &StepConstants, i: usize, j: usize) -> f32 {
    let d = i.min(k.n - 1 - i).min(j.min(k.n - 1 - j));
    let r = (1.0 - d.saturating_sub(1) as f32 * k.sponge_width).max(0.0);
    k.decay * (1.0 - k.sponge * r * r)
}

/// Edge node `q` of the 4·(n − 1) of a grid of `n` per side: the bottom row left to right,
/// the right column upwards, the top row right to left, the left column downwards, each corner
/// once (the order `edges` visits them, and the kernel's threads).
pub fn edge_node(n: usize, q: usize) -> (usize, usize) {
    let side = n - 1;
    match q / side {
        0 => (q, 0),
        1 => (side, q - side),
        2 => (side - (q - 2 * side), side),
        _ => (0, side - (q - 3 * side)),
    }
}

/// `edges`: Mur's first-order absorbing condition on open edge nodes, u_b ← u_a⁰ + m·(u_a −
/// u_b⁰) with a the inner neighbour, ⁰ the values before this substep (recovered as u − v·dt)
/// and m = (c·dt − h)/(c·dt + h): a wave arriving along the normal leaves without reflection.
/// Corner nodes take the mean of their two sides. Every new height is computed from the state
/// after `integrate` before any is written, into `updates` (the caller's, kept between
/// substeps: its capacity is allocated once). Does nothing when no edge is open.
pub fn edges(s: &mut Surface, k: &StepConstants, updates: &mut Vec<(usize, f32)>) {
    let n = s.n;
    if s.flags[0] & OPEN == 0 && s.flags[n / 2] & OPEN == 0 {
        return;
    }
    let dt = k.dt;
    let before = |s: &Surface, m: usize| s.height[m] - s.velocity[m] * dt;
    updates.clear();
    for q in 0..4 * (n - 1) {
        let (i, j) = edge_node(n, q);
        let m = j * n + i;
        if s.flags[m] & OPEN == 0 || s.flags[m] & FIXED != 0 {
            continue;
        }
        let mut sum = 0.0;
        let mut count = 0.0;
        for (a, b, is_edge) in [
            (1, j, i == 0),
            (n - 2, j, i == n - 1),
            (i, 1, j == 0),
            (i, n - 2, j == n - 1),
        ] {
            if is_edge {
                let inner = b * n + a;
                sum += before(s, inner) + k.mur * (s.height[inner] - before(s, m));
                count += 1.0;
            }
        }
        updates.push((m, sum / count));
    }
    for &(m, u) in updates.iter() {
        let old = before(s, m);
        s.height[m] = u;
        s.velocity[m] = (u - old) / dt;
    }
}

/// One substep: `forces`, `integrate`, `edges` (its update list allocated here: the pool's
/// solver keeps its own, `CpuPool`).
pub fn substep(s: &mut Surface, k: &StepConstants) {
    forces(s, k);
    integrate(s, k);
    edges(s, k, &mut Vec::with_capacity(4 * s.n));
}

/// The surface's energy per unit node mass, m²/s² (kinetic, potential): ½Σv², and ½c²/h²·Σ
/// over neighbour pairs (u_a − u_b)² (wave) or Σ over springs ½(k/m)(l − l₀)² less its value
/// at rest (springs). A spring's length is that of the vector the forces take (offsets and
/// heights plus the exact step), summed in f64, [`Surface::spring_f64`]; at rest that vector
/// is the step itself, so the lattice at rest, or moved rigidly, has none to the bit. (From
/// absolute f32 positions i·h + offset, the pre-tension turned their rounding into energy at
/// first order: a still lattice shifted by a few cm read ~5·10⁻⁴ m²/s²; docs/pool.md.)
pub fn energy(s: &Surface, params: &PoolParams) -> (f64, f64) {
    let n = s.n;
    let k = StepConstants::new(params);
    let mut kinetic = 0.0f64;
    for m in 0..n * n {
        let [a, b] = s.velocity_h[m];
        kinetic += 0.5 * f64::from(s.velocity[m].powi(2) + a * a + b * b);
    }
    let mut potential = 0.0f64;
    let pairs = |di: usize, dj: usize| {
        (0..n - dj).flat_map(move |j| (0..n - di).map(move |i| (i, j, i + di, j + dj)))
    };
    match params.model {
        Model::Wave => {
            for (i, j, a, b) in pairs(1, 0).chain(pairs(0, 1)) {
                let d = f64::from(s.height[j * n + i] - s.height[b * n + a]);
                potential += 0.5 * f64::from(k.wave_k) * d * d;
            }
        }
        Model::Springs => {
            let stretch = |p: (usize, usize), q: (usize, usize), rest: f32| {
                spring_energy(k.spring_k, s.spring_f64(p, q), s.step(p, q), rest)
            };
            for (i, j, a, b) in pairs(1, 0).chain(pairs(0, 1)) {
                potential += stretch((i, j), (a, b), k.rest);
            }
            if k.shear {
                let diagonal = std::f32::consts::SQRT_2 * s.h;
                for (i, j, a, b) in pairs(1, 1) {
                    potential += stretch((i, j), (a, b), diagonal);
                    potential += stretch((a, j), (i, b), diagonal);
                }
            }
        }
    }
    (kinetic, potential)
}

/// ½(k/m)(l − l₀)² of a spring along `d` less its value along `step` (its vector at rest),
/// lengths in f64, as (l − l_r)·(l + l_r − 2l₀)/2·(k/m): the pre-tension's energy at rest is
/// never added and taken away (the kernel's `spring_energy`).
fn spring_energy(stiffness: f32, d: [f64; 3], step: [f32; 3], rest: f32) -> f64 {
    let l = d[0].hypot(d[1]).hypot(d[2]);
    let l_rest = f64::from(step[0])
        .hypot(f64::from(step[1]))
        .hypot(f64::from(step[2]));
    0.5 * f64::from(stiffness) * ((l - l_rest) * (l + l_rest - 2.0 * f64::from(rest)))
}

/// The height field's exact invariant under symplectic Euler without damping: ½(vᵀv + uᵀKu −
/// dt·vᵀKu) with K = −c²Δ_h, taken between substeps (the kinetic plus potential energy, less
/// dt/2·Σv·Ku; conserved to rounding, where the energy itself oscillates by O(dt)).
pub fn wave_invariant(s: &Surface, params: &PoolParams) -> f64 {
    let (kinetic, potential) = energy(s, params);
    let mut copy = s.clone();
    let k = StepConstants::new(params);
    wave_forces(&mut copy, &k);
    let cross: f64 = (0..s.n * s.n)
        .map(|m| f64::from(s.velocity[m]) * f64::from(copy.accel[m]))
        .sum();
    kinetic + potential + 0.5 * f64::from(k.dt) * cross
}
