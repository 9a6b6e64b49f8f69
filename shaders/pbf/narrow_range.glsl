
// narrow_range: the rules of the narrow-range filter (Truong & Yuksel 2018, "A Narrow-Range
// Filter for Screen-Space Fluid Rendering"), appended to `smooth_depth.frag` (its separable
// halves) and `smooth_depth_2d.frag` (its 2-D pass), which declare `depth_texture`. The range
// is taken about the plane through the centre along the local depth slope as well as about
// the centre's depth: with the centre's alone and no bias correction, on a sloped surface (a
// grazing view) the far side's samples fell out of the range and the near side's stayed in,
// which pulled the surface towards the eye and tilted its normals to face it.

// The depth slope at `uv` per `step` (one texel along an axis): the central difference, or
// the smaller one-sided one across a step, none across a jump bigger than `threshold`.
float narrow_range_slope(vec2 uv, vec2 step, float center, float threshold) {
    float ahead = texture(depth_texture, uv + step).r;
    float behind = texture(depth_texture, uv - step).r;
    float forward = ahead - center;
    float backward = center - behind;
    float slope = 0.0;
    if (ahead > 0.0 && behind > 0.0) {
        slope = abs(forward - backward) < threshold ? 0.5 * (forward + backward)
              : (abs(forward) < abs(backward) ? forward : backward);
    } else if (ahead > 0.0) {
        slope = forward;
    } else if (behind > 0.0) {
        slope = backward;
    }
    return abs(slope) > threshold ? 0.0 : slope;
}

// A sample more than `threshold` from `expected`, deeper or nearer, belongs to another layer:
// false, drop it. (Nearer samples were clamped to `expected` − `threshold` and kept: beside
// a drop in front, the layer behind was pulled towards the eye by up to the threshold,
// −6 to −9 cm on the dam break's back layers with the bias correction; docs/render-notes.md.)
// So does one more than `threshold` from the centre: the plane is extrapolated from the
// centre's slope, which at a drop's rim is the steep flank of its cap, and a few texels out
// it reached the layer behind (8 cm behind a drop, within the threshold of that plane), which
// the drop then sank into (+3.3 cm for a lone sprite-sized drop; the front of the dam break's
// steps +1.8 / +2.3 cm, +1.3 / +1.6 cm without it). On a plane of slope m per texel the
// centre rule drops every sample beyond threshold / |m| texels, on both sides alike. On a
// curved flank it does not: i texels out on a convex one the deeper sample is off the centre
// by i·m + k·i²/2, the nearer by |i·m − k·i²/2| (k the curvature per texel²), so the deeper
// side goes first, and the kernel leans towards the eye unless the bias correction (on by
// default) drops the nearer mirror with it.
bool narrow_range_keep(float sample_depth, float expected, float center, float threshold) {
    return abs(sample_depth - expected) <= threshold && abs(sample_depth - center) <= threshold;
}

// The fluid's face on the glass and the free surface beside it are two layers: a sample that
// `sphere_depth` marked as on the glass (the depth's two lowest bits 2: its splat's
// surface within `wall_distance` of a near wall's plane and facing it within 45°) is dropped
// from a centre that is not (marks 0 and 1 are one class here), and the other way round; the
// filters pass the centre's mark on. A seam of the face (mark 3) is a centre on the glass and
// a sample of both classes. (Under `smooth_depth`'s bias correction a pair split by
// this rule alone keeps its sample of the centre's class, in a line fit: `smooth_depth.frag`.)
// Where the top meets the glass the two meet at a crease with no step in depth, and the filter
// averaged them: it rounded the crease over its width, the top tilted towards the glass by
// 25–35° up to 3 particle radii from it, and where its normal met the sun's half vector that
// rim was a light line along the face's top edge (docs/render-notes.md, "The light line at
// the glass"). The band alone (without the splat's own normal) took the top of the particles
// touching the glass into the face, and so the meniscus of a calm pool.

// The mark in a depth's two lowest bits (0 none, 1 near the glass's band, 2 on the glass, 3 a
// seam of the face, set by the first filter pass: `narrow_range_seam`; a
// change of at most 3 units in the last place, under 3 µm at 10 m), and a depth with
// it set.
uint narrow_range_mark(float depth) {
    return floatBitsToUint(depth) & 3u;
}

float narrow_range_pack(float depth, uint mark) {
    return uintBitsToFloat((floatBitsToUint(depth) & ~3u) | mark);
}

// `normals`' seam rule on the splatted depth, for the camera's first filter pass: a pixel
// marked near the band (1) with three or four of its side neighbours, or five of its eight,
// marked on the glass (2) within `threshold` of its depth is a seam of the face (a splat's rim
// more than 45° off the wall between splats flattened on it): mark 3, passed on. A seam is
// filtered as a centre on the glass (only the face's samples), so it lands on the face's plane
// instead of on the line fitted to the top's samples across the crease (46 of 305 seams in
// `tests/render_wall.rs`'s frame lay over 2 mm off the face, up to 1.8 cm; none with it). In
// this pass the samples are the splatted depth, where a neighbouring seam is still marked 1
// (the free surface's class); from the next pass on it is marked 3 and counts for both
// classes (`narrow_range_same_class`): classed as the face alone (mark 2) the top's first row
// lost it as a sample and 2 pixels turned light (one caught the sun's highlight, its normal
// turned 7° sideways by a 0.7 mm shift; one grazed the eye, Fresnel 0.10 → 0.55;
// docs/viewer.md, "The seams inside the face"). Neighbours beyond the screen's border are not
// counted.
uint narrow_range_seam(float center, uint mark, float threshold) {
    if (mark != 1u) return mark;
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    ivec2 last = textureSize(depth_texture, 0) - 1;
    int sides = 0;
    int corners = 0;
    for (int i = 0; i < 8; ++i) {
        ivec2 step = i < 4 ? ivec2(i == 0 ? -1 : (i == 1 ? 1 : 0), i == 2 ? -1 : (i == 3 ? 1 : 0))
                           : ivec2(i < 6 ? -1 : 1, (i & 1) == 0 ? -1 : 1);
        ivec2 at = pixel + step;
        ivec2 inside = clamp(at, ivec2(0), last);
        float depth = texelFetch(depth_texture, inside, 0).r;
        bool glass = at == inside && depth > 0.0 && (floatBitsToUint(depth) & 3u) == 2u
                     && abs(depth - center) <= threshold;
        if (i < 4) sides += int(glass); else corners += int(glass);
    }
    return sides >= 3 || sides + corners >= 5 ? 3u : 1u;
}

// Whether a sample of mark `sample_mark` is of the class of a centre on the glass (`glass`) or
// not. A seam of the face (mark 3, `narrow_range_seam`) is of both.
bool narrow_range_same_class(uint sample_mark, bool glass) {
    return sample_mark == 3u || (sample_mark == 2u) == glass;
}
