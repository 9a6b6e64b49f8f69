#version 330 core
// post, first half: exposure, ACES filmic tone mapping (Narkowicz's fit) and the sRGB transfer
// function; the encoded colour's luma goes to alpha for the FXAA half.
in vec2 uv;

uniform sampler2D hdr_texture; // linear RGB
uniform float exposure;

out vec4 color;

void main() {
    vec3 x = max(texture(hdr_texture, uv).rgb * exposure, vec3(0.0));
    vec3 mapped = clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
    vec3 low = mapped * 12.92;
    vec3 high = 1.055 * pow(mapped, vec3(1.0 / 2.4)) - 0.055;
    vec3 encoded = mix(low, high, step(vec3(0.0031308), mapped));
    color = vec4(encoded, dot(encoded, vec3(0.299, 0.587, 0.114)));
}
