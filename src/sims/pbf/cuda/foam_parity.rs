//! The `foam` stage, CUDA against the CPU (tests/cuda.rs and `fluidlab doctor`'s "parity: foam"
//! line), and the dam-break state both it and the emulation check start from.
//!
//! On a GPU the counting sort puts the particles of a cell in the order their atomics ran, so
//! the emission's random numbers (drawn by sorted index) and the sums' order differ from the
//! CPU's: the check compares what must not depend on that, the pool's size and each kind's
//! count, frame by frame, over frames of the stage on one fluid state just after the impact.

use super::CudaSolver;
use crate::sims::pbf::cpu::CpuSolver;
use crate::sims::pbf::foam::{FluidView, Foam, FoamSettings};
use crate::sims::pbf::grid::{gather, UniformGrid};
use crate::sims::pbf::scene::Scene;
use crate::sims::pbf::{InitialState, Snapshot, Solver, SolverError};
use glam::Vec3A;

/// Frames of the stage the check runs.
pub const FOAM_FRAMES: usize = 12;
/// Each frame's alive count and kind counts may differ from the CPU's by this fraction (or
/// by [`FOAM_SLACK`] particles, whichever is more).
pub const FOAM_TOLERANCE: f64 = 0.05;
/// See [`FOAM_TOLERANCE`].
pub const FOAM_SLACK: usize = 20;

/// One fluid state sorted by the container's grid at its positions, with CSR neighbour lists in
/// the grid's cell order: what the CUDA solver's grid holds right after it sorted the state.
pub struct SortedFluid {
    /// Positions, m.
    pub positions: Vec<Vec3A>,
    /// Velocities, m/s.
    pub velocities: Vec<Vec3A>,
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
            &scene.container,
        )
    }
}

/// The dam break of the foam checks (6 000 particles) and its CPU solver stepped until the
/// front reaches the far wall.
pub fn dam_break_at_impact() -> Result<(Scene, CpuSolver), SolverError> {
    let scene = Scene::load("dam-break")
        .map_err(|e| SolverError::Params(format!("{e:#}")))?
        .with_particle_target(6000)
        .map_err(|e| SolverError::Params(format!("{}: {}", e.key, e.message)))?;
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

/// The settings of the checks: rates that foam every frame after the impact, a cap reached.
pub fn check_settings() -> FoamSettings {
    FoamSettings {
        enabled: true,
        trapped_air_rate: 5000.0,
        wave_crest_rate: 5000.0,
        lifetime: 0.25,
        max_count: 450,
        ..FoamSettings::default()
    }
}

/// The result: whether every frame's counts stayed within tolerance, and in words.
pub struct FoamParity {
    /// Within [`FOAM_TOLERANCE`] every frame.
    pub passed: bool,
    /// The last frame's counts, the worst difference and the tolerance.
    pub detail: String,
}

/// CUDA vs CPU: [`FOAM_FRAMES`] frames of the `foam` stage on the dam break's state a few
/// frames after the impact (the CUDA solver made from it: sorted, not stepped).
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
    let settings = check_settings();
    let (mut cpu_foam, mut gpu_foam) = (Foam::default(), Foam::default());
    let (mut worst, mut passed, mut last) = (0.0f64, true, String::new());
    let mut born = [0usize; 2];
    for _ in 0..FOAM_FRAMES {
        born[0] += fluid.cpu_frame(&scene, &settings, &mut cpu_foam);
        born[1] += cuda.foam(&mut gpu_foam, &settings, scene.params.dt, &scene.container)?;
        let (c, g) = (cpu_foam.counts(), cuda.foam_counts(&gpu_foam));
        let pairs = [
            (c.iter().sum::<usize>(), g.iter().sum::<usize>()),
            (c[0], g[0]),
            (c[1], g[1]),
            (c[2], g[2]),
        ];
        for (a, b) in pairs {
            let allowed = ((FOAM_TOLERANCE * a as f64).ceil() as usize).max(FOAM_SLACK);
            passed &= a.abs_diff(b) <= allowed;
            worst = worst.max(a.abs_diff(b) as f64 / a.max(1) as f64);
        }
        last = format!("cpu {c:?}, cuda {g:?}");
    }
    Ok(FoamParity {
        passed,
        detail: format!(
            "{FOAM_FRAMES} frames after the impact: born cpu {}, cuda {}; last [spray, foam, \
             bubbles] {last}; worst difference {:.1} % (allowed {} % or {FOAM_SLACK})",
            born[0],
            born[1],
            100.0 * worst,
            100.0 * FOAM_TOLERANCE
        ),
    })
}
