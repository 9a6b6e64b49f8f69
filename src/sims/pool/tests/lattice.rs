//! The spring lattice: fixed and locked nodes, its wave speed against the height field's, its
//! energy at rest and moved rigidly, bounded without damping, its forces, damping and sponge,
//! and open edges absorbing its waves.

use super::*;
use crate::sims::pool;

/// Fixed nodes (a shore, islands) never move, and locked nodes never move horizontally, on the
/// spring lattice with strong drops.
#[test]
fn fixed_nodes_never_move() {
    let mut p = params(Model::Springs, Edges::Shore, 48);
    p.horizontal = true;
    let island = |x: f32, z: f32| (x - 1.2).powi(2) + (z - 1.0).powi(2) < 0.05;
    let mut pool = CpuPool::new(&p, island);
    let fixed = pool
        .surface
        .flags
        .iter()
        .filter(|f| *f & FIXED != 0)
        .count();
    assert!(fixed > 4 * 47 + 40, "{fixed} fixed nodes");
    for k in 0..30 {
        let drops = [drop_at([0.5 + 0.03 * k as f32, 0.9], 0.1, 0.05)];
        pool.step(&p, &drops);
    }
    let s = &pool.surface;
    let moving = s
        .offset
        .iter()
        .filter(|o| o[0] != 0.0 || o[1] != 0.0)
        .count();
    assert!(moving > 100, "only {moving} nodes moved horizontally");
    for (k, flags) in s.flags.iter().enumerate() {
        if flags & FIXED != 0 {
            assert_eq!((s.height[k], s.velocity[k]), (0.0, 0.0), "node {k}");
        }
        if flags & LOCK_H != 0 {
            assert_eq!(s.offset[k], [0.0; 2], "node {k}");
        }
    }
}

/// With horizontal motion locked and small amplitudes, the pre-tensioned spring lattice
/// carries rings at the height field's speed.
#[test]
fn the_spring_lattice_carries_waves_at_the_height_fields_speed() {
    let mut p = params(Model::Springs, Edges::Open, 257);
    p.horizontal = false;
    ring_travels_at_the_wave_speed(&p, 1e-4);
}

/// The spring lattice at rest has no energy, to the bit, with or without shear springs and at
/// any grid (the pre-tension's energy at rest was taken from h in f64, while the nodes sit at
/// f32 multiples of h: −2.7e-4 m²/s² on the 256² pond); a drop gives it some.
#[test]
fn the_spring_lattice_at_rest_has_no_energy() {
    for (nodes, shear) in [(256, true), (256, false), (97, true)] {
        let mut p = params(Model::Springs, Edges::Shore, nodes);
        p.shear = shear;
        let mut pool = CpuPool::new(&p, |_, _| false);
        assert_eq!(
            energy(&pool.surface, &p),
            (0.0, 0.0),
            "{nodes}² shear {shear}"
        );
        pool.step(&p, &[drop_at([1.0, 1.0], 0.05, 0.01)]);
        let (kinetic, potential) = energy(&pool.surface, &p);
        assert!(kinetic > 0.0 && potential > 0.0, "{kinetic}, {potential}");
    }
}

/// A still lattice moved rigidly — every node raised and shifted sideways by the same amount,
/// as far as a wave's offsets take it — has no potential energy, to the bit: each spring's
/// length is taken from the vector the forces use (offsets and heights plus the exact step),
/// summed in f64.
/// From absolute f32 positions i·h + offset, the pre-tension turned their rounding into
/// energy at first order: 5.5e-4 and −4.1e-4 m²/s² for these shifts at 192² with shear
/// springs, 9.7e-4 and −7.3e-4 at 256² without (docs/pool.md, "The statistics' energy").
#[test]
fn a_still_lattice_moved_rigidly_has_no_energy() {
    for (nodes, shear) in [(192, true), (256, false)] {
        let mut p = params(Model::Springs, Edges::Pool, nodes);
        p.horizontal = true;
        p.shear = shear;
        let mut pool = CpuPool::new(&p, |_, _| false);
        for shift in [[0.0371f32, -0.0213], [-0.0029, 0.0117]] {
            pool.surface.offset.fill(shift);
            pool.surface.height.fill(0.004);
            assert_eq!(
                energy(&pool.surface, &p),
                (0.0, 0.0),
                "{nodes}² shear {shear}, shifted by {shift:?}"
            );
        }
    }
}

