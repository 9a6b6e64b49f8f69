//! Aliasing on the pool seen at grazing angles, through the headless EGL context (Mesa
//! llvmpipe in CI): the picture at a low resolution against the same picture rendered at four
//! times its resolution and box-downsampled (16 samples a pixel: what the pixel should show).
//! Their difference over the water is the aliasing energy: thin lines (the tiles' grout seen
//! through the water, the caustics on the floor) and glints (the fine-detail ripples) that a
//! pixel samples at one point instead of averaging what it covers, so they shimmer as the water
//! or the camera moves. The metric is `tests/support/pool_aliasing.rs` (`pool_render_strided.rs`
//! measures strided grids with it), the scene `tests/support/pool_scene.rs`; the open sea's edge
//! and an island's rock under the water are `tests/pool_render_edges.rs`'s.

#[path = "support/pool_aliasing.rs"]
mod pool_aliasing;
#[path = "support/pool_scene.rs"]
mod pool_scene;
#[path = "support/pool_waves.rs"]
mod pool_waves;

use fluidlab::gfx::camera::Camera;
use glam::Vec3;
use pool_aliasing::Measure;
use pool_scene::{aliasing, aliasing_drawn, render, render_from, Look, HEIGHT, WIDTH};

/// The reference's brightness spread over the water (0–255), measured with this renderer: calm
/// water, waves, waves with the fine detail.
const CALM_SPREAD: f64 = 41.5;
const WAVES_SPREAD: f64 = 38.0;
const DETAIL_SPREAD: f64 = 38.9;

/// The waves' aliasing allowed over the water and over its nearest sixth of rows (measured 12.79
/// and 5.07; one caustics lookup fails both, `one_caustics_lookup_fails_the_bounds`).
const WAVES: f64 = 14.0;
const NEAR_WAVES: f64 = 6.0;

/// The low picture keeps the reference's light (means within `tolerance` of it) and the
/// reference still shows the detail to filter (its spread at least 0.7 of `deviation`).
fn assert_content(m: &Measure, deviation: f64, tolerance: f64, what: &str) {
    let [low, reference] = m.means;
    println!(
        "{what}: mean {low:.1} (reference {reference:.1}), reference spread {:.2}",
        m.reference_deviation
    );
    assert!(
        (low - reference).abs() <= tolerance * reference,
        "{what}: mean brightness {low:.1} against the reference's {reference:.1}"
    );
    assert!(
        m.reference_deviation >= 0.7 * deviation,
        "{what}: the reference's spread {:.2} is under 0.7 of {deviation}: detail lost",
        m.reference_deviation
    );
}

/// Calm water: the floor's grout lines, seen through the water, and the walls' mirrored in it,
/// averaged over each pixel's footprint where they reach (measured 4.0 per pixel; 4.2 before
/// the far taps, 4.6 before the walls' top edge was filtered in the reflection, 11.7 when the
/// grout was a step function sampled at the pixel's centre).
#[test]
fn grout_seen_at_grazing_angles_is_filtered() {
    let m = aliasing(false, false);
    // Measured: 121.9 both.
    assert_content(&m, CALM_SPREAD, 0.02, "calm water");
    let a = m.aliasing;
    println!(
        "calm water: aliasing {a:.2} per pixel, waterline band {:.2}",
        m.waterline
    );
    assert!(a < 6.0, "aliasing {a:.2} per pixel");
    // Along the walls (the pixels within 2 cm of them, left out above): a far pixel's taps
    // held inside the pool (measured 7.1; 44.6 with taps past the walls shaded as the wall
    // lit by the sun, 13.1 before the taps).
    let band = m.waterline;
    assert!(
        band < 10.0,
        "the waterline band's aliasing {band:.2} per pixel"
    );
}

