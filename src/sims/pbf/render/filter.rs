//! The depth filters: `smooth_depth` (N separable iterations of the bilateral or the
//! narrow-range filter, also run on the sun's view by `light_smooth`) and `smooth_depth_2d`
//! (the narrow-range filter's last iteration as one 2-D pass, Truong & Yuksel 2018), and
//! `smooth_thickness` (a separable Gaussian blur of the thickness, van der Laan et al. 2009,
//! also run on the sun's view inside `light_thickness`).

use super::{FrameSetup, RenderSettings, Renderer, SmoothingFilter};
use crate::gfx::program::{shader, Program, ShaderSource, Uniform};
use crate::gfx::targets::TextureTarget;
use anyhow::Result;
use glam::Vec2;
use glow::HasContext;
use std::rc::Rc;

/// A filter pass's program: `common/fullscreen.vert` and `shaders/pbf/<fragment>` with
/// `narrow_range.glsl` (the narrow-range filter's rules) and `glass_mark.glsl` (the marks of
/// the fluid's face on the glass, the class and seam rules) appended.
macro_rules! filter_shader {
    ($name:expr, $fragment:literal) => {
        ShaderSource {
            name: $name,
            vertex: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/shaders/common/fullscreen.vert"
            )),
            fragment: pbf_glsl!($fragment, "narrow_range.glsl", "glass_mark.glsl"),
            geometry: None,
        }
    };
}

/// The kernel's width in world space, in sprite radii, up to 12 px (`smooth_depth`) or 4 px
/// (`smooth_depth_2d`), the shaders' taps either side of the centre.
const FILTER_RADIUS: f32 = 5.0;
/// The kernel's width in the camera's view where the particles are so large on screen that
/// `FILTER_RADIUS` reaches past the taps, in sprite radii: `smooth_depth`'s, and
/// `smooth_depth_2d`'s (a third). The shaders spread the taps over it, so the filter's strength
/// relative to the particles stops falling as the resolution or the zoom rises and its cost
/// per pixel does not grow. They are what the caps gave the dam break at 1280×720 (a sprite
/// radius about 5 px there), so pictures with sprites up to 5 px across stay as they were
/// (docs/render-notes-filter.md). The sun's view (`light_smooth`) has a fixed size and keeps the
/// cap.
const WIDE_RADIUS: f32 = 2.4;
const WIDE_RADIUS_2D: f32 = WIDE_RADIUS / 3.0;
/// The bilateral range σ and the narrow-range threshold, in sprite radii.
const RANGE: f32 = 3.0;

impl RenderSettings {
    /// `smooth_depth_2d` runs: the narrow-range filter with it on and at least one iteration.
    pub fn runs_smooth_depth_2d(&self) -> bool {
        self.smooth_depth_2d
            && self.smoothing_filter == SmoothingFilter::NarrowRange
            && self.smoothing_iterations > 0
    }

    /// The separable iterations of `smooth_depth` in the camera's view: all of them, or all
    /// but the last when `smooth_depth_2d` runs that one.
    pub fn separable_iterations(&self) -> u32 {
        self.smoothing_iterations - u32::from(self.runs_smooth_depth_2d())
    }
}

/// `smooth_depth`: one half (horizontal or vertical) of a depth filter iteration.
pub(super) struct SmoothDepthProgram {
    pub(super) program: Program,
    depth_texture: Uniform,
    projected_scale: Uniform,
    filter_radius: Uniform,
    wide_radius: Uniform,
    range_sigma: Uniform,
    filter_kind: Uniform,
    direction: Uniform,
    perspective: Uniform,
    bias_correction: Uniform,
    applies_seam_rule: Uniform,
}

impl SmoothDepthProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<SmoothDepthProgram> {
        let program = Program::new(gl, &filter_shader!("smooth_depth", "smooth_depth.frag"))?;
        Ok(SmoothDepthProgram {
            depth_texture: program.uniform(gl, "depth_texture")?,
            projected_scale: program.uniform(gl, "projected_scale")?,
            filter_radius: program.uniform(gl, "filter_radius")?,
            wide_radius: program.uniform(gl, "wide_radius")?,
            range_sigma: program.uniform(gl, "range_sigma")?,
            filter_kind: program.uniform(gl, "filter_kind")?,
            direction: program.uniform(gl, "direction")?,
            perspective: program.uniform(gl, "perspective")?,
            bias_correction: program.uniform(gl, "bias_correction")?,
            applies_seam_rule: program.uniform(gl, "applies_seam_rule")?,
            program,
        })
    }
}

