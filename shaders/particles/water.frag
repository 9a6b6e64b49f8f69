#version 330 core
// water: transparent, its opacity and reflection rising with Fresnel's factor (Schlick, water's
// F0 = 0.02): the sky reflected, the water's own colour seen through, the sun's glint.
in vec3 world_position;
in vec3 world_normal;

uniform samplerCube sky;
uniform vec3 eye;
uniform vec3 sun_direction;
uniform vec3 sun_color;
uniform vec4 water_color; // rgb the water's colour, a its opacity seen from straight above

out vec4 color;

void main() {
    vec3 n = normalize(world_normal);
    vec3 v = normalize(eye - world_position);
    if (dot(n, v) < 0.0) n = -n;
    float facing = clamp(dot(n, v), 0.0, 1.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - facing, 5.0);
    vec3 r = reflect(-v, n);
    vec3 reflected = texture(sky, r).rgb;
    float glint = pow(max(dot(r, sun_direction), 0.0), 300.0) * 3.0
        + pow(max(dot(r, sun_direction), 0.0), 30.0) * 0.15;
    vec3 body = water_color.rgb * (0.35 + 0.65 * sun_color * max(dot(n, sun_direction), 0.0));
    vec3 shade = mix(body, reflected, fresnel) + sun_color * glint;
    color = vec4(shade, mix(water_color.a, 1.0, fresnel));
}
