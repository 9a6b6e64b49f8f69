//! The pool's renderer. Its input is a surface texture of one RGBA32F texel per node — (offset
//! x, height, offset z, 1 if fixed) — written by an upload (CPU) or through interop (CUDA); the
//! passes displace the grid by it on the GPU (vertex texture fetch, normals from the
//! neighbouring texels). A frame of the `surface` view runs, each with a shader of the same
//! name in `shaders/pool/` (after `shaders/pool/common.glsl`) and a method of the same name:
//!
//! | pass | draws | into |
//! |---|---|---|
//! | `caustics` | the surface mesh projected along the refracted sunlight onto the floor plane, brightness from the change of area, added up | the caustics texture (R32F) |
//! | `sky` | the procedural sky (`shaders/common/skybox.*`), its sun at the scene's light | the frame |
//! | `pool` | the tiled floor and walls (caustics under water), the deck | the frame |
//! | `land` | fixed nodes (shores, islands) as sand and rock down to the floor (when there are any) | the frame |
//! | `surface` | the water: Fresnel reflection, refraction ray-traced against the pool box, Snell's window from below | the frame |
//! | `present` | the frame to the output | the output |
//!
//! The `wireframe` and `nodes` views draw the mesh's edges or its nodes coloured by height
//! (`height.frag`) instead of `surface`; the `caustics` view shows the caustics texture itself
//! (`caustics_view`). A grid of more than 513 nodes a side is drawn with a mesh of every s-th
//! node (at most 513 a side; the normals still from the neighbouring nodes); the caustics use
//! every node. Here: the views, the frame's order and the renderer's life; `shared.rs`
//! the uniforms every pass sets, `caustics.rs` the caustics texture and its passes, `grid.rs`
//! the surface mesh and the passes drawing it (`surface`, `land`, `wireframe`, `nodes`),
//! `pool_box.rs` the pool's box and the deck.

mod caustics;
mod grid;
mod pool_box;
mod shared;

pub use caustics::texture_bytes as caustics_texture_bytes;
pub use caustics::CausticsImage;
pub use grid::{display_mesh_nodes, display_stride, strip_indices};

use super::scene::LOWEST_SUN;
use crate::gfx::camera::Camera;
use crate::gfx::check_gl;
use crate::gfx::fullscreen::{FullscreenTriangle, Present};
use crate::gfx::skybox::{self, Sky};
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use crate::gfx::timing::{PassClock, PassTimer};
use crate::gfx::Output;
use anyhow::{anyhow, Result};
use caustics::{CausticsDomain, CausticsPass, CausticsViewProgram};
use glam::{Mat4, Vec3};
use glow::HasContext;
use grid::{Grid, HeightProgram, LandProgram, SurfaceProgram};
use pool_box::{PoolBox, PoolProgram};
use shared::{surface_texture, FrameValues, TextureUnit};
use std::rc::Rc;

/// The GL objects of [`PoolRenderer::allocated`] that grow with the grid.
pub const GRID_OBJECTS: [&str; 4] = [
    "surface texture",
    "caustics mesh",
    "display mesh",
    "caustics texture",
];

/// What the pool shows.
pub const VIEWS: [&str; 4] = ["surface", "wireframe", "nodes", "caustics"];

/// What a frame draws besides the surface texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawScene {
    /// Nodes per side.
    pub nodes: usize,
    /// The pool's side, m (it spans [0, size]² in x and z).
    pub size: f32,
    /// The water's depth, m (the floor is y = −depth).
    pub depth: f32,
    /// Towards the sun (any length).
    pub light: [f32; 3],
    /// Fine-detail normal map.
    pub detail: bool,
    /// Far pixels the mean of taps over their footprint (`[light] far_taps`).
    pub far_taps: bool,
    /// Index into [`VIEWS`].
    pub view: usize,
    /// Simulated time, s (the fine detail's ripples move with it).
    pub time: f32,
    /// Open (absorbing) edges: no walls or deck; the water goes on past the pool to the
    /// horizon, over the floor continued, fading into the water's colour.
    pub open: bool,
}

