#version 330 core
// composite: shades the fluid surface over the scene, in linear light (`post` tone-maps).
//   Fresnel: Schlick's approximation, F0 = ((n − 1) / (n + 1))² from the refraction index n.
//   Reflection: the skybox cubemap along the reflected view ray (world space).
//   Refraction: the scene behind, looked up at a screen offset along the normal that grows with
//     the thickness and with 1 − 1/n (a screen-space stand-in for Snell's law); a lookup that
//     lands on something in front of the fluid (a container edge, an obstacle) falls back to
//     the pixel straight behind, so solids in front are never smeared into the water.
//   Absorption: Beer–Lambert per RGB channel, T = exp(−attenuation · thickness); the light the
//     fluid absorbs is replaced by its own colour (in-scattering), so deep fluid shows its colour.
//   Specular: the sun's highlight, GGX (Trowbridge–Reitz) distribution with Schlick's Fresnel
//     and the Smith–Schlick visibility, at `roughness`, of radiance `sun_radiance`.
//   Foam: the `foam` pass's sprites (when `foam` is 1): bubbles mixed in first, seen through
//     the fluid, then spray and foam over everything, each as 1 − exp(−weight) of `foam_color`
//     (an albedo) times the weighted mean of the sprites' light there (foam.frag).
//   Water behind glass (`normals`' w = 2: the fluid's face on a near wall): the surface is the
//     glass–water interface, whose reflectance is F0 = ((n − 1.5) / (n + 1.5))² (0.004 for
//     water; light coming through the glass meets it at under the critical angle, so F0
//     barely grows) and has no highlight of its own; the scene straight behind, no bend. The
//     glass's own outer reflection is not drawn, as the near walls are not (else the face, seen
//     edge-on, was a strip of mirrors: light flecks).
// Writes the fluid's depth (else the scene's), so the `edges` pass after it is hidden by water.
in vec2 uv;

uniform sampler2D scene_color;
uniform sampler2D scene_depth;
uniform sampler2D fluid_depth;
uniform sampler2D fluid_normal;
uniform sampler2D fluid_thickness;
uniform samplerCube skybox;
uniform sampler2D foam_texture;
uniform int foam;             // 1: the foam pass ran
uniform vec3 foam_color;      // linear RGB albedo

uniform mat3 inverse_view_rotation; // eye → world
uniform vec2 projection_scale;      // P[0][0], P[1][1]
uniform vec2 clip_planes;           // near, far
uniform vec3 fluid_color;           // linear RGB
uniform vec3 attenuation;           // 1/m per channel
uniform float refraction_index;
uniform float refraction_strength;  // screen offset per metre of thickness
uniform vec3 sun_direction;         // eye space, towards the sun
uniform float sun_radiance;
uniform float roughness;

out vec4 color;

const float PI = 3.14159265;
const float GLASS_INDEX = 1.5;

float scene_eye_depth(float window_depth) {
    float near = clip_planes.x;
    float far = clip_planes.y;
    float ndc = window_depth * 2.0 - 1.0;
    return 2.0 * near * far / (far + near - ndc * (far - near));
}

float window_depth(float eye_depth) {
    float near = clip_planes.x;
    float far = clip_planes.y;
    float ndc = (far + near) / (far - near) - 2.0 * far * near / ((far - near) * eye_depth);
    return 0.5 * ndc + 0.5;
}

void main() {
    vec4 background = texture(scene_color, uv);
    float background_depth = texture(scene_depth, uv).r;
    float depth = texture(fluid_depth, uv).r;
    vec4 diffuse = foam == 1 ? texture(foam_texture, uv) : vec4(0.0);
    vec2 cover = vec2(1.0) - exp(-diffuse.rg);
    // The sprites' mean light, front (spray and foam) and under the surface (bubbles).
    vec2 lit = diffuse.ba / max(diffuse.rg, vec2(1e-6));
    vec3 front_foam = foam_color * lit.x;
    vec3 bubbles = foam_color * lit.y;
    if (depth <= 0.0 || depth > scene_eye_depth(background_depth)) {
        color = vec4(mix(background.rgb, front_foam, cover.x), background.a);
        gl_FragDepth = background_depth;
        return;
    }
    gl_FragDepth = window_depth(depth);
    vec4 normal_sample = texture(fluid_normal, uv);
    vec3 normal = normal_sample.xyz;
    bool behind_glass = normal_sample.w > 1.5;
    float thickness = texture(fluid_thickness, uv).r;
    vec3 eye_position = vec3((uv * 2.0 - 1.0) * depth / projection_scale, -depth);
    vec3 to_eye = normalize(-eye_position);

    float f0 = pow((refraction_index - 1.0) / (refraction_index + 1.0), 2.0);
    float cos_theta = clamp(dot(normal, to_eye), 0.0, 1.0);
    float fresnel = behind_glass
        ? pow((refraction_index - GLASS_INDEX) / (refraction_index + GLASS_INDEX), 2.0)
        : f0 + (1.0 - f0) * pow(1.0 - cos_theta, 5.0);

    vec3 reflected = inverse_view_rotation * reflect(-to_eye, normal);
    vec3 reflection = texture(skybox, reflected).rgb;

    float bend = refraction_strength * (1.0 - 1.0 / refraction_index);
    vec2 refracted_uv = clamp(uv - normal.xy * bend * min(thickness, 1.0), vec2(0.0), vec2(1.0));
    if (behind_glass || scene_eye_depth(texture(scene_depth, refracted_uv).r) < depth) {
        refracted_uv = uv;
    }
    vec3 behind = texture(scene_color, refracted_uv).rgb;
    vec3 transmittance = exp(-attenuation * thickness);
    vec3 refraction = behind * transmittance + fluid_color * (1.0 - transmittance);

    vec3 half_vector = normalize(sun_direction + to_eye);
    float n_dot_l = max(dot(normal, sun_direction), 0.0);
    float n_dot_h = max(dot(normal, half_vector), 0.0);
    float a2 = roughness * roughness * roughness * roughness;
    float d = a2 / (PI * pow(n_dot_h * n_dot_h * (a2 - 1.0) + 1.0, 2.0));
    float k = 0.5 * roughness * roughness;
    float visibility = 0.25 / ((n_dot_l * (1.0 - k) + k) * (cos_theta * (1.0 - k) + k));
    float f_sun = f0 + (1.0 - f0) * pow(1.0 - max(dot(half_vector, to_eye), 0.0), 5.0);
    float specular = behind_glass ? 0.0 : d * visibility * f_sun * n_dot_l * sun_radiance;

    vec3 shaded = mix(refraction, reflection, fresnel) + vec3(specular);
    shaded = mix(shaded, bubbles, cover.y);
    color = vec4(mix(shaded, front_foam, cover.x), 1.0);
}
