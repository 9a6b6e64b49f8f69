//! Tests of the CPU solver's physics: the projection, the gradient's sign, the advection
//! schemes, obstacles, the box's sides and the ink's conservation.

use super::advect::{self, Scratch};
use super::boundary::{Boundary, Walls, CHANNEL};
use super::cpu::CpuInk;
use super::params::{Advection, InkParams, PressureSolver};
use super::{SolveReport, Stamp};

fn params(n: usize) -> InkParams {
    InkParams {
        cells_x: n,
        cells_y: n,
        pressure_carry_over: 0.0,
        ..InkParams::default()
    }
}

/// A divergent velocity field: a smooth pattern of sources and sinks plus a swirl.
fn stirred(solver: &mut CpuInk) {
    let flow = &mut solver.flow;
    let h = flow.dx;
    for field in [&mut flow.u, &mut flow.v] {
        let horizontal = field.offset[0] == 0.0;
        for j in 0..field.ny {
            for i in 0..field.nx {
                let (x, y) = (
                    (i as f32 + field.offset[0]) * h,
                    (j as f32 + field.offset[1]) * h,
                );
                let k = field.at(i, j);
                field.data[k] = if horizontal {
                    (3.0 * x).sin() * (2.0 * y).cos() + 0.5 * (5.0 * y).sin()
                } else {
                    (4.0 * x).cos() * (3.0 * y).sin() - 0.3 * (6.0 * x).cos()
                };
            }
        }
    }
    flow.close_faces();
}

fn project(solver: &mut CpuInk) -> SolveReport {
    solver.flow.p.data.iter_mut().for_each(|p| *p = 0.0);
    solver.compute_divergence();
    solver.pressure();
    solver.subtract_gradient();
    solver.report
}

/// On the MAC grid the projection removes the divergence to the pressure solve's residual,
/// and more iterations remove more; red-black SOR gets far further than Jacobi in the same
/// sweeps.
#[test]
fn the_projection_removes_divergence_and_more_iterations_remove_more() {
    let mut after = Vec::new();
    for (solver_kind, counts) in [
        (PressureSolver::Jacobi, [10, 50, 200]),
        (PressureSolver::Multigrid, [1, 3, 10]),
    ] {
        for iterations in counts {
            let mut solver = CpuInk::new(
                InkParams {
                    iterations,
                    pressure_solver: solver_kind,
                    ..params(64)
                },
                |_, _| false,
            );
            stirred(&mut solver);
            let report = project(&mut solver);
            // The divergence left is exactly the pressure equation's residual.
            assert!(
                (report.divergence_after - report.residual).abs()
                    < 1e-3 * report.residual.max(1e-6),
                "{solver_kind:?} {iterations}: {report:?}"
            );
            after.push((
                solver_kind,
                iterations,
                report.divergence_before,
                report.divergence_after,
            ));
        }
    }
    let ratio = |k: usize| after[k].2 / after[k].3;
    // Jacobi: monotone and slow (its slowest mode shrinks 0.9988× per sweep on 64²).
    assert!(ratio(0) < ratio(1) && ratio(1) < ratio(2), "{after:?}");
    assert!(ratio(2) > 2.0, "{after:?}");
    // Multigrid: 3 V-cycles remove the divergence 1000× (measured 7000×), 10 cycles reach
    // single precision's floor (measured 40 000×).
    assert!(ratio(3) < ratio(4) && ratio(4) < ratio(5), "{after:?}");
    assert!(ratio(4) > 1000.0 && ratio(5) > 10_000.0, "{after:?}");
}

/// The original program's `v += ∇p` (plus sign, `specs/003-ink.md` ambiguity 1) adds
/// divergence where the standard sign removes it.
#[test]
fn the_originals_plus_sign_adds_divergence() {
    let mut solver = CpuInk::new(
        InkParams {
            iterations: 20,
            pressure_solver: PressureSolver::Multigrid,
            ..params(48)
        },
        |_, _| false,
    );
    stirred(&mut solver);
    solver.compute_divergence();
    let before = solver.report.divergence_before;
    solver.pressure();
    let mut wrong = solver.flow.clone();
    let dx = wrong.dx;
    for j in 0..wrong.ny {
        for i in 1..wrong.nx {
            let k = wrong.u.at(i, j);
            wrong.u.data[k] += (wrong.p.get(i, j) - wrong.p.get(i - 1, j)) / dx;
        }
    }
    for j in 1..wrong.ny {
        for i in 0..wrong.nx {
            let k = wrong.v.at(i, j);
            wrong.v.data[k] += (wrong.p.get(i, j) - wrong.p.get(i, j - 1)) / dx;
        }
    }
    solver.subtract_gradient();
    let right = solver.report.divergence_after;
    let wrong = wrong.divergence_rms();
    assert!(wrong > 1.9 * before, "plus sign: {before} → {wrong}");
    assert!(right < 0.01 * before, "minus sign: {before} → {right}");
}

