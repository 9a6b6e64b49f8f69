//! A headless render (Mesa llvmpipe in CI) of the dam break 0.66 s in, where the fluid column
//! leans on the near-left glass: the fluid's face against the glass, seen nearly edge-on, shows
//! no light flecks since it is shaded as water behind glass (the wall's normal, the glass–water
//! interface's reflectance; docs/render-notes.md, "The light flecks at the glass"), and the
//! top meets the front glass without a light line. The other side of that rule (a drop near the
//! glass and a calm pool's top keep their own surface) is in render_near_glass.rs, the walls'
//! band marks in render_wall_band.rs.

#[path = "render_support/dam_break.rs"]
mod dam_break;
mod render_support;

use dam_break::dam_break_stepped;
use fluidlab::gfx::camera::Camera;
use fluidlab::sims::pbf::render::{Buffer, RenderSettings};
use glam::Vec3;
use render_support::{draw, headless, Unprojection};

/// The dam break at `particles` after 40 steps (0.66 s, `fluidlab render`'s frame 1 at
/// `--steps-per-frame 40`), rendered at `width` × `height` with the default settings: the
/// picture's luminance (rows bottom to top, as the buffers), the splatted depth and whether
/// each pixel's splatted surface lies within a sprite radius of the near-left glass (the
/// container's x = min wall); and for the front glass (z = max): each pixel's splatted
/// surface's distance from it in particle radii, the angle of its normal from the glass's (°)
/// and whether it is shaded as behind glass.
struct Wall {
    width: usize,
    height: usize,
    luminance: Vec<f32>,
    depth: Vec<f32>,
    at_glass: Vec<bool>,
    off_front: Vec<f32>,
    tilt: Vec<f32>,
    behind_glass: Vec<bool>,
    /// The smoothed depth (its two lowest bits the mark `sphere_depth` gave the pixel).
    smoothed: Vec<f32>,
}

fn render(particles: u64, width: u32, height: u32) -> Wall {
    let (scene, mut solver) = dam_break_stepped(particles);
    let mut headless = headless(width, height);
    let camera = Camera::framing(&scene.container);
    let settings = RenderSettings::default();
    let (renderer, image) = draw(&mut headless, &scene, solver.as_mut(), &camera, &settings);
    let depth = renderer.read_buffer(Buffer::Depth).expect("the depth");
    let smoothed = renderer
        .read_buffer(Buffer::SmoothedDepth)
        .expect("the smoothed depth");
    let normals = renderer.read_buffer(Buffer::Normals).expect("the normals");
    let (w, h) = (width as usize, height as usize);
    let rgba = image.into_raw();
    let unprojection = Unprojection::new(&camera, width, height);
    let sprite_radius = RenderSettings::default().point_size * scene.params.particle_radius();
    let glass = scene.container.min.x;
    let front = scene.container.max.z;
    let radius = scene.params.particle_radius();
    let rotation = glam::Mat3::from_mat4(camera.view().inverse());
    let mut wall = Wall {
        width: w,
        height: h,
        luminance: vec![0.0; w * h],
        depth,
        at_glass: vec![false; w * h],
        off_front: vec![f32::INFINITY; w * h],
        tilt: vec![0.0; w * h],
        behind_glass: normals.chunks(4).map(|n| n[3] > 1.5).collect(),
        smoothed,
    };
    for y in 0..h {
        for x in 0..w {
            let k = y * w + x;
            let p = &rgba[4 * ((h - 1 - y) * w + x)..][..3];
            wall.luminance[k] = p.iter().map(|c| f32::from(*c)).sum::<f32>() / 3.0;
            let d = wall.depth[k];
            if d <= 0.0 {
                continue;
            }
            let world = unprojection.world(x, y, d);
            wall.at_glass[k] = world.x - glass < sprite_radius;
            wall.off_front[k] = (front - world.z) / radius;
            let normal = rotation * Vec3::from_slice(&normals[4 * k..4 * k + 3]);
            wall.tilt[k] = normal.z.clamp(-1.0, 1.0).acos().to_degrees();
        }
    }
    wall
}

