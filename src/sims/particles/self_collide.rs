//! `self_collide`: a body's nodes closer than a thickness h that share no spring are pushed
//! apart to h and lose their approaching relative velocity and `friction` of their sliding one,
//! so that a cloth folded onto itself rests on itself instead of passing through (Ten Minute
//! Physics #15 does it by a spatial hash; this is a node-parallel gather over sorted cells).
//!
//! Each substep: every node's cell (side 2h) is hashed into a table of 2·nodes buckets (the
//! power of two above) and the nodes are sorted by bucket (a counting sort, in node order
//! within a bucket); then each node gathers its contacts from the 2 × 2 × 2 cells nearest it (Jacobi: every node reads the
//! positions and velocities before the stage and writes only its own; no atomics). A pair
//! sharing a spring is never a contact: its distance is its springs' business (a compressed
//! spring already pushes back), the set does not change with h, and the jelly's lattice (every
//! node within two steps linked) is left to its springs and volume term.
//!
//! Per contact (n̂ from the other node to this one, d its distance, s the node's share: ½,
//! or 1 against a pinned node): the push s·(h − d)·n̂; the velocity change
//! −s·min(v_r·n̂, 0)·n̂ − s·friction·(v_r − (v_r·n̂)·n̂), v_r the relative velocity. A node adds
//! the mean of its contacts' (not the sum: a node on a layer touches several of its nodes at
//! once, and their sum would push it that many times too far). Like `collide`, the push moves
//! `previous` along (x₋ = x − v·dt after), so it is not turned into velocity: Verlet's implied
//! velocity, Euler's and XPBD's `velocity` all become the one changed velocity, and the stage
//! adds no kinetic energy (the velocity changes are inelastic and frictional, each pair's
//! momentum kept). Pinned (and grabbed) nodes do not move but are pushed against.

use super::body::Body;
use glam::Vec3;
use rayon::prelude::*;

/// Nodes per rayon task (as `dynamics.rs`'): small bodies run on one thread.
const MIN_NODES: usize = 1024;

/// Largest cell coordinate, in cells (positions further out are clamped to it, NaN to 0: the
/// hash stays defined; the distance test still sees the true positions).
const CELL_LIMIT: f32 = (1 << 24) as f32;

/// A substep's sorted cells and the gather's output (the stage's scratch, sized once per body size).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contacts {
    /// Bucket k's nodes are `nodes[start[k]..start[k + 1]]` (one more entry than buckets).
    pub start: Vec<u32>,
    /// Node indices sorted by bucket, in node order within one.
    pub nodes: Vec<u32>,
    /// Each node's bucket.
    pub bucket: Vec<u32>,
    /// Each node's position after the stage (the gather's output), m.
    pub position: Vec<Vec3>,
    /// Each node's velocity after the stage, m/s.
    pub velocity: Vec<Vec3>,
}

/// The cell of `x` for cells of side h (`inverse` = 1/h), each coordinate clamped to
/// ±[`CELL_LIMIT`] (NaN to cell 0).
pub fn cell_of(x: Vec3, inverse: f32) -> [i32; 3] {
    let c = |v: f32| (v * inverse).floor().clamp(-CELL_LIMIT, CELL_LIMIT) as i32;
    [c(x.x), c(x.y), c(x.z)]
}

/// The bucket of cell `c` among `buckets` (a power of two; the peer's three large primes,
/// XORed, masked: a mask, not `%`, which cost a division for each of a node's 27 cells).
pub fn bucket_of(c: [i32; 3], buckets: u32) -> u32 {
    let [x, y, z] = c.map(|v| v as u32);
    (x.wrapping_mul(92_837_111) ^ y.wrapping_mul(689_287_499) ^ z.wrapping_mul(283_923_481))
        & (buckets - 1)
}

/// Buckets of a body of `nodes` nodes: the power of two ≥ 2·nodes.
pub fn buckets(nodes: usize) -> u32 {
    (2 * nodes).max(1).next_power_of_two() as u32
}

