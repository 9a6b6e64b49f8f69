#version 330 core
// smooth_thickness: one separable half (along `direction`) of a Gaussian blur of the thickness
// buffer, as van der Laan, Green & Sainz (2009) blur theirs. Each sprite adds its own
// hard-edged chord length, so the raw sum is speckled pixel to pixel (and shows moiré over a
// regular lattice); the blur, of σ about a sprite's projected radius, leaves the fluid's
// thickness and removes the per-sprite grain that absorption and refraction would show.
// Pixels without fluid take part (their thickness is 0), so thickness falls off smoothly
// towards silhouettes.
in vec2 uv;

uniform sampler2D thickness_texture;
uniform vec2 direction; // one texel along x or y
uniform float sigma;    // px
uniform int radius;     // px, taps on each side

out float thickness;

void main() {
    float weight_sum = 1.0;
    float sum = texture(thickness_texture, uv).r;
    for (int i = 1; i <= radius; ++i) {
        float weight = exp(-float(i * i) / (2.0 * sigma * sigma));
        sum += weight * (texture(thickness_texture, uv + float(i) * direction).r
                         + texture(thickness_texture, uv - float(i) * direction).r);
        weight_sum += 2.0 * weight;
    }
    thickness = sum / weight_sum;
}
