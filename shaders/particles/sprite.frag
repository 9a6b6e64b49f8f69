#version 330 core
// particles: the sprite's texel times the particle's colour and opacity.
in vec2 uv;
in vec4 tint;
flat in float sprite;

uniform sampler2D sprites; // the two sprites side by side
uniform int lines;

out vec4 color;

void main() {
    vec4 texel = lines == 1 ? vec4(1.0) : texture(sprites, vec2((uv.x + sprite) * 0.5, uv.y));
    color = tint * texel;
}
