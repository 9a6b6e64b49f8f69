//! A pool's memory and its restart with another grid: what the running grid holds, counted
//! from its buffers and GL objects; what the panel's grid would take (`memory::drawn_bytes`),
//! the check of it against host memory, and the restart that builds it or refuses it; the
//! checks of a scene's grid against host memory when it opens and when the first frame drawn
//! tells the path the frames take, and against the GL's largest texture when GL is attached.

use super::{PoolGl, PoolSim};
use crate::gfx::timing::PassClock;
use crate::scene::{Invalid, Source};
use crate::sims::pool::drops::Rng;
use crate::sims::pool::memory::{drawn_bytes, GridBytes, Solver};
use crate::sims::pool::render::{texture_refusal, PoolRenderer};
use crate::sims::pool::scene::PoolScene;
use crate::sims::OpenOptions;
use anyhow::{anyhow, bail, Context, Result};
use std::rc::Rc;

/// Host bytes (`memory::grid_bytes`) above which a restart with a new grid asks to be asked
/// again. Host memory only: a CUDA grid's GPU part is checked against the GPU's free memory
/// before it is allocated, and a grid that does not fit there is refused without harm.
pub const CONFIRM_BYTES: u64 = 1 << 30;

/// Why `nodes`² nodes are refused: `needed` host bytes on `solver`'s backend, `drawn` or not,
/// with `available` (the open check's words and the panel restart's).
pub(in crate::sims::pool) fn host_refusal(
    nodes: usize,
    (needed, available): (u64, u64),
    (solver, drawn): (Solver, bool),
    fix: &str,
) -> String {
    let backend = match solver {
        Solver::Cpu => "CPU backend",
        Solver::Cuda => "CUDA backend",
    };
    let drawn = if drawn { ", drawn" } else { "" };
    format!(
        "{nodes}² nodes need about {} but only {} of host memory is available ({backend}{drawn}); \
         use {fix}",
        crate::host::format_bytes(needed),
        crate::host::format_bytes(available)
    )
}

/// How a scene was opened, for the host-memory checks of its grid that name the scene's file
/// and key: when it opens, and again when the first frame drawn finds that the frames go
/// through the host (`restart::learn_path`).
pub(in crate::sims::pool) struct Opened {
    source: Source,
    /// The scene's `pool.cuda_nodes`, where CUDA runs at it.
    cuda_nodes: Option<usize>,
    /// `--particles` set the node count.
    rescaled: bool,
}

impl Opened {
    /// `source` opened with `options`, CUDA at `cuda_nodes` where the scene says.
    pub(in crate::sims::pool) fn new(
        source: &Source,
        options: &OpenOptions,
        cuda_nodes: Option<usize>,
    ) -> Opened {
        Opened {
            source: source.clone(),
            cuda_nodes,
            rescaled: options.elements.is_some(),
        }
    }

    /// Refuses `nodes`² nodes on `solver`'s backend, drawn as `drawing` says
    /// (`memory::drawn_bytes`), when they do not fit in `available` host bytes: the file, the
    /// key that sets the grid (`pool.cuda_nodes` where CUDA runs at it) and both figures.
    pub(in crate::sims::pool) fn check(
        &self,
        solver: Solver,
        nodes: usize,
        (drawn, interop): (bool, Option<bool>),
        available: Option<u64>,
    ) -> Result<()> {
        let needed = drawn_bytes(nodes, solver, drawn, interop).host;
        let Some(available) = available.filter(|&a| needed > a) else {
            return Ok(());
        };
        let (key, fix) = self.key(solver);
        let message = host_refusal(nodes, (needed, available), (solver, drawn), fix);
        Err(self
            .source
            .error_after_parse(Invalid::new(key, message), self.rescaled)
            .into())
    }

