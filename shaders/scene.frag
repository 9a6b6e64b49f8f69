#version 330 core
// scene: surface_kind 0 lit solid (obstacles, container walls), 1 checkered floor, 2 unlit lines.
in vec3 world_position;
in vec3 world_normal;

uniform int surface_kind;
uniform vec4 base_color;
uniform vec3 sun_direction; // world space, towards the sun
uniform float checker_size; // m

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
    color = vec4(albedo * (0.35 + 0.2 * sky + 0.55 * diffuse), base_color.a);
}
