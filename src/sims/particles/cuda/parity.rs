//! The CUDA path against the CPU, stage by stage: a stage's input (the CPU's state at a point
//! of a short run), what the CPU stage makes of it, and what another backend — the kernels
//! compiled as C++ (`emulation.rs`, tests) or the GPU (`CudaParticles`) — makes of the same
//! input, compared field by field: bit for bit, or the worst difference relative to the
//! field's largest value. `fluidlab doctor` runs [`gpu_check`] where there is a GPU.

use super::kernels::{basin_step, BasinStep, FountainStep};
use crate::sims::particles::body::Body;
use crate::sims::particles::dynamics::Air;
use crate::sims::particles::fountain::{Fountain, FountainParams};
use crate::sims::particles::sort;
use crate::sims::pool::drops::{Drop, Stencils};
use glam::Vec3;

pub use super::parity_body::*;

/// Relative bound on a stage's FMA-contracted difference from the CPU (nvcc contracts, the
/// CPU does not): a value passes through at most ~16 roundings in one stage (the longest: a
/// spring's pull summed over 12 links, a wind push's cross product and normalisation), each
/// contraction skipping one rounding of at most ½ ulp = 2⁻²⁴ of its operand, and no operand
/// exceeds the field's scale by more than the cancellation in a difference of positions (×8
/// here): 16 · 8 · 2⁻²⁴ ≈ 7.6e-6. XPBD's sweeps and the basin's substeps compound theirs
/// (4 iterations, ~10 substeps): ×10 for those (`emulation.rs` checks both).
pub const CONTRACTED_BOUND: f32 = 16.0 * 8.0 / 16_777_216.0;

/// The factor a stage whose values are spring pulls k·(l − l₀) (`springs`, XPBD's
/// projections) adds to the bound: rounding l moves l − l₀ by ε·l, ε·l/|l − l₀| relative, so
/// the pulls' error grows by 1/strain against the field's scale (its largest pull): the
/// inverse of the body's largest strain, at most 1000.
pub fn strain_factor(body: &Body) -> f32 {
    1.0 / body.max_strain().clamp(1e-3, 1.0)
}

/// The GPU's allowance: ten times the compounded contracted bound, for CUDA's cosf/sinf
/// (≤ 2 ulp from glibc's) in `emit` and the reassociation nvcc may add.
pub const GPU_TOLERANCE: f32 = 100.0 * CONTRACTED_BOUND;

/// A fountain stage (`FOUNTAIN_STAGES`; `collide` includes the compaction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FountainStage {
    /// `emit`.
    Emit = 0,
    /// `advance`.
    Advance = 1,
    /// `collide`.
    Collide = 2,
    /// `basin`.
    Basin = 3,
    /// `sort`.
    Sort = 4,
}

impl FountainStage {
    /// In order.
    pub const ALL: [FountainStage; 5] = [
        FountainStage::Emit,
        FountainStage::Advance,
        FountainStage::Collide,
        FountainStage::Basin,
        FountainStage::Sort,
    ];
}

/// What a fountain stage reads besides the particles and the basin.
#[derive(Clone, Debug)]
pub struct FountainInput {
    /// The step's constants.
    pub step: FountainStep,
    /// The basin's substep, its substeps and stencils.
    pub basin: (BasinStep, u32, Vec<f32>, Vec<f32>),
    /// Particles `emit` adds.
    pub emit_count: usize,
    /// The landings `basin` splashes: (x + basin, z + basin, amplitude).
    pub drops: Vec<[f32; 3]>,
}

/// The fountain's arrays after a stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FountainArrays {
    /// Positions.
    pub position: Vec<Vec3>,
    /// Velocities.
    pub velocity: Vec<Vec3>,
    /// Ages.
    pub age: Vec<f32>,
    /// Cube hits.
    pub hits: Vec<u8>,
    /// Landings (`collide`).
    pub drops: Vec<[f32; 3]>,
    /// Basin heights.
    pub height: Vec<f32>,
    /// Basin velocities.
    pub basin_velocity: Vec<f32>,
    /// Drawing order (`sort`).
    pub order: Vec<u32>,
    /// Tags (emission numbers' low 32 bits: the colour and sprite).
    pub tag: Vec<u32>,
}

impl FountainArrays {
    /// `f`'s.
    pub fn of(f: &Fountain) -> Self {
        FountainArrays {
            position: f.position.clone(),
            velocity: f.velocity.clone(),
            age: f.age.clone(),
            hits: f.hits.clone(),
            drops: Vec::new(),
            height: f.surface.height.clone(),
            basin_velocity: f.surface.velocity.clone(),
            order: Vec::new(),
            tag: f.tag.clone(),
        }
    }
}

/// The landings as the kernels write them.
pub fn drop_records(drops: &[Drop]) -> Vec<[f32; 3]> {
    drops
        .iter()
        .map(|d| [d.position[0], d.position[1], d.amplitude])
        .collect()
}

