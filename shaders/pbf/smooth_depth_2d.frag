#version 330 core
// smooth_depth_2d: the narrow-range filter's 2-D pass (Truong & Yuksel 2018, the separable
// approximation's last iteration; the authors' code runs N − 1 separable iterations, then one
// 2-D one with a small fixed kernel). The narrow-range filter is not separable: its range
// decisions differ row by row and column by column, so the separable halves of `smooth_depth`
// leave axis-aligned artefacts; one iteration over the full (2n + 1)² window of taps, n at
// most MAX_TAPS (spread over `wide_radius` where that projects wider, as in `smooth_depth`, so
// the kernel keeps its world-space width at any resolution), removes them at a small cost.
// The same rules (`narrow_range.glsl`, appended), with the expected depth on the plane through
// the centre along both local slopes; the bias correction (`bias_correction`: point-mirrored
// pairs count only whole), without `smooth_depth`'s line fit across the crease; and the
// fluid's face on the glass kept apart from the free surface (`glass_mark.glsl`, appended).
in vec2 uv;

uniform sampler2D depth_texture;
uniform vec2 texel;            // 1 / viewport size
uniform float projected_scale; // pixels per metre at unit depth: P[1][1] · height / 2
uniform float filter_radius;   // m, the world-space width of the kernel, at most MAX_TAPS px
uniform float wide_radius;     // m, its width where that projects wider (0: none)
uniform float range_sigma;     // m, the narrow-range threshold
uniform int bias_correction;   // 1 drops a sample's mirror image with it
uniform int applies_seam_rule; // 1: the first filter pass, which classes the face's seams

const int MAX_TAPS = 4;

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
    float radius = max(max(min(filter_radius * projected_scale / center, float(MAX_TAPS)),
                           wide_radius * projected_scale / center), 1.0);
    int taps = int(min(radius, float(MAX_TAPS)));
    // Tap (i, j) at distance r lies (i, j) · (1 + spread · r) texels out (as in
    // `smooth_depth`), its weight the area it stands for.
    float spread = max(radius - float(MAX_TAPS), 0.0) / float(MAX_TAPS * MAX_TAPS);
    float spatial_sigma = max(0.5 * (float(taps) + spread * float(taps * taps)), 0.5);
    vec2 slope = vec2(narrow_range_slope(uv, vec2(texel.x, 0.0), center, range_sigma),
                      narrow_range_slope(uv, vec2(0.0, texel.y), center, range_sigma));
    // The centre, then each pair of samples mirrored through it: (i, j) and (−i, −j) over
    // the half window j > 0, or j = 0 and i > 0.
    float weight_sum = 1.0;
    float depth_sum = center;
    for (int j = 0; j <= MAX_TAPS; ++j) {
        if (j > taps) break;
        for (int i = -MAX_TAPS; i <= MAX_TAPS; ++i) {
            if (abs(i) > taps || (j == 0 && i <= 0)) continue;
            float r = length(vec2(i, j));
            vec2 offset = floor(vec2(i, j) * (1.0 + spread * r) + 0.5); // texels
            vec2 depths = vec2(texture(depth_texture, uv + offset * texel).r,
                               texture(depth_texture, uv - offset * texel).r);
            float along = dot(offset, slope);
            bvec2 fluid = bvec2(depths.x > 0.0, depths.y > 0.0);
            bvec2 kept;
            kept.x = fluid.x && narrow_range_keep(depths.x, center + along, center, range_sigma);
            kept.y = fluid.y && narrow_range_keep(depths.y, center - along, center, range_sigma);
            // The fluid's face on the glass and the rest apart (`same_glass_class`).
            kept = bvec2(kept.x && same_glass_class(glass_mark(depths.x), glass),
                         kept.y && same_glass_class(glass_mark(depths.y), glass));
            // The bias correction: a pair counts only whole.
            if (bias_correction == 1 && !all(kept)) kept = bvec2(false);
            float weight = exp(-dot(offset, offset) / (2.0 * spatial_sigma * spatial_sigma))
                         * (1.0 + 2.0 * spread * r) * (1.0 + spread * r);
            vec2 weights = weight * vec2(kept);
            weight_sum += weights.x + weights.y;
            depth_sum += dot(weights, depths);
        }
    }
    smoothed_depth = with_glass_mark(depth_sum / weight_sum, mark);
}