/// The walls' height above the rest level, m, of a pool of side `size`: the deck around the
/// pool lies at this height.
pub fn rim_height(size: f32) -> f32 {
    0.05 * size
}

impl DrawScene {
    /// The walls' height above the rest level, m ([`rim_height`]).
    pub fn rim_height(&self) -> f32 {
        rim_height(self.size)
    }

    /// The land's height above the rest level well inland, m.
    pub fn land_height(&self) -> f32 {
        0.04 * self.size
    }

    /// The light's direction, unit, kept at or above the lowest sun (scenes and the panel
    /// give none lower: [`LOWEST_SUN`]).
    pub fn light_direction(&self) -> Vec3 {
        let l = Vec3::from(self.light);
        let l = if l.is_finite() && l.length() > 0.0 {
            l.normalize()
        } else {
            Vec3::Y
        };
        if l.y >= LOWEST_SUN {
            return l;
        }
        let level = Vec3::new(l.x, 0.0, l.z).normalize_or(Vec3::X);
        level * (1.0 - LOWEST_SUN * LOWEST_SUN).sqrt() + Vec3::Y * LOWEST_SUN
    }
}

/// Why `nodes`² nodes cannot be drawn with a GL whose textures are at most `limit` a side, if
/// they cannot.
pub fn texture_refusal(nodes: usize, limit: usize) -> Option<String> {
    (nodes > limit).then(|| {
        format!(
            "{nodes}² nodes need a {nodes}×{nodes} surface texture but this GL's textures are at \
             most {limit}×{limit} (GL_MAX_TEXTURE_SIZE)"
        )
    })
}

/// One render pass; its name is the shader's and the method's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The caustics texture.
    Caustics,
    /// The sky behind.
    Sky,
    /// Floor, walls, deck.
    Pool,
    /// Shores and islands.
    Land,
    /// The water.
    Surface,
    /// The mesh's edges.
    Wireframe,
    /// The mesh's nodes.
    Nodes,
    /// The caustics texture shown.
    CausticsView,
    /// The frame copied to the output.
    Present,
}

impl Pass {
    /// The pass's name (shader file stem, docs, timings).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Caustics => "caustics",
            Pass::Sky => "sky",
            Pass::Pool => "pool",
            Pass::Land => "land",
            Pass::Surface => "surface",
            Pass::Wireframe => "wireframe",
            Pass::Nodes => "nodes",
            Pass::CausticsView => "caustics_view",
            Pass::Present => "present",
        }
    }
}

/// The programs of the passes.
struct Programs {
    pool: PoolProgram,
    land: LandProgram,
    surface: SurfaceProgram,
    height: HeightProgram,
    caustics_view: CausticsViewProgram,
}

/// The GL objects of the pool's passes.
pub struct PoolRenderer {
    gl: Rc<glow::Context>,
    clock: PassClock,
    surface: glow::Texture,
    /// Bytes of the surface texture's level 0, as specified.
    surface_bytes: u64,
    nodes: usize,
    grid: Grid,
    display: Option<Grid>,
    pool_box: Option<(PoolBox, [f32; 2])>,
    caustics: CausticsPass,
    programs: Programs,
    sky: Sky,
    sun: Vec3,
    present: Present,
    fullscreen: FullscreenTriangle,
    frame: Option<TextureTarget>,
    frame_size: (u32, u32),
    timer: PassTimer,
    land: bool,
    /// `GL_MAX_TEXTURE_SIZE` (`None`: not known).
    texture_limit: Option<usize>,
}

impl PoolRenderer {
    /// The renderer for a grid of `nodes`² on `gl`.
    pub fn new(gl: Rc<glow::Context>, clock: PassClock, nodes: usize) -> Result<PoolRenderer> {
        let limit = PoolRenderer::max_texture_size(&gl);
        PoolRenderer::with_limit(gl, clock, nodes, limit)
    }

