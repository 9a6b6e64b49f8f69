#version 330 core
// post, second half: FXAA (Lottes' FXAA 3 "console" form) on the tone-mapped picture, luma in
// alpha. Where the four diagonal neighbours' luma spans less than max(1/32, max/8) the pixel is
// kept as it is; elsewhere their luma gives the edge direction, two and four samples along it
// blend across the edge, and the wider blend is kept only if its luma stays within the
// neighbourhood's range. The fractional offsets need a linearly filtered source.
in vec2 uv;

uniform sampler2D ldr_texture; // sRGB-encoded colour, luma in alpha
uniform vec2 texel;            // 1 / size
uniform int antialias;         // 0: copy

out vec4 color;

void main() {
    vec4 center = texture(ldr_texture, uv);
    if (antialias == 0) {
        color = vec4(center.rgb, 1.0);
        return;
    }
    float luma_nw = texture(ldr_texture, uv + vec2(-1.0, -1.0) * texel).a;
    float luma_ne = texture(ldr_texture, uv + vec2(1.0, -1.0) * texel).a;
    float luma_sw = texture(ldr_texture, uv + vec2(-1.0, 1.0) * texel).a;
    float luma_se = texture(ldr_texture, uv + vec2(1.0, 1.0) * texel).a;
    float luma_m = center.a;
    float luma_min = min(luma_m, min(min(luma_nw, luma_ne), min(luma_sw, luma_se)));
    float luma_max = max(luma_m, max(max(luma_nw, luma_ne), max(luma_sw, luma_se)));
    if (luma_max - luma_min < max(0.0312, 0.125 * luma_max)) {
        color = vec4(center.rgb, 1.0);
        return;
    }
    vec2 direction = vec2(-((luma_nw + luma_ne) - (luma_sw + luma_se)),
                          (luma_nw + luma_sw) - (luma_ne + luma_se));
    float reduce = max((luma_nw + luma_ne + luma_sw + luma_se) * 0.25 * (1.0 / 8.0), 1.0 / 128.0);
    float scale = 1.0 / (min(abs(direction.x), abs(direction.y)) + reduce);
    direction = clamp(direction * scale, vec2(-8.0), vec2(8.0)) * texel;
    vec3 near_pair = 0.5 * (texture(ldr_texture, uv + direction * (1.0 / 3.0 - 0.5)).rgb
                          + texture(ldr_texture, uv + direction * (2.0 / 3.0 - 0.5)).rgb);
    vec3 wide = 0.5 * near_pair + 0.25 * (texture(ldr_texture, uv - direction * 0.5).rgb
                                        + texture(ldr_texture, uv + direction * 0.5).rgb);
    float luma_wide = dot(wide, vec3(0.299, 0.587, 0.114));
    color = vec4((luma_wide < luma_min || luma_wide > luma_max) ? near_pair : wide, 1.0);
}
