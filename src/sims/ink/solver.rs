//! The solver behind `InkSim`: the CPU's (`cpu.rs`) or the CUDA one (`cuda/`), chosen by
//! `--backend` as for PBF (auto: CUDA when a driver and GPU are found), with the parameters the
//! panel edits in one place for both.

use super::cpu::CpuInk;
use super::cuda::{CudaInk, Fields};
use super::fields::{Field, Flow, Ink};
use super::params::InkParams;
use super::scene::{Background, InkScene};
use super::{InkStage, SolveReport, Stamp};
use crate::sims::Backend;
use anyhow::{anyhow, bail, Result};

/// The grid a scene without `grid.cells` gets on CUDA: the original's 2048² (its 20 Jacobi
/// sweeps are the parameters' default). The CPU default stays 256².
pub const CUDA_DEFAULT_CELLS: usize = 2048;

enum Backends {
    Cpu(Box<CpuInk>),
    Cuda(Box<CudaInk>),
}

/// The flow [`InkSolver::flow`] lends: the CPU's, or CUDA's host mirror behind its guard (a
/// read-back while it is alive brings a copy of the mirror up to date, not the mirror).
pub enum FlowRef<'a> {
    /// The CPU solver's flow.
    Cpu(&'a Flow),
    /// CUDA's host mirror.
    Cuda(std::cell::Ref<'a, Flow>),
}

impl std::ops::Deref for FlowRef<'_> {
    type Target = Flow;

    fn deref(&self) -> &Flow {
        match self {
            FlowRef::Cpu(flow) => flow,
            FlowRef::Cuda(flow) => flow,
        }
    }
}

/// Ink's solver on either backend.
pub struct InkSolver {
    /// Parameters in force: edited live by the panel, handed to the backend before each step
    /// (the grid's size is fixed).
    pub params: InkParams,
    backend: Backends,
    /// An error of a call that cannot return one (clearing on the GPU), reported by the next
    /// step.
    pending: Option<anyhow::Error>,
}

impl InkSolver {
    /// The solver `backend` asks for on CUDA device `device`, for `scene` (on CUDA with the
    /// grid `cuda_cells` when given: the scene's `grid.cuda_cells`, or [`CUDA_DEFAULT_CELLS`]²
    /// for a scene without a grid, see [`InkSolver::cuda_cells`]), and a sentence saying which
    /// backend runs and why.
    pub fn create(
        scene: &mut InkScene,
        cuda_cells: Option<[usize; 2]>,
        backend: Backend,
        device: usize,
    ) -> Result<(InkSolver, String)> {
        let cuda = match (backend, crate::cuda::unavailable()) {
            (Backend::Cpu, _) => Err("cpu".to_string()),
            (Backend::Cuda, Some(reason)) => bail!(
                "--backend cuda cannot run on this machine: {reason}; use --backend cpu or \
                 --backend auto"
            ),
            (Backend::Auto, Some(reason)) => Err(format!("cpu ({reason})")),
            (_, None) => Ok(()),
        };
        let solid = |scene: &InkScene| {
            let scene = scene.clone();
            move |x: f32, y: f32| scene.solid(x, y)
        };
        if let Err(note) = cuda {
            return Ok((InkSolver::cpu(scene.params.clone(), &solid(scene)), note));
        }
        let cpu_params = scene.params.clone();
        if let Some([x, y]) = cuda_cells {
            (scene.params.cells_x, scene.params.cells_y) = (x, y);
        }
        match CudaInk::new_on(device, scene.params.clone(), &solid(scene)) {
            Ok(cuda) => {
                let on = if device == crate::cuda::DEFAULT_DEVICE {
                    String::new()
                } else {
                    format!("on device {device}, the GPU of the OpenGL context, ")
                };
                let note = format!("cuda ({on}kernels from {})", cuda.kernel_origin());
                let solver = InkSolver {
                    params: scene.params.clone(),
                    backend: Backends::Cuda(Box::new(cuda)),
                    pending: None,
                };
                Ok((solver, note))
            }
            Err(error) if backend == Backend::Auto => {
                scene.params = cpu_params;
                let note = format!("cpu (the CUDA solver could not start: {error})");
                Ok((InkSolver::cpu(scene.params.clone(), &solid(scene)), note))
            }
            Err(error) => Err(anyhow!("scene {}: {error}", scene.name)),
        }
    }

