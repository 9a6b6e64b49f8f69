#version 330 core
// present: copies the scene (with the particles debug view drawn into it) to the output.
in vec2 uv;

uniform sampler2D scene_color;

out vec4 color;

void main() {
    color = texture(scene_color, uv);
}
