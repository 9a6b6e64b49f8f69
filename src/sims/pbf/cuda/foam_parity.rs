//! The `foam` stage, CUDA against the CPU (tests/cuda.rs and `fluidlab doctor`'s "parity: foam"
//! line), the dam-break state both it and the emulation check start from, and the one-to-one
//! comparison of two pools both use.
//!
//! The emission draws its random numbers by particle id and orders the newborn by parent id, so
//! the GPU's order of particles within a cell (its atomics') changes no draw: each frame both
//! stages start from the same pool (the CPU's, uploaded) and their pools must agree particle by
//! particle within [`PoolBound`], the rounding a stage may add with FMA contraction and the
//! GPU's order of the neighbour sums. Discrete decisions at a threshold (a neighbour at exactly
//! h, an emission count against its random number, a class at its neighbour count) may go the
//! other way: those particles are counted as flips, not bounded, and must be few.

use super::CudaSolver;
use crate::scene::{Aabb, Shape};
use crate::sims::pbf::cpu::CpuSolver;
use crate::sims::pbf::foam::{Diffuse, DiffuseKind, FluidView, Foam, FoamSettings};
use crate::sims::pbf::grid::{gather, UniformGrid};
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::{InitialState, Snapshot, Solver, SolverError};
use glam::Vec3A;

/// Frames of the stage the check runs.
pub const FOAM_FRAMES: usize = 12;
/// From this frame on the check runs with the cap lowered to [`LOWERED_CAP`] (the pool then
/// holds more than the cap: both stages drop the youngest).
pub const LOWERED_FROM: usize = 8;
/// See [`LOWERED_FROM`].
pub const LOWERED_CAP: u32 = 120;
/// Most flips (discrete decisions gone the other way) allowed per frame: 1 % of the pool, at
/// least 4 (one emission count gone the other way at the cap costs two: the particle itself and
/// the one the cut then keeps or drops at the tail).
pub fn allowed_flips(alive: usize) -> usize {
    (alive / 100).max(4)
}

/// What one stage may change in a diffuse particle by rounding alone, from the same start:
/// a velocity component by `velocity` (m/s), a position component by `position` (m); life and
/// kind are exact (foam ages by the same subtraction, newborn start at the lifetime).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolBound {
    /// m/s.
    pub velocity: f32,
    /// m.
    pub position: f32,
}

impl PoolBound {
    /// The bound over a fluid whose particles have at most `m` neighbours and speeds up to
    /// `speed` (m/s, the fluid's and the start pool's largest), coordinates up to `extent` (m),
    /// after one stage of `dt` under `gravity` (m/s²) with particle radius `rp`. With ε = 2⁻²⁴
    /// and E = (16 + m) ε: a foam particle's velocity is a W-weighted mean of at most m + 1
    /// fluid velocities, each term and the sum rounding at most E relative to Σ w max|v| (in
    /// any order of summation, with or without contraction); spray and bubbles add g dt (1 +
    /// k_b) and the drag, a few roundings; newborn (v + spread, at most 1.1 |v|, with the GPU's
    /// cosf/sinf within 2 ulp) fewer: |Δv| ≤ E (1.1 speed + (1 + k_b) |g| dt). A position adds
    /// dt Δv and a few roundings of its terms: |Δx| ≤ 8 ε (extent + rp + dt speed') + dt |Δv|,
    /// speed' = speed + |g| dt.
    pub fn new(m: usize, speed: f32, extent: f32, dt: f32, gravity: f32, rp: f32) -> PoolBound {
        let eps = f32::EPSILON / 2.0;
        let e = (16 + m) as f32 * eps;
        let fall = gravity.abs() * dt;
        let velocity = e * (1.1 * speed + (1.0 + crate::sims::pbf::foam::BUOYANCY) * fall);
        PoolBound {
            velocity,
            position: 8.0 * eps * (extent + rp + dt * (speed + fall)) + dt * velocity,
        }
    }

    /// Whether `a` and `b` are one diffuse particle within the bound.
    pub fn same(&self, a: &Diffuse, b: &Diffuse) -> bool {
        let dx = (a.position - b.position).abs().max_element();
        let dv = (a.velocity - b.velocity).abs().max_element();
        a.kind == b.kind
            && a.life.to_bits() == b.life.to_bits()
            && dx <= self.position
            && dv <= self.velocity
    }
}

/// Two pools compared one to one ([`compare_pools`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolComparison {
    /// Pairs within the bound.
    pub matched: usize,
    /// Particles on one side only (a discrete decision gone the other way), skipped to realign.
    pub flips: usize,
    /// Pairs compared that are not within the bound (after realigning): each one a failure.
    pub mismatched: usize,
    /// The largest position and velocity difference over the matched pairs, as fractions of
    /// the bound.
    pub worst: f32,
}