/// The free spring lattice (nodes moving in 3D, shear springs) stays bounded under strong
/// drops without damping: its energy never grows past what the drops put in.
#[test]
fn the_free_spring_lattice_does_not_explode() {
    let mut p = params(Model::Springs, Edges::Pool, 64);
    p.horizontal = true;
    let mut pool = CpuPool::new(&p, |_, _| false);
    pool.step(&p, &[drop_at([0.8, 1.1], 0.15, 0.1)]);
    let energy0 = energy_of(&pool, &p);
    for _ in 0..10 {
        run_until(&mut pool, &p, 1.0);
        let e = energy_of(&pool, &p);
        assert!(
            e.is_finite() && e < 1.05 * energy0,
            "energy {e} from {energy0}"
        );
    }
    let moving = pool.surface.offset.iter().filter(|o| o[0] != 0.0).count();
    assert!(moving > 1000, "{moving}");
}

/// The row-vectorised spring forces are, bit for bit, the per-node sum of [`pull`] over the
/// springs in [`SPRINGS`] order, on a disturbed lattice with edges, shear and without.
#[test]
fn spring_forces_are_the_per_node_sum_of_pulls() {
    use pool::cpu::{forces, pull, StepConstants, SPRINGS};
    for shear in [true, false] {
        let mut p = params(Model::Springs, Edges::Pool, 21);
        p.shear = shear;
        let mut pool = CpuPool::new(&p, |_, _| false);
        for k in 0..5 {
            pool.step(&p, &[drop_at([0.3 + 0.3 * k as f32, 0.9], 0.2, 0.1)]);
        }
        let s = &mut pool.surface;
        let k = StepConstants::new(&p);
        forces(s, &k);
        let n = s.n;
        for j in 0..n {
            for i in 0..n {
                let mut f = [0.0f32; 3];
                for &(di, dj) in &SPRINGS[..if shear { 8 } else { 4 }] {
                    let (a, b) = (i as isize + di, j as isize + dj);
                    if a < 0 || b < 0 || a >= n as isize || b >= n as isize {
                        continue;
                    }
                    let rest = if di != 0 && dj != 0 {
                        std::f32::consts::SQRT_2 * s.h
                    } else {
                        k.rest
                    };
                    let g = pull(s.spring((i, j), (a as usize, b as usize)), k.spring_k, rest);
                    f = [f[0] + g[0], f[1] + g[1], f[2] + g[2]];
                }
                let m = j * n + i;
                assert_eq!(
                    [s.accel_h[m][0], s.accel[m], s.accel_h[m][1]],
                    f,
                    "node ({i}, {j})"
                );
            }
        }
        assert!(s.offset.iter().any(|o| o[0] != 0.0));
    }
}

/// Damping is one rate for the whole motion: a substep of the spring lattice scales the
/// vertical and the horizontal velocity alike by e^(−damping·dt) (with no force acting).
#[test]
fn springs_damp_the_horizontal_motion_like_the_vertical() {
    let mut p = params(Model::Springs, Edges::Pool, 8);
    p.damping = 2.0;
    let mut s = pool::surface::Surface::new(&p, |_, _| false);
    let k = pool::cpu::StepConstants::new(&p);
    let m = 3 * 8 + 3;
    s.velocity[m] = 1.0;
    s.velocity_h[m] = [1.0, -0.5];
    pool::cpu::integrate(&mut s, &k);
    let decay = (-p.damping * k.dt).exp();
    assert!((s.velocity[m] - decay).abs() < 1e-6, "{}", s.velocity[m]);
    let [a, b] = s.velocity_h[m];
    assert!(
        (a - decay).abs() < 1e-6 && (b + 0.5 * decay).abs() < 1e-6,
        "{a}, {b}"
    );
}

