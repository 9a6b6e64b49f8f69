#version 330 core
// sphere_depth: the nearest sphere surface per pixel. Writes the true eye-space depth of the
// sphere (not of the sprite's plane) to gl_FragDepth, so the depth test keeps the nearest surface,
// and the positive eye distance along -z to the colour target for the later passes. With
// `anisotropic`, the surface is the particle's ellipsoid where the view ray enters it
// (`ellipsoid.glsl`, appended).
in vec3 eye_center;

uniform mat4 projection;
uniform float sprite_radius;
uniform int anisotropic;

out float eye_depth;

bool ellipsoid_hit(out vec3 entry, out vec3 exit);

void main() {
    vec3 eye_position;
    if (anisotropic == 1) {
        vec3 exit;
        if (!ellipsoid_hit(eye_position, exit)) discard;
    } else {
        vec2 offset = gl_PointCoord * 2.0 - 1.0;
        offset.y = -offset.y;
        float r2 = dot(offset, offset);
        if (r2 > 1.0) discard;
        eye_position = eye_center + vec3(offset, sqrt(1.0 - r2)) * sprite_radius;
    }
    vec4 clip = projection * vec4(eye_position, 1.0);
    gl_FragDepth = 0.5 * (clip.z / clip.w) + 0.5;
    eye_depth = -eye_position.z;
}
