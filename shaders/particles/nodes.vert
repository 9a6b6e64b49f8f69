#version 330 core
// nodes, springs: spring-mass nodes (or the basin's) as sphere sprites, springs as lines, each
// with its own colour.
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 vertex_color;

uniform mat4 view;
uniform mat4 projection;
uniform float radius;          // m; 0: lines
uniform float viewport_height; // px

out vec3 eye_center;
out vec3 node_color;

void main() {
    vec4 eye = view * vec4(position, 1.0);
    eye_center = eye.xyz;
    node_color = vertex_color;
    gl_Position = projection * eye;
    gl_PointSize = max(2.0, radius * viewport_height * projection[1][1] / max(-eye.z, 1e-4));
}
