// land: the fixed nodes (shores, islands) as ground rising to `land_height` inland of the
// shore; water nodes drop to the floor, so the triangles between are the land's sides.
uniform mat4 view_projection;
uniform float land_height;     // m above the rest level, well inland

out vec3 world;
out vec3 normal;
out float fixed_flag;
out float inland;

// How far inland node (i, j) is: the share of land among it and four nodes three away.
float inland_at(ivec2 ij) {
    float sum = node(ij).w;
    for (int k = 0; k < 4; ++k) {
        ivec2 offset = k == 0 ? ivec2(3, 0) : k == 1 ? ivec2(-3, 0) : k == 2 ? ivec2(0, 3) : ivec2(0, -3);
        sum += node(ij + offset).w;
    }
    return sum / 5.0;
}

float ground(ivec2 ij) {
    ivec2 c = clamp(ij, ivec2(0), ivec2(nodes - 1));
    return node(c).w > 0.5 ? land_height * (0.25 + 0.75 * inland_at(c)) : -pool_depth;
}

void main() {
    ivec2 ij = mesh_node(gl_VertexID);
    fixed_flag = node(ij).w;
    float near_land = 0.0;
    for (int k = 0; k < 9; ++k) {
        near_land = max(near_land, node(ij + ivec2(k % 3 - 1, k / 3 - 1) * mesh_stride).w);
    }
    if (near_land <= 0.0) {
        // No triangle of this node touches land: behind the near plane (a triangle of such
        // nodes is clipped away; one with land has all its nodes next to land).
        world = vec3(0.0);
        normal = vec3(0.0, 1.0, 0.0);
        inland = 0.0;
        gl_Position = vec4(0.0, 0.0, -2.0, 1.0);
        return;
    }
    float h = spacing();
    world = vec3(float(ij.x) * h, ground(ij), float(ij.y) * h);
    ivec2 sx = ivec2(mesh_stride, 0);
    ivec2 sz = ivec2(0, mesh_stride);
    float run = 2.0 * h * float(mesh_stride);
    vec3 dx = vec3(run, ground(ij + sx) - ground(ij - sx), 0.0);
    vec3 dz = vec3(0.0, ground(ij + sz) - ground(ij - sz), run);
    normal = normalize(cross(dz, dx));
    inland = inland_at(ij);
    gl_Position = view_projection * vec4(world, 1.0);
}
