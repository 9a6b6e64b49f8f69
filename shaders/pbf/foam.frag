#version 330 core
// foam: a soft white disc per diffuse particle (weight `opacity` · exp(−3 r²) over the sprite,
// foam times its fade), added into two channels: spray and foam in front of the surface (r),
// bubbles under it (g), dimmed by exp(−bubble_attenuation · depth below the smoothed surface).
// Solids in front (the scene's depth) hide them.
in vec3 eye_center;
flat in float kind;
flat in float fade;

uniform sampler2D scene_depth; // window depth
uniform sampler2D fluid_depth; // smoothed eye depth, 0 = no fluid
uniform vec2 clip_planes;      // near, far
uniform vec2 viewport;         // px
uniform float opacity;
uniform float bubble_attenuation; // 1/m

out vec4 foam;

float scene_eye_depth(float window_depth) {
    float near = clip_planes.x;
    float far = clip_planes.y;
    float ndc = window_depth * 2.0 - 1.0;
    return 2.0 * near * far / (far + near - ndc * (far - near));
}

void main() {
    vec2 offset = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(offset, offset);
    if (r2 > 1.0) discard;
    vec2 uv = gl_FragCoord.xy / viewport;
    float depth = -eye_center.z;
    if (depth > scene_eye_depth(texture(scene_depth, uv).r)) discard;
    float weight = opacity * exp(-3.0 * r2) * (kind == 1.0 ? fade : 1.0);
    float surface = texture(fluid_depth, uv).r;
    if (kind == 2.0 && surface > 0.0) {
        foam = vec4(0.0, weight * exp(-bubble_attenuation * max(depth - surface, 0.0)), 0.0, 0.0);
    } else {
        foam = vec4(weight, 0.0, 0.0, 0.0);
    }
}
