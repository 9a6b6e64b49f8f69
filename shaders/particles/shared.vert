#version 330 core
// particles drawn from the CUDA solver's arrays shared with GL (one point per particle, read
// through the drawing order as element indices): the geometry shader `shared.geom` makes the
// quad. Each particle's colour and sprite come from its tag (its emission number) as on the
// CPU path (sprites.rs `particle_color`, `particle_sprite`, through textures.rs `hash`); the
// opacity fades over the last `fade` seconds of `lifetime`, as `Fountain::alpha`.
layout(location = 0) in vec3 particle_position; // m
layout(location = 1) in vec3 particle_velocity; // m/s
layout(location = 2) in float particle_age;     // s
layout(location = 3) in uint particle_tag;

uniform float lifetime;    // s
uniform float fade;        // s

out vec3 point_position;
out vec3 point_velocity;
out vec4 point_tint;
flat out float point_sprite;

// textures.rs `hash`: the same integer operations, in [0, 1).
float tag_hash(uint x, uint y) {
    uint h = (x * 374761393u) ^ (y * 668265263u);
    h = (h ^ (h >> 13)) * 1274126177u;
    return float(h ^ (h >> 16)) / 4294967296.0;
}

void main() {
    point_position = particle_position;
    point_velocity = particle_velocity;
    float a = tag_hash(particle_tag, 17u);
    float b = tag_hash(particle_tag, 91u);
    vec3 color = vec3(0.55, 0.78, 1.0) * (1.0 - a) + vec3(1.0) * a;
    float alpha = clamp((lifetime - particle_age) / max(fade, 1e-6), 0.0, 1.0);
    point_tint = vec4(color, (0.5 + 0.4 * b) * alpha);
    point_sprite = tag_hash(particle_tag, 5u) < 0.5 ? 1.0 : 0.0;
    gl_Position = vec4(0.0, 0.0, 0.0, 1.0);
}
