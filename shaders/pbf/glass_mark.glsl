
// glass_mark: the mark of the fluid's face on the glass in a depth's two lowest bits, and the
// rules on it that several passes share: appended to `sphere_depth.frag` and `thickness.frag`
// (after `ellipsoid.glsl`), to `smooth_depth.frag` and `smooth_depth_2d.frag` (after
// `narrow_range.glsl`) and to `normals.frag`, which declare the prototypes they use.
//
// The marks: 0 none, 1 near a near wall's band, 2 on the glass (`sphere_depth`: the splat's
// surface within `wall_distance` of a near wall's plane and facing it within 45°), 3 a seam of
// the face (`seam_rule`, in the camera's first filter pass). Setting them changes a depth by at
// most 3 units in the last place, under 3 µm at 10 m. The filters pass the centre's mark on.

// The mark in `depth`'s two lowest bits.
uint glass_mark(float depth) {
    return floatBitsToUint(depth) & 3u;
}

// `depth` with its two lowest bits set to `mark`.
float with_glass_mark(float depth, uint mark) {
    return uintBitsToFloat((floatBitsToUint(depth) & ~3u) | mark);
}

// The class rule. The fluid's face on the glass and the free surface beside it are two layers:
// a sample marked on the glass (2) is dropped from a centre that is not (marks 0 and 1 are one
// class here), and the other way round; `normals` takes its differences across the crease
// between them by the same rule. A seam of the face (3) is a centre on the glass and a sample
// of both classes. (Under `smooth_depth`'s bias correction a pair split by this rule alone
// keeps its sample of the centre's class, in a line fit: `smooth_depth.frag`.) Where the top
// meets the glass the two meet at a crease with no step in depth, and the filter averaged them:
// it rounded the crease over its width, the top tilted towards the glass by 25–35° up to 3
// particle radii from it, and where its normal met the sun's half vector that rim was a light
// line along the face's top edge (docs/render-notes-glass.md, "The light line at the glass"). The
// band alone (without the splat's own normal) took the top of the particles touching the glass
// into the face, and so the meniscus of a calm pool.
//
// Whether a sample of mark `sample_mark` is of the class of a centre on the glass (`glass`:
// mark 2 or 3) or of one that is not.
bool same_glass_class(uint sample_mark, bool glass) {
    return sample_mark == 3u || (sample_mark == 2u) == glass;
}

// The seam rule, on the depth `depths` at this fragment's pixel, `center` and `mark` its depth
// and mark: a pixel marked near the band (1) with three or four of its side neighbours, or five
// of its eight, marked on the glass (2) within `threshold` of its depth is a seam of the face
// (a splat's rim more than 45° off the wall between splats flattened on it): 3. Any other mark
// is returned as it is. Neighbours beyond the screen's border are not counted; nor are
// neighbours marked 3, so the rule does not spread out from the seams found before.
//
// The camera's first filter pass applies it to the splatted depth (`applies_seam_rule`) and
// passes the 3 on: a seam is filtered as a centre on the glass (only the face's samples), so it
// lands on the face's plane instead of on the line fitted to the top's samples across the
// crease (46 of 305 seams in `tests/render_wall.rs`'s frame lay over 2 mm off the face, up to
// 1.8 cm; none with it). In that pass a neighbouring seam is still marked 1 (the free surface's
// class); from the next pass on it is marked 3 and counts for both classes
// (`same_glass_class`): classed as the face alone (mark 2) the top's first row lost it as a
// sample and 2 pixels turned light (one caught the sun's highlight, its normal turned 7°
// sideways by a 0.7 mm shift; one grazed the eye, Fresnel 0.10 → 0.55;
// docs/fluid-rendering.md, "The seams inside the face"). `normals` applies it again to the
// smoothed depth, for the seams only that depth shows and for no filter at all, and takes a
// seam (3) as on the glass: counting the 3s as on the glass there, it spread a pixel further
// (633 mark-1 pixels behind glass at the front glass instead of 610).
//
// The neighbours are fetched whatever the mark, without a branch (llvmpipe runs both sides of
// one, and in `normals` a branch around the diagonals measured slower).
uint seam_rule(sampler2D depths, float center, uint mark, float threshold) {
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    ivec2 last = textureSize(depths, 0) - 1;
    int sides = 0;
    int corners = 0;
    for (int i = 0; i < 8; ++i) {
        ivec2 offset = i < 4 ? ivec2(i == 0 ? -1 : (i == 1 ? 1 : 0), i == 2 ? -1 : (i == 3 ? 1 : 0))
                           : ivec2(i < 6 ? -1 : 1, (i & 1) == 0 ? -1 : 1);
        ivec2 at = pixel + offset;
        ivec2 inside = clamp(at, ivec2(0), last);
        float depth = texelFetch(depths, inside, 0).r;
        bool glass = at == inside && depth > 0.0 && glass_mark(depth) == 2u
                     && abs(depth - center) <= threshold;
        if (i < 4) sides += int(glass); else corners += int(glass);
    }
    return mark == 1u && (sides >= 3 || sides + corners >= 5) ? 3u : mark;
}