    /// The grid a scene runs with on CUDA, when it differs from `grid.cells`: none when the
    /// cells were rescaled (`bench --particles`, `rescaled`), else the scene's
    /// `grid.cuda_cells`, else [`CUDA_DEFAULT_CELLS`]² when the file sets no `grid.cells`.
    pub fn cuda_cells(scene: &InkScene, rescaled: bool, cells_set: bool) -> Option<[usize; 2]> {
        if rescaled {
            None
        } else if scene.cuda_cells.is_some() {
            scene.cuda_cells
        } else if cells_set {
            None
        } else {
            Some([CUDA_DEFAULT_CELLS; 2])
        }
    }

    /// The CPU solver over a fluid at rest.
    pub fn cpu(params: InkParams, solid: &dyn Fn(f32, f32) -> bool) -> InkSolver {
        InkSolver {
            backend: Backends::Cpu(Box::new(CpuInk::new(params.clone(), solid))),
            params,
            pending: None,
        }
    }

    /// The CPU solver, if it is the one running.
    pub fn as_cpu(&self) -> Option<&CpuInk> {
        match &self.backend {
            Backends::Cpu(cpu) => Some(cpu),
            Backends::Cuda(_) => None,
        }
    }

    /// The CUDA solver, if it is the one running.
    pub fn as_cuda_mut(&mut self) -> Option<&mut CudaInk> {
        match &mut self.backend {
            Backends::Cpu(_) => None,
            Backends::Cuda(cuda) => Some(cuda),
        }
    }

    /// One step of `dt` with `stamps`; `last`: the frame's last (the CUDA solver reduces the
    /// report's figures then only).
    pub fn step(&mut self, dt: f32, stamps: &[Stamp], last: bool) -> Result<()> {
        if let Some(error) = self.pending.take() {
            return Err(error);
        }
        match &mut self.backend {
            Backends::Cpu(cpu) => {
                cpu.params.clone_from(&self.params);
                cpu.step(dt, stamps);
            }
            Backends::Cuda(cuda) => {
                cuda.params.clone_from(&self.params);
                cuda.step(dt, stamps, last)?;
            }
        }
        Ok(())
    }

    /// Ends a frame (the CUDA solver's one synchronisation); whether the velocity is still
    /// finite everywhere.
    pub fn end_frame(&mut self) -> Result<bool> {
        Ok(match &mut self.backend {
            Backends::Cpu(cpu) => {
                let (u, v) = (&cpu.flow.u.data, &cpu.flow.v.data);
                u.iter().chain(v).all(|x| x.is_finite())
            }
            Backends::Cuda(cuda) => {
                cuda.end_frame()?;
                cuda.totals.non_finite == 0
            }
        })
    }

    /// The amount of ink (m², `Ink::total`), the kinetic energy and the largest speed at the
    /// cell centres: on the CPU from the fields, on CUDA the GPU's reductions at the end of the
    /// last frame (nothing read back).
    pub fn totals(&self) -> (f64, f64, f64) {
        match &self.backend {
            Backends::Cpu(cpu) => {
                let (energy, fastest) = super::picture::kinetic_energy_and_max_speed(&cpu.flow);
                (cpu.ink.total(), energy, fastest)
            }
            Backends::Cuda(cuda) => {
                let t = cuda.totals;
                (t.ink, t.kinetic_energy, t.max_speed)
            }
        }
    }

    /// What the last step's projection did.
    pub fn report(&self) -> SolveReport {
        match &self.backend {
            Backends::Cpu(cpu) => cpu.report,
            Backends::Cuda(cuda) => cuda.report,
        }
    }

    /// Seconds per stage since the last reset ([`InkStage::ALL`] order; GPU time on CUDA).
    pub fn stage_seconds(&self) -> [f64; InkStage::ALL.len()] {
        match &self.backend {
            Backends::Cpu(cpu) => cpu.stage_seconds,
            Backends::Cuda(cuda) => cuda.stage_seconds,
        }
    }