    /// [`PoolRenderer::new`] on a GL whose textures are at most `texture_limit` a side
    /// ([`PoolRenderer::max_texture_size`], asked by the caller; `None`: not known, nothing
    /// refused).
    pub fn with_limit(
        gl: Rc<glow::Context>,
        clock: PassClock,
        nodes: usize,
        texture_limit: Option<usize>,
    ) -> Result<PoolRenderer> {
        if let Some(refusal) = texture_limit.and_then(|limit| texture_refusal(nodes, limit)) {
            return Err(anyhow!(refusal));
        }
        let (surface, surface_bytes) = surface_texture(&gl, nodes)?;
        let sun = skybox::sun_direction();
        let renderer = PoolRenderer {
            grid: Grid::new(&gl, nodes, 1)?,
            display: match display_stride(nodes) {
                1 => None,
                stride => Some(Grid::new(&gl, nodes, stride)?),
            },
            caustics: CausticsPass::new(&gl, nodes, texture_limit)?,
            programs: Programs {
                pool: PoolProgram::new(&gl)?,
                land: LandProgram::new(&gl)?,
                surface: SurfaceProgram::new(&gl)?,
                height: HeightProgram::new(&gl)?,
                caustics_view: CausticsViewProgram::new(&gl)?,
            },
            sky: Sky::with_sun(&gl, sun)?,
            sun,
            present: Present::new(&gl)?,
            fullscreen: FullscreenTriangle::new(&gl)?,
            frame: None,
            frame_size: (0, 0),
            timer: PassTimer::new(clock),
            pool_box: None,
            land: true,
            texture_limit,
            gl,
            clock,
            surface,
            surface_bytes,
            nodes,
        };
        check_gl(&renderer.gl, "pool renderer set-up")?;
        Ok(renderer)
    }

    /// The largest texture `gl` makes, texels a side (`GL_MAX_TEXTURE_SIZE`): the most nodes a
    /// side the surface texture can hold; `None` where the query fails (0 or less: not known,
    /// which refused every grid as over "0×0").
    pub fn max_texture_size(gl: &glow::Context) -> Option<usize> {
        // SAFETY: a GL query on the current context.
        let limit = unsafe { gl.get_parameter_i32(glow::MAX_TEXTURE_SIZE) };
        usize::try_from(limit).ok().filter(|&limit| limit > 0)
    }

    /// [`PoolRenderer::max_texture_size`] of its context, as given when it was made.
    pub fn texture_limit(&self) -> Option<usize> {
        self.texture_limit
    }

    /// The GL context.
    pub fn gl(&self) -> &Rc<glow::Context> {
        &self.gl
    }

    /// How pass times are measured.
    pub fn clock(&self) -> PassClock {
        self.clock
    }

    /// Nodes per side of the surface texture.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Says whether any node is land, for a surface texture written through interop (an
    /// upload finds out itself; until told, the renderer assumes there is land).
    pub fn set_land(&mut self, land: bool) {
        self.land = land;
    }

    /// The GL objects this renderer holds, by name, each with its bytes as allocated (the
    /// sizes given to GL): the ones that grow with the grid ([`GRID_OBJECTS`]: the surface
    /// texture's level 0, the caustics mesh's index buffer, the display mesh's on grids over
    /// 513 nodes, the caustics texture with its mipmaps) and, once a frame is drawn, the pool's
    /// box (its vertex buffer) and the frame (RGBA8 and a 24-bit depth buffer, 4 bytes a pixel
    /// each, at the output's size). Left out: the sky's cubemap (`gfx::skybox`, 6 × 128² RGBA8
    /// a renderer), the programs and the full-screen triangle.
    pub fn allocated(&self) -> Vec<(&'static str, u64)> {
        let mut objects = vec![
            ("surface texture", self.surface_bytes),
            ("caustics mesh", self.grid.bytes()),
        ];
        if let Some(display) = &self.display {
            objects.push(("display mesh", display.bytes()));
        }
        // The size the caustics pass gave GL, not the model's (`caustics::texture_bytes`).
        let caustics = caustics::chain_bytes(self.caustics.resolution());
        objects.push(("caustics texture", caustics));
        if let Some((pool_box, _)) = &self.pool_box {
            objects.push(("pool box", pool_box.bytes));
        }
        if self.frame.is_some() {
            let (width, height) = self.frame_size;
            objects.push(("frame", 8 * u64::from(width) * u64::from(height)));
        }
        objects
    }

