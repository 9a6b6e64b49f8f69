#version 330 core
in vec2 uv;
flat in float visibility;

uniform sampler2D elements; // the element tiles side by side
uniform int tile;           // −1: plain (the blinding overlay)
uniform float tiles;        // tiles in the atlas
uniform vec4 tint;          // rgb colour, a opacity

out vec4 color;

void main() {
    float texel = tile < 0 ? 1.0 : texture(elements, vec2((uv.x + float(tile)) / tiles, uv.y)).r;
    color = vec4(tint.rgb, tint.a * texel * visibility);
}
