#version 330 core
// smooth_depth: one separable half (along `direction`) of a depth filter; an iteration runs it
// horizontally then vertically. Background pixels (depth 0) stay background, so silhouettes are
// kept. Two filters:
//   filter_kind 0, bilateral: spatial Gaussian × range Gaussian on the depth difference
//     (Tomasi & Manduchi 1998, as used for screen-space fluids by van der Laan et al. 2009);
//   filter_kind 1, narrow-range (Truong & Yuksel 2018): samples farther from the expected
//     depth or from the centre's than the threshold, deeper or nearer, belong to another
//     layer and are dropped;
//     weights are spatial only (`narrow_range.glsl`, appended).
//     The separable halves approximate the 2-D filter; `smooth_depth_2d` runs its last
//     iteration in 2-D. With `bias_correction` (its authors' FIX_OTHER_WEIGHT) the samples
//     are taken in pairs mirrored through the centre and a pair counts only if neither is
//     dropped (background or another layer): the kernel stays symmetric, so the average of a
//     sloped surface stays at the centre instead of sliding towards the side that is kept.
// Either keeps the fluid's face on the glass and the free surface apart (the class rule,
// `glass_mark.glsl`, appended): the depth's two lowest bits mark the face, and the output
// passes the centre's on (the camera's first pass, `applies_seam_rule`, marks the face's seams
// by the seam rule, `seam_rule`). Across the crease between the two, a pair split by the class
// rule alone keeps its sample of the centre's side, and the output is then the centre's value
// on the weighted least-squares line through the centre and the samples kept
// (docs/render-notes-glass.md, "The ~22 light pixels left along the crease").
in vec2 uv;

uniform sampler2D depth_texture;
uniform vec2 direction;        // one texel along x or y
uniform float projected_scale; // pixels per metre at unit depth: P[1][1] · height / 2
uniform int perspective;       // 1: pixels per metre fall with depth; 0: orthographic (light)
uniform float filter_radius;   // m, the world-space width of the kernel, at most MAX_TAPS px
uniform float wide_radius;     // m, its width where that projects wider (0: none)
uniform float range_sigma;     // m, bilateral range σ and narrow-range threshold
uniform int filter_kind;
uniform int bias_correction;   // narrow-range: 1 drops a sample's mirror image with it
uniform int applies_seam_rule; // 1: the camera's first pass, which classes the face's seams

// The taps either side of the centre: one a texel while the kernel's projected width is at
// most this many texels (its `filter_radius`, capped here); where `wide_radius` projects wider,
// this many spread over it, one texel apart near the centre and further apart outwards, so the
// kernel keeps that world-space width at any resolution or zoom for the same cost.
const int MAX_TAPS = 12;
// The taps within this many texels of the centre give the line fit's local slope (below), and
// the first tap always (a wide kernel's is further out).
const float NEAR = 3.0;

out float smoothed_depth; // m, with the centre's mark of the glass (`glass_mark.glsl`)

float narrow_range_slope(vec2 uv, vec2 step, float center, float threshold);
bool narrow_range_keep(float sample_depth, float expected, float center, float threshold);
uint glass_mark(float depth);
float with_glass_mark(float depth, uint mark);
bool same_glass_class(uint sample_mark, bool glass);
uint seam_rule(sampler2D depths, float center, uint mark, float threshold);

