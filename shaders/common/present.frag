#version 330 core
// present: copies a colour texture to the output.
in vec2 uv;

uniform sampler2D color_texture;

out vec4 color;

void main() {
    color = texture(color_texture, uv);
}
