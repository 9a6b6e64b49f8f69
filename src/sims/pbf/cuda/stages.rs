//! The launches of each stage of a solver step (`Stage`, docs/cuda.md "One frame"): the
//! kernels, their arguments and the density-error rule's loop.

use super::*;

impl CudaSolver {
    pub(super) fn predict_positions(&mut self) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        self.kernels.predict_positions(
            &self.stream,
            &self.constants,
            &b.obstacles,
            &b.positions,
            &mut b.velocities,
            &mut b.predicted,
        )
    }

    /// Counting sort of every particle array by the cell of x*: count (atomics), exclusive
    /// scan (which also zeroes the counts for the next step), scatter.
    pub(super) fn build_grid(&mut self) -> Result<(), SolverError> {
        let (k, stream, p, b) = (
            &self.kernels,
            &self.stream,
            &self.constants,
            &mut self.buffers,
        );
        k.compute_cell_ids(
            stream,
            p,
            &b.predicted,
            &mut b.cell_of,
            &mut b.rank,
            &mut b.cell_counts,
        )?;
        // Up the levels: scan each level in blocks, collecting block totals into the next
        // level's array (level 0: the counts into the starts, higher levels in place).
        let levels = &self.scan_levels;
        for level in 0..levels.len() {
            let (lower, upper) = b.scan_sums.split_at_mut(level);
            let (input, output) = match lower.last_mut() {
                None => (&mut b.cell_counts, Some(&mut b.cell_start)),
                Some(sums) => (sums, None),
            };
            let block_sums = upper.first_mut().filter(|_| level + 1 < levels.len());
            k.scan_blocks(stream, input, output, block_sums, levels[level], level == 0)?;
        }
        // Down again: add each level's scanned block totals to the level below.
        for level in (0..levels.len() - 1).rev() {
            let (lower, upper) = b.scan_sums.split_at_mut(level);
            let values = lower.last_mut().unwrap_or(&mut b.cell_start);
            k.add_block_offsets(stream, values, &upper[0], levels[level])?;
        }
        k.reorder_particles(
            stream,
            p,
            &b.cell_of,
            &b.rank,
            &b.cell_start,
            &b.positions,
            &b.predicted,
            &b.velocities,
            &b.ids,
            &mut b.positions_next,
            &mut b.predicted_next,
            &mut b.velocities_next,
            &mut b.ids_next,
            &mut b.grid_positions,
        )?;
        std::mem::swap(&mut b.positions, &mut b.positions_next);
        std::mem::swap(&mut b.predicted, &mut b.predicted_next);
        std::mem::swap(&mut b.velocities, &mut b.velocities_next);
        std::mem::swap(&mut b.ids, &mut b.ids_next);
        Ok(())
    }

    /// boundary_density, then compute_lambda; with `measure`, Σ Cᵢ goes to the compression
    /// sum; with `guarded`, both do nothing once the density-error rule has converged.
    pub(super) fn compute_lambda(
        &mut self,
        count_neighbors: bool,
        measure: bool,
        guarded: bool,
    ) -> Result<(), SolverError> {
        let (k, stream, p, b) = (
            &self.kernels,
            &self.stream,
            &self.constants,
            &mut self.buffers,
        );
        let guard = guarded.then_some(&b.solve_state);
        k.boundary_density(
            stream,
            p,
            &b.obstacles,
            &b.predicted,
            &mut b.boundary,
            guard,
        )?;
        k.compute_lambda(
            stream,
            p,
            &b.predicted,
            &b.ids,
            &b.cell_start,
            &b.grid_positions,
            &b.boundary,
            &mut b.lambdas,
            &mut b.densities,
            count_neighbors.then_some(&mut b.neighbor_counts),
            measure.then_some(&mut b.compression),
            guard,
        )
    }

    /// The mean compression of the last measuring compute_lambda into solve_state[2] (and the
    /// sum cleared); from iteration `fewest` on, a mean at most `tolerance` marks the step
    /// converged (a negative tolerance never does).
    pub(super) fn check_density_error(
        &mut self,
        tolerance: f32,
        iteration: u32,
        fewest: u32,
    ) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        self.kernels.check_density_error(
            &self.stream,
            &self.constants,
            &mut b.compression,
            &mut b.solve_state,
            tolerance,
            iteration,
            fewest,
        )
    }

    /// apply_delta; `after_coarse` evaluates the pair terms at the positions the grid was built
    /// from (those compute_lambda saw before the coarse correction moved the particles).
    pub(super) fn apply_delta(
        &mut self,
        guarded: bool,
        after_coarse: bool,
    ) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        let evaluated_at = if after_coarse {
            &b.grid_positions
        } else {
            &b.predicted
        };
        self.kernels.apply_delta(
            &self.stream,
            &self.constants,
            &b.obstacles,
            &b.predicted,
            evaluated_at,
            &b.ids,
            &b.lambdas,
            &b.boundary,
            &b.cell_start,
            &b.grid_positions,
            &mut b.predicted_next,
            guarded.then_some(&mut b.solve_state),
        )?;
        std::mem::swap(&mut b.predicted, &mut b.predicted_next);
        Ok(())
    }

    /// The coarse-grid correction (`coarse.cuh`) from the first compute_lambda's densities.
    pub(super) fn coarse_correction(&mut self) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        self.coarse.run(
            &self.stream,
            &self.kernels,
            &self.constants,
            &b.obstacles,
            &mut b.predicted,
            &b.densities,
            &b.cell_start,
        )
    }

    pub(super) fn update_velocity(&mut self) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        self.kernels.update_velocity(
            &self.stream,
            &self.constants,
            &b.positions,
            &b.predicted,
            &mut b.velocities,
        )
    }

    /// vorticity_curl, then vorticity_confinement, with ω in the boundary sums' array (free
    /// once the step's last apply_delta has run).
    pub(super) fn vorticity(&mut self) -> Result<(), SolverError> {
        let (k, stream, p, b) = (
            &self.kernels,
            &self.stream,
            &self.constants,
            &mut self.buffers,
        );
        let (predicted, cell_start, grid) = (&b.predicted, &b.cell_start, &b.grid_positions);
        k.vorticity_curl(
            stream,
            p,
            predicted,
            &b.velocities,
            cell_start,
            grid,
            &mut b.boundary,
        )?;
        k.vorticity_confinement(
            stream,
            p,
            predicted,
            &b.boundary,
            cell_start,
            grid,
            &mut b.velocities,
        )
    }

    /// XSPH into the second velocity buffer, then x = x* (a swap: predict overwrites the old x).
    pub(super) fn xsph(&mut self, enabled: bool) -> Result<(), SolverError> {
        let b = &mut self.buffers;
        if enabled {
            self.kernels.xsph(
                &self.stream,
                &self.constants,
                &b.predicted,
                &b.velocities,
                &b.cell_start,
                &b.grid_positions,
                &mut b.velocities_next,
            )?;
            std::mem::swap(&mut b.velocities, &mut b.velocities_next);
        }
        std::mem::swap(&mut b.positions, &mut b.predicted);
        Ok(())
    }

    /// Runs `stage` and, with stage timing on, marks its end with an event.
    pub(super) fn timed(
        &mut self,
        stage: Stage,
        run: impl FnOnce(&mut Self) -> Result<(), SolverError>,
    ) -> Result<(), SolverError> {
        // The range spans the launches on the CPU timeline; Nsight Systems draws it over the
        // kernels they queued.
        let range = crate::cuda::nvtx::range(stage.c_name());
        run(self)?;
        drop(range);
        if self.stage_timing {
            self.timer.end(&self.stream, stage)?;
        }
        Ok(())
    }

    /// One solver step. Returns the constraint iterations it ran.
    pub(super) fn substep(&mut self, last: bool) -> Result<u32, SolverError> {
        self.timed(Stage::PredictPositions, Self::predict_positions)?;
        self.timed(Stage::BuildGrid, Self::build_grid)?;
        let iterations = self.constraint_iterations(last)?;
        self.timed(Stage::UpdateVelocity, Self::update_velocity)?;
        if self.params.vorticity != 0.0 {
            self.timed(Stage::Vorticity, Self::vorticity)?;
        }
        let xsph = self.params.xsph_c > 0.0;
        self.timed(Stage::Xsph, |s| s.xsph(xsph))?;
        Ok(iterations)
    }

    /// compute_lambda and apply_delta as the iteration rule says (and the coarse correction
    /// after the first compute_lambda). Returns the iterations applied.
    pub(super) fn constraint_iterations(&mut self, last: bool) -> Result<u32, SolverError> {
        let coarse = self.params.coarse_correction;
        let (fewest, most, tolerance) = self.params.iteration_rule();
        let Some(tolerance) = tolerance else {
            // A fixed count: no flag, no synchronisation; the last compute_lambda of the
            // frame's last step measures the compression for the report.
            for iteration in 0..most {
                let measure = last && iteration + 1 == most;
                self.timed(Stage::ComputeLambda, |s| {
                    s.compute_lambda(iteration == 0, measure, false)?;
                    if measure {
                        s.check_density_error(-1.0, iteration, fewest)?;
                    }
                    Ok(())
                })?;
                let after_coarse = iteration == 0 && coarse;
                if after_coarse {
                    self.timed(Stage::CoarseCorrection, Self::coarse_correction)?;
                }
                self.timed(Stage::ApplyDelta, |s| s.apply_delta(false, after_coarse))?;
            }
            return Ok(most);
        };
        // The density-error rule: after every compute_lambda, check_density_error sets the
        // converged flag on the GPU; later kernels of the step see it and do nothing. The host
        // reads the flag every ITERATIONS_PER_CHECK iterations to stop launching.
        let clearing = CudaError::driver("clearing the iteration state");
        self.stream
            .memset_zeros(&mut self.buffers.solve_state)
            .map_err(&clearing)?;
        self.stream
            .memset_zeros(&mut self.buffers.compression)
            .map_err(&clearing)?;
        let mut iteration = 0;
        loop {
            let chunk_end = (iteration + ITERATIONS_PER_CHECK).min(most);
            while iteration < chunk_end {
                self.timed(Stage::ComputeLambda, |s| {
                    s.compute_lambda(iteration == 0, true, true)?;
                    s.check_density_error(tolerance, iteration, fewest)
                })?;
                let after_coarse = iteration == 0 && coarse;
                if after_coarse {
                    self.timed(Stage::CoarseCorrection, Self::coarse_correction)?;
                }
                self.timed(Stage::ApplyDelta, |s| s.apply_delta(true, after_coarse))?;
                iteration += 1;
            }
            let state = self.read_solve_state()?;
            if state[0] != 0 || iteration >= most {
                return Ok(state[1]);
            }
        }
    }

    /// [converged, iterations applied, mean compression bits] (synchronises).
    pub(super) fn read_solve_state(&self) -> Result<[u32; 3], SolverError> {
        let mut state = [0u32; 3];
        let reading = CudaError::driver("reading the iteration state");
        let state_buffer = &self.buffers.solve_state;
        crate::cuda::launch::read_back(&self.stream, state_buffer, &mut state, reading)?;
        Ok(state)
    }
}
