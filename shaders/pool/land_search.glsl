// land_search: the land's height, normal and shading, and the search for it along a ray under
// water (`land_along`), put after common.glsl.

uniform sampler2D land_texture; // per node: (the land's height, m; how far inland), made on the host
uniform int has_land;          // 1: some node is fixed
uniform float land_height;     // m above the rest level, well inland
uniform vec4 land_bounds;      // the land's nodes' (i, j) least and greatest, a node wider each side
uniform sampler2D land_tiles;  // per land tile (land_tile cells a side): > 0 where its nodes hold land
uniform int land_tile;         // cells a side of a land tile

// How far inland node (i, j) is: the share of land among it and four nodes three away (the
// land texture's, computed on the host when the land changes: src/sims/pool/render/land.rs).
float inland_at(ivec2 ij) {
    return texelFetch(land_texture, clamp(ij, ivec2(0), ivec2(nodes - 1)), 0).g;
}

// The land's height at node (i, j), m (the land texture's): on land (fixed nodes) rising from a
// quarter of `land_height` at the shore to all of it inland; at the water's nodes the floor, so
// the land's sides fall from the shore to the floor within a cell (the `land` pass draws these
// heights). One texel fetch.
float land_ground(ivec2 ij) {
    return texelFetch(land_texture, clamp(ij, ivec2(0), ivec2(nodes - 1)), 0).r;
}

// The land's height at `cell` (in nodes: x / spacing, z / spacing), bilinear between its nodes;
// at a node exactly that node's.
float land_ground_at(vec2 cell) {
    ivec2 i = ivec2(floor(cell));
    vec2 f = cell - vec2(i);
    float near = mix(land_ground(i), land_ground(i + ivec2(1, 0)), f.x);
    float far = mix(land_ground(i + ivec2(0, 1)), land_ground(i + ivec2(1, 1)), f.x);
    return mix(near, far, f.y);
}

// The land's normal at `cell` (in nodes): central differences of its height `stride` nodes
// either side. The land's height is the nodes' (not analytic), so the step is the grid's: the
// `land` pass takes it at its vertices `mesh_stride` apart, the rock seen under water one node
// apart at the point its ray meets (the bilinear heights' differences there are the bilinear
// mean of the four nodes' own, as `surface_normal`'s).
vec3 land_normal(vec2 cell, float stride) {
    vec2 s = vec2(stride, 0.0);
    float run = 2.0 * spacing() * stride;
    vec3 dx = vec3(run, land_ground_at(cell + s) - land_ground_at(cell - s), 0.0);
    vec3 dz = vec3(0.0, land_ground_at(cell + s.yx) - land_ground_at(cell - s.yx), run);
    return normalize(cross(dz, dx));
}

// Island rock seen along a ray under water: where o + t·d, t ∈ (0, t_end], first reaches land
// (the surface texture's flag, bilinear, over a half). The ray's part over the land's bounds
// (`land_bounds`: its nodes' box, a node wider; outside it the flag is under a half everywhere,
// so a ray that misses it meets no land and is not searched) holds 12 samples, evenly spaced;
// the first that reaches land is halved 8 times towards the sample before, so the point lies on
// the rock's side (within 1/256 of the samples' spacing), where its normal (`land_normal`) and
// its neighbours' points (the caustic's footprint) are the side's, not a point inside the
// island. Only the samples over a land tile that holds land are looked at (`land_tiles`, its
// nodes' flags, edges included: the flag is 0 over a tile without land): from a sample over a
// tile without land the search goes on at the first sample past where the ray leaves the tile,
// so a ray over water costs a texel fetch a tile it crosses, and any land costs where it lies.
bool land_along(vec3 o, vec3 d, float t_end, out float t_hit) {
    if (has_land == 0) {
        return false;
    }
    vec4 bounds = land_bounds * spacing();
    vec2 safe = vec2(abs(d.x) < 1e-7 ? 1e-7 : d.x, abs(d.z) < 1e-7 ? 1e-7 : d.z);
    vec2 to_low = (bounds.xy - o.xz) / safe;
    vec2 to_high = (bounds.zw - o.xz) / safe;
    vec2 enter = min(to_low, to_high);
    vec2 leave = max(to_low, to_high);
    float first = max(max(enter.x, enter.y), 0.0);
    float last = min(min(leave.x, leave.y), t_end);
    if (first >= last) {
        return false;
    }
    const int STEPS = 12;
    float tile_size = float(land_tile) * spacing();
    ivec2 last_tile = textureSize(land_tiles, 0) - 1;
    vec2 ahead = step(0.0, safe);
    int i = 1;
    while (i <= STEPS) {
        float t = mix(first, last, float(i) / float(STEPS));
        vec2 xz = (o + d * t).xz;
        // Past the samples over tiles without land (water to where the ray leaves each such
        // tile; past the outer tiles the edge's flags go on: no edge there).
        for (;;) {
            ivec2 tile = clamp(ivec2(floor(xz / tile_size)), ivec2(0), last_tile);
            if (texelFetch(land_tiles, tile, 0).r > 0.0) {
                break;
            }
            vec2 to_edge = ((vec2(tile) + ahead) * tile_size - o.xz) / safe;
            bvec2 outer = bvec2(safe.x < 0.0 ? tile.x == 0 : tile.x == last_tile.x,
                                safe.y < 0.0 ? tile.y == 0 : tile.y == last_tile.y);
            to_edge = mix(to_edge, vec2(1e30), outer);
            float past = clamp((min(to_edge.x, to_edge.y) - first) / (last - first), 0.0, 2.0);
            i = max(i + 1, int(past * float(STEPS)) + 1);
            if (i > STEPS) {
                break;
            }
            t = mix(first, last, float(i) / float(STEPS));
            xz = (o + d * t).xz;
        }
        if (i > STEPS) {
            break;
        }
        if (surface_at(xz).w > 0.5) {
            float water = mix(first, last, float(i - 1) / float(STEPS));
            for (int k = 0; k < 8; ++k) {
                float mid = 0.5 * (water + t);
                if (surface_at((o + d * mid).xz).w > 0.5) {
                    t = mid;
                } else {
                    water = mid;
                }
            }
            t_hit = t;
            return true;
        }
        ++i;
    }
    return false;
}

vec3 rock_albedo(vec3 p) {
    return vec3(0.42, 0.38, 0.32) * (0.85 + 0.15 * hash(floor(p.xz * 40.0)));
}