void main() {
    float center = texture(depth_texture, uv).r;
    if (center <= 0.0) {
        smoothed_depth = 0.0;
        return;
    }
    uint mark = glass_mark(center);
    if (applies_seam_rule == 1) mark = seam_rule(depth_texture, center, mark, range_sigma);
    bool glass = mark >= 2u; // the fluid's face on the glass (`glass_mark.glsl`)
    float pixels_per_metre = projected_scale / (perspective == 1 ? center : 1.0);
    float radius = max(max(min(filter_radius * pixels_per_metre, float(MAX_TAPS)),
                           wide_radius * pixels_per_metre), 1.0);
    int taps = int(min(radius, float(MAX_TAPS)));
    // Tap i lies i + spread · i² texels out (rounded to a texel): one texel apart near the
    // centre, the last at `radius`; its weight counts the texels it stands for
    // (1 + 2 · spread · i).
    float spread = max(radius - float(MAX_TAPS), 0.0) / float(MAX_TAPS * MAX_TAPS);
    float spatial_sigma = max(0.5 * (float(taps) + spread * float(taps * taps)), 0.5);
    float slope = filter_kind == 1 ? narrow_range_slope(uv, direction, center, range_sigma) : 0.0;
    // The centre, then the pairs of samples `offset` texels either side of it; depths are
    // summed about the centre's (d − centre), so the line fit's products do not cancel.
    float weight_sum = 1.0;
    float depth_sum = 0.0;
    // The line fit's sums: of the whole pairs, Σ w o² and Σ w o d; of the one-sided samples,
    // Σ w, Σ w o, Σ w o² and Σ w d, Σ w o d (o the signed offset, texels); and the range of
    // the centre and the samples kept, which the fit's value is held in.
    vec2 moment = vec2(0.0);
    vec3 one_sided = vec3(0.0);
    vec2 one_sided_depth = vec2(0.0);
    vec2 kept_range = vec2(center);
    // The steepest slope per texel from the centre to a sample kept within NEAR texels of it:
    // how far the fit's value may step beyond that range.
    float near_slope = 0.0;
    for (int i = 1; i <= MAX_TAPS; ++i) {
        if (i > taps) break;
        float at = float(i) + spread * float(i * i);
        float offset = floor(at + 0.5);
        float weight = exp(-offset * offset / (2.0 * spatial_sigma * spatial_sigma))
                     * (1.0 + 2.0 * spread * float(i));
        vec2 depths = vec2(texture(depth_texture, uv + offset * direction).r,
                           texture(depth_texture, uv - offset * direction).r);
        bvec2 fluid = bvec2(depths.x > 0.0, depths.y > 0.0);
        bvec2 kept = fluid;
        vec2 weights = vec2(weight);
        if (filter_kind == 0) {
            vec2 difference = depths - center;
            weights *= exp(-difference * difference / (2.0 * range_sigma * range_sigma));
        } else {
            kept.x = fluid.x && narrow_range_keep(depths.x, center + offset * slope, center,
                                                    range_sigma);
            kept.y = fluid.y && narrow_range_keep(depths.y, center - offset * slope, center,
                                                    range_sigma);
        }
        // The fluid's face on the glass and the rest apart (`same_glass_class`).
        bvec2 in_range = kept;
        kept = bvec2(kept.x && same_glass_class(glass_mark(depths.x), glass),
                     kept.y && same_glass_class(glass_mark(depths.y), glass));
        vec2 about = depths - center;
        // The bias correction: a pair counts only whole. Across the crease between the face
        // and the free surface (both samples in range, one of the other class) the sample of
        // the centre's class counts alone, in a line fit (below).
        if (filter_kind == 1 && bias_correction == 1 && !all(kept)) {
            if (all(in_range) && any(kept)) {
                float at_side = kept.x ? offset : -offset;
                float side_depth = kept.x ? about.x : about.y;
                one_sided += vec3(weight, weight * at_side, weight * at_side * at_side);
                one_sided_depth += weight * vec2(side_depth, at_side * side_depth);
                kept_range = vec2(min(kept_range.x, center + side_depth),
                                  max(kept_range.y, center + side_depth));
                if (i == 1 || offset <= NEAR) {
                    near_slope = max(near_slope, abs(side_depth) / offset);
                }
            }
            kept = bvec2(false);
        }
        if ((i == 1 || offset <= NEAR) && all(kept)) {
            near_slope = max(near_slope, max(abs(about.x), abs(about.y)) / offset);
        }
        weights *= vec2(kept);
        weight_sum += weights.x + weights.y;
        depth_sum += dot(weights, about);
        moment += vec2(offset * offset * (weights.x + weights.y),
                       offset * (weights.x * about.x - weights.y * about.y));
        vec2 low = mix(vec2(center), depths, vec2(kept));
        kept_range = vec2(min(kept_range.x, min(low.x, low.y)),
                          max(kept_range.y, max(low.x, low.y)));
    }
    float smoothed = center + depth_sum / weight_sum;
    if (one_sided.x > 0.0) {
        // The weighted least-squares line through the centre, the whole pairs and the
        // one-sided samples, taken at the centre: on a plane the same as a symmetric kernel,
        // where the samples on one side only would slide the centre along the slope. The
        // determinant w · Σ w o² − (Σ w o)² is at least Σ w o² > 0 (Cauchy–Schwarz over the
        // samples, the centre's weight 1 at o = 0). On a curve the line's value at the centre
        // can lie outside every sample (a flat run beside the centre, then a rise: −0.167 of
        // the rise, nearer than all of them). It is held within the range of the centre and
        // the samples kept, widened by a texel of the steepest slope from the centre to a
        // sample within NEAR texels (the line's own slope there still let it overshoot by
        // −0.069 of the rise; the range alone undid the fit: docs/render-notes-glass.md).
        float w = weight_sum + one_sided.x;
        float wo = one_sided.y;
        float woo = moment.x + one_sided.z;
        float wd = depth_sum + one_sided_depth.x;
        float wod = moment.y + one_sided_depth.y;
        float determinant = w * woo - wo * wo;
        float fitted = center + (wd * woo - wo * wod) / determinant;
        smoothed = clamp(fitted, kept_range.x - near_slope, kept_range.y + near_slope);
    }
    smoothed_depth = with_glass_mark(smoothed, mark);
}