/// Waves 15 to 31 cm long: besides the grout, caustic lines on the floor (the caustics texture
/// mipmapped and looked up along the footprint of the refracted ray's end), the sun's glints (the
/// highlight widened by how much the reflected ray turns across the pixel) and, far away where
/// a pixel spans several of the surface's cells, the walls' top edge in the reflection (box-
/// filtered over the footprint of the reflected rays' ends on the walls' planes) and the
/// waves' normal, which far away a pixel sampled once, shaded at up to four taps over the
/// pixel's footprint on the surface (`surface.frag`): measured 12.79 with up to 4 caustics
/// lookups along the footprint (17.16 with one lookup, the bound's mutant; 27.1 before the
/// footprints, 21.2 before the walls' edge, 19.3 before the taps); with the fine detail 20.00
/// (21.70 with one lookup; 34.5, 25.9, 24.1). Over the farthest sixth of the water's rows 19.58
/// and 26.12 with the detail (19.08 and 24.19 with one lookup against its own, blurrier
/// reference, 22.13 and 26.01 against this one; 35.8 and 40.4 before the walls' edge, 26.8 and
/// 31.8 before the taps; averaging the normal over the footprint from a mipmapped slope texture
/// instead made it worse, 42.6: the mean normal is not the mean of what each normal shows),
/// over the nearest sixth 5.07 and 5.86 (7.29 and 7.13 with one lookup, which the bounds fail);
/// the near rows' brightness spread 31.52 and 30.98 with the detail (the reference's 30.03 and
/// 29.36), at least 1.03 of the reference's asserted (a blurring filter falls under it).
#[test]
fn caustics_and_glints_at_grazing_angles_are_filtered() {
    let (waves, detail) = (aliasing(true, false), aliasing(true, true));
    // Measured: the low picture 2.1 % brighter (111.6 against 109.3; 2.2 %, 112.1 against 109.7
    // with the fine detail; with one caustics lookup 2.6 % and 2.4 % against its own reference,
    // 3.3 % and 3.2 % against this one). Not the glints (without them the same) and mostly not
    // clipping: the caustics, read as their mean over the refracted rays' footprint on the
    // floor, where the pixel's rays, bent by the same waves that gather the light, land
    // unevenly (read at the texel each ray meets, the low picture is 0.08 % off its reference,
    // but aliases); 2.5 % allowed.
    assert_content(&waves, WAVES_SPREAD, 0.025, "waves");
    assert_content(&detail, DETAIL_SPREAD, 0.025, "fine detail");
    println!(
        "waves: far rows {:.2}, near rows {:.2}; with the fine detail {:.2}, {:.2}",
        waves.far, waves.near, detail.far, detail.near
    );
    println!(
        "waves: waterline band {:.2}; with the fine detail {:.2}",
        waves.waterline, detail.waterline
    );
    // The near rows, where a pixel spans under two cells and takes one tap: their aliasing
    // and their brightness spread as without the taps (a filter blurring the near water
    // lowers the spread towards the reference's and raises the aliasing). The spread's margin is
    // llvmpipe's (30.98 against 29.36 × 1.03 with the detail): another Mesa, or near rows
    // anti-aliased better, may move it; look at the picture before moving the bound. The
    // aliasing's bounds fail with one caustics lookup (7.29 and 7.13).
    for (m, near, what) in [
        (&waves, NEAR_WAVES, "waves"),
        (&detail, 6.6, "with the fine detail"),
    ] {
        let [low, reference] = m.near_deviations;
        println!("{what}: near rows' spread {low:.2} (reference {reference:.2})");
        assert!(
            low >= 1.03 * reference,
            "{what}: the near rows' spread {low:.2} is under 1.03 of the reference's \
             {reference:.2}: the detail near by blurred"
        );
        assert!(
            m.near < near,
            "{what}: the near rows' aliasing {:.2}",
            m.near
        );
    }
    // The waterline's band along the walls: a tap past a wall shades the wall's tile lit by
    // the sun, untinted, and sees the sky in the reflection. Measured 16.05 and 15.90 (15.82
    // with one caustics lookup against this reference; 16.49 and 16.31 when footprints that
    // cross from the floor to a wall took lookups along the jump, `caustic_at`: the bound
    // fails on that, 16.49 > 16.3).
    for (m, what) in [(&waves, "waves"), (&detail, "with the fine detail")] {
        assert!(
            m.waterline < 16.3,
            "{what}: the waterline band's aliasing {:.2}",
            m.waterline
        );
    }
    assert!(
        waves.far < 22.5,
        "waves: far rows' aliasing {:.2}",
        waves.far
    );
    // 26.12 (24.19 with one lookup against its own reference, 26.01 against the lookups').
    assert!(
        detail.far < 26.5,
        "with the fine detail: far rows' aliasing {:.2}",
        detail.far
    );
    let (waves, detail) = (waves.aliasing, detail.aliasing);
    println!("waves: aliasing {waves:.2} per pixel, with the fine detail {detail:.2}");
    assert!(waves < WAVES, "waves: aliasing {waves:.2} per pixel");
    assert!(
        detail < 21.5,
        "with the fine detail: aliasing {detail:.2} per pixel"
    );
}

/// `[light] far_taps = false` (the panel's "far taps" checkbox) draws the surface with the
/// program built without the taps: far pixels sampled once, as before the taps (far rows 25.41,
/// 19.58 with them), near rows as with them (5.07). Fails if the switch does not reach the
/// program drawn.
#[test]
fn far_taps_switched_off_sample_far_pixels_once() {
    let plain = aliasing_drawn(Look::new(true, false, false, false));
    println!(
        "without the far taps: far rows {:.2}, near rows {:.2}",
        plain.far, plain.near
    );
    assert!(
        plain.far > 24.0,
        "without the far taps the far rows' aliasing is {:.2}, as with them",
        plain.far
    );
    assert!(
        plain.near < NEAR_WAVES,
        "without the far taps: near rows' aliasing {:.2}",
        plain.near
    );
}