    /// Refuses `nodes`² nodes on `solver`'s backend when their surface texture (a texel a
    /// node) is larger than the GL's largest, `limit` a side (`GL_MAX_TEXTURE_SIZE`), before
    /// the renderer allocates it (GL failed it with `GL_INVALID_VALUE`): the file, the key that
    /// sets the grid and the limit.
    pub(in crate::sims::pool) fn check_texture(
        &self,
        solver: Solver,
        nodes: usize,
        limit: usize,
    ) -> Result<()> {
        let Some(message) = texture_refusal(nodes, limit) else {
            return Ok(());
        };
        let (key, fix) = self.key(solver);
        Err(self
            .source
            .error_after_parse(
                Invalid::new(key, format!("{message}; use {fix}")),
                self.rescaled,
            )
            .into())
    }

    /// The key that sets the grid on `solver`'s backend and what to lower.
    fn key(&self, solver: Solver) -> (&'static str, &'static str) {
        match (solver, self.cuda_nodes, self.rescaled) {
            (_, _, true) => ("pool.nodes", "fewer --particles"),
            (Solver::Cuda, Some(_), false) => ("pool.cuda_nodes", "fewer nodes"),
            _ => ("pool.nodes", "fewer nodes"),
        }
    }
}

/// The drawing path known when a scene opens with `options` (interop when the GL context
/// current here is on the CUDA device, as in `render`; else `None`, learnt from the first
/// frame drawn, and counted as interop until then: a viewer opens its scene before its GL
/// context exists) and the check of a backend's grid against `available` host bytes
/// ([`Opened::check`]).
pub(in crate::sims::pool) fn host_check<'a>(
    source: &'a Source,
    options: &'a OpenOptions,
    cuda_nodes: Option<usize>,
    available: Option<u64>,
) -> (Option<bool>, impl Fn(Solver, &PoolScene) -> Result<()> + 'a) {
    let interop =
        (options.drawn && crate::cuda::gl_device() == Some(options.device)).then_some(true);
    let opened = Opened::new(source, options, cuda_nodes);
    let fits = move |solver: Solver, scene: &PoolScene| -> Result<()> {
        let drawing = (options.drawn, interop);
        opened.check(solver, scene.params.nodes, drawing, available)
    };
    (interop, fits)
}

impl PoolSim {
    /// What this grid holds now, counted from its live buffers and GL objects (the check of
    /// `memory::grid_bytes`, less the copies that live only while something is built: the
    /// indices in the renderer's `Grid::new`, on CUDA the state's copy in a start or restart
    /// and the heights and offsets in `CudaPool::texels`): the state's fields (on CUDA its
    /// buffers as allocated, and the host's flags); drawn, the GL objects as GL reports them
    /// and, through the host, the texels. Reads nothing back and allocates nothing (the test of
    /// the figures, tests/pool_memory.rs).
    pub fn held_bytes(&self) -> GridBytes {
        let (state, mut host, mut gpu) = match self.solver.as_cpu() {
            Some(cpu) => (cpu.surface.bytes(), cpu.surface.bytes(), 0),
            None => {
                let gpu = self.solver.buffer_bytes().unwrap_or(0);
                (gpu, self.solver.flags().len() as u64, gpu)
            }
        };
        let mut drawing = 0;
        if let Some(pool_gl) = &self.gl {
            let gl = pool_gl.renderer.gl_bytes();
            let through_host = self.solver_kind() == Solver::Cpu || self.interop == Some(false);
            let land_nodes = pool_gl.renderer.land_nodes_bytes();
            drawing = gl + land_nodes;
            host += land_nodes;
            if through_host {
                let texels = 16 * pool_gl.texels.capacity() as u64;
                drawing += texels;
                host += texels + gl;
            } else {
                gpu += gl;
            }
        }
        GridBytes {
            state,
            drawing,
            host,
            gpu,
        }
    }

    /// Which solver runs.
    pub(super) fn solver_kind(&self) -> Solver {
        match self.solver.as_cpu() {
            Some(_) => Solver::Cpu,
            None => Solver::Cuda,
        }
    }

    /// Whether a front end draws it.
    pub(super) fn is_drawn(&self) -> bool {
        self.drawn || self.gl.is_some()
    }

