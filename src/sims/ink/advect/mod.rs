//! The `advect` stage's core: fields on one lattice carried along the flow, semi-Lagrangian
//! (Stam 1999: trace back, interpolate bilinearly) or MacCormack (Selle et al. 2008: the
//! forward result traced forward again; half the round trip's error is removed and the result
//! clamped to the values the first trace read). Every field of a lattice shares each point's
//! trace; the velocity at the flow's own points is read, not interpolated. Where the CPU has
//! AVX2 a row's points are traced and interpolated eight at a time (`avx2.rs`: the same
//! operations in the same order, so bit for bit the scalar results below); the scalar code
//! takes the points the lanes leave (a row's tail, u's first and last face) and other CPUs.

#[cfg(target_arch = "x86_64")]
mod avx2;

use super::fields::{bilinear, Bilinear, Field, Lattice, VelocitySampler};
use super::params::Advection;
#[cfg(target_arch = "x86_64")]
use avx2::Lanes;
use rayon::prelude::*;

/// Buffers [`advect`] reuses from step to step.
#[derive(Default)]
pub struct Scratch {
    /// Per field: the semi-Lagrangian result (MacCormack's φ̂), and the smallest and the
    /// largest of the four values it was read from, × the trace's wall factor (the clamp).
    first: [Vec<Vec<f32>>; 3],
    /// Whether to leave the vector path aside (tests compare the two).
    pub scalar: bool,
}

/// Where the velocity at a lattice's points comes from.
#[derive(Clone, Copy)]
pub enum Points<'a> {
    /// u's lattice (vertical faces).
    UFaces(&'a VelocitySampler<'a>),
    /// v's lattice (horizontal faces).
    VFaces(&'a VelocitySampler<'a>),
    /// The cell centres.
    Centres(&'a VelocitySampler<'a>),
    /// Any other lattice (a finer ink grid): interpolated.
    Sampled(&'a VelocitySampler<'a>),
}

impl<'a> Points<'a> {
    /// What the advected field's value at (x, y) is multiplied by: the no-slip factor for the
    /// flow's own tangential components, 1 otherwise.
    #[inline(always)]
    fn wall_factor(&self, x: f32, y: f32) -> f32 {
        match self {
            Points::UFaces(s) if s.any_sticks() => s.u_factor(y),
            Points::VFaces(s) if s.any_sticks() => s.v_factor(x),
            _ => 1.0,
        }
    }

    /// The velocity at point (i, j) of `lattice`, exact on the flow's own lattices.
    #[inline(always)]
    fn velocity(&self, lattice: &Lattice, i: usize, j: usize) -> (f32, f32) {
        match self {
            Points::UFaces(s) => s.at_u_face(i, j),
            Points::VFaces(s) => s.at_v_face(i, j),
            Points::Centres(s) => s.at_centre(i, j),
            Points::Sampled(s) => {
                let (x, y) = lattice.position(i, j);
                s.velocity(x, y)
            }
        }
    }

    /// The flow's sampler.
    #[inline(always)]
    pub(super) fn sampler(&self) -> &'a VelocitySampler<'a> {
        match self {
            Points::UFaces(s) | Points::VFaces(s) | Points::Centres(s) | Points::Sampled(s) => s,
        }
    }
}