/// The horizontal sponge is on only with open edges on the springs free to move in 3D, and
/// there it damps from the first free node in (the edge's own are locked), also on the
/// smallest grid (8 nodes: W = 1; before, its ramp reached 0 at the first free node there, so
/// small grids had no sponge at all); elsewhere the horizontal velocity keeps the plain decay.
#[test]
fn the_sponge_damps_from_the_first_free_node_and_only_where_it_should() {
    for (model, edges, horizontal) in [
        (Model::Springs, Edges::Pool, true),
        (Model::Springs, Edges::Shore, true),
        (Model::Springs, Edges::Open, false),
        (Model::Wave, Edges::Open, true),
    ] {
        let mut p = params(model, edges, 16);
        p.horizontal = horizontal;
        assert_eq!(p.sponge_strength(), 0.0, "{model:?} {edges:?} {horizontal}");
    }
    for n in [8, 16, 129] {
        let mut p = params(Model::Springs, Edges::Open, n);
        p.damping = 2.0;
        let k = pool::cpu::StepConstants::new(&p);
        assert!(k.sponge > 0.0, "{n}");
        let width = p.sponge_nodes();
        let factor = |d: usize| pool::cpu::sponge(&k, d, n / 2) / k.decay;
        assert!(
            (factor(1) - (1.0 - k.sponge)).abs() < 1e-6,
            "{n}: {}",
            factor(1)
        );
        assert!(factor(width) < 1.0 && factor(width + 1) == 1.0, "{n}");
        assert!((1..=width).all(|d| factor(d) <= factor(d + 1)), "{n}");
    }
}

/// Open edges absorb the spring lattice's waves as the height field's: a 1 cm drop's ring
/// that has left (3.8 s at 0.5 m/s from the middle of a 2 m pool) leaves 0.1 % of its energy
/// behind. Free to move in 3D, the lattice also carries the horizontal (longitudinal and
/// shear) waves the drop sets off at second order — 0.39 % of the drop's energy is horizontal
/// kinetic at 0.9 s with shear springs (0.73 % without the sponge) — which the edge nodes,
/// locked horizontally, reflect: the sponge along the open edges takes them away. Measured
/// with shear springs: 0.096 % of the energy left at 3.8 s, 0.00012 % at 11.8 s, the
/// horizontal kinetic energy 700 times less than at 0.9 s (the statistic's springs summed in
/// f64: 0.096 % and 0.00012 %, 0.00010 % without shear springs); without the sponge 1.54 % and
/// 1.51 %, the horizontal kinetic energy as much as at 0.9 s; with the springs' vectors taken
/// from absolute f32 positions (their rounding stirring the lattice) 0.029 % at 11.8 s.
#[test]
fn open_edges_absorb_the_spring_lattices_waves() {
    let horizontal_kinetic = |pool: &CpuPool| -> f64 {
        let s = &pool.surface;
        let square = |w: &[f32; 2]| f64::from(w[0] * w[0] + w[1] * w[1]);
        s.velocity_h.iter().map(|w| 0.5 * square(w)).sum()
    };
    for (horizontal, shear) in [(false, true), (true, true), (true, false)] {
        let mut p = params(Model::Springs, Edges::Open, 129);
        (p.horizontal, p.shear) = (horizontal, shear);
        let mut pool = CpuPool::new(&p, |_, _| false);
        pool.step(&p, &[drop_at([1.0, 1.0], 0.05, 0.01)]);
        let energy0 = energy_of(&pool, &p);
        run_until(&mut pool, &p, 0.9);
        let early = horizontal_kinetic(&pool) / energy0;
        run_until(&mut pool, &p, 3.8 - 0.9);
        let left = energy_of(&pool, &p) / energy0;
        let late = horizontal_kinetic(&pool) / energy0;
        run_until(&mut pool, &p, 11.8 - 3.8);
        let last = energy_of(&pool, &p) / energy0;
        println!(
            "horizontal {horizontal}, shear {shear}: energy left {left:.3e} at 3.8 s, {last:.3e} \
             at 11.8 s; horizontal kinetic {early:.3e} at 0.9 s, {late:.3e} at 3.8 s"
        );
        assert!(
            left < 0.003,
            "open edges kept {left} of the energy at 3.8 s"
        );
        assert!(
            last < 1e-5,
            "open edges kept {last} of the energy at 11.8 s"
        );
        // The edges are locked horizontally, so each row's and column's structural springs
        // are together at least as long as at rest: the energy cannot go below 0. The
        // statistic read −2.5e-5 and −6.3e-5 here with each spring's vector summed in f32.
        assert!(last > 0.0, "{last} of the energy at 11.8 s: rounding");
        if horizontal {
            assert!(early > 0.001, "no horizontal waves to absorb: {early}");
            assert!(
                late < 0.1 * early,
                "{late} of {early} horizontal kinetic energy left"
            );
        }
    }
}
