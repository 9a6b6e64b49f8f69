// water: what the rays from the water's surface see (under it: the floor, walls, the land's
// rock; above it: the walls and the sky) and the surface's own shading, put after common.glsl
// and land_search.glsl.

// The open sea past the pool: a ray from o under water meets the floor continued, or, going
// level or up, nothing but water.
vec3 open_water_ray(vec3 o, vec3 d, Footprint f) {
    if (d.y > -1e-4) {
        return WATER_COLOR;
    }
    float t = (-pool_depth - o.y) / d.y;
    vec3 p = o + d * t;
    vec3 up = vec3(0.0, 1.0, 0.0);
    return through_water(lit(tile_albedo(p, up, f), p, up, f), t);
}

// Where a ray from o along d meets the floor's plane (a ray going level or up: far along it).
vec3 floor_continued(vec3 o, vec3 d) {
    return o + d * ((-pool_depth - o.y) / min(d.y, -1e-4));
}

// Where underwater_ray's ray ends (an island's rock, the floor, a wall, back at the surface, or
// on the open sea the floor continued): the point whose footprint its lookups take.
vec3 underwater_end(vec3 o, vec3 d) {
    vec3 n;
    float t = exit_box(o, d, max(o.y, 0.0) + 1e-3, n);
    float t_land;
    if (land_along(o, d, t, t_land)) {
        return o + d * t_land;
    }
    vec3 p = o + d * t;
    if (open_sea == 1 && abs(n.y) < 0.5) {
        p = floor_continued(o, d);
    }
    return p;
}

// Where above_water_ray's ray meets the walls' planes, continued above their top (so that the
// point, and its footprint, moves smoothly as the ray goes from the wall over its top to the
// sky).
vec3 above_water_end(vec3 o, vec3 d) {
    vec3 n;
    return o + d * exit_box(o, d, rim_height + 4.0 * pool_size, n);
}

// What a ray from o going down (under water) sees: the pool's floor or walls, or an island's
// rock, through the water between.
vec3 underwater_ray(vec3 o, vec3 d, Footprint f) {
    vec3 n;
    float t = exit_box(o, d, max(o.y, 0.0) + 1e-3, n);
    float t_land;
    if (land_along(o, d, t, t_land)) {
        vec3 p = o + d * t_land;
        return through_water(lit(rock_albedo(p), p, land_normal(p.xz / spacing(), 1.0), f),
                             t_land);
    }
    vec3 p = o + d * t;
    if (n.y < -0.5) {
        // Back up at the surface (a ray the waves turned upwards): the water's own colour.
        return through_water(WATER_COLOR, t);
    }
    if (open_sea == 1 && abs(n.y) < 0.5) {
        return open_water_ray(o, d, f);
    }
    return through_water(lit(tile_albedo(p, n, f), p, n, f), t);
}

// What a ray from o going up (above the water) sees: the walls' upper part or the sky. The
// walls' top edge is box-filtered over the footprint f of the point the ray meets on their
// planes (`above_water_end`): a pixel whose rays (far waves turning them) meet the wall and pass
// over it in turn sees both in their shares, not one or the other.
vec3 above_water_ray(vec3 o, vec3 d, Footprint f) {
    vec3 sky_color = textureLod(sky, d, 0.0).rgb;
    if (open_sea == 0 && inside_pool(o.xz) && o.y < rim_height) {
        vec3 n;
        float t = exit_box(o, d, rim_height + 4.0 * pool_size, n);
        vec3 p = o + d * t;
        float wall = clamp((rim_height - p.y) / max(abs(f.dx.y) + abs(f.dy.y), 1e-6) + 0.5,
                           0.0, 1.0);
        if (abs(n.y) < 0.5 && wall > 0.0) {
            return mix(sky_color, lit(tile_albedo(p, n, f), p, n, f), wall);
        }
    }
    return sky_color;
}

float schlick(float cosine) {
    return F0 + (1.0 - F0) * pow(1.0 - clamp(cosine, 0.0, 1.0), 5.0);
}

