//! The pool's solver behind one type: the CPU stages (`cpu.rs`, `drops.rs`) on a [`Surface`]
//! in host memory, timed per stage, or the CUDA kernels (`cuda/`), chosen by `--backend` as
//! for the other kinds (auto: CUDA when a driver and GPU are found, and the scene's
//! `pool.cuda_nodes` there).

use super::cpu::{self, StepConstants};
use super::cuda::CudaPool;
use super::drops::{self, Drop, Stencils};
use super::frame::PoolStats;
use super::memory::{drawn_bytes, gpu_needed, Solver};
use super::params::PoolParams;
use super::scene::PoolScene;
use super::surface::Surface;
use super::PoolStage;
use crate::sims::{Backend, Chosen};
use anyhow::{anyhow, bail, Result};
use std::time::Instant;

/// The CPU solver.
pub struct CpuPool {
    /// The state.
    pub surface: Surface,
    stencils: Stencils,
    /// `edges`' new heights, computed before any is written (kept: no allocation a substep).
    edge_updates: Vec<(usize, f32)>,
    seconds: [f64; PoolStage::ALL.len()],
    timing: bool,
}

impl CpuPool {
    /// A surface at rest for `params` with `land(x, z)` fixed.
    pub fn new(params: &PoolParams, land: impl Fn(f32, f32) -> bool) -> CpuPool {
        CpuPool {
            surface: Surface::new(params, land),
            stencils: Stencils::default(),
            edge_updates: Vec::new(),
            seconds: [0.0; PoolStage::ALL.len()],
            timing: true,
        }
    }

    /// One frame: `disturb` with `drops`, then the substeps (`forces`, `integrate`, `edges`).
    pub fn step(&mut self, params: &PoolParams, drops: &[Drop]) {
        let clock = Instant::now();
        for drop in drops {
            drops::disturb(&mut self.surface, drop, &mut self.stencils);
        }
        self.lap(PoolStage::Disturb, clock);
        let k = StepConstants::new(params);
        for _ in 0..params.substeps() {
            let clock = Instant::now();
            cpu::forces(&mut self.surface, &k);
            let clock = self.lap(PoolStage::Forces, clock);
            cpu::integrate(&mut self.surface, &k);
            let clock = self.lap(PoolStage::Integrate, clock);
            cpu::edges(&mut self.surface, &k, &mut self.edge_updates);
            self.lap(PoolStage::Edges, clock);
        }
    }

    fn lap(&mut self, stage: PoolStage, since: Instant) -> Instant {
        let now = Instant::now();
        if self.timing {
            self.seconds[stage as usize] += (now - since).as_secs_f64();
        }
        now
    }

    /// Seconds per stage since the last reset.
    pub fn stage_seconds(&self) -> Vec<f64> {
        self.seconds.to_vec()
    }

    /// Clears the stage times.
    pub fn reset_stage_times(&mut self) {
        self.seconds = [0.0; PoolStage::ALL.len()];
    }

    /// Turns stage timing on or off.
    pub fn set_stage_timing(&mut self, enabled: bool) {
        self.timing = enabled;
    }
}

enum Backends {
    Cpu(Box<CpuPool>),
    Cuda(Box<CudaPool>),
}

/// The pool's solver on either backend.
pub struct PoolSolver {
    backend: Backends,
    /// An error of a call that cannot return one (clearing on the GPU), reported by the next
    /// step.
    pending: Option<anyhow::Error>,
    /// Which nodes' flags changed since the renderer was last told
    /// ([`PoolSolver::take_land_change`]).
    land_change: Option<LandChange>,
}

/// Which nodes' flags changed (the land the renderer is told again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LandChange {
    /// Any of them (a new solver, a rebuild, the flags set again).
    All,
    /// Only nodes within this box: its least and greatest (i, j), inclusive.
    Nodes([[usize; 2]; 2]),
}

impl LandChange {
    /// This change and node (i, j)'s.
    fn and_node(change: Option<LandChange>, i: usize, j: usize) -> LandChange {
        match change {
            None => LandChange::Nodes([[i, j], [i, j]]),
            Some(LandChange::All) => LandChange::All,
            Some(LandChange::Nodes([low, high])) => LandChange::Nodes([
                [low[0].min(i), low[1].min(j)],
                [high[0].max(i), high[1].max(j)],
            ]),
        }
    }
}

