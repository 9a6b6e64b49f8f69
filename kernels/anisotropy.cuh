// The `anisotropy` stage (Yu & Turk 2013; the CPU reference and its constants are
// `src/sims/pbf/anisotropy.rs`): per sorted particle, its ellipsoid from the weighted covariance
// of its neighbours, found with the step's grid (`for_each_neighbor`, the CPU solver's lists)
// and weighted at the positions now. Three float4 records [a_k.xyz, centre_k] per particle go to
// out[3i .. 3i + 3]: the mapped GL particle buffer after its n render records. Included by
// pbf.cu.

#define ANISOTROPY_MAX_STRETCH 4.0f
#define ANISOTROPY_MIN_NEIGHBOURS 10u
#define ANISOTROPY_LONE_SCALE 0.5f
#define ANISOTROPY_CENTRE_SMOOTHING 0.9f

__device__ __forceinline__ float anisotropy_weight(const PbfParams& p, float3 offset) {
    float q = sqrtf(dot3(offset, offset)) * p.inverse_kernel_radius;
    return fmaxf(1.0f - q * q * q, 0.0f);
}

// Eigenvalues (in `values`) and eigenvectors (columns of `v`, row-major v[row][column]) of the
// symmetric matrix `a` (row-major, overwritten), by cyclic Jacobi rotations, as
// `symmetric_eigen` does in double precision.
__device__ __forceinline__ void symmetric_eigen3(float a[3][3], float values[3], float v[3][3]) {
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) v[r][c] = r == c ? 1.0f : 0.0f;
    for (int sweep = 0; sweep < 12; ++sweep) {
        float off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        float scale = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if (off <= 1e-14f * scale || off == 0.0f) break;
        for (int pair = 0; pair < 3; ++pair) {
            int pp = pair == 2 ? 1 : 0;
            int q = pair == 0 ? 1 : 2;
            if (a[pp][q] == 0.0f) continue;
            float theta = (a[q][q] - a[pp][pp]) / (2.0f * a[pp][q]);
            float t = theta == 0.0f ? 1.0f
                                    : copysignf(1.0f, theta) / (fabsf(theta) + sqrtf(theta * theta + 1.0f));
            float c = 1.0f / sqrtf(t * t + 1.0f);
            float s = t * c;
            for (int k = 0; k < 3; ++k) {
                float akp = a[k][pp], akq = a[k][q];
                a[k][pp] = c * akp - s * akq;
                a[k][q] = s * akp + c * akq;
            }
            for (int k = 0; k < 3; ++k) {
                float apk = a[pp][k], aqk = a[q][k];
                a[pp][k] = c * apk - s * aqk;
                a[q][k] = s * apk + c * aqk;
            }
            for (int k = 0; k < 3; ++k) {
                float vp = v[k][pp], vq = v[k][q];
                v[k][pp] = c * vp - s * vq;
                v[k][q] = s * vp + c * vq;
            }
        }
    }
    for (int k = 0; k < 3; ++k) values[k] = a[k][k];
}

extern "C" __global__ void __launch_bounds__(PBF_BLOCK, PBF_MIN_BLOCKS)
anisotropy(const PbfParams p, const float4* __restrict__ positions, const unsigned int* __restrict__ cell_start,
           const float4* __restrict__ grid_positions, float particle_radius, float4* __restrict__ out) {
    unsigned int i = thread_index();
    if (i >= p.particle_count) return;
    float3 x = make3(positions[i]);
    float weight_sum = 1.0f;
    float3 mean = x;
    unsigned int count = 1;
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 y = make3(positions[j]);
        float w = anisotropy_weight(p, y - x);
        weight_sum += w;
        mean += y * w;
        ++count;
    });
    mean = mean * (1.0f / weight_sum);
    float3 d = x - mean;
    float c[3][3] = {{d.x * d.x, d.x * d.y, d.x * d.z}, {d.y * d.x, d.y * d.y, d.y * d.z},
                     {d.z * d.x, d.z * d.y, d.z * d.z}};
    for_each_neighbor(p, cell_start, grid_positions, i, [&](unsigned int j) {
        float3 y = make3(positions[j]);
        float w = anisotropy_weight(p, y - x);
        float3 e = y - mean;
        float ev[3] = {e.x, e.y, e.z};
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k) c[r][k] += w * ev[r] * ev[k];
    });
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) c[r][k] *= 1.0f / weight_sum;
    float values[3], v[3][3];
    symmetric_eigen3(c, values, v);
    float largest = fmaxf(values[0], fmaxf(values[1], values[2]));
    float3 axes[3];
    if (count < ANISOTROPY_MIN_NEIGHBOURS || largest <= 0.0f) {
        float r = ANISOTROPY_LONE_SCALE * particle_radius;
        axes[0] = make_float3(r, 0.0f, 0.0f);
        axes[1] = make_float3(0.0f, r, 0.0f);
        axes[2] = make_float3(0.0f, 0.0f, r);
    } else {
        float clamped[3];
        for (int k = 0; k < 3; ++k) clamped[k] = fmaxf(values[k], largest / ANISOTROPY_MAX_STRETCH);
        float scale = particle_radius / cbrtf(clamped[0] * clamped[1] * clamped[2]);
        for (int k = 0; k < 3; ++k) {
            float3 column = make_float3(v[0][k], v[1][k], v[2][k]);
            axes[k] = column * (clamped[k] * scale / sqrtf(dot3(column, column)));
        }
    }
    // In Jacobi's order, not longest first as the CPU's: the renderer does not mind, and the
    // emulation check compares Σ a aᵀ, which does not depend on the order nor on the choice of
    // axes where two are equal.
    float3 center = x + (mean - x) * ANISOTROPY_CENTRE_SMOOTHING;
    out[3 * i + 0] = make_float4(axes[0].x, axes[0].y, axes[0].z, center.x);
    out[3 * i + 1] = make_float4(axes[1].x, axes[1].y, axes[1].z, center.y);
    out[3 * i + 2] = make_float4(axes[2].x, axes[2].y, axes[2].z, center.z);
}