/// A Gaussian blob carried once around by a solid-body rotation (100 steps): MacCormack brings
/// it back closer to where it started than semi-Lagrangian does (less numerical diffusion;
/// measured L2 error 0.21 vs 0.49), and the ink is kept: semi-Lagrangian within 0.1 %
/// (measured −0.015 %; with a first-order Euler trace it lost 33 %, one (ωdt)² per step),
/// MacCormack within 5 % (measured +3.2 %: its clamp lifts the undershoots beside the blob).
#[test]
fn maccormack_carries_a_rotating_blob_back_sharper_than_semi_lagrangian() {
    let n = 64;
    let after_a_turn = |scheme: Advection| {
        let mut solver = CpuInk::new(
            InkParams {
                advection: scheme,
                ..params(n)
            },
            |_, _| false,
        );
        let omega = 2.0 * std::f32::consts::PI; // one turn per second
        let flow = &mut solver.flow;
        let h = flow.dx;
        for j in 0..flow.u.ny {
            for i in 0..flow.u.nx {
                let y = (j as f32 + 0.5) * h;
                let k = flow.u.at(i, j);
                flow.u.data[k] = -omega * (y - 0.5);
            }
        }
        for j in 0..flow.v.ny {
            for i in 0..flow.v.nx {
                let x = (i as f32 + 0.5) * h;
                let k = flow.v.at(i, j);
                flow.v.data[k] = omega * (x - 0.5);
            }
        }
        let blob = |x: f32, y: f32| (-((x - 0.7).powi(2) + (y - 0.5).powi(2)) / 0.006).exp();
        let ink = &mut solver.ink.channels[0];
        let start: Vec<f32> = (0..ink.data.len())
            .map(|k| {
                let (x, y) = ink.position(k % ink.nx, k / ink.nx);
                blob(x, y)
            })
            .collect();
        ink.data.clone_from(&start);
        let steps = 100;
        let dt = 1.0 / steps as f32;
        let mut scratch = Scratch::default();
        let mut carried = Vec::new();
        for _ in 0..steps {
            let (flow, ink) = (&solver.flow, &solver.ink.channels[0]);
            let velocity = flow.sampler();
            let points = advect::Points::Centres(&velocity);
            advect::advect(
                [ink],
                [&mut carried],
                points,
                dt,
                scheme,
                [1.0],
                &mut scratch,
            );
            std::mem::swap(&mut solver.ink.channels[0].data, &mut carried);
        }
        let ink = &solver.ink.channels[0];
        let error: f64 = ink
            .data
            .iter()
            .zip(&start)
            .map(|(a, b)| f64::from(a - b).powi(2))
            .sum();
        let norm: f64 = start.iter().map(|b| f64::from(*b).powi(2)).sum();
        let mass = |values: &[f32]| values.iter().map(|&v| f64::from(v)).sum::<f64>();
        ((error / norm).sqrt(), mass(&ink.data) / mass(&start) - 1.0)
    };
    let (semi, semi_mass) = after_a_turn(Advection::SemiLagrangian);
    let (mac, mac_mass) = after_a_turn(Advection::Maccormack);
    assert!(
        semi_mass.abs() < 1e-3,
        "semi-Lagrangian ink {semi_mass:+.4}"
    );
    assert!(mac_mass.abs() < 0.05, "MacCormack ink {mac_mass:+.4}");
    assert!(
        mac < 0.6 * semi,
        "MacCormack {mac:.3} vs semi-Lagrangian {semi:.3}"
    );
    assert!(semi < 1.0, "the blob is gone: {semi}");
}

