#version 330 core
// normals: eye-space normals from the smoothed depth. Each pixel's eye-space position is
// reconstructed from its depth; along x and y the smaller of the two one-sided differences is
// used, so a depth discontinuity (silhouette, another layer) does not bend the normal, except
// across the crease between the face on the glass and the free surface (no step there), where
// the difference to the neighbour of the centre's class is taken if it is on the centre's
// layer (`smaller_difference`). A pixel near the band with enough neighbours on the glass is
// a seam of the face, on the glass too (below).
//
// At an edge (background or a step of more than `layer_step` beside the pixel, or a normal
// that would face away from the eye) the difference spans the rim of a sprite only a few
// pixels wide, and the normal it gives grazes the view ray or turns away from it: Fresnel
// near 1 made such pixels mirrors, the light flecks of sparse spray. What one pixel there sees
// is the outermost ring of the sprite, from R − 1 to R pixels out (R its projected radius),
// whose mean cosine to the view ray is (2/3) √(2R − 1) / R; an edge pixel's normal is turned
// towards the eye until it makes at least that cosine. A step is faded in as an edge from 0.5 to
// 1.5 `layer_step` (the floor scaled by it): switched at `layer_step`, a surface seen nearly
// edge-on (the fluid's face on the glass), whose steps are about that size, had some pixels
// turned and their neighbours left grazing, light flecks among pale ones.
//
// The fluid's face on the glass: where the splatted surface lies within `wall_distance` (a
// particle radius and half a sprite radius) of the plane of a side or floor wall that faces the
// eye, and the normal found from the depth points within 45° of the wall's (or `sphere_depth`
// marked the pixel on the glass: its splat's own normal did; mark 2), the fluid there is
// pressed on the glass and its normal is the wall's (a top tilted towards the glass, a drop
// 1.8 particle radii off it keep their own). The particles touching a wall keep their centres a
// particle radius from it and their ellipsoids are flattened against it, so the splatted face
// lies bumpy 0.3–1 sprite radii off the glass;
// seen nearly edge-on, its depth steps straddled the edge rule's fade: light flecks. A
// seam of the face (`seam_rule`, `glass_mark.glsl`, appended: a pixel marked near the band with
// enough neighbours marked on the glass) counts as marked on the glass (the camera's first
// filter pass marks most seams 3 already; the rule here takes those it did not, and all of
// them when no filter runs). Such a pixel's w is 2 (1 elsewhere in the fluid): `composite`
// shades it as water behind glass.
in vec2 uv;

uniform sampler2D depth_texture;
uniform sampler2D splatted_depth;   // `sphere_depth`'s, unfiltered
// The near walls: the side and floor walls the eye is outside of (the lid is none: the
// container is drawn open), a column each, in eye space: xyz the outward normal, w the offset
// (a point p lies dot(xyz, p) + w outside the plane).
uniform mat4 wall_planes;
uniform int wall_count;
uniform float wall_distance;        // m: a splatted surface this near a wall's plane is on it
uniform vec2 texel;            // 1 / viewport size
uniform vec2 projection_scale; // P[0][0], P[1][1]
uniform float sprite_pixels;   // a sprite's radius in pixels at unit depth
uniform float layer_step;      // m: a bigger step to a neighbour is another layer

out vec4 normal; // xyz eye-space normal; w 1 in the fluid, 2 on the glass, 0 outside

vec3 eye_position(vec2 at, float depth) {
    vec2 ndc = at * 2.0 - 1.0;
    return vec3(ndc * depth / projection_scale, -depth);
}

uint glass_mark(float depth);
bool same_glass_class(uint sample_mark, bool glass);
uint seam_rule(sampler2D depths, float center, uint mark, float threshold);

// How much of an edge the pixel is: 1 beside the background, else rising from 0 to 1 as the
// larger step to a neighbour grows from 0.5 to 1.5 `layer_step`.
float edge = 0.0;
// The centre's class in the filters' sense: on the glass (mark 2 or 3) or not.
bool center_glass = false;

