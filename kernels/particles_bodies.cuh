// Spring-mass bodies (dynamics.rs): springs, wind (+ wind_gather), integrate or XPBD's three
// kernels, collide_nodes. Included by particles.cu, after the records and the vector helpers.

// `springs`: each node's weight plus (with_springs) the pull k·(l − l₀)/l·d of each of its
// links, gathered in the links' order.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
springs(BodyStep b, const float* __restrict__ position, const unsigned* __restrict__ node_start,
        const unsigned* __restrict__ link_other, const float* __restrict__ link_rest,
        const float* __restrict__ link_stiffness, float* __restrict__ force) {
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

// `wind`, per triangle: drag·area·(n̂·w)·n̂ (w less the triangle's mean velocity when
// relative), a third of it, the push on each corner.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
wind(BodyStep b, const unsigned* __restrict__ triangles, const float* __restrict__ position,
     const float* __restrict__ velocity, float* __restrict__ push) {
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
wind_gather(BodyStep b, const unsigned* __restrict__ start, const unsigned* __restrict__ list,
            const float* __restrict__ push, float* __restrict__ force) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 f = load3(force, k);
    for (unsigned t = start[k]; t < start[k + 1]; ++t) f = add(f, load3(push, list[t]));
    store3(force, k, f);
}

// `integrate`: time-corrected Verlet or symplectic Euler; pinned nodes stay (at rest).
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
integrate(BodyStep b, float* __restrict__ position, float* __restrict__ previous,
          float* __restrict__ velocity, const float* __restrict__ force,
          const unsigned char* __restrict__ pinned) {
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
xpbd_predict(BodyStep b, const float* __restrict__ position, float* __restrict__ previous,
             float* __restrict__ velocity, const float* __restrict__ force,
             const unsigned char* __restrict__ pinned, float* __restrict__ displacement) {
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
xpbd_solve(BodyStep b, unsigned first, unsigned count, const unsigned* __restrict__ coloured,
           const unsigned* __restrict__ spring_a, const unsigned* __restrict__ spring_b,
           const float* __restrict__ spring_rest, const float* __restrict__ spring_stiffness,
           const unsigned char* __restrict__ pinned, float* __restrict__ lambda,
           const float* __restrict__ previous, float* __restrict__ displacement) {
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

// XPBD's velocities and positions: v = Δ/dt, damped; x ← `previous` + Δ.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
xpbd_velocity(BodyStep b, const float* __restrict__ previous,
              const float* __restrict__ displacement, float* __restrict__ velocity,
              float* __restrict__ position) {
    unsigned k = thread_index();
    if (k >= b.nodes) return;
    vec3 moved = load3(displacement, k);
    store3(velocity, k, mul(divide(moved, b.dt), b.decay));
    store3(position, k, add(load3(previous, k), moved));
}

// `collide` of a body: the ground, then the sphere; a node that touched either loses its
// velocity into it and `friction` of the tangential part, and `previous` follows.
extern "C" __global__ void __launch_bounds__(PARTICLES_BLOCK)
collide_nodes(BodyStep b, float* __restrict__ position, float* __restrict__ previous,
              float* __restrict__ velocity, const unsigned char* __restrict__ pinned) {
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
    v = add(mul(tangential, b.keep), mul(normal, fmaxf(along, 0.0f)));
    store3(position, k, x);
    store3(velocity, k, v);
    store3(previous, k, sub(x, mul(v, b.dt)));
}
