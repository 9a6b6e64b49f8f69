#version 330 core
// particles from shared arrays: each point becomes the camera-facing quad `sprite.vert` makes
// (the same corners, in the same order), or for the lines view a line back along its velocity
// drawn as a quad `line_width` pixels wide.
layout(points) in;
layout(triangle_strip, max_vertices = 4) out;

in vec3 point_position[];
in vec3 point_velocity[];
in vec4 point_tint[];
flat in float point_sprite[];

uniform mat4 view;
uniform mat4 projection;
uniform float size;         // half-width, m
uniform float stretch;      // extra length per m/s of on-screen speed, s
uniform int lines;          // 1: draw lines
uniform float line_time;    // a line's length in seconds of flight
uniform vec2 pixel;         // one pixel in NDC (2 / viewport size)

out vec2 uv;
out vec4 tint;
flat out float sprite;

void main() {
    vec4 eye = view * vec4(point_position[0], 1.0);
    vec3 velocity = mat3(view) * point_velocity[0];
    if (lines == 1) {
        vec4 a = projection * eye;
        vec4 b = projection * vec4(eye.xyz - velocity * line_time, 1.0);
        vec2 d = b.xy / b.w - a.xy / a.w;
        vec2 across = length(d) > 1e-9 ? normalize(vec2(-d.y, d.x)) : vec2(1.0, 0.0);
        vec2 half_width = across * pixel * 0.5;
        for (int i = 0; i < 4; i++) {
            vec4 end = (i & 1) == 0 ? a : b;
            float side = (i >> 1) == 0 ? -1.0 : 1.0;
            uv = vec2(0.5);
            tint = point_tint[0];
            sprite = point_sprite[0];
            gl_Position = end + vec4(half_width * side * end.w, 0.0, 0.0);
            EmitVertex();
        }
        EndPrimitive();
        return;
    }
    float speed = length(velocity.xy);
    vec2 along = speed > 1e-4 ? velocity.xy / speed : vec2(0.0, 1.0);
    vec2 across = vec2(along.y, -along.x);
    for (int i = 0; i < 4; i++) {
        vec2 corner = vec2(float(i & 1), float((i >> 1) & 1));
        vec2 c = corner * 2.0 - 1.0;
        uv = corner;
        tint = point_tint[0];
        sprite = point_sprite[0];
        vec4 moved = eye;
        moved.xy += across * (c.x * size) + along * (c.y * size * (1.0 + stretch * speed));
        gl_Position = projection * moved;
        EmitVertex();
    }
    EndPrimitive();
}
