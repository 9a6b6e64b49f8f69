//! `self_collide`: a body's nodes closer than a thickness h that share no spring are pushed
//! apart to h and lose their approaching relative velocity and, by Coulomb friction, of their sliding one,
//! so that a cloth folded onto itself rests on itself instead of passing through (Ten Minute
//! Physics #15 does it by a spatial hash; this is a node-parallel gather over per-node lists).
//!
//! Contact lists (a neighbour list with a skin): each node's candidates, the nodes sharing no
//! spring with it within r = h + s (s = [`SKIN`]·h) of it, are found by sorting the nodes into
//! hashed cells of side 2r and walking the 2 × 2 × 2 cells nearest each node, and stored as one
//! list per node ([`Contacts`]: CSR). The lists are kept while no node has drifted more than s/2
//! from where it was at the build, relative to the nodes' mean drift (a pair's distance changes by
//! at most the difference of the two drifts, so a pair within h now was within h + s then; a
//! translation of the whole body, a fall, changes no distance and is not counted). Each substep
//! checks that (one pass over the nodes) and rebuilds when it fails; otherwise it only walks the
//! short lists. The peer instead builds once a frame at a radius covering the travel a velocity
//! cap allows; no cap is needed here (docs/particles/physics.md "Self-collision").
//!
//! The gather: Jacobi (every node reads the positions and velocities before the stage and
//! writes only its own; no atomics). A pair sharing a spring is never a contact: its distance
//! is its springs' business (a compressed spring already pushes back), the set does not change
//! with h, and the jelly's lattice (every node within two steps linked) is left to its springs
//! and volume term.
//!
//! Per contact (n̂ from the other node to this one, d its distance, s the node's share: ½,
//! or 1 against a pinned node): the push s·(h − d)·n̂; the velocity change
//! −s·min(v_r·n̂, 0)·n̂ − s·f, v_r the relative velocity and f the part of its sliding
//! v_r − (v_r·n̂)·n̂ that Coulomb friction removes ([`dynamics::coulomb`], pressed by the
//! approach max(−v_r·n̂, 0) it removes; s·f·dt also undone as displacement), each
//! weighted 1/max(c_k, c_j), c a node's contacts this substep (a node on a layer touches
//! several of its nodes at once, and their sum would push it that many times too far; the
//! pair's one weight on both sides keeps its impulses equal and opposite, which a node's own
//! mean, 1/c_k, did not: a node dropped onto four gained 50 % momentum). Like `collide`, the push moves
//! `previous` along (x₋ = x − v·dt after), so it is not turned into velocity: Verlet's implied
//! velocity, Euler's and XPBD's `velocity` all become the one changed velocity, and the stage
//! adds no kinetic energy (the velocity changes are inelastic and frictional, each pair's
//! momentum kept). Pinned (and grabbed) nodes do not move but are pushed against.

use super::body::Body;
use super::dynamics;
use glam::Vec3;
use rayon::prelude::*;

/// Nodes per rayon task (as `dynamics.rs`'): small bodies run on one thread.
const MIN_NODES: usize = 1024;

/// Largest cell coordinate, in cells (positions further out are clamped to it, NaN to −it: the
/// hash stays defined; the distance test still sees the true positions).
const CELL_LIMIT: f32 = (1 << 24) as f32;

/// The lists' skin s, in thicknesses: candidates within h + s; rebuilt once a node drifted s/2
/// (relative to the mean drift). Larger: longer lists, fewer builds.
pub const SKIN: f32 = 1.0;

/// `self_collide`'s contact lists and scratch (sized once per body size; module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contacts {
    /// The build's sorted cells: bucket k's nodes are `nodes[start[k]..start[k + 1]]` (one
    /// more entry than buckets).
    pub start: Vec<u32>,
    /// Node indices sorted by bucket, in node order within one.
    pub nodes: Vec<u32>,
    /// Each node's bucket.
    pub bucket: Vec<u32>,
    /// Node k's candidates are `candidates[first[k]..first[k + 1]]` (CSR; neither k itself
    /// nor a node sharing a spring with it).
    pub first: Vec<u32>,
    /// Every node's candidates, node after node.
    pub candidates: Vec<u32>,
    /// Each node's position at the last build, m.
    pub anchor: Vec<Vec3>,
    /// The last build's radius h + s, m (0: none yet).
    pub radius: f32,
    /// The body's links at the last build (a live shear/bend/structural switch changes them).
    pub links: usize,
    /// Builds so far (bench and tests read it).
    pub builds: u64,
    /// Each node's contacts this substep (within h), for the pair weights.
    pub touching: Vec<u32>,
    /// Each node's position after the stage (the gather's output), m.
    pub position: Vec<Vec3>,
    /// Each node's velocity after the stage, m/s.
    pub velocity: Vec<Vec3>,
}

