// pool: tiled floor and walls (caustics under water, the sun above), the deck in stone fading
// into the horizon; seen from under water, the water between the eye and the point. With open
// edges there are no walls (from under water they show the water going on) and the deck,
// lowered to the rest level, is calm sea: the sky reflected by Fresnel over the floor continued.
// Patterns and the caustics are averaged over the pixel's footprint (`Footprint`).
in vec3 world;
in vec3 normal;

out vec4 color;

void main() {
    // Derivatives before any branch or discard (GLSL leaves them undefined in non-uniform
    // control flow; `open_sea` and `detail` are uniforms).
    Footprint here = Footprint(dFdx(world), dFdy(world));
    vec3 n = normalize(normal);
    vec3 incident = normalize(world - eye);
    // The open sea past the tile: the water there (the calm sea, with the fine detail) as the
    // tile's `surface` pass draws it (common.glsl `water_at`), and the footprints where its
    // refracted ray (or, from under water, the eye's) meets the floor continued.
    Water sea;
    Footprint through = here;
    Footprint beyond = here;
    if (open_sea == 1) {
        sea = water_at(world, vec3(0.0, 1.0, 0.0));
        vec3 sea_floor = floor_continued(world, sea.refracted);
        vec3 seen = floor_continued(eye, incident);
        through = Footprint(dFdx(sea_floor), dFdy(sea_floor));
        beyond = Footprint(dFdx(seen), dFdy(seen));
    }
    vec3 c;
    if (open_sea == 1) {
        if (abs(n.y) < 0.5) {
            // A wall's place: from above, nothing (the sea behind); from below, more water.
            if (!eye_under_water()) {
                discard;
            }
            c = open_water_ray(eye, incident, beyond);
        } else if (!inside_pool(world.xz + 1e-4 * n.xz) && world.y > -1e-4) {
            if (eye.y < 0.0) {
                c = WATER_COLOR;
            } else {
                // The calm sea, drawn as the tile is, so its outline does not show.
                c = water_from_above(sea, world, open_water_ray(world, sea.refracted, through),
                                     texture(sky, sea.reflected).rgb);
            }
        } else {
            c = lit(tile_albedo(world, n, here), world, n, here);
        }
    } else if (world.y >= rim_height - 1e-4 && !inside_pool(world.xz + 1e-4 * n.xz)) {
        // Stone slabs a tenth of the pool's side, dark joints between.
        float slab = 0.1 * pool_size;
        vec2 q = world.xz / slab;
        vec2 w = (abs(here.dx.xz) + abs(here.dy.xz)) / slab;
        float joint = grid_lines(q, w, 0.03);
        float shade = mix(hash(floor(q)), 0.5, smoothstep(0.5, 1.0, max(w.x, w.y)));
        vec3 stone = vec3(0.70, 0.67, 0.60) * (0.95 + 0.05 * shade) * (1.0 - 0.2 * joint);
        c = horizon_fog(lit(stone, world, n, here), world);
    } else {
        c = lit(tile_albedo(world, n, here), world, n, here);
    }
    if (eye_under_water()) {
        c = through_water(c, distance(eye, world));
    }
    color = vec4(c, 1.0);
}
