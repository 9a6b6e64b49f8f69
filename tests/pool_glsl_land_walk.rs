//! `shaders/pool/land_search.glsl`'s walk (`land_along`) run on the GL (headless EGL, Mesa
//! llvmpipe in CI) against the search of 12 samples it replaced and a dense reference: it keeps
//! that search's hits, finds the land it stepped over, and ends on land.

#[path = "support/glsl_draw.rs"]
mod glsl_draw;
#[path = "support/pool_rock.rs"]
mod pool_rock;
use glsl_draw::draw;
use pool_rock::{rock_scene, ROCK_NODES, ROCK_SIZE};

/// With `rays` 0, pixel (x, y) of 64 × 64: ray (x, y), from 1 cm under the rest level at
/// ((x, y) + 0.5)·size/64, level along angle 0.7·x + 1.3·y (every 8th row: a multiple of π/4, so
/// some rays run within 1e-7 of an axis, `land_along`'s `safe` path), 3° to 19° down. Red 1
/// where `land_along` and `old_land_along` (the search of 12 samples before the land tiles,
/// 4e0f976's `land_along` verbatim) agree: both meet no land, or both meet it at the same bits
/// of t; 0.75 where `land_along` meets land the old search does not; 0.5 where it meets land
/// before the old search's end; 0 else. Green 1 where `land_along`'s end is no later than the
/// first of 2048 samples over the land's bounds that reaches land (or none does), within the
/// old search's precision (its samples' spacing / 256), and, where it meets land, its end is on
/// land (the flag there at least ½ − 1/256); 0.5 where its end is no later but off land; 0 where
/// it is later. Blue 1 where `land_along` meets land.
/// With `rays` 1, pixel i: ray i, from 1 cm under the rest level at x = 0.1 + 0.011·i m,
/// z = 0.3 + 0.1·i m, along x, 1.1° down: red 1 where `land_along` meets land, green its end's
/// distance past `shore` in cells, ×8 + 0.5, blue 1 where `old_land_along` meets land.
const RAYS_FRAGMENT: &str = concat!(
    "#version 330 core\n#define FRAGMENT_SHADER\n#define POOL_LAND\n",
    include_str!("../shaders/pool/common.glsl"),
    include_str!("../shaders/pool/land_search.glsl"),
    include_str!("../shaders/pool/water.glsl"),
    "uniform float shore;\n",
    "uniform int rays;\n",
    "bool old_land_along(vec3 o, vec3 d, float t_end, out float t_hit) {\n",
    "    if (has_land == 0) {\n",
    "        return false;\n",
    "    }\n",
    "    vec4 bounds = land_bounds * spacing();\n",
    "    vec2 safe = vec2(abs(d.x) < 1e-7 ? 1e-7 : d.x, abs(d.z) < 1e-7 ? 1e-7 : d.z);\n",
    "    vec2 to_low = (bounds.xy - o.xz) / safe;\n",
    "    vec2 to_high = (bounds.zw - o.xz) / safe;\n",
    "    vec2 enter = min(to_low, to_high);\n",
    "    vec2 leave = max(to_low, to_high);\n",
    "    float first = max(max(enter.x, enter.y), 0.0);\n",
    "    float last = min(min(leave.x, leave.y), t_end);\n",
    "    if (first >= last) {\n",
    "        return false;\n",
    "    }\n",
    "    const int STEPS = 12;\n",
    "    for (int i = 1; i <= STEPS; ++i) {\n",
    "        float t = mix(first, last, float(i) / float(STEPS));\n",
    "        if (surface_at((o + d * t).xz).w > 0.5) {\n",
    "            float water = mix(first, last, float(i - 1) / float(STEPS));\n",
    "            for (int k = 0; k < 8; ++k) {\n",
    "                float mid = 0.5 * (water + t);\n",
    "                if (surface_at((o + d * mid).xz).w > 0.5) {\n",
    "                    t = mid;\n",
    "                } else {\n",
    "                    water = mid;\n",
    "                }\n",
    "            }\n",
    "            t_hit = t;\n",
    "            return true;\n",
    "        }\n",
    "    }\n",
    "    return false;\n",
    "}\n",
    "// The first of `samples` over the land's bounds that reaches land, as old_land_along.\n",
    "bool dense_land_along(vec3 o, vec3 d, float t_end, int samples, out float t_hit, out float span) {\n",
    "    vec4 bounds = land_bounds * spacing();\n",
    "    vec2 safe = vec2(abs(d.x) < 1e-7 ? 1e-7 : d.x, abs(d.z) < 1e-7 ? 1e-7 : d.z);\n",
    "    vec2 to_low = (bounds.xy - o.xz) / safe;\n",
    "    vec2 to_high = (bounds.zw - o.xz) / safe;\n",
    "    float first = max(max(min(to_low, to_high).x, min(to_low, to_high).y), 0.0);\n",
    "    float last = min(min(max(to_low, to_high).x, max(to_low, to_high).y), t_end);\n",
    "    span = last - first;\n",
    "    for (int i = 1; i <= samples && first < last; ++i) {\n",
    "        float t = mix(first, last, float(i) / float(samples));\n",
    "        if (surface_at((o + d * t).xz).w > 0.5) {\n",
    "            t_hit = t;\n",
    "            return true;\n",
    "        }\n",
    "    }\n",
    "    return false;\n",
    "}\n",
    "out vec4 color;\n",
    "void main() {\n",
    "    vec2 pixel = floor(gl_FragCoord.xy);\n",
    "    vec3 face;\n",
    "    float t = -1.0;\n",
    "    float old_t = -1.0;\n",
    "    if (rays == 1) {\n",
    "        vec3 o = vec3(0.1 + 0.011 * pixel.x, -0.01, 0.3 + 0.1 * pixel.x);\n",
    "        vec3 d = normalize(vec3(1.0, -0.02, 0.0));\n",
    "        float t_end = exit_box(o, d, 1e-3, face);\n",
    "        bool hit = land_along(o, d, t_end, t);\n",
    "        bool old_hit = old_land_along(o, d, t_end, old_t);\n",
    "        float off = hit ? ((o + d * t).x - shore) / spacing() : 0.0;\n",
    "        color = vec4(hit ? 1.0 : 0.0, 8.0 * off + 0.5, old_hit ? 1.0 : 0.0, 1.0);\n",
    "        return;\n",
    "    }\n",
    "    vec3 o = vec3((pixel.x + 0.5) / 64.0 * pool_size, -0.01, (pixel.y + 0.5) / 64.0 * pool_size);\n",
    "    float a = int(pixel.y) % 8 == 0 ? float(int(pixel.x) % 8) * 0.78539816 : 0.7 * pixel.x + 1.3 * pixel.y;\n",
    "    float down = 0.05 + 0.28 * fract(0.37 * pixel.x + 0.11 * pixel.y);\n",
    "    vec3 d = normalize(vec3(cos(a), -down, sin(a)));\n",
    "    float t_end = exit_box(o, d, 1e-3, face);\n",
    "    bool hit = land_along(o, d, t_end, t);\n",
    "    bool old_hit = old_land_along(o, d, t_end, old_t);\n",
    "    float dense_t, span;\n",
    "    bool dense_hit = dense_land_along(o, d, t_end, 2048, dense_t, span);\n",
    "    bool same = hit == old_hit && (!hit || floatBitsToUint(t) == floatBitsToUint(old_t));\n",
    "    float kind = same ? 1.0 : (hit && !old_hit ? 0.75 : (hit && t < old_t ? 0.5 : 0.0));\n",
    "    bool dense_ok = !dense_hit || (hit && t <= dense_t + span / 3072.0);\n",
    "    bool on_land = !hit || surface_at((o + d * t).xz).w >= 0.5 - 1.0 / 256.0;\n",
    "    color = vec4(kind, dense_ok ? (on_land ? 1.0 : 0.5) : 0.0, hit ? 1.0 : 0.0, 1.0);\n",
    "}\n",
);

