// surface (also wireframe, nodes): the mesh's vertex `gl_VertexID` at its node, displaced by
// the node's texel (vertex texture fetch), its normal from the neighbouring texels.
uniform mat4 view_projection;
uniform float point_size;      // pixels (nodes view)

out vec3 world;
out vec2 rest;                 // the node's rest position (x, z), m
out vec3 normal;
out float fixed_flag;

void main() {
    ivec2 ij = mesh_node(gl_VertexID);
    world = node_position(ij);
    rest = vec2(ij) * spacing();
    normal = node_normal(ij);
    fixed_flag = node(ij).w;
    gl_PointSize = point_size;
    gl_Position = view_projection * vec4(world, 1.0);
}