    /// Bytes of the GL objects that grow with the grid ([`GRID_OBJECTS`] of
    /// [`PoolRenderer::allocated`]), the drawing's GL figure of `memory::grid_bytes`.
    pub fn gl_bytes(&self) -> u64 {
        self.allocated()
            .iter()
            .filter(|(name, _)| GRID_OBJECTS.contains(name))
            .map(|(_, bytes)| bytes)
            .sum()
    }

    /// The meshes' index buffers' bytes as GL reports them (`GL_BUFFER_SIZE`), by the names
    /// of [`PoolRenderer::allocated`].
    pub fn reported_buffer_bytes(&self) -> Vec<(&'static str, u64)> {
        let mut buffers = vec![("caustics mesh", self.grid.reported_bytes(&self.gl))];
        if let Some(display) = &self.display {
            buffers.push(("display mesh", display.reported_bytes(&self.gl)));
        }
        buffers
    }

    /// The caustics texture (R32F, mipmapped).
    pub fn caustics_texture(&self) -> glow::Texture {
        self.caustics.texture()
    }

    /// The surface texture (RGBA32F, nodes × nodes), for CUDA interop.
    pub fn surface_texture(&self) -> glow::Texture {
        self.surface
    }

    /// Uploads the surface's texels (row j = nodes with z = j·h), noting whether any node is
    /// land (without land the `land` pass is left out and rays look for none).
    pub fn upload(&mut self, texels: &[[f32; 4]]) {
        self.land = texels.iter().any(|t| t[3] > 0.0);
        let gl = &self.gl;
        // SAFETY: GL calls on the current context; the texture holds nodes² RGBA32F texels
        // and `texels` as many.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.surface));
            gl.tex_sub_image_2d(
                glow::TEXTURE_2D,
                0,
                0,
                0,
                self.nodes as i32,
                self.nodes as i32,
                glow::RGBA,
                glow::FLOAT,
                glow::PixelUnpackData::Slice(bytemuck::cast_slice(texels)),
            );
        }
    }

    /// Draws the pool seen by `camera` into `output`. Checks `glGetError` after every pass and
    /// fails naming the pass.
    pub fn draw(&mut self, camera: &Camera, output: Output, scene: &DrawScene) -> Result<()> {
        let (width, height) = (output.width.max(1), output.height.max(1));
        self.prepare(scene, width, height)?;
        let light = scene.light_direction();
        let domain = CausticsDomain::new(light, scene.size, scene.depth);
        let values = FrameValues {
            view_projection: camera.projection(width as f32 / height as f32) * camera.view(),
            eye: camera.eye(),
            nodes: self.nodes as i32,
            size: scene.size,
            depth: scene.depth,
            rim: scene.rim_height(),
            light,
            domain,
            land: self.land,
            open: scene.open,
            detail: scene.detail,
            far_taps: scene.far_taps,
            time: scene.time,
        };
        // SAFETY: GL calls on this thread's current context; every object named is this
        // renderer's and alive.
        unsafe {
            let gl = &self.gl;
            gl.disable(glow::CULL_FACE);
            gl.disable(glow::SCISSOR_TEST);
            gl.disable(glow::BLEND);
            gl.depth_mask(true);
            gl.color_mask(true, true, true, true);
            gl.enable(glow::PROGRAM_POINT_SIZE);
            self.bind(TextureUnit::Surface, glow::TEXTURE_2D, Some(self.surface));
            self.bind(TextureUnit::Caustics, glow::TEXTURE_2D, None);
            self.bind(
                TextureUnit::Sky,
                glow::TEXTURE_CUBE_MAP,
                Some(self.sky.cubemap()),
            );
        }
        self.run(Pass::Caustics, |r| {
            r.caustics.draw(&r.gl, &r.grid, &values);
            // Its mipmaps (each level the mean of the one above: the light kept), which the
            // passes reading it average over a pixel's footprint with.
            r.bind(
                TextureUnit::Caustics,
                glow::TEXTURE_2D,
                Some(r.caustics.texture()),
            );
            // SAFETY: GL call on the current context; the texture is bound to the active unit.
            unsafe { r.gl.generate_mipmap(glow::TEXTURE_2D) };
        })?;
        let view = VIEWS.get(scene.view).copied().unwrap_or(VIEWS[0]);
        if view == "caustics" {
            self.run(Pass::CausticsView, |r| r.caustics_view(output))?;
        } else {
            let frame = self.frame_target()?;
            // SAFETY: GL calls on the current context; the frame target is this renderer's.
            unsafe {
                self.gl.bind_framebuffer(glow::FRAMEBUFFER, Some(frame));
                self.gl.viewport(0, 0, width as i32, height as i32);
                self.gl.clear_color(0.0, 0.0, 0.0, 1.0);
                self.gl
                    .clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            }
            self.run(Pass::Sky, |r| r.sky(values.view_projection))?;
            // SAFETY: GL call on the current context.
            unsafe { self.gl.enable(glow::DEPTH_TEST) };
            self.run(Pass::Pool, |r| r.pool(&values))?;
            if self.land {
                self.run(Pass::Land, |r| r.land(&values, scene))?;
            }
            match view {
                "wireframe" => self.run(Pass::Wireframe, |r| r.wireframe(&values))?,
                "nodes" => self.run(Pass::Nodes, |r| r.nodes_pass(&values, height))?,
                _ => self.run(Pass::Surface, |r| r.surface_pass(&values))?,
            }
            // SAFETY: GL call on the current context.
            unsafe { self.gl.disable(glow::DEPTH_TEST) };
            self.run(Pass::Present, |r| r.present(output))?;
        }
        // SAFETY: GL calls on this thread's current context.
        unsafe {
            self.gl.bind_vertex_array(None);
            self.gl.use_program(None);
            self.gl.active_texture(glow::TEXTURE0);
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
        }
        self.timer.end_frame(&self.gl);
        Ok(())
    }

    /// The sky's sun follows the light, the box follows the pool, the frame the output.
    fn prepare(&mut self, scene: &DrawScene, width: u32, height: u32) -> Result<()> {
        let sun = scene.light_direction();
        if sun != self.sun {
            self.sky.set_sun(&self.gl, sun)?;
            self.sun = sun;
        }
        let shape = [scene.size, scene.depth];
        if self.pool_box.as_ref().map(|(_, s)| *s) != Some(shape) {
            let built = PoolBox::new(&self.gl, scene.size, scene.depth, scene.rim_height())?;
            if let Some((old, _)) = self.pool_box.replace((built, shape)) {
                old.delete(&self.gl);
            }
        }
        if self.frame.is_none() || self.frame_size != (width, height) {
            let target = TextureTarget::new(
                &self.gl,
                width as i32,
                height as i32,
                ColorFormat::RGBA8,
                Depth::Renderbuffer,
            )?;
            if let Some(old) = self.frame.replace(target) {
                old.delete(&self.gl);
            }
            self.frame_size = (width, height);
        }
        Ok(())
    }

    fn frame_target(&self) -> Result<glow::Framebuffer> {
        self.frame
            .as_ref()
            .map(|t| t.framebuffer)
            .ok_or_else(|| anyhow!("the frame target is missing"))
    }

    fn run(&mut self, pass: Pass, body: impl FnOnce(&mut PoolRenderer)) -> Result<()> {
        let gl = Rc::clone(&self.gl);
        self.timer.begin(&gl, pass.name());
        body(self);
        self.timer.end(&gl);
        check_gl(&gl, pass.name())
    }

    fn bind(&self, unit: TextureUnit, target: u32, texture: Option<glow::Texture>) {
        // SAFETY: GL calls on this thread's current context; the texture is this renderer's.
        unsafe {
            self.gl.active_texture(glow::TEXTURE0 + unit as u32);
            self.gl.bind_texture(target, texture);
        }
    }

    /// The mesh the picture is drawn with.
    fn display_grid(&self) -> &Grid {
        self.display.as_ref().unwrap_or(&self.grid)
    }

    /// `sky`: the sky over the whole frame, behind everything.
    fn sky(&self, view_projection: Mat4) {
        // The sky program binds its cubemap to unit 0's cube target (the surface stays on
        // its 2D target).
        self.sky.draw(&self.gl, view_projection, &self.fullscreen);
    }

    /// `pool`: floor, walls and deck.
    fn pool(&self, values: &FrameValues) {
        if let Some((pool_box, _)) = &self.pool_box {
            self.programs.pool.draw(&self.gl, values, pool_box);
        }
    }

    /// `land`: the fixed nodes as ground.
    fn land(&self, values: &FrameValues, scene: &DrawScene) {
        self.programs
            .land
            .draw(&self.gl, values, scene.land_height(), self.display_grid());
    }

    /// `surface`: the water.
    fn surface_pass(&self, values: &FrameValues) {
        self.programs
            .surface
            .draw(&self.gl, values, self.display_grid());
    }

    /// `wireframe`: the mesh's edges.
    fn wireframe(&self, values: &FrameValues) {
        self.programs
            .height
            .wireframe(&self.gl, values, self.display_grid());
    }

    /// `nodes`: the mesh's nodes as points, larger on a tall output.
    fn nodes_pass(&self, values: &FrameValues, height: u32) {
        let size = (height as f32 / 360.0).clamp(1.0, 4.0);
        self.programs
            .height
            .nodes(&self.gl, values, size, self.display_grid());
    }

    /// `caustics_view`: the caustics texture over the output.
    fn caustics_view(&self, output: Output) {
        // SAFETY: GL calls on the current context; the output framebuffer is the caller's.
        unsafe {
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            self.gl
                .viewport(0, 0, output.width as i32, output.height as i32);
        }
        self.programs
            .caustics_view
            .draw(&self.gl, self.caustics.texture(), &self.fullscreen);
    }

    /// `present`: the frame to the output.
    fn present(&self, output: Output) {
        let Some(frame) = &self.frame else {
            return;
        };
        // SAFETY: GL calls on the current context; the output framebuffer is the caller's.
        unsafe {
            self.gl
                .bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            self.gl
                .viewport(0, 0, output.width as i32, output.height as i32);
        }
        self.present.draw(&self.gl, frame.texture, &self.fullscreen);
    }

    /// The caustics texture of the last frame drawn, read back.
    pub fn caustics(&self) -> Result<CausticsImage> {
        let image = self.caustics.read(&self.gl);
        check_gl(&self.gl, "caustics read-back")?;
        Ok(image)
    }

    /// Seconds of each pass of the latest measured frame, by pass name, in the order they ran.
    pub fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        self.timer.latest()
    }

    /// Deletes the GL objects (the context is current).
    pub fn delete(mut self) {
        let gl = Rc::clone(&self.gl);
        self.timer.delete(&gl);
        self.grid.delete(&gl);
        if let Some(display) = &self.display {
            display.delete(&gl);
        }
        self.caustics.delete(&gl);
        if let Some((pool_box, _)) = &self.pool_box {
            pool_box.delete(&gl);
        }
        let p = &self.programs;
        p.pool.delete(&gl);
        p.land.delete(&gl);
        p.surface.delete(&gl);
        p.height.delete(&gl);
        p.caustics_view.delete(&gl);
        self.sky.delete(&gl);
        self.present.delete(&gl);
        self.fullscreen.delete(&gl);
        if let Some(frame) = &self.frame {
            frame.delete(&gl);
        }
        // SAFETY: GL call on the current context; the texture is this renderer's.
        unsafe { gl.delete_texture(self.surface) };
    }
}