    /// What the panel's grid (`nodes_edit`) takes on this backend, drawn or not, by the path
    /// the frames take.
    pub(in crate::sims::pool) fn edit_bytes(&self) -> GridBytes {
        drawn_bytes(
            self.nodes_edit,
            self.solver_kind(),
            self.is_drawn(),
            self.interop,
        )
    }

    /// Refuses the panel's grid when it is drawn and its surface texture is larger than the GL
    /// allows (`texture_refusal`), or when its host part does not fit in `available` host bytes (the
    /// running grid is already counted out of them: it is held while the new one is built; the
    /// GPU part is checked by the CUDA solver before it allocates).
    pub(in crate::sims::pool) fn check_memory(
        &self,
        available: Option<u64>,
    ) -> Result<(), Invalid> {
        let limit = self.gl.as_ref().and_then(|g| g.renderer.texture_limit());
        if let Some(message) = limit.and_then(|limit| texture_refusal(self.nodes_edit, limit)) {
            return Err(Invalid::new(
                "pool.nodes",
                format!("{message}; use fewer nodes"),
            ));
        }
        let (needed, Some(available)) = (self.edit_bytes().host, available) else {
            return Ok(());
        };
        if self.nodes_edit == self.scene.params.nodes || needed <= available {
            return Ok(());
        }
        let message = host_refusal(
            self.nodes_edit,
            (needed, available),
            (self.solver_kind(), self.is_drawn()),
            "fewer nodes",
        );
        Err(Invalid::new("pool.nodes", message))
    }

    /// Learns the path the frames take from the first frame drawn (`interop`: the kernel wrote
    /// the texture). Until then the checks counted interop's figure (`memory::drawn_bytes`);
    /// where the frames go through the host instead (`render` on Mesa's EGL on a GPU machine),
    /// host memory is checked again with that path's figure before its buffers (the texels,
    /// the heights and offsets copied back) are allocated, and a grid that does not fit is
    /// refused as opening it would have been, the path left unknown so the next frame refuses
    /// it too. Frames drawn before are left as they are. `available` (host bytes free) is
    /// asked only for that check, not every frame.
    pub(in crate::sims::pool) fn learn_path(
        &mut self,
        interop: bool,
        available: impl FnOnce() -> Option<u64>,
    ) -> Result<()> {
        if self.interop.is_none() && !interop {
            self.check_path(self.solver_kind(), available())?;
        }
        self.interop = Some(interop);
        Ok(())
    }

    /// The check [`PoolSim::learn_path`] makes of this grid on `solver`'s backend drawn
    /// through the host, against `available` host bytes: the open check's refusal (file, key,
    /// figures) after what happened.
    pub(in crate::sims::pool) fn check_path(
        &self,
        solver: Solver,
        available: Option<u64>,
    ) -> Result<()> {
        let nodes = self.scene.params.nodes;
        self.opened
            .check(solver, nodes, (true, Some(false)), available)
            .context(
                "the first frame drawn goes through the host (no CUDA–GL interop with this GL \
                 context), which takes more host memory than the check when the scene opened \
                 counted (interop's)",
            )
    }

    /// `Sim::attach_gl` on a GL whose textures are at most `limit` a side
    /// (`PoolRenderer::max_texture_size`; `None`: not known): a grid over it is refused with its
    /// file and key before anything else is done (the far taps chosen, the GL objects made).
    pub(in crate::sims::pool) fn attach_gl_within(
        &mut self,
        gl: Rc<glow::Context>,
        clock: PassClock,
        limit: Option<usize>,
    ) -> Result<()> {
        let nodes = self.scene.params.nodes;
        if let Some(limit) = limit {
            self.opened
                .check_texture(self.solver_kind(), nodes, limit)?;
        }
        if self.scene.look.far_taps.is_none() {
            // SAFETY: the context is current on this thread (attach_gl's contract).
            let renderer = unsafe { glow::HasContext::get_parameter_string(&*gl, glow::RENDERER) };
            let taps = crate::sims::pool::scene::far_taps_for(&renderer);
            self.gl_note = Some(format!(
                "pool: far taps {} on GL renderer {renderer} ([light] far_taps or the panel's \
                 checkbox to change)",
                if taps { "on" } else { "off" }
            ));
            self.scene.look.far_taps = Some(taps);
        }
        self.gl = Some(PoolGl {
            renderer: PoolRenderer::with_limit(gl, clock, nodes, limit)?,
            texels: Vec::new(),
            land_told: false,
        });
        Ok(())
    }

