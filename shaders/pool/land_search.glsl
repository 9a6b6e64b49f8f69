// land_search: the land's height, normal and shading, and the search for it along a ray under
// water (`land_along`), put after common.glsl.

uniform sampler2D land_texture; // per node: (the land's height, m; how far inland), made on the host
uniform int has_land;          // 1: some node is fixed (read by the build with land only)
uniform float land_height;     // m above the rest level, well inland
uniform vec4 land_bounds;      // the land's nodes' (i, j) least and greatest, a node wider each side
uniform sampler2D land_tiles;  // per land tile (land_tile cells a side): tiles to land, /255
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

// The samples a ray's part over the land's bounds is cut into (`land_along`'s old lattice).
const int LAND_STEPS = 12;

// Where `land_along` ends a ray that meets land in the cell it walks: the flag reaches 0.5
// first in (t_water, t_land] (the flag at t_land is over a half). Sample i of the lattice of
// LAND_STEPS over [first, last] is the first that reaches land where the lattice samples before
// t_water are water (the walk's) and those after it up to the first past t_land are looked at:
// if one reaches land, the hit is the lattice's (8 halvings towards the sample before), as the
// search of only the lattice found it; if none does, the lattice steps over this land and the
// hit is 8 halvings of (t_water, t_land], within a cell.
float land_hit(vec3 o, vec3 d, float first, float last, float t_water, float t_land) {
    float span = last - first;
    int i = max(int(floor((t_water - first) / span * float(LAND_STEPS))), 1);
    while (i < LAND_STEPS && mix(first, last, float(i) / float(LAND_STEPS)) <= t_water) {
        ++i;
    }
    for (; i <= LAND_STEPS; ++i) {
        float t = mix(first, last, float(i) / float(LAND_STEPS));
        if (surface_at((o + d * t).xz).w > 0.5) {
            t_water = mix(first, last, float(i - 1) / float(LAND_STEPS));
            t_land = t;
            break;
        }
        if (t > t_land) {
            break;
        }
    }
    for (int k = 0; k < 8; ++k) {
        float mid = 0.5 * (t_water + t_land);
        if (surface_at((o + d * mid).xz).w > 0.5) {
            t_land = mid;
        } else {
            t_water = mid;
        }
    }
    return t_land;
}

// The land flags (1 on land) at the four corners of `cell` (its nodes (i, j), (i + 1, j),
// (i, j + 1), (i + 1, j + 1); past the edges the edge's, as `surface_at` clamps).
vec4 corner_flags(ivec2 cell) {
    return vec4(node(cell).w, node(cell + ivec2(1, 0)).w, node(cell + ivec2(0, 1)).w,
                node(cell + ivec2(1, 1)).w);
}