impl Wall {
    /// The fluid pixels at the glass, and those of them more than 15 levels lighter than the
    /// median of their 3 × 3 window: light flecks.
    fn flecks(&self) -> (usize, usize) {
        let (w, h) = (self.width, self.height);
        let (mut at_glass, mut light) = (0, 0);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let k = y * w + x;
                if !self.at_glass[k] {
                    continue;
                }
                at_glass += 1;
                let mut window = [0.0f32; 9];
                for (i, value) in window.iter_mut().enumerate() {
                    *value = self.luminance[(y + i / 3 - 1) * w + x + i % 3 - 1];
                }
                window.sort_by(f32::total_cmp);
                light += usize::from(self.luminance[k] > window[4] + 15.0);
            }
        }
        (at_glass, light)
    }

    /// The pixels whose splatted surface lies within 4 particle radii of the front glass: all
    /// of them, those not behind glass (the free surface), and how many of each are light: more
    /// than 15 levels lighter than the median of their 5 × 5 window and than the median of the
    /// window's fluid pixels shaded as the pixel is (behind glass or not). A line one or two
    /// pixels wide still counts by either; the second median keeps a top pixel at a corner of
    /// the crease, where the face fills most of the window, from counting as light against
    /// the face (13 and 14 of 25 pixels there, 17 levels darker than the top), and the first
    /// keeps a pixel beside a dark line at a layer's step from counting against that line.
    /// Counted over all, a pixel the glass rule takes from the free surface still counts if
    /// it is light. The pixels marked 1 shaded behind glass (`normals`' seams
    /// of the face and those it found facing the glass). And the mean angle (°)
    /// between the normal and the glass's of the free surface 1.75–3 radii off it.
    fn rim(&self) -> Rim {
        let (w, h) = (self.width, self.height);
        let mark = |k: usize| self.depth[k].to_bits() & 3;
        let mut rim = Rim::default();
        let (mut tilt, mut tilted) = (0.0, 0);
        for y in 2..h - 2 {
            for x in 2..w - 2 {
                let k = y * w + x;
                let off = self.off_front[k];
                if !(0.0..4.0).contains(&off) {
                    continue;
                }
                let mut window = [0.0f32; 25];
                let mut alike = Vec::with_capacity(25);
                for (i, value) in window.iter_mut().enumerate() {
                    let j = (y + i / 5 - 2) * w + x + i % 5 - 2;
                    *value = self.luminance[j];
                    if self.depth[j] > 0.0 && self.behind_glass[j] == self.behind_glass[k] {
                        alike.push(self.luminance[j]);
                    }
                }
                window.sort_by(f32::total_cmp);
                alike.sort_by(f32::total_cmp);
                let light = self.luminance[k] > window[12] + 15.0
                    && self.luminance[k] > alike[alike.len() / 2] + 15.0;
                rim.all += 1;
                rim.all_light += usize::from(light);
                if self.behind_glass[k] && mark(k) == 1 {
                    rim.seams += 1;
                }
                if self.behind_glass[k] {
                    continue;
                }
                rim.free += 1;
                rim.free_light += usize::from(light);
                if (1.75..3.0).contains(&off) {
                    tilt += self.tilt[k];
                    tilted += 1;
                }
            }
        }
        rim.tilt = tilt / tilted.max(1) as f32;
        rim
    }

    /// The top's first row above the fluid's face on the front glass: the fluid pixels within
    /// 4 particle radii of it not marked on the glass whose pixel below is and whose pixel
    /// above is not (one with the glass above and below is a seam inside the face, shaded
    /// behind glass, whose filter has only the top's samples, several texels off, to fit a
    /// line through: 13 mm towards the eye at the most in this frame). Of them, the
    /// pinholes: a splat deeper by over 1 cm than the pixels above and below it (a particle
    /// behind the front layer seen through a gap between its splats, which the filter fills
    /// in: it is pulled towards the eye by about that step). The rest: how many, the mean and
    /// the least of their smoothed depth less their splatted depth (m; negative: pulled towards
    /// the eye), and how many were pulled more than 5 mm towards the eye. The line fit across
    /// the crease acts there.
    fn crease_bias(&self) -> Crease {
        let w = self.width;
        let mark = |k: usize| self.depth[k].to_bits() & 3;
        let mut crease = Crease {
            least: f32::INFINITY,
            ..Crease::default()
        };
        let mut sum = 0.0f64;
        for k in w..self.depth.len() - w {
            if self.depth[k] <= 0.0
                || mark(k) == 2
                || self.depth[k - w] <= 0.0
                || mark(k - w) != 2
                || mark(k + w) == 2
                || !(0.0..4.0).contains(&self.off_front[k])
            {
                continue;
            }
            let bias = self.smoothed[k] - self.depth[k];
            let above = self.depth[k + w];
            if above > 0.0 && self.depth[k] - above.max(self.depth[k - w]) > 0.01 {
                crease.pinholes += 1;
                crease.pinhole_least = crease.pinhole_least.min(bias);
                continue;
            }
            crease.pixels += 1;
            sum += f64::from(bias);
            crease.least = crease.least.min(bias);
            crease.nearer += usize::from(bias < -0.005);
        }
        crease.bias = sum / crease.pixels.max(1) as f64;
        crease
    }

    /// The fluid's face on the glass: the pixels `sphere_depth` marked on the glass (the
    /// depth's two lowest bits 2) whose eight neighbours are marked so too and lie within 2 cm
    /// of them (one layer), and the mean |second difference| of their smoothed depth along x
    /// plus that along y (m); and how many pixels with their eight neighbours marked on the
    /// glass the 2 cm rule left out (a filter that broke the face into steps would).
    fn face_roughness(&self) -> (usize, usize, f64) {
        let (w, h) = (self.width, self.height);
        let on_glass = |k: usize| self.depth[k] > 0.0 && self.depth[k].to_bits() & 3 == 2;
        let d = &self.smoothed;
        let (mut pixels, mut stepped, mut sum) = (0, 0, 0.0f64);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let k = y * w + x;
                let around = [
                    k - 1,
                    k + 1,
                    k - w,
                    k + w,
                    k - w - 1,
                    k - w + 1,
                    k + w - 1,
                    k + w + 1,
                ];
                if !on_glass(k) || !around.iter().all(|&j| on_glass(j)) {
                    continue;
                }
                if !around.iter().all(|&j| (d[j] - d[k]).abs() < 0.02) {
                    stepped += 1;
                    continue;
                }
                pixels += 1;
                sum += f64::from((d[k - 1] + d[k + 1] - 2.0 * d[k]).abs())
                    + f64::from((d[k - w] + d[k + w] - 2.0 * d[k]).abs());
            }
        }
        (pixels, stepped, sum / pixels.max(1) as f64)
    }
}

