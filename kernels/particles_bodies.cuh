// Spring-mass bodies (dynamics.rs, volume.rs): springs, volume (+ volume_gather), wind
// (+ wind_gather), integrate or XPBD's kernels, collide_nodes. Included by particles.cu, after
// the records and the vector helpers.

// `springs`: each node's weight plus (with_springs) the pull k·(l − l₀)/l·d of each of its
// links, gathered in the links' order.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
springs(const BodyStep* __restrict__ record, const float* __restrict__ position, const unsigned* __restrict__ node_start,
        const unsigned* __restrict__ link_other, const float* __restrict__ link_rest,
        const float* __restrict__ link_stiffness, float* __restrict__ force) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 sum = v3(b.weightx, b.weighty, b.weightz);
    if (b.with_springs) {
        vec3 here = load3(position, k);
        for (unsigned l = node_start[k]; l < node_start[k + 1]; ++l) {
            vec3 d = sub(load3(position, link_other[l]), here);
            float len = length(d);
            if (len > 0.0f) sum = add(sum, mul(d, link_stiffness[l] * (len - link_rest[l]) / len));
        }
    }
    store3(force, k, sum);
}

// The jelly's cells (volume.rs): corner m = x + 2y + 4z of cell (i, j, k) is node
// (i + x, j + y, k + z); a corner's term s_c·a·(b × d) over its edges along x, y, z, s_c = −1
// an odd number of steps from corner 0.
__device__ __forceinline__ unsigned cell_node(unsigned n, unsigned cell, unsigned corner) {
    unsigned m = n - 1;
    unsigned i = cell % m, j = (cell / m) % m, k = cell / (m * m);
    return ((k + (corner >> 2)) * n + j + ((corner >> 1) & 1u)) * n + i + (corner & 1u);
}
__device__ __forceinline__ bool odd_corner(unsigned c) { return ((c ^ (c >> 1) ^ (c >> 2)) & 1u) != 0; }
// The mean of the corner terms (volume.rs `volume`).
__device__ __forceinline__ float cell_volume(const vec3* q) {
    float sum = 0.0f;
#pragma unroll
    for (unsigned c = 0; c < 8; ++c) {
        vec3 p = q[c];
        vec3 a = sub(q[c ^ 1u], p), bb = sub(q[c ^ 2u], p), d = sub(q[c ^ 4u], p);
        float term = dot(a, cross(bb, d));
        sum += odd_corner(c) ? -term : term;
    }
    return sum * 0.125f;
}
// ∂V/∂x of corner m (volume.rs `gradient`).
__device__ __forceinline__ vec3 cell_gradient(const vec3* q, unsigned m) {
    const unsigned steps[4] = {0u, 1u, 2u, 4u};
    vec3 sum = v3(0.0f, 0.0f, 0.0f);
#pragma unroll
    for (unsigned s = 0; s < 4; ++s) {
        unsigned c = m ^ steps[s];
        vec3 p = q[c];
        vec3 a = sub(q[c ^ 1u], p), bb = sub(q[c ^ 2u], p), d = sub(q[c ^ 4u], p);
        vec3 term;
        if (steps[s] == 0u) term = mul(add(add(cross(bb, d), cross(d, a)), cross(a, bb)), -1.0f);
        else if (steps[s] == 1u) term = cross(bb, d);
        else if (steps[s] == 2u) term = cross(d, a);
        else term = cross(a, bb);
        sum = odd_corner(c) ? sub(sum, term) : add(sum, term);
    }
    return mul(sum, 0.125f);
}
__device__ __forceinline__ void cell_corners(const float* position, unsigned n, unsigned cell, vec3* q) {
#pragma unroll
    for (unsigned c = 0; c < 8; ++c) q[c] = load3(position, cell_node(n, cell, c));
}

// `volume`, per cell: its pressure (K/V₀)·(V − V₀).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
volume(const BodyStep* __restrict__ record, const float* __restrict__ position, const float* __restrict__ cell_rest,
       float* __restrict__ pressure) {
    const BodyStep b = *record;
    unsigned c = thread_index();
    if (c >= b.cells) return;
    vec3 q[8];
    cell_corners(position, b.side, c, q);
    float rest = cell_rest[c];
    pressure[c] = b.volume_modulus / rest * (cell_volume(q) - rest);
}

// `volume`, per node: −p·∂V/∂x from each of the up to 8 cells around it, in corner order.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
volume_gather(const BodyStep* __restrict__ record, const float* __restrict__ position, const float* __restrict__ pressure,
              float* __restrict__ force) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes || b.cells == 0) return;
    unsigned n = b.side, m = n - 1;
    unsigned i = k % n, j = (k / n) % n, l = k / (n * n);
    vec3 f = load3(force, k);
#pragma unroll
    for (unsigned corner = 0; corner < 8; ++corner) {
        unsigned x = corner & 1u, y = (corner >> 1) & 1u, z = corner >> 2;
        if (i < x || i - x >= m || j < y || j - y >= m || l < z || l - z >= m) continue;
        unsigned cell = ((l - z) * m + j - y) * m + i - x;
        vec3 q[8];
        cell_corners(position, n, cell, q);
        f = sub(f, mul(cell_gradient(q, corner), pressure[cell]));
    }
    store3(force, k, f);
}

