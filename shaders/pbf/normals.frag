#version 330 core
// normals: eye-space normals from the smoothed depth. Each pixel's eye-space position is
// reconstructed from its depth; along x and y the smaller of the two one-sided differences is
// used, so a depth discontinuity (silhouette, another layer) does not bend the normal.
in vec2 uv;

uniform sampler2D depth_texture;
uniform vec2 texel;            // 1 / viewport size
uniform vec2 projection_scale; // P[0][0], P[1][1]

out vec4 normal;

vec3 eye_position(vec2 at, float depth) {
    vec2 ndc = at * 2.0 - 1.0;
    return vec3(ndc * depth / projection_scale, -depth);
}

vec3 smaller_difference(vec3 center, vec2 step) {
    float depth_forward = texture(depth_texture, uv + step).r;
    float depth_backward = texture(depth_texture, uv - step).r;
    vec3 forward = eye_position(uv + step, depth_forward) - center;
    vec3 backward = center - eye_position(uv - step, depth_backward);
    if (depth_forward <= 0.0 && depth_backward <= 0.0) {
        // An isolated pixel: assume a surface facing the camera.
        return eye_position(uv + step, -center.z) - center;
    }
    bool use_forward = depth_backward <= 0.0
        || (depth_forward > 0.0 && abs(forward.z) < abs(backward.z));
    return use_forward ? forward : backward;
}

void main() {
    float depth = texture(depth_texture, uv).r;
    if (depth <= 0.0) {
        normal = vec4(0.0);
        return;
    }
    vec3 center = eye_position(uv, depth);
    vec3 along_x = smaller_difference(center, vec2(texel.x, 0.0));
    vec3 along_y = smaller_difference(center, vec2(0.0, texel.y));
    vec3 n = cross(along_x, along_y);
    float len = length(n);
    n = len > 0.0 ? n / len : vec3(0.0, 0.0, 1.0);
    normal = vec4(n, 1.0);
}
