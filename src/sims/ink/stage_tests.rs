//! The rates and forces of ink's stages against their definitions: damping and fade per
//! second, a stroke's rates per second and a splat's amounts, the ink's buoyancy, and
//! vorticity confinement on a vortex whose curl is known in closed form.

use super::cpu::CpuInk;
use super::fields::Field;
use super::params::InkParams;
use super::{BrushStamp, Stamp};

fn params(n: usize) -> InkParams {
    InkParams {
        cells_x: n,
        cells_y: n,
        ..InkParams::default()
    }
}

/// Sets every point of `field` to `value(x, y)` at its position.
fn fill(field: &mut Field, value: impl Fn(f32, f32) -> f32) {
    for j in 0..field.ny {
        for i in 0..field.nx {
            let (x, y) = (
                (i as f32 + field.offset[0]) * field.h,
                (j as f32 + field.offset[1]) * field.h,
            );
            let k = field.at(i, j);
            field.data[k] = value(x, y);
        }
    }
}

/// A smooth swirl and a smooth ink pattern.
fn stirred(solver: &mut CpuInk) {
    let flow = &mut solver.flow;
    fill(&mut flow.u, |x, y| (3.0 * x).sin() * (2.0 * y).cos() + 0.3);
    fill(&mut flow.v, |x, y| (4.0 * x).cos() * (3.0 * y).sin() - 0.2);
    flow.close_faces();
    for (c, channel) in solver.ink.channels.iter_mut().enumerate() {
        fill(channel, |x, y| {
            1.0 + 0.5 * (5.0 * x + c as f32).sin() * (2.0 * y).cos()
        });
    }
}

/// `velocity_damping` and `ink_fade` are rates per second: one advection of dt scales the
/// advected velocity by e^(−damping·dt) and the advected ink by e^(−fade·dt), whatever dt
/// (a rate applied per step instead would scale by e^(−damping) = 0.14 at 2/s). Compared
/// with the same advection without them, point by point, to f32 rounding (10⁻⁶).
#[test]
fn damping_and_fade_are_rates_per_second() {
    let (damping, fade) = (2.0f32, 0.5f32);
    for dt in [0.005f32, 0.02] {
        let mut plain = CpuInk::new(params(48), |_, _| false);
        let mut faded = CpuInk::new(
            InkParams {
                velocity_damping: damping,
                ink_fade: fade,
                ..params(48)
            },
            |_, _| false,
        );
        stirred(&mut plain);
        stirred(&mut faded);
        plain.advect(dt);
        faded.advect(dt);
        let compare = |a: &Field, b: &Field, factor: f32, what: &str| {
            let largest = a.data.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(largest > 0.1, "{what}: nothing to compare");
            for (k, (x, y)) in a.data.iter().zip(&b.data).enumerate() {
                assert!(
                    (x * factor - y).abs() <= 1e-6 * largest,
                    "dt {dt}, {what} point {k}: {y} vs {x} × {factor}"
                );
            }
        };
        let decay = (-damping * dt).exp();
        compare(&plain.flow.u, &faded.flow.u, decay, "u");
        compare(&plain.flow.v, &faded.flow.v, decay, "v");
        for c in 0..3 {
            let (a, b) = (&plain.ink.channels[c], &faded.ink.channels[c]);
            compare(a, b, (-fade * dt).exp(), "ink");
        }
    }
}

/// A splat adds its Gaussian amount once, a stroke (`per_second`) its rate times dt: over the
/// grid the Gaussian e^(−d²/r²) sums to π r² / dx² (its integral; the cut at 3r and the
/// sampling leave 10⁻⁴), so the ink added is amount · π r² and the u momentum velocity · π r²
/// (in m³ per unit of ink and m³/s), the stroke's dt of those.
#[test]
fn a_splat_adds_its_amounts_and_a_stroke_its_rates_times_dt() {
    let dt = 0.02;
    for per_second in [false, true] {
        let mut solver = CpuInk::new(params(64), |_, _| false);
        let stamp = Stamp {
            position: [0.5, 0.45],
            radius: 0.1,
            velocity: [2.0, -1.0],
            ink: [1.0, 0.5, 0.0],
            per_second,
            direction: None,
        };
        solver.splat(dt, &[stamp]);
        let scale = if per_second { dt } else { 1.0 };
        let area = std::f32::consts::PI * stamp.radius * stamp.radius;
        let integral = |field: &Field| field.sum() * f64::from(field.h * field.h);
        for (c, channel) in solver.ink.channels.iter().enumerate() {
            let expected = f64::from(stamp.ink[c] * scale * area);
            let added = integral(channel);
            assert!(
                (added - expected).abs() <= 1e-3 * f64::from(scale * area),
                "per second {per_second}, channel {c}: {added} vs {expected}"
            );
        }
        let (u, v) = (integral(&solver.flow.u), integral(&solver.flow.v));
        for (got, velocity) in [(u, stamp.velocity[0]), (v, stamp.velocity[1])] {
            let expected = f64::from(velocity * scale * area);
            assert!(
                (got - expected).abs() <= 1e-3 * expected.abs(),
                "per second {per_second}: momentum {got} vs {expected}"
            );
        }
    }
}