/// The fountain scene of the checks: the default jet at `rate`, run `frames` frames on the CPU
/// (particles rising, on the cube, falling and landing; the basin rippling).
pub fn fountain_case(rate: f32, frames: usize) -> (Fountain, Air, f32, Vec3, Vec3) {
    let params = FountainParams {
        rate,
        surface_nodes: 64,
        ..FountainParams::default()
    };
    let air = Air {
        gravity: Vec3::new(0.0, -9.82, 0.0),
        wind: Vec3::new(0.4, 0.0, -0.2),
    };
    let dt = 1.0 / 60.0;
    let mut f = Fountain::new(params);
    for _ in 0..frames {
        f.step(dt, &air);
    }
    let eye = Vec3::new(3.0, 2.0, 4.0);
    (
        f,
        air,
        dt,
        eye,
        (Vec3::new(0.0, 0.8, 0.0) - eye).normalize(),
    )
}

/// Runs fountain `stage` on the CPU from `f` (`landings`: the last `collide`'s, which
/// `basin` splashes): returns its input (what the other backend needs besides `f`'s arrays),
/// the arrays after, the fountain after and the stage's landings (`collide`).
pub fn fountain_cpu(
    f: &Fountain,
    stage: FountainStage,
    (air, dt, eye, forward): (&Air, f32, Vec3, Vec3),
    landings: &[Drop],
) -> (FountainInput, FountainArrays, Fountain, Vec<Drop>) {
    let mut f = f.clone();
    let step = FountainStep::new(&f.params, air, dt, eye, forward);
    let basin = basin_step(&f.params, f.surface.h, dt, &mut Stencils::default());
    let mut input = FountainInput {
        step,
        basin,
        emit_count: 0,
        drops: Vec::new(),
    };
    let mut order = Vec::new();
    let mut drops = Vec::new();
    match stage {
        FountainStage::Emit => {
            let before = f.len();
            f.emit(dt);
            input.emit_count = f.len() - before;
        }
        FountainStage::Advance => f.advance(dt, air),
        FountainStage::Collide => drops = f.collide(dt),
        FountainStage::Basin => {
            input.drops = drop_records(landings);
            f.basin(landings, dt);
        }
        FountainStage::Sort => order = sort::back_to_front(&f.position, eye, forward),
    }
    let mut after = FountainArrays::of(&f);
    after.order = order;
    after.drops = drop_records(&drops);
    (input, after, f, drops)
}

/// How two backends' arrays differ: whether bit for bit, and the worst difference relative to
/// the field's largest magnitude, with the field's name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Difference {
    /// Every value the same, bit for bit (and the same lengths).
    pub bitwise: bool,
    /// The worst |a − b| / max |a| over the fields (infinite for a length or count mismatch).
    pub worst: f32,
    /// The field it is in.
    pub field: String,
}

impl Difference {
    /// Adds `field` (`a` the CPU's).
    pub fn add(&mut self, field: &str, a: &[f32], b: &[f32]) {
        let worst = if a.len() != b.len() {
            f32::INFINITY
        } else {
            let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-30);
            a.iter()
                .zip(b)
                .map(|(x, y)| {
                    if x.to_bits() == y.to_bits() {
                        0.0
                    } else if x.is_finite() && y.is_finite() {
                        (x - y).abs() / scale
                    } else {
                        f32::INFINITY
                    }
                })
                .fold(0.0, f32::max)
        };
        let same = a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        self.bitwise &= same;
        if worst > self.worst || (self.field.is_empty() && !same) {
            self.worst = worst;
            self.field = field.to_string();
        }
    }

    /// Adds `field`, which must be equal.
    pub fn add_exact<T: PartialEq>(&mut self, field: &str, a: &[T], b: &[T]) {
        if a != b {
            self.bitwise = false;
            self.worst = f32::INFINITY;
            self.field = field.to_string();
        }
    }

    /// No difference yet.
    pub fn start() -> Self {
        Difference {
            bitwise: true,
            ..Difference::default()
        }
    }
}

fn flat(v: &[Vec3]) -> &[f32] {
    bytemuck::cast_slice(v)
}

/// How `other`'s fountain arrays differ from the CPU's. `exact_order`: the drawing order must
/// be the CPU's (else only a permutation sorted by the CPU's keys, checked by
/// [`order_is_back_to_front`]).
pub fn compare_fountain(
    cpu: &FountainArrays,
    other: &FountainArrays,
    exact_order: bool,
) -> Difference {
    let mut d = Difference::start();
    d.add("position", flat(&cpu.position), flat(&other.position));
    d.add("velocity", flat(&cpu.velocity), flat(&other.velocity));
    d.add("age", &cpu.age, &other.age);
    d.add_exact("hits", &cpu.hits, &other.hits);
    d.add_exact("tag", &cpu.tag, &other.tag);
    d.add(
        "drops",
        cpu.drops.as_flattened(),
        other.drops.as_flattened(),
    );
    d.add("basin height", &cpu.height, &other.height);
    d.add("basin velocity", &cpu.basin_velocity, &other.basin_velocity);
    if exact_order || cpu.order.len() != other.order.len() {
        d.add_exact("order", &cpu.order, &other.order);
    } else if cpu.order != other.order {
        d.bitwise = false;
    }
    d
}