    /// Restarts with the panel's grid, or refuses it and leaves the running one as it is: a
    /// grid that does not fit in `available` host bytes, or one over [`CONFIRM_BYTES`] asked
    /// for the first time (the next restart with it goes ahead).
    pub(in crate::sims::pool) fn restart_within(&mut self, available: Option<u64>) -> Result<()> {
        let nodes = self.nodes_edit;
        let refused = if let Err(error) = self.check_memory(available) {
            Some(format!("refused: {}: {}", error.key, error.message))
        } else if nodes != self.scene.params.nodes
            && self.edit_bytes().host > CONFIRM_BYTES
            && self.confirming != Some(nodes)
        {
            self.confirming = Some(nodes);
            Some(format!(
                "{nodes}² nodes take about {} of memory: restart again to go ahead",
                crate::host::format_bytes(self.edit_bytes().host)
            ))
        } else {
            None
        };
        if let Some(message) = refused {
            self.refusal = Some(message.clone());
            bail!(message);
        }
        self.confirming = None;
        // A rebuild that fails leaves the running grid as it was (the CPU's cannot fail once
        // the scene validates; a CUDA grid that cannot start is refused before the old one is
        // touched), so nothing is rebuilt again: that would only reset it, and on CUDA hide
        // the error under a check of the old grid.
        if let Err(error) = self.rebuild() {
            self.nodes_edit = self.scene.params.nodes;
            return Err(error);
        }
        self.refusal = None;
        Ok(())
    }

    /// Starts again from the scene with the panel's set-up (node count).
    fn rebuild(&mut self) -> Result<()> {
        let mut scene = self.scene.clone();
        scene.params.nodes = self.nodes_edit;
        scene
            .validate()
            .map_err(|e| anyhow!("{}: {}", e.key, e.message))?;
        if let Some(gl) = &mut self.gl {
            // The texels are refilled at the new size on the next draw.
            gl.texels = Vec::new();
        }
        let drawing = (self.is_drawn(), self.interop);
        self.solver
            .rebuild(&scene.params, drawing, |x, z| scene.land(x, z))?;
        self.scene = scene;
        self.painted.clear();
        self.rng = Rng::new(self.scene.drops.seed);
        self.rain_sign = 1.0;
        self.pending.clear();
        self.last_drop = None;
        self.time = 0.0;
        self.steps = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid larger than the GL's largest texture is refused before the renderer allocates
    /// its surface texture, with the file, the key that sets the grid and the limit (GL failed
    /// the texture with `GL_INVALID_VALUE`, reported as "pool renderer set-up", no key). Mesa's
    /// limit (16384) is too large a grid to open here: a limit of 1024 stands in for it.
    #[test]
    fn a_grid_over_the_gls_largest_texture_is_refused_with_its_key() {
        let text = "kind = \"pool\"\n[pool]\nnodes = 1025\ncuda_nodes = 2049\n";
        let source = Source::parse(text, "big", "scenes/big.toml").expect("a kind");
        let opened = Opened::new(&source, &OpenOptions::default(), None);
        let error = opened.check_texture(Solver::Cpu, 1025, 1024).unwrap_err();
        assert_eq!(
            error.to_string(),
            "scenes/big.toml:3: pool.nodes: 1025² nodes need a 1025×1025 surface texture but \
             this GL's textures are at most 1024×1024 (GL_MAX_TEXTURE_SIZE); use fewer nodes"
        );
        let on_cuda = Opened::new(&source, &OpenOptions::default(), Some(2049));
        let error = on_cuda.check_texture(Solver::Cuda, 2049, 2048).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("scenes/big.toml:4: pool.cuda_nodes: 2049² nodes"),
            "{error}"
        );
        assert!(opened.check_texture(Solver::Cpu, 1024, 1024).is_ok());
    }
}
