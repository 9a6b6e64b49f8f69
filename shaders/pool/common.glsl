// common: what the pool's passes share, put after `#version` in front of each of their shaders.
// World space: the pool spans [0, pool_size]² in x and z, the rest level is y = 0, the floor
// y = −pool_depth, the walls rise to y = rim_height, a deck lies around at that height.

const float IOR_AIR = 1.0;
const float IOR_WATER = 1.333;
// Schlick's F0 = ((n − 1)/(n + 1))² for water.
const float F0 = 0.0204;
// Beer–Lambert absorption per metre (red goes first) and the colour scattered in its place.
const vec3 ABSORPTION = vec3(0.42, 0.10, 0.065);
const vec3 WATER_COLOR = vec3(0.03, 0.20, 0.26);

uniform sampler2D surface;     // per node: (offset x, height, offset z, 1 if fixed), m
uniform sampler2D land_texture; // per node: (the land's height, m; how far inland), made on the host
uniform int nodes;             // per side
uniform float pool_size;       // m
uniform float pool_depth;      // m
uniform float rim_height;      // m above the rest level
uniform vec3 light;            // towards the sun, unit
uniform sampler2D caustics;    // relative irradiance on the floor plane (1 = calm water)
uniform vec4 caustics_domain;  // the floor plane's (x, z) origin, m, and 1 / extent, 1/m
uniform int caustic_lookups;   // the most lookups along a footprint (`caustic_at`): 4; 1 for tests
uniform samplerCube sky;
uniform vec3 eye;              // m
uniform int has_land;          // 1: some node is fixed
uniform float land_height;     // m above the rest level, well inland
uniform vec4 land_bounds;      // the land's nodes' (i, j) least and greatest, a node wider each side
uniform sampler2D land_tiles;  // per land tile (land_tile cells a side): > 0 where its nodes hold land
uniform int land_tile;         // cells a side of a land tile
uniform int open_sea;          // 1: open edges: no walls or deck, the water goes on past the pool
uniform int mesh_nodes;        // vertices per side of the mesh drawn
uniform int mesh_stride;       // nodes between its vertices
uniform int detail;            // 1: add the fine-detail normal map
uniform float time;            // s, the simulated time (the fine detail's ripples move with it)
uniform vec3 horizon;          // the sky's colour at the horizon (far deck and sea fade into it)

float spacing() {
    return pool_size / float(nodes - 1);
}

vec4 node(ivec2 ij) {
    return texelFetch(surface, clamp(ij, ivec2(0), ivec2(nodes - 1)), 0);
}

// Node (i, j)'s displaced position; past the edges the edge node (a one-sided difference).
vec3 node_position(ivec2 ij) {
    ivec2 c = clamp(ij, ivec2(0), ivec2(nodes - 1));
    vec4 t = texelFetch(surface, c, 0);
    return vec3(float(c.x) * spacing() + t.x, t.y, float(c.y) * spacing() + t.z);
}

// The surface's normal at node (i, j) from its four neighbours (central differences).
vec3 node_normal(ivec2 ij) {
    vec3 dx = node_position(ij + ivec2(1, 0)) - node_position(ij - ivec2(1, 0));
    vec3 dz = node_position(ij + ivec2(0, 1)) - node_position(ij - ivec2(0, 1));
    return normalize(cross(dz, dx));
}

// The node of the mesh's vertex `vertex` (gl_VertexID): row by row, `mesh_stride` nodes apart,
// the last row and column on the pool's edge.
ivec2 mesh_node(int vertex) {
    ivec2 k = ivec2(vertex % mesh_nodes, vertex / mesh_nodes);
    return min(k * mesh_stride, ivec2(nodes - 1));
}

// The far taps: the drawn mesh's cells (`mesh_stride` nodes each) a tap stands for along a
// pixel's footprint's longer side, and the most taps.
const float TAP_CELLS = 2.0;
const int MAX_TAPS = 4;

