#version 330 core
// debug_view: shows one intermediate buffer of the fluid passes.
//   buffer_kind 0: a depth buffer (near = white, far = dark, no fluid = black)
//   buffer_kind 1: thickness (1 − exp(−thickness / scale))
//   buffer_kind 2: eye-space normals as colour (n · 0.5 + 0.5)
in vec2 uv;

uniform sampler2D buffer_texture;
uniform int buffer_kind;
uniform vec2 depth_range;       // eye depths mapped to white and black
uniform float thickness_scale;  // m

out vec4 color;

void main() {
    vec4 value = texture(buffer_texture, uv);
    if (buffer_kind == 0) {
        float gray = value.r <= 0.0 ? 0.0
            : mix(1.0, 0.15, clamp((value.r - depth_range.x) / (depth_range.y - depth_range.x), 0.0, 1.0));
        color = vec4(vec3(gray), 1.0);
    } else if (buffer_kind == 1) {
        color = vec4(vec3(1.0 - exp(-value.r / thickness_scale)), 1.0);
    } else {
        color = value.a > 0.0 ? vec4(value.xyz * 0.5 + 0.5, 1.0) : vec4(0.0, 0.0, 0.0, 1.0);
    }
}
