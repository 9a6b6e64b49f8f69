//! A pool's GL side: the renderer it draws with, what it allocated, and a frame drawn (the
//! surface uploaded or shared by interop, the land told, land's programs made ahead while the
//! paint tool is chosen).

use super::{PoolSim, Tool};
use crate::gfx::camera::Camera;
use crate::gfx::Output;
use crate::sims::pool::render::{DrawScene, PoolRenderer};
use crate::sims::pool::solver::LandChange;
use anyhow::{anyhow, Result};

pub(super) struct PoolGl {
    pub(super) renderer: PoolRenderer,
    pub(super) texels: Vec<[f32; 4]>,
    /// Whether the renderer was told the land's nodes (`PoolSolver::take_land_change`: then
    /// only those that changed since).
    pub(super) land_told: bool,
}

impl PoolSim {
    /// The renderer's GL objects and their bytes as it allocated them (`PoolRenderer::allocated`;
    /// none before `attach_gl`).
    pub fn gl_allocated(&self) -> Vec<(&'static str, u64)> {
        self.gl
            .as_ref()
            .map(|g| g.renderer.allocated())
            .unwrap_or_default()
    }

    /// The renderer (`None` before `attach_gl` or after `release_gl`).
    pub fn renderer(&self) -> Option<&PoolRenderer> {
        self.gl.as_ref().map(|g| &g.renderer)
    }

    /// `Sim::draw`: uploads the surface (CPU) and draws the pool with the renderer's passes,
    /// the camera kept in the water when its eye is below the surface (`under_water.rs`).
    pub(super) fn draw_gl(&mut self, camera: &Camera, output: Output) -> Result<()> {
        let p = &self.scene.params;
        let camera = &crate::sims::pool::under_water::keep_in_water(*camera, p.size, p.depth);
        self.draw_camera(*camera);
        let p = &self.scene.params;
        let scene = DrawScene {
            nodes: p.nodes,
            size: p.size,
            depth: p.depth,
            light: self.scene.look.light,
            detail: self.scene.look.detail,
            far_taps: self.scene.look.far_taps.unwrap_or(true),
            view: self.view,
            time: self.time as f32,
            open: p.edges == crate::sims::pool::Edges::Open,
        };
        let pool_gl = self
            .gl
            .as_mut()
            .ok_or_else(|| anyhow!("draw before attach_gl"))?;
        if pool_gl.renderer.nodes() != p.nodes {
            let gl = pool_gl.renderer.gl().clone();
            let clock = pool_gl.renderer.clock();
            let limit = pool_gl.renderer.texture_limit();
            self.solver.release_gl();
            let old = std::mem::replace(
                &mut pool_gl.renderer,
                PoolRenderer::with_limit(gl, clock, p.nodes, limit)?,
            );
            old.delete();
            pool_gl.land_told = false;
        }
        // On CUDA the kernel writes the texture (interop); else the texels go through the host.
        let texture = pool_gl.renderer.surface_texture().0.get();
        let shared = self.solver.write_texture(texture)?;
        if self.solver.cuda_device().is_some() {
            // Host memory is checked again before the texels are built, where the open check
            // counted interop.
            self.learn_path(shared, crate::host::available_memory)?;
        }
        let pool_gl = self.gl.as_mut().expect("attached above");
        if !shared {
            self.solver.texels(&mut pool_gl.texels)?;
            pool_gl.renderer.upload_surface(&pool_gl.texels);
        }
        // The land's nodes: only those the solver changed since the renderer was told.
        let change = match self.solver.take_land_change() {
            _ if !pool_gl.land_told => Some(LandChange::All),
            change => change,
        };
        if let Some(change) = change {
            let within = match change {
                LandChange::All => None,
                LandChange::Nodes(within) => Some(within),
            };
            let flags = self.solver.flags();
            let fixed = |k: usize| flags[k] & crate::sims::pool::surface::FIXED != 0;
            pool_gl.renderer.set_land(fixed, within);
            pool_gl.land_told = true;
        }
        if self.tool == Tool::PaintIsland {
            // Land's programs made ahead of the first stroke (render/warm_up.rs).
            pool_gl.renderer.expect_land();
        }
        pool_gl.renderer.draw(camera, output, &scene)
    }

    /// `Sim::release_gl`: the solver's and the renderer's GL objects deleted.
    pub(super) fn release_gl_objects(&mut self) {
        self.solver.release_gl();
        if let Some(pool_gl) = self.gl.take() {
            pool_gl.renderer.delete();
        }
    }
}