/// With the bristle stamp a brush's ink follows the bristles — across the stroke it swings
/// between bristles and gaps, along it it is even — and turns with the brush's direction,
/// while its push is the plain Gaussian's, bit for bit. A splat (no direction) stays plain.
#[test]
fn the_bristle_stamp_modulates_the_ink_along_the_stroke_and_not_the_push() {
    let splat = |stamp: BrushStamp, direction: Option<[f32; 2]>| {
        let mut solver = CpuInk::new(
            InkParams {
                brush_stamp: stamp,
                ..params(128)
            },
            |_, _| false,
        );
        let brush = Stamp {
            position: [0.5, 0.5],
            radius: 0.1,
            velocity: [2.0, -1.0],
            ink: [1.0, 1.0, 1.0],
            per_second: false,
            direction,
        };
        solver.splat(0.02, &[brush]);
        solver
    };
    // The ink with the stamp over the plain Gaussian's, at cells k(t) for t in ±0.09 m
    // (within a radius of the centre) along the line the closure picks.
    type Line = fn(usize) -> (usize, usize);
    let ratios = |direction: [f32; 2], line: Line| -> Vec<f32> {
        let bristle = splat(BrushStamp::Bristle, Some(direction));
        let round = splat(BrushStamp::Round, Some(direction));
        let (b, r) = (&bristle.ink.channels[0], &round.ink.channels[0]);
        (52..76)
            .map(|t| {
                let (i, j) = line(t);
                b.get(i, j) / r.get(i, j)
            })
            .collect()
    };
    let spread = |values: &[f32]| {
        let (lo, hi) = values
            .iter()
            .fold((f32::MAX, 0.0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        (lo, hi)
    };
    // A column a cell off the centre, and a row.
    let column: Line = |t| (66, t);
    let row: Line = |t| (t, 66);
    for (direction, across, along) in [([1.0, 0.0], column, row), ([0.0, 1.0], row, column)] {
        let (lo, hi) = spread(&ratios(direction, across));
        assert!(
            lo < 0.25 && hi > 0.7,
            "direction {direction:?}: across the stroke the ink swings {lo}–{hi} of the plain brush's"
        );
        let (lo, hi) = spread(&ratios(direction, along));
        assert!(
            hi - lo < 0.05,
            "direction {direction:?}: along the stroke the ink is even, got {lo}–{hi}"
        );
    }
    // The push is the plain Gaussian's; a splat's ink too.
    let bristle = splat(BrushStamp::Bristle, Some([0.6, 0.8]));
    let round = splat(BrushStamp::Round, Some([0.6, 0.8]));
    assert_eq!(bristle.flow.u.data, round.flow.u.data);
    assert_eq!(bristle.flow.v.data, round.flow.v.data);
    assert_ne!(bristle.ink.channels[0].data, round.ink.channels[0].data);
    let plain = splat(BrushStamp::Bristle, None);
    assert_eq!(plain.ink.channels[0].data, round.ink.channels[0].data);
}

/// Buoyancy is an acceleration per unit of ink: ink of c in all three channels (c units, the
/// channels' mean) lifts every open v face by buoyancy · c · dt in a step of dt.
#[test]
fn buoyancy_accelerates_the_ink_by_its_rate() {
    let (buoyancy, c, dt) = (3.0f32, 0.4f32, 0.02f32);
    let mut solver = CpuInk::new(
        InkParams {
            buoyancy,
            ..params(32)
        },
        |_, _| false,
    );
    for channel in &mut solver.ink.channels {
        channel.data.iter_mut().for_each(|value| *value = c);
    }
    solver.splat(dt, &[]);
    let v = &solver.flow.v;
    let expected = buoyancy * c * dt;
    for j in 1..v.ny - 1 {
        for i in 0..v.nx {
            let got = v.get(i, j);
            assert!(
                (got - expected).abs() <= 1e-5 * expected,
                "face ({i}, {j}): {got} vs {expected}"
            );
        }
    }
    // The walls carry nothing.
    assert_eq!((v.get(3, 0), v.get(3, v.ny - 1)), (0.0, 0.0));
}

/// A Gaussian vortex, u_φ(r) = Γ / (2π r) · (1 − e^(−r²/R²)), has the curl
/// ω(r) = Γ / (π R²) · e^(−r²/R²); the grid's central differences give it to O(dx²/R²), 1 %
/// at R = 8 dx (checked within 3R: the walls, 4R away, cut the vortex's tail off, and their
/// cells' one-sided differences see that). |ω| falls outwards, so N = ∇|ω| / |∇|ω|| = −r̂ and confinement's force
/// ε dx (N × ω) = ε dx ω φ̂ runs along the flow: in a step of dt the vortex turns faster by
/// dt ε dx ω(r) at every face (averaged from its two cells: O(dx²/R²) again). Checked within
/// 3 % of the largest force between R/2 and 2R (at the centre N is undefined).
#[test]
fn vorticity_confinement_spins_a_vortex_up_by_epsilon_dx_omega() {
    let n = 64;
    let mut solver = CpuInk::new(
        InkParams {
            vorticity: 4.0,
            ..params(n)
        },
        |_, _| false,
    );
    let dx = solver.flow.dx;
    let radius = 8.0 * dx;
    let peak = 10.0f32;
    let circulation = peak * std::f32::consts::PI * radius * radius;
    let centre = 0.5 * n as f32 * dx;
    let omega = |x: f32, y: f32| {
        let r2 = (x - centre).powi(2) + (y - centre).powi(2);
        peak * (-r2 / (radius * radius)).exp()
    };
    // u_φ / r, which times (−y, x) gives the velocity.
    let turn = |x: f32, y: f32| {
        let r2 = (x - centre).powi(2) + (y - centre).powi(2);
        if r2 == 0.0 {
            return 0.5 * peak;
        }
        circulation / (2.0 * std::f32::consts::PI * r2) * (1.0 - (-r2 / (radius * radius)).exp())
    };
    fill(&mut solver.flow.u, |x, y| -(y - centre) * turn(x, y));
    fill(&mut solver.flow.v, |x, y| (x - centre) * turn(x, y));
    solver.flow.close_faces();
    solver.compute_curl();
    for j in 0..n {
        for i in 0..n {
            let (x, y) = ((i as f32 + 0.5) * dx, (j as f32 + 0.5) * dx);
            // Away from the walls, which cut the vortex's tail off.
            if (x - centre).hypot(y - centre) > 3.0 * radius {
                continue;
            }
            let got = solver.curl.get(i, j);
            assert!(
                (got - omega(x, y)).abs() <= 0.015 * peak,
                "cell ({i}, {j}): ω {got} vs {}",
                omega(x, y)
            );
        }
    }
    let before = (solver.flow.u.data.clone(), solver.flow.v.data.clone());
    let dt = 0.01;
    solver.vorticity(dt);
    let epsilon = solver.params.vorticity * dx;
    let largest = dt * epsilon * peak * (-0.25f32).exp();
    let mut checked = 0;
    for (field, old, component) in [
        (&solver.flow.u, &before.0, 0),
        (&solver.flow.v, &before.1, 1),
    ] {
        for j in 0..field.ny {
            for i in 0..field.nx {
                let (x, y) = (
                    (i as f32 + field.offset[0]) * dx,
                    (j as f32 + field.offset[1]) * dx,
                );
                let r = ((x - centre).powi(2) + (y - centre).powi(2)).sqrt();
                if !(0.5 * radius..=2.0 * radius).contains(&r) {
                    continue;
                }
                let along = if component == 0 {
                    -(y - centre) / r
                } else {
                    (x - centre) / r
                };
                let expected = dt * epsilon * omega(x, y) * along;
                let k = field.at(i, j);
                let change = field.data[k] - old[k];
                assert!(
                    (change - expected).abs() <= 0.03 * largest,
                    "component {component} at ({i}, {j}): Δ {change} vs {expected}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked} faces");
}

/// The pressure solve starts from `pressure_carry_over` of the last step's pressure: a
/// harmonic pressure (p = x + 2y) with no divergence is a fixed point of the Jacobi sweep in
/// the interior (each cell the mean of its four neighbours), so one sweep returns 0.8 of it.
#[test]
fn the_pressure_solve_starts_from_the_carried_over_pressure() {
    let mut solver = CpuInk::new(
        InkParams {
            iterations: 1,
            pressure_carry_over: 0.8,
            ..params(16)
        },
        |_, _| false,
    );
    fill(&mut solver.flow.p, |x, y| x + 2.0 * y);
    let before = solver.flow.p.data.clone();
    solver.pressure();
    let n = solver.flow.nx;
    for j in 1..n - 1 {
        for i in 1..n - 1 {
            let k = j * n + i;
            let expected = 0.8 * before[k];
            assert!(
                (solver.flow.p.data[k] - expected).abs() <= 1e-5,
                "cell ({i}, {j}): {} vs {expected}",
                solver.flow.p.data[k]
            );
        }
    }
}
