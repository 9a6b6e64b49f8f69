#version 330 core
// Lambert + Blinn–Phong under the sun, the sky's light along the normal, optional fog into the
// sky's horizon; the base colour a tint times a texture or a procedural pattern.
in vec3 world_position;
in vec3 world_normal;
in vec2 uv;

uniform vec4 tint;
uniform int pattern;        // 0 plain, 1 texture, 2 floor tiles, 3 stone blocks
uniform sampler2D albedo;   // pattern 1
uniform samplerCube sky;
uniform vec2 uv_scale;
uniform vec3 eye;
uniform vec3 sun_direction; // towards the sun
uniform vec3 sun_color;
uniform float ambient;      // multiple of the sky's colour along the normal
uniform float gloss;        // specular strength
uniform float translucency; // light through a thin sheet lit from behind (the cloth)
uniform float fog_distance; // m; 0: no fog

out vec4 color;

float cell_hash(vec2 cell) {
    return fract(sin(dot(cell, vec2(12.9898, 78.233))) * 43758.5453);
}

float tiles(vec2 p) {
    vec2 f = fract(p);
    vec2 g = min(f, 1.0 - f);
    float grout = smoothstep(0.0, 0.035, min(g.x, g.y));
    return mix(0.55, 0.82 + 0.18 * cell_hash(floor(p)), grout);
}

float blocks(vec2 p) {
    // Staggered blocks twice as wide as high.
    return tiles(vec2(p.x * 0.5 + 0.5 * mod(floor(p.y), 2.0), p.y));
}

void main() {
    vec3 n = normalize(world_normal);
    vec3 to_eye = eye - world_position;
    float distance_to_eye = length(to_eye);
    vec3 v = to_eye / max(distance_to_eye, 1e-6);
    if (dot(n, v) < 0.0) n = -n; // two-sided (the cloth's back)
    vec3 base = tint.rgb;
    if (pattern == 1) base *= texture(albedo, uv * uv_scale).rgb;
    else if (pattern == 2) base *= tiles(uv * uv_scale);
    else if (pattern == 3) base *= blocks(uv * uv_scale);
    float facing = dot(n, sun_direction);
    float diffuse = max(facing, 0.0) + translucency * max(-facing, 0.0);
    vec3 h = normalize(sun_direction + v);
    float specular = gloss * pow(max(dot(n, h), 0.0), 40.0) * step(0.0, dot(n, sun_direction));
    // The sky's light from above the normal (the horizon itself is the mountains' dark).
    vec3 sky_light = texture(sky, normalize(n + vec3(0.0, 1.0, 0.0))).rgb;
    sky_light = mix(vec3(dot(sky_light, vec3(0.3333))), sky_light, 0.45);
    vec3 lit = base * (ambient * sky_light + sun_color * diffuse) + sun_color * specular;
    if (fog_distance > 0.0) {
        vec3 ray = -v;
        vec3 horizon = texture(sky, normalize(vec3(ray.x, 0.0, ray.z) + vec3(0.0, 0.002, 0.0))).rgb;
        lit = mix(lit, horizon, 1.0 - exp(-distance_to_eye / fog_distance));
    }
    color = vec4(lit, tint.a);
}