impl PoolSolver {
    /// The solver `backend` asks for on CUDA device `device`, for `scene` (on CUDA with
    /// `cuda_nodes` per side when given: the scene's `pool.cuda_nodes` unless the node count
    /// was rescaled, which becomes the scene's `pool.nodes`), and a sentence saying which
    /// backend runs and why. `drawn`: the front end draws it (the viewer, `render`), by
    /// interop or not as `interop` says (`None`: not known), so the GPU check counts the
    /// renderer's GL objects too. `fits` checks the host's part before each backend's grid is
    /// built (`memory::drawn_bytes`; the CPU's when CUDA cannot start and auto falls back).
    pub fn create(
        scene: &mut PoolScene,
        cuda_nodes: Option<usize>,
        (backend, device): (Backend, usize),
        drawing: (bool, Option<bool>),
        fits: &dyn Fn(Solver, &PoolScene) -> Result<()>,
    ) -> Result<(PoolSolver, String)> {
        let unavailable = crate::cuda::unavailable();
        PoolSolver::create_where(
            scene,
            cuda_nodes,
            (backend, device),
            drawing,
            fits,
            unavailable,
        )
    }

    /// [`PoolSolver::create`] where CUDA is `unavailable` for that reason (`None`: a driver and
    /// a GPU are found).
    fn create_where(
        scene: &mut PoolScene,
        cuda_nodes: Option<usize>,
        (backend, device): (Backend, usize),
        (drawn, interop): (bool, Option<bool>),
        fits: &dyn Fn(Solver, &PoolScene) -> Result<()>,
        unavailable: Option<String>,
    ) -> Result<(PoolSolver, String)> {
        let chosen = backend.choose(unavailable)?;
        let land = |scene: &PoolScene| {
            let scene = scene.clone();
            move |x: f32, z: f32| scene.land(x, z)
        };
        if let Chosen::Cpu(note) = chosen {
            fits(Solver::Cpu, scene)?;
            return Ok((PoolSolver::cpu(&scene.params, land(scene)), note));
        }
        let cpu_params = scene.params;
        if let Some(nodes) = cuda_nodes {
            scene.params.nodes = nodes;
            if let Err(e) = scene.params.validate() {
                bail!(
                    "scene {}: pool.cuda_nodes = {nodes}: {}: {}",
                    scene.name,
                    e.key,
                    e.message
                );
            }
        }
        // With auto, a grid the host cannot hold on CUDA falls back to the CPU's, as one the
        // GPU cannot hold does.
        if let Err(error) = fits(Solver::Cuda, scene) {
            if backend != Backend::Auto {
                return Err(error);
            }
            scene.params = cpu_params;
            fits(Solver::Cpu, scene)?;
            let note = format!("cpu (the CUDA solver's grid does not fit in host memory: {error})");
            return Ok((PoolSolver::cpu(&scene.params, land(scene)), note));
        }
        let needed = gpu_needed(
            None,
            drawn_bytes(scene.params.nodes, Solver::Cuda, drawn, interop),
            false,
        );
        match CudaPool::new_on(device, &scene.params, needed, land(scene)) {
            Ok(cuda) => {
                let on = if device == crate::cuda::DEFAULT_DEVICE {
                    String::new()
                } else {
                    format!("on device {device}, the GPU of the OpenGL context, ")
                };
                let note = format!("cuda ({on}kernels from {})", cuda.kernel_origin());
                Ok((PoolSolver::with(Backends::Cuda(Box::new(cuda))), note))
            }
            Err(error) if backend == Backend::Auto => {
                scene.params = cpu_params;
                fits(Solver::Cpu, scene)?;
                let note = format!("cpu (the CUDA solver could not start: {error})");
                Ok((PoolSolver::cpu(&scene.params, land(scene)), note))
            }
            Err(error) => Err(anyhow!("scene {}: {error}", scene.name)),
        }
    }

    fn with(backend: Backends) -> PoolSolver {
        PoolSolver {
            backend,
            pending: None,
            land_change: Some(LandChange::All),
        }
    }

    /// The CPU solver over a surface at rest.
    pub fn cpu(params: &PoolParams, land: impl Fn(f32, f32) -> bool) -> PoolSolver {
        PoolSolver::with(Backends::Cpu(Box::new(CpuPool::new(params, land))))
    }