/// `smooth_depth_2d`: the narrow-range filter's 2-D iteration.
pub(super) struct SmoothDepth2dProgram {
    pub(super) program: Program,
    depth_texture: Uniform,
    texel: Uniform,
    projected_scale: Uniform,
    filter_radius: Uniform,
    wide_radius: Uniform,
    range_sigma: Uniform,
    bias_correction: Uniform,
    applies_seam_rule: Uniform,
}

impl SmoothDepth2dProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<SmoothDepth2dProgram> {
        let program = Program::new(
            gl,
            &filter_shader!("smooth_depth_2d", "smooth_depth_2d.frag"),
        )?;
        Ok(SmoothDepth2dProgram {
            depth_texture: program.uniform(gl, "depth_texture")?,
            texel: program.uniform(gl, "texel")?,
            projected_scale: program.uniform(gl, "projected_scale")?,
            filter_radius: program.uniform(gl, "filter_radius")?,
            wide_radius: program.uniform(gl, "wide_radius")?,
            range_sigma: program.uniform(gl, "range_sigma")?,
            bias_correction: program.uniform(gl, "bias_correction")?,
            applies_seam_rule: program.uniform(gl, "applies_seam_rule")?,
            program,
        })
    }
}

/// `smooth_thickness`: one half (horizontal or vertical) of the thickness blur.
pub(super) struct SmoothThicknessProgram {
    pub(super) program: Program,
    thickness_texture: Uniform,
    direction: Uniform,
    sigma: Uniform,
    radius: Uniform,
}

impl SmoothThicknessProgram {
    pub(super) fn new(gl: &glow::Context) -> Result<SmoothThicknessProgram> {
        let program = Program::new(
            gl,
            &shader!(
                "smooth_thickness",
                "common/fullscreen.vert",
                "pbf/smooth_thickness.frag"
            ),
        )?;
        Ok(SmoothThicknessProgram {
            thickness_texture: program.uniform(gl, "thickness_texture")?,
            direction: program.uniform(gl, "direction")?,
            sigma: program.uniform(gl, "sigma")?,
            radius: program.uniform(gl, "radius")?,
            program,
        })
    }
}

/// The thickness blur's σ in sprite radii projected at the view's distance: one radius removes
/// the sprites' grain (a lattice of spacing 2 r keeps exp(−π²/2) < 1 % of its contrast).
const THICKNESS_SIGMA: f32 = 1.0;
/// The blur's σ is at least this, px, and its taps reach 2.5 σ, at most this many px.
const THICKNESS_MIN_SIGMA_PX: f32 = 1.0;
const THICKNESS_MAX_RADIUS_PX: i32 = 16;

/// The thickness blur's σ in pixels for `frame`: a sprite radius at the camera's distance
/// (perspective) or anywhere (the sun's orthographic view).
pub(super) fn thickness_sigma_px(frame: &FrameSetup, perspective: bool) -> f32 {
    let distance = if perspective {
        frame.eye_distance.max(1e-3)
    } else {
        1.0
    };
    let pixels = frame.sprite_radius * projected_scale(frame) / distance;
    (THICKNESS_SIGMA * pixels).max(THICKNESS_MIN_SIGMA_PX)
}

/// The narrow-range threshold, m: a step to a neighbour bigger than this is another layer
/// (the filter drops it; `normals` treats it as an edge).
pub(super) fn layer_step(frame: &FrameSetup) -> f32 {
    RANGE * frame.sprite_radius
}

/// Pixels per metre at unit depth: P[1][1] · height / 2.
fn projected_scale(frame: &FrameSetup) -> f32 {
    frame.projection.y_axis.y * frame.height as f32 * 0.5
}

impl Renderer {
    /// `smooth_depth`: the separable iterations, each a horizontal then a vertical filter
    /// half ([`RenderSettings::separable_iterations`]).
    pub(super) fn smooth_depth(&mut self, frame: &FrameSetup, settings: &RenderSettings) {
        let written = self.filter_depth(
            self.targets.sphere_depth.texture,
            &self.targets.smoothing,
            frame,
            settings,
            settings.separable_iterations(),
            true,
        );
        self.smoothed = written.unwrap_or(usize::MAX);
    }

