
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
// −6 to −9 cm on the dam break's back layers with the bias correction;
// docs/render-notes-artefacts.md.)
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