// Slopes d(height)/d(x, z) of a few short gravity–capillary ripples (2–7 cm) at xz, for a pixel
// covering `footprint` metres (fwidth of the position: derivatives exist only in fragment
// shaders): a ripple fades out as its wavelength shrinks from four pixels to two, so the far
// water does not alias into speckles.
vec2 detail_slope(vec2 xz, float footprint) {
    vec2 slope = vec2(0.0);
    for (int k = 0; k < 5; ++k) {
        float angle = 2.399 * float(k) + 0.4;
        vec2 direction = vec2(cos(angle), sin(angle));
        float wavelength = 0.02 + 0.012 * float(k);
        float wavenumber = 6.2832 / wavelength;
        // ω² = g·k + (σ/ρ)·k³
        float omega = sqrt(9.81 * wavenumber + 7.3e-5 * wavenumber * wavenumber * wavenumber);
        float amplitude = 0.025 / wavenumber;
        float resolved = 1.0 - smoothstep(0.25, 0.5, footprint / wavelength);
        slope += resolved * amplitude * wavenumber * direction
            * cos(dot(direction, xz) * wavenumber - omega * time + 1.7 * float(k));
    }
    return slope;
}

// The sun's highlight seen along `reflected`: the lobe pow(cos, 1200) widened by `spread`, how
// much the reflected direction turns across the pixel (its fwidth), keeping its light (the
// lobe's solid angle goes as 1 / exponent): a glint narrower than a pixel lights the pixel
// dimly instead of fully or not at all.
float sun_glint(vec3 reflected, vec3 spread) {
    const float SHARPNESS = 1200.0;
    float sharpness = 1.0 / (1.0 / SHARPNESS + 0.25 * dot(spread, spread));
    return sharpness / SHARPNESS * pow(max(dot(reflected, light), 0.0), sharpness);
}

// What lies above the water and far away fades into the horizon's colour with its distance.
vec3 horizon_fog(vec3 color, vec3 p) {
    float fog = 1.0 - exp(-distance(p, eye) / (6.0 * pool_size));
    return mix(color, horizon, fog);
}

#ifdef FRAGMENT_SHADER
// The water's surface at a point of a fragment: the normal with the fine detail, the eye's
// ray, its reflection and refraction (on the eye's side: from below, reflected down and
// refracted up), and `spread`, how much the reflected ray turns across the pixel. One
// function for the simulated tile (`surface`) and the calm sea past it (`pool`), so the two
// meet without a seam. It takes derivatives: call it in uniform control flow, before any
// discard.
struct Water {
    vec3 n;
    vec3 incident;
    vec3 reflected;
    vec3 refracted;
    vec3 spread;
    bool from_above;
};

// The water at p with the normal n (the fine detail in it), seen from the eye on the side
// `from_above`; `spread` is the glint's (how much the reflected ray turns across what p stands
// for). It takes no derivatives: the footprint's taps call it in a loop.
Water water_seen(vec3 p, vec3 n, bool from_above, vec3 spread) {
    Water w;
    w.n = n;
    w.incident = normalize(p - eye);
    w.from_above = from_above;
    vec3 m = from_above ? n : -n;
    w.reflected = reflect(w.incident, m);
    w.reflected.y = from_above ? abs(w.reflected.y) : -abs(w.reflected.y);
    w.refracted = refract(w.incident, m, from_above ? IOR_AIR / IOR_WATER : IOR_WATER / IOR_AIR);
    w.spread = spread;
    return w;
}

// The surface's normal at n plus the fine detail's slopes at p (for a pixel `footprint` m wide).
vec3 with_detail(vec3 n, vec2 xz, float footprint) {
    if (detail == 1) {
        vec2 slope = detail_slope(xz, footprint);
        n = normalize(n + vec3(-slope.x, 0.0, -slope.y));
    }
    return n;
}

Water water_at(vec3 p, vec3 geometric_normal) {
    float footprint = length(fwidth(p.xz));
    vec3 n = with_detail(normalize(geometric_normal), p.xz, footprint);
    bool from_above = dot(normalize(p - eye), geometric_normal) < 0.0;
    Water w = water_seen(p, n, from_above, vec3(0.0));
    w.spread = fwidth(w.reflected);
    return w;
}

// The water seen from above at p: the Fresnel (Schlick) mix of what its refracted ray sees
// under the water and its reflected ray above, the sun's highlight, and on the open sea the
// fade into the horizon.
vec3 water_from_above(Water w, vec3 p, vec3 under_water, vec3 above_water) {
    float fresnel = schlick(-dot(w.incident, w.n));
    vec3 c = mix(under_water, above_water, fresnel);
    c += vec3(1.0, 0.95, 0.85) * 8.0 * sun_glint(w.reflected, w.spread) * fresnel;
    return open_sea == 1 ? horizon_fog(c, p) : c;
}
#endif