/// A jet towards a disc: after projection no face of the disc carries flow, and the fluid
/// goes around it (the cells beside it move along its edge).
#[test]
fn an_obstacle_receives_no_flow_and_the_flow_goes_around_it() {
    let n = 64;
    let mut solver = CpuInk::new(
        InkParams {
            iterations: 20,
            pressure_solver: PressureSolver::Multigrid,
            ..params(n)
        },
        |x, y| (x - 0.5).powi(2) + (y - 0.5).powi(2) <= 0.1f32.powi(2),
    );
    let stamp = Stamp {
        position: [0.2, 0.5],
        radius: 0.15,
        velocity: [2.0, 0.0],
        ink: [1.0; 3],
        per_second: false,
        direction: None,
    };
    solver.step(0.01, &[stamp]);
    solver.step(0.01, &[]);
    let flow = &solver.flow;
    let mut into = 0.0f32;
    let mut around = 0.0f32;
    for j in 0..n {
        for i in 0..=n {
            // Faces between a fluid and a solid cell (those between two solid cells hold the
            // mirror image of the fluid's tangential velocity).
            let solid_side =
                flow.fluid(i as isize - 1, j as isize) != flow.fluid(i as isize, j as isize);
            let inside = i > 0 && i < n;
            if inside && solid_side {
                into = into.max(flow.u.get(i, j).abs());
            }
        }
    }
    // Above and below the disc the fluid moves sideways past it.
    for (i, j) in [(32usize, 40usize), (32, 23)] {
        around = around.max(flow.center_velocity(i, j).0.abs());
    }
    assert_eq!(into, 0.0);
    assert!(around > 0.05, "no flow around the disc: {around}");
    assert!(flow.divergence_rms() < 1e-2 * solver.report.divergence_before);
}

/// With no fade and no damping, advection in a divergence-free flow in a closed box keeps
/// the ink within 10 % over 2 s of stirring (64², one splat thrown at the walls, 120 steps).
/// Measured: semi-Lagrangian −6.1 %, MacCormack +6.6 % (with the Euler trace −11 % and
/// +7.6 %). Neither scheme is conservative by construction: interpolation in a flow that is
/// only discretely divergence-free, and MacCormack's clamp, move ink; a flux-form scheme would
/// conserve it exactly.
#[test]
fn ink_is_kept_within_ten_percent_without_fade() {
    for advection in Advection::ALL {
        let mut solver = CpuInk::new(
            InkParams {
                iterations: 100,
                pressure_carry_over: 0.8,
                advection,
                pressure_solver: PressureSolver::Multigrid,
                ..params(64)
            },
            |_, _| false,
        );
        let dt = 1.0 / 60.0;
        solver.step(
            dt,
            &[Stamp {
                position: [0.4, 0.4],
                radius: 0.1,
                velocity: [1.0, 0.6],
                ink: [1.0, 0.5, 0.2],
                per_second: false,
                direction: None,
            }],
        );
        let start = solver.ink.total();
        for _ in 0..120 {
            solver.step(dt, &[]);
        }
        let end = solver.ink.total();
        assert!(solver.report.divergence_after < 1e-3, "{:?}", solver.report);
        assert!(
            (end / start - 1.0).abs() < 0.10,
            "{advection:?}: {start} → {end}"
        );
    }
}

