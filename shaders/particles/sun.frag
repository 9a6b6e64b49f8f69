#version 330 core
// sun: a sharp disc and a soft corona, added over the sky.
in vec3 direction;

uniform vec3 sun_direction; // towards the sun, normalised
uniform vec3 sun_color;
uniform float sun_radius;   // radians

out vec4 color;

void main() {
    vec3 d = normalize(direction);
    float cosine = dot(d, sun_direction);
    // The angle from the sun's centre, accurate near it (sine of small angles).
    float angle = cosine > 0.0 ? asin(min(length(cross(d, sun_direction)), 1.0)) : 3.1416;
    float disc = 1.0 - smoothstep(0.8 * sun_radius, sun_radius, angle);
    float corona = 0.6 * exp(-angle / (1.5 * sun_radius)) + 0.15 * exp(-angle / (8.0 * sun_radius));
    color = vec4(sun_color * (disc + corona), 1.0);
}
