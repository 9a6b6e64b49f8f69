//! The solver behind `InkSim`: the CPU's (`cpu.rs`) or the CUDA one (`cuda/`), chosen by
//! `--backend` as for PBF (auto: CUDA when a driver and GPU are found), with the parameters the
//! panel edits in one place for both.

use super::cpu::CpuInk;
use super::cuda::CudaInk;
use super::fields::{Field, Flow, FlowCopy, Ink};
use super::params::InkParams;
use super::scene::{Background, InkScene};
use super::{InkStage, SolveReport, Stamp};
use crate::sims::{Backend, Chosen};
use anyhow::{anyhow, Result};

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
        let chosen = backend.choose(crate::cuda::unavailable())?;
        let solid = |scene: &InkScene| {
            let scene = scene.clone();
            move |x: f32, y: f32| scene.solid(x, y)
        };
        if let Chosen::Cpu(note) = chosen {
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
    pub fn as_cuda(&self) -> Option<&CudaInk> {
        match &self.backend {
            Backends::Cpu(_) => None,
            Backends::Cuda(cuda) => Some(cuda),
        }
    }

    /// The CUDA solver, if it is the one running, to change.
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
                let (energy, fastest) =
                    super::picture::kinetic_energy_and_max_speed(cpu.flow.view());
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
    /// ([`with_discs_rows`]: their cells as they are, each run of rows apart from the others
    /// handed over on its own), so `rows` must hold every cell that changed (more rows are
    /// allowed): a disc that moves or stopped moving has its faces set on both backends
    /// whichever rows are handed over. On CUDA a failure is reported by the next step.
    pub fn set_walls(
        &mut self,
        rows: std::ops::Range<usize>,
        cells: &[bool],
        moving: Vec<super::boundary::MovingDisc>,
    ) {
        let pieces = with_discs_rows(&self.flow(), rows, cells, &moving);
        let pieces: Vec<(std::ops::Range<usize>, &[bool])> = (pieces.iter())
            .map(|(rows, own)| (rows.clone(), own.as_deref().unwrap_or(cells)))
            .collect();
        match &mut self.backend {
            Backends::Cpu(cpu) => cpu.set_walls_rows(&pieces, moving),
            Backends::Cuda(cuda) => {
                if let Err(error) = cuda.set_walls_rows(&pieces, moving) {
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
    /// back from the GPU into CUDA's host mirror, which is lent (its masks not copied).
    pub fn with_state<R>(&self, f: impl FnOnce(&Flow, &Ink, &Field, &Field) -> R) -> Result<R> {
        match &self.backend {
            Backends::Cpu(cpu) => Ok(f(&cpu.flow, &cpu.ink, &cpu.curl, &cpu.divergence)),
            Backends::Cuda(cuda) => Ok(cuda.with_read_back(f)?),
        }
    }

    /// The flow and the ink, owned (a frame's copy): the flow's values and cells
    /// ([`FlowCopy`]), not its masks, stencil or fixed velocities (≈ 50 MB at 2048²), which a
    /// frame never reads.
    pub fn state(&self) -> Result<(FlowCopy, Ink)> {
        match &self.backend {
            Backends::Cpu(cpu) => Ok((FlowCopy::of(&cpu.flow), cpu.ink.clone())),
            Backends::Cuda(cuda) => Ok(cuda.read_back_cells()?),
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

/// The rows `rows` and those of every disc moving before (`flow.moving`) or now (`moving`),
/// as runs of rows in order, each more than two rows from the next (overlapping or near ones
/// joined: the CUDA plan sets a row either side of each), with their cells: `None` for the
/// run that is `rows` alone (`cells` are its cells), else the cells of `rows` and, in the
/// other rows, the cells as `flow` has them. A brush far from a moving disc hands over its own
/// rows and the disc's, not every row between.
pub(super) fn with_discs_rows(
    flow: &Flow,
    rows: std::ops::Range<usize>,
    cells: &[bool],
    moving: &[super::boundary::MovingDisc],
) -> Vec<(std::ops::Range<usize>, Option<Vec<bool>>)> {
    let (nx, ny) = (flow.nx, flow.ny);
    assert!(rows.end <= ny, "rows {rows:?} of {ny}");
    assert_eq!(cells.len(), rows.len() * nx, "the cells of rows {rows:?}");
    let mut all: Vec<std::ops::Range<usize>> = (flow.moving.iter().chain(moving))
        .map(|d| d.rows(flow.dx, ny))
        .chain([rows.clone()])
        .filter(|r| !r.is_empty())
        .collect();
    all.sort_by_key(|r| r.start);
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for r in all {
        match runs.last_mut() {
            Some(run) if r.start <= run.end + 2 => run.end = run.end.max(r.end),
            _ => runs.push(r),
        }
    }
    let solid = flow.solid();
    (runs.into_iter())
        .map(|run| {
            if run == rows {
                return (run, None);
            }
            let mut own = solid[run.start * nx..run.end * nx].to_vec();
            if run.start <= rows.start && rows.end <= run.end && !rows.is_empty() {
                let at = (rows.start - run.start) * nx;
                own[at..at + cells.len()].copy_from_slice(cells);
            }
            (run, Some(own))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::with_discs_rows;
    use crate::sims::ink::boundary::{Boundary, MovingDisc};
    use crate::sims::ink::fields::Flow;

    /// A brush far below a moving disc: its rows and the disc's are handed over as two runs,
    /// each with its cells (the brush's as painted, the disc's as they are), not every row
    /// between; a brush that reaches within two rows of the disc joins its run.
    #[test]
    fn a_brush_far_from_a_moving_disc_hands_over_two_runs_of_rows() {
        let (nx, ny) = (32, 200);
        let mut flow = Flow::new(nx, ny, 0.01, Boundary::default());
        let disc = MovingDisc {
            center: [0.16, 1.2],
            radius: 0.1,
            velocity: [0.0, 1.0],
        };
        let mut solid = vec![false; nx * ny];
        for (k, s) in solid.iter_mut().enumerate() {
            let (x, y) = flow.p.position(k % nx, k / nx);
            *s = (x - 0.16).powi(2) + (y - 1.2).powi(2) <= 0.01;
        }
        flow.set_solid(solid.clone());
        flow.moving = vec![disc];
        let disc_rows = disc.rows(flow.dx, ny);
        assert_eq!(disc_rows, 109..131, "the disc's rows");
        let brush = 10..14;
        let painted = vec![true; brush.len() * nx];
        let sent = with_discs_rows(&flow, brush.clone(), &painted, &[disc]);
        let ranges: Vec<_> = sent.iter().map(|(r, _)| r.clone()).collect();
        assert_eq!(
            ranges,
            vec![brush.clone(), disc_rows.clone()],
            "runs handed over"
        );
        assert!(sent[0].1.is_none(), "the brush's run: its own cells");
        assert_eq!(
            sent[1].1.as_deref(),
            Some(&solid[disc_rows.start * nx..disc_rows.end * nx]),
            "the disc's run: its cells as they are"
        );
        // Two rows below the disc's: one run, the brush's cells in it.
        let near = disc_rows.end + 2..disc_rows.end + 5;
        let painted = vec![true; near.len() * nx];
        let sent = with_discs_rows(&flow, near.clone(), &painted, &[disc]);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, disc_rows.start..near.end);
        let cells = sent[0].1.as_deref().unwrap();
        let at = (near.start - disc_rows.start) * nx;
        assert!(cells[at..].iter().all(|&s| s), "the brush's cells");
        assert_eq!(
            cells[..disc_rows.len() * nx],
            solid[disc_rows.start * nx..disc_rows.end * nx]
        );
    }
}
