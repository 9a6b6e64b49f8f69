// surface: the water, seen from above or below (whichever side of it the eye is on).
//   From above: Fresnel (Schlick) mix of the reflected ray (the walls' upper part or the sky)
//   and the refracted ray traced through the water to the floor, walls or an island's rock
//   (caustics on them, Beer–Lambert tint along the way); the sun's highlight.
//   From below: the refracted ray out to the sky inside Snell's window, total internal
//   reflection back into the pool outside it; the water between the eye and the surface.
//   The normal, rays and highlight are common.glsl's `water_at` and `water_from_above`, which
//   the calm sea past an open-sea tile (`pool`) shares. What the rays reach is averaged over
//   the pixel's footprint there (the reached points' screen derivatives, `Footprint`).
//   Far away, where a pixel's footprint on the surface spans more than TAP_CELLS of the drawn
//   mesh's cells (`far_tap_count`), the pixel is the mean of a few taps over that footprint,
//   each shaded with the surface's normal there: the waves' normal, which a pixel sampled
//   once, averaged over what it covers.
in vec3 world;
in vec2 rest;
in vec3 normal;
in float fixed_flag;

out vec4 color;

vec3 shade(Water w, vec3 p, Footprint under, Footprint over) {
    if (w.from_above) {
        return water_from_above(w, p, underwater_ray(p, w.refracted, under),
                                above_water_ray(p, w.reflected, over));
    }
    bool total = dot(w.refracted, w.refracted) == 0.0;
    float fresnel = total ? 1.0 : schlick(dot(w.refracted, w.n));
    vec3 out_of_water = total ? vec3(0.0) : textureLod(sky, w.refracted, 0.0).rgb;
    vec3 c = mix(out_of_water, underwater_ray(p, w.reflected, under), fresnel);
    return through_water(c, distance(eye, p));
}

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
    vec2 across = dFdx(rest);
    vec2 along = dFdy(rest);
    vec3 turn_across = abs(dFdx(w.reflected));
    vec3 turn_along = abs(dFdy(w.reflected));
    if (fixed_flag > 0.5) {
        discard;
    }
#ifndef FAR_TAPS
    // Built without the far taps (`[light] far_taps = false`, the panel's checkbox): one
    // shading a pixel. llvmpipe pays about one more `shade` a pixel for the loop below even
    // where no pixel takes it (docs/pool-filtering.md), so CPU-only users may switch the taps off.
    color = vec4(shade(w, world, under, over), 1.0);
#else
    int n = far_tap_count(across, along);
    if (n == 1) {
        color = vec4(shade(w, world, under, over), 1.0);
        return;
    }
    // n taps over the footprint, stratified along its longer screen axis, on the pixel's
    // centre line along the other; each stands for a 1/n share of the pixel along the longer
    // axis (its footprints', detail's and glint's spread) and all of it along the other. With
    // walls, a tap past them is drawn at the wall's edge: the water there, not what lies past.
    // On an open sea a tap past the tile reads its edge's texels (`surface_at` clamps): at the
    // angles where taps land there, the tile's displaced edge hides the calm sea behind it,
    // and the edge's water is what a finer picture shows (shading such taps as calm sea was
    // worse, tests/pool_render_aliasing.rs `far_taps_filter_the_open_seas_edge`).
    bool y_longer = length(along) > length(across);
    vec2 scale = y_longer ? vec2(1.0, 1.0 / float(n)) : vec2(1.0 / float(n), 1.0);
    vec2 longer = y_longer ? along : across;
    Footprint tap_under = Footprint(under.dx * scale.x, under.dy * scale.y);
    Footprint tap_over = Footprint(over.dx * scale.x, over.dy * scale.y);
    vec3 spread = turn_across * scale.x + turn_along * scale.y;
    float footprint = length(abs(across) * scale.x + abs(along) * scale.y);
    vec3 sum = vec3(0.0);
    for (int k = 0; k < n; ++k) {
        vec2 xz = rest + ((float(k) + 0.5) / float(n) - 0.5) * longer;
        if (open_sea == 0) {
            xz = clamp(xz, vec2(0.0), vec2(pool_size));
        }
        vec3 p = surface_point(xz);
        vec3 m = with_detail(surface_normal(xz), xz, footprint);
        sum += shade(water_seen(p, m, w.from_above, spread), p, tap_under, tap_over);
    }
    color = vec4(sum / float(n), 1.0);
#endif
}