/// The `karman` preset at a quarter of its cells: behind the cylinder the flow sheds vortices
/// alternately, and the transverse velocity a cylinder length downstream oscillates at the
/// Strouhal number f·D/U ≈ 0.2 measured for cylinders from Re ≈ 300 to 2·10⁵ (Roshko 1954;
/// Williamson 1996). Measured here: St = 0.215, the transverse velocity swinging ±0.83 m/s
/// (256 × 96 cells, D = 15 cells, 8 s).
#[test]
fn a_cylinder_in_a_channel_sheds_vortices_at_strouhal_0_2() {
    let source = crate::scene::Source::load("karman").expect("the karman preset");
    let mut scene = super::scene::InkScene::from_source(&source).expect("it parses");
    scene.params.cells_x /= 2;
    scene.params.cells_y /= 2;
    let obstacle = scene.obstacles[0];
    let diameter = 2.0 * obstacle.radius;
    let speed = scene.params.boundary.inflow_speed;
    let mut solver = CpuInk::new(scene.params.clone(), |x, y| scene.solid(x, y));
    let dt = scene.params.dt;
    let probe = [obstacle.center[0] + 4.0 * diameter, obstacle.center[1]];
    let mut samples = Vec::new();
    let steps = (8.0 / dt) as usize;
    for step in 0..steps {
        let t = step as f32 * dt;
        solver.step(dt, &scene.stamps(t, t + dt));
        samples.push((t + dt, solver.flow.velocity(probe[0], probe[1]).1));
    }
    // Upward zero crossings of the transverse velocity after the start-up (t > 3 s).
    let crossings: Vec<f32> = samples
        .windows(2)
        .filter(|w| w[0].0 > 3.0 && w[0].1 < 0.0 && w[1].1 >= 0.0)
        .map(|w| w[1].0)
        .collect();
    assert!(crossings.len() >= 4, "no shedding: {crossings:?}");
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f32;
    let strouhal = diameter / (period * speed);
    let amplitude = samples
        .iter()
        .filter(|s| s.0 > 3.0)
        .fold(0.0f32, |m, s| m.max(s.1.abs()));
    assert!(
        amplitude > 0.1 * speed,
        "the wake barely moves: {amplitude} m/s"
    );
    assert!((0.15..=0.3).contains(&strouhal), "St = {strouhal}");
}

fn channel(n: usize, walls: Walls) -> InkParams {
    InkParams {
        cells_x: 2 * n,
        cells_y: n,
        width: 2.0,
        iterations: 10,
        pressure_solver: PressureSolver::Multigrid,
        boundary: Boundary {
            sides: CHANNEL,
            walls,
            inflow_speed: 1.5,
        },
        ..params(n)
    }
}

/// Fluid pushed in on the left of a straight channel leaves on the right: from rest, the first
/// projection makes the flow uniform at the inflow speed (the potential flow of a straight
/// channel), and what leaves equals what enters.
#[test]
fn a_channel_carries_the_inflow_through_to_the_outflow() {
    let mut solver = CpuInk::new(channel(32, Walls::FreeSlip), |_, _| false);
    for _ in 0..5 {
        solver.step(1.0 / 60.0, &[]);
    }
    let flow = &solver.flow;
    let (nx, ny, dx) = (flow.nx, flow.ny, flow.dx);
    let height = ny as f32 * dx;
    let flux = |i: usize| (0..ny).map(|j| flow.u.get(i, j) * dx).sum::<f32>();
    let (inflow, outflow) = (flux(0), flux(nx));
    assert!((inflow - 1.5 * height).abs() < 1e-5, "inflow {inflow}");
    assert!(
        (outflow / inflow - 1.0).abs() < 1e-3,
        "in {inflow}, out {outflow}"
    );
    for (i, j) in [(nx / 2, ny / 2), (nx / 4, 2), (3 * nx / 4, ny - 3)] {
        let (u, v) = flow.center_velocity(i, j);
        assert!(
            (u - 1.5).abs() < 0.015 && v.abs() < 0.015,
            "({i}, {j}): ({u}, {v})"
        );
    }
    assert!(solver.report.divergence_after < 1e-3, "{:?}", solver.report);
}

/// Beside a no-slip wall the sampled tangential velocity falls to zero at the wall (the
/// mirror image beyond it); a free-slip wall leaves it as the nearest row has it.
#[test]
fn no_slip_walls_hold_the_tangential_velocity_to_zero_at_the_wall() {
    for walls in Walls::ALL {
        let mut solver = CpuInk::new(channel(16, walls), |_, _| false);
        solver.step(1.0 / 60.0, &[]);
        let flow = &solver.flow;
        let (dx, height) = (flow.dx, flow.ny as f32 * flow.dx);
        let row = flow.velocity(0.5, 0.5 * dx).0;
        let quarter = flow.velocity(0.5, 0.25 * dx).0;
        let top = flow.velocity(0.5, height - 0.1 * dx).0;
        let expected = match walls {
            Walls::FreeSlip => (row, row),
            Walls::NoSlip => (0.5 * row, 0.2 * row),
        };
        assert!(row > 1.0, "{walls:?}: {row}");
        assert!(
            (quarter - expected.0).abs() < 1e-4 * row,
            "{walls:?}: {quarter}"
        );
        assert!((top - expected.1).abs() < 1e-3 * row, "{walls:?}: {top}");
    }
}