    /// Zeroes the stage times.
    pub fn reset_stage_times(&mut self) {
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.stage_seconds = [0.0; InkStage::ALL.len()],
            Backends::Cuda(cuda) => cuda.stage_seconds = [0.0; InkStage::ALL.len()],
        }
    }

    /// Turns the CUDA solver's stage events on or off (the CPU always times its stages).
    pub fn set_stage_timing(&mut self, enabled: bool) {
        if let Backends::Cuda(cuda) = &mut self.backend {
            cuda.set_stage_timing(enabled);
        }
    }

    /// Back to a fluid at rest with no ink on the grid of `params` (a new one when it changed),
    /// obstacles where `solid(x, y)`, or `keep` when it has the grid's size (obstacles painted
    /// or dragged stay).
    pub fn clear(&mut self, solid: &dyn Fn(f32, f32) -> bool, keep: Option<Vec<bool>>) {
        match &mut self.backend {
            Backends::Cpu(cpu) => **cpu = CpuInk::new(self.params.clone(), solid),
            Backends::Cuda(cuda) => {
                let p = &self.params;
                let grid = |q: &InkParams| (q.cells_x, q.cells_y, q.ink_scale, q.width.to_bits());
                let result = if grid(p) == grid(&cuda.params) {
                    cuda.params.clone_from(p);
                    cuda.clear(solid)
                } else {
                    CudaInk::new_on(cuda.device(), p.clone(), solid).map(|new| **cuda = new)
                };
                if let Err(error) = result {
                    self.pending = Some(anyhow!("clearing the ink on the GPU: {error}"));
                }
            }
        }
        if let Some(mask) = keep.filter(|mask| mask.len() == self.flow().solid().len()) {
            self.set_solid(mask);
        }
    }

    /// Makes the cells where `solid` solid (obstacles painted or moved). On CUDA a failure is
    /// reported by the next step.
    pub fn set_solid(&mut self, solid: Vec<bool>) {
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.set_solid(solid),
            Backends::Cuda(cuda) => {
                if let Err(error) = cuda.set_solid(solid) {
                    self.pending = Some(anyhow!("changing the obstacles on the GPU: {error}"));
                }
            }
        }
    }

    /// Makes the cells of the rows `rows` solid where `cells` (those rows' cells) and the discs
    /// `moving` move: their cells' closed faces carry their velocity (a moving wall). Only those
    /// rows are set again, and the rows of every disc moving before or now
    /// ([`with_discs_rows`]: their cells as they are), so `rows` must hold every cell that
    /// changed and nothing more: a disc that moves or stopped moving has its faces set on both
    /// backends whichever rows are handed over. On CUDA a failure is reported by the next step.
    pub fn set_walls(
        &mut self,
        rows: std::ops::Range<usize>,
        cells: &[bool],
        moving: Vec<super::boundary::MovingDisc>,
    ) {
        let (rows, wider) = with_discs_rows(&self.flow(), rows, cells, &moving);
        let cells = wider.as_deref().unwrap_or(cells);
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.set_walls(rows, cells, moving),
            Backends::Cuda(cuda) => {
                if let Err(error) = cuda.set_walls(rows, cells, moving) {
                    self.pending = Some(anyhow!("moving the obstacles on the GPU: {error}"));
                }
            }
        }
    }

    /// Makes `boundary` the box's sides at once: the masks and the pressure stencil follow.
    pub fn set_boundary(&mut self, boundary: super::Boundary) {
        self.params.boundary = boundary;
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.set_boundary(boundary),
            Backends::Cuda(cuda) => {
                if let Err(error) = cuda.set_boundary(boundary) {
                    self.pending = Some(anyhow!("changing the box's sides on the GPU: {error}"));
                }
            }
        }
    }

    /// The flow's shape and solid cells (current on both backends). Its values (on CUDA not
    /// kept: empty) and on CUDA its open faces, stencil and fixed velocities (brought up to
    /// date only when read back: `CudaInk::mirror`) are current on the CPU only: read them
    /// with [`InkSolver::with_state`]. Hold the guard briefly: a read-back while it is alive
    /// copies the mirror's stale rows instead of bringing them up to date.
    pub fn flow(&self) -> FlowRef<'_> {
        match &self.backend {
            Backends::Cpu(cpu) => FlowRef::Cpu(&cpu.flow),
            Backends::Cuda(cuda) => FlowRef::Cuda(cuda.mirror()),
        }
    }

    /// Which cells are solid.
    pub fn solid_mask(&self) -> Vec<bool> {
        self.flow().solid().to_vec()
    }

    /// Calls `f` with the flow, the ink, the curl and the divergence: in place on the CPU, read
    /// back from the GPU.
    pub fn with_state<R>(&self, f: impl FnOnce(&Flow, &Ink, &Field, &Field) -> R) -> Result<R> {
        match &self.backend {
            Backends::Cpu(cpu) => Ok(f(&cpu.flow, &cpu.ink, &cpu.curl, &cpu.divergence)),
            Backends::Cuda(cuda) => {
                let Fields {
                    flow,
                    ink,
                    curl,
                    divergence,
                } = cuda.read_back()?;
                Ok(f(&flow, &ink, &curl, &divergence))
            }
        }
    }

    /// The flow and the ink, owned (a frame's copy).
    pub fn state(&self) -> Result<(Flow, Ink)> {
        match &self.backend {
            Backends::Cpu(cpu) => Ok((cpu.flow.clone(), cpu.ink.clone())),
            Backends::Cuda(cuda) => {
                let fields = cuda.read_back()?;
                Ok((fields.flow, fields.ink))
            }
        }
    }

    /// The CUDA device the solver runs on, if it runs on one.
    pub fn cuda_device(&self) -> Option<usize> {
        match &self.backend {
            Backends::Cpu(_) => None,
            Backends::Cuda(cuda) => Some(cuda.device()),
        }
    }

    /// Writes `view` into the GL texture `texture` through CUDA–GL interop: `Ok(true)` when
    /// done, `Ok(false)` on the CPU or where interop is unavailable (draw through the host).
    pub fn write_picture(
        &mut self,
        texture: u32,
        view: &str,
        background: Background,
    ) -> Result<bool> {
        match &mut self.backend {
            Backends::Cpu(_) => Ok(false),
            Backends::Cuda(cuda) => Ok(cuda.write_picture(texture, view, background)?),
        }
    }

    /// The size of `view`'s picture, texels.
    pub fn picture_size(&self, view: &str) -> Option<(usize, usize)> {
        match &self.backend {
            Backends::Cpu(_) => None,
            Backends::Cuda(cuda) => Some(cuda.picture_size(view)),
        }
    }

    /// Lets go of the GL texture (CUDA), with the GL context current.
    pub fn release_gl(&mut self) {
        if let Backends::Cuda(cuda) = &mut self.backend {
            cuda.release_gl();
        }
    }
}

