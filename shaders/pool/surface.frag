// surface: the water, seen from above or below (whichever side of it the eye is on).
//   From above: Fresnel (Schlick) mix of the reflected ray (the walls' upper part or the sky)
//   and the refracted ray traced through the water to the floor, walls or an island's rock
//   (caustics on them, Beer–Lambert tint along the way); the sun's highlight.
//   From below: the refracted ray out to the sky inside Snell's window, total internal
//   reflection back into the pool outside it; the water between the eye and the surface.
//   Fine detail: procedural ripples' slopes added to the normal (common.glsl `detail_slope`).
in vec3 world;
in vec3 normal;
in float fixed_flag;

out vec4 color;

void main() {
    // Derivatives before the discard (undefined in non-uniform control flow after it).
    float footprint = length(fwidth(world.xz));
    if (fixed_flag > 0.5) {
        discard;
    }
    vec3 n = normalize(normal);
    if (detail == 1) {
        vec2 slope = detail_slope(world.xz, footprint);
        n = normalize(n + vec3(-slope.x, 0.0, -slope.y));
    }
    vec3 incident = normalize(world - eye);
    vec3 c;
    if (dot(incident, normal) < 0.0) {
        vec3 reflected = reflect(incident, n);
        reflected.y = abs(reflected.y);
        vec3 refracted = refract(incident, n, IOR_AIR / IOR_WATER);
        float fresnel = schlick(-dot(incident, n));
        c = mix(underwater_ray(world, refracted), above_water_ray(world, reflected), fresnel);
        float sun = pow(max(dot(reflected, light), 0.0), 1200.0);
        c += vec3(1.0, 0.95, 0.85) * 8.0 * sun * fresnel;
    } else {
        vec3 m = -n;
        vec3 reflected = reflect(incident, m);
        reflected.y = -abs(reflected.y);
        vec3 refracted = refract(incident, m, IOR_WATER / IOR_AIR);
        bool total = dot(refracted, refracted) == 0.0;
        float fresnel = total ? 1.0 : schlick(dot(refracted, n));
        vec3 out_of_water = total ? vec3(0.0) : texture(sky, refracted).rgb;
        c = mix(out_of_water, underwater_ray(world, reflected), fresnel);
        c = through_water(c, distance(eye, world));
    }
    color = vec4(c, 1.0);
}
