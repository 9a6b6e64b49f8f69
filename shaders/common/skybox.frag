#version 330 core
in vec3 direction;

uniform samplerCube skybox;

out vec4 color;

void main() {
    color = vec4(texture(skybox, normalize(direction)).rgb, 1.0);
}
