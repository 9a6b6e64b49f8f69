#version 330 core
// scene: surface_kind 0 lit solid (obstacles, container walls), 1 checkered floor fading into
// the horizon, 2 unlit lines.
in vec3 world_position;
in vec3 world_normal;

uniform int surface_kind;
uniform vec4 base_color;
uniform vec3 sun_direction; // world space, towards the sun
uniform float checker_size; // m
uniform vec3 eye_position;  // world space
uniform vec3 fog_color;     // the sky at the horizon
uniform float fog_distance; // m at which the floor is 63 % fog

out vec4 color;

void main() {
    if (surface_kind == 2) {
        color = base_color;
        return;
    }
    vec3 albedo = base_color.rgb;
    if (surface_kind == 1) {
        vec2 cell = floor(world_position.xz / checker_size);
        albedo *= mod(cell.x + cell.y, 2.0) < 1.0 ? 1.0 : 0.8;
    }
    vec3 n = normalize(world_normal);
    float diffuse = abs(dot(n, sun_direction));
    float sky = 0.5 + 0.5 * n.y;
    vec3 lit = albedo * (0.35 + 0.2 * sky + 0.55 * diffuse);
    if (surface_kind == 1) {
        // The floor fades into the horizon instead of ending at an edge.
        float fog = 1.0 - exp(-distance(world_position, eye_position) / fog_distance);
        lit = mix(lit, fog_color, fog);
    }
    color = vec4(lit, base_color.a);
}
