//! The backend behind `ParticlesSim`: the CPU's stages (`sim.rs`) or the CUDA solver
//! (`cuda/`), chosen by `--backend` as for the other kinds (auto: CUDA when a driver and GPU
//! are found). On CUDA the host's [`State`] is a mirror: edits made on the host (panel, pins, a
//! restart) are uploaded before the next step, and the state is read back only when something
//! on the host needs it (a frame for export), never per step. The grabber moves only the node
//! it holds (its bytes sent alone) and reads only the nodes' positions, at the press.

use super::cuda::kernels::{basin_step, BodyStep, FountainStep};
use super::cuda::{BodyFrame, CudaParticles, FrameEnd, GlBuffers};
use super::frame::NonFinite;
use super::grab::NodeEdit;
use super::sim::{ParticlesSim, State};
use crate::sims::pool::drops::Stencils;
use crate::sims::{Backend, Chosen};
use anyhow::{anyhow, Result};
use glam::Vec3;

/// The CUDA solver and which side holds the newer state.
pub struct Device {
    /// The solver.
    pub solver: CudaParticles,
    /// The CUDA device.
    pub ordinal: usize,
    /// The GPU has stepped since the host's mirror was read back.
    pub device_newer: bool,
    /// The host's mirror was edited since it was uploaded.
    pub upload_needed: bool,
}

/// A CUDA solver for `state` on `device`.
fn create(device: usize, state: &State) -> Result<CudaParticles, crate::cuda::CudaError> {
    match state {
        State::Fountain(f) => CudaParticles::fountain(device, f),
        State::Body(b) => CudaParticles::body(device, b),
    }
}

impl ParticlesSim {
    /// Runs on what `backend` asks for on `device`; the sentence saying which and why is
    /// [`crate::sims::Sim::backend`]'s.
    pub fn choose_backend(&mut self, backend: Backend, device: usize) -> Result<()> {
        self.cuda = None;
        if let Chosen::Cpu(note) = backend.choose(crate::cuda::unavailable())? {
            self.backend_note = note;
            return Ok(());
        }
        match create(device, &self.state) {
            Ok(solver) => {
                self.backend_note = format!("cuda (kernels from {})", solver.kernel_origin());
                self.cuda = Some(Device {
                    solver,
                    ordinal: device,
                    device_newer: false,
                    upload_needed: false,
                });
                Ok(())
            }
            Err(error) if backend == Backend::Auto => {
                self.backend_note = format!("cpu (the CUDA solver could not start: {error})");
                Ok(())
            }
            Err(error) => Err(anyhow!("scene {}: {error}", self.scene.name)),
        }
    }

    /// After a restart (a new state of possibly another shape): a new CUDA solver for it.
    pub(super) fn restart_device(&mut self) -> Result<()> {
        if let Some(device) = self.cuda.take() {
            let ordinal = device.ordinal;
            drop(device);
            self.choose_backend(Backend::Cuda, ordinal)?;
        }
        Ok(())
    }

    /// Lowers the fewest particles a fountain graph's launches cover (CUDA only; a test hook:
    /// `CudaParticles::set_reach_least`).
    #[doc(hidden)]
    pub fn set_graph_reach_least(&mut self, least: usize) {
        if let Some(device) = &mut self.cuda {
            device.solver.set_reach_least(least);
        }
    }

    /// Reads the GPU's state back into the host's mirror, when it is newer.
    pub fn pull(&mut self) -> Result<()> {
        let Some(device) = &mut self.cuda else {
            return Ok(());
        };
        if device.device_newer {
            match &mut self.state {
                State::Fountain(f) => device.solver.download_fountain(f, &mut self.order)?,
                State::Body(b) => device.solver.download_body(b)?,
            }
            device.device_newer = false;
        }
        Ok(())
    }

    /// A body's nodes' positions read from the GPU when it has stepped since the host's
    /// mirror was read back (a press picks from them: 12 bytes a node, the rest of the body
    /// stays on the GPU and the mirror stays marked older); `None` where the mirror's are
    /// current (the CPU, a GPU that has not stepped since) or for a fountain.
    pub(super) fn node_positions(&self) -> Result<Option<Vec<Vec3>>> {
        match (&self.cuda, &self.state) {
            (Some(device), State::Body(_)) if device.device_newer => {
                Ok(Some(device.solver.download_positions()?))
            }
            _ => Ok(None),
        }
    }

    /// Makes the grabber's `edit` of the node held in the host's mirror and, on CUDA, on the
    /// GPU: that node's bytes alone (`upload_node`), nothing read back. The mirror's other
    /// nodes are untouched: where the GPU is newer they stay marked older (the next read
    /// brings the node's place back as set here; its pin lives on the host too). Where the
    /// GPU is newer, the bounds its last frame reduced (where the wind arrow stands) grow by
    /// the node's new place: exact while the body grows, a frame late where it shrinks.
    pub(super) fn edit_node(&mut self, edit: NodeEdit) -> Result<()> {
        let State::Body(body) = &mut self.state else {
            return Ok(());
        };
        edit.apply(body);
        if let Some(device) = &mut self.cuda {
            device.solver.upload_node(&edit)?;
            let totals = &mut device.solver.totals;
            if let (true, Some(place), Some([low, high])) =
                (device.device_newer, edit.place, totals.bounds)
            {
                totals.bounds = Some([low.min(place), high.max(place)]);
            }
        }
        Ok(())
    }

