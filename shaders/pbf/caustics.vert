#version 330 core
// caustics: one point per cell of a grid over the light's view of the fluid. Each point takes
// the smoothed surface nearest the sun there (light eye space, orthographic), its normal from
// the neighbouring depths, refracts the sunlight through it (Snell, refract()), follows the ray
// to the floor plane and lands at the hit, projected back into the light's view along the
// unrefracted sunlight, so the floor pass finds it where it samples the shadow. The point
// carries the cell's share of sunlight times the Beer–Lambert transmittance of the fluid above,
// spread as a Gaussian of `splat_sigma` px (caustics.frag) with `flux` = cell area / the
// Gaussian's integral, so flat water of thickness d lights the floor with exp(−attenuation · d)
// (no focusing) and converging rays brighten it.
uniform sampler2D light_depth;     // smoothed distance from the light's plane, m (0 = no fluid)
uniform sampler2D light_thickness; // m of fluid along the sunlight
uniform int grid;                  // points per side
uniform vec2 light_scale;          // P[0][0], P[1][1] of the light's orthographic projection
uniform vec4 floor_plane;          // light eye space: dot(xyz, p) = w on the floor
uniform float refraction_index;
uniform vec3 attenuation;          // 1/m per channel
uniform float splat_size;          // px, 4 σ
uniform float flux;                // sunlight per point per texel of its splat

out vec3 carried;

vec3 light_position(vec2 at, float depth) {
    return vec3((at * 2.0 - 1.0) / light_scale, -depth);
}

// The position step to the neighbour `step` away, or the other side's, or none (flat).
vec3 difference(vec2 at, vec3 center, vec2 step) {
    float forward = texture(light_depth, at + step).r;
    float backward = texture(light_depth, at - step).r;
    if (forward > 0.0 && backward > 0.0) {
        return 0.5 * (light_position(at + step, forward) - light_position(at - step, backward));
    }
    if (forward > 0.0) return light_position(at + step, forward) - center;
    if (backward > 0.0) return center - light_position(at - step, backward);
    return light_position(at + step, -center.z) - center;
}

void main() {
    ivec2 cell = ivec2(gl_VertexID % grid, gl_VertexID / grid);
    vec2 at = (vec2(cell) + 0.5) / float(grid);
    float depth = texture(light_depth, at).r;
    gl_PointSize = splat_size;
    carried = vec3(0.0);
    // Outside the clip volume: the point is dropped.
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    if (depth <= 0.0) return;
    vec2 texel = 1.0 / vec2(textureSize(light_depth, 0));
    vec3 center = light_position(at, depth);
    vec3 n = normalize(cross(difference(at, center, vec2(texel.x, 0.0)),
                             difference(at, center, vec2(0.0, texel.y))));
    vec3 ray = refract(vec3(0.0, 0.0, -1.0), n, 1.0 / refraction_index);
    float along = dot(floor_plane.xyz, ray);
    if (abs(along) < 1e-4) return;
    float t = (floor_plane.w - dot(floor_plane.xyz, center)) / along;
    if (t < 0.0) return;
    vec3 hit = center + t * ray;
    gl_Position = vec4(hit.xy * light_scale, 0.0, 1.0);
    carried = flux * exp(-attenuation * texture(light_thickness, at).r);
}
