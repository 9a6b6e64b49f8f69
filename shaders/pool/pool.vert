// pool: the floor, the walls and the deck around (world-space triangles); with open edges the
// deck is lowered to the rest level, where it is drawn as the sea going on.
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 face_normal;

uniform mat4 view_projection;

out vec3 world;
out vec3 normal;

void main() {
    world = position;
    if (open_sea == 1 && position.y > 0.0 && face_normal.y > 0.5) {
        world.y = 0.0;
    }
    normal = face_normal;
    gl_Position = view_projection * vec4(world, 1.0);
}