/// [`Wall::crease_bias`]'s figures.
#[derive(Default)]
struct Crease {
    pixels: usize,
    bias: f64,
    least: f32,
    nearer: usize,
    pinholes: usize,
    pinhole_least: f32,
}

/// [`Wall::rim`]'s counts.
#[derive(Default)]
struct Rim {
    all: usize,
    all_light: usize,
    free: usize,
    free_light: usize,
    seams: usize,
    tilt: f32,
}

/// `fluidlab render dam-break --frames 3 --steps-per-frame 40 --size 1280x720`'s frame 1 (30 000
/// particles): the fluid's face on the near-left glass is seen nearly edge-on (its normal at
/// 86° from the view ray), its splatted surface 0.3–1 sprite radii off the glass (the flattened
/// ellipsoids of the particles touching it), bumpy, its depth stepping by about the filter's
/// threshold from pixel to pixel. Shaded as a water surface, its normals from those steps, some
/// pixels grazed (Fresnel 0.75, the floor reflected) among paler ones: 34 light flecks with the
/// edge rule switched, 20–21 with it faded in. `normals` now gives a pixel whose splatted surface
/// lies within a particle radius and half a sprite radius of a near wall's plane, its normal
/// within 45° of the wall's, the wall's normal, and `composite` shades it as water behind glass
/// (reflectance 0.004, no highlight, no bend): 2 (0 with 1.5 sprite radii and 60°, which took
/// free surface near the glass too; 3 with a quarter of a sprite radius, 40 with none).
#[test]
fn the_fluids_face_on_the_glass_shows_no_light_flecks() {
    let wall = render(30000, 1280, 720);
    let (at_glass, light) = wall.flecks();
    println!("at the glass {at_glass} fluid pixels, {light} light flecks");
    assert!(
        at_glass > 1000,
        "the fluid's face on the glass: {at_glass} px"
    );
    assert!(
        light < 5,
        "{light} light flecks at the glass (21 shaded as a water surface, the edge rule faded in)"
    );
}

