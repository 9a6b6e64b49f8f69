#version 330 core
// caustics: each point adds the sunlight it carries to the texels of its splat, a Gaussian of
// σ = splat_sigma px cut at 2σ (additive blending into the light-space caustics texture).
in vec3 carried;

uniform float splat_sigma; // px
uniform float splat_size;  // px, 4 σ

out vec4 light;

void main() {
    vec2 offset = (gl_PointCoord * 2.0 - 1.0) * 0.5 * splat_size;
    float r2 = dot(offset, offset);
    if (r2 > 4.0 * splat_sigma * splat_sigma) discard;
    light = vec4(carried * exp(-r2 / (2.0 * splat_sigma * splat_sigma)), 1.0);
}
