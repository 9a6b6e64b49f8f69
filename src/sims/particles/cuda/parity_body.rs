//! The body half of the CUDA path's parity check (`parity.rs`): the body stages, a stage's
//! input, the cases (the cloth and the jellies, the volume term's under Verlet and XPBD), and
//! what the CPU stage makes of a case.

use super::kernels::BodyStep;
use crate::sims::particles::body::Body;
use crate::sims::particles::dynamics::{self, Air, Integrator, Surroundings};
use crate::sims::particles::volume;
use glam::Vec3;

/// A body stage (`BODY_STAGES`; `Xpbd` is `integrate` under XPBD).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyStage {
    /// `springs`.
    Springs = 10,
    /// `volume` (Verlet and Euler; XPBD's constraints are in `Xpbd`).
    Volume = 16,
    /// `wind`.
    Wind = 11,
    /// `integrate` (Verlet or Euler).
    Integrate = 12,
    /// `integrate` under XPBD.
    Xpbd = 13,
    /// `collide`.
    Collide = 14,
}

/// A body stage's input besides the body.
#[derive(Clone, Copy, Debug)]
pub struct BodyInput {
    /// The substep's constants.
    pub step: BodyStep,
    /// XPBD's iterations.
    pub iterations: u32,
}

/// A body's arrays after a stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BodyArrays {
    /// Positions.
    pub position: Vec<Vec3>,
    /// Previous positions.
    pub previous: Vec<Vec3>,
    /// Velocities.
    pub velocity: Vec<Vec3>,
    /// Forces.
    pub force: Vec<Vec3>,
}

impl BodyArrays {
    /// `b`'s.
    pub fn of(b: &Body) -> Self {
        BodyArrays {
            position: b.position.clone(),
            previous: b.previous.clone(),
            velocity: b.velocity.clone(),
            force: b.force.clone(),
        }
    }
}

/// A body scene of the checks.
#[derive(Clone, Debug)]
pub struct BodyCase {
    /// The body, a few substeps into its run.
    pub body: Body,
    /// What acts on it.
    pub surroundings: Surroundings,
    /// The integrator.
    pub integrator: Integrator,
    /// Substep and the one before, s.
    pub dt: (f32, f32),
    /// Damping, 1/s.
    pub damping: f32,
    /// XPBD's iterations.
    pub iterations: u32,
}

/// The body cases: a 12×12 cloth pinned at two corners falling onto a sphere in a sideways
/// wind (each integrator), and a 5³ jelly squashed and sheared, with its volume term, dropped
/// on the floor (Verlet and XPBD) — run `substeps` substeps on the CPU.
pub fn body_cases(substeps: usize) -> Vec<(String, BodyCase)> {
    let air = Air {
        gravity: Vec3::new(0.0, -9.82, 0.0),
        wind: Vec3::new(1.5, 0.0, 3.0),
    };
    let surroundings = Surroundings {
        air,
        wind_drag: 1.2,
        wind_relative: true,
        ground: 0.0,
        sphere: Some((Vec3::new(0.5, 0.4, 0.45), 0.3)),
        friction: 0.3,
    };
    let mut cases = Vec::new();
    for integrator in Integrator::ALL {
        let mut cloth = Body::cloth(
            12,
            1.0,
            Vec3::new(0.0, 0.8, 0.0),
            Vec3::Z,
            0.5,
            [400.0, 200.0, 20.0],
        );
        cloth.pinned[0] = true;
        cloth.pinned[11] = true;
        let case = BodyCase {
            body: cloth,
            surroundings,
            integrator,
            dt: (1.0 / 600.0, 1.0 / 500.0),
            damping: 0.2,
            iterations: 4,
        };
        cases.push((format!("cloth ({})", integrator.name()), case));
    }
    let mut jelly = Body::jelly(
        5,
        0.5,
        Vec3::new(-0.2, 0.05, -0.2),
        1.0,
        [300.0, 150.0, 50.0],
    );
    // Squashed 20 % and sheared, its volume term on (200 Pa: dt·ω ≈ 1.9 with the springs).
    jelly.cells.modulus = 200.0;
    for (p, q) in jelly.position.iter_mut().zip(&mut jelly.previous) {
        let y = p.y - 0.05;
        *p += Vec3::new(0.1 * y, -0.2 * y, 0.05 * (p.x + 0.2));
        *q = *p;
    }
    let case = BodyCase {
        body: jelly,
        surroundings: Surroundings {
            sphere: None,
            wind_relative: false,
            ..surroundings
        },
        integrator: Integrator::Verlet,
        dt: (1.0 / 600.0, 1.0 / 600.0),
        damping: 0.5,
        iterations: 4,
    };
    cases.push(("jelly (verlet)".into(), case.clone()));
    let xpbd = BodyCase {
        integrator: Integrator::Xpbd,
        ..case
    };
    cases.push(("jelly (xpbd)".into(), xpbd));
    for (_, case) in &mut cases {
        for _ in 0..substeps {
            run_body_stages(case);
        }
    }
    cases
}

/// One CPU substep of `case` (all five stages).
pub fn run_body_stages(case: &mut BodyCase) {
    for stage in body_stages(case.integrator) {
        let (_, after) = body_cpu(case, stage);
        case.body.position = after.position;
        case.body.previous = after.previous;
        case.body.velocity = after.velocity;
        case.body.force = after.force;
    }
    case.dt.1 = case.dt.0;
}

/// The stages of a substep under `integrator`.
pub fn body_stages(integrator: Integrator) -> [BodyStage; 5] {
    let integrate = if integrator.explicit() {
        BodyStage::Integrate
    } else {
        BodyStage::Xpbd
    };
    [
        BodyStage::Springs,
        BodyStage::Volume,
        BodyStage::Wind,
        integrate,
        BodyStage::Collide,
    ]
}

/// Runs body `stage` on the CPU from `case`: its input and the arrays after.
pub fn body_cpu(case: &BodyCase, stage: BodyStage) -> (BodyInput, BodyArrays) {
    let mut body = case.body.clone();
    let s = &case.surroundings;
    let step = BodyStep::new(&body, s, case.integrator, case.dt, case.damping);
    match stage {
        BodyStage::Springs => {
            dynamics::springs(&mut body, s.air.gravity, case.integrator.explicit())
        }
        BodyStage::Volume => {
            if case.integrator.explicit() {
                volume::volume_forces(&mut body)
            }
        }
        BodyStage::Wind => dynamics::wind(&mut body, s),
        BodyStage::Integrate => dynamics::integrate(
            &mut body,
            case.integrator,
            case.dt.0,
            case.dt.1,
            case.damping,
        ),
        BodyStage::Xpbd => dynamics::xpbd(&mut body, case.dt.0, case.damping, case.iterations),
        BodyStage::Collide => dynamics::collide(&mut body, s, case.dt.0),
    }
    let input = BodyInput {
        step,
        iterations: case.iterations,
    };
    (input, BodyArrays::of(&body))
}
