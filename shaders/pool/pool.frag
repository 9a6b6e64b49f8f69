// pool: tiled floor and walls (caustics under water, the sun above), the deck in stone fading
// into the horizon; seen from under water, the water between the eye and the point. With open
// edges there are no walls (from under water they show the water going on) and the deck,
// lowered to the rest level, is calm sea: the sky reflected by Fresnel over the floor continued.
in vec3 world;
in vec3 normal;

uniform vec3 horizon;          // the sky's colour at the horizon

out vec4 color;

void main() {
    // Derivatives before any branch or discard (GLSL leaves them undefined in non-uniform
    // control flow).
    float footprint = length(fwidth(world.xz));
    vec3 n = normalize(normal);
    vec3 c;
    if (open_sea == 1) {
        vec3 incident = normalize(world - eye);
        if (abs(n.y) < 0.5) {
            // A wall's place: from above, nothing (the sea behind); from below, more water.
            if (!eye_under_water()) {
                discard;
            }
            c = open_water_ray(eye, incident);
        } else if (!inside_pool(world.xz + 1e-4 * n.xz) && world.y > -1e-4) {
            if (eye.y < 0.0) {
                c = WATER_COLOR;
            } else {
                // The calm sea with the tile's fine-detail ripples, so its outline does not show.
                vec3 up = vec3(0.0, 1.0, 0.0);
                if (detail == 1) {
                    vec2 slope = detail_slope(world.xz, footprint);
                    up = normalize(vec3(-slope.x, 1.0, -slope.y));
                }
                vec3 reflected = reflect(incident, up);
                reflected.y = abs(reflected.y);
                vec3 refracted = refract(incident, up, IOR_AIR / IOR_WATER);
                c = mix(open_water_ray(world, refracted), texture(sky, reflected).rgb,
                        schlick(-dot(incident, up)));
                float sun = pow(max(dot(reflected, light), 0.0), 1200.0);
                c += vec3(1.0, 0.95, 0.85) * 8.0 * sun * schlick(-dot(incident, up));
                float fog = 1.0 - exp(-distance(world, eye) / (6.0 * pool_size));
                c = mix(c, horizon, fog);
            }
        } else {
            c = lit(tile_albedo(world, n), world, n);
        }
    } else if (world.y >= rim_height - 1e-4 && !inside_pool(world.xz + 1e-4 * n.xz)) {
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
