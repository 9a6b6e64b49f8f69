#version 330 core
// foam: one point sprite per diffuse particle (the `foam` stage's records).
layout(location = 0) in vec4 diffuse; // xyz position (m), w kind (0 spray, 1 foam, 2 bubble) + fade / 2

uniform mat4 view;
uniform mat4 projection;
uniform float sprite_radius;   // m
uniform float viewport_height; // px

out vec3 eye_center;
flat out float kind;
flat out float fade;

void main() {
    kind = floor(diffuse.w);
    fade = 2.0 * fract(diffuse.w);
    vec4 eye = view * vec4(diffuse.xyz, 1.0);
    eye_center = eye.xyz;
    gl_Position = projection * eye;
    // The projected diameter, as particle_sprite.vert; at least 2 px so distant spray shows.
    gl_PointSize = max(2.0, sprite_radius * viewport_height * projection[1][1] / max(gl_Position.w, 1e-4));
}
