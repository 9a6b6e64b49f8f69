// Drawing: the renderer's CPU builders (render/surface.rs, render/nodes.rs, render/water.rs)
// with the same operations in the same order, writing the GL buffers' layouts (mapped through
// interop). Included by particles.cu, after the records and the vector helpers.

// `surface` (surface.rs `Surface::update`): vertex v of the skin follows node skin_node[v]; its
// normal is the sum of the unnormalised normals (b − a) × (c − a) of its triangles
// (vertex_triangles[vertex_start[v] .. vertex_start[v + 1]], ascending: the order the CPU adds
// them in), normalised (+y where that fails, glam's normalize_or). One thread per vertex
// gathering its triangles, no atomics. Out: the mesh's Vertex, 8 floats (position, normal,
// texture coordinates).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
surface(unsigned vertices, const float* __restrict__ position, const unsigned* __restrict__ skin_node,
        const float* __restrict__ skin_uv, const unsigned* __restrict__ skin_indices,
        const unsigned* __restrict__ vertex_start, const unsigned* __restrict__ vertex_triangles,
        float* __restrict__ out) {
    unsigned v = thread_index();
    if (v >= vertices) return;
    vec3 sum = v3(0.0f, 0.0f, 0.0f);
    for (unsigned l = vertex_start[v]; l < vertex_start[v + 1]; ++l) {
        unsigned t = vertex_triangles[l];
        vec3 a = load3(position, skin_node[skin_indices[3 * t]]);
        vec3 b = load3(position, skin_node[skin_indices[3 * t + 1]]);
        vec3 c = load3(position, skin_node[skin_indices[3 * t + 2]]);
        sum = add(sum, cross(sub(b, a), sub(c, a)));
    }
    float rcp = 1.0f / length(sum);
    vec3 normal = (isfinite(rcp) && rcp > 0.0f) ? mul(sum, rcp) : v3(0.0f, 1.0f, 0.0f);
    vec3 x = load3(position, skin_node[v]);
    float* o = out + 8 * v;
    o[0] = x.x; o[1] = x.y; o[2] = x.z;
    o[3] = normal.x; o[4] = normal.y; o[5] = normal.z;
    o[6] = skin_uv[2 * v]; o[7] = skin_uv[2 * v + 1];
}

// nodes.rs `energy_color`: 0 a cool blue-grey, 0.5 yellow, 1 red (glam's lerp, a·(1 − s) + b·s).
__device__ __forceinline__ vec3 energy_color(float t) {
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    vec3 cool = v3(0.55f, 0.65f, 0.85f), warm = v3(1.0f, 0.85f, 0.2f), hot = v3(0.95f, 0.1f, 0.05f);
    if (t < 0.5f) {
        float s = 2.0f * t;
        return add(mul(cool, 1.0f - s), mul(warm, s));
    }
    float s = 2.0f * t - 1.0f;
    return add(mul(warm, 1.0f - s), mul(hot, s));
}

__device__ __forceinline__ void store_point(float* out, unsigned i, vec3 x, vec3 color) {
    float* o = out + 6 * i;
    o[0] = x.x; o[1] = x.y; o[2] = x.z;
    o[3] = color.x; o[4] = color.y; o[5] = color.z;
}

// nodes.rs `energy_level`: 1 at `red` (J), 0 `decades` decades below, linear in log10 between.
__device__ __forceinline__ float energy_level(float e, float red, float decades) {
    return 1.0f + log10f(e / red) / decades;
}

// `body_points` (nodes.rs): threads 0 .. nodes: node k as a point coloured by its kinetic
// energy ½·mass·|v|²; then one per spring s: its two ends as a line coloured by its elastic
// energy ½·k·(l − l₀)²; both by `energy_level` with `red` (nodes.rs `red_energy`) and
// `decades`. Out: the Point layout, 6 floats (position, colour).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
body_points(unsigned nodes, unsigned springs, float mass, float red, float decades,
            const float* __restrict__ position, const float* __restrict__ velocity,
            const unsigned* __restrict__ spring_a, const unsigned* __restrict__ spring_b,
            const float* __restrict__ spring_rest, const float* __restrict__ spring_stiffness,
            float* __restrict__ points, float* __restrict__ lines) {
    unsigned t = thread_index();
    if (t < nodes) {
        vec3 v = load3(velocity, t);
        float kinetic = 0.5f * mass * dot(v, v);
        store_point(points, t, load3(position, t), energy_color(energy_level(kinetic, red, decades)));
        return;
    }
    unsigned s = t - nodes;
    if (s >= springs) return;
    vec3 a = load3(position, spring_a[s]), b = load3(position, spring_b[s]);
    float stretch = length(sub(a, b)) - spring_rest[s];
    float elastic = 0.5f * spring_stiffness[s] * stretch * stretch;
    vec3 color = energy_color(energy_level(elastic, red, decades));
    store_point(lines, 2 * s, a, color);
    store_point(lines, 2 * s + 1, b, color);
}

// `water` (water.rs `vertices`): basin node (i, j) at (−basin + i·h, level + u, −basin + j·h),
// its normal (−gain·∂x, 2h, −gain·∂z) by central differences of the heights (the edges' node
// standing in for a missing neighbour), normalised (glam's normalize: × 1/|n|). One thread
// per node. Out: WaterVertex, 6 floats (position, normal).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
water(unsigned n, float h, float basin, float level, float gain, const float* __restrict__ height,
      float* __restrict__ out) {
    unsigned m = thread_index();
    if (m >= n * n) return;
    unsigned i = m % n, j = m / n;
    unsigned right = min(i + 1, n - 1), left = i > 0 ? i - 1 : 0;
    unsigned up = min(j + 1, n - 1), down = j > 0 ? j - 1 : 0;
    float dx = height[j * n + right] - height[j * n + left];
    float dz = height[up * n + i] - height[down * n + i];
    vec3 normal = v3(-gain * dx, 2.0f * h, -gain * dz);
    normal = mul(normal, 1.0f / length(normal));
    store_point(out, m, v3(-basin + (float)i * h, level + height[m], -basin + (float)j * h), normal);
}