impl Contacts {
    /// Node `k`'s candidates.
    pub fn of(&self, k: usize) -> &[u32] {
        &self.candidates[self.first[k] as usize..self.first[k + 1] as usize]
    }
}

/// The cell of `x` for cells of side h (`inverse` = 1/h), each coordinate clamped to
/// ±[`CELL_LIMIT`] (NaN to −[`CELL_LIMIT`], away from real nodes; a NaN distance is never a
/// contact anyway).
pub fn cell_of(x: Vec3, inverse: f32) -> [i32; 3] {
    let c = |v: f32| {
        if v.is_nan() {
            -CELL_LIMIT as i32
        } else {
            (v * inverse).floor().clamp(-CELL_LIMIT, CELL_LIMIT) as i32
        }
    };
    [c(x.x), c(x.y), c(x.z)]
}

/// The bucket of cell `c` among `buckets` (a power of two; the peer's three large primes,
/// XORed, masked: a mask, not `%`, which cost a division for each of a node's cells).
pub fn bucket_of(c: [i32; 3], buckets: u32) -> u32 {
    let [x, y, z] = c.map(|v| v as u32);
    (x.wrapping_mul(92_837_111) ^ y.wrapping_mul(689_287_499) ^ z.wrapping_mul(283_923_481))
        & (buckets - 1)
}

/// Buckets of a body of `nodes` nodes: the power of two ≥ 2·nodes.
pub fn buckets(nodes: usize) -> u32 {
    (2 * nodes).max(1).next_power_of_two() as u32
}

/// Sorts the nodes at `position` into cells of side 2`r` ([`Contacts`]).
pub fn sort_cells(cells: &mut Contacts, position: &[Vec3], r: f32) {
    let count = position.len();
    let table = buckets(count);
    cells.bucket.resize(count, 0);
    cells
        .bucket
        .par_iter_mut()
        .zip(position.par_iter())
        .with_min_len(MIN_NODES)
        .for_each(|(b, &x)| *b = bucket_of(cell_of(x, 0.5 / r), table));
    cells.start.clear();
    cells.start.resize(table as usize + 1, 0);
    for &b in &cells.bucket {
        cells.start[b as usize + 1] += 1;
    }
    for k in 0..table as usize {
        cells.start[k + 1] += cells.start[k];
    }
    cells.nodes.resize(count, 0);
    // In node order: `start[b]` walks to bucket b's end, then every start moves up one bucket.
    for (k, &b) in cells.bucket.iter().enumerate() {
        cells.nodes[cells.start[b as usize] as usize] = k as u32;
        cells.start[b as usize] += 1;
    }
    cells.start.copy_within(0..table as usize, 1);
    cells.start[0] = 0;
}

/// Whether nodes `k` and `j` share a spring.
fn linked(body: &Body, k: usize, j: u32) -> bool {
    let links = &body.links[body.node_start[k] as usize..body.node_start[k + 1] as usize];
    links.iter().any(|l| l.other == j)
}

/// Calls `found` with each node sharing no spring with node `k` closer than `r` to it, the
/// nodes sorted into cells of side 2`r` in `sorted` (`start`, `nodes`: [`Contacts`]).
fn near(body: &Body, sorted: (&[u32], &[u32]), k: usize, r: f32, mut found: impl FnMut(u32)) {
    let (start, nodes) = sorted;
    let x = body.position[k];
    let table = buckets(body.len());
    // Cells of side 2r: the r-ball round x lies in the 2 × 2 × 2 cells on x's side of the
    // middle of its own cell along each axis (8 lookups instead of 27 of side r).
    let inverse = 0.5 / r;
    let home = cell_of(x, inverse);
    let low = [x.x, x.y, x.z].map(|v| v * inverse);
    let first: [i32; 3] = std::array::from_fn(|a| {
        let lower = low[a] - (home[a] as f32) < 0.5;
        home[a] - i32::from(lower)
    });
    for dz in 0..2 {
        for dy in 0..2 {
            for dx in 0..2 {
                let cell = [first[0] + dx, first[1] + dy, first[2] + dz];
                let b = bucket_of(cell, table) as usize;
                for &j in &nodes[start[b] as usize..start[b + 1] as usize] {
                    let y = body.position[j as usize];
                    // A node in another cell of the same bucket is met there, once.
                    if j as usize != k
                        && (x - y).length_squared() < r * r
                        && cell_of(y, inverse) == cell
                        && !linked(body, k, j)
                    {
                        found(j);
                    }
                }
            }
        }
    }
}

