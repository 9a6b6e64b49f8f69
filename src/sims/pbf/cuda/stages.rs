//! The launches of each stage of a solver step (`Stage`, docs/cuda.md "One frame"): the
//! kernels, their arguments and the density-error rule's loop.

use super::*;

impl CudaSolver {
    pub(super) fn launch_config(&self) -> LaunchConfig {
        per_element(self.particle_count)
    }

    pub(super) fn predict_positions(&mut self) -> Result<(), SolverError> {
        let (k, b) = (&self.kernels.predict_positions, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.obstacles)
            .arg(&b.positions)
            .arg(&mut b.velocities)
            .arg(&mut b.predicted);
        // SAFETY: arguments as in pbf.cu; every array holds particle_count elements.
        unsafe { k.launch(&mut launch, per_element(self.particle_count)) }
    }

    /// Counting sort of every particle array by the cell of x*: count (atomics), exclusive
    /// scan (which also zeroes the counts for the next step), scatter.
    pub(super) fn build_grid(&mut self) -> Result<(), SolverError> {
        let config = self.launch_config();
        let b = &mut self.buffers;
        let k = &self.kernels;
        let mut launch = self.stream.launch_builder(k.compute_cell_ids.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&mut b.cell_of)
            .arg(&mut b.rank)
            .arg(&mut b.cell_counts);
        // SAFETY: arguments as in pbf.cu; cell ids are clamped into the grid.
        unsafe { k.compute_cell_ids.launch(&mut launch, config)? };

        // Up the levels: scan each level in blocks, collecting block totals into the next.
        let levels = &self.scan_levels;
        let null: u64 = 0;
        for level in 0..levels.len() {
            let count = levels[level] as u32;
            let blocks = levels[level].div_ceil(pbf::SCAN_ITEMS_PER_BLOCK) as u32;
            let config = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (pbf::SCAN_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let clear_input: i32 = (level == 0).into();
            let mut launch = self.stream.launch_builder(k.scan_blocks.function());
            let (lower, upper) = b.scan_sums.split_at_mut(level);
            if level == 0 {
                launch.arg(&mut b.cell_counts).arg(&mut b.cell_start);
            } else {
                let this = &mut lower[level - 1];
                launch.arg(&*this).arg(&*this);
            }
            match upper.first_mut() {
                Some(sums) if level + 1 < levels.len() => launch.arg(sums),
                _ => launch.arg(&null),
            };
            launch.arg(&count).arg(&clear_input);
            // SAFETY: each level's array holds `count` values; its block totals array holds
            // `blocks` (the next level's count).
            unsafe { k.scan_blocks.launch(&mut launch, config)? };
        }
        // Down again: add each level's scanned block totals to the level below.
        for level in (0..levels.len() - 1).rev() {
            let count = levels[level] as u32;
            let (lower, upper) = b.scan_sums.split_at_mut(level);
            let mut launch = self.stream.launch_builder(k.add_block_offsets.function());
            if level == 0 {
                launch.arg(&mut b.cell_start);
            } else {
                launch.arg(&mut lower[level - 1]);
            }
            launch.arg(&upper[0]).arg(&count);
            // SAFETY: `count` values, one offset per block of SCAN_ITEMS_PER_BLOCK.
            unsafe {
                k.add_block_offsets
                    .launch(&mut launch, per_element(levels[level]))?
            };
        }

        let mut launch = self.stream.launch_builder(k.reorder_particles.function());
        launch
            .arg(&self.constants)
            .arg(&b.cell_of)
            .arg(&b.rank)
            .arg(&b.cell_start)
            .arg(&b.positions)
            .arg(&b.predicted)
            .arg(&b.velocities)
            .arg(&b.ids)
            .arg(&mut b.positions_next)
            .arg(&mut b.predicted_next)
            .arg(&mut b.velocities_next)
            .arg(&mut b.ids_next)
            .arg(&mut b.grid_positions);
        // SAFETY: arguments as in pbf.cu; slots are a permutation of 0..particle_count.
        unsafe { k.reorder_particles.launch(&mut launch, config)? };
        std::mem::swap(&mut b.positions, &mut b.positions_next);
        std::mem::swap(&mut b.predicted, &mut b.predicted_next);
        std::mem::swap(&mut b.velocities, &mut b.velocities_next);
        std::mem::swap(&mut b.ids, &mut b.ids_next);
        Ok(())
    }

    /// compute_lambda; with `measure`, Σ Cᵢ goes to the compression sum; with `guarded`, it
    /// does nothing once the density-error rule has converged.
    pub(super) fn compute_lambda(
        &mut self,
        count_neighbors: bool,
        measure: bool,
        guarded: bool,
    ) -> Result<(), SolverError> {
        let config = self.launch_config();
        let null: u64 = 0;
        let (k, b) = (&self.kernels.boundary_density, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.obstacles)
            .arg(&b.predicted)
            .arg(&mut b.boundary);
        if guarded {
            launch.arg(&b.solve_state);
        } else {
            launch.arg(&null);
        }
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config)? };
        let (k, b) = (&self.kernels.compute_lambda, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&b.ids)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&b.boundary)
            .arg(&mut b.lambdas)
            .arg(&mut b.densities);
        if count_neighbors {
            launch.arg(&mut b.neighbor_counts);
        } else {
            launch.arg(&null);
        }
        if measure {
            launch.arg(&mut b.compression);
        } else {
            launch.arg(&null);
        }
        if guarded {
            launch.arg(&b.solve_state);
        } else {
            launch.arg(&null);
        }
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config) }
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
        let (k, b) = (&self.kernels.check_density_error, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&mut b.compression)
            .arg(&mut b.solve_state)
            .arg(&tolerance)
            .arg(&iteration)
            .arg(&fewest);
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: arguments as in pbf.cu; one thread.
        unsafe { k.launch(&mut launch, config) }
    }

    /// apply_delta; `after_coarse` evaluates the pair terms at the positions the grid was built
    /// from (those compute_lambda saw before the coarse correction moved the particles).
    pub(super) fn apply_delta(
        &mut self,
        guarded: bool,
        after_coarse: bool,
    ) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels.apply_delta, &mut self.buffers);
        let null: u64 = 0;
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.obstacles)
            .arg(&b.predicted);
        if after_coarse {
            launch.arg(&b.grid_positions);
        } else {
            launch.arg(&b.predicted);
        }
        launch
            .arg(&b.ids)
            .arg(&b.lambdas)
            .arg(&b.boundary)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&mut b.predicted_next);
        if guarded {
            launch.arg(&mut b.solve_state);
        } else {
            launch.arg(&null);
        }
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config)? };
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
        let config = self.launch_config();
        let (k, b) = (&self.kernels.update_velocity, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.function());
        launch
            .arg(&self.constants)
            .arg(&b.positions)
            .arg(&b.predicted)
            .arg(&mut b.velocities);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.launch(&mut launch, config) }
    }

    pub(super) fn vorticity(&mut self) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels, &mut self.buffers);
        let mut launch = self.stream.launch_builder(k.vorticity_curl.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&b.velocities)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&mut b.omegas);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.vorticity_curl.launch(&mut launch, config)? };
        let mut launch = self
            .stream
            .launch_builder(k.vorticity_confinement.function());
        launch
            .arg(&self.constants)
            .arg(&b.predicted)
            .arg(&b.omegas)
            .arg(&b.cell_start)
            .arg(&b.grid_positions)
            .arg(&mut b.velocities);
        // SAFETY: arguments as in pbf.cu.
        unsafe { k.vorticity_confinement.launch(&mut launch, config) }
    }

    /// XSPH into the second velocity buffer, then x = x* (a swap: predict overwrites the old x).
    pub(super) fn xsph(&mut self, enabled: bool) -> Result<(), SolverError> {
        let config = self.launch_config();
        let (k, b) = (&self.kernels.xsph, &mut self.buffers);
        if enabled {
            let mut launch = self.stream.launch_builder(k.function());
            launch
                .arg(&self.constants)
                .arg(&b.predicted)
                .arg(&b.velocities)
                .arg(&b.cell_start)
                .arg(&b.grid_positions)
                .arg(&mut b.velocities_next);
            // SAFETY: arguments as in pbf.cu.
            unsafe { k.launch(&mut launch, config)? };
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
            self.timer.end(&self.context, &self.stream, stage)?;
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
        self.stream
            .memset_zeros(&mut self.buffers.solve_state)
            .map_err(driver_error("clearing the iteration state"))?;
        self.stream
            .memset_zeros(&mut self.buffers.compression)
            .map_err(driver_error("clearing the iteration state"))?;
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
        self.stream
            .memcpy_dtoh(&self.buffers.solve_state, &mut state)
            .map_err(driver_error("reading the iteration state"))?;
        self.stream
            .synchronize()
            .map_err(driver_error("reading the iteration state"))?;
        Ok(state)
    }
}
