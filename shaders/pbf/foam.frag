#version 330 core
// foam: a soft disc per diffuse particle (weight `opacity` · exp(−4 r²) over the sprite, foam
// times its fade, spray at `spray_opacity` of it), added into the foam target: spray and foam
// in front of the surface (r), bubbles under it (g), dimmed by exp(−bubble_attenuation · depth
// below the smoothed surface); b and a carry the same weights times the particle's light, so
// `composite` shades each pixel's foam with the weighted mean light of the sprites over it
// (dense foam saturates, lone spray stays faint). The light is the solids' model of scene.frag:
// an ambient share from the sky (more from above) and the sun's, on the sprite taken as a
// lit sphere (wrapped Lambert: foam scatters light round its dark side), the sun's share
// dimmed by the fluid between the particle and the sun (the light-space depth and thickness:
// the fluid nearer the sun than the particle, at most all of it).
// Solids in front (the scene's depth) hide them.
in vec3 eye_center;
flat in float kind;
flat in float fade;

uniform sampler2D scene_depth; // window depth
uniform sampler2D fluid_depth; // smoothed eye depth, 0 = no fluid
uniform vec2 clip_planes;      // near, far
uniform vec2 viewport;         // px
uniform float opacity;
uniform float spray_opacity;      // a spray sprite's weight / a foam sprite's
uniform float bubble_attenuation; // 1/m
uniform vec3 sun_direction;       // eye space, towards the sun
uniform vec3 up_direction;        // eye space, the world's up
uniform int fluid_light;          // 1: the light-space buffers hold the fluid seen from the sun
uniform mat4 light_from_eye;      // camera eye space → the light's eye space
uniform mat4 light_projection;    // the light's orthographic projection
uniform sampler2D light_depth;     // nearest fluid surface seen from the sun, m (0 = none)
uniform sampler2D light_thickness; // m of fluid along the sunlight
uniform float shadow_attenuation;  // 1/m, the fluid's mean Beer–Lambert coefficient

out vec4 foam;

float scene_eye_depth(float window_depth) {
    float near = clip_planes.x;
    float far = clip_planes.y;
    float ndc = window_depth * 2.0 - 1.0;
    return 2.0 * near * far / (far + near - ndc * (far - near));
}

// The share of sunlight that reaches the particle through the fluid.
float sunlight() {
    if (fluid_light == 0) return 1.0;
    vec4 light = light_from_eye * vec4(eye_center, 1.0);
    vec4 clip = light_projection * light;
    vec2 at = clip.xy / clip.w * 0.5 + 0.5;
    if (any(lessThan(at, vec2(0.0))) || any(greaterThan(at, vec2(1.0)))) return 1.0;
    float nearest = texture(light_depth, at).r;
    if (nearest <= 0.0) return 1.0;
    float in_front = clamp(-light.z - nearest, 0.0, texture(light_thickness, at).r);
    return exp(-shadow_attenuation * in_front);
}

void main() {
    vec2 offset = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(offset, offset);
    if (r2 > 1.0) discard;
    vec2 uv = gl_FragCoord.xy / viewport;
    float depth = -eye_center.z;
    if (depth > scene_eye_depth(texture(scene_depth, uv).r)) discard;
    float weight = opacity * exp(-4.0 * r2)
        * (kind == 1.0 ? fade : 1.0) * (kind == 0.0 ? spray_opacity : 1.0);
    // The sprite as a sphere facing the eye (gl_PointCoord's y runs down the screen).
    vec3 normal = vec3(offset.x, -offset.y, sqrt(1.0 - r2));
    float sky = 0.5 + 0.5 * dot(normal, up_direction);
    float sun = max((dot(normal, sun_direction) + 0.5) / 1.5, 0.0);
    float light = 0.25 + 0.15 * sky + 0.9 * sun * sunlight();
    float surface = texture(fluid_depth, uv).r;
    if (kind == 2.0 && surface > 0.0) {
        float dimmed = weight * exp(-bubble_attenuation * max(depth - surface, 0.0));
        foam = vec4(0.0, dimmed, 0.0, dimmed * light);
    } else {
        foam = vec4(weight, 0.0, weight * light, 0.0);
    }
}
