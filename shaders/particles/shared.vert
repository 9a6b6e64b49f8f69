#version 330 core
// particles drawn from the CUDA solver's arrays shared with GL (one point per particle, read
// through the drawing order as element indices): the geometry shader `shared.geom` makes the
// quad. Every particle has one colour and sprite (the GPU keeps no emission numbers); the
// opacity fades over the last `fade` seconds of `lifetime`, as `Fountain::alpha`.
layout(location = 0) in vec3 particle_position; // m
layout(location = 1) in vec3 particle_velocity; // m/s
layout(location = 2) in float particle_age;     // s

uniform vec4 shared_color; // rgb, a the opacity before the fade
uniform float lifetime;    // s
uniform float fade;        // s

out vec3 point_position;
out vec3 point_velocity;
out vec4 point_tint;

void main() {
    point_position = particle_position;
    point_velocity = particle_velocity;
    float alpha = clamp((lifetime - particle_age) / max(fade, 1e-6), 0.0, 1.0);
    point_tint = vec4(shared_color.rgb, shared_color.a * alpha);
    gl_Position = vec4(0.0, 0.0, 0.0, 1.0);
}
