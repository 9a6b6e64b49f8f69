// pool: the floor, the walls and the deck around (world-space triangles).
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 face_normal;

uniform mat4 view_projection;

out vec3 world;
out vec3 normal;

void main() {
    world = position;
    normal = face_normal;
    gl_Position = view_projection * vec4(position, 1.0);
}