/// The rows `rows` widened to those of every disc moving before (`flow.moving`) or now
/// (`moving`), with the cells of the rows added as `flow` has them (`None`: `rows` held them
/// all already, `cells` are the rows' cells).
fn with_discs_rows(
    flow: &Flow,
    rows: std::ops::Range<usize>,
    cells: &[bool],
    moving: &[super::boundary::MovingDisc],
) -> (std::ops::Range<usize>, Option<Vec<bool>>) {
    let (nx, ny) = (flow.nx, flow.ny);
    let wide = flow
        .moving
        .iter()
        .chain(moving)
        .fold(rows.clone(), |wide, d| {
            let covered = super::boundary::disc_rows(d.center[1], d.radius.abs(), flow.dx, ny);
            match (wide.is_empty(), covered.is_empty()) {
                (_, true) => wide,
                (true, _) => covered,
                _ => wide.start.min(covered.start)..wide.end.max(covered.end),
            }
        });
    if wide == rows {
        return (rows, None);
    }
    let solid = flow.solid();
    let mut all = Vec::with_capacity(wide.len() * nx);
    if rows.is_empty() {
        all.extend_from_slice(&solid[wide.start * nx..wide.end * nx]);
    } else {
        all.extend_from_slice(&solid[wide.start * nx..rows.start * nx]);
        all.extend_from_slice(cells);
        all.extend_from_slice(&solid[rows.end * nx..wide.end * nx]);
    }
    (wide, Some(all))
}
