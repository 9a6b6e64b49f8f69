// surface: the water, seen from above or below (whichever side of it the eye is on).
//   From above: Fresnel (Schlick) mix of the reflected ray (the walls' upper part or the sky)
//   and the refracted ray traced through the water to the floor, walls or an island's rock
//   (caustics on them, Beer–Lambert tint along the way); the sun's highlight.
//   From below: the refracted ray out to the sky inside Snell's window, total internal
//   reflection back into the pool outside it; the water between the eye and the surface.
//   Fine detail: procedural ripples' slopes added to the normal (common.glsl `detail_slope`).
//   What the rays reach is averaged over the pixel's footprint there (the reached points'
//   screen derivatives, `Footprint`), and the sun's highlight over the directions the
//   reflected ray takes across the pixel (`sun_glint`).
in vec3 world;
in vec3 normal;
in float fixed_flag;

out vec4 color;

void main() {
    // Everything whose derivatives are taken comes before the discard and any branch (GLSL
    // leaves derivatives undefined in non-uniform control flow; `detail` is a uniform).
    float footprint = length(fwidth(world.xz));
    vec3 n = normalize(normal);
    if (detail == 1) {
        vec2 slope = detail_slope(world.xz, footprint);
        n = normalize(n + vec3(-slope.x, 0.0, -slope.y));
    }
    vec3 incident = normalize(world - eye);
    bool from_above = dot(incident, normal) < 0.0;
    vec3 m = from_above ? n : -n;
    vec3 reflected = reflect(incident, m);
    reflected.y = from_above ? abs(reflected.y) : -abs(reflected.y);
    vec3 refracted = refract(incident, m, from_above ? IOR_AIR / IOR_WATER : IOR_WATER / IOR_AIR);
    // The ray going on under water (refracted from above, reflected from below), and from
    // above the reflected one: the footprints of the points they reach.
    vec3 below = underwater_end(world, from_above ? refracted : reflected);
    vec3 above = above_water_end(world, reflected);
    Footprint under = Footprint(dFdx(below), dFdy(below));
    Footprint over = Footprint(dFdx(above), dFdy(above));
    vec3 spread = fwidth(reflected);
    if (fixed_flag > 0.5) {
        discard;
    }
    vec3 c;
    if (from_above) {
        float fresnel = schlick(-dot(incident, n));
        c = mix(underwater_ray(world, refracted, under), above_water_ray(world, reflected, over),
                fresnel);
        c += vec3(1.0, 0.95, 0.85) * 8.0 * sun_glint(reflected, spread) * fresnel;
    } else {
        bool total = dot(refracted, refracted) == 0.0;
        float fresnel = total ? 1.0 : schlick(dot(refracted, n));
        vec3 out_of_water = total ? vec3(0.0) : texture(sky, refracted).rgb;
        c = mix(out_of_water, underwater_ray(world, reflected, under), fresnel);
        c = through_water(c, distance(eye, world));
    }
    color = vec4(c, 1.0);
}