/// Builds every node's candidates within `r` of it now ([`Contacts`]; two passes: count,
/// then fill, both node-parallel).
pub fn build(contacts: &mut Contacts, body: &Body, r: f32) {
    sort_cells(contacts, &body.position, r);
    let count = body.len();
    let Contacts {
        start,
        nodes,
        first,
        candidates,
        ..
    } = contacts;
    let sorted = (&start[..], &nodes[..]);
    first.resize(count + 1, 0);
    first[0] = 0;
    first[1..]
        .par_iter_mut()
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, n)| {
            let mut found = 0;
            near(body, sorted, k, r, |_| found += 1);
            *n = found;
        });
    for k in 0..count {
        first[k + 1] += first[k];
    }
    candidates.resize(first[count] as usize, 0);
    let mut lists = Vec::with_capacity(count);
    let mut rest = &mut candidates[..];
    for k in 0..count {
        let (list, tail) = rest.split_at_mut((first[k + 1] - first[k]) as usize);
        lists.push(list);
        rest = tail;
    }
    lists
        .into_par_iter()
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, list)| {
            let mut i = 0;
            near(body, sorted, k, r, |j| {
                list[i] = j;
                i += 1;
            });
        });
    contacts.anchor.clone_from(&body.position);
    contacts.radius = r;
    contacts.links = body.links.len();
    contacts.builds += 1;
}

/// Whether the lists in `contacts` still hold every pair of `body` within `h` (module docs:
/// built for this h and body size, no node drifted more than s/2 relative to the mean drift).
pub fn current(contacts: &Contacts, body: &Body, h: f32) -> bool {
    let count = body.len();
    if count == 0
        || contacts.anchor.len() != count
        || contacts.radius != h * (1.0 + SKIN)
        || contacts.links != body.links.len()
    {
        return count == 0;
    }
    let drift = |k: usize| body.position[k] - contacts.anchor[k];
    let mean = (0..count).map(drift).sum::<Vec3>() / count as f32;
    let limit = 0.5 * SKIN * h;
    // A non-finite node (NaN or infinite) makes the mean non-finite and every node's
    // (drift − mean)² NaN, which the max below would ignore (the lists kept while it lasts):
    // it rebuilds instead (the kernel `self_collide_drift` the same).
    if !mean.is_finite() {
        return false;
    }
    let widest = (0..count)
        .map(|k| (drift(k) - mean).length_squared())
        .fold(0.0f32, |a, b| a.max(b));
    widest <= limit * limit
}

/// Whether nodes `d` apart (d = x_k − x_j) are in contact at thickness `h` (a NaN distance
/// never is; coincident nodes are, along [`direction`]'s fallback).
fn touches(d: Vec3, h: f32) -> bool {
    d.length_squared() < h * h
}

/// The unit direction from node `j` to node `k`, their distance, `d` = x_k − x_j, and whether
/// they are stacked: along d; for coincident nodes (d = 0, no direction of its own) along where
/// they were before the substep's move (`previous`: x_k₋ − x_j₋, the way back out of the
/// crossing); where those coincide too (stacked) ŷ for the node that rises and −ŷ for the
/// other: the rising one is node k where node j is pinned (k gathers, so it is free), else the
/// higher index. Antisymmetric between free nodes (the pair's velocity changes stay equal and
/// opposite); the CUDA kernel (`self_collide_direction`) does the same.
pub fn direction(body: &Body, k: usize, j: usize, d: Vec3) -> (Vec3, f32, bool) {
    let distance = d.length();
    if distance > 0.0 {
        return (d / distance, distance, false);
    }
    let before = body.previous[k] - body.previous[j];
    let apart = before.length();
    if apart > 0.0 {
        (before / apart, distance, false)
    } else if body.pinned[j] || k > j {
        (Vec3::Y, distance, true)
    } else {
        (Vec3::NEG_Y, distance, true)
    }
}

