// sphere_depth: the nearest sphere surface per pixel. Writes the true eye-space depth of the
// sphere (not of the sprite's plane) to gl_FragDepth, so the depth test keeps the nearest surface,
// and the positive eye distance along -z to the colour target for the later passes. With
// `anisotropic`, the surface is the particle's ellipsoid where the view ray enters it
// (`ellipsoid.glsl`, appended).
//
// The depth's two lowest bits mark the fluid's face on the glass for the depth filters: 2
// where the surface lies within `wall_distance` of a near wall's plane and its own normal (the
// sphere's or the ellipsoid's) points within 45° of the wall's, as `normals.frag` tests the
// smoothed surface; the filters keep such samples and the rest apart (`glass_mark.glsl`). 1
// marks the rest of the band, where `normals` tests the wall rule; 0 elsewhere. The band is
// tested at the point of the pixel's view ray at the surface's depth, the point `normals`
// rebuilds from the depth: a sphere's surface point under the sprite coordinate lies off that
// ray sideways, by up to ~0.7 sprite radii near the frame's edge.
in vec3 eye_center;

uniform mat4 projection;
uniform float sprite_radius;
const int anisotropic = ANISOTROPIC; // a program each (`particle_sprite.vert`)
// The near walls (`particle_sprite.vert`'s; none in the sun's view), and their band.
flat in vec4 wall[3];
uniform float wall_distance;

// Eye distance along −z, m, its two lowest bits the mark (`glass_mark.glsl`, appended).
out float eye_depth;

bool ellipsoid_hit(out vec3 entry, out vec3 exit);
vec3 ellipsoid_normal(vec3 point);
vec3 ray_point(float depth);
float with_glass_mark(float depth, uint mark);

// The mark of `plane` for the surface whose outward normal is `normal`, seen at `on_ray`
// (`ray_point`): 2 in its band and facing it within 45°, 1 otherwise near the band (1 % over
// it, for rounding: `normals` tests the pixel), 0 elsewhere.
uint wall_mark(vec4 plane, vec3 normal, vec3 on_ray) {
    float distance = abs(dot(plane.xyz, on_ray) + plane.w);
    return distance < wall_distance ? (dot(normal, plane.xyz) > 0.7071 ? 2u : 1u)
                                    : (distance < 1.01 * wall_distance ? 1u : 0u);
}

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
    // The near walls, straight-line code (no branch on `wall_count`: llvmpipe runs every
    // branch's code anyway). With spheres `ellipsoid_normal` is the sphere's (its inverse axes
    // are the sprite radius's inverse).
    // (In the sun's orthographic view `on_ray` is meaningless, but no wall is passed there.)
    vec3 on_ray = ray_point(-eye_position.z);
    vec3 normal = ellipsoid_normal(eye_position);
    uint mark = max(max(wall_mark(wall[0], normal, on_ray), wall_mark(wall[1], normal, on_ray)),
                    wall_mark(wall[2], normal, on_ray));
    eye_depth = with_glass_mark(-eye_position.z, mark);
}