vec3 smaller_difference(vec3 center, vec2 step) {
    float depth_forward = texture(depth_texture, uv + step).r;
    float depth_backward = texture(depth_texture, uv - step).r;
    vec3 forward = eye_position(uv + step, depth_forward) - center;
    vec3 backward = center - eye_position(uv - step, depth_backward);
    float larger = max(abs(depth_forward + center.z), abs(depth_backward + center.z));
    edge = max(edge, depth_forward <= 0.0 || depth_backward <= 0.0
        ? 1.0 : smoothstep(0.5 * layer_step, 1.5 * layer_step, larger));
    if (depth_forward <= 0.0 && depth_backward <= 0.0) {
        // An isolated pixel: assume a surface facing the camera.
        return eye_position(uv + step, -center.z) - center;
    }
    // A neighbour of the other class, across the crease between the face on the glass and
    // the free surface (no step in depth there), is another surface: the difference to the
    // one of the centre's class is taken. (The smaller one had been: the top's first row
    // took the face's slope, tilted 51–58° from the glass's normal, and caught the sun.)
    bool forward_other = !same_glass_class(glass_mark(depth_forward), center_glass);
    bool backward_other = !same_glass_class(glass_mark(depth_backward), center_glass);
    // The neighbour of the centre's class is preferred only on the centre's layer: one
    // across a step (a drop or sheet beside the free surface, the glass on the other side)
    // is another surface too, and the smaller difference is taken.
    vec3 same = backward_other ? forward : backward;
    bool prefer_same = forward_other != backward_other && abs(same.z) <= layer_step;
    bool use_forward = depth_backward <= 0.0
        || (depth_forward > 0.0 && (prefer_same ? backward_other
                                                : abs(forward.z) < abs(backward.z)));
    return use_forward ? forward : backward;
}

// `plane`'s normal into `wall` if the surface at `p` lies nearer to it than `nearest` and `n`
// points within 45° of it (or `on_glass`: `sphere_depth` found the splat's own normal so).
void nearer_wall(vec4 plane, vec3 p, vec3 n, bool on_glass, inout float nearest,
                 inout vec3 wall) {
    float distance = abs(dot(plane.xyz, p) + plane.w);
    if (distance < nearest && (on_glass || dot(n, plane.xyz) > 0.7071)) {
        nearest = distance;
        wall = plane.xyz;
    }
}

// The outward normal (eye space) of the near wall whose plane the splatted surface at `uv`
// lies near, if `n` points within 45° of it; else zero. `mark` is the smoothed depth's two
// lowest bits, `sphere_depth`'s mark of that pixel passed on by the filters.
vec3 wall_normal(vec3 n, uint mark) {
    // `sphere_depth` marks the splatted surface near a wall's band (1 or 2): elsewhere
    // nothing to test.
    if (mark == 0u) return vec3(0.0);
    float splatted = texture(splatted_depth, uv).r;
    if (splatted <= 0.0) return vec3(0.0);
    vec3 p = eye_position(uv, splatted);
    vec3 wall = vec3(0.0);
    float nearest = wall_distance;
    bool on_glass = mark == 2u;
    // The near walls one by one, each plane by a constant index.
    if (wall_count > 0) nearer_wall(wall_planes[0], p, n, on_glass, nearest, wall);
    if (wall_count > 1) nearer_wall(wall_planes[1], p, n, on_glass, nearest, wall);
    if (wall_count > 2) nearer_wall(wall_planes[2], p, n, on_glass, nearest, wall);
    return wall;
}

void main() {
    float depth = texture(depth_texture, uv).r;
    if (depth <= 0.0) {
        normal = vec4(0.0);
        return;
    }
    vec3 center = eye_position(uv, depth);
    center_glass = glass_mark(depth) >= 2u;
    vec3 along_x = smaller_difference(center, vec2(texel.x, 0.0));
    vec3 along_y = smaller_difference(center, vec2(0.0, texel.y));
    vec3 n = cross(along_x, along_y);
    float len = length(n);
    n = len > 0.0 ? n / len : vec3(0.0, 0.0, 1.0);
    // A seam of the face, found by the first filter pass (3) or here, is not free surface: on
    // the glass too. (A seam two pixels wide has two of its four neighbours on the glass: the
    // eight count takes it; the top's first row above a straight crease has three of eight.)
    uint mark = seam_rule(depth_texture, depth, glass_mark(depth), layer_step);
    if (mark == 3u) mark = 2u;
    vec3 wall = wall_normal(n, mark);
    if (wall != vec3(0.0)) {
        normal = vec4(wall, 2.0);
        return;
    }
    vec3 to_eye = normalize(-center);
    float cosine = dot(n, to_eye);
    if (edge > 0.0 || cosine < 0.0) {
        float radius = max(sprite_pixels / depth, 1.0);
        float least = (2.0 / 3.0) * sqrt(2.0 * radius - 1.0) / radius
            * (cosine < 0.0 ? 1.0 : edge);
        vec3 across = n - cosine * to_eye;
        float across_len = length(across);
        if (cosine < least && across_len > 1e-6) {
            n = least * to_eye + sqrt(1.0 - least * least) * (across / across_len);
        } else if (cosine < least) {
            n = to_eye;
        }
    }
    normal = vec4(n, 1.0);
}
