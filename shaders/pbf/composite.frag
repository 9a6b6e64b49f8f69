#version 330 core
// composite: shades the fluid surface over the scene.
//   Fresnel: Schlick's approximation, F0 = ((n − 1) / (n + 1))² from the refraction index n.
//   Reflection: the skybox cubemap along the reflected view ray (world space).
//   Refraction: the scene behind, looked up at a screen offset along the normal that grows with
//     the thickness and with 1 − 1/n (a screen-space stand-in for Snell's law).
//   Absorption: Beer–Lambert per RGB channel, T = exp(−attenuation · thickness); the light the
//     fluid absorbs is replaced by its own colour (in-scattering), so deep fluid shows its colour.
//   Specular: Blinn–Phong highlight of the sun.
in vec2 uv;

uniform sampler2D scene_color;
uniform sampler2D scene_depth;
uniform sampler2D fluid_depth;
uniform sampler2D fluid_normal;
uniform sampler2D fluid_thickness;
uniform samplerCube skybox;

uniform mat3 inverse_view_rotation; // eye → world
uniform vec2 projection_scale;      // P[0][0], P[1][1]
uniform vec2 clip_planes;           // near, far
uniform vec3 fluid_color;
uniform vec3 attenuation;           // 1/m per channel
uniform float refraction_index;
uniform float refraction_strength;  // screen offset per metre of thickness
uniform vec3 sun_direction;         // eye space, towards the sun

out vec4 color;

float scene_eye_depth(float window_depth) {
    float near = clip_planes.x;
    float far = clip_planes.y;
    float ndc = window_depth * 2.0 - 1.0;
    return 2.0 * near * far / (far + near - ndc * (far - near));
}

void main() {
    vec4 background = texture(scene_color, uv);
    float depth = texture(fluid_depth, uv).r;
    if (depth <= 0.0 || depth > scene_eye_depth(texture(scene_depth, uv).r)) {
        color = background;
        return;
    }
    vec3 normal = texture(fluid_normal, uv).xyz;
    float thickness = texture(fluid_thickness, uv).r;
    vec3 eye_position = vec3((uv * 2.0 - 1.0) * depth / projection_scale, -depth);
    vec3 to_eye = normalize(-eye_position);

    float f0 = pow((refraction_index - 1.0) / (refraction_index + 1.0), 2.0);
    float cos_theta = clamp(dot(normal, to_eye), 0.0, 1.0);
    float fresnel = f0 + (1.0 - f0) * pow(1.0 - cos_theta, 5.0);

    vec3 reflected = inverse_view_rotation * reflect(-to_eye, normal);
    vec3 reflection = texture(skybox, reflected).rgb;

    float bend = refraction_strength * (1.0 - 1.0 / refraction_index);
    vec2 refracted_uv = clamp(uv - normal.xy * bend * min(thickness, 1.0), vec2(0.0), vec2(1.0));
    vec3 behind = texture(scene_color, refracted_uv).rgb;
    vec3 transmittance = exp(-attenuation * thickness);
    vec3 refraction = behind * transmittance + fluid_color * (1.0 - transmittance);

    vec3 half_vector = normalize(sun_direction + to_eye);
    float specular = 0.8 * pow(max(dot(normal, half_vector), 0.0), 150.0);

    color = vec4(mix(refraction, reflection, fresnel) + vec3(specular * fresnel * 4.0), 1.0);
}
