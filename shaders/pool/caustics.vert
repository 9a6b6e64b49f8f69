// caustics: every surface node's sunbeam, refracted by the node's normal, traced through the
// water to the floor or a wall and carried on along the calm water's refracted light to the
// floor plane (the caustics texture's coordinates), where the mesh is drawn. Alongside, the
// node's shadow on the rest plane along the incoming light: a triangle's area there is the
// light it lets through, its area on the floor plane where that light lands.
out vec2 before;      // m, the rest plane
out vec2 after;       // m, the floor plane
out float fixed_flag;
out float sunlit;     // 0 where the rim shades the node from the sun

void main() {
    ivec2 ij = mesh_node(gl_VertexID);
    vec3 p = node_position(ij);
    vec3 beam = refract(-light, node_normal(ij), IOR_AIR / IOR_WATER);
    vec3 face;
    vec3 hit = p + beam * exit_box(p, beam, p.y + 1.0, face);
    after = floor_projection(hit);
    before = p.xz - p.y * light.xz / light.y;
    fixed_flag = node(ij).w;
    // Towards the sun the node's ray leaves the pool's square over a wall at this height.
    vec2 run = mix(-p.xz, vec2(pool_size) - p.xz, step(0.0, light.xz));
    float across_x = abs(light.x) < 1e-6 ? 1e9 : run.x / light.x;
    float across_z = abs(light.z) < 1e-6 ? 1e9 : run.y / light.z;
    float over_wall = p.y + light.y * min(across_x, across_z);
    sunlit = (open_sea == 1 || over_wall >= rim_height) ? 1.0 : 0.0;
    gl_Position = vec4(((after - caustics_domain.xy) * caustics_domain.zw) * 2.0 - 1.0, 0.0, 1.0);
}
