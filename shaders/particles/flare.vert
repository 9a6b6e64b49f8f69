#version 330 core
// flare, blinding: a screen-aligned quad; its visibility is the fraction of a 5 × 5 probe around
// the sun where the scene's depth buffer still holds the far plane (nothing in front of the sun).
uniform vec2 center;    // NDC
uniform vec2 half_size; // NDC
uniform vec2 sun_uv;    // the sun in the depth texture's coordinates
uniform vec2 probe;     // the probe's half-extent, texture coordinates
uniform sampler2D scene_depth;

out vec2 uv;
flat out float visibility;

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
    uv = corner;
    float seen = 0.0;
    for (int i = -2; i <= 2; i++) {
        for (int j = -2; j <= 2; j++) {
            vec2 p = sun_uv + probe * vec2(float(i), float(j)) * 0.5;
            bool inside = all(greaterThanEqual(p, vec2(0.0))) && all(lessThanEqual(p, vec2(1.0)));
            if (inside && textureLod(scene_depth, p, 0.0).r > 0.999999) seen += 1.0;
        }
    }
    visibility = seen / 25.0;
    gl_Position = vec4(center + (corner * 2.0 - 1.0) * half_size, 0.0, 1.0);
}