// `wind`, per triangle: drag·area·(n̂·w)·n̂ (w less the triangle's mean velocity when
// relative), a third of it, the push on each corner.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
wind(const BodyStep* __restrict__ record, const unsigned* __restrict__ triangles, const float* __restrict__ position,
     const float* __restrict__ velocity, float* __restrict__ push) {
    const BodyStep b = *record;
    unsigned t = thread_index();
    if (t >= b.triangles) return;
    unsigned ia = triangles[3 * t], ib = triangles[3 * t + 1], ic = triangles[3 * t + 2];
    vec3 pa = load3(position, ia);
    vec3 c = cross(sub(load3(position, ib), pa), sub(load3(position, ic), pa));
    float twice_area = length(c);
    vec3 f = v3(0.0f, 0.0f, 0.0f);
    if (twice_area > 0.0f) {
        // drag·(c·3w)/(18|c|)·c, as dynamics.rs writes it (one division).
        vec3 w3 = mul(v3(b.windx, b.windy, b.windz), 3.0f);
        if (b.relative) {
            w3 = sub(w3, add(add(load3(velocity, ia), load3(velocity, ib)), load3(velocity, ic)));
        }
        f = mul(c, b.drag / 18.0f * dot(c, w3) / twice_area);
    }
    store3(push, t, f);
}

// `wind`, per node: its triangles' pushes added to its force, in its triangles' order.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
wind_gather(const BodyStep* __restrict__ record, const unsigned* __restrict__ start, const unsigned* __restrict__ list,
            const float* __restrict__ push, float* __restrict__ force) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 f = load3(force, k);
    for (unsigned t = start[k]; t < start[k + 1]; ++t) f = add(f, load3(push, list[t]));
    store3(force, k, f);
}

// `integrate`: time-corrected Verlet or symplectic Euler; pinned nodes stay (at rest).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
integrate(const BodyStep* __restrict__ record, float* __restrict__ position, float* __restrict__ previous,
          float* __restrict__ velocity, const float* __restrict__ force,
          const unsigned char* __restrict__ pinned) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 x = load3(position, k);
    if (pinned[k]) {
        store3(previous, k, x);
        store3(velocity, k, v3(0.0f, 0.0f, 0.0f));
        return;
    }
    vec3 a = mul(load3(force, k), b.inverse_mass);
    vec3 last = load3(previous, k);
    store3(previous, k, x);
    if (!b.euler) {
        vec3 moved = add(x, add(mul(sub(x, last), b.carry), mul(a, b.reach)));
        store3(position, k, moved);
        store3(velocity, k, divide(sub(moved, x), b.dt));
    } else {
        vec3 v = mul(add(load3(velocity, k), mul(a, b.dt)), b.decay);
        store3(velocity, k, v);
        store3(position, k, add(x, mul(v, b.dt)));
    }
}

// XPBD solves for each node's displacement Δ over the substep (full float32 precision however
// far from the origin), not its absolute position (dynamics.rs `xpbd`).

// XPBD's prediction: `previous` ← x, v ← v + f/m·dt, Δ = v·dt (0 when pinned).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_predict(const BodyStep* __restrict__ record, const float* __restrict__ position, float* __restrict__ previous,
             float* __restrict__ velocity, const float* __restrict__ force,
             const unsigned char* __restrict__ pinned, float* __restrict__ displacement) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    store3(previous, k, load3(position, k));
    if (pinned[k]) {
        store3(velocity, k, v3(0.0f, 0.0f, 0.0f));
        store3(displacement, k, v3(0.0f, 0.0f, 0.0f));
        return;
    }
    vec3 v = add(load3(velocity, k), mul(load3(force, k), b.inverse_mass * b.dt));
    store3(velocity, k, v);
    store3(displacement, k, mul(v, b.dt));
}

// XPBD, one colour of one iteration: each spring of the colour (they share no node) projected
// as a distance constraint of compliance 1/k on d = (x_a − x_b) + (Δ_a − Δ_b), its λ
// accumulated, the corrections to Δ.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_solve(const BodyStep* __restrict__ record, unsigned first, unsigned count, const unsigned* __restrict__ coloured,
           const unsigned* __restrict__ spring_a, const unsigned* __restrict__ spring_b,
           const float* __restrict__ spring_rest, const float* __restrict__ spring_stiffness,
           const unsigned char* __restrict__ pinned, float* __restrict__ lambda,
           const float* __restrict__ previous, float* __restrict__ displacement) {
    const BodyStep b = *record;
    unsigned t = thread_index();
    if (t >= count) return;
    unsigned s = coloured[first + t];
    unsigned a = spring_a[s], c = spring_b[s];
    float wa = pinned[a] ? 0.0f : b.inverse_mass, wb = pinned[c] ? 0.0f : b.inverse_mass;
    vec3 da = load3(displacement, a), db = load3(displacement, c);
    vec3 d = add(sub(load3(previous, a), load3(previous, c)), sub(da, db));
    float len = length(d);
    if (len == 0.0f || wa + wb == 0.0f) return;
    float compliance = 1.0f / (spring_stiffness[s] * b.dt * b.dt);
    float l = lambda[s];
    float delta = (spring_rest[s] - len - compliance * l) / (wa + wb + compliance);
    lambda[s] = l + delta;
    vec3 n = divide(d, len);
    store3(displacement, a, add(da, mul(n, wa * delta)));
    store3(displacement, c, sub(db, mul(n, wb * delta)));
}