    /// A surface at rest for `params` (a new node count, say) on the same backend, `drawn`
    /// when the renderer draws it, by interop or not as `interop` says (its GL objects count in
    /// the GPU check unless they are known to lie elsewhere). The CPU's old state
    /// goes before the new one is made (building it cannot fail), so the two are never held
    /// together. On CUDA the same node count reuses the buffers; another is checked against
    /// the GPU's free memory less what the old grid frees (`memory::gpu_needed`), and when it
    /// cannot start the old solver runs on as it was.
    pub fn rebuild(
        &mut self,
        params: &PoolParams,
        (drawn, interop): (bool, Option<bool>),
        land: impl Fn(f32, f32) -> bool,
    ) -> Result<()> {
        match &mut self.backend {
            Backends::Cpu(cpu) => {
                cpu.surface = Surface::default();
                **cpu = CpuPool::new(params, land);
            }
            Backends::Cuda(cuda) if cuda.nodes() == params.nodes => cuda.reset(params, land)?,
            Backends::Cuda(cuda) => {
                let old = drawn_bytes(cuda.nodes(), Solver::Cuda, drawn, interop);
                let new = drawn_bytes(params.nodes, Solver::Cuda, drawn, interop);
                let needed = gpu_needed(Some(old), new, false);
                let replacement = CudaPool::new_on(cuda.device(), params, needed, land)?;
                cuda.release_gl();
                **cuda = replacement;
            }
        }
        self.pending = None;
        self.land_change = Some(LandChange::All);
        Ok(())
    }

    /// The CPU solver, if it is the one running.
    pub fn as_cpu(&self) -> Option<&CpuPool> {
        match &self.backend {
            Backends::Cpu(cpu) => Some(cpu),
            Backends::Cuda(_) => None,
        }
    }

    /// Bytes the CUDA solver's buffers hold, if it is the one running.
    pub fn buffer_bytes(&self) -> Option<u64> {
        match &self.backend {
            Backends::Cpu(_) => None,
            Backends::Cuda(cuda) => Some(cuda.buffer_bytes()),
        }
    }

    /// The CUDA device the solver runs on, if it runs on one.
    pub fn cuda_device(&self) -> Option<usize> {
        match &self.backend {
            Backends::Cpu(_) => None,
            Backends::Cuda(cuda) => Some(cuda.device()),
        }
    }