/// A vortex stirred in a closed box loses more of its energy against no-slip walls than
/// against free-slip ones: the walls hold the fluid. Measured (48², 2 s): the no-slip box keeps
/// 18 % less kinetic energy.
#[test]
fn a_vortex_loses_more_energy_against_no_slip_walls() {
    let energy_after = |walls: Walls| {
        let mut solver = CpuInk::new(
            InkParams {
                pressure_solver: PressureSolver::Multigrid,
                iterations: 4,
                boundary: Boundary {
                    walls,
                    ..Boundary::default()
                },
                ..params(48)
            },
            |_, _| false,
        );
        let dt = 1.0 / 60.0;
        // A solid-body swirl filling the box.
        let flow = &mut solver.flow;
        let h = flow.dx;
        for j in 0..flow.u.ny {
            for i in 0..flow.u.nx {
                let k = flow.u.at(i, j);
                flow.u.data[k] = -2.0 * ((j as f32 + 0.5) * h - 0.5);
            }
        }
        for j in 0..flow.v.ny {
            for i in 0..flow.v.nx {
                let k = flow.v.at(i, j);
                flow.v.data[k] = 2.0 * ((i as f32 + 0.5) * h - 0.5);
            }
        }
        flow.close_faces();
        for _ in 0..120 {
            solver.step(dt, &[]);
        }
        let flow = &solver.flow;
        let mut energy = 0.0f64;
        for j in 0..flow.ny {
            for i in 0..flow.nx {
                let (u, v) = flow.center_velocity(i, j);
                energy += f64::from(u * u + v * v);
            }
        }
        energy
    };
    let (free, stuck) = (energy_after(Walls::FreeSlip), energy_after(Walls::NoSlip));
    assert!(stuck < 0.97 * free, "free-slip {free}, no-slip {stuck}");
}

/// Obstacles take the walls' setting: along a painted plate in a channel (0.2 m thick, 1 m
/// long, in the middle of a 2 × 1 m channel, 64 × 32 cells) the sampled tangential velocity
/// at the plate's top face is zero with no-slip and the nearest row's with free-slip, and after
/// a second of flow the row of faces next to the plate moves markedly slower with no-slip
/// (measured: 0.169 against 0.321 m/s; the flow separates at the plate's blunt front, so the
/// row is slow with either). Before obstacles honoured the setting the faces inside the plate
/// held zero under both settings: half the row's velocity at the face, the same flow
/// (measured with the mirror skipped: rows 0.131 free-slip / 0.138 m/s no-slip, faces 0.066 /
/// 0.069 m/s; the test fails).
#[test]
fn obstacles_hold_the_tangential_velocity_as_the_walls_setting_says() {
    let plate = |x: f32, y: f32| (0.5..1.5).contains(&x) && (0.4..0.6).contains(&y);
    let run = |walls: Walls| {
        let mut solver = CpuInk::new(channel(32, walls), plate);
        for _ in 0..60 {
            solver.step(1.0 / 60.0, &[]);
        }
        let flow = &solver.flow;
        let dx = flow.dx;
        // The plate's top face: the first fluid row's lower edge above the middle.
        let j = (0..flow.ny)
            .find(|&j| j > 0 && flow.fluid(32, j as isize) && !flow.fluid(32, j as isize - 1))
            .expect("a fluid row above the plate");
        let face = j as f32 * dx;
        let columns = 24..40;
        let n = columns.len() as f32;
        let row = columns.clone().map(|i| flow.u.get(i, j)).sum::<f32>() / n;
        let at_face = columns
            .map(|i| flow.velocity(i as f32 * dx, face).0)
            .sum::<f32>()
            / n;
        println!("{walls:?}: row {row:.4} m/s, at the face {at_face:.4} m/s");
        (row, at_face)
    };
    let (free_row, free_face) = run(Walls::FreeSlip);
    let (stuck_row, stuck_face) = run(Walls::NoSlip);
    assert!(free_row > 0.1, "free-slip row {free_row}");
    assert!(
        (free_face - free_row).abs() < 1e-3 * free_row,
        "free-slip: {free_face} at the face, {free_row} in the row"
    );
    assert!(
        stuck_face.abs() < 1e-3 * free_row,
        "no-slip face {stuck_face}"
    );
    assert!(
        stuck_row < 0.75 * free_row,
        "no-slip row {stuck_row}, free-slip {free_row}"
    );
}
