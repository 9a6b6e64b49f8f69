//! The pool's fine-detail ripples (the original's bump mapping) through the headless EGL
//! context (Mesa llvmpipe in CI): on an open sea they go on past the simulated tile, so its
//! outline does not show, and far away, where a pixel covers more than half a ripple's
//! wavelength, they fade out instead of aliasing into speckles.

use fluidlab::gfx::camera::Camera;
use fluidlab::gfx::capture::Image;
use fluidlab::gfx::headless::Headless;
use fluidlab::gfx::timing::PassClock;
use fluidlab::sims::pool::render::{DrawScene, PoolRenderer};
use glam::Vec3;

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;
const NODES: usize = 64;
const SIZE: f32 = 2.0;

/// Calm water on an open sea of a `size` m tile over a floor `depth` m down, drawn by the
/// renderer with or without the fine detail.
fn draw(camera: &Camera, size: f32, depth: f32, detail: bool) -> Image {
    let mut headless = Headless::new(WIDTH, HEIGHT).expect(
        "headless OpenGL (EGL) context; run scripts/setup.sh to install Mesa's EGL packages",
    );
    let mut renderer =
        PoolRenderer::new(headless.gl(), PassClock::Finish, NODES).expect("the pool renderer");
    renderer.upload(&vec![[0.0; 4]; NODES * NODES]);
    let scene = DrawScene {
        nodes: NODES,
        size,
        depth,
        light: Vec3::new(2.0, 2.0, -1.0).normalize().to_array(),
        detail,
        far_taps: true,
        view: 0,
        time: 0.3,
        open: true,
    };
    let image = headless
        .capture(|output| renderer.draw(camera, output, &scene))
        .expect("render without GL errors");
    renderer.delete();
    image
}

/// Calm water drawn by the renderer with and without the fine detail: the mean over a 9 × 9
/// pixel patch around each of `points` of |with − without| (summed over the colour channels).
fn detail_difference(camera: &Camera, points: &[Vec3]) -> Vec<f64> {
    let (with, without) = (
        draw(camera, SIZE, 1.0, true),
        draw(camera, SIZE, 1.0, false),
    );
    let clip = camera.projection(WIDTH as f32 / HEIGHT as f32) * camera.view();
    points
        .iter()
        .map(|&point| {
            let ndc = clip.project_point3(point);
            let px = ((ndc.x * 0.5 + 0.5) * WIDTH as f32) as u32;
            let py = ((0.5 - ndc.y * 0.5) * HEIGHT as f32) as u32;
            assert!(
                (4..WIDTH - 4).contains(&px) && (4..HEIGHT - 4).contains(&py),
                "{point} projects to ({px}, {py}), off the {WIDTH}×{HEIGHT} picture's interior"
            );
            let mut sum = 0.0;
            for y in py - 4..=py + 4 {
                for x in px - 4..=px + 4 {
                    let (a, b) = (with.get_pixel(x, y), without.get_pixel(x, y));
                    sum += (0..3)
                        .map(|c| (f64::from(a[c]) - f64::from(b[c])).abs())
                        .sum::<f64>();
                }
            }
            sum / 81.0
        })
        .collect()
}

