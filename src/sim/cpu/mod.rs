//! The CPU reference solver: every PBF stage as a rayon-parallel pass over structure-of-arrays
//! particle data kept sorted by grid cell. Stage functions carry the names of the CUDA kernels.
//!
//! Unlike the GPU, the CPU builds neighbour lists once per step (`find_neighbors`, CSR layout,
//! no cap) and reuses them in the 2 × iterations + 3 neighbour passes that follow, as the PBF
//! paper does (Macklin & Müller 2013, Algorithm 1, line 6).

use super::grid::{gather, UniformGrid};
use super::kernel::SphKernel;
use super::{InitialState, Params, Snapshot, Solver, SolverError, Stage, StageTimes, World};
use glam::Vec3A;
use rayon::prelude::*;
use std::time::Instant;

/// Particles per rayon task when building neighbour lists.
const NEIGHBOR_CHUNK: usize = 2048;

/// Bytes the CPU solver needs per particle (state, scratch and ~40 neighbour indices), used
/// to refuse scenes that do not fit in memory before allocating.
pub const BYTES_PER_PARTICLE: u64 = 11 * 16 + 6 * 4 + 45 * 4;

/// The rayon Position Based Fluids solver.
pub struct CpuSolver {
    params: Params,
    world: World,
    grid: UniformGrid,
    /// Positions at the start of the step (x), sorted by cell.
    positions: Vec<Vec3A>,
    /// Predicted positions x*, corrected by the constraint iterations.
    predicted: Vec<Vec3A>,
    velocities: Vec<Vec3A>,
    ids: Vec<u32>,
    lambdas: Vec<f32>,
    densities: Vec<f32>,
    /// Vorticity ω per particle (vorticity stage) and position corrections Δp (apply_delta).
    vectors: Vec<Vec3A>,
    scratch: Vec<Vec3A>,
    ids_scratch: Vec<u32>,
    neighbor_start: Vec<u32>,
    neighbors: Vec<u32>,
    steps: u64,
    times: StageTimes,
}

/// Constants of one step derived from the parameters.
#[derive(Clone, Copy)]
struct StepConstants {
    kernel: SphKernel,
    mass: f32,
    volume: f32,
    inverse_rest_density: f32,
    self_density: f32,
    relaxation: f32,
    scorr_scale: f32,
    inverse_scorr_reference: f32,
    scorr_n: i32,
    margin: f32,
}

impl StepConstants {
    fn new(params: &Params) -> Self {
        let kernel = params.kernel();
        let dq = params.scorr_dq * params.kernel_radius;
        Self {
            kernel,
            mass: params.particle_mass,
            volume: params.particle_volume(),
            inverse_rest_density: 1.0 / params.rest_density,
            self_density: params.particle_mass * kernel.poly6(0.0),
            relaxation: params.relaxation * params.rest_stiffness(),
            scorr_scale: params.scorr_k / params.rest_stiffness(),
            inverse_scorr_reference: 1.0 / kernel.poly6(dq * dq),
            scorr_n: params.scorr_n,
            margin: params.particle_radius(),
        }
    }
}

impl CpuSolver {
    /// A solver over `initial` (particle `i` gets id `i`). Fails on invalid parameters.
    pub fn new(world: World, params: Params, initial: &InitialState) -> Result<Self, SolverError> {
        params
            .validate()
            .map_err(|e| SolverError::Params(e.to_string()))?;
        let n = initial.len();
        if n > u32::MAX as usize {
            return Err(SolverError::Params(format!(
                "{n} particles exceed the 2³² id range"
            )));
        }
        initial.check_finite()?;
        let grid = UniformGrid::new(&world.container, params.kernel_radius);
        let mut solver = Self {
            grid,
            positions: initial.positions.clone(),
            predicted: initial.positions.clone(),
            velocities: initial.velocities.clone(),
            ids: (0..n as u32).collect(),
            lambdas: vec![0.0; n],
            densities: vec![0.0; n],
            vectors: vec![Vec3A::ZERO; n],
            scratch: Vec::with_capacity(n),
            ids_scratch: Vec::with_capacity(n),
            neighbor_start: vec![0; n + 1],
            neighbors: Vec::new(),
            steps: 0,
            times: StageTimes::default(),
            params,
            world,
        };
        // Densities of the seeded state, so statistics before the first step are real.
        solver.build_grid();
        solver.find_neighbors();
        solver.compute_lambda(&StepConstants::new(&solver.params));
        Ok(solver)
    }