// XPBD, the cells of one colour (the parities of i, j, k; they share no node) of one
// iteration: each cell's volume constraint C = V − V₀ of compliance V₀/K on `previous` + Δ,
// its λ accumulated, the corrections to its corners' Δ (volume.rs `xpbd_volume`).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_volume(const BodyStep* __restrict__ record, unsigned colour, const float* __restrict__ cell_rest,
            const unsigned char* __restrict__ pinned, float* __restrict__ cell_lambda,
            const float* __restrict__ previous, float* __restrict__ displacement) {
    const BodyStep b = *record;
    unsigned c = thread_index();
    if (c >= b.cells) return;
    unsigned n = b.side, m = n - 1;
    unsigned i = c % m, j = (c / m) % m, k = c / (m * m);
    if (((i & 1u) | (j & 1u) << 1 | (k & 1u) << 2) != colour) return;
    vec3 q[8], g[8];
    float w[8];
#pragma unroll
    for (unsigned corner = 0; corner < 8; ++corner) {
        unsigned at = cell_node(n, c, corner);
        q[corner] = add(load3(previous, at), load3(displacement, at));
        w[corner] = pinned[at] ? 0.0f : b.inverse_mass;
    }
    float sum = 0.0f;
#pragma unroll
    for (unsigned corner = 0; corner < 8; ++corner) {
        g[corner] = cell_gradient(q, corner);
        sum += w[corner] * dot(g[corner], g[corner]);
    }
    if (sum == 0.0f) return;
    float rest = cell_rest[c];
    float compliance = rest / (b.volume_modulus * b.dt * b.dt);
    float lambda = cell_lambda[c];
    float delta = (rest - cell_volume(q) - compliance * lambda) / (sum + compliance);
    cell_lambda[c] = lambda + delta;
#pragma unroll
    for (unsigned corner = 0; corner < 8; ++corner) {
        unsigned at = cell_node(n, c, corner);
        store3(displacement, at, add(load3(displacement, at), mul(g[corner], w[corner] * delta)));
    }
}

// XPBD's velocities and positions: v = Δ/dt, damped; x ← `previous` + Δ.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_velocity(const BodyStep* __restrict__ record, const float* __restrict__ previous,
              const float* __restrict__ displacement, float* __restrict__ velocity,
              float* __restrict__ position) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 moved = load3(displacement, k);
    store3(velocity, k, mul(divide(moved, b.dt), b.decay));
    store3(position, k, add(load3(previous, k), moved));
}

// Coulomb friction (dynamics.rs `coulomb`, the one law of every contact): of the sliding
// velocity, the part removed this substep given `pressed`, the normal velocity the contact
// removed, and μ: all of it while |sliding| ≤ μ·pressed (static), μ·pressed along it beyond.
__device__ __forceinline__ vec3 coulomb(vec3 sliding, float pressed, float friction) {
    float bound = friction * pressed;
    float speed = length(sliding);
    if (speed <= bound) return sliding;
    return mul(sliding, bound / speed);
}

// `collide` of a body: the ground, then the sphere; a node that touched either loses its
// velocity into it and what `coulomb` removes of the tangential part (undone as displacement
// too, times dt), and `previous` follows.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
collide_nodes(const BodyStep* __restrict__ record, float* __restrict__ position, float* __restrict__ previous,
              float* __restrict__ velocity, const unsigned char* __restrict__ pinned) {
    const BodyStep b = *record;
    unsigned k = thread_index();
    if (k >= b.nodes || pinned[k]) return;
    vec3 x = load3(position, k);
    vec3 normal = v3(0.0f, 0.0f, 0.0f);
    bool touched = false;
    if (x.y < b.ground) {
        x.y = b.ground;
        normal = v3(0.0f, 1.0f, 0.0f);
        touched = true;
    }
    if (b.has_sphere) {
        vec3 centre = v3(b.cx, b.cy, b.cz);
        vec3 d = sub(x, centre);
        float distance = length(d);
        if (distance < b.radius && distance > 0.0f) {
            normal = divide(d, distance);
            x = add(centre, mul(normal, b.radius));
            touched = true;
        }
    }
    if (!touched) return;
    vec3 v = load3(velocity, k);
    float along = dot(v, normal);
    vec3 tangential = sub(v, mul(normal, along));
    vec3 removed = coulomb(tangential, fmaxf(-along, 0.0f), b.friction);
    v = add(sub(tangential, removed), mul(normal, fmaxf(along, 0.0f)));
    x = sub(x, mul(removed, b.dt));
    store3(position, k, x);
    store3(velocity, k, v);
    store3(previous, k, sub(x, mul(v, b.dt)));
}
