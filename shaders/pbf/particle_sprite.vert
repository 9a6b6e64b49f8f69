// (No `#version`: the programs put `#version 330 core` first, and for the sphere_depth and
// thickness passes `#define ANISOTROPIC 0` or `1`, a program each: llvmpipe runs both sides of
// a branch on a uniform, and the sphere programs paid for the ellipsoids' code.)
// Shared by the sphere_depth, thickness and particles passes: one point sprite per particle,
// sized so that it covers the particle's sphere of radius `sprite_radius` in eye space, or with
// `anisotropic` its ellipsoid (the `anisotropy` stage's records, scaled by `sprite_radius` /
// `particle_radius`), whose inverse axes go to the fragment shader for the ray's intersection.
layout(location = 0) in vec4 particle; // xyz position (m), w speed (m/s) or density (kg/m³)
// The ellipsoid, read when `anisotropic`: semi-axis k (m) in xyz, centre's coordinate k in w.
layout(location = 1) in vec4 axis0;
layout(location = 2) in vec4 axis1;
layout(location = 3) in vec4 axis2;

uniform mat4 view;
uniform mat4 projection;
uniform float sprite_radius;   // m
uniform float viewport_height; // px
#ifdef ANISOTROPIC
const int anisotropic = ANISOTROPIC;
#else
uniform int anisotropic;       // 1: draw the ellipsoids (the `particles` view)
#endif
uniform float axis_scale;      // sprite_radius / particle radius
// The near walls, read by `sphere_depth` alone (the other passes' fragment shaders take none of
// `wall`, so the linker drops them): `normals.frag`'s planes, a column each, the first
// `wall_count`.
uniform mat4 wall_planes;
uniform int wall_count;

out vec3 eye_center;
out float scalar;
// Rows of the inverse of the eye-space axis matrix: u = inverse_axes · (x − centre) is in the
// unit ball inside the ellipsoid.
flat out vec3 inverse_axis0;
flat out vec3 inverse_axis1;
flat out vec3 inverse_axis2;
// The near walls' planes (eye space: xyz the outward normal, w the offset), one a varying, the
// ones past `wall_count` a plane no surface is near. Passed here rather than read from the uniforms
// in the fragment shader: on llvmpipe (Mesa 22.3) the fragment shader's reads of the `wall_planes`
// uniform cost `sphere_depth` +30 % (docs/render-timings.md, "The mark's cost"), a flat varying
// next to nothing.
flat out vec4 wall[3];

void main() {
    scalar = particle.w;
    float radius = sprite_radius;
    vec3 center = particle.xyz;
    if (anisotropic == 1) {
        center = vec3(axis0.w, axis1.w, axis2.w);
        mat3 rotation = mat3(view);
        vec3 a0 = rotation * axis0.xyz * axis_scale;
        vec3 a1 = rotation * axis1.xyz * axis_scale;
        vec3 a2 = rotation * axis2.xyz * axis_scale;
        inverse_axis0 = a0 / max(dot(a0, a0), 1e-20);
        inverse_axis1 = a1 / max(dot(a1, a1), 1e-20);
        inverse_axis2 = a2 / max(dot(a2, a2), 1e-20);
        // The longest axis bounds the ellipsoid; a margin for the perspective's stretch.
        radius = 1.15 * sqrt(max(dot(a0, a0), max(dot(a1, a1), dot(a2, a2))));
    } else {
        inverse_axis0 = vec3(1.0 / sprite_radius, 0.0, 0.0);
        inverse_axis1 = vec3(0.0, 1.0 / sprite_radius, 0.0);
        inverse_axis2 = vec3(0.0, 0.0, 1.0 / sprite_radius);
    }
    for (int k = 0; k < 3; ++k) {
        wall[k] = k < wall_count ? wall_planes[k] : vec4(0.0, 0.0, 0.0, 1e9);
    }
    vec4 eye = view * vec4(center, 1.0);
    eye_center = eye.xyz;
    gl_Position = projection * eye;
    // Projected diameter in pixels: 2 r · (h / 2) · P[1][1] / w (w is the depth under a
    // perspective projection, 1 under the light's orthographic one).
    gl_PointSize = max(1.0, radius * viewport_height * projection[1][1] / max(gl_Position.w, 1e-4));
}