/// Carries the `N` fields of one lattice for `dt` along the velocity at its `points` by
/// `scheme`, multiplies field `f` by `decay[f]`, and writes the results into `out` (resized to
/// the lattice). Rows run in parallel; a row's points eight at a time where the CPU has AVX2
/// (`avx2.rs`, the same results bit for bit), the rest one by one.
pub fn advect<const N: usize>(
    fields: [&Field; N],
    out: [&mut Vec<f32>; N],
    points: Points,
    dt: f32,
    scheme: Advection,
    decay: [f32; N],
    scratch: &mut Scratch,
) {
    let lattice = fields[0].lattice();
    let n = fields[0].data.len();
    for field in &fields {
        assert_eq!(
            field.lattice(),
            lattice,
            "advected fields share one lattice"
        );
    }
    let out = out.map(|o| {
        o.resize(n, 0.0);
        o.as_mut_slice()
    });
    let nx = lattice.nx;
    let lanes = if scratch.scalar {
        None
    } else {
        Lanes::new(&lattice, points)
    };
    let values = fields.map(|f| f.data.as_slice());
    let (lattice, points) = (&lattice, &points);
    match scheme {
        Advection::SemiLagrangian => {
            rows(out, nx)
                .into_par_iter()
                .enumerate()
                .with_min_len(4)
                .for_each(|(j, mut row)| {
                    let done =
                        lanes.map_or(0..0, |l| l.semi_lagrangian(j, dt, values, decay, &mut row));
                    for i in (0..done.start).chain(done.end..nx) {
                        let at = trace(lattice, points, i, j, dt);
                        for f in 0..N {
                            row[f][i] = flush(fields[f].interpolate(at) * (at.w * decay[f]));
                        }
                    }
                });
        }
        Advection::Maccormack => {
            for buffers in &mut scratch.first {
                buffers.resize_with(N, Vec::new);
                for buffer in buffers.iter_mut() {
                    buffer.resize(n, 0.0);
                }
            }
            // φ̂ = φ at the foot of the backward trace, and the bounds of the values it weighed.
            {
                let [hat, low, high] = scratch.first.each_mut().map(|buffers| {
                    let slices: Vec<&mut [f32]> =
                        buffers.iter_mut().map(|b| b.as_mut_slice()).collect();
                    let slices: [&mut [f32]; N] = slices
                        .try_into()
                        .unwrap_or_else(|_| unreachable!("N buffers"));
                    rows(slices, nx)
                });
                hat.into_par_iter()
                    .zip(low)
                    .zip(high)
                    .enumerate()
                    .with_min_len(4)
                    .for_each(|(j, ((hat, low), high))| {
                        let mut row = [hat, low, high];
                        let done = lanes.map_or(0..0, |l| l.first_pass(j, dt, values, &mut row));
                        for i in (0..done.start).chain(done.end..nx) {
                            let at = trace(lattice, points, i, j, dt);
                            for f in 0..N {
                                let (value, low, high) = fields[f].interpolate_with_bounds(at);
                                row[0][f][i] = value * at.w;
                                row[1][f][i] = low * at.w;
                                row[2][f][i] = high * at.w;
                            }
                        }
                    });
            }
            // φ̂ traced forward from each point lands near where φ was: half the difference is
            // the first step's error; removing it is clamped to the values φ̂ was read from.
            let first = scratch
                .first
                .each_ref()
                .map(|buffers| -> [&[f32]; N] { std::array::from_fn(|f| buffers[f].as_slice()) });
            rows(out, nx)
                .into_par_iter()
                .enumerate()
                .with_min_len(4)
                .for_each(|(j, mut row)| {
                    let [hat, low, high] = &first;
                    let done = lanes.map_or(0..0, |l| {
                        l.second_pass(j, dt, values, [hat, low, high], decay, &mut row)
                    });
                    for i in (0..done.start).chain(done.end..nx) {
                        let ahead = trace(lattice, points, i, j, -dt);
                        let k = j * nx + i;
                        for f in 0..N {
                            let round_trip = bilinear(hat[f], nx, ahead) * ahead.w;
                            let corrected = hat[f][k] + 0.5 * (values[f][k] - round_trip);
                            row[f][i] = flush(corrected.clamp(low[f][k], high[f][k]) * decay[f]);
                        }
                    }
                });
        }
    }
}

/// Where point (i, j) of `lattice` comes from `dt` earlier: a midpoint (second-order
/// Runge–Kutta) trace starting with the velocity at the point, as the stencil of its foot. A
/// first-order (Euler) trace is not area-preserving: in a rotation at rate ω each step maps a
/// disc onto one (ωdt)² larger, and the carried ink lost that fraction every step
/// (semi-Lagrangian −11 % in 2 s of stirring, MacCormack +8 %); the midpoint's error is of
/// order (ωdt)⁴.
#[inline(always)]
fn trace(lattice: &Lattice, points: &Points, i: usize, j: usize, dt: f32) -> Bilinear {
    let (x, y) = lattice.position(i, j);
    let (u, v) = points.velocity(lattice, i, j);
    let (u, v) = points
        .sampler()
        .velocity(x - 0.5 * dt * u, y - 0.5 * dt * v);
    let (fx, fy) = (x - dt * u, y - dt * v);
    let mut at = lattice.bilinear(fx, fy);
    at.w = points.wall_factor(fx, fy);
    at
}

/// Below this magnitude a carried value becomes zero.
pub const FLUSH: f32 = 1e-30;

/// `value`, or zero when it is within [`FLUSH`] of it: numerical diffusion spreads the ink's
/// and the velocity's tails over the whole grid, and left alone they decay into subnormal
/// floats, on which x86 arithmetic runs tens of times slower (measured: the whole `advect`
/// stage 5× slower on `ink-painting` after a few hundred steps).
#[inline(always)]
fn flush(value: f32) -> f32 {
    if value.abs() < FLUSH {
        0.0
    } else {
        value
    }
}

/// The outputs split into rows: `rows(out)[j][f]` is row j of output f.
fn rows<const N: usize>(out: [&mut [f32]; N], nx: usize) -> Vec<[&mut [f32]; N]> {
    let ny = out[0].len() / nx;
    let mut chunks = out.map(|o| o.chunks_mut(nx));
    (0..ny)
        .map(|_| {
            chunks
                .each_mut()
                .map(|c| c.next().expect("a row per output"))
        })
        .collect()
}

/// No vector path off x86-64: every point takes the scalar code.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy)]
struct Lanes;

#[cfg(not(target_arch = "x86_64"))]
impl Lanes {
    fn new(_: &Lattice, _: Points) -> Option<Lanes> {
        None
    }
    fn semi_lagrangian<const N: usize>(
        &self,
        _: usize,
        _: f32,
        _: [&[f32]; N],
        _: [f32; N],
        _: &mut [&mut [f32]; N],
    ) -> std::ops::Range<usize> {
        0..0
    }
    fn first_pass<const N: usize>(
        &self,
        _: usize,
        _: f32,
        _: [&[f32]; N],
        _: &mut [[&mut [f32]; N]; 3],
    ) -> std::ops::Range<usize> {
        0..0
    }
    fn second_pass<const N: usize>(
        &self,
        _: usize,
        _: f32,
        _: [&[f32]; N],
        _: [&[&[f32]; N]; 3],
        _: [f32; N],
        _: &mut [&mut [f32]; N],
    ) -> std::ops::Range<usize> {
        0..0
    }
}

#[cfg(test)]
mod tests;