/// The same frame: where the fluid's top meets the front glass, the depth filter averaged the
/// top with the fluid's face on the glass (a crease, no step in depth between them) and so
/// rounded it over its width: the top 1.75–3 particle radii off the glass tilted 57° from the
/// glass's normal on average (33° from level; 84° unfiltered), and where its normal met the
/// sun's half vector (53° here) the rim caught the highlight, a thin light line along the
/// face's top edge: 520 light pixels within 4 radii of the glass. The filters now keep the
/// face on the glass and the free surface apart (`narrow_range.glsl`): 27, the rim at 82.8°;
/// 22 and 83.1° since a pixel `sphere_depth` marked on the glass takes the wall's normal
/// without the 45° test on its smoothed normal. (Widening the glass rule's angle to 60° only
/// moved the line up: 363.) Of those 22, 17 were the top's row just above the face, its
/// kernels across the crease empty (each pair had its face-side sample dropped, and the bias
/// correction drops a pair whole), so it kept the splats' rounded edge, tilted 47–58°; the
/// rest seams of the face (a pixel whose own splat is more than 45° off the glass among
/// pixels on it) shaded as free surface. With the sample of the centre's side counted alone
/// in a line fit (`smooth_depth`) 16, with the seams on the glass in `normals` too 8 (16 with
/// the seams alone), the top at 86.5°. The face's smoothed depth (its pixels
/// and their neighbours marked on the glass): mean |second difference| along x plus along
/// y 4.33e-5 m before the fit (its kernels stopped at the seams), 3.00e-5 m with it, 3.02e-5
/// with the fit's value held within a texel's slope of its samples' range (held within the
/// range itself: 3.71e-5, 11 light, the top's first row 1.1 mm deeper on average). The light
/// pixels are counted over all pixels within 4 r of the glass (40 955; a pixel the glass rule
/// takes from the free surface still counts), and the bounds also watch the face's pixels a
/// filter breaking it into steps would leave out (661) and the top's first row above the face,
/// where the fit acts (1083 px, smoothed - splatted +8.7e-5 m on average, 47 pulled over 5 mm
/// towards the eye: the splats' rounded edge smoothed). Of the 8 light pixels then, read back
/// with their neighbours: 3 were pixels of the free surface's class (mark 1) tilted 51–58°
/// from the glass's normal, two inside the face (a seam two pixels wide: two of their four
/// neighbours marked on the glass, five of their eight) and one in the top's first row, whose
/// normal `normals` took from the smaller difference, the one across the crease to the face;
/// the other 5 were the level top (86–93°, as light as the top's next rows) at corners of the
/// crease, where the face fills most of the 5 × 5 window. With `normals` taking the difference
/// to a neighbour of the pixel's own class across the crease: 5 (750 → 520 seams shaded
/// behind glass); with a seam's five of eight neighbours on the glass too: 2, both the level
/// top at a corner of the crease (the window's median, not the shading). The fit held within a
/// texel of the steepest slope to a sample within 3 texels (it no longer overshoots a flat run,
/// `filter.rs`'s test): the face 3.135e-5 m, the first row +2.3e-4 m on average (20 pulled
/// over 5 mm towards the eye), the top 86.3°, 617 seams. The 2 light pixels left, read back:
/// the level top's first row (mark 1, 88.5° and 89.4° from the glass's normal, 27 cm of
/// thickness like their neighbours') at 174.3 and 174.7 levels, within a level of their row's
/// free surface, the face filling 13 and 14 of their 25-pixel window (155–157 levels): light
/// against the face, not their own surface. A pixel now counts as light against the median of
/// its window's pixels shaded as it is too: 0. The first row's pixel pulled 2.2 cm towards the
/// eye is a pinhole (its splat 2.3 and 2.8 cm behind the pixels above and below it, 3.5 r off
/// the glass against their 1.8–2.1: a particle behind the front layer seen through a 2-pixel
/// gap), which the filter fills in: 1.885 m against 1.879–1.884 m above, below and left of
/// it; and 305 of the 1 082 were seams
/// inside the face (the glass above and below them, shaded behind glass), whose only samples
/// of their class are the top's, several texels off (one pulled 1.3 cm). The row's figures
/// leave both out (1 pinhole, 777 px).
#[test]
fn the_top_meets_the_front_glass_without_a_light_line() {
    let wall = render(30000, 1280, 720);
    let rim = wall.rim();
    let (face, stepped, roughness) = wall.face_roughness();
    let crease = wall.crease_bias();
    println!(
        "within 4 r of the front glass {} px, {} light; of them {} free surface, {} light, \
         {} seams on the glass; 1.75-3 r off it the normal {:.1} deg from the glass's; the face \
         on the glass {face} px ({stepped} left out by the 2 cm rule), its smoothed depth's \
         second differences {roughness:.3e} m; the top's first row above it {} px, smoothed - \
         splatted mean {:.3e} m, least {:.3e} m, {} px over 5 mm nearer; and {} pinholes, \
         least {:.3e} m",
        rim.all,
        rim.all_light,
        rim.free,
        rim.free_light,
        rim.seams,
        rim.tilt,
        crease.pixels,
        crease.bias,
        crease.least,
        crease.nearer,
        crease.pinholes,
        crease.pinhole_least
    );
    assert!(
        rim.free > 3000,
        "the top near the front glass: {} px",
        rim.free
    );
    assert!(
        rim.all_light < 2 && rim.free_light < 2,
        "{} light pixels within 4 r of the front glass, {} of the free surface (0; 520 \
         filtered across the crease, 22 with the top's first row left as splatted, 8 with the \
         normals across the crease; 2 against the window's median alone: the level top at \
         corners of the crease, as light as its own row)",
        rim.all_light,
        rim.free_light
    );
    assert!(
        rim.seams < 700,
        "{} pixels marked near the band shaded behind glass within 4 r of the front glass \
         (617: a wider seam rule would take more; two of four neighbours: 1 025)",
        rim.seams
    );
    assert!(face > 25000, "the face on the glass: {face} px");
    assert!(
        stepped < 900,
        "{stepped} pixels of the face left out of its roughness by a step over 2 cm (661)"
    );
    assert!(
        roughness < 3.6e-5,
        "the face's smoothed depth: second differences {roughness:.3e} m (4.33e-5 with its \
         kernels stopped at its seams)"
    );
    assert!(
        crease.pixels > 500 && crease.pinholes < 5,
        "the top's first row above the face: {} px, {} pinholes",
        crease.pixels,
        crease.pinholes
    );
    assert!(
        crease.bias.abs() < 5e-4 && crease.nearer < 25 && crease.least > -0.012,
        "the top's first row above the face: smoothed - splatted {:.3e} m on average \
         (3.6e-4; 1.1e-3 with the fit held within its samples' range), {} px pulled \
         over 5 mm towards the eye (16; 20 with the seams inside the face and the pinhole), \
         the least {:.3e} m (-8.3e-3; -2.2e-2 the pinhole, -1.3e-2 a seam inside the face)",
        crease.bias,
        crease.nearer,
        crease.least
    );
    assert!(
        rim.tilt > 75.0,
        "the top 1.75-3 r off the glass leans {:.1} deg from the glass's normal (57 rounded)",
        rim.tilt
    );
}
