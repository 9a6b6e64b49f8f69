#version 330 core
// skybox: a full-screen triangle at the far plane; the view ray is rebuilt per pixel.
uniform mat4 inverse_view_projection;

out vec3 direction;

void main() {
    vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2)) * 2.0 - 1.0;
    vec4 far_point = inverse_view_projection * vec4(corner, 1.0, 1.0);
    vec4 near_point = inverse_view_projection * vec4(corner, -1.0, 1.0);
    direction = far_point.xyz / far_point.w - near_point.xyz / near_point.w;
    gl_Position = vec4(corner, 1.0, 1.0);
}
