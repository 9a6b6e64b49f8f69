// find_non_finite from kernels/pbf.cu, run warp by warp with a context per lane (warps.h):
// its warp-aggregated maxima must give the smallest non-finite id (complemented) and the largest
// finite speed, for particle counts that fill whole warps, part of one, and several blocks, with
// the non-finite particles anywhere in a warp. Prints one line per case, exits non-zero on a
// wrong result.
#include "cuda_shim.h"
thread_local Dim blockIdx, threadIdx;
Dim blockDim;
unsigned __shfl_up_sync(unsigned, unsigned value, int) { return value; }
void __syncthreads() {}
#include "pbf.cu"
#include "warps.h"

#include <cstdio>
#include <limits>
#include <random>
#include <vector>

int main() {
    std::mt19937 random(11);
    bool all_ok = true;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (unsigned n : {1u, 31u, 32u, 33u, 256u, 1000u, 4500u}) {
        for (unsigned bad_count : {0u, 1u, 3u}) {
            std::vector<float4> x(n), v(n);
            std::vector<unsigned> ids(n);
            std::uniform_real_distribution<float> speed(-3.0f, 3.0f);
            for (unsigned i = 0; i < n; ++i) {
                x[i] = {0.1f, 0.2f, 0.3f, 0.0f};
                v[i] = {speed(random), speed(random), speed(random), 0.0f};
                ids[i] = (i * 7919u + 13u) % (n + 101u);  // distinct, not in slot order
            }
            unsigned smallest_bad = ~0u;
            for (unsigned k = 0; k < bad_count; ++k) {
                unsigned slot = random() % n;
                if (k % 2 == 0) x[slot].y = nan; else v[slot].z = inf;
                smallest_bad = std::min(smallest_bad, ids[slot]);
            }
            unsigned expected_speed = 0;
            for (unsigned i = 0; i < n; ++i) {
                bool finite = std::isfinite(x[i].y) && std::isfinite(v[i].z);
                if (!finite) continue;
                float s = std::sqrt(v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z);
                expected_speed = std::max(expected_speed, __float_as_uint(s));
            }
            unsigned check[2] = {0, 0};
            launch_warps(n, PBF_BLOCK, [&] { find_non_finite(n, x.data(), v.data(), ids.data(), check); });
            unsigned expected_flag = bad_count == 0 ? 0u : ~smallest_bad;
            bool ok = check[0] == expected_flag && check[1] == expected_speed;
            printf("%u particles, %u non-finite: flag %s, speed %s\n", n, bad_count,
                   check[0] == expected_flag ? "ok" : "WRONG", check[1] == expected_speed ? "ok" : "WRONG");
            all_ok = all_ok && ok;
        }
    }
    return all_ok ? 0 : 1;
}
