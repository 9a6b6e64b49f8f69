// thickness: every sprite adds the length of the view ray inside its sphere (additive blending,
// float target), scaled to the particle's volume m/ρ₀, so particles at rest density sum to the
// fluid's thickness in metres. With `anisotropic`, the ray's length inside the particle's
// ellipsoid (`ellipsoid.glsl`, appended; the ellipsoids keep the sphere's volume).
in vec3 eye_center;

uniform float sprite_radius;
uniform float volume_scale; // particle volume m/ρ₀ / sprite sphere volume
const int anisotropic = ANISOTROPIC; // a program each (`particle_sprite.vert`)

out float thickness;

bool ellipsoid_hit(out vec3 entry, out vec3 exit);

void main() {
    if (anisotropic == 1) {
        vec3 entry, exit;
        if (!ellipsoid_hit(entry, exit)) discard;
        thickness = length(exit - entry) * volume_scale;
        return;
    }
    vec2 offset = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(offset, offset);
    if (r2 > 1.0) discard;
    thickness = 2.0 * sqrt(1.0 - r2) * sprite_radius * volume_scale;
}