    /// One frame of `params` with `drops` (`last_drop`: where the front is measured from, for
    /// the GPU's statistics); whether the heights and velocities are still finite. On CUDA the
    /// frame ends with its one synchronisation.
    pub fn step(
        &mut self,
        params: &PoolParams,
        drops: &[Drop],
        last_drop: Option<[f32; 2]>,
    ) -> Result<bool> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        Ok(match &mut self.backend {
            Backends::Cpu(cpu) => {
                cpu.step(params, drops);
                cpu.surface.non_finite_nodes() == 0
            }
            Backends::Cuda(cuda) => {
                cuda.step(params, drops)?;
                let (stats, finite) = cuda.end_frame(params, last_drop)?;
                finite && stats.max_height.is_finite()
            }
        })
    }

    /// Which nodes' flags changed since this was last called (`None`: none; a new solver
    /// starts with [`LandChange::All`]): the renderer is told only those nodes again.
    pub fn take_land_change(&mut self) -> Option<LandChange> {
        self.land_change.take()
    }

    /// The statistics of the state as it is (the statistics panel's): on the CPU from the
    /// surface, on CUDA the last frame's reductions, or the reductions run again when the state
    /// changed since (48 bytes copied back; the surface stays on the GPU).
    pub fn stats(&mut self, params: &PoolParams, last_drop: Option<[f32; 2]>) -> Result<PoolStats> {
        match &mut self.backend {
            Backends::Cpu(cpu) => Ok(PoolStats::of(&cpu.surface, params, last_drop)),
            Backends::Cuda(cuda) => Ok(cuda.current_stats(params, last_drop)?),
        }
    }

    /// A copy of the state (read back from the GPU) and its statistics (the GPU's of the last
    /// frame when they still describe it).
    pub fn state(
        &self,
        params: &PoolParams,
        last_drop: Option<[f32; 2]>,
    ) -> Result<(Surface, PoolStats)> {
        match &self.backend {
            Backends::Cpu(cpu) => {
                let stats = PoolStats::of(&cpu.surface, params, last_drop);
                Ok((cpu.surface.clone(), stats))
            }
            Backends::Cuda(cuda) => {
                let surface = cuda.read_back()?;
                let stats = cuda
                    .last_stats()
                    .unwrap_or_else(|| PoolStats::of(&surface, params, last_drop));
                Ok((surface, stats))
            }
        }
    }

    /// Nodes per side and spacing, m.
    pub fn grid(&self) -> (usize, f32) {
        match &self.backend {
            Backends::Cpu(cpu) => (cpu.surface.n, cpu.surface.h),
            Backends::Cuda(cuda) => (cuda.nodes(), cuda.spacing()),
        }
    }

    /// Every node's flags.
    pub fn flags(&self) -> &[u8] {
        match &self.backend {
            Backends::Cpu(cpu) => &cpu.surface.flags,
            Backends::Cuda(cuda) => cuda.flags(),
        }
    }

    /// Recomputes the flags for `params` and `land` (surface.rs `set_flags`).
    pub fn set_flags(&mut self, params: &PoolParams, land: impl Fn(f32, f32) -> bool) {
        self.land_change = Some(LandChange::All);
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.surface.set_flags(params, land),
            Backends::Cuda(cuda) => cuda.set_flags(params, land),
        }
    }

    /// Fixes or frees node (i, j) (surface.rs `set_island_node`); a node that already was
    /// is not a change.
    pub fn set_island_node(&mut self, params: &PoolParams, i: usize, j: usize, land: bool) {
        let k = j * self.grid().0 + i;
        let before = self.flags()[k];
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.surface.set_island_node(params, i, j, land),
            Backends::Cuda(cuda) => cuda.set_island_node(params, i, j, land),
        }
        if self.flags()[k] != before {
            self.land_change = Some(LandChange::and_node(self.land_change, i, j));
        }
    }

    /// Every node at rest, flags kept. On CUDA a failure is reported by the next step.
    pub fn clear(&mut self) {
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.surface.clear(),
            Backends::Cuda(cuda) => {
                if let Err(error) = cuda.clear() {
                    self.pending = Some(anyhow!("clearing the pool on the GPU: {error}"));
                }
            }
        }
    }

    /// Seconds per stage since the last reset ([`PoolStage::ALL`] order; GPU time on CUDA).
    pub fn stage_seconds(&self) -> Vec<f64> {
        match &self.backend {
            Backends::Cpu(cpu) => cpu.stage_seconds(),
            Backends::Cuda(cuda) => cuda.stage_seconds.to_vec(),
        }
    }

    /// Zeroes the stage times.
    pub fn reset_stage_times(&mut self) {
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.reset_stage_times(),
            Backends::Cuda(cuda) => cuda.stage_seconds = [0.0; PoolStage::ALL.len()],
        }
    }

    /// Turns stage timing (CPU clocks, CUDA events) on or off.
    pub fn set_stage_timing(&mut self, enabled: bool) {
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.set_stage_timing(enabled),
            Backends::Cuda(cuda) => cuda.set_stage_timing(enabled),
        }
    }

    /// Writes the renderer's surface texels into the GL texture `texture` through CUDA–GL
    /// interop: `Ok(true)` when done, `Ok(false)` on the CPU or where interop is unavailable
    /// (upload [`PoolSolver::texels`] instead).
    pub fn write_texture(&mut self, texture: u32) -> Result<bool> {
        match &mut self.backend {
            Backends::Cpu(_) => Ok(false),
            Backends::Cuda(cuda) => Ok(cuda.write_texture(texture)?),
        }
    }

    /// The renderer's texels in host memory (surface.rs `texels`; copied back on CUDA).
    pub fn texels(&self, out: &mut Vec<[f32; 4]>) -> Result<()> {
        match &self.backend {
            Backends::Cpu(cpu) => cpu.surface.texels(out),
            Backends::Cuda(cuda) => cuda.texels(out)?,
        }
        Ok(())
    }

    /// Lets go of the GL texture (CUDA), with the GL context current.
    pub fn release_gl(&mut self) {
        if let Backends::Cuda(cuda) = &mut self.backend {
            cuda.release_gl();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Fits = dyn Fn(Solver, &PoolScene) -> Result<()>;

    /// Opens `source`'s pool with `backend` on CUDA device `device`, drawn or not, the memory
    /// checks `fits`: the solver's grid, the scene's grid after it, the note.
    fn open_with(
        source: &crate::scene::Source,
        backend: Backend,
        device: usize,
        drawn: bool,
        fits: &Fits,
    ) -> Result<(usize, usize, String)> {
        let mut scene = PoolScene::from_source(source).expect("the scene");
        let cuda_nodes = scene.cuda_nodes;
        let made = PoolSolver::create_where(
            &mut scene,
            cuda_nodes,
            (backend, device),
            (drawn, None),
            fits,
            None,
        );
        made.map(|(solver, note)| (solver.grid().0, scene.params.nodes, note))
    }

    /// With `--backend auto` and CUDA found, a CUDA grid (`pool.cuda_nodes`) the host cannot
    /// hold falls back to the CPU's (`pool.nodes`) with the reason in the note, as one the GPU
    /// cannot hold does; it ended with the host's error, although the CPU's grid fits.
    /// `--backend cuda` still ends with it.
    #[test]
    fn auto_falls_back_to_the_cpu_when_the_host_cannot_hold_the_cuda_grid() {
        let text = "kind = \"pool\"\n[pool]\nnodes = 64\ncuda_nodes = 8192\n";
        let source = crate::scene::Source::parse(text, "t", "t.toml").expect("a kind");
        let fits = |solver: Solver, scene: &PoolScene| match solver {
            Solver::Cuda => bail!("{}² nodes need more host memory", scene.params.nodes),
            Solver::Cpu => Ok(()),
        };
        let open = |backend| open_with(&source, backend, 0, true, &fits);
        let (nodes, scene_nodes, note) = open(Backend::Auto).expect("the CPU's grid");
        assert_eq!((nodes, scene_nodes), (64, 64));
        assert!(
            note.starts_with("cpu (") && note.contains("8192² nodes need more host memory"),
            "{note}"
        );
        let error = open(Backend::Cuda).expect_err("refused on CUDA");
        assert!(error.to_string().contains("8192²"), "{error}");
    }

    /// With `--backend auto` and CUDA found, a CUDA solver that fails to start (device 99,
    /// which no machine has; here, with no driver, the driver's loading fails first) falls back
    /// to the CPU with the CPU's grid (`pool.nodes`, not `pool.cuda_nodes`) and the start's
    /// error in the note; `--backend cuda` ends with that error, naming the scene.
    #[test]
    fn auto_falls_back_to_the_cpu_when_the_cuda_solver_cannot_start() {
        let text = "kind = \"pool\"\n[pool]\nnodes = 64\ncuda_nodes = 96\n";
        let source = crate::scene::Source::parse(text, "t", "t.toml").expect("a kind");
        let fits = |_: Solver, _: &PoolScene| Ok(());
        let open = |backend| open_with(&source, backend, 99, false, &fits);
        let (nodes, scene_nodes, note) = open(Backend::Auto).expect("the CPU's grid");
        assert_eq!((nodes, scene_nodes), (64, 64), "{note}");
        assert!(
            note.starts_with("cpu (the CUDA solver could not start: "),
            "{note}"
        );
        let error = open(Backend::Cuda)
            .expect_err("CUDA cannot start")
            .to_string();
        assert!(error.starts_with("scene t"), "{error}");
    }

    /// A NaN passes through the largest |height| (f32::max skips it), so a surface that went
    /// NaN kept running on the CPU while the GPU's count of non-finite nodes stopped it.
    #[test]
    fn a_nan_node_stops_the_cpu_pool_as_the_gpu_count_does() {
        let params = PoolParams {
            nodes: 32,
            ..PoolParams::default()
        };
        for (height, velocity) in [(f32::NAN, 0.0), (0.0, f32::INFINITY)] {
            let mut solver = PoolSolver::cpu(&params, |_, _| false);
            assert!(solver.step(&params, &[], None).expect("a CPU step"));
            let Backends::Cpu(cpu) = &mut solver.backend else {
                panic!("the CPU backend")
            };
            let k = 5 * params.nodes + 7;
            (cpu.surface.height[k], cpu.surface.velocity[k]) = (height, velocity);
            assert_eq!(cpu.surface.non_finite_nodes(), 1);
            let finite = solver.step(&params, &[], None).expect("a CPU step");
            assert!(
                !finite,
                "height {height}, velocity {velocity}: still called finite"
            );
        }
    }
}