/// The bounds above hold the caustics' lookups along the footprint: the waves' picture with one
/// lookup (`look_caustics_up_at_most(1)`: the caustics read as before, by one `textureGrad`
/// filtering a square of the footprint's long side) against the same reference aliases more
/// than they allow: measured 19.18 over the water and 7.40 over the near rows (12.79 and 5.07
/// with the lookups).
#[test]
fn one_caustics_lookup_fails_the_bounds() {
    let once = aliasing_drawn(Look {
        lookups: 1,
        ..Look::new(true, false, true, false)
    });
    println!(
        "one caustics lookup: aliasing {:.2}, near rows {:.2}, far rows {:.2}, waterline {:.2}",
        once.aliasing, once.near, once.far, once.waterline
    );
    assert!(
        once.aliasing > WAVES + 3.0,
        "one lookup: aliasing {:.2}",
        once.aliasing
    );
    assert!(
        once.near > NEAR_WAVES + 1.0,
        "one lookup: near rows' aliasing {:.2}",
        once.near
    );
}

/// Straight down at the floor from 80 cm above it, under water: the floor plane faces the
/// picture, so every pixel's footprint on it is round (a pixel about a caustics texel).
fn head_on() -> Camera {
    Camera {
        target: Vec3::new(1.0, -1.0, 1.0),
        yaw: 30f32.to_radians(),
        pitch: 89f32.to_radians(),
        distance: 0.8,
    }
}

/// Blur is not how the lookups along the footprint lower the figures above: where a pixel's
/// footprint on the floor is round (the floor seen head-on from under water, the waves' caustic
/// lines on it sharp) `caustic_at` takes one lookup, and the picture is the single lookup's bit
/// for bit.
#[test]
fn a_caustic_seen_head_on_is_looked_up_once() {
    let look = Look::new(true, false, true, false);
    let along = render_from(&head_on(), WIDTH, HEIGHT, look);
    let once = render_from(&head_on(), WIDTH, HEIGHT, Look { lookups: 1, ..look });
    let green: Vec<u8> = along.pixels().map(|p| p[1]).collect();
    let (least, most) = (green.iter().min().unwrap(), green.iter().max().unwrap());
    let differing = along
        .pixels()
        .zip(once.pixels())
        .filter(|(a, b)| a != b)
        .count();
    println!("head on: green {least} to {most}, {differing} pixels differ from one lookup's");
    assert!(
        most - least > 100,
        "the caustic lines seen head on are not sharp: green {least} to {most}"
    );
    assert_eq!(differing, 0, "pixels differing from the single lookup's");
}

/// The test picture's rows (0 at the top) where every pixel over the water takes one far tap
/// (spans under `TAP_CELLS` of the mesh's cells): with and without the taps the 160×90 waves
/// picture differs in rows 14–41 only (measured on llvmpipe), so rows 42–89 are the near rows
/// the taps must leave alone.
const ONE_TAP_ROWS: std::ops::Range<u32> = 42..HEIGHT;

/// The near rows' bound that holds on any GL (the spread's 1.03 above is llvmpipe's margin):
/// where a pixel takes one tap the program with the far taps shades it as the program without
/// them, so the waves' picture's rows 42–89 drawn with and without the taps are equal within 1
/// of 255 a channel (two programs need not round alike: fused multiply-adds), with and without
/// the fine detail. Measured: equal bit for bit. A tap filter that blurs the near water fails
/// it whatever its spread: at least two taps a pixel (`n = max(far_tap_count(..), 2)` in
/// `surface.frag`) changes 4,138 of the rows' 7,680 pixels by up to 86 of 255 (without the
/// detail). Four renders at 160×90: a second or so on llvmpipe.
#[test]
fn one_tap_pixels_are_shaded_as_without_the_taps() {
    for detail in [false, true] {
        let with = render(WIDTH, HEIGHT, Look::new(true, detail, true, false));
        let without = render(WIDTH, HEIGHT, Look::new(true, detail, false, false));
        let (mut most, mut differing, mut rows_differing) = (0u8, 0usize, Vec::new());
        for y in 0..HEIGHT {
            let mut row = 0;
            for x in 0..WIDTH {
                let (a, b) = (with.get_pixel(x, y), without.get_pixel(x, y));
                let d = (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap_or(0);
                if d > 0 {
                    row += 1;
                    if ONE_TAP_ROWS.contains(&y) {
                        most = most.max(d);
                        differing += 1;
                    }
                }
            }
            if row > 0 {
                rows_differing.push(y);
            }
        }
        println!(
            "detail {detail}: rows differing {:?}–{:?}; rows {ONE_TAP_ROWS:?}: {differing} \
             pixels differ, by up to {most}",
            rows_differing.first(),
            rows_differing.last()
        );
        assert!(
            most <= 1,
            "detail {detail}: rows {ONE_TAP_ROWS:?} with the far taps differ from without by \
             up to {most} of 255 ({differing} pixels): one-tap pixels not shaded plainly"
        );
    }
}
