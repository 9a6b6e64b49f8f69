#version 330 core
// scene: surface_kind 0 lit solid (obstacles, container walls), 1 checkered floor fading into
// the horizon, 2 unlit lines. Linear light (the `post` pass tone-maps and encodes). The sun's
// share of the light passes through the fluid first (fluid_light 1): under the fluid the floor
// receives what the `caustics` pass refracted onto it, other solids the Beer–Lambert
// transmittance of the fluid between them and the sun (the light-space thickness), so the
// fluid casts a coloured shadow. Nothing changes where no fluid is between a point and the sun.
in vec3 world_position;
in vec3 world_normal;

uniform int surface_kind;
uniform vec4 base_color;
uniform vec3 sun_direction; // world space, towards the sun
uniform float checker_size; // m
uniform vec3 eye_position;  // world space
uniform vec3 fog_color;     // the sky at the horizon
uniform float fog_distance; // m at which the floor is 63 % fog
uniform int fluid_light;    // 1: the sunlight passes through the fluid
uniform mat4 light_view;       // world → the light's eye space
uniform mat4 light_projection; // the light's orthographic projection
uniform sampler2D light_depth;     // nearest fluid surface seen from the sun, m (0 = none)
uniform sampler2D light_thickness; // m of fluid along the sunlight
uniform sampler2D caustics;        // sunlight reaching the floor through the fluid
uniform vec3 attenuation;          // 1/m per channel

out vec4 color;

const float EDGE_THICKNESS = 0.01; // m

vec3 sunlight() {
    if (fluid_light == 0) return vec3(1.0);
    vec4 light = light_view * vec4(world_position, 1.0);
    vec4 clip = light_projection * light;
    vec2 at = clip.xy / clip.w * 0.5 + 0.5;
    if (any(lessThan(at, vec2(0.0))) || any(greaterThan(at, vec2(1.0)))) return vec3(1.0);
    // The thickness is filtered linearly (and blurred), so the shadow's edge follows it
    // smoothly; the nearest surface is not (it is 0 off the fluid).
    float thickness = texture(light_thickness, at).r;
    float nearest = texture(light_depth, at).r;
    // No fluid on the way, or all of it behind this point as seen from the sun.
    if (thickness <= 0.0 || (nearest > 0.0 && -light.z < nearest)) return vec3(1.0);
    if (surface_kind == 1) {
        // The caustics fade in over the fluid's first EDGE_THICKNESS, so the shadow's rim is
        // soft instead of stepped by the light's texels.
        float cover = clamp(thickness / EDGE_THICKNESS, 0.0, 1.0);
        return mix(vec3(1.0), texture(caustics, at).rgb, cover);
    }
    // Other solids (the obstacles, the glass) only where the sun's view holds fluid.
    if (nearest <= 0.0) return vec3(1.0);
    return exp(-attenuation * thickness);
}

void main() {
    if (surface_kind == 2) {
        color = base_color;
        return;
    }
    vec3 albedo = base_color.rgb;
    if (surface_kind == 1) {
        // The checker box-filtered over the pixel's footprint (fwidth), so it fades to its mean
        // towards the horizon instead of shimmering in moiré (the analytic integral of the
        // square wave, one triangle wave per axis).
        vec2 p = world_position.xz / checker_size;
        vec2 w = fwidth(p) + 1e-4;
        vec2 i = 2.0 * (abs(fract((p - 0.5 * w) / 2.0) - 0.5)
                        - abs(fract((p + 0.5 * w) / 2.0) - 0.5)) / w;
        float odd = 0.5 - 0.5 * i.x * i.y;
        albedo *= mix(1.0, 0.6, odd);
    }
    vec3 n = normalize(world_normal);
    float diffuse = abs(dot(n, sun_direction));
    float sky = 0.5 + 0.5 * n.y;
    vec3 lit = albedo * (0.25 + 0.15 * sky + 0.9 * diffuse * sunlight());
    if (surface_kind == 1) {
        // The floor fades into the horizon instead of ending at an edge.
        float fog = 1.0 - exp(-distance(world_position, eye_position) / fog_distance);
        lit = mix(lit, fog_color, fog);
    }
    color = vec4(lit, base_color.a);
}
