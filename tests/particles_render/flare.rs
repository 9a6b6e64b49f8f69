//! The lens flare lies on the sun–centre line and vanishes with the sun behind the camera or
//! behind the cloth; looking into the sun whitens the picture.

use super::*;
use fluidlab::sims::particles::render::{BURSTS, HALOS};

fn sun_ndc(camera: &Camera, sun: Vec3) -> Option<Vec2> {
    let aspect = WIDTH as f32 / HEIGHT as f32;
    render::sun_on_screen(camera.view(), camera.projection(aspect), sun)
}

fn luminance(image: &Image, x: u32, y: u32) -> f32 {
    let p = image.get_pixel(x.min(WIDTH - 1), y.min(HEIGHT - 1));
    (p[0] as f32 + p[1] as f32 + p[2] as f32) / 3.0
}

/// The mean brightening of `on` over `off` in the 3 × 3 pixels around `at`.
fn brightening(on: &Image, off: &Image, at: Vec2) -> f32 {
    let mut sum = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            let (x, y) = ((at.x as i32 + dx) as u32, (at.y as i32 + dy) as u32);
            sum += luminance(on, x, y) - luminance(off, x, y);
        }
    }
    sum / 9.0
}

/// A camera near the cloth scene looking `yaw` and `pitch` (radians) off the sun.
fn off_the_sun(sun: Vec3, yaw: f32, pitch: f32) -> Camera {
    let d = glam::Quat::from_rotation_y(yaw) * sun;
    let d = Vec3::new(d.x, d.y + pitch, d.z);
    looking(Vec3::new(0.0, 1.5, 8.0), d)
}

#[test]
fn the_flare_lies_on_the_sun_centre_line_and_nowhere_else() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    let camera = off_the_sun(sun, 0.35, -0.15);
    let at = sun_ndc(&camera, sun).expect("the sun in the picture");
    assert!(at.length() > 0.4 && at.length() < 0.9, "the sun at {at}");
    let (on, off) = fixture.with_and_without_flare(&camera);
    let aspect = WIDTH as f32 / HEIGHT as f32;
    let elements: Vec<_> = HALOS.iter().chain(&BURSTS).collect();
    // Filled elements (glows, hexagons) off the sun brighten their centres.
    let mut checked = 0;
    for e in elements
        .iter()
        .filter(|e| e.distance > 0.0 && e.tile != 1 && e.tile != 3)
    {
        let center = render::element_center(at, e);
        let gain = brightening(&on, &off, to_pixel(center));
        assert!(
            gain > 8.0,
            "element at distance {} brightened by {gain}",
            e.distance
        );
        checked += 1;
    }
    assert!(checked >= 3);
    // Outside every element's quad the picture is untouched.
    let mut outside = 0;
    for y in (0..HEIGHT).step_by(3) {
        for x in (0..WIDTH).step_by(3) {
            let ndc = Vec2::new(
                (x as f32 + 0.5) / WIDTH as f32 * 2.0 - 1.0,
                1.0 - (y as f32 + 0.5) / HEIGHT as f32 * 2.0,
            );
            let covered = elements.iter().any(|e| {
                let d = (ndc - render::element_center(at, e)).abs();
                d.x <= e.size / aspect + 0.02 && d.y <= e.size + 0.02
            });
            if !covered {
                outside += 1;
                assert_eq!(on.get_pixel(x, y), off.get_pixel(x, y), "pixel ({x}, {y})");
            }
        }
    }
    assert!(outside > 500, "only {outside} pixels off the flare");
}

#[test]
fn no_flare_with_the_sun_behind_the_camera() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    let camera = looking(Vec3::new(0.0, 1.5, 8.0), Vec3::new(-sun.x, 0.1, -sun.z));
    assert_eq!(sun_ndc(&camera, sun), None);
    let (on, off) = fixture.with_and_without_flare(&camera);
    assert_eq!(largest_difference(&on, &off), 0);
    let passes: Vec<_> = fixture
        .sim
        .pass_times()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(!passes.contains(&"flare"), "{passes:?}");
}

#[test]
fn no_flare_with_the_sun_behind_the_cloth_and_one_without_the_cloth() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    // From 3 m in front of the cloth's middle, looking at the sun through it.
    let middle = fixture.body().position.iter().copied().sum::<Vec3>() / 144.0;
    let d = glam::Quat::from_rotation_y(0.15) * sun;
    let camera = looking(middle - sun * 3.0, d);
    let at = sun_ndc(&camera, sun).expect("the sun in the picture");
    assert!(at.length() > 0.12 && at.length() < 0.5, "{at}");
    let (on, off) = fixture.with_and_without_flare(&camera);
    assert_eq!(
        largest_difference(&on, &off),
        0,
        "the flare shows through the cloth"
    );
    // The same view with the cloth out of the way: the flare (and the glare) appear.
    fixture
        .body()
        .position
        .iter_mut()
        .for_each(|p| *p += Vec3::new(0.0, 400.0, 0.0));
    let (on, off) = fixture.with_and_without_flare(&camera);
    let e = &HALOS[3];
    let gain = brightening(&on, &off, to_pixel(render::element_center(at, e)));
    assert!(gain > 8.0, "unoccluded, the flare brightened by {gain}");
}

#[test]
fn looking_into_the_sun_whitens_the_picture() {
    let mut fixture = Fixture::open(CLOTH);
    let sun = fixture.sun();
    let camera = looking(Vec3::new(0.0, 1.5, 8.0), sun);
    let at = sun_ndc(&camera, sun).expect("the sun in the picture");
    assert!(at.length() < 0.01);
    let (on, off) = fixture.with_and_without_flare(&camera);
    let mean = |image: &Image| {
        image
            .pixels()
            .map(|p| (p[0] as f64 + p[1] as f64 + p[2] as f64) / 3.0)
            .sum::<f64>()
            / (WIDTH * HEIGHT) as f64
    };
    let darkest = on.pixels().map(|p| p[0].min(p[1]).min(p[2])).min().unwrap();
    assert!(
        mean(&on) > mean(&off) + 60.0,
        "{} vs {}",
        mean(&on),
        mean(&off)
    );
    // Every pixel at least 0.85 white: the overlay's opacity with the sun at the centre.
    assert!(darkest as f32 >= 255.0 * 0.85 * 0.99, "darkest {darkest}");
}