// How many taps a pixel takes whose rest position moves by `across` and `along` (m) a pixel
// (its screen derivatives): one per TAP_CELLS of the mesh's cells its longer side spans. The
// mesh, not the grid: a one-tap pixel is shaded with what the mesh draws, so on a strided mesh
// (grids over 513 nodes) counting the grid's cells started the taps s times too near. Built
// with FAR_TAPS_BY_GRID (`TapCells::Grid`, only for docs/pool-filtering.md's measurement) it
// counts the grid's cells, as before.
int far_tap_count(vec2 across, vec2 along) {
#ifdef FAR_TAPS_BY_GRID
    float cell = spacing();
#else
    float cell = spacing() * float(mesh_stride);
#endif
    float cells = max(length(across), length(along)) / cell;
    return clamp(int(ceil(cells / TAP_CELLS)), 1, MAX_TAPS);
}

// The surface texel bilinearly interpolated at (x, z), m (clamped to the pool). Level 0 read
// explicitly (textureLod): the taps call it in a loop, where implicit derivatives are undefined.
vec4 surface_at(vec2 xz) {
    vec2 cell = clamp(xz, vec2(0.0), vec2(pool_size)) / spacing();
    return textureLod(surface, (cell + 0.5) / float(nodes), 0.0);
}

// The displaced surface at rest position xz, m (bilinear between the nodes), and its normal
// there: the nodes' central differences interpolated alike (the differences one spacing either
// side of the bilinear surface are the bilinear mean of the nodes' own).
vec3 surface_point(vec2 xz) {
    vec4 t = surface_at(xz);
    return vec3(xz.x + t.x, t.y, xz.y + t.z);
}

vec3 surface_normal(vec2 xz) {
    vec2 h = vec2(spacing(), 0.0);
    vec3 dx = surface_point(xz + h) - surface_point(xz - h);
    vec3 dz = surface_point(xz + h.yx) - surface_point(xz - h.yx);
    return normalize(cross(dz, dx));
}

bool inside_pool(vec2 xz) {
    return all(greaterThanEqual(xz, vec2(0.0))) && all(lessThanEqual(xz, vec2(pool_size)));
}

bool eye_under_water() {
    return inside_pool(eye.xz) && eye.y < surface_at(eye.xz).y && eye.y > -pool_depth;
}

// The sunlight's direction in calm water (pointing down).
vec3 refracted_light() {
    return refract(-light, vec3(0.0, 1.0, 0.0), IOR_AIR / IOR_WATER);
}

// Where the calm water's refracted sunlight through p meets the floor plane (x, z), m: the
// caustics texture's coordinates for floor and walls alike.
vec2 floor_projection(vec3 p) {
    vec3 r = refracted_light();
    return p.xz - (p.y + pool_depth) * r.xz / r.y;
}

// A pixel's footprint at a point it sees (directly, or along a reflected or refracted ray):
// the point's screen derivatives, m per pixel (the fragment shaders take them: `dFdx`, `dFdy`).
// The textures and patterns looked up there average over it instead of sampling its centre.
struct Footprint {
    vec3 dx;
    vec3 dy;
};

