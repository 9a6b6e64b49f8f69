#version 330 core
// caustics_view: the caustics texture itself over the viewport (the floor plane, x right,
// z up): black no light, grey 1 (calm water), white 2 and more.
in vec2 uv;

uniform sampler2D caustics;

out vec4 color;

void main() {
    // Level 0: the texture itself, not the mip chain the floor reads over its footprint.
    float value = textureLod(caustics, uv, 0.0).r;
    color = vec4(vec3(clamp(0.5 * value, 0.0, 1.0)), 1.0);
}
