// common: what the pool's passes share, put after `#version` in front of each of their shaders,
// followed by land_search.glsl (the land: its texture, normal and search) and water.glsl (what
// the rays see, the water's surface).
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
