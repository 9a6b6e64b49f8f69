//! The vector path against the scalar one: bit for bit, on every lattice, both schemes, ink
//! grids as fine as the flow's and finer, every kind of side, an obstacle and odd sizes.

use super::{advect, Points, Scratch};
use crate::sims::ink::boundary::{Boundary, SideKind, Walls};
use crate::sims::ink::fields::{Flow, Ink};
use crate::sims::ink::params::Advection;

/// A swirling flow with a drift, an obstacle, and ink with tails that flush.
fn state(nx: usize, ny: usize, boundary: Boundary, scale: usize) -> (Flow, Ink) {
    let dx = 1.0 / nx as f32;
    let mut flow = Flow::new(nx, ny, dx, boundary);
    let mut solid = vec![false; nx * ny];
    for j in ny / 3..ny / 2 {
        for i in nx / 4..nx / 3 {
            solid[j * nx + i] = true;
        }
    }
    flow.set_solid(solid);
    for (k, u) in flow.u.data.iter_mut().enumerate() {
        let (x, y) = (
            (k % (nx + 1)) as f32 * dx,
            ((k / (nx + 1)) as f32 + 0.5) * dx,
        );
        *u = 40.0 * (6.0 * y).sin() * (4.0 * x).cos() + 5.0;
    }
    for (k, v) in flow.v.data.iter_mut().enumerate() {
        let (x, y) = (((k % nx) as f32 + 0.5) * dx, (k / nx) as f32 * dx);
        *v = 30.0 * (5.0 * x).cos() * (3.0 * y).sin() - 3.0;
    }
    flow.close_faces();
    let mut ink = Ink::new(nx * scale, ny * scale, dx / scale as f32);
    for (c, channel) in ink.channels.iter_mut().enumerate() {
        let n = channel.nx;
        for (k, value) in channel.data.iter_mut().enumerate() {
            let (i, j) = ((k % n) as f32, (k / n) as f32);
            let tail = if k % 7 == 0 { 1e-31 } else { 0.0 };
            *value = ((0.3 * i + c as f32).sin() * (0.2 * j).cos()).max(0.0) + tail;
        }
    }
    (flow, ink)
}

/// The five advected fields of one step (u, v, the ink's channels).
fn step(flow: &Flow, ink: &Ink, scheme: Advection, scalar: bool) -> Vec<Vec<f32>> {
    let mut scratch = Scratch {
        scalar,
        ..Scratch::default()
    };
    let s = flow.sampler();
    let dt = 0.0166;
    let mut out = vec![Vec::new(); 5];
    let [u, v, c0, c1, c2] = &mut out[..] else {
        unreachable!()
    };
    advect(
        [&flow.u],
        [u],
        Points::UFaces(&s),
        dt,
        scheme,
        [0.99],
        &mut scratch,
    );
    advect(
        [&flow.v],
        [v],
        Points::VFaces(&s),
        dt,
        scheme,
        [0.99],
        &mut scratch,
    );
    let points = if ink.channels[0].nx == flow.nx {
        Points::Centres(&s)
    } else {
        Points::Sampled(&s)
    };
    let [i0, i1, i2] = &ink.channels;
    advect(
        [i0, i1, i2],
        [c0, c1, c2],
        points,
        dt,
        scheme,
        [0.999; 3],
        &mut scratch,
    );
    out
}

#[test]
#[cfg_attr(
    not(fluidlab_avx2),
    ignore = "needs a CPU with AVX2 (build.rs found none): without it both paths are the scalar one"
)]
fn the_vector_path_gives_the_scalar_results_bit_for_bit() {
    let sides = |s: [SideKind; 4], walls| Boundary {
        sides: s,
        walls,
        inflow_speed: 1.5,
    };
    use SideKind::{Inflow, Outflow, Wall};
    let boundaries = [
        sides([Wall; 4], Walls::FreeSlip),
        sides([Wall; 4], Walls::NoSlip),
        sides([Inflow, Outflow, Wall, Wall], Walls::NoSlip),
        sides([Outflow, Inflow, Outflow, Wall], Walls::FreeSlip),
    ];
    let mut compared = 0;
    for (nx, ny) in [(37, 29), (24, 17), (9, 3)] {
        for boundary in boundaries {
            for scale in [1, 2] {
                let (flow, ink) = state(nx, ny, boundary, scale);
                for scheme in [Advection::SemiLagrangian, Advection::Maccormack] {
                    let vector = step(&flow, &ink, scheme, false);
                    let scalar = step(&flow, &ink, scheme, true);
                    for (f, (a, b)) in vector.iter().zip(&scalar).enumerate() {
                        assert_eq!(a.len(), b.len());
                        for (k, (a, b)) in a.iter().zip(b).enumerate() {
                            assert!(
                                a.to_bits() == b.to_bits(),
                                "{nx}×{ny}, {boundary:?}, ink ×{scale}, {scheme:?}: field {f} \
                                 point {k}: vector {a:e}, scalar {b:e}"
                            );
                        }
                        compared += a.len();
                    }
                    // The fields moved and the flush acted: a wrong trace would show.
                    assert_ne!(vector[2], ink.channels[0].data);
                    assert!(vector[2].contains(&0.0));
                }
            }
        }
    }
    assert!(compared > 100_000, "{compared} values compared");
}
