//! `self_collide` on another backend against the CPU, over several substeps (the lists kept
//! and rebuilt as they go): a 20² cloth folded in half lying on the ground, its top layer
//! thrown down and sideways onto the bottom one, [`SUBSTEPS`] substeps of springs, integrate
//! (Verlet), collide and self_collide from fresh lists on both, the top layer landing within
//! them (lists built before the landing and never rebuilt would miss most of its contacts):
//! positions, velocities and `previous` compared, the candidate lists as sets, the substeps
//! that rebuilt. `fluidlab doctor` runs [`gpu_check`] ("particles
//! self-collision"); `self_collide_emulation.rs` the same case with the kernels compiled as
//! C++.

use super::kernels::{BodyStep, SelfStep, SC_BUILDS};
use super::parity::{compare_body, BodyArrays, BodyCase, Difference, GPU_TOLERANCE};
use crate::scene::Source;
use crate::sims::particles::body::Body;
use crate::sims::particles::dynamics::{self, Air, Integrator, Surroundings};
use crate::sims::particles::scene::ParticlesScene;
use crate::sims::particles::self_collide;
use crate::sims::particles::sim::State;
use glam::Vec3;

/// Substeps compared.
pub const SUBSTEPS: usize = 24;

/// The GPU's allowance on positions, velocities and `previous` after [`SUBSTEPS`] substeps,
/// relative to each field's largest value: [`GPU_TOLERANCE`] (one stage's) ×10 for the
/// substeps' compounding, as the parity check allows XPBD's sweeps.
pub const SELF_TOLERANCE: f32 = 10.0 * GPU_TOLERANCE;

/// The case: the body as thrown (no lists yet), what acts on it, the substep
/// (`dt` = (dt, dt)), and `self_collide`'s thickness and friction.
#[derive(Clone, Debug)]
pub struct SelfCase {
    /// The body and its surroundings (Verlet).
    pub case: BodyCase,
    /// The thickness h, m.
    pub h: f32,
    /// The friction.
    pub friction: f32,
}

impl SelfCase {
    /// The substep's constants of the body stages.
    pub fn step(&self) -> BodyStep {
        let c = &self.case;
        BodyStep::new(&c.body, &c.surroundings, c.integrator, c.dt, c.damping)
    }

    /// `self_collide`'s constants (room for `capacity` candidates).
    pub fn self_step(&self, capacity: usize) -> SelfStep {
        let n = self.case.body.len();
        SelfStep::new(n, (self.h, self.friction, self.case.dt.0), capacity, true)
    }
}

/// The folded cloth (module docs).
pub fn self_case() -> SelfCase {
    self_case_of(20)
}

/// The folded cloth of `n`² nodes at [`self_case`]'s spacing (1/19 m: a side of (n − 1)/19 m),
/// and node mass (a mass of 0.4 kg per 400 nodes), so its nodes, springs and thickness are
/// the 20² cloth's.
pub fn self_case_of(n: usize) -> SelfCase {
    let size = (n - 1) as f32 / 19.0;
    let mass = 0.4 * (n * n) as f64 / 400.0;
    let text = format!(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = {n}\nsize = {size:?}\n\
         mass = {mass}\n\
         bend = 0.05\npins = \"none\"\norientation = \"folded\"\n\
         start = [{:?}, 0.0, {:?}]\nself_collision = true\n[world]\nfriction = 0.3\n",
        -0.5 * size,
        -0.5 * size
    );
    let source = Source::parse(&text, "self-collision check", "self-collision.toml")
        .expect("a particles scene");
    let scene = ParticlesScene::from_source(&source).expect("a valid scene");
    let State::Body(mut body) = crate::sims::particles::setup::build(&scene) else {
        unreachable!("a cloth is a body")
    };
    let h = scene.body.thickness;
    let dt = 1.0 / 600.0;
    let low = body.position.iter().map(|p| p.y).fold(f32::MAX, f32::min);
    for k in 0..body.len() {
        if body.position[k].y > low + h {
            body.velocity[k] = Vec3::new(1.5, -1.5, 0.3);
        }
        body.previous[k] = body.position[k] - body.velocity[k] * dt;
    }
    let surroundings = Surroundings {
        air: Air {
            gravity: Vec3::new(0.0, -9.82, 0.0),
            wind: Vec3::ZERO,
        },
        wind_drag: 0.0,
        wind_relative: false,
        ground: 0.0,
        sphere: None,
        friction: 0.3,
    };
    SelfCase {
        case: BodyCase {
            body,
            surroundings,
            integrator: Integrator::Verlet,
            dt: (dt, dt),
            damping: 0.2,
            iterations: 1,
        },
        h,
        friction: surroundings.friction,
    }
}

