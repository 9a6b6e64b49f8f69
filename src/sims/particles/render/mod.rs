//! The particles kind's renderer, shared by the window and headless rendering. A frame runs
//! these passes, each timed by name ([`crate::gfx::timing`]) into an offscreen colour + depth
//! target, then copied out, the flare drawn over the copy:
//!
//! | pass | draws |
//! |---|---|
//! | `sky` | the evening sky's cube map (mountains, glow; `sky.rs`) |
//! | `sun` | the sun's disc and corona, added over the sky |
//! | `opaque` | the ground, the fountain's room, cube and basin rim, the sphere, the wind arrow (`room.rs`) |
//! | `surface` | the cloth's or jelly's textured skin, smooth normals (`surface.rs`) |
//! | `springs` | nodes and springs coloured by energy (`nodes.rs`); the basin's nodes |
//! | `water` | the basin's height field, transparent with Fresnel (`water.rs`) |
//! | `particles` | the droplets: stretched billboards, back to front (`sprites.rs`) |
//! | `present` | the target copied to the output |
//! | `flare` | halos then bursts on the sun–centre line (`flare.rs`) |
//! | `blinding` | the white overlay of looking into the sun |
//!
//! Textures are all generated in code (`textures.rs`).

mod flare;
mod mesh;
pub mod nodes;
mod room;
mod settings;
mod sky;
mod sprites;
pub mod surface;
pub mod textures;
pub mod water;

pub use flare::{
    blinding_opacity, element_center, element_fade, sun_on_screen, Element, BURSTS, HALOS,
};
pub use mesh::{
    arrow_length, arrow_speed, Vertex, ARROW_FASTEST, ARROW_LONGEST, ARROW_SHORTEST, NO_WIND,
};
pub use nodes::Point;
pub use settings::{panel, views, RenderSettings, BODY_VIEWS, FOUNTAIN_VIEWS};
pub use sky::{light, orientation, sky_color, Light, SUN_RADIUS};
pub use sprites::{particle_color, particle_sprite, Blending};
pub use surface::Skin;
pub use water::WATER_COLOR;

use super::body::Body;
use super::cuda::{GlBody, GlBuffers, GlWater};
use super::fountain::Fountain;
use super::scene::{ParticlesScene, Which};
use super::sim::State;
use crate::gfx::camera::Camera;
use crate::gfx::check_gl;
use crate::gfx::fullscreen::FullscreenTriangle;
use crate::gfx::skybox::Sky;
use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
use crate::gfx::timing::{PassClock, PassTimer};
use crate::gfx::Output;
use anyhow::{anyhow, Result};
use glam::{Mat4, Vec3};
use glow::HasContext;
use mesh::{Material, Mesh, MeshProgram, Shape, HANDLE_RADIUS};
use nodes::Nodes;
use settings::shows_basin_nodes;
use std::rc::Rc;
use textures::{Sampling, FABRIC_SIZE};

/// The cloth's tartan or the jelly's raspberry texture.
fn fabric(gl: &glow::Context, which: Which) -> Result<glow::Texture> {
    let texel = if which == Which::Jelly {
        textures::jelly_texel
    } else {
        textures::cloth_texel
    };
    textures::upload(
        gl,
        FABRIC_SIZE,
        FABRIC_SIZE,
        4,
        &textures::generate(FABRIC_SIZE, texel),
        Sampling::Repeat,
    )
}

/// The renderer's GL objects.
pub struct Renderer {
    gl: Rc<glow::Context>,
    timer: PassTimer,
    which: Which,
    room: room::Key,
    light: Light,
    target: Option<(TextureTarget, u32, u32)>,
    triangle: FullscreenTriangle,
    sky: Sky,
    sun: sky::SunProgram,
    meshes: MeshProgram,
    pieces: Vec<room::Piece>,
    arrow: Mesh,
    /// The wind arrow's handle, drawn at its base when no wind blows (the drag starts a wind).
    handle: Mesh,
    textures: Vec<glow::Texture>,
    fabric: glow::Texture,
    surface: Option<surface::Surface>,
    nodes: Nodes,
    water: Option<water::Water>,
    sprites: sprites::Sprites,
    flare: flare::Flare,
    points: Vec<Point>,
    lines: Vec<Point>,
}