/// The walk finds the land the search of 12 samples found where that found it, bit for bit,
/// finds the land it stepped over, and steps over none: 4,096 rays in every direction, on
/// three grids: 64 nodes (the last tile runs past the pool) with a shore along the far edge, an
/// island, a line of land one node wide and a node in a corner; 65 nodes (64 cells, the pool
/// ends on a tile's edge) and 42 nodes (the last tile one cell wide) with shores along the
/// x = 0 and z = 0 walls and single nodes on tiles' corners and edges. Every ray ends where
/// `old_land_along` (the search before, verbatim) ends it, bit for bit, or meets land it does
/// not meet or meets it earlier (land its samples stepped over: the lines and single nodes),
/// and no ray ends past the first of 2,048 samples along it that reaches land. Measured on
/// llvmpipe: 0 rays wrong on each grid; see the test's output for the rays that meet land the
/// old search stepped over. The old search itself (`land_along` = `old_land_along`) ends rays
/// past the 2,048 samples' first land: FAIL; so does the walk's mutant whose cells skip
/// corners' land (`any(greaterThan(corners, vec4(0.0)))` false). Every ray that meets land
/// ends on it (the flag there at least ½ − 1/256): the mutant that takes a cell's greatest flag
/// over ¼ for land (`most > 0.25`) ends 148, 127 and 258 rays off land: FAIL.
#[test]
fn the_walk_finds_the_land_the_samples_found_and_what_they_stepped_over() {
    type Land = fn(usize, usize) -> bool;
    let grids: [(usize, Land); 3] = [
        (64, |i, j| {
            let disc = (i as f32 - 30.0).powi(2) + (j as f32 - 25.0).powi(2) < 81.0;
            disc || (i == 48 && (10..40).contains(&j)) || j >= 62 || (i == 0 && j == 0)
        }),
        (65, |i, j| {
            let disc = (i as f32 - 40.0).powi(2) + (j as f32 - 36.0).powi(2) < 49.0;
            disc || i <= 1
                || j == 0
                || (i, j) == (24, 48)
                || (i, j) == (56, 20)
                || (i, j) == (64, 64)
        }),
        (42, |i, j| {
            i == 0
                || j <= 1
                || (i, j) == (16, 16)
                || (i, j) == (8, 28)
                || (i, j) == (41, 41)
                || (i == 30 && (20..36).contains(&j))
        }),
    ];
    let mut failed = Vec::new();
    for (n, land) in grids {
        let texels: Vec<f32> = (0..n * n)
            .flat_map(|k| [0.0, 0.0, 0.0, if land(k % n, k / n) { 1.0 } else { 0.0 }])
            .collect();
        let image = draw(64, 64, RAYS_FRAGMENT, |gl, program| {
            rock_scene(gl, program, &texels, glam::Vec3::Y, 0.0);
            program.uniform(gl, "rays").expect("rays").set(gl, 0);
        });
        let kind = |p: &[u8; 3], want: u8| p[0].abs_diff(want) < 8;
        let pixels: Vec<[u8; 3]> = image.pixels().map(|p| [p[0], p[1], p[2]]).collect();
        let met = pixels.iter().filter(|p| p[2] == 255).count();
        let same = pixels.iter().filter(|p| kind(p, 255)).count();
        let found = pixels.iter().filter(|p| kind(p, 191)).count();
        let earlier = pixels.iter().filter(|p| kind(p, 128)).count();
        let wrong = pixels.iter().filter(|p| kind(p, 0)).count();
        let past_land = pixels.iter().filter(|p| p[1] < 64).count();
        let off_land = pixels.iter().filter(|p| (64..192).contains(&p[1])).count();
        println!(
            "{n} nodes: {same} of 4096 rays end where the 12 samples end them, bit for bit; {found} meet land they miss, {earlier} meet it before their end; {wrong} otherwise; {past_land} end past the 2048 samples' first land; {off_land} end off land ({met} meet land)"
        );
        if wrong > 0 || past_land > 0 || off_land > 0 || met < 1000 {
            failed.push((n, wrong, past_land, off_land, met));
        }
    }
    assert!(
        failed.is_empty(),
        "(nodes, rays wrong, rays past the dense samples' land, rays ending off land, rays \
         meeting land): {failed:?}"
    );
}

