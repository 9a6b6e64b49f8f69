#version 330 core
// particles (debug views): every particle as a lit sphere coloured by its speed or density.
in vec3 eye_center;
in float scalar;

uniform mat4 projection;
uniform float sprite_radius;
uniform float scalar_low;     // value at the bottom of the colour ramp
uniform float scalar_high;    // value at the top
uniform vec3 light_direction; // eye space, towards the light

out vec4 color;

vec3 ramp(float t) {
    // Blue → cyan → white → orange, readable on the sky.
    vec3 slow = vec3(0.10, 0.30, 0.85);
    vec3 mid = vec3(0.35, 0.85, 0.95);
    vec3 fast = vec3(1.00, 0.55, 0.15);
    return t < 0.5 ? mix(slow, mid, t * 2.0) : mix(mid, fast, t * 2.0 - 1.0);
}

void main() {
    vec2 offset = gl_PointCoord * 2.0 - 1.0;
    offset.y = -offset.y;
    float r2 = dot(offset, offset);
    if (r2 > 1.0) discard;
    vec3 normal = vec3(offset, sqrt(1.0 - r2));
    vec3 eye_position = eye_center + normal * sprite_radius;
    vec4 clip = projection * vec4(eye_position, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
    // The ramp is picked on an sRGB screen; shading is in linear light (`post` encodes).
    vec3 base = pow(ramp(clamp((scalar - scalar_low) / (scalar_high - scalar_low), 0.0, 1.0)), vec3(2.2));
    float diffuse = max(dot(normal, light_direction), 0.0);
    vec3 half_vector = normalize(light_direction + vec3(0.0, 0.0, 1.0));
    float specular = pow(max(dot(normal, half_vector), 0.0), 48.0);
    color = vec4(base * (0.25 + 0.75 * diffuse) + vec3(0.35 * specular), 1.0);
}