// The caustic on a point p of a face with normal n_face (floor, wall, rock), averaged over the
// pixel's footprint f there.
float caustic_at(vec3 p, vec3 n_face, Footprint f) {
    vec2 uv = (floor_projection(p) - caustics_domain.xy) * caustics_domain.zw;
    if (any(lessThan(uv, vec2(0.0))) || any(greaterThan(uv, vec2(1.0)))) {
        return 0.0;
    }
    // floor_projection is linear in p: its derivatives are the footprint's, projected alike;
    // the mipmapped texture averages over them.
    vec3 r = refracted_light();
    vec2 du_dx = (f.dx.xz - f.dx.y * r.xz / r.y) * caustics_domain.zw;
    vec2 du_dy = (f.dy.xz - f.dy.y * r.xz / r.y) * caustics_domain.zw;
    // One textureGrad takes its level from the longer of the two (GL 3.3 §3.8.11: ρ is the
    // larger gradient's length): it filters a square of the footprint's long side, so a
    // footprint k times as long as wide (in texels) is blurred k times across. Anisotropic
    // filtering by hand instead (the model of EXT_texture_filter_anisotropic, which GL 3.3 core
    // lacks; llvmpipe's took minutes a picture): n = ⌈k⌉ lookups (at most `caustic_lookups`)
    // spaced evenly along the long axis, each filtering its n-th of it and the short axis.
    // k ≤ 1.2 keeps the one lookup, bit for bit: the texels are not square in metres (the
    // domain's extents differ): a footprint round on the floor is ~1.14 in texels (presets' sun).
    float lx = length(du_dx), ly = length(du_dy);
    float longer = max(lx, ly);
    float k = longer > 0.0 ? longer / max(min(lx, ly), longer / 8.0) : 1.0;
    int n = clamp(int(ceil(k - 0.2)), 1, caustic_lookups);
    // A footprint that leaves p's face has no long axis on it: its derivatives were taken
    // across a corner (part of the pixel's quad traced its ray to another face, e.g. the floor
    // and a wall along the waterline), so its "long axis" is the jump between the faces, and
    // lookups spread along it sample texels the pixel does not see (the 256² test's waterline
    // band 16.49 with them there, 16.05 without). A footprint on one face lies in its plane
    // (off it by rounding only); one lookup where it is off by a tenth of its size.
    if (abs(dot(f.dx, n_face)) + abs(dot(f.dy, n_face)) > 0.1 * (length(f.dx) + length(f.dy))) {
        n = 1;
    }
    if (n == 1) {
        return textureGrad(caustics, uv, du_dx, du_dy).r;
    }
    vec2 step = (lx >= ly ? du_dx : du_dy) / float(n);
    vec2 across = lx >= ly ? du_dy : du_dx;
    float sum = 0.0;
    for (int i = 0; i < n; i++) {
        vec2 at = uv + step * (float(i) + 0.5 - 0.5 * float(n));
        sum += textureGrad(caustics, at, step, across).r;
    }
    return sum / float(n);
}

// Distance along d from o (inside) to the box [0, S] × [−depth, top] × [0, S]; `normal` is the
// face's, pointing in.
float exit_box(vec3 o, vec3 d, float top, out vec3 normal) {
    vec3 lo = vec3(0.0, -pool_depth, 0.0);
    vec3 hi = vec3(pool_size, top, pool_size);
    vec3 safe = vec3(abs(d.x) < 1e-7 ? 1e-7 : d.x, abs(d.y) < 1e-7 ? 1e-7 : d.y,
                     abs(d.z) < 1e-7 ? 1e-7 : d.z);
    vec3 t = (mix(lo, hi, step(0.0, safe)) - o) / safe;
    float best = min(t.x, min(t.y, t.z));
    if (best == t.x) {
        normal = vec3(-sign(safe.x), 0.0, 0.0);
    } else if (best == t.y) {
        normal = vec3(0.0, -sign(safe.y), 0.0);
    } else {
        normal = vec3(0.0, 0.0, -sign(safe.z));
    }
    return max(best, 0.0);
}

float hash(vec2 cell) {
    return fract(sin(dot(cell, vec2(127.1, 311.7))) * 43758.5453);
}

// The share of [x − w/2, x + w/2] that lies on lines [k, k + width) for every integer k: a
// pattern of lines one unit apart box-filtered over a pixel w wide (the pattern's integral
// floor(x)·width + min(fract(x), width) differenced), so lines thinner than a pixel grey out
// into their average instead of flickering between all and nothing.
float line_share(float x, float w, float width) {
    w = max(w, 1e-4);
    float a = x - 0.5 * w;
    float b = x + 0.5 * w;
    return (floor(b) * width + min(fract(b), width) - floor(a) * width - min(fract(a), width)) / w;
}

// The share of a pixel w wide around x inside |x − centre| < half (a box filter of a band):
// the length of [x − w/2, x + w/2] ∩ [centre − half, centre + half] over w, so a band
// narrower than the pixel is its width's share, not more.
float band_share(float x, float centre, float half_width, float w) {
    w = max(w, 1e-6);
    float overlap = min(x + 0.5 * w, centre + half_width) - max(x - 0.5 * w, centre - half_width);
    return clamp(overlap / w, 0.0, 1.0);
}