/// Most particles on one side only that [`compare_pools`] skips at once to realign: a parent
/// whose emission count went the other way by more than one, or a cut at the cap shifted by it.
pub const REALIGN_AHEAD: usize = 4;

/// `gpu` against `cpu` in order: equal pairs advance both. On a difference: particles on one
/// side only (up to [`REALIGN_AHEAD`] of them, after which the sides match again) are flips; a
/// pair of different kinds (a class decided at its neighbour count gone the other way: the
/// particle then moves and ages by another rule) is one flip; anything else a mismatch.
pub fn compare_pools(gpu: &[Diffuse], cpu: &[Diffuse], bound: &PoolBound) -> PoolComparison {
    let mut out = PoolComparison::default();
    let (mut i, mut j) = (0, 0);
    let same = |a: Option<&Diffuse>, b: Option<&Diffuse>| match (a, b) {
        (Some(a), Some(b)) => bound.same(a, b),
        _ => false,
    };
    while i < gpu.len() && j < cpu.len() {
        if bound.same(&gpu[i], &cpu[j]) {
            let dx = (gpu[i].position - cpu[j].position).abs().max_element() / bound.position;
            let dv = (gpu[i].velocity - cpu[j].velocity).abs().max_element() / bound.velocity;
            out.worst = out.worst.max(dx).max(dv);
            out.matched += 1;
            (i, j) = (i + 1, j + 1);
            continue;
        }
        let ahead = (1..=REALIGN_AHEAD).find_map(|k| {
            if same(gpu.get(i + k), cpu.get(j)) {
                Some((k, 0))
            } else if same(gpu.get(i), cpu.get(j + k)) {
                Some((0, k))
            } else {
                None
            }
        });
        match ahead {
            Some((skip_gpu, skip_cpu)) => {
                out.flips += skip_gpu + skip_cpu;
                (i, j) = (i + skip_gpu, j + skip_cpu);
            }
            None => {
                if gpu[i].kind == cpu[j].kind {
                    out.mismatched += 1;
                } else {
                    out.flips += 1;
                }
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    out.flips += (gpu.len() - i) + (cpu.len() - j);
    out
}

/// One fluid state sorted by the container's grid at its positions, with CSR neighbour lists in
/// the grid's cell order: what the CUDA solver's grid holds right after it sorted the state.
pub struct SortedFluid {
    /// Positions, m.
    pub positions: Vec<Vec3A>,
    /// Velocities, m/s.
    pub velocities: Vec<Vec3A>,
    /// The particles' ids (the snapshot's index: a snapshot is in id order).
    pub ids: Vec<u32>,
    /// The grid's cell starts.
    pub cell_start: Vec<u32>,
    /// CSR starts.
    pub start: Vec<u32>,
    /// CSR lists.
    pub lists: Vec<u32>,
}

impl SortedFluid {
    /// `snapshot` of `scene` sorted and listed.
    pub fn of(snapshot: &Snapshot, scene: &Scene) -> SortedFluid {
        let h = scene.params.kernel_radius;
        let mut grid = UniformGrid::new(&scene.container, h);
        grid.build(&snapshot.positions);
        let (mut positions, mut velocities) = (Vec::new(), Vec::new());
        gather(&snapshot.positions, grid.order(), &mut positions);
        gather(&snapshot.velocities, grid.order(), &mut velocities);
        let (mut start, mut lists) = (vec![0u32], Vec::new());
        for (i, &p) in positions.iter().enumerate() {
            grid.for_each_neighbor_range(p, |range| {
                for j in range {
                    if j != i && (positions[j] - p).length_squared() < h * h {
                        lists.push(j as u32);
                    }
                }
            });
            start.push(lists.len() as u32);
        }
        SortedFluid {
            positions,
            velocities,
            ids: grid.order().to_vec(),
            cell_start: grid.cell_start().to_vec(),
            start,
            lists,
        }
    }

    /// The CPU stage's view of it.
    pub fn view(&self, scene: &Scene) -> FluidView<'_> {
        FluidView {
            positions: &self.positions,
            velocities: &self.velocities,
            ids: &self.ids,
            neighbor_start: &self.start,
            neighbors: &self.lists,
            radius: scene.params.kernel_radius,
            particle_radius: scene.params.particle_radius(),
        }
    }

    /// One frame of the CPU stage over it; returns how many were born.
    pub fn cpu_frame(&self, scene: &Scene, settings: &FoamSettings, foam: &mut Foam) -> usize {
        let gravity = Vec3A::from(scene.params.gravity);
        foam.foam(
            &self.view(scene),
            settings,
            scene.params.dt,
            gravity,
            &scene.world(),
        )
    }
}

/// The dam break of the foam checks (6 000 particles, with [`AIR_OBSTACLES`]) and its CPU
/// solver stepped until the front reaches the far wall.
pub fn dam_break_at_impact() -> Result<(Scene, CpuSolver), SolverError> {
    let mut scene = Scene::load("dam-break")
        .map_err(|e| SolverError::Params(format!("{e:#}")))?
        .with_particle_target(6000)
        .map_err(|e| SolverError::Params(format!("{}: {}", e.key, e.message)))?;
    scene.obstacles.extend(AIR_OBSTACLES);
    let mut solver = CpuSolver::new(scene.world(), scene.params.clone(), &scene.seed())?;
    let far_wall = scene.container.max.x - scene.params.spacing;
    for _ in 0..60 {
        solver.step()?;
        if solver.snapshot()?.positions.iter().any(|p| p.x >= far_wall) {
            return Ok((scene, solver));
        }
    }
    Err(SolverError::Params(
        "the dam break's front never reached the far wall".into(),
    ))
}

/// A sphere and a box high over the middle of the dam break's tank, where its fluid does not
/// reach before the checks end (it moves as without them), for [`obstacle_spray`] to hit.
pub const AIR_OBSTACLES: [Shape; 2] = [
    Shape::Sphere {
        center: Vec3A::new(0.8, 0.75, 0.3),
        radius: 0.08,
    },
    Shape::Box(Aabb {
        min: Vec3A::new(1.0, 0.7, 0.2),
        max: Vec3A::new(1.15, 0.76, 0.4),
    }),
];

/// Spray (life `life`) that hits [`AIR_OBSTACLES`] within a frame or two: dropped onto the
/// sphere's and the box's tops, thrown at the sphere's side and up into the box's underside.
pub fn obstacle_spray(life: f32) -> Vec<Diffuse> {
    let spray = |x: f32, y: f32, z: f32, velocity: Vec3A| Diffuse {
        position: Vec3A::new(x, y, z),
        velocity,
        life,
        kind: DiffuseKind::Spray,
    };
    let down = Vec3A::new(0.0, -1.0, 0.0);
    let mut particles = Vec::new();
    for (dx, dz) in [(0.0, 0.0), (0.03, -0.02), (-0.02, 0.04), (0.05, 0.01)] {
        particles.push(spray(0.8 + dx, 0.85, 0.3 + dz, down));
        particles.push(spray(1.03 + 1.5 * dx, 0.78, 0.3 + dz, down));
    }
    for dy in [0.0, 0.03] {
        particles.push(spray(0.68, 0.75 + dy, 0.3, Vec3A::new(1.5, 0.0, 0.0)));
        particles.push(spray(1.05 + dy, 0.66, 0.3, Vec3A::new(0.2, 2.0, 0.0)));
    }
    particles
}

/// The settings of the checks: rates that foam every frame after the impact, a cap reached.
pub fn check_settings() -> FoamSettings {
    FoamSettings {
        enabled: true,
        trapped_air_rate: 5000.0,
        wave_crest_rate: 5000.0,
        lifetime: 0.1,
        max_count: 200,
        ..FoamSettings::default()
    }
}

/// The result: whether every frame's pools agreed, and in words.
pub struct FoamParity {
    /// Every frame's pools one to one within [`PoolBound`], flips within [`allowed_flips`].
    pub passed: bool,
    /// The frames' totals, the worst difference and the bound.
    pub detail: String,
}

impl SortedFluid {
    /// The [`PoolBound`] of a stage over this fluid starting from `start`.
    pub fn bound(&self, scene: &Scene, start: &[Diffuse]) -> PoolBound {
        let m = self
            .start
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0) as usize
            + 1;
        let speed = self
            .velocities
            .iter()
            .chain(start.iter().map(|d| &d.velocity))
            .map(|v| v.length())
            .fold(0.0f32, f32::max);
        let c = &scene.container;
        let extent = c.min.abs().max(c.max.abs()).max_element();
        let g = Vec3A::from(scene.params.gravity).length();
        PoolBound::new(
            m,
            speed,
            extent,
            scene.params.dt,
            g,
            scene.params.particle_radius(),
        )
    }
}

/// CUDA vs CPU: [`FOAM_FRAMES`] frames of the `foam` stage on the dam break's state a few
/// frames after the impact (the CUDA solver made from it: sorted by its own grid, not
/// stepped), each frame from the CPU's pool (uploaded), compared one to one; from
/// [`LOWERED_FROM`] on with the cap lowered to [`LOWERED_CAP`] (the upload at the old cap, so
/// the CUDA pool is cut by its reallocation).
pub fn cuda_foam() -> Result<FoamParity, SolverError> {
    let (scene, mut cpu) = dam_break_at_impact()?;
    for _ in 0..3 {
        cpu.step()?;
    }
    let snapshot = cpu.snapshot()?;
    let state = InitialState {
        positions: snapshot.positions.clone(),
        velocities: snapshot.velocities.clone(),
    };
    let mut cuda = CudaSolver::new(scene.world(), scene.params.clone(), &state)?;
    let fluid = SortedFluid::of(&snapshot, &scene);
    let mut settings = check_settings();
    let (mut cpu_foam, mut gpu_foam) = (Foam::default(), Foam::default());
    cpu_foam.particles = obstacle_spray(settings.lifetime);
    let (mut passed, mut worst, mut flips, mut matched) = (true, 0.0f32, 0, 0);
    let mut born = [0usize; 2];
    let mut last = String::new();
    for frame in 0..FOAM_FRAMES {
        cuda.set_foam_pool(settings.max_count as usize, &cpu_foam.particles)?;
        let bound = fluid.bound(&scene, &cpu_foam.particles);
        if frame == LOWERED_FROM {
            settings.max_count = LOWERED_CAP;
        }
        born[0] += fluid.cpu_frame(&scene, &settings, &mut cpu_foam);
        born[1] += cuda.foam(&mut gpu_foam, &settings, scene.params.dt, &scene.world())?;
        let gpu = cuda.foam_particles(&gpu_foam)?;
        let c = compare_pools(&gpu, &cpu_foam.particles, &bound);
        passed &= c.mismatched == 0 && c.flips <= allowed_flips(cpu_foam.particles.len());
        (worst, flips, matched) = (worst.max(c.worst), flips + c.flips, matched + c.matched);
        if c.mismatched > 0 && last.is_empty() {
            last = format!(" (frame {frame}: {} outside the bound)", c.mismatched);
        }
    }
    let (c, g) = (cpu_foam.counts(), cuda.foam_counts(&gpu_foam));
    Ok(FoamParity {
        passed,
        detail: format!(
            "{FOAM_FRAMES} frames after the impact (cap {} then {LOWERED_CAP}): born cpu {}, \
             cuda {}; {matched} particles one to one, worst {:.2} of the rounding bound, \
             {flips} flips{last}; last [spray, foam, bubbles] cpu {c:?}, cuda {g:?}",
            check_settings().max_count,
            born[0],
            born[1],
            worst,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn particle(x: f32) -> Diffuse {
        Diffuse {
            position: Vec3A::new(x, 0.5, 0.25),
            velocity: Vec3A::new(1.0, -2.0, 0.5),
            life: 0.75,
            kind: DiffuseKind::Foam,
        }
    }

    #[test]
    fn pools_compare_one_to_one_with_flips_realigned() {
        let bound = PoolBound::new(40, 3.0, 1.0, 1.0 / 60.0, 9.81, 0.01);
        // Rounding-sized: E = 56 ε ≈ 3.3e-6, times ~3.4 m/s.
        assert!(bound.velocity > 5e-6 && bound.velocity < 2e-5, "{bound:?}");
        assert!(bound.position > 5e-7 && bound.position < 2e-6, "{bound:?}");
        let cpu: Vec<Diffuse> = (0..10).map(|k| particle(0.1 * k as f32)).collect();
        let mut gpu = cpu.clone();
        gpu[3].position.x += 0.5 * bound.position;
        gpu[4].velocity.y -= 0.9 * bound.velocity;
        let c = compare_pools(&gpu, &cpu, &bound);
        assert_eq!((c.matched, c.flips, c.mismatched), (10, 0, 0), "{c:?}");
        assert!(c.worst > 0.85 && c.worst < 0.95, "{c:?}");
        // One particle missing on the GPU side (a count gone the other way) and one extra.
        let mut flipped = cpu.clone();
        flipped.remove(5);
        flipped.insert(8, particle(0.77));
        let c = compare_pools(&flipped, &cpu, &bound);
        assert_eq!((c.matched, c.flips, c.mismatched), (9, 2, 0), "{c:?}");
        // Three extra in a row on the CPU side (a parent's count three higher): realigned.
        let mut three = cpu.clone();
        three.splice(4..4, (0..3).map(|k| particle(0.41 + 0.01 * k as f32)));
        let c = compare_pools(&three, &cpu, &bound);
        assert_eq!((c.matched, c.flips, c.mismatched), (10, 3, 0), "{c:?}");
        let c = compare_pools(&cpu, &three, &bound);
        assert_eq!((c.matched, c.flips, c.mismatched), (10, 3, 0), "{c:?}");
        // Beyond the bound or a different life: mismatches; a different kind: a class flip.
        let mut wrong = cpu.clone();
        wrong[2].position.z += 3.0 * bound.position;
        wrong[6].life -= 1e-3;
        wrong[8].kind = DiffuseKind::Spray;
        wrong[8].position.y += 1.0;
        let c = compare_pools(&wrong, &cpu, &bound);
        assert_eq!((c.matched, c.flips, c.mismatched), (7, 1, 2), "{c:?}");
    }
}
