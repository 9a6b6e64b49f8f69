//! The CPU reference solver: every PBF stage as a rayon-parallel pass over structure-of-arrays
//! particle data kept sorted by grid cell. Stage functions carry the names of the CUDA kernels.
//!
//! Unlike the GPU, the CPU builds neighbour lists once per step (`find_neighbors`, CSR layout,
//! no cap) and reuses them in the 2 × iterations + 3 neighbour passes that follow, as the PBF
//! paper does (Macklin & Müller 2013, Algorithm 1, line 6).

mod neighbors;

use super::coarse::CoarseCorrection;
use super::constants::StepConstants;
use super::grid::UniformGrid;
use super::kernel::{integer_power, integer_power_x4};
use super::scene::Footprint;
use super::{
    InitialState, Params, RenderScalar, Snapshot, SolveReport, Solver, SolverError, Stage,
    StageTimes, World,
};
use crate::cuda::nvtx;
use glam::{Mat4, Vec3A, Vec4};
use neighbors::pair_slices;
use rayon::prelude::*;
use std::time::Instant;

/// Particles per rayon task in the passes that write per-pair data.
const BLOCK: usize = 1024;

/// What the CPU solver allocates, used to refuse scenes that do not fit before allocating: per
/// particle its state and scratch (12 vectors, 6 scalars) and the seeded initial state it is
/// copied from (2 vectors); per neighbour-list entry the index and the 16-byte pair cache;
/// per grid cell the counting sort's start and scatter slot and the coarse correction.
pub const FOOTPRINT: Footprint = Footprint {
    what: "CPU solver",
    per_particle: 12 * 16 + 6 * 4 + 2 * 16,
    per_neighbour: 4 + 16,
    per_cell: 2 * 4 + super::coarse::BYTES_PER_CELL,
};

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
    /// Σ_b ∇W of the walls and obstacles at each particle (`boundary.rs`), from compute_lambda
    /// for apply_delta.
    boundary_gradients: Vec<Vec3A>,
    /// ρ/ρ₀ − 1 per particle, for the coarse correction.
    constraints: Vec<f32>,
    coarse: Option<CoarseCorrection>,
    /// Vorticity ω per particle (vorticity stage) and position corrections Δp (apply_delta).
    vectors: Vec<Vec3A>,
    scratch: Vec<Vec3A>,
    ids_scratch: Vec<u32>,
    neighbor_start: Vec<u32>,
    neighbors: Vec<u32>,
    /// Per neighbour slot: the pair's kernel gradient and, in the constraint iterations, its
    /// s_corr (w lane), reused by the stage that follows the one that computed it.
    pair_cache: Vec<Vec4>,
    steps: u64,
    times: StageTimes,
    /// The last frame's iterations and errors, accumulated over its steps.
    report: SolveReport,
}

