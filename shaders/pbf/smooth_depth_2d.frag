#version 330 core
// smooth_depth_2d: the narrow-range filter's 2-D pass (Truong & Yuksel 2018, the separable
// approximation's last iteration; the authors' code runs N − 1 separable iterations, then one
// 2-D one with a small fixed kernel). The narrow-range filter is not separable: its range
// decisions differ row by row and column by column, so the separable halves of `smooth_depth`
// leave axis-aligned artefacts; one iteration over the full (2r + 1)² window, r at most
// MAX_RADIUS_PX, removes them at a small cost. The same rules (`narrow_range.glsl`, appended),
// with the expected depth on the plane through the centre along both local slopes, and the
// same bias correction as `smooth_depth`'s (`bias_correction`: point-mirrored pairs count
// only whole).
in vec2 uv;

uniform sampler2D depth_texture;
uniform vec2 texel;            // 1 / viewport size
uniform float projected_scale; // pixels per metre at unit depth: P[1][1] · height / 2
uniform float filter_radius;   // m, the world-space width of the kernel
uniform float range_sigma;     // m, the narrow-range threshold
uniform int bias_correction;   // 1 drops a sample's mirror image with it

const int MAX_RADIUS_PX = 4;

out float smoothed_depth;

float narrow_range_slope(vec2 uv, vec2 step, float center, float threshold);
bool narrow_range_keep(float sample_depth, float expected, float center, float threshold);

void main() {
    float center = texture(depth_texture, uv).r;
    if (center <= 0.0) {
        smoothed_depth = 0.0;
        return;
    }
    int radius_px = int(clamp(filter_radius * projected_scale / center, 1.0, float(MAX_RADIUS_PX)));
    float spatial_sigma = max(float(radius_px) * 0.5, 0.5);
    vec2 slope = vec2(narrow_range_slope(uv, vec2(texel.x, 0.0), center, range_sigma),
                      narrow_range_slope(uv, vec2(0.0, texel.y), center, range_sigma));
    // The centre, then each pair of samples mirrored through it: (i, j) and (−i, −j) over
    // the half window j > 0, or j = 0 and i > 0.
    float weight_sum = 1.0;
    float depth_sum = center;
    for (int j = 0; j <= MAX_RADIUS_PX; ++j) {
        if (j > radius_px) break;
        for (int i = -MAX_RADIUS_PX; i <= MAX_RADIUS_PX; ++i) {
            if (abs(i) > radius_px || (j == 0 && i <= 0)) continue;
            vec2 offset = vec2(i, j);
            vec2 depths = vec2(texture(depth_texture, uv + offset * texel).r,
                               texture(depth_texture, uv - offset * texel).r);
            float along = dot(offset, slope);
            bvec2 fluid = bvec2(depths.x > 0.0, depths.y > 0.0);
            bvec2 kept;
            kept.x = fluid.x && narrow_range_keep(depths.x, center + along, center, range_sigma);
            kept.y = fluid.y && narrow_range_keep(depths.y, center - along, center, range_sigma);
            // The bias correction: a pair counts only whole.
            if (bias_correction == 1 && !all(kept)) kept = bvec2(false);
            float weight = exp(-float(i * i + j * j) / (2.0 * spatial_sigma * spatial_sigma));
            vec2 weights = weight * vec2(kept);
            weight_sum += weights.x + weights.y;
            depth_sum += dot(weights, depths);
        }
    }
    smoothed_depth = depth_sum / weight_sum;
}
