#version 330 core
// smooth_depth_2d: the narrow-range filter's 2-D pass (Truong & Yuksel 2018, the separable
// approximation's last iteration; the authors' code runs N − 1 separable iterations, then one
// 2-D one with a small fixed kernel). The narrow-range filter is not separable: its range
// decisions differ row by row and column by column, so the separable halves of `smooth_depth`
// leave axis-aligned artefacts; one iteration over the full (2r + 1)² window, r at most
// MAX_RADIUS_PX, removes them at a small cost. The same rules (`narrow_range.glsl`, appended),
// with the expected depth on the plane through the centre along both local slopes.
in vec2 uv;

uniform sampler2D depth_texture;
uniform vec2 texel;            // 1 / viewport size
uniform float projected_scale; // pixels per metre at unit depth: P[1][1] · height / 2
uniform float filter_radius;   // m, the world-space width of the kernel
uniform float range_sigma;     // m, the narrow-range threshold

const int MAX_RADIUS_PX = 4;

out float smoothed_depth;

float narrow_range_slope(vec2 uv, vec2 step, float center, float threshold);
bool narrow_range_keep(inout float sample_depth, float expected, float threshold);

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
    float weight_sum = 0.0;
    float depth_sum = 0.0;
    for (int j = -MAX_RADIUS_PX; j <= MAX_RADIUS_PX; ++j) {
        if (abs(j) > radius_px) continue;
        for (int i = -MAX_RADIUS_PX; i <= MAX_RADIUS_PX; ++i) {
            if (abs(i) > radius_px) continue;
            float sample_depth = texture(depth_texture, uv + vec2(i, j) * texel).r;
            if (sample_depth <= 0.0) continue;
            float expected = center + float(i) * slope.x + float(j) * slope.y;
            if (!narrow_range_keep(sample_depth, expected, range_sigma)) continue;
            float weight = exp(-float(i * i + j * j) / (2.0 * spatial_sigma * spatial_sigma));
            weight_sum += weight;
            depth_sum += weight * sample_depth;
        }
    }
    smoothed_depth = depth_sum / weight_sum;
}