    fn neighbors_of(&self, i: usize) -> &[u32] {
        &self.neighbors[self.neighbor_start[i] as usize..self.neighbor_start[i + 1] as usize]
    }

    /// v += dt·g; x* = x + dt·v, projected into the container and out of obstacles.
    fn predict_positions(&mut self, dt: f32, c: &StepConstants) {
        let gravity = Vec3A::from(self.params.gravity);
        let world = &self.world;
        self.velocities
            .par_iter_mut()
            .zip(self.predicted.par_iter_mut())
            .zip(self.positions.par_iter())
            .for_each(|((v, xp), &x)| {
                *v += gravity * dt;
                *xp = world.project(x + *v * dt, c.margin);
            });
    }

    /// Sorts every particle array by the cell of x*.
    fn build_grid(&mut self) {
        self.grid.build(&self.predicted);
        let order = self.grid.order();
        for array in [
            &mut self.positions,
            &mut self.predicted,
            &mut self.velocities,
        ] {
            gather(array, order, &mut self.scratch);
            std::mem::swap(array, &mut self.scratch);
        }
        gather(&self.ids, order, &mut self.ids_scratch);
        std::mem::swap(&mut self.ids, &mut self.ids_scratch);
    }

    /// CSR neighbour lists: every j ≠ i with |x*ᵢ − x*ⱼ| < h.
    fn find_neighbors(&mut self) {
        let n = self.predicted.len();
        let h2 = self.params.kernel_radius * self.params.kernel_radius;
        let (grid, predicted) = (&self.grid, &self.predicted);
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = (0..n.div_ceil(NEIGHBOR_CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let range = chunk * NEIGHBOR_CHUNK..((chunk + 1) * NEIGHBOR_CHUNK).min(n);
                let mut counts = Vec::with_capacity(range.len());
                let mut list = Vec::with_capacity(range.len() * 40);
                for i in range {
                    let p = predicted[i];
                    let before = list.len();
                    grid.for_each_neighbor_range(p, |cells| {
                        for j in cells {
                            if j != i && (predicted[j] - p).length_squared() < h2 {
                                list.push(j as u32);
                            }
                        }
                    });
                    counts.push((list.len() - before) as u32);
                }
                (counts, list)
            })
            .collect();
        self.neighbor_start.resize(n + 1, 0);
        self.neighbors.clear();
        let mut k = 0;
        for (counts, list) in &chunks {
            for &count in counts {
                self.neighbor_start[k + 1] = self.neighbor_start[k] + count;
                k += 1;
            }
            self.neighbors.extend_from_slice(list);
        }
    }

    /// ρᵢ = Σ m W, Cᵢ = max(ρᵢ/ρ₀ − 1, 0), λᵢ = −Cᵢ / (|Σⱼ V∇W|² + Σⱼ |V∇W|² + ε).
    fn compute_lambda(&mut self, c: &StepConstants) {
        let this = &*self;
        let (lambdas, densities): (Vec<f32>, Vec<f32>) = (0..this.predicted.len())
            .into_par_iter()
            .map(|i| {
                let (p, id) = (this.predicted[i], this.ids[i]);
                let mut density = c.self_density;
                let mut gradient_i = Vec3A::ZERO;
                let mut sum_squares = 0.0;
                for &j in this.neighbors_of(i) {
                    let offset = p - this.predicted[j as usize];
                    let r2 = offset.length_squared();
                    density += c.mass * c.kernel.poly6(r2);
                    let gradient_j =
                        c.kernel.pair_gradient(offset, r2, id, this.ids[j as usize]) * c.volume;
                    gradient_i += gradient_j;
                    sum_squares += gradient_j.length_squared();
                }
                // Clamped at zero: the density constraint only resists compression. The paper's
                // bilateral form pulls every free-surface particle (C ≈ −0.5) into the bulk and,
                // with a small ε, blows a dam break up within 10 frames (docs/solver.md).
                let constraint = (density * c.inverse_rest_density - 1.0).max(0.0);
                let lambda =
                    -constraint / (gradient_i.length_squared() + sum_squares + c.relaxation);
                (lambda, density)
            })
            .unzip();
        self.lambdas = lambdas;
        self.densities = densities;
    }

