// caustics: the light a surface triangle lets through spread over where it lands: its area
// on the rest plane over its area on the floor plane (both from the screen derivatives of the
// interpolated positions, exact for a flat triangle), added up where triangles overlap. 1 is
// the calm water's irradiance. Triangles touching land let no light through.
in vec2 before;
in vec2 after;
in float fixed_flag;
in float sunlit;

out vec4 color;

float area(vec2 dx, vec2 dy) {
    return abs(dx.x * dy.y - dx.y * dy.x);
}

void main() {
    if (fixed_flag > 0.0) {
        discard;
    }
    float landed = area(dFdx(after), dFdy(after));
    float let_through = area(dFdx(before), dFdy(before));
    color = vec4(sunlit * let_through / max(landed, 1e-20), 0.0, 0.0, 1.0);
}