impl Renderer {
    /// The renderer of `scene` on `gl` (its context current), timing passes with `clock`.
    pub fn new(
        gl: Rc<glow::Context>,
        clock: PassClock,
        scene: &ParticlesScene,
    ) -> Result<Renderer> {
        let which = scene.which;
        let light = sky::light(which);
        let g: &glow::Context = &gl;
        let grass = textures::upload(
            g,
            FABRIC_SIZE,
            FABRIC_SIZE,
            4,
            &textures::generate(FABRIC_SIZE, textures::grass_texel),
            Sampling::Repeat,
        )?;
        let fabric = fabric(g, which)?;
        let pieces = room::pieces(g, scene, grass)?;
        let renderer = Renderer {
            timer: PassTimer::new(clock),
            which,
            room: room::Key::of(scene),
            light,
            target: None,
            triangle: FullscreenTriangle::new(g)?,
            sky: sky::create(g, &light)?,
            sun: sky::SunProgram::new(g)?,
            meshes: MeshProgram::new(g)?,
            pieces,
            arrow: Mesh::new(g, &Shape::arrow(), false)?,
            handle: Mesh::new(g, &Shape::sphere(Vec3::ZERO, 1.0, 8, 16), false)?,
            textures: vec![grass, fabric],
            fabric,
            surface: None,
            nodes: Nodes::new(g)?,
            water: None,
            sprites: sprites::Sprites::new(g)?,
            flare: flare::Flare::new(g)?,
            points: Vec::new(),
            lines: Vec::new(),
            gl,
        };
        check_gl(&renderer.gl, "the particles renderer's set-up")?;
        Ok(renderer)
    }

    /// Follows `scene`'s switches and edits: another scene (F1–F3, the panel) gets its light,
    /// sky, fabric and pieces (the skin is made again at its next draw); another ground,
    /// sphere or basin its pieces.
    fn follow(&mut self, scene: &ParticlesScene) -> Result<()> {
        let key = room::Key::of(scene);
        if key == self.room {
            return Ok(());
        }
        let gl = Rc::clone(&self.gl);
        let gl: &glow::Context = &gl;
        if scene.which != self.which {
            self.which = scene.which;
            self.light = sky::light(scene.which);
            std::mem::replace(&mut self.sky, sky::create(gl, &self.light)?).delete(gl);
            let fabric = fabric(gl, scene.which)?;
            // SAFETY: GL call on the current context; the old fabric is this renderer's.
            unsafe { gl.delete_texture(std::mem::replace(&mut self.fabric, fabric)) };
            self.textures[1] = fabric;
            if let Some(skin) = self.surface.take() {
                skin.delete(gl);
            }
        }
        for piece in self.pieces.drain(..) {
            piece.mesh.delete(gl);
        }
        self.pieces = room::pieces(gl, scene, self.textures[0])?;
        self.room = key;
        check_gl(gl, "the particles renderer following its scene")
    }

    /// The scene's light.
    pub fn light(&self) -> &Light {
        &self.light
    }

    /// The sky's cube map (its sampler's modes are tested).
    pub fn sky_cubemap(&self) -> glow::Texture {
        self.sky.cubemap()
    }

    /// Seconds of each pass of the latest measured frame, by pass name.
    pub fn pass_times(&self) -> Vec<(&'static str, Option<f64>)> {
        self.timer.latest()
    }

    /// The offscreen target of `width` × `height`, made again when the size changes.
    fn target(&mut self, width: u32, height: u32) -> Result<&TextureTarget> {
        if !matches!(&self.target, Some((_, w, h)) if *w == width && *h == height) {
            if let Some((old, _, _)) = self.target.take() {
                old.delete(&self.gl);
            }
            let target = TextureTarget::new(
                &self.gl,
                width as i32,
                height as i32,
                ColorFormat::RGBA8,
                Depth::Texture,
            )?;
            self.target = Some((target, width, height));
        }
        Ok(&self.target.as_ref().expect("made above").0)
    }