// Grid lines `width` (in cells) along both axes of a grid of unit cells at q (cells), averaged
// over a footprint w (cells) along each axis: the share of the pixel on a line.
float grid_lines(vec2 q, vec2 w, float width) {
    return 1.0 - (1.0 - line_share(q.x, w.x, width)) * (1.0 - line_share(q.y, w.y, width));
}

// A face's two coordinates along its plane (floor: x, z; walls: z, y or x, y).
vec2 face_coordinates(vec3 v, vec3 n) {
    return abs(n.y) > 0.5 ? v.xz : (abs(n.x) > 0.5 ? v.zy : v.xy);
}

// Square tiles on the pool's floor and walls, lighter grout between them, and a dark lane
// line along the floor, averaged over the footprint f (grout, lane and the tiles' shades).
vec3 tile_albedo(vec3 p, vec3 n, Footprint f) {
    float tile = pool_size / 20.0;
    vec2 q = face_coordinates(p, n) / tile;
    vec2 w = (abs(face_coordinates(f.dx, n)) + abs(face_coordinates(f.dy, n))) / tile;
    float grout = grid_lines(q, w, 0.06);
    // Each tile's own shade, its mean (0.5) once a pixel spans a tile.
    float shade = mix(hash(floor(q)), 0.5, smoothstep(0.5, 1.0, max(w.x, w.y)));
    vec3 color = vec3(0.70, 0.84, 0.90) * (0.92 + 0.08 * shade);
    if (abs(n.y) > 0.5) {
        float lane = band_share(p.x, 0.5 * pool_size, 0.8 * tile, w.x * tile)
            * band_share(p.z, 0.5 * pool_size, 0.4 * pool_size, w.y * tile);
        color = mix(color, vec3(0.12, 0.18, 0.35), lane);
    }
    return mix(color, vec3(0.55, 0.58, 0.60), grout);
}

// Light on a point of the pool or land with normal n: under water the sun arrives through
// the caustics texture (its value × the cosine to the refracted light, per the calm floor's
// irradiance, which is light.y per unit sunlight), above it directly.
float sunlight(vec3 p, vec3 n, Footprint f) {
    // A wall's point may lie a rounding error outside the pool (a ray traced to the wall):
    // step in along its normal, which points into the pool, so it is not lit as the deck.
    if (inside_pool(p.xz + 1e-4 * n.xz) && p.y < surface_at(p.xz).y) {
        vec3 r = refracted_light();
        // On the open sea, light that came through the calm water past the pool is calm's.
        bool from_outside = open_sea == 1 && !inside_pool(p.xz - p.y * r.xz / r.y);
        float caustic = from_outside ? 1.0 : caustic_at(p, n, f);
        return caustic * max(dot(n, -r), 0.0) * light.y / -r.y;
    }
    return max(dot(n, light), 0.0);
}

vec3 lit(vec3 albedo, vec3 p, vec3 n, Footprint f) {
    // The sky's light, more from above.
    float ambient = 0.35 + 0.15 * n.y;
    return albedo * (ambient + 0.85 * sunlight(p, n, f));
}

// Light that travels `distance` m through water: absorbed, and the water's colour in its place.
vec3 through_water(vec3 color, float distance) {
    vec3 t = exp(-ABSORPTION * distance);
    return color * t + WATER_COLOR * (1.0 - t);
}

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

// The open sea past the pool: a ray from o under water meets the floor continued, or, going
// level or up, nothing but water.
vec3 open_water_ray(vec3 o, vec3 d, Footprint f) {
    if (d.y > -1e-4) {
        return WATER_COLOR;
    }
    float t = (-pool_depth - o.y) / d.y;
    vec3 p = o + d * t;
    vec3 up = vec3(0.0, 1.0, 0.0);
    return through_water(lit(tile_albedo(p, up, f), p, up, f), t);
}

