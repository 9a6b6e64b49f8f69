// land: the fixed nodes (shores, islands) as ground rising to `land_height` inland of the
// shore; water nodes drop to the floor, so the triangles between are the land's sides.
uniform mat4 view_projection;

out vec3 world;
out vec3 normal;
out float fixed_flag;
out float inland;

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
    world = vec3(float(ij.x) * h, land_ground(ij), float(ij.y) * h);
    normal = land_normal(vec2(ij), float(mesh_stride));
    inland = inland_at(ij);
    gl_Position = view_projection * vec4(world, 1.0);
}