/// Node `k`'s push from a contact with a node `distance` away along `n` ([`direction`]),
/// `share` its part of the pair's (weight · ½, or the weight against a pinned node): share ·
/// (h − d) · n. Stacked nodes are not pushed apart ±h/2 each, which sends one down, under the
/// ground or into the sphere it lies on, for a substep: the rising node takes the pair's whole
/// separation, weight · h, upward, the other none.
fn push(n: Vec3, distance: f32, stacked: bool, (share, weight): (f32, f32), h: f32) -> Vec3 {
    if !stacked {
        n * (share * (h - distance))
    } else if n.y > 0.0 {
        n * (weight * h)
    } else {
        Vec3::ZERO
    }
}

/// Node `k`'s contacts among its candidates `list` at thickness `h`.
pub fn touching(body: &Body, list: &[u32], k: usize, h: f32) -> u32 {
    let x = body.position[k];
    list.iter()
        .filter(|&&j| touches(x - body.position[j as usize], h))
        .count() as u32
}

/// Node `k`'s position and velocity after the stage (module docs): its contacts' pushes and
/// velocity changes, each weighted 1/max(c_k, c_j) (c: a node's contacts, `touching`), among
/// its candidates `list` (at thickness `h`); the sliding velocity friction removed also
/// undone as displacement (times `dt`, as `collide`'s).
pub fn gather(
    body: &Body,
    (list, touching): (&[u32], &[u32]),
    k: usize,
    h: f32,
    (friction, dt): (f32, f32),
) -> (Vec3, Vec3) {
    let (x, v) = (body.position[k], body.velocity[k]);
    if body.pinned[k] {
        return (x, v);
    }
    let (mut moved, mut stop, mut slip) = (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);
    for &j in list {
        let d = x - body.position[j as usize];
        if !touches(d, h) {
            continue;
        }
        let weight = 1.0 / touching[k].max(touching[j as usize]) as f32;
        let share = weight * if body.pinned[j as usize] { 1.0 } else { 0.5 };
        let (n, distance, stacked) = direction(body, k, j as usize, d);
        moved += push(n, distance, stacked, (share, weight), h);
        let relative = v - body.velocity[j as usize];
        let along = relative.dot(n);
        let removed = dynamics::coulomb(relative - n * along, (-along).max(0.0), friction);
        stop += n * (share * along.min(0.0));
        slip += removed * share;
    }
    (x + moved - slip * dt, v - stop - slip)
}

/// `self_collide` (module docs): nodes of `body` closer than `h` pushed apart, with Coulomb
/// `friction` μ (the world's, as `collide`'s: [`dynamics::coulomb`]) on their relative sliding;
/// the lists rebuilt first when no longer [`current`].
pub fn self_collide(body: &mut Body, h: f32, friction: f32, dt: f32) {
    let mut contacts = std::mem::take(&mut body.contacts);
    if !current(&contacts, body, h) {
        build(&mut contacts, body, h * (1.0 + SKIN));
    }
    let count = body.len();
    let lists = (&contacts.first[..], &contacts.candidates[..]);
    let list = |k: usize| &lists.1[lists.0[k] as usize..lists.0[k + 1] as usize];
    let (position, velocity) = (&mut contacts.position, &mut contacts.velocity);
    position.resize(count, Vec3::ZERO);
    velocity.resize(count, Vec3::ZERO);
    let old = &*body;
    let counts = &mut contacts.touching;
    counts.resize(count, 0);
    counts
        .par_iter_mut()
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, c)| *c = touching(old, list(k), k, h));
    let counts = &contacts.touching[..];
    position
        .par_iter_mut()
        .zip(velocity.par_iter_mut())
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, (x, v))| {
            (*x, *v) = gather(old, (list(k), counts), k, h, (friction, dt));
        });
    body.position
        .par_iter_mut()
        .zip(body.previous.par_iter_mut())
        .zip(body.velocity.par_iter_mut())
        .zip(position.par_iter().zip(velocity.par_iter()))
        .with_min_len(MIN_NODES)
        .for_each(|(((x, before), v), (&x_new, &v_new))| {
            // A node without contacts keeps its values bit for bit.
            if x_new != *x || v_new != *v {
                *x = x_new;
                *v = v_new;
                *before = x_new - v_new * dt;
            }
        });
    body.contacts = contacts;
}