    /// Δpᵢ = V Σⱼ (λᵢ + λⱼ + s_corr) ∇W, s_corr = −k (W/W(Δq))ⁿ / Σ|∇C|²₀; then x* += Δp and
    /// projection onto walls and obstacles.
    fn apply_delta(&mut self, c: &StepConstants) {
        let mut corrected = std::mem::take(&mut self.scratch);
        let this = &*self;
        corrected.clear();
        corrected.par_extend((0..this.predicted.len()).into_par_iter().map(|i| {
            let (p, id) = (this.predicted[i], this.ids[i]);
            let lambda_i = this.lambdas[i];
            let mut delta = Vec3A::ZERO;
            for &j in this.neighbors_of(i) {
                let j = j as usize;
                let offset = p - this.predicted[j];
                let r2 = offset.length_squared();
                let ratio = c.kernel.poly6(r2) * c.inverse_scorr_reference;
                let scorr = -c.scorr_scale * ratio.powi(c.scorr_n);
                delta += c.kernel.pair_gradient(offset, r2, id, this.ids[j])
                    * (lambda_i + this.lambdas[j] + scorr);
            }
            this.world.project(p + delta * c.volume, c.margin)
        }));
        self.scratch = std::mem::replace(&mut self.predicted, corrected);
    }

    /// v = (x* − x) / dt.
    fn update_velocity(&mut self, dt: f32) {
        let inverse_dt = 1.0 / dt;
        self.velocities
            .par_iter_mut()
            .zip(self.predicted.par_iter().zip(self.positions.par_iter()))
            .for_each(|(v, (&xp, &x))| *v = (xp - x) * inverse_dt);
    }

    /// ωᵢ = Σⱼ V (vᵢ − vⱼ) × ∇ᵢWᵢⱼ (the SPH curl); ηᵢ = Σⱼ V (|ωⱼ| − |ωᵢ|) ∇ᵢWᵢⱼ;
    /// vᵢ += dt · ε (η̂ × ωᵢ) (paper eq. 15–16, with SPH volume weights so ω is in s⁻¹).
    fn vorticity(&mut self, dt: f32, c: &StepConstants) {
        let strength = self.params.vorticity;
        if strength == 0.0 {
            return;
        }
        let mut omegas = std::mem::take(&mut self.vectors);
        let this = &*self;
        omegas.clear();
        omegas.par_extend((0..this.predicted.len()).into_par_iter().map(|i| {
            let (p, v) = (this.predicted[i], this.velocities[i]);
            let mut omega = Vec3A::ZERO;
            for &j in this.neighbors_of(i) {
                let j = j as usize;
                let offset = p - this.predicted[j];
                let gradient = c.kernel.spiky_gradient(offset, offset.length_squared());
                omega += (v - this.velocities[j]).cross(gradient);
            }
            omega * c.volume
        }));
        let this = &*self;
        let confinement: Vec<Vec3A> = (0..this.predicted.len())
            .into_par_iter()
            .map(|i| {
                let p = this.predicted[i];
                let magnitude_i = omegas[i].length();
                let mut eta = Vec3A::ZERO;
                for &j in this.neighbors_of(i) {
                    let j = j as usize;
                    let offset = p - this.predicted[j];
                    let gradient = c.kernel.spiky_gradient(offset, offset.length_squared());
                    eta += gradient * (omegas[j].length() - magnitude_i);
                }
                let length = eta.length();
                if length <= 1e-12 {
                    return Vec3A::ZERO;
                }
                (eta / length).cross(omegas[i]) * (strength * dt)
            })
            .collect();
        self.vectors = omegas;
        self.velocities
            .par_iter_mut()
            .zip(confinement.par_iter())
            .for_each(|(v, dv)| *v += *dv);
    }