// Where a ray from o along d meets the floor's plane (a ray going level or up: far along it).
vec3 floor_continued(vec3 o, vec3 d) {
    return o + d * ((-pool_depth - o.y) / min(d.y, -1e-4));
}

// Where underwater_ray's ray ends (an island's rock, the floor, a wall, back at the surface, or
// on the open sea the floor continued): the point whose footprint its lookups take.
vec3 underwater_end(vec3 o, vec3 d) {
    vec3 n;
    float t = exit_box(o, d, max(o.y, 0.0) + 1e-3, n);
    float t_land;
    if (land_along(o, d, t, t_land)) {
        return o + d * t_land;
    }
    vec3 p = o + d * t;
    if (open_sea == 1 && abs(n.y) < 0.5) {
        p = floor_continued(o, d);
    }
    return p;
}

// Where above_water_ray's ray meets the walls' planes, continued above their top (so that the
// point, and its footprint, moves smoothly as the ray goes from the wall over its top to the
// sky).
vec3 above_water_end(vec3 o, vec3 d) {
    vec3 n;
    return o + d * exit_box(o, d, rim_height + 4.0 * pool_size, n);
}

// What a ray from o going down (under water) sees: the pool's floor or walls, or an island's
// rock, through the water between.
vec3 underwater_ray(vec3 o, vec3 d, Footprint f) {
    vec3 n;
    float t = exit_box(o, d, max(o.y, 0.0) + 1e-3, n);
    float t_land;
    if (land_along(o, d, t, t_land)) {
        vec3 p = o + d * t_land;
        return through_water(lit(rock_albedo(p), p, land_normal(p.xz / spacing(), 1.0), f),
                             t_land);
    }
    vec3 p = o + d * t;
    if (n.y < -0.5) {
        // Back up at the surface (a ray the waves turned upwards): the water's own colour.
        return through_water(WATER_COLOR, t);
    }
    if (open_sea == 1 && abs(n.y) < 0.5) {
        return open_water_ray(o, d, f);
    }
    return through_water(lit(tile_albedo(p, n, f), p, n, f), t);
}

// What a ray from o going up (above the water) sees: the walls' upper part or the sky. The
// walls' top edge is box-filtered over the footprint f of the point the ray meets on their
// planes (`above_water_end`): a pixel whose rays (far waves turning them) meet the wall and pass
// over it in turn sees both in their shares, not one or the other.
vec3 above_water_ray(vec3 o, vec3 d, Footprint f) {
    vec3 sky_color = textureLod(sky, d, 0.0).rgb;
    if (open_sea == 0 && inside_pool(o.xz) && o.y < rim_height) {
        vec3 n;
        float t = exit_box(o, d, rim_height + 4.0 * pool_size, n);
        vec3 p = o + d * t;
        float wall = clamp((rim_height - p.y) / max(abs(f.dx.y) + abs(f.dy.y), 1e-6) + 0.5,
                           0.0, 1.0);
        if (abs(n.y) < 0.5 && wall > 0.0) {
            return mix(sky_color, lit(tile_albedo(p, n, f), p, n, f), wall);
        }
    }
    return sky_color;
}

float schlick(float cosine) {
    return F0 + (1.0 - F0) * pow(1.0 - clamp(cosine, 0.0, 1.0), 5.0);
}

// Slopes d(height)/d(x, z) of a few short gravity–capillary ripples (2–7 cm) at xz, for a pixel
// covering `footprint` metres (fwidth of the position: derivatives exist only in fragment
// shaders): a ripple fades out as its wavelength shrinks from four pixels to two, so the far
// water does not alias into speckles.
vec2 detail_slope(vec2 xz, float footprint) {
    vec2 slope = vec2(0.0);
    for (int k = 0; k < 5; ++k) {
        float angle = 2.399 * float(k) + 0.4;
        vec2 direction = vec2(cos(angle), sin(angle));
        float wavelength = 0.02 + 0.012 * float(k);
        float wavenumber = 6.2832 / wavelength;
        // ω² = g·k + (σ/ρ)·k³
        float omega = sqrt(9.81 * wavenumber + 7.3e-5 * wavenumber * wavenumber * wavenumber);
        float amplitude = 0.025 / wavenumber;
        float resolved = 1.0 - smoothstep(0.25, 0.5, footprint / wavelength);
        slope += resolved * amplitude * wavenumber * direction
            * cos(dot(direction, xz) * wavenumber - omega * time + 1.7 * float(k));
    }
    return slope;
}