/// Sorts the nodes at `position` into cells of side 2`h` ([`Contacts`]).
pub fn sort_cells(cells: &mut Contacts, position: &[Vec3], h: f32) {
    let count = position.len();
    let table = buckets(count);
    cells.bucket.resize(count, 0);
    cells
        .bucket
        .par_iter_mut()
        .zip(position.par_iter())
        .with_min_len(MIN_NODES)
        .for_each(|(b, &x)| *b = bucket_of(cell_of(x, 0.5 / h), table));
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

/// Node `k`'s position and velocity after the stage (module docs): the mean of its contacts'
/// pushes and velocity changes, the nodes sorted at thickness `h` into `start` and `nodes`
/// ([`Contacts`]).
pub fn gather(
    body: &Body,
    sorted: (&[u32], &[u32]),
    k: usize,
    h: f32,
    friction: f32,
) -> (Vec3, Vec3) {
    let (start, nodes) = sorted;
    let (x, v) = (body.position[k], body.velocity[k]);
    if body.pinned[k] {
        return (x, v);
    }
    let table = buckets(body.len());
    // Cells of side 2h: the h-ball round x lies in the 2 × 2 × 2 cells on x's side of the
    // middle of its own cell along each axis (8 lookups instead of 27 of side h: the stage
    // took 0.31 µs a node then, most of it in the lookups).
    let inverse = 0.5 / h;
    let home = cell_of(x, inverse);
    let low = [x.x, x.y, x.z].map(|v| v * inverse);
    let first: [i32; 3] = std::array::from_fn(|a| {
        let lower = low[a] - (home[a] as f32) < 0.5;
        home[a] - i32::from(lower)
    });
    let (mut push, mut change, mut contacts) = (Vec3::ZERO, Vec3::ZERO, 0u32);
    for dz in 0..2 {
        for dy in 0..2 {
            for dx in 0..2 {
                let cell = [first[0] + dx, first[1] + dy, first[2] + dz];
                let b = bucket_of(cell, table) as usize;
                for &j in &nodes[start[b] as usize..start[b + 1] as usize] {
                    let d = x - body.position[j as usize];
                    let d2 = d.length_squared();
                    // A node in another cell of the same bucket is met there, once.
                    if j as usize == k
                        || d2 >= h * h
                        || d2 == 0.0
                        || cell_of(body.position[j as usize], inverse) != cell
                        || linked(body, k, j)
                    {
                        continue;
                    }
                    let share = if body.pinned[j as usize] { 1.0 } else { 0.5 };
                    let distance = d2.sqrt();
                    let n = d / distance;
                    push += n * (share * (h - distance));
                    let relative = v - body.velocity[j as usize];
                    let along = relative.dot(n);
                    let sliding = relative - n * along;
                    change -= (n * along.min(0.0) + sliding * friction) * share;
                    contacts += 1;
                }
            }
        }
    }
    if contacts == 0 {
        return (x, v);
    }
    let mean = 1.0 / contacts as f32;
    (x + push * mean, v + change * mean)
}

/// `self_collide` (module docs): nodes of `body` closer than `h` pushed apart, with
/// `friction` (the world's, as `collide`'s) of their sliding velocity lost per substep.
pub fn self_collide(body: &mut Body, h: f32, friction: f32, dt: f32) {
    let mut contacts = std::mem::take(&mut body.contacts);
    sort_cells(&mut contacts, &body.position, h);
    let count = body.len();
    let Contacts {
        start,
        nodes,
        position,
        velocity,
        ..
    } = &mut *contacts;
    position.resize(count, Vec3::ZERO);
    velocity.resize(count, Vec3::ZERO);
    let (sorted, old) = ((&start[..], &nodes[..]), &*body);
    position
        .par_iter_mut()
        .zip(velocity.par_iter_mut())
        .with_min_len(MIN_NODES)
        .enumerate()
        .for_each(|(k, (x, v))| (*x, *v) = gather(old, sorted, k, h, friction));
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