    /// vᵢ += c Σⱼ V (vⱼ − vᵢ) W (paper eq. 17 with SPH volume weights); then x = x*.
    fn xsph(&mut self, c: &StepConstants) {
        let blend = self.params.xsph_c;
        if blend > 0.0 {
            let mut smoothed = std::mem::take(&mut self.scratch);
            let this = &*self;
            smoothed.clear();
            smoothed.par_extend((0..this.predicted.len()).into_par_iter().map(|i| {
                let (p, v) = (this.predicted[i], this.velocities[i]);
                let mut sum = Vec3A::ZERO;
                for &j in this.neighbors_of(i) {
                    let j = j as usize;
                    let r2 = (p - this.predicted[j]).length_squared();
                    sum += (this.velocities[j] - v) * c.kernel.poly6(r2);
                }
                v + sum * (blend * c.volume)
            }));
            self.scratch = std::mem::replace(&mut self.velocities, smoothed);
        }
        self.positions.copy_from_slice(&self.predicted);
    }

    fn check_finite(&self, stage: Stage) -> Result<(), SolverError> {
        let bad = (0..self.positions.len())
            .into_par_iter()
            .find_first(|&i| !self.predicted[i].is_finite() || !self.velocities[i].is_finite());
        match bad {
            None => Ok(()),
            Some(i) => {
                let (quantity, value) = if self.predicted[i].is_finite() {
                    ("velocity", self.velocities[i])
                } else {
                    ("position", self.predicted[i])
                };
                Err(SolverError::NonFinite {
                    step: self.steps,
                    particle: self.ids[i],
                    quantity,
                    value: value.to_array(),
                    stage: stage.name(),
                })
            }
        }
    }

    fn timed(&mut self, stage: Stage, run: impl FnOnce(&mut Self)) {
        let start = Instant::now();
        run(self);
        self.times.add(stage, start.elapsed().as_secs_f64());
    }

    fn substep(&mut self) -> Result<(), SolverError> {
        let dt = self.params.substep_dt();
        let c = StepConstants::new(&self.params);
        self.timed(Stage::PredictPositions, |s| s.predict_positions(dt, &c));
        self.timed(Stage::BuildGrid, Self::build_grid);
        self.timed(Stage::FindNeighbors, Self::find_neighbors);
        for _ in 0..self.params.iterations {
            self.timed(Stage::ComputeLambda, |s| s.compute_lambda(&c));
            self.timed(Stage::ApplyDelta, |s| s.apply_delta(&c));
        }
        self.check_finite(Stage::ApplyDelta)?;
        self.timed(Stage::UpdateVelocity, |s| s.update_velocity(dt));
        self.timed(Stage::Vorticity, |s| s.vorticity(dt, &c));
        self.timed(Stage::Xsph, |s| s.xsph(&c));
        self.check_finite(Stage::Xsph)?;
        self.steps += 1;
        Ok(())
    }
}

impl Solver for CpuSolver {
    fn backend_name(&self) -> &'static str {
        "cpu"
    }

    fn particle_count(&self) -> usize {
        self.positions.len()
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn set_params(&mut self, params: &Params) -> Result<(), SolverError> {
        self.params
            .check_live_edit(params)
            .map_err(SolverError::Params)?;
        self.params = params.clone();
        Ok(())
    }

    fn step(&mut self) -> Result<(), SolverError> {
        for _ in 0..self.params.substeps {
            self.substep()?;
        }
        Ok(())
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn stage_times(&self) -> StageTimes {
        self.times.clone()
    }

    fn reset_stage_times(&mut self) {
        self.times.clear();
    }

    fn snapshot(&self) -> Snapshot {
        let n = self.positions.len();
        let mut snapshot = Snapshot {
            positions: vec![Vec3A::ZERO; n],
            velocities: vec![Vec3A::ZERO; n],
            densities: vec![0.0; n],
            neighbor_counts: vec![0; n],
            particle_mass: self.params.particle_mass,
            rest_density: self.params.rest_density,
        };
        for (k, &id) in self.ids.iter().enumerate() {
            let id = id as usize;
            snapshot.positions[id] = self.positions[k];
            snapshot.velocities[id] = self.velocities[k];
            snapshot.densities[id] = self.densities[k];
            snapshot.neighbor_counts[id] = self.neighbor_start[k + 1] - self.neighbor_start[k];
        }
        snapshot
    }

    fn render_positions(&self, out: &mut Vec<[f32; 4]>) {
        out.clear();
        out.par_extend(
            self.positions
                .par_iter()
                .zip(self.velocities.par_iter())
                .map(|(x, v)| [x.x, x.y, x.z, v.length()]),
        );
    }
}