/// Coincident nodes (`self_collide::direction`'s fallbacks), six nodes (no springs, no
/// damping), four 1 m up: nodes 0 and 1 at one point with one `previous` (stacked, at rest:
/// the higher index rises), nodes 2 and 3 meeting at one point within the first substep from
/// either side along x (their `previous` differ: apart along x, each back on its own side),
/// and nodes 4 and 5 stacked on the ground with 5 pinned (the free node rises against a pinned
/// one whatever the indices: here the lower, so the rule by index alone would differ; on the
/// ground, because in the air gravity parts them first: the free node falls below the pinned
/// one in the substep's move and is pushed on down; on the ground `collide` puts it back on
/// the pinned one, at rest).
pub fn coincident_case() -> SelfCase {
    let dt = 1.0 / 600.0;
    let (at, step) = (Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.01, 0.0, 0.0));
    let held = Vec3::new(2.0, 0.0, 0.0);
    let mut body = Body::new(
        vec![at, at, Vec3::Y - step, Vec3::Y + step, held, held],
        0.01,
        Vec::new(),
        Vec::new(),
    );
    body.pinned[5] = true;
    // Verlet without damping: x + (x − x₋) = Y exactly for both of 2 and 3.
    body.previous = vec![
        at,
        at,
        Vec3::Y - 2.0 * step,
        Vec3::Y + 2.0 * step,
        held,
        held,
    ];
    for k in 0..body.len() {
        body.velocity[k] = (body.position[k] - body.previous[k]) / dt;
    }
    let mut c = self_case();
    c.case.body = body;
    c.case.damping = 0.0;
    c
}

/// One CPU substep of `case` on `body` (springs, integrate, collide, self_collide).
pub fn cpu_substep(case: &SelfCase, body: &mut Body) {
    let c = &case.case;
    dynamics::springs(body, c.surroundings.air.gravity, true);
    dynamics::integrate(body, c.integrator, c.dt.0, c.dt.1, c.damping);
    dynamics::collide(body, &c.surroundings, c.dt.0);
    self_collide::self_collide(body, case.h, case.friction, c.dt.0);
}

/// [`SUBSTEPS`] CPU substeps of `case`: the body after (its lists in `contacts`) and which
/// substeps rebuilt the lists.
pub fn cpu_run(case: &SelfCase) -> (Body, Vec<bool>) {
    let mut body = case.case.body.clone();
    let mut rebuilt = Vec::new();
    for _ in 0..SUBSTEPS {
        let builds = body.contacts.builds;
        cpu_substep(case, &mut body);
        rebuilt.push(body.contacts.builds > builds);
    }
    (body, rebuilt)
}

/// What another backend made of the case.
#[derive(Clone, Debug, Default)]
pub struct SelfRun {
    /// The arrays after.
    pub arrays: BodyArrays,
    /// Its lists: node k's candidates are `candidates[first[k]..first[k + 1]]`.
    pub first: Vec<u32>,
    /// Every node's candidates.
    pub candidates: Vec<u32>,
    /// Builds over the run.
    pub builds: u32,
    /// Which substeps rebuilt (where the backend says; empty where it does not).
    pub rebuilt: Vec<bool>,
}

/// How a run differs from the CPU's.
#[derive(Clone, Debug)]
pub struct SelfDifference {
    /// The arrays (positions, `previous`, velocities).
    pub arrays: Difference,
    /// Nodes whose candidates differ as sets from the CPU's, other than by pairs within 10⁻⁴
    /// of the lists' radius at the CPU's build (where rounding decides).
    pub lists: usize,
    /// Whether the lists are the CPU's, in its order.
    pub lists_exact: bool,
    /// Builds: the CPU's, the other's.
    pub builds: (u64, u32),
    /// Contacts at the last substep (the CPU's).
    pub contacts: u32,
}

impl SelfDifference {
    /// Within `tolerance` (arrays), lists equal as sets, as many builds.
    pub fn passes(&self, tolerance: f32) -> bool {
        self.arrays.worst <= tolerance
            && self.lists == 0
            && self.builds.0 == u64::from(self.builds.1)
    }
}

/// `other` against the CPU's run `cpu`.
pub fn compare(cpu: &Body, other: &SelfRun) -> SelfDifference {
    let mut arrays = compare_body(&BodyArrays::of(cpu), &other.arrays);
    let c = &cpu.contacts;
    let n = cpu.len();
    let lists_exact = other.first == c.first && other.candidates == c.candidates;
    let mut lists = 0;
    if other.first.len() != n + 1 || other.first[n] as usize != other.candidates.len() {
        lists = n.max(1);
    } else {
        let r = c.radius;
        for k in 0..n {
            let mut a = c.of(k).to_vec();
            let mut b =
                other.candidates[other.first[k] as usize..other.first[k + 1] as usize].to_vec();
            a.sort_unstable();
            b.sort_unstable();
            let boundary = |j: &u32| {
                let d = c.anchor[k].distance(c.anchor[*j as usize]);
                (d - r).abs() <= 1e-4 * r
            };
            let differs = a
                .iter()
                .filter(|j| b.binary_search(j).is_err())
                .any(|j| !boundary(j))
                || b.iter()
                    .filter(|j| a.binary_search(j).is_err())
                    .any(|j| !boundary(j));
            lists += usize::from(differs);
        }
    }
    if lists > 0 {
        arrays.bitwise = false;
    }
    SelfDifference {
        arrays,
        lists,
        lists_exact,
        builds: (c.builds, other.builds),
        contacts: c.touching.iter().sum(),
    }
}