/// Close to the tile's edge (x = 2 m) the ripples change the picture just past it, on the calm
/// sea the `pool` pass draws, as well as just inside, on the simulated surface (measured 24.8
/// and 13.2; before the tile and the sea shared `water_at` 24.8 and 13.8, once written the other
/// way round; 0 past it when only the `surface` pass drew them). The two 9 × 9 patches see the
/// ripples at different phases and angles: their ratio is no seam measure
/// (`the_sea_past_the_tile_is_the_tiles_water` is), so only a floor is asserted.
#[test]
fn the_ripples_go_on_past_the_open_seas_tile() {
    let camera = Camera {
        target: Vec3::new(SIZE, 0.0, 0.5 * SIZE),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let d = detail_difference(
        &camera,
        &[
            Vec3::new(SIZE - 0.08, 0.0, 0.5 * SIZE),
            Vec3::new(SIZE + 0.08, 0.0, 0.5 * SIZE),
        ],
    );
    println!("detail's change: inside {:.2}, outside {:.2}", d[0], d[1]);
    assert!(d[0] > 5.0, "the ripples show on the tile: {}", d[0]);
    assert!(
        d[1] > 0.5 * d[0],
        "past the tile {} against {} on it",
        d[1],
        d[0]
    );
}

/// Far away on the sea past the tile (8 m, seen 0.6° below the horizon: a pixel covers metres
/// of water, more than the 2–7 cm ripples' half-wavelength) the ripples fade out: the picture changes there much less
/// than close by, where they are resolved (measured 0.00 against 12.9; 6.6 without the fade, before the
/// sun's glints were filtered).
#[test]
fn far_ripples_fade_instead_of_speckling() {
    let close = Camera {
        target: Vec3::new(0.5 * SIZE, 0.0, 0.5 * SIZE),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let near = detail_difference(&close, &[close.target])[0];
    let low = Camera {
        pitch: 5f32.to_radians(),
        distance: 1.0,
        ..close
    };
    let forward = (low.target - low.eye()).with_y(0.0).normalize();
    let far = detail_difference(&low, &[low.target + 7.0 * forward])[0];
    println!("detail's change: near {near:.2}, far {far:.2}");
    assert!(near > 5.0, "the ripples show close by: {near}");
    assert!(far < 0.1 * near, "far {far} against {near} close by");
}

/// The calm sea past an open sea's tile (the `pool` pass) is the same water as the tile (the
/// `surface` pass: both shade it with water.glsl's `water_at` and `water_from_above`): the
/// strip 1.96–2.18 m, across the edge of a 2 m tile, against the same strip on a 2.2 m tile,
/// with the fine detail and its glints, over a floor too deep to show (whose tiles would
/// follow the pool's size; `the_floor_is_refracted_alike_on_the_tile_and_past_it` looks at
/// the floor). Over the whole strip, measured 1.62 per pixel (1.52 from 2.02 m; the horizon
/// fog's distance follows the pool's size too); 22.3 before the tile and the sea shared `water_at` (the tile
/// drawn without the sea's fog). A seam a pixel wide at the edge is lost in that mean, and
/// the strip began 2 cm past the edge: the strip is also taken in 1 cm bands across x, the
/// worst of which is bounded (a band is about 2.5 pixels wide here).
#[test]
fn the_sea_past_the_tile_is_the_tiles_water() {
    let camera = Camera {
        target: Vec3::new(2.1, 0.0, 1.0),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let (sea, tile) = (
        draw(&camera, SIZE, 50.0, true),
        draw(&camera, 1.1 * SIZE, 50.0, true),
    );
    const FROM: f32 = 1.96;
    const BANDS: usize = 22;
    let eye = camera.eye();
    let (mut sum, mut pixels) = (0.0, 0usize);
    let mut bands = [(0.0, 0usize); BANDS];
    // The strip the test once took (2.02–2.18 m).
    let mut past = (0.0, 0usize);
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let ray = camera
                .ray([x as f32 + 0.5, y as f32 + 0.5], [WIDTH, HEIGHT])
                .1;
            let hit = eye + ray * (-eye.y / ray.y.min(-1e-6));
            if !(FROM..2.18).contains(&hit.x) || !(0.05..1.95).contains(&hit.z) {
                continue;
            }
            let (a, b) = (sea.get_pixel(x, y), tile.get_pixel(x, y));
            let d = (0..3)
                .map(|c| (f64::from(a[c]) - f64::from(b[c])).abs())
                .sum::<f64>();
            let band = &mut bands[(((hit.x - FROM) / 0.01) as usize).min(BANDS - 1)];
            (band.0, band.1) = (band.0 + d, band.1 + 1);
            sum += d;
            pixels += 1;
            if hit.x >= 2.02 {
                (past.0, past.1) = (past.0 + d, past.1 + 1);
            }
        }
    }
    assert!(pixels > 2000, "only {pixels} pixels see the strip");
    let difference = sum / pixels as f64;
    let by_band: Vec<f64> = bands.iter().map(|&(s, n)| s / n.max(1) as f64).collect();
    let (worst, at) = by_band
        .iter()
        .enumerate()
        .map(|(k, &d)| (d, FROM + 0.01 * k as f32))
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
    println!(
        "the sea against the tile: {difference:.2} per pixel over {pixels} pixels (from 2.02 m: \
         {:.2}); worst 1 cm band {worst:.2} at x = {at:.2} m; bands {by_band:.1?}",
        past.0 / past.1.max(1) as f64
    );
    assert!(bands.iter().all(|&(_, n)| n > 40), "{bands:?}");
    assert!(difference < 4.0, "{difference:.2} per pixel");
    assert!(
        worst < 6.0,
        "{worst:.2} per pixel in the band at x = {at:.2} m"
    );
}

/// The floor seen through the calm water is refracted alike on the tile (`surface`) and on
/// the sea past it (`pool`): over a floor 1 m down, with no fine detail (flat water, whose
/// refracted rays are known), the pixels whose refracted ray meets the floor on a grout line
/// (the floor's tiles, 10 cm, continue past the pool) are darker than the others by about as
/// much in the strip 1.82–1.98 m on the tile as in 2.02–2.18 m past it. A ray that went on
/// unrefracted past the tile would put the grout elsewhere (tens of centimetres off at this
/// angle), and the contrast there would go.
#[test]
fn the_floor_is_refracted_alike_on_the_tile_and_past_it() {
    let camera = Camera {
        target: Vec3::new(2.0, 0.0, 1.0),
        yaw: 0.3,
        pitch: 50f32.to_radians(),
        distance: 0.6,
    };
    let (depth, tile) = (1.0, SIZE / 20.0);
    let picture = draw(&camera, SIZE, depth, false);
    let eye = camera.eye();
    // (grout, other) pixels' green: sum and count, on the tile and past it.
    let mut sums = [[(0.0, 0usize); 2]; 2];
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let ray = camera
                .ray([x as f32 + 0.5, y as f32 + 0.5], [WIDTH, HEIGHT])
                .1;
            let hit = eye + ray * (-eye.y / ray.y.min(-1e-6));
            let strip = match hit.x {
                x if (1.82..1.98).contains(&x) => 0,
                x if (2.02..2.18).contains(&x) => 1,
                _ => continue,
            };
            if !(0.05..1.95).contains(&hit.z) {
                continue;
            }
            let r = refract(ray, 1.0 / 1.333);
            let floor = hit + r * (depth / -r.y);
            let off_line = |v: f32| {
                let q = v / tile;
                (q - q.round()).abs() * tile
            };
            let near = off_line(floor.x).min(off_line(floor.z));
            let class = match near {
                d if d < 0.002 => 0,
                d if d > 0.008 => 1,
                _ => continue,
            };
            let s = &mut sums[strip][class];
            (s.0, s.1) = (s.0 + f64::from(picture.get_pixel(x, y)[1]), s.1 + 1);
        }
    }
    let contrast = |strip: usize| {
        let mean = |(s, n): (f64, usize)| s / n.max(1) as f64;
        assert!(sums[strip].iter().all(|&(_, n)| n > 40), "{sums:?}");
        mean(sums[strip][1]) - mean(sums[strip][0])
    };
    let (on, past) = (contrast(0), contrast(1));
    println!("the grout's contrast (green): on the tile {on:.2}, past it {past:.2}; {sums:?}");
    assert!(on > 8.0, "the grout shows on the tile: {on:.2}");
    assert!(
        past > 0.6 * on && past < 1.5 * on,
        "past the tile {past:.2} against {on:.2} on it"
    );
}

/// `incident` refracted into water through a level surface (ratio of indices `eta`).
fn refract(incident: Vec3, eta: f32) -> Vec3 {
    let n = Vec3::Y;
    let cos = -incident.dot(n);
    let k = 1.0 - eta * eta * (1.0 - cos * cos);
    eta * incident + (eta * cos - k.sqrt()) * n
}
