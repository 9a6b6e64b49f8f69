// surface: the water, seen from above or below (whichever side of it the eye is on).
//   From above: Fresnel (Schlick) mix of the reflected ray (the walls' upper part or the sky)
//   and the refracted ray traced through the water to the floor, walls or an island's rock
//   (caustics on them, Beer–Lambert tint along the way); the sun's highlight.
//   From below: the refracted ray out to the sky inside Snell's window, total internal
//   reflection back into the pool outside it; the water between the eye and the surface.
//   The normal, rays and highlight are common.glsl's `water_at` and `water_from_above`, which
//   the calm sea past an open-sea tile (`pool`) shares. What the rays reach is averaged over
//   the pixel's footprint there (the reached points' screen derivatives, `Footprint`).
in vec3 world;
in vec3 normal;
in float fixed_flag;

out vec4 color;

void main() {
    // Everything whose derivatives are taken comes before the discard and any branch (GLSL
    // leaves derivatives undefined in non-uniform control flow; `detail` is a uniform).
    Water w = water_at(world, normal);
    // The ray going on under water (refracted from above, reflected from below), and from
    // above the reflected one: the footprints of the points they reach.
    vec3 below = underwater_end(world, w.from_above ? w.refracted : w.reflected);
    vec3 above = above_water_end(world, w.reflected);
    Footprint under = Footprint(dFdx(below), dFdy(below));
    Footprint over = Footprint(dFdx(above), dFdy(above));
    if (fixed_flag > 0.5) {
        discard;
    }
    vec3 c;
    if (w.from_above) {
        c = water_from_above(w, world, underwater_ray(world, w.refracted, under),
                             above_water_ray(world, w.reflected, over));
    } else {
        bool total = dot(w.refracted, w.refracted) == 0.0;
        float fresnel = total ? 1.0 : schlick(dot(w.refracted, w.n));
        vec3 out_of_water = total ? vec3(0.0) : texture(sky, w.refracted).rgb;
        c = mix(out_of_water, underwater_ray(world, w.reflected, under), fresnel);
        c = through_water(c, distance(eye, world));
    }
    color = vec4(c, 1.0);
}