    /// `smooth_depth_2d`: the narrow-range filter's last iteration in 2-D, from the
    /// separable iterations' output (or the raw depth) into the other smoothing buffer.
    pub(super) fn smooth_depth_2d(&mut self, frame: &FrameSetup, settings: &RenderSettings) {
        let gl = Rc::clone(&self.gl);
        let source = self.smoothed_depth().texture;
        let destination = if self.smoothed == 0 { 1 } else { 0 };
        let pass = &self.programs.smooth_depth_2d;
        pass.program.bind(&gl);
        pass.depth_texture.set(&gl, 0);
        pass.texel.set(
            &gl,
            Vec2::new(1.0 / frame.width as f32, 1.0 / frame.height as f32),
        );
        pass.projected_scale.set(&gl, projected_scale(frame));
        pass.filter_radius
            .set(&gl, FILTER_RADIUS * frame.sprite_radius);
        pass.wide_radius
            .set(&gl, WIDE_RADIUS_2D * frame.sprite_radius);
        pass.range_sigma.set(&gl, layer_step(frame));
        pass.bias_correction
            .set(&gl, i32::from(settings.bias_correction));
        // The first filter pass applies the seam rule: this one when no separable iteration
        // ran before it.
        pass.applies_seam_rule
            .set(&gl, i32::from(self.smoothed == usize::MAX));
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.disable(glow::DEPTH_TEST);
            gl.bind_framebuffer(
                glow::FRAMEBUFFER,
                Some(self.targets.smoothing[destination].framebuffer),
            );
        }
        self.bind_texture(0, glow::TEXTURE_2D, Some(source));
        self.fullscreen.draw(&gl);
        self.smoothed = destination;
    }

    /// Runs `iterations` of the `smooth_depth` filter `settings` choose on `source`, ping-ponging
    /// between `buffers`, for a view that is `perspective` (else orthographic, the sun's);
    /// returns which buffer holds the result (`None`: no iterations).
    pub(super) fn filter_depth(
        &self,
        source: glow::Texture,
        buffers: &[TextureTarget; 2],
        frame: &FrameSetup,
        settings: &RenderSettings,
        iterations: u32,
        perspective: bool,
    ) -> Option<usize> {
        let gl = Rc::clone(&self.gl);
        let pass = &self.programs.smooth_depth;
        pass.program.bind(&gl);
        pass.depth_texture.set(&gl, 0);
        pass.perspective.set(&gl, i32::from(perspective));
        pass.projected_scale.set(&gl, projected_scale(frame));
        pass.filter_radius
            .set(&gl, FILTER_RADIUS * frame.sprite_radius);
        let wide = if perspective { WIDE_RADIUS } else { 0.0 };
        pass.wide_radius.set(&gl, wide * frame.sprite_radius);
        pass.range_sigma.set(&gl, layer_step(frame));
        let kind = match settings.smoothing_filter {
            SmoothingFilter::Bilateral => 0,
            SmoothingFilter::NarrowRange => 1,
        };
        pass.filter_kind.set(&gl, kind);
        pass.bias_correction
            .set(&gl, i32::from(settings.bias_correction));
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe { gl.disable(glow::DEPTH_TEST) };
        let mut source = source;
        let mut written = None;
        let texel = Vec2::new(1.0 / frame.width as f32, 1.0 / frame.height as f32);
        for half in 0..2 * iterations as usize {
            let destination = &buffers[half % 2];
            // SAFETY: GL calls on this thread's current context (front ends make it current
            // before calling the renderer); every object named is this renderer's and alive.
            unsafe {
                gl.bind_framebuffer(glow::FRAMEBUFFER, Some(destination.framebuffer));
            }
            let direction = if half % 2 == 0 {
                Vec2::new(texel.x, 0.0)
            } else {
                Vec2::new(0.0, texel.y)
            };
            pass.direction.set(&gl, direction);
            // The camera's first pass applies the seam rule (the sun's view has no glass).
            pass.applies_seam_rule
                .set(&gl, i32::from(perspective && half == 0));
            self.bind_texture(0, glow::TEXTURE_2D, Some(source));
            self.fullscreen.draw(&gl);
            source = destination.texture;
            written = Some(half % 2);
        }
        written
    }

    /// `smooth_thickness`: the Gaussian blur of σ `sigma_px` over `thickness` (a horizontal
    /// half into `scratch`, a vertical one back), for a `width` × `height` buffer.
    pub(super) fn smooth_thickness(
        &self,
        thickness: &TextureTarget,
        scratch: &TextureTarget,
        width: i32,
        height: i32,
        sigma_px: f32,
    ) {
        let gl = &self.gl;
        let pass = &self.programs.smooth_thickness;
        pass.program.bind(gl);
        pass.thickness_texture.set(gl, 0);
        pass.sigma.set(gl, sigma_px);
        let radius = ((2.5 * sigma_px).ceil() as i32).min(THICKNESS_MAX_RADIUS_PX);
        pass.radius.set(gl, radius);
        // SAFETY: GL calls on this thread's current context (front ends make it current
        // before calling the renderer); every object named is this renderer's and alive.
        unsafe {
            gl.disable(glow::DEPTH_TEST);
            gl.disable(glow::BLEND);
        }
        for (source, destination, direction) in [
            (thickness, scratch, Vec2::new(1.0 / width as f32, 0.0)),
            (scratch, thickness, Vec2::new(0.0, 1.0 / height as f32)),
        ] {
            // SAFETY: as above.
            unsafe { gl.bind_framebuffer(glow::FRAMEBUFFER, Some(destination.framebuffer)) };
            pass.direction.set(gl, direction);
            self.bind_texture(0, glow::TEXTURE_2D, Some(source.texture));
            self.fullscreen.draw(gl);
        }
    }

    /// The depth the later passes use: the last smoothing output, or the raw sphere depth.
    pub(super) fn smoothed_depth(&self) -> &TextureTarget {
        let targets = &self.targets;
        targets
            .smoothing
            .get(self.smoothed)
            .unwrap_or(&targets.sphere_depth)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FrameSetup, RenderSettings, Renderer};
    use crate::gfx::headless::Headless;
    use crate::gfx::targets::{ColorFormat, Depth, TextureTarget};
    use crate::gfx::timing::PassClock;
    use crate::sims::pbf::scene::Scene;
    use glam::{Mat4, Vec3};
    use glow::HasContext;

    /// One `smooth_depth` iteration (default settings, the camera's view) over a 4-row target
    /// whose rows are all `row` (depths at 1 m, marks in their two lowest bits), a sprite radius
    /// of 1 cm (the narrow-range threshold 3 cm) projecting to `sprite_px` pixels at 1 m: the
    /// smoothed row.
    fn smooth_row(row: &[f32], sprite_px: f32) -> Vec<f32> {
        const HEIGHT: i32 = 4;
        let width = row.len() as i32;
        let headless = Headless::new(width as u32, HEIGHT as u32).expect("headless OpenGL");
        let gl = headless.gl();
        let scene = Scene::load("dam-break").expect("the preset");
        let renderer = Renderer::new(gl.clone(), &scene, PassClock::Finish).expect("the renderer");
        let target = || {
            TextureTarget::new(&gl, width, HEIGHT, ColorFormat::R32F, Depth::None)
                .expect("a target")
        };
        let (source, buffers) = (target(), [target(), target()]);
        let texels: Vec<f32> = (0..HEIGHT).flat_map(|_| row.iter().copied()).collect();
        let sprite_radius = 0.01;
        let mut projection = Mat4::IDENTITY;
        projection.y_axis.y = sprite_px / sprite_radius / (0.5 * HEIGHT as f32);
        let frame = FrameSetup {
            view: Mat4::IDENTITY,
            projection,
            clip_planes: (0.1, 10.0),
            sprite_radius,
            width,
            height: HEIGHT,
            eye_distance: 1.0,
            eye_position: Vec3::ZERO,
            anisotropic: false,
            axis_scale: 1.0,
        };
        source.write_red_floats(&gl, width, HEIGHT, &texels);
        // SAFETY: a GL call on this thread's current context.
        unsafe { gl.viewport(0, 0, width, HEIGHT) };
        let settings = RenderSettings::default();
        let written = renderer
            .filter_depth(source.texture, &buffers, &frame, &settings, 1, true)
            .expect("one iteration");
        let out = buffers[written].read_floats(&gl, width, HEIGHT, 1);
        out[(HEIGHT / 2 * width) as usize..][..width as usize].to_vec()
    }

    /// `depth` with `mark` in its two lowest bits.
    fn marked(depth: f32, mark: u32) -> f32 {
        f32::from_bits((depth.to_bits() & !3) | mark)
    }

    /// `smooth_depth`'s line fit across the crease, on a row built to make a line overshoot:
    /// the centre (free surface, mark 0, depth 1 m) at the end of a one-sided run of its class
    /// (the other side all on the glass, mark 2, at the same depth: every pair split by the
    /// class rule alone), flat for offsets 1–8 and a rise of `rise` for 9–12; a sprite radius
    /// projecting to 4 px, so 12 taps one texel apart, σ = 6 texels. The weighted
    /// least-squares line through the centre and that run has its value at the centre −0.167
    /// `rise` off, nearer than every sample (docs/render-notes-glass.md). The smoothed centre less
    /// 1 m, in units of `rise`.
    fn crease_run_overshoot(rise: f32) -> f32 {
        const CENTER: i32 = 30;
        let row: Vec<f32> = (0..64)
            .map(|x| match x - CENTER {
                offset if offset < 0 => marked(1.0, 2),
                0..=8 => marked(1.0, 0),
                _ => marked(1.0 + rise, 0),
            })
            .collect();
        let out = smooth_row(&row, 4.0);
        let k = CENTER as usize;
        // The glass side's last pixel is filtered with the glass alone: unmoved.
        assert!((out[k - 1] - 1.0).abs() < 1e-6, "the face: {}", out[k - 1]);
        (out[k] - 1.0) / rise
    }

    /// The line's value at the centre is held within the range of the centre and the samples
    /// kept, widened by a texel of the steepest slope to a sample within 3 texels: here 0, the
    /// centre stays on its flat run. Unheld the fit gave −0.167 `rise`, nearer than every
    /// sample; held within a texel of the line's own slope (0.069 `rise` per texel),
    /// −0.069 `rise`.
    #[test]
    fn the_crease_line_fit_does_not_overshoot_a_flat_run() {
        for rise in [0.01, 0.02] {
            let overshoot = crease_run_overshoot(rise);
            println!("rise {rise} m: the centre moved {overshoot:.4} rise");
            assert!(
                overshoot.abs() < 0.01,
                "the centre moved {overshoot:.4} rise (−0.069 held by the line's slope, −0.167 \
                 unheld)"
            );
        }
    }

    /// The line fit across the crease with a kernel so wide that its first tap lies past NEAR
    /// (3 texels): tap i lies round(i + s·i²) texels out, s = (radius − 12) / 144, so the
    /// first is 4 texels out from a radius of 372 px (a sprite radius over 155 px on screen,
    /// the camera close to the fluid). The row: a plane in depth, 5e-5 m a texel, across the
    /// crease (glass on the left, mark 2, free surface on the right), the centre (mark 0) 2e-5 m
    /// behind it. The fit brings the centre back onto the plane; it is held within the kept
    /// samples' range (the centre's own depth is its near end here) widened by the steepest
    /// slope to a sample within NEAR texels, and, where no tap lies that near, to the first
    /// tap. The smoothed centre's distance from the plane, in units of the bump, for kernels of
    /// `radius_px` (`wide_radius`'s 2.4 sprite radii).
    fn wide_crease_bump(radius_px: f32) -> f32 {
        const SLOPE: f32 = 5e-5;
        const BUMP: f32 = 2e-5;
        let width = 2 * (radius_px as usize + 16);
        let center = width / 2;
        let row: Vec<f32> = (0..width)
            .map(|x| {
                let plane = 1.0 + SLOPE * (x as f32 - center as f32);
                match x.cmp(&center) {
                    std::cmp::Ordering::Less => marked(plane, 2),
                    std::cmp::Ordering::Equal => marked(plane + BUMP, 0),
                    std::cmp::Ordering::Greater => marked(plane, 0),
                }
            })
            .collect();
        let out = smooth_row(&row, radius_px / 2.4);
        (out[center] - 1.0) / BUMP
    }

    /// Below 372 px (a tap within NEAR, 300 px) and above it (420 and 900 px; at 900 the
    /// samples past 600 texels are over the 3 cm threshold from the centre and dropped) the
    /// centre lands within 0.15 of the bump from the plane. Without the first tap's slope
    /// past 372 px the hold has no slope to widen by and keeps the centre where it was splatted
    /// (1.0 of the bump) — what the hold's first-tap rule is for.
    #[test]
    fn the_crease_line_fit_smooths_with_a_kernel_whose_first_tap_is_past_near() {
        for radius_px in [300.0, 420.0, 900.0] {
            let left = wide_crease_bump(radius_px);
            println!("kernel {radius_px} px: the centre {left:.3} of the bump off the plane");
            assert!(
                left.abs() < 0.15,
                "kernel {radius_px} px: the centre {left:.3} of the bump off the plane (1.0 \
                 held without a slope)"
            );
        }
    }
}