/// A line of land one node wide (column 40 of 64: its flag over a half one cell wide) beyond
/// open water from a shore along the x = 0 wall, under 16 almost level rays (1.1° down) from
/// beside the shore: the walk meets it, on its near side (within 0.03 of a cell of its
/// contour). The search before (`old_land_along`, 12 samples over the land's bounds, here
/// x from −1 to 41 nodes: 2.7 to 3.2 cells apart) steps over it: it meets no land with any of
/// the 16, which run on 23.5 cells past the line to the far wall (FAIL with `land_along` the
/// old search).
#[test]
fn a_line_of_land_one_node_wide_is_not_stepped_over() {
    const RAYS: u32 = 16;
    let n = ROCK_NODES as usize;
    let texels: Vec<f32> = (0..n * n)
        .flat_map(|k| {
            let i = k % n;
            [0.0, 0.0, 0.0, if i <= 1 || i == 40 { 1.0 } else { 0.0 }]
        })
        .collect();
    let h = ROCK_SIZE / (ROCK_NODES - 1) as f32;
    let contour = (40.0 - 0.5) * h;
    let image = draw(RAYS, 1, RAYS_FRAGMENT, |gl, program| {
        rock_scene(gl, program, &texels, glam::Vec3::Y, contour);
        program.uniform(gl, "rays").expect("rays").set(gl, 1);
    });
    let (mut met, mut old_met, mut worst) = (0, 0, 0.0f64);
    for i in 0..RAYS {
        let p = image.get_pixel(i, 0);
        if p[2] == 255 {
            old_met += 1;
        }
        if p[0] == 255 {
            met += 1;
            worst = f64::max(worst, ((f64::from(p[1]) / 255.0 - 0.5) / 8.0).abs());
        }
    }
    println!("a line one node wide: {met} of {RAYS} rays meet it (the 12 samples: {old_met}), their ends within {worst:.3} cells of its contour");
    assert_eq!(met, RAYS, "rays that meet the line");
    assert!(worst < 0.03, "ends {worst:.3} cells off the line's contour");
}
