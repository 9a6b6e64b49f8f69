// land: sand along the shore, rock inland, wet and darker below the water line; lit by the sun
// above the water and by the caustics below it.
in vec3 world;
in vec3 normal;
in float fixed_flag;
in float inland;

out vec4 color;

void main() {
    // The footprint before the discard (derivatives need uniform control flow).
    Footprint here = Footprint(dFdx(world), dFdy(world));
    if (fixed_flag <= 0.0) {
        discard;
    }
    vec3 n = normalize(normal);
    vec3 sand = vec3(0.80, 0.72, 0.52) * (0.92 + 0.08 * hash(floor(world.xz * 150.0)));
    vec3 albedo = mix(sand, rock_albedo(world), smoothstep(0.55, 0.95, inland));
    if (world.y < 0.0) {
        albedo *= 0.7;
    }
    vec3 c = lit(albedo, world, n, here);
    if (eye_under_water()) {
        c = through_water(c, distance(eye, world));
    }
    color = vec4(c, 1.0);
}
