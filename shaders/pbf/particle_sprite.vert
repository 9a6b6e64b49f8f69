#version 330 core
// Shared by the sphere_depth, thickness and particles passes: one point sprite per particle,
// sized so that it covers the particle's sphere of radius `sprite_radius` in eye space.
layout(location = 0) in vec4 particle; // xyz position (m), w speed (m/s) or density (kg/m³)

uniform mat4 view;
uniform mat4 projection;
uniform float sprite_radius;   // m
uniform float viewport_height; // px

out vec3 eye_center;
out float scalar;

void main() {
    vec4 eye = view * vec4(particle.xyz, 1.0);
    eye_center = eye.xyz;
    scalar = particle.w;
    gl_Position = projection * eye;
    // Projected diameter in pixels: 2 r · (h / 2) · P[1][1] / w (w is the depth under a
    // perspective projection, 1 under the light's orthographic one).
    gl_PointSize = max(1.0, sprite_radius * viewport_height * projection[1][1] / max(gl_Position.w, 1e-4));
}
