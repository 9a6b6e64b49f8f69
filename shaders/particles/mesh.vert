#version 330 core
// opaque, surface: lit meshes (the room, the cube, the basin's rim, the ground, the sphere,
// the wind arrow, the cloth and the jelly).
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec2 texcoord;

uniform mat4 view_projection;
uniform mat4 model; // rotation, uniform scale and translation

out vec3 world_position;
out vec3 world_normal;
out vec2 uv;

void main() {
    vec4 world = model * vec4(position, 1.0);
    world_position = world.xyz;
    world_normal = mat3(model) * normal;
    uv = texcoord;
    gl_Position = view_projection * world;
}