/// Whether `order` is a permutation of the particles of `position`, farthest first as seen
/// from `eye` along `forward` (depths computed in f64, ties within `slack` m allowed).
pub fn order_is_back_to_front(
    order: &[u32],
    position: &[Vec3],
    eye: Vec3,
    forward: Vec3,
    slack: f64,
) -> bool {
    let mut seen = vec![false; position.len()];
    let permutation = order.len() == position.len()
        && order.iter().all(|&k| {
            let fresh = (k as usize) < seen.len() && !seen[k as usize];
            if fresh {
                seen[k as usize] = true;
            }
            fresh
        });
    let depth = |k: u32| {
        (position[k as usize] - eye)
            .as_dvec3()
            .dot(forward.as_dvec3())
    };
    permutation && order.windows(2).all(|w| depth(w[0]) >= depth(w[1]) - slack)
}

/// How `other`'s body arrays differ from the CPU's.
pub fn compare_body(cpu: &BodyArrays, other: &BodyArrays) -> Difference {
    let mut d = Difference::start();
    d.add("position", flat(&cpu.position), flat(&other.position));
    d.add("previous", flat(&cpu.previous), flat(&other.previous));
    d.add("velocity", flat(&cpu.velocity), flat(&other.velocity));
    d.add("force", flat(&cpu.force), flat(&other.force));
    d
}

/// Every stage on the GPU (device `device`) from the CPU's state against the CPU stage:
/// (all within [`GPU_TOLERANCE`], the sort back to front, and a line per stage).
pub fn gpu_check(device: usize) -> Result<(bool, String), String> {
    use super::CudaParticles;
    let text = |e: crate::cuda::CudaError| e.to_string();
    let mut lines = Vec::new();
    let mut passed = true;
    let mut record = |name: String, d: Difference, ok: bool| {
        passed &= ok;
        lines.push(format!(
            "{name}: {} (worst {:.1e}{})",
            if ok { "ok" } else { "FAILS" },
            d.worst,
            if d.field.is_empty() {
                String::new()
            } else {
                format!(" in {}", d.field)
            }
        ));
    };
    let (mut f, air, dt, eye, forward) = fountain_case(1500.0, 200);
    let mut solver = CudaParticles::fountain(device, &f).map_err(text)?;
    solver.set_stage_timing(false);
    let mut landings = Vec::new();
    for stage in FountainStage::ALL {
        let (input, cpu, next, drops) =
            fountain_cpu(&f, stage, (&air, dt, eye, forward), &landings);
        solver.upload_fountain(&f).map_err(text)?;
        if stage == FountainStage::Basin {
            solver.set_landings(&input.drops).map_err(text)?;
        }
        let n = solver
            .fountain_stage(
                stage,
                &input.step,
                &input.basin,
                (f.len(), input.emit_count, f.emitted),
            )
            .map_err(text)?;
        solver.read_tally().map_err(text)?;
        if stage != FountainStage::Collide {
            solver.totals.count = n;
        }
        let mut g = f.clone();
        let mut order = Vec::new();
        solver.download_fountain(&mut g, &mut order).map_err(text)?;
        let mut other = FountainArrays::of(&g);
        if stage == FountainStage::Collide {
            other.drops = solver.landings().map_err(text)?;
        }
        if stage == FountainStage::Sort {
            other.order = order;
        }
        let d = compare_fountain(&cpu, &other, false);
        let sorted = stage != FountainStage::Sort
            || order_is_back_to_front(&other.order, &f.position, eye, forward, 1e-5);
        let ok = d.worst <= GPU_TOLERANCE && sorted;
        record(format!("fountain {stage:?}"), d, ok);
        if stage == FountainStage::Collide {
            landings = drops;
        }
        f = next;
    }
    for (name, case) in body_cases(30) {
        let mut solver = CudaParticles::body(device, &case.body).map_err(text)?;
        solver.set_stage_timing(false);
        for stage in body_stages(case.integrator) {
            let (input, cpu) = body_cpu(&case, stage);
            solver.upload_body(&case.body).map_err(text)?;
            solver
                .body_stage(stage, &input.step, input.iterations)
                .map_err(text)?;
            let mut b = case.body.clone();
            solver.download_body(&mut b).map_err(text)?;
            let d = compare_body(&cpu, &BodyArrays::of(&b));
            let pulls = matches!(
                stage,
                BodyStage::Springs | BodyStage::Volume | BodyStage::Xpbd
            );
            let ok = d.worst
                <= GPU_TOLERANCE
                    * if pulls {
                        strain_factor(&case.body)
                    } else {
                        1.0
                    };
            record(format!("{name} {stage:?}"), d, ok);
        }
    }
    Ok((passed, lines.join("; ")))
}
