// The view ray through this fragment against the particle's ellipsoid (`particle_sprite.vert`'s
// inverse axes): appended to sphere_depth.frag and thickness.frag (which declare eye_center and
// this function's prototype), used when `anisotropic`.
flat in vec3 inverse_axis0;
flat in vec3 inverse_axis1;
flat in vec3 inverse_axis2;

uniform mat4 inverse_projection;
uniform vec2 viewport; // px

// The ray's entry and exit in eye space; false when it misses. Works for the perspective view
// and the sun's orthographic one alike: the ray runs from the near to the far plane's point.
bool ellipsoid_hit(out vec3 entry, out vec3 exit) {
    vec2 ndc = gl_FragCoord.xy / viewport * 2.0 - 1.0;
    vec4 near = inverse_projection * vec4(ndc, -1.0, 1.0);
    vec4 far = inverse_projection * vec4(ndc, 1.0, 1.0);
    vec3 origin = near.xyz / near.w;
    vec3 direction = far.xyz / far.w - origin;
    mat3 to_unit = transpose(mat3(inverse_axis0, inverse_axis1, inverse_axis2));
    vec3 u0 = to_unit * (origin - eye_center);
    vec3 u1 = to_unit * direction;
    float a = dot(u1, u1);
    float b = dot(u0, u1);
    float c = dot(u0, u0) - 1.0;
    float discriminant = b * b - a * c;
    if (discriminant < 0.0 || a <= 0.0) return false;
    float root = sqrt(discriminant);
    entry = origin + direction * ((-b - root) / a);
    exit = origin + direction * ((-b + root) / a);
    return true;
}

// The point on this fragment's view ray (the perspective view's) at eye distance `depth` along
// −z: where `normals.frag` rebuilds the pixel's surface from its depth (a symmetric frustum:
// the inverse projection's diagonal scales the NDC). Under the sun's orthographic view the
// point means nothing; `sphere_depth` calls it there too, harmlessly, as no wall is passed
// (`particle_sprite.vert`'s planes are then zero normals 1e9 away: mark 0).
vec3 ray_point(float depth) {
    vec2 ndc = gl_FragCoord.xy / viewport * 2.0 - 1.0;
    return vec3(ndc * vec2(inverse_projection[0][0], inverse_projection[1][1]) * depth, -depth);
}

// The ellipsoid's outward normal (eye space) at `point` on its surface.
vec3 ellipsoid_normal(vec3 point) {
    mat3 to_unit = transpose(mat3(inverse_axis0, inverse_axis1, inverse_axis2));
    return normalize(transpose(to_unit) * (to_unit * (point - eye_center)));
}
