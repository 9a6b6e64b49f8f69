#version 330 core
in vec3 eye_center;
in vec3 node_color;

uniform mat4 projection;
uniform float radius;
uniform vec3 light_direction; // eye space, towards the sun

out vec4 color;

void main() {
    if (radius <= 0.0) {
        color = vec4(node_color, 1.0);
        return;
    }
    vec2 offset = gl_PointCoord * 2.0 - 1.0;
    offset.y = -offset.y;
    float r2 = dot(offset, offset);
    if (r2 > 1.0) discard;
    vec3 normal = vec3(offset, sqrt(1.0 - r2));
    vec4 clip = projection * vec4(eye_center + normal * radius, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
    float diffuse = max(dot(normal, light_direction), 0.0);
    color = vec4(node_color * (0.35 + 0.65 * diffuse), 1.0);
}