// Island rock seen along a ray under water: where o + t·d, t ∈ (0, t_end], first reaches land
// (the surface texture's flag, bilinear, over a half). Only the ray's part over the land's
// bounds (`land_bounds`: its nodes' box, a node wider; outside it the flag is under a half
// everywhere) is searched, walking the land tiles it crosses (`land_tiles`: per tile how many
// tiles away the nearest tile with land is, at most LAND_TILE_REACH, 0 on a tile with land):
// from a tile k tiles from land the ray jumps to where it leaves the square of tiles k − 1
// around it (none holds land), past the pool's edges on the outer side none; over a tile with
// land it walks the cells it crosses, one after the other, and in each whose corners hold land
// takes the flag's greatest along the ray exactly (bilinear in the cell: a quadratic along the
// ray), so no land is stepped over, however thin. Where it exceeds a half, `land_hit` finds the
// point: on the rock's side (its normal is `land_normal`'s there, not a point inside the
// island), as the search over 12 samples before found it where that found this land.
// Compiled only with `POOL_LAND` defined (the `surface` program built for a scene with land,
// src/sims/pool/render/grid.rs `SurfaceVariant`); without, no ray meets land and the walk, the
// rock's shading and their textures are compiled out: llvmpipe ran the walk's code for every
// fragment of a scene without land, its branch masked off (docs/pool-performance.md).
bool land_along(vec3 o, vec3 d, float t_end, out float t_hit) {
#ifndef POOL_LAND
    return false;
#else
    if (has_land == 0) {
        return false;
    }
    float h = spacing();
    vec4 bounds = land_bounds * h;
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
    ivec2 dir = ivec2(safe.x < 0.0 ? -1 : 1, safe.y < 0.0 ? -1 : 1);
    ivec2 ahead = max(dir, ivec2(0));
    ivec2 last_tile = textureSize(land_tiles, 0) - 1;
    float t = first;
    ivec2 cell = ivec2(floor((o.xz + d.xz * t) / h));
    // Every step moves a cell or more along the ray: a bound for a hang, not a limit.
    for (int budget = 4 * nodes + 64; budget > 0 && t < last; --budget) {
        // (A float division, exact for whole numbers: llvmpipe divides integers lane by lane.)
        ivec2 tile = min(ivec2(floor(vec2(max(cell, ivec2(0))) / float(land_tile))), last_tile);
        int away = int(texelFetch(land_tiles, tile, 0).r * 255.0 + 0.5);
        if (away > 0) {
            // No land within away − 1 tiles: on to where the ray leaves their square.
            ivec2 far_tile = tile + dir * (away - 1);
            ivec2 plane = (far_tile + ahead) * land_tile;
            vec2 to = (vec2(plane) * h - o.xz) / safe;
            bvec2 outer = bvec2(dir.x < 0 ? far_tile.x <= 0 : far_tile.x >= last_tile.x,
                                dir.y < 0 ? far_tile.y <= 0 : far_tile.y >= last_tile.y);
            to = mix(to, vec2(1e30), outer);
            int axis = to.x <= to.y ? 0 : 1;
            if (min(to.x, to.y) >= last) {
                return false;
            }
            t = max(t, min(to.x, to.y));
            cell = ivec2(floor((o.xz + d.xz * t) / h));
            cell[axis] = plane[axis] - 1 + ahead[axis];
            continue;
        }
        // A tile with land: its cells along the ray, each corner's flag fetched once, to where
        // the ray leaves the tile (the outer tiles' cells go on past the pool's edges).
        ivec2 tile_low = tile * land_tile;
        ivec2 tile_high = tile_low + land_tile - 1;
        tile_low = ivec2(tile.x == 0 ? -(1 << 20) : tile_low.x,
                         tile.y == 0 ? -(1 << 20) : tile_low.y);
        tile_high = ivec2(tile.x == last_tile.x ? 1 << 20 : tile_high.x,
                          tile.y == last_tile.y ? 1 << 20 : tile_high.y);
        vec4 corners = corner_flags(cell);
        for (; budget > 0; --budget) {
            vec2 to = (vec2(cell + ahead) * h - o.xz) / safe;
            int axis = to.x <= to.y ? 0 : 1;
            float out_at = min(min(to.x, to.y), last);
            if (out_at > t && any(greaterThan(corners, vec4(0.0)))) {
                // The flag at s past t: A + B·s + C·s² (u, v the point's place in the cell).
                vec2 uv = (o.xz + d.xz * t) / h - vec2(cell);
                vec2 q = d.xz / h;
                float e = corners.w - corners.y - corners.z + corners.x;
                float a = corners.x + (corners.y - corners.x) * uv.x
                    + (corners.z - corners.x) * uv.y + e * uv.x * uv.y;
                float b = (corners.y - corners.x) * q.x + (corners.z - corners.x) * q.y
                    + e * (uv.x * q.y + uv.y * q.x);
                float c = e * q.x * q.y;
                float span = out_at - t;
                float s = span;
                float most = a + (b + c * span) * span;
                float top = c < 0.0 ? -b / (2.0 * c) : -1.0;
                if (top > 0.0 && top < span && a + (b + c * top) * top > most) {
                    s = top;
                    most = a + (b + c * top) * top;
                }
                if (a >= most) {
                    s = 0.0;
                    most = a;
                }
                if (most > 0.5) {
                    t_hit = land_hit(o, d, first, last, t, t + s);
                    return true;
                }
            }
            if (out_at >= last) {
                return false;
            }
            t = max(t, out_at);
            cell[axis] += dir[axis];
            // The corners the cell shares with the one before; the other two fetched.
            if (axis == 0) {
                int i = cell.x + ahead.x;
                float near = node(ivec2(i, cell.y)).w;
                float far = node(ivec2(i, cell.y + 1)).w;
                corners = dir.x > 0 ? vec4(corners.y, near, corners.w, far)
                                    : vec4(near, corners.x, far, corners.z);
            } else {
                int j = cell.y + ahead.y;
                float near = node(ivec2(cell.x, j)).w;
                float far = node(ivec2(cell.x + 1, j)).w;
                corners = dir.y > 0 ? vec4(corners.z, corners.w, near, far)
                                    : vec4(near, far, corners.x, corners.y);
            }
            if (any(lessThan(cell, tile_low)) || any(greaterThan(cell, tile_high))) {
                break;
            }
        }
    }
    return false;
#endif
}

vec3 rock_albedo(vec3 p) {
    return vec3(0.42, 0.38, 0.32) * (0.85 + 0.15 * hash(floor(p.xz * 40.0)));
}
