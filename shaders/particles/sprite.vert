#version 330 core
// particles: each particle a camera-facing quad (parallel to the view plane), stretched along
// its velocity as seen on the screen; or, for the lines view, a line back along its velocity.
layout(location = 0) in vec4 particle_position; // xyz m, w the sprite (0 or 1)
layout(location = 1) in vec4 particle_velocity; // xyz m/s
layout(location = 2) in vec4 particle_color;    // rgb, a the opacity (fade included)

uniform mat4 view;
uniform mat4 projection;
uniform float size;      // half-width, m
uniform float stretch;   // extra length per m/s of on-screen speed, s
uniform int lines;       // 1: draw lines
uniform float line_time; // a line's length in seconds of flight

out vec2 uv;
out vec4 tint;
flat out float sprite;

void main() {
    tint = particle_color;
    sprite = particle_position.w;
    vec4 eye = view * vec4(particle_position.xyz, 1.0);
    vec3 velocity = mat3(view) * particle_velocity.xyz;
    if (lines == 1) {
        uv = vec2(0.5);
        if (gl_VertexID == 1) eye.xyz -= velocity * line_time;
        gl_Position = projection * eye;
        return;
    }
    vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
    uv = corner;
    vec2 c = corner * 2.0 - 1.0;
    float speed = length(velocity.xy);
    vec2 along = speed > 1e-4 ? velocity.xy / speed : vec2(0.0, 1.0);
    vec2 across = vec2(along.y, -along.x);
    eye.xy += across * (c.x * size) + along * (c.y * size * (1.0 + stretch * speed));
    gl_Position = projection * eye;
}