impl CpuSolver {
    /// A solver over `initial` (particle `i` gets id `i`). Fails on invalid parameters.
    pub fn new(world: World, params: Params, initial: &InitialState) -> Result<Self, SolverError> {
        params
            .validate()
            .map_err(|e| SolverError::Params(e.to_string()))?;
        let n = initial.len();
        initial.check()?;
        UniformGrid::check_size(&world.container, params.kernel_radius)
            .map_err(SolverError::Params)?;
        let grid = UniformGrid::new(&world.container, params.kernel_radius);
        let coarse = Some(CoarseCorrection::new(&world, &grid));
        let mut solver = Self {
            grid,
            positions: initial.positions.clone(),
            predicted: initial.positions.clone(),
            velocities: initial.velocities.clone(),
            ids: (0..n as u32).collect(),
            lambdas: vec![0.0; n],
            densities: vec![0.0; n],
            boundary_gradients: vec![Vec3A::ZERO; n],
            constraints: vec![0.0; n],
            coarse,
            vectors: vec![Vec3A::ZERO; n],
            scratch: Vec::with_capacity(n),
            ids_scratch: Vec::with_capacity(n),
            neighbor_start: vec![0; n + 1],
            neighbors: Vec::new(),
            pair_cache: Vec::new(),
            steps: 0,
            times: StageTimes::default(),
            report: SolveReport::default(),
            params,
            world,
        };
        // Densities of the seeded state, so statistics before the first step are real.
        solver.build_grid();
        solver.find_neighbors();
        solver.report.compression =
            solver.compute_lambda(&StepConstants::new(&solver.params, solver.params.dt));
        Ok(solver)
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

    /// ρᵢ = Σ m W (+ m Σ_b W of walls and obstacles), Cᵢ = max(ρᵢ/ρ₀ − 1, 0),
    /// λᵢ = −ω Cᵢ / (|Σⱼ V∇W + V Σ_b ∇W|² + Σⱼ |V∇W|² + ε) (ω: relaxed Jacobi). Returns the mean compression
    /// (mean Cᵢ over all particles), the density-error rule's measure.
    ///
    /// Positions do not change between this stage and the next, so each pair's gradient and
    /// s_corr are kept in `pair_cache` for `apply_delta` instead of being evaluated twice.
    fn compute_lambda(&mut self, c: &StepConstants) -> f32 {
        let n = self.predicted.len();
        let mut cache = std::mem::take(&mut self.pair_cache);
        let mut lambdas = std::mem::take(&mut self.lambdas);
        let mut densities = std::mem::take(&mut self.densities);
        let mut boundary = std::mem::take(&mut self.boundary_gradients);
        cache.resize(self.neighbors.len(), Vec4::ZERO);
        lambdas.resize(n, 0.0);
        densities.resize(n, 0.0);
        boundary.resize(n, Vec3A::ZERO);
        let this = &*self;
        let compression: f64 = lambdas
            .par_chunks_mut(BLOCK)
            .zip(densities.par_chunks_mut(BLOCK))
            .zip(boundary.par_chunks_mut(BLOCK))
            .zip(pair_slices(&mut cache, &this.neighbor_start, n).into_par_iter())
            .enumerate()
            .map(|(block, (((lambdas, densities), boundary), pairs))| {
                let first = block * BLOCK;
                let slot_offset = this.neighbor_start[first] as usize;
                let mut compression = 0.0f64;
                for (k, i) in (first..first + lambdas.len()).enumerate() {
                    let (p, id) = (this.predicted[i], this.ids[i]);
                    let slots =
                        this.neighbor_start[i] as usize..this.neighbor_start[i + 1] as usize;
                    let pairs = &mut pairs[slots.start - slot_offset..slots.end - slot_offset];
                    let (density, gradient_i, sum_squares) =
                        this.lambda_sums(p, id, &this.neighbors[slots], pairs, c);
                    let walls = c.boundary.sums(&this.world, p);
                    let density = c.self_density + c.mass * (density + walls.density);
                    let gradient_i = (gradient_i + walls.gradient) * c.volume;
                    let sum_squares = sum_squares * c.volume * c.volume;
                    // Clamped at zero: the density constraint only resists compression. The
                    // paper's bilateral form pulls every free-surface particle (C ≈ −0.5) into
                    // the bulk and, with a small ε, blows a dam break up within 10 frames
                    // (docs/solver.md).
                    let constraint = (density * c.inverse_rest_density - 1.0).max(0.0);
                    lambdas[k] = -c.jacobi_relaxation * constraint
                        / (gradient_i.length_squared() + sum_squares + c.relaxation);
                    densities[k] = density;
                    boundary[k] = walls.gradient;
                    compression += constraint as f64;
                }
                compression
            })
            .sum();
        self.pair_cache = cache;
        self.lambdas = lambdas;
        self.densities = densities;
        self.boundary_gradients = boundary;
        (compression / n.max(1) as f64) as f32
    }

    /// For particle i at `p`: Σⱼ W, Σⱼ ∇W and Σⱼ |∇W|² over `neighbors`, writing each pair's
    /// gradient and s_corr into `pairs`. Four neighbours at a time in SIMD lanes (positions
    /// transposed to x, y, z vectors), the remainder and coincident pairs one by one.
    #[inline(always)]
    fn lambda_sums(
        &self,
        p: Vec3A,
        id: u32,
        neighbors: &[u32],
        pairs: &mut [Vec4],
        c: &StepConstants,
    ) -> (f32, Vec3A, f32) {
        let kernel = &c.kernel;
        let (mut density, mut gradient, mut squares) = (0.0, Vec3A::ZERO, 0.0);
        let scalar = |k: usize,
                      pairs: &mut [Vec4],
                      density: &mut f32,
                      gradient: &mut Vec3A,
                      squares: &mut f32| {
            let j = neighbors[k] as usize;
            let offset = p - self.predicted[j];
            let r2 = offset.length_squared();
            let w = kernel.density(r2);
            let g = kernel.pair_gradient(offset, r2, || (id, self.ids[j]));
            pairs[k] =
                g.extend(-c.scorr_scale * integer_power(w * c.inverse_scorr_reference, c.scorr_n));
            *density += w;
            *gradient += g;
            *squares += g.length_squared();
        };
        let (mut w4, mut gx4, mut gy4, mut gz4, mut squares4) =
            (Vec4::ZERO, Vec4::ZERO, Vec4::ZERO, Vec4::ZERO, Vec4::ZERO);
        let (px, py, pz) = (Vec4::splat(p.x), Vec4::splat(p.y), Vec4::splat(p.z));
        let groups = neighbors.len() / 4;
        for group in 0..groups {
            let k = 4 * group;
            let at = |lane: usize| self.predicted[neighbors[k + lane] as usize].extend(0.0);
            let t = Mat4::from_cols(at(0), at(1), at(2), at(3)).transpose();
            let (ox, oy, oz) = (px - t.x_axis, py - t.y_axis, pz - t.z_axis);
            let r2 = ox * ox + oy * oy + oz * oz;
            if kernel.any_coincident(r2) {
                for lane in 0..4 {
                    scalar(k + lane, pairs, &mut density, &mut gradient, &mut squares);
                }
                continue;
            }
            let (w, scale) = kernel.density_and_gradient_scale_x4(r2);
            let (gx, gy, gz) = (ox * scale, oy * scale, oz * scale);
            // s_corr is off by default: skip its power (−0, as −0 × the power would be).
            let scorr = if c.scorr_scale != 0.0 {
                integer_power_x4(w * c.inverse_scorr_reference, c.scorr_n) * -c.scorr_scale
            } else {
                Vec4::splat(-0.0)
            };
            let out = Mat4::from_cols(gx, gy, gz, scorr).transpose();
            pairs[k..k + 4].copy_from_slice(&[out.x_axis, out.y_axis, out.z_axis, out.w_axis]);
            w4 += w;
            gx4 += gx;
            gy4 += gy;
            gz4 += gz;
            squares4 += gx * gx + gy * gy + gz * gz;
        }
        for k in 4 * groups..neighbors.len() {
            scalar(k, pairs, &mut density, &mut gradient, &mut squares);
        }
        let gradient =
            gradient + Vec3A::new(gx4.element_sum(), gy4.element_sum(), gz4.element_sum());
        (
            density + w4.element_sum(),
            gradient,
            squares + squares4.element_sum(),
        )
    }

    /// Δpᵢ = V Σⱼ (λᵢ + λⱼ + s_corr) ∇W + V λᵢ Σ_b ∇W, s_corr = −k (W/W(Δq))ⁿ / Σ|∇C|²₀; then
    /// x* += Δp and projection onto walls and obstacles. Gradients, s_corr and the walls'
    /// Σ_b ∇W come from `compute_lambda`.
    fn apply_delta(&mut self, c: &StepConstants) {
        let mut corrected = std::mem::take(&mut self.scratch);
        corrected.clear();
        let this = &*self;
        corrected.par_extend((0..this.predicted.len()).into_par_iter().map(|i| {
            let lambda_i = this.lambdas[i];
            let mut delta = this.boundary_gradients[i] * lambda_i;
            for slot in this.neighbor_start[i] as usize..this.neighbor_start[i + 1] as usize {
                let pair = this.pair_cache[slot];
                let j = this.neighbors[slot] as usize;
                delta += Vec3A::from(pair.truncate()) * (lambda_i + this.lambdas[j] + pair.w);
            }
            this.world
                .project(this.predicted[i] + delta * c.volume, c.margin)
        }));
        self.scratch = std::mem::replace(&mut self.predicted, corrected);
    }

    /// The coarse-grid correction (`coarse.rs`) from the densities of the last compute_lambda:
    /// every particle moves by the displacement that removes the long wavelengths of the
    /// compression, then is projected out of walls and obstacles.
    fn coarse_correction(&mut self, c: &StepConstants) {
        let Some(mut coarse) = self.coarse.take() else {
            return;
        };
        let mut constraints = std::mem::take(&mut self.constraints);
        constraints.clear();
        constraints.par_extend(
            self.densities
                .par_iter()
                .map(|&density| density * c.inverse_rest_density - 1.0),
        );
        if coarse.solve(&self.grid, &self.predicted, &constraints, c.volume, c.dt) {
            let (world, coarse) = (&self.world, &coarse);
            self.predicted
                .par_iter_mut()
                .for_each(|x| *x = world.project(*x + coarse.displacement(*x), c.margin));
        }
        self.report.coarse_residual = coarse.relative_residual;
        self.constraints = constraints;
        self.coarse = Some(coarse);
    }

    /// v = (x* − x) / dt.
    fn update_velocity(&mut self, dt: f32) {
        let inverse_dt = 1.0 / dt;
        self.velocities
            .par_iter_mut()
            .zip(self.predicted.par_iter().zip(self.positions.par_iter()))
            .for_each(|(v, (&xp, &x))| *v = (xp - x) * inverse_dt);
    }

    /// ωᵢ = Σⱼ V (vᵢ − vⱼ) × ∇ᵢWᵢⱼ (the SPH curl); ηᵢ = Σⱼ (|ωⱼ| − |ωᵢ|) ∇ᵢWᵢⱼ (only its direction is used);
    /// vᵢ += dt · ε (η̂ × ωᵢ) (paper eq. 15–16, with SPH volume weights so ω is in s⁻¹).
    /// The curl pass keeps each pair's gradient in `pair_cache` for the confinement pass.
    fn vorticity(&mut self, c: &StepConstants) {
        if self.params.vorticity == 0.0 {
            return;
        }
        let n = self.predicted.len();
        let mut cache = std::mem::take(&mut self.pair_cache);
        let mut omegas = std::mem::take(&mut self.vectors);
        omegas.resize(n, Vec3A::ZERO);
        let this = &*self;
        omegas
            .par_chunks_mut(BLOCK)
            .zip(pair_slices(&mut cache, &this.neighbor_start, n).into_par_iter())
            .enumerate()
            .for_each(|(block, (omegas, pairs))| {
                let first = block * BLOCK;
                let slot_offset = this.neighbor_start[first] as usize;
                for (k, i) in (first..first + omegas.len()).enumerate() {
                    let (p, v) = (this.predicted[i], this.velocities[i]);
                    let mut omega = Vec3A::ZERO;
                    for slot in this.neighbor_start[i] as usize..this.neighbor_start[i + 1] as usize
                    {
                        let j = this.neighbors[slot] as usize;
                        let offset = p - this.predicted[j];
                        let gradient = c.kernel.gradient(offset, offset.length_squared());
                        pairs[slot - slot_offset] = gradient.extend(0.0);
                        omega += (v - this.velocities[j]).cross(gradient);
                    }
                    omegas[k] = omega * c.volume;
                }
            });
        self.pair_cache = cache;
        let this = &*self;
        let confinement: Vec<Vec3A> = (0..n)
            .into_par_iter()
            .map(|i| {
                let magnitude_i = omegas[i].length();
                let mut eta = Vec3A::ZERO;
                for slot in this.neighbor_start[i] as usize..this.neighbor_start[i + 1] as usize {
                    let j = this.neighbors[slot] as usize;
                    eta += Vec3A::from(this.pair_cache[slot].truncate())
                        * (omegas[j].length() - magnitude_i);
                }
                let length = eta.length();
                if length <= 1e-12 {
                    return Vec3A::ZERO;
                }
                (eta / length).cross(omegas[i]) * c.vorticity_scale
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
        if self.params.xsph_c > 0.0 {
            let mut smoothed = std::mem::take(&mut self.scratch);
            let this = &*self;
            smoothed.clear();
            smoothed.par_extend((0..this.predicted.len()).into_par_iter().map(|i| {
                let (p, v) = (this.predicted[i], this.velocities[i]);
                let mut sum = Vec3A::ZERO;
                for &j in this.neighbors_of(i) {
                    let j = j as usize;
                    let r2 = (p - this.predicted[j]).length_squared();
                    sum += (this.velocities[j] - v) * c.kernel.density(r2);
                }
                v + sum * c.xsph_scale
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
        let _range = nvtx::range(stage.c_name());
        let start = Instant::now();
        run(self);
        self.times.add(stage, start.elapsed().as_secs_f64());
    }

    fn substep(&mut self, dt: f32) -> Result<(), SolverError> {
        let c = StepConstants::new(&self.params, dt);
        self.timed(Stage::PredictPositions, |s| s.predict_positions(dt, &c));
        self.timed(Stage::BuildGrid, Self::build_grid);
        self.timed(Stage::FindNeighbors, Self::find_neighbors);
        let (fewest, most, tolerance) = self.params.iteration_rule();
        // compute_lambda measures the compression of the positions it sees: under the
        // density-error rule the loop stops there once enough iterations ran and it is small
        // enough; with a fixed count it stops after the last apply_delta.
        let mut iterations = 0;
        loop {
            let mut compression = 0.0;
            self.timed(Stage::ComputeLambda, |s| compression = s.compute_lambda(&c));
            self.report.compression = compression;
            if tolerance.is_some_and(|t| iterations >= fewest && compression <= t) {
                break;
            }
            if iterations == 0 && self.params.coarse_correction {
                self.timed(Stage::CoarseCorrection, |s| s.coarse_correction(&c));
            }
            self.timed(Stage::ApplyDelta, |s| s.apply_delta(&c));
            iterations += 1;
            if iterations >= most {
                break;
            }
        }
        self.report.iterations += iterations as f32;
        self.check_finite(Stage::ApplyDelta)?;
        self.timed(Stage::UpdateVelocity, |s| s.update_velocity(dt));
        self.timed(Stage::Vorticity, |s| s.vorticity(&c));
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
        self.params.apply_live_edit(params)
    }

    fn step(&mut self) -> Result<(), SolverError> {
        let max_speed = self
            .velocities
            .par_iter()
            .map(|v| v.length())
            .reduce(|| 0.0, f32::max);
        let substeps = self.params.substeps_for(max_speed);
        let dt = self.params.dt / substeps as f32;
        self.report.iterations = 0.0;
        for _ in 0..substeps {
            self.substep(dt)?;
        }
        self.report.iterations /= substeps as f32;
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

    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        Ok(Snapshot::from_sorted(
            &self.params,
            self.report,
            &self.ids,
            |k| {
                let neighbors = self.neighbor_start[k + 1] - self.neighbor_start[k];
                (
                    self.positions[k],
                    self.velocities[k],
                    self.densities[k],
                    neighbors,
                )
            },
        ))
    }

    fn solve_report(&self) -> SolveReport {
        self.report
    }

    fn render_positions(
        &self,
        scalar: RenderScalar,
        out: &mut Vec<[f32; 4]>,
    ) -> Result<(), SolverError> {
        out.clear();
        out.par_extend((0..self.positions.len()).into_par_iter().map(|k| {
            let x = self.positions[k];
            let value = match scalar {
                RenderScalar::Speed => self.velocities[k].length(),
                RenderScalar::Density => self.densities[k],
            };
            [x.x, x.y, x.z, value]
        }));
        Ok(())
    }

    /// The `anisotropy` stage over this step's neighbour lists (found at x*, weighted at the
    /// positions now).
    fn anisotropy(&self, out: &mut Vec<[f32; 4]>) -> Result<(), SolverError> {
        let ellipsoids = super::anisotropy::anisotropy(
            &self.positions,
            &self.neighbor_start,
            &self.neighbors,
            self.params.kernel_radius,
            self.params.particle_radius(),
        );
        out.clear();
        out.extend(ellipsoids.iter().flat_map(|e| e.records()));
        Ok(())
    }

    /// The `foam` stage over this step's neighbour lists (found at x*) and the state now.
    fn foam(
        &mut self,
        foam: &mut crate::sims::pbf::foam::Foam,
        settings: &crate::sims::pbf::foam::FoamSettings,
        dt: f32,
        world: &World,
    ) -> Result<usize, SolverError> {
        let fluid = crate::sims::pbf::foam::FluidView {
            positions: &self.positions,
            velocities: &self.velocities,
            ids: &self.ids,
            neighbor_start: &self.neighbor_start,
            neighbors: &self.neighbors,
            radius: self.params.kernel_radius,
            particle_radius: self.params.particle_radius(),
        };
        let gravity = Vec3A::from(self.params.gravity);
        Ok(foam.foam(&fluid, settings, dt, gravity, world))
    }
}

#[cfg(test)]
mod tests;
