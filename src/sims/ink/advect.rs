//! The `advect` stage's core: fields on one lattice carried along the flow, semi-Lagrangian
//! (Stam 1999: trace back, interpolate bilinearly) or MacCormack (Selle et al. 2008: the
//! forward result traced forward again; half the round trip's error is removed and the result
//! clamped to the values the first trace read). Every field of a lattice shares each point's
//! trace; MacCormack's second pass reuses the first's velocity (the forward trace starts where
//! the backward one did), so a point costs one velocity sample in either scheme.

use super::fields::{bilinear, Bilinear, Field, Lattice, VelocitySampler};
use super::params::Advection;
use rayon::prelude::*;

/// Buffers [`advect`] reuses from step to step.
#[derive(Default)]
pub struct Scratch {
    /// Each lattice point's backward trace (MacCormack's clamp reads it back).
    back: Vec<Bilinear>,
    /// The semi-Lagrangian result per field (MacCormack's φ̂).
    hat: Vec<Vec<f32>>,
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

impl Points<'_> {
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
    fn sampler(&self) -> &VelocitySampler<'_> {
        match self {
            Points::UFaces(s) | Points::VFaces(s) | Points::Centres(s) | Points::Sampled(s) => s,
        }
    }
}

/// Carries the `N` fields of one lattice for `dt` along the velocity at its `points` by
/// `scheme`, multiplies field `f` by `decay[f]`, and writes the results into `out` (resized to
/// the lattice).
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
    let mut out = out.map(|o| {
        o.resize(n, 0.0);
        o.as_mut_slice()
    });
    let nx = lattice.nx;
    // Each row first finds its points' stencils, then runs one tight loop per field.
    match scheme {
        Advection::SemiLagrangian => {
            rows(&mut out, nx)
                .into_par_iter()
                .enumerate()
                .for_each_init(Vec::new, |stencils, (j, row)| {
                    stencils.resize(nx, Bilinear::default());
                    trace(&lattice, &points, j, dt, stencils, |i| {
                        points.velocity(&lattice, i, j)
                    });
                    for f in 0..N {
                        let (field, decay) = (fields[f], decay[f]);
                        for (value, at) in row[f].iter_mut().zip(stencils.iter()) {
                            *value = flush(field.interpolate(*at) * (at.w * decay));
                        }
                    }
                });
        }
        Advection::Maccormack => {
            scratch.hat.resize_with(N, Vec::new);
            for buffer in &mut scratch.hat {
                buffer.resize(n, 0.0);
            }
            let blank = Bilinear::default();
            scratch.back.resize(n, blank);
            // φ̂ = φ at the foot of the backward trace; the trace is kept for the clamp.
            {
                let mut hat: [&mut [f32]; N] = scratch
                    .hat
                    .iter_mut()
                    .map(|h| h.as_mut_slice())
                    .collect::<Vec<_>>()
                    .try_into()
                    .unwrap_or_else(|_| unreachable!("N buffers"));
                scratch
                    .back
                    .par_chunks_mut(nx)
                    .zip(rows(&mut hat, nx))
                    .enumerate()
                    .for_each(|(j, (back, hat))| {
                        trace(&lattice, &points, j, dt, back, |i| {
                            points.velocity(&lattice, i, j)
                        });
                        for f in 0..N {
                            let field = fields[f];
                            for (value, at) in hat[f].iter_mut().zip(back.iter()) {
                                *value = field.interpolate(*at) * at.w;
                            }
                        }
                    });
            }
            // φ̂ traced forward from each point lands near where φ was: half the difference is
            // the first step's error; removing it is clamped to the values φ̂ was read from.
            let (back, hat) = (&scratch.back, &scratch.hat);
            rows(&mut out, nx)
                .into_par_iter()
                .enumerate()
                .for_each_init(Vec::new, |ahead, (j, row)| {
                    ahead.resize(nx, blank);
                    trace(&lattice, &points, j, -dt, ahead, |i| {
                        points.velocity(&lattice, i, j)
                    });
                    let back = &back[j * nx..(j + 1) * nx];
                    for f in 0..N {
                        let (field, hat, decay) = (fields[f], &hat[f], decay[f]);
                        let start = &field.data[j * nx..(j + 1) * nx];
                        let first = &hat[j * nx..(j + 1) * nx];
                        for ((((value, back), ahead), start), first) in row[f]
                            .iter_mut()
                            .zip(back)
                            .zip(ahead.iter())
                            .zip(start)
                            .zip(first)
                        {
                            let (_, low, high) = field.interpolate_with_bounds(*back);
                            let (low, high) = (low * back.w, high * back.w);
                            let round_trip = bilinear(hat, nx, *ahead) * ahead.w;
                            let corrected = first + 0.5 * (start - round_trip);
                            *value = flush(corrected.clamp(low, high) * decay);
                        }
                    }
                });
        }
    }
}

/// Fills `stencils` with where row `j`'s points of `lattice` come from `dt` earlier: a
/// midpoint (second-order Runge–Kutta) trace starting with the velocity `velocity(i)` at the
/// point. A first-order (Euler) trace is not area-preserving: in a rotation at rate ω each
/// step maps a disc onto one (ωdt)² larger, and the carried ink lost that fraction every step
/// (semi-Lagrangian −11 % in 2 s of stirring, MacCormack +8 %); the midpoint's error is of
/// order (ωdt)⁴.
#[inline(always)]
fn trace(
    lattice: &Lattice,
    points: &Points,
    j: usize,
    dt: f32,
    stencils: &mut [Bilinear],
    velocity: impl Fn(usize) -> (f32, f32),
) {
    for (i, stencil) in stencils.iter_mut().enumerate() {
        *stencil = {
            let (x, y) = lattice.position(i, j);
            let (u, v) = velocity(i);
            let (u, v) = points
                .sampler()
                .velocity(x - 0.5 * dt * u, y - 0.5 * dt * v);
            let (fx, fy) = (x - dt * u, y - dt * v);
            let mut at = lattice.bilinear(fx, fy);
            at.w = points.wall_factor(fx, fy);
            at
        };
    }
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
fn rows<'a, const N: usize>(out: &'a mut [&mut [f32]; N], nx: usize) -> Vec<[&'a mut [f32]; N]> {
    let ny = out[0].len() / nx;
    let mut chunks = out.each_mut().map(|o| o.chunks_mut(nx));
    (0..ny)
        .map(|_| {
            chunks
                .each_mut()
                .map(|c| c.next().expect("a row per output"))
        })
        .collect()
}