// The sun's highlight seen along `reflected`: the lobe pow(cos, 1200) widened by `spread`, how
// much the reflected direction turns across the pixel (its fwidth), keeping its light (the
// lobe's solid angle goes as 1 / exponent): a glint narrower than a pixel lights the pixel
// dimly instead of fully or not at all.
float sun_glint(vec3 reflected, vec3 spread) {
    const float SHARPNESS = 1200.0;
    float sharpness = 1.0 / (1.0 / SHARPNESS + 0.25 * dot(spread, spread));
    return sharpness / SHARPNESS * pow(max(dot(reflected, light), 0.0), sharpness);
}

// What lies above the water and far away fades into the horizon's colour with its distance.
vec3 horizon_fog(vec3 color, vec3 p) {
    float fog = 1.0 - exp(-distance(p, eye) / (6.0 * pool_size));
    return mix(color, horizon, fog);
}

#ifdef FRAGMENT_SHADER
// The water's surface at a point of a fragment: the normal with the fine detail, the eye's
// ray, its reflection and refraction (on the eye's side: from below, reflected down and
// refracted up), and `spread`, how much the reflected ray turns across the pixel. One
// function for the simulated tile (`surface`) and the calm sea past it (`pool`), so the two
// meet without a seam. It takes derivatives: call it in uniform control flow, before any
// discard.
struct Water {
    vec3 n;
    vec3 incident;
    vec3 reflected;
    vec3 refracted;
    vec3 spread;
    bool from_above;
};

// The water at p with the normal n (the fine detail in it), seen from the eye on the side
// `from_above`; `spread` is the glint's (how much the reflected ray turns across what p stands
// for). It takes no derivatives: the footprint's taps call it in a loop.
Water water_seen(vec3 p, vec3 n, bool from_above, vec3 spread) {
    Water w;
    w.n = n;
    w.incident = normalize(p - eye);
    w.from_above = from_above;
    vec3 m = from_above ? n : -n;
    w.reflected = reflect(w.incident, m);
    w.reflected.y = from_above ? abs(w.reflected.y) : -abs(w.reflected.y);
    w.refracted = refract(w.incident, m, from_above ? IOR_AIR / IOR_WATER : IOR_WATER / IOR_AIR);
    w.spread = spread;
    return w;
}

// The surface's normal at n plus the fine detail's slopes at p (for a pixel `footprint` m wide).
vec3 with_detail(vec3 n, vec2 xz, float footprint) {
    if (detail == 1) {
        vec2 slope = detail_slope(xz, footprint);
        n = normalize(n + vec3(-slope.x, 0.0, -slope.y));
    }
    return n;
}

Water water_at(vec3 p, vec3 geometric_normal) {
    float footprint = length(fwidth(p.xz));
    vec3 n = with_detail(normalize(geometric_normal), p.xz, footprint);
    bool from_above = dot(normalize(p - eye), geometric_normal) < 0.0;
    Water w = water_seen(p, n, from_above, vec3(0.0));
    w.spread = fwidth(w.reflected);
    return w;
}

// The water seen from above at p: the Fresnel (Schlick) mix of what its refracted ray sees
// under the water and its reflected ray above, the sun's highlight, and on the open sea the
// fade into the horizon.
vec3 water_from_above(Water w, vec3 p, vec3 under_water, vec3 above_water) {
    float fresnel = schlick(-dot(w.incident, w.n));
    vec3 c = mix(under_water, above_water, fresnel);
    c += vec3(1.0, 0.95, 0.85) * 8.0 * sun_glint(w.reflected, w.spread) * fresnel;
    return open_sea == 1 ? horizon_fog(c, p) : c;
}
#endif
