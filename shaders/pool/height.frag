// height (wireframe, nodes views): the surface mesh's edges or nodes, coloured by height (blue
// low, white at rest, red high), land in sand.
in vec3 world;
in vec3 normal;
in float fixed_flag;

uniform float height_scale;    // m shown at full colour

out vec4 color;

void main() {
    float h = clamp(world.y / height_scale, -1.0, 1.0);
    vec3 c = h > 0.0 ? mix(vec3(0.9), vec3(0.95, 0.25, 0.15), h)
                     : mix(vec3(0.9), vec3(0.15, 0.35, 0.95), -h);
    if (fixed_flag > 0.5) {
        c = vec3(0.80, 0.70, 0.45);
    }
    color = vec4(c, 1.0);
}