    /// The GL buffers a CUDA solver writes `fountain`'s particles into, grown to hold `count`,
    /// and, unless `settings` shows the basin's nodes, its water mesh (made here when new)
    /// ([`Renderer::draw`]'s `shared`).
    pub fn shared_buffers(
        &mut self,
        fountain: &Fountain,
        count: usize,
        settings: &RenderSettings,
    ) -> Result<GlBuffers> {
        let gl = Rc::clone(&self.gl);
        let mut buffers = self.sprites.shared_buffers(&gl, count);
        if !shows_basin_nodes(settings) {
            self.make_water(&gl, fountain)?;
            let water = self.water.as_ref().expect("made above");
            buffers.water = Some(GlWater {
                buffer: water.vertex_buffer(),
                h: fountain.surface.h,
                basin: fountain.params.basin,
                level: fountain.params.level,
                gain: water::RIPPLE_GAIN,
            });
        }
        Ok(buffers)
    }

    /// The GL buffers a CUDA solver writes `body`'s skin (made here when new; with the
    /// skin's layout) and its nodes' and springs' coloured points into, as `settings` shows
    /// them ([`Renderer::draw`]'s `shared`).
    pub fn body_buffers(&mut self, body: &Body, settings: &RenderSettings) -> Result<GlBody<'_>> {
        let gl = Rc::clone(&self.gl);
        let (points, lines) = if settings.shows_nodes() {
            let (p, l) = self
                .nodes
                .shared_buffers(&gl, body.len(), 2 * body.springs.len());
            (Some(p), Some(l))
        } else {
            (None, None)
        };
        let skin = if settings.shows_surface() {
            self.make_surface(&gl, body)?;
            let surface = self.surface.as_ref().expect("made above");
            Some((surface.vertex_buffer(), surface.skin()))
        } else {
            None
        };
        Ok(GlBody {
            skin,
            points,
            lines,
            mass: body.mass,
            red_energy: nodes::red_energy(body, settings),
            energy_decades: settings.decades(),
        })
    }

    /// Draws `state` (the fountain drawn in `order`, back to front; or, with `shared`, that
    /// many particles from [`Renderer::shared_buffers`] in the order written there; a body,
    /// with `shared`, from what was written into [`Renderer::body_buffers`]) of `scene`, its
    /// wind arrow at `arrow` (`ParticlesSim::arrow_base`), seen by `camera` into `output`.
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &mut self,
        state: &State,
        order: &[u32],
        shared: Option<usize>,
        scene: &ParticlesScene,
        arrow: Vec3,
        settings: &RenderSettings,
        camera: &Camera,
        output: Output,
    ) -> Result<()> {
        self.follow(scene)?;
        let (width, height) = (output.width.max(1), output.height.max(1));
        let aspect = width as f32 / height as f32;
        let view = camera.view();
        let projection = camera.projection(aspect);
        let view_projection = projection * view;
        let eye = camera.eye();
        let target = self.target(width, height)?;
        let (framebuffer, depth) = (
            target.framebuffer,
            target
                .depth_texture()
                .ok_or_else(|| anyhow!("no depth texture"))?,
        );
        let gl = Rc::clone(&self.gl);
        let gl: &glow::Context = &gl;
        // SAFETY: GL calls on the current context; the target is this renderer's.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(framebuffer));
            gl.viewport(0, 0, width as i32, height as i32);
            gl.clear_color(0.0, 0.0, 0.0, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            gl.disable(glow::DEPTH_TEST);
            gl.depth_mask(false);
        }
        self.timer.begin(gl, "sky");
        self.sky.draw(gl, view_projection, &self.triangle);
        self.timer.end(gl);
        self.timer.begin(gl, "sun");
        self.sun
            .draw(gl, view_projection, &self.light, &self.triangle);
        self.timer.end(gl);
        // SAFETY: GL state calls on the current context.
        unsafe {
            gl.enable(glow::DEPTH_TEST);
            gl.depth_func(glow::LESS);
            gl.depth_mask(true);
        }
        self.timer.begin(gl, "opaque");
        self.opaque(gl, scene, arrow, view_projection, projection.y_axis.y, eye);
        self.timer.end(gl);
        match state {
            State::Body(body) => {
                if settings.shows_surface() {
                    self.timer.begin(gl, "surface");
                    self.surface(gl, body, shared.is_some(), view_projection, eye)?;
                    self.timer.end(gl);
                }
                if settings.shows_nodes() {
                    self.timer.begin(gl, "springs");
                    if shared.is_some() {
                        self.nodes.use_shared(body.len(), 2 * body.springs.len());
                    } else {
                        nodes::body_points(body, settings, &mut self.points, &mut self.lines);
                        self.nodes.upload(gl, &self.points, &self.lines);
                    }
                    // The rest shape's spacing: a spring growing in (`growth.rs`) shrinks no node.
                    let radius = if body.springs.is_empty() {
                        0.02
                    } else {
                        0.22 * body.shape_rest(0)
                    };
                    self.nodes
                        .draw(gl, view, projection, height as f32, self.light.sun, radius);
                    self.timer.end(gl);
                }
            }
            State::Fountain(fountain) => {
                let view_index = settings.view.min(FOUNTAIN_VIEWS.len() - 1);
                if shows_basin_nodes(settings) {
                    self.timer.begin(gl, "springs");
                    nodes::basin_points(fountain, &mut self.points);
                    self.nodes.upload(gl, &self.points, &[]);
                    let radius = 0.4 * fountain.surface.h;
                    self.nodes
                        .draw(gl, view, projection, height as f32, self.light.sun, radius);
                    self.timer.end(gl);
                } else {
                    self.timer.begin(gl, "water");
                    self.water(gl, fountain, shared.is_some(), view_projection, eye)?;
                    self.timer.end(gl);
                }
                let blending = match FOUNTAIN_VIEWS[view_index] {
                    "additive" => Blending::Additive,
                    "lines" => Blending::Lines,
                    _ => Blending::Sorted,
                };
                self.timer.begin(gl, "particles");
                let forward = (camera.target - eye).normalize_or(Vec3::NEG_Z);
                match shared {
                    Some(count) => self.sprites.use_shared(count, &fountain.params),
                    None => self.sprites.update(gl, fountain, order, eye, forward),
                }
                self.sprites.draw(
                    gl,
                    view,
                    projection,
                    settings.particle_size,
                    settings.stretch,
                    blending,
                );
                self.timer.end(gl);
            }
        }
        self.timer.begin(gl, "present");
        // SAFETY: GL calls on the current context; both framebuffers are width × height.
        unsafe {
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(framebuffer));
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, output.framebuffer);
            let (w, h) = (width as i32, height as i32);
            gl.blit_framebuffer(
                0,
                0,
                w,
                h,
                0,
                0,
                w,
                h,
                glow::COLOR_BUFFER_BIT,
                glow::NEAREST,
            );
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
            gl.bind_framebuffer(glow::FRAMEBUFFER, output.framebuffer);
            gl.viewport(0, 0, w, h);
        }
        self.timer.end(gl);
        if settings.flare {
            if let Some(sun) = flare::sun_on_screen(view, projection, self.light.sun) {
                self.timer.begin(gl, "flare");
                self.flare
                    .draw(gl, sun, aspect, projection, depth, &self.light);
                self.timer.end(gl);
                self.timer.begin(gl, "blinding");
                self.flare.draw_blinding(gl, sun, projection, depth);
                self.timer.end(gl);
            }
        }
        // SAFETY: GL state calls on the current context.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, None);
            gl.disable(glow::DEPTH_TEST);
        }
        self.timer.end_frame(gl);
        check_gl(gl, "drawing a particles frame")
    }

    /// `opaque`: the scene's static pieces and the wind arrow at `base`; `y_scale` is the
    /// projection's 1/tan(fov/2) (the handle's size).
    #[allow(clippy::too_many_arguments)]
    fn opaque(
        &self,
        gl: &glow::Context,
        scene: &ParticlesScene,
        base: Vec3,
        view_projection: Mat4,
        y_scale: f32,
        eye: Vec3,
    ) {
        self.meshes
            .begin(gl, view_projection, eye, &self.light, self.sky.cubemap());
        for piece in &self.pieces {
            // SAFETY: GL state calls on the current context.
            unsafe {
                if piece.cull {
                    gl.enable(glow::CULL_FACE);
                    gl.cull_face(glow::BACK);
                } else {
                    gl.disable(glow::CULL_FACE);
                }
            }
            self.meshes
                .draw(gl, &piece.mesh, Mat4::IDENTITY, &piece.material);
        }
        // SAFETY: as above.
        unsafe { gl.disable(glow::CULL_FACE) };
        let material = Material {
            gloss: 0.5,
            ..Material::plain(Vec3::new(0.95, 0.75, 0.15))
        };
        match mesh::arrow_model(base, Vec3::from(scene.world.wind)) {
            Some(model) => self.meshes.draw(gl, &self.arrow, model, &material),
            None => {
                // A constant size on screen: HANDLE_RADIUS of the view's height at the base's
                // depth (clip w), 2·w·tan(fov/2).
                let w = (view_projection * base.extend(1.0)).w.max(1e-3);
                let radius = HANDLE_RADIUS * 2.0 * w / y_scale.abs().max(1e-6);
                let model = Mat4::from_scale_rotation_translation(
                    Vec3::splat(radius),
                    glam::Quat::IDENTITY,
                    base,
                );
                self.meshes.draw(gl, &self.handle, model, &material);
            }
        }
    }

    /// The body's skin, made again when the body's topology changed.
    fn make_surface(&mut self, gl: &glow::Context, body: &Body) -> Result<()> {
        let fits = self
            .surface
            .as_ref()
            .is_some_and(|s| s.fits(body.len(), body.triangles.len()));
        if !fits {
            if let Some(old) = self.surface.take() {
                old.delete(gl);
            }
            self.surface = Some(surface::Surface::new(gl, body, self.which)?);
        }
        Ok(())
    }

    /// `surface`: the body's textured skin, its vertices built here (or, `shared`, as a CUDA
    /// solver wrote them into its buffer).
    fn surface(
        &mut self,
        gl: &glow::Context,
        body: &Body,
        shared: bool,
        view_projection: Mat4,
        eye: Vec3,
    ) -> Result<()> {
        self.make_surface(gl, body)?;
        let skin = self.surface.as_mut().expect("made above");
        if !shared {
            skin.update(gl, body);
        }
        let material = Material {
            gloss: if self.which == Which::Jelly {
                0.6
            } else {
                0.08
            },
            translucency: if self.which == Which::Jelly {
                0.0
            } else {
                0.45
            },
            ..Material::textured(self.fabric, 1.0)
        };
        self.meshes
            .begin(gl, view_projection, eye, &self.light, self.sky.cubemap());
        self.meshes.draw(gl, skin.mesh(), Mat4::IDENTITY, &material);
        Ok(())
    }

    /// `water`: the basin's surface (its mesh made again when the grid changed), its vertices
    /// built here (or, `shared`, as a CUDA solver wrote them into its buffer).
    fn water(
        &mut self,
        gl: &glow::Context,
        fountain: &Fountain,
        shared: bool,
        view_projection: Mat4,
        eye: Vec3,
    ) -> Result<()> {
        self.make_water(gl, fountain)?;
        let water = self.water.as_mut().expect("made above");
        if !shared {
            water.update(gl, fountain);
        }
        water.draw(gl, view_projection, eye, &self.light, self.sky.cubemap());
        Ok(())
    }

    /// The basin's mesh, made again when the grid changed.
    fn make_water(&mut self, gl: &glow::Context, fountain: &Fountain) -> Result<()> {
        let n = fountain.surface.n;
        if self.water.as_ref().is_none_or(|w| w.nodes() != n) {
            if let Some(old) = self.water.take() {
                old.delete(gl);
            }
            self.water = Some(water::Water::new(gl, n)?);
        }
        Ok(())
    }

    /// Frees every GL object (the context is current).
    pub fn delete(mut self) {
        let gl = Rc::clone(&self.gl);
        let gl: &glow::Context = &gl;
        if let Some((target, _, _)) = self.target.take() {
            target.delete(gl);
        }
        self.triangle.delete(gl);
        self.sky.delete(gl);
        self.sun.delete(gl);
        self.meshes.delete(gl);
        for piece in &self.pieces {
            piece.mesh.delete(gl);
        }
        self.arrow.delete(gl);
        self.handle.delete(gl);
        for texture in &self.textures {
            // SAFETY: GL call on the current context; the textures are this renderer's.
            unsafe { gl.delete_texture(*texture) };
        }
        if let Some(skin) = self.surface.take() {
            skin.delete(gl);
        }
        self.nodes.delete(gl);
        if let Some(water) = self.water.take() {
            water.delete(gl);
        }
        self.sprites.delete(gl);
        self.flare.delete(gl);
        self.timer.delete(gl);
    }
}