    /// Marks the host's mirror edited: uploaded before the next step (read back first).
    pub(super) fn edited(&mut self) -> Result<()> {
        self.pull()?;
        if let Some(device) = &mut self.cuda {
            device.upload_needed = true;
        }
        Ok(())
    }

    /// A copy of the state with the GPU's arrays (for frames: the mirror is not touched).
    pub(super) fn current_state(&self) -> Result<Option<State>> {
        let Some(device) = self.cuda.as_ref().filter(|d| d.device_newer) else {
            return Ok(None);
        };
        Ok(Some(match &self.state {
            State::Fountain(f) => {
                let mut f = f.clone();
                device.solver.download_fountain(&mut f, &mut Vec::new())?;
                State::Fountain(f)
            }
            State::Body(b) => {
                let mut b = b.clone();
                device.solver.download_body(&mut b)?;
                State::Body(b)
            }
        }))
    }

    /// `self_collide`'s state on the GPU at the last frame's end (kernels.rs `SC_*`: builds so
    /// far, the last build's candidates); `None` on the CPU or without self-collision.
    pub fn device_contacts(&self) -> Option<[u32; super::cuda::kernels::SC_STATE]> {
        self.cuda.as_ref()?.solver.totals.self_collide
    }

    /// Particles alive (fountain) or nodes, on whichever side runs.
    pub fn alive(&self) -> usize {
        match (&self.cuda, &self.state) {
            (Some(d), _) => d.solver.count(),
            (None, State::Fountain(f)) => f.len(),
            (None, State::Body(b)) => b.len(),
        }
    }

    /// Writes the particles' or nodes' positions, velocities, ages, drawing order and tags into the
    /// renderer's GL `buffers` straight from the GPU (CUDA–GL interop). `Ok(false)`: no CUDA
    /// solver runs, or a buffer cannot be shared with CUDA here — draw from the host's state
    /// ([`ParticlesSim::pull`] first). The GL context owning the buffers must be current.
    pub fn write_gl(&mut self, buffers: GlBuffers) -> Result<bool> {
        match &mut self.cuda {
            Some(device) => Ok(device.solver.write_gl(buffers)?),
            None => Ok(false),
        }
    }

    /// One step on the GPU (a frame of the fountain, or a body's substeps), after uploading
    /// the host's edits. Returns what its end-of-frame reductions found not finite.
    pub(super) fn step_device(&mut self) -> Result<NonFinite> {
        let needs_upload = self.cuda.as_ref().is_some_and(|d| d.upload_needed);
        if needs_upload {
            let device = self.cuda.as_mut().expect("a CUDA solver");
            match &self.state {
                State::Fountain(f) => device.solver.upload_fountain(f)?,
                State::Body(b) => device.solver.upload_body(b)?,
            }
            device.upload_needed = false;
        }
        let (dt, air, surroundings) = (self.scene.dt, self.air(), self.surroundings());
        let eye = self.camera.eye();
        let forward = (self.camera.target - eye).normalize_or_zero();
        let b = self.scene.body;
        let device = self.cuda.as_mut().expect("a CUDA solver");
        let solver = &mut device.solver;
        solver.set_stage_timing(self.watch.enabled);
        solver.begin_frame()?;
        match &mut self.state {
            State::Fountain(f) => {
                let alive = solver.count();
                let count = f.emission(dt, alive);
                let step = FountainStep::new(&f.params, &air, dt, eye, forward);
                let basin = basin_step(&f.params, f.surface.h, dt, &mut Stencils::default());
                let emitted = solver.fountain_frame(&step, &basin, (alive, count, f.emitted))?;
                f.emitted += emitted as u64;
                solver.end_frame(FrameEnd::Fountain {
                    basin: &basin.0,
                    particles: alive + emitted,
                })?;
                f.landed = solver.totals.landed;
                self.steps += 1;
            }
            State::Body(body) => {
                let h = dt / b.substeps as f32;
                let steps: Vec<BodyStep> = (0..b.substeps)
                    .map(|k| {
                        let before = if k == 0 { self.dt_before } else { h };
                        BodyStep::new(body, &surroundings, b.integrator, (h, before), b.damping)
                    })
                    .collect();
                let frame = BodyFrame {
                    steps,
                    integrator: b.integrator,
                    iterations: b.iterations,
                    self_collide: b
                        .self_collision
                        .then_some((b.thickness, surroundings.friction)),
                };
                solver.body_frame(&frame)?;
                self.dt_before = h;
                solver.end_frame(FrameEnd::Body)?;
                if let Some(overflow) = solver.overflow_note.take() {
                    eprintln!("{overflow}");
                    self.note = Some(overflow);
                }
                self.steps += u64::from(b.substeps);
            }
        }
        device.device_newer = true;
        Ok(device.solver.totals.non_finite)
    }
}
