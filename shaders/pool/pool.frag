// pool: tiled floor and walls (caustics under water, the sun above), the deck in stone fading
// into the horizon; seen from under water, the water between the eye and the point.
in vec3 world;
in vec3 normal;

uniform vec3 horizon;          // the sky's colour at the horizon

out vec4 color;

void main() {
    vec3 n = normalize(normal);
    vec3 c;
    if (world.y >= rim_height - 1e-4 && !inside_pool(world.xz + 1e-4 * n.xz)) {
        vec2 q = world.xz / (0.1 * pool_size);
        vec2 f = fract(q);
        float joint = 1.0 - step(0.03, f.x) * step(0.03, f.y);
        vec3 stone = vec3(0.70, 0.67, 0.60) * (0.95 + 0.05 * hash(floor(q))) * (1.0 - 0.2 * joint);
        c = lit(stone, world, n);
        float fog = 1.0 - exp(-distance(world, eye) / (6.0 * pool_size));
        c = mix(c, horizon, fog);
    } else {
        c = lit(tile_albedo(world, n), world, n);
    }
    if (eye_under_water()) {
        c = through_water(c, distance(eye, world));
    }
    color = vec4(c, 1.0);
}