/// `count` substeps of the case on the GPU, as [`cpu_run`]'s: springs, integrate, collide
/// and `self_collide`.
fn gpu_substeps(
    solver: &mut super::CudaParticles,
    case: &SelfCase,
    step: &BodyStep,
    count: usize,
) -> Result<(), String> {
    use super::parity::BodyStage;
    let text = |e: crate::cuda::CudaError| e.to_string();
    for _ in 0..count {
        for stage in [BodyStage::Springs, BodyStage::Integrate, BodyStage::Collide] {
            solver.body_stage(stage, step, 1).map_err(text)?;
        }
        solver
            .self_collide((case.h, case.friction, case.case.dt.0))
            .map_err(text)?;
    }
    Ok(())
}

/// The case on the GPU (device `device`) against the CPU: the doctor's "particles
/// self-collision" line.
pub fn gpu_check(device: usize) -> Result<(bool, String), String> {
    use super::{CudaParticles, FrameEnd};
    let text = |e: crate::cuda::CudaError| e.to_string();
    let case = self_case();
    let (cpu, rebuilt) = cpu_run(&case);
    let body = &case.case.body;
    let mut solver = CudaParticles::body(device, body).map_err(text)?;
    solver.set_stage_timing(false);
    solver.begin_frame().map_err(text)?;
    let step = case.step();
    gpu_substeps(&mut solver, &case, &step, SUBSTEPS)?;
    solver.end_frame(FrameEnd::Body).map_err(text)?;
    let state = solver.totals.self_collide.unwrap_or_default();
    let mut after = body.clone();
    solver.download_body(&mut after).map_err(text)?;
    let (first, candidates) = solver.download_contacts().map_err(text)?;
    let run = SelfRun {
        arrays: BodyArrays::of(&after),
        first,
        candidates,
        builds: state[SC_BUILDS],
        rebuilt: Vec::new(),
    };
    let d = compare(&cpu, &run);
    let (overflow_ok, overflow) = overflow_check(device, &case)?;
    let ok = d.passes(SELF_TOLERANCE) && overflow_ok;
    let line = format!(
        "{} ({SUBSTEPS} substeps of a folded 20² cloth, {} contacts, {} builds, CPU {}, {} \
         rebuilt by drift; worst {:.1e}{}, lists {})",
        if ok { "ok" } else { "FAILS" },
        d.contacts,
        d.builds.1,
        d.builds.0,
        rebuilt.iter().skip(1).filter(|&&r| r).count(),
        d.arrays.worst,
        if d.arrays.field.is_empty() {
            String::new()
        } else {
            format!(" in {}", d.arrays.field)
        },
        if d.lists == 0 {
            "equal as sets".to_string()
        } else {
            format!("of {} nodes differ", d.lists)
        }
    ) + &format!("; {overflow}");
    Ok((ok, line))
}

/// Frames the overflow part of [`gpu_check`] allows before the lists fit.
const OVERFLOW_FRAMES: usize = 4;

/// Room for 100 candidates on the GPU, frames of half the run: each frame whose lists
/// overflowed must be reported at its end (the note names the need) and grow the room past it,
/// and within [`OVERFLOW_FRAMES`] frames the lists fit (the state says no overflow, no note).
/// The case's need still grows while its top layer lands (the first half's largest 2 164 on
/// the emulated driver, the second's 3 364): the room may grow more than once.
fn overflow_check(device: usize, case: &SelfCase) -> Result<(bool, String), String> {
    use super::kernels::{SC_LARGEST, SC_NEEDED, SC_STATE};
    use super::{CudaParticles, FrameEnd};
    let text = |e: crate::cuda::CudaError| e.to_string();
    let mut solver = CudaParticles::body(device, &case.case.body).map_err(text)?;
    solver.set_stage_timing(false);
    solver.set_contact_room(100).map_err(text)?;
    let step = case.step();
    let frame = |solver: &mut CudaParticles| -> Result<[u32; SC_STATE], String> {
        solver.begin_frame().map_err(text)?;
        gpu_substeps(solver, case, &step, SUBSTEPS / 2)?;
        solver.end_frame(FrameEnd::Body).map_err(text)?;
        Ok(solver.totals.self_collide.unwrap_or_default())
    };
    let mut ok = true;
    let mut line = String::from("room for 100:");
    for reported in 0..OVERFLOW_FRAMES {
        let state = frame(&mut solver)?;
        let needed = state[SC_LARGEST];
        let Some(note) = solver.overflow_note.take() else {
            ok &= reported > 0 && needed == 0 && state[SC_NEEDED] > 100;
            line += &format!(" the next frame's {} fit", state[SC_NEEDED]);
            return Ok((ok, line));
        };
        ok &= needed > 100 && note.contains(&format!("needed {needed} candidates"));
        line += &format!(" {needed} needed, reported;");
    }
    Ok((false, line + " still overflowing"))
}
