// Kernels that check the emulated driver itself (selftest.cpp): block barriers, warp shuffles,
// surface writes, and the faults a GPU would stop on. Not a fluidlab module: built only into
// the emulated driver's folder as libfluidlab_kernels_selftest.so.

#define SELFTEST_BLOCK 256

// The block's sum of values[i] (a shared-memory tree with barriers), one per block in sums.
extern "C" __global__ void __launch_bounds__(SELFTEST_BLOCK)
selftest_block_sum(const float* values, unsigned int n, float* sums) {
    __shared__ float partial[SELFTEST_BLOCK];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? values[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = SELFTEST_BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = partial[0];
}

// Per thread: the inclusive prefix sum of values over its warp (__shfl_up_sync), the warp's
// largest value (__shfl_xor_sync) and its total (__shfl_down_sync, in lane 0).
extern "C" __global__ void selftest_warp(const unsigned int* values, unsigned int* prefix, unsigned int* largest,
                                         unsigned int* totals) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31u;
    unsigned int v = values[i], scan = v, top = v, total = v;
    for (int offset = 1; offset < 32; offset <<= 1) {
        unsigned int other = __shfl_up_sync(0xffffffffu, scan, offset);
        if (lane >= (unsigned int)offset) scan += other;
    }
    for (int mask = 16; mask > 0; mask >>= 1) top = max(top, __shfl_xor_sync(0xffffffffu, top, mask));
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_down_sync(0xffffffffu, total, offset);
    prefix[i] = scan;
    largest[i] = top;
    if (lane == 0) totals[i / 32] = total;
}

// Writes texel (x, y) = (x, y, 7, 255) over a 2D launch covering width × height.
extern "C" __global__ void selftest_surface(unsigned long long surface, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    surf2Dwrite(make_uchar4((unsigned char)x, (unsigned char)y, 7, 255), (cudaSurfaceObject_t)surface, x * 4, y);
}

// Each thread writes where its stack is (the address of a local, after a barrier: the
// emulated driver runs the threads of such a kernel on stacks of its own).
extern "C" __global__ void selftest_stack_address(unsigned long long* out) {
    volatile unsigned int local = threadIdx.x;
    __syncthreads();
    out[local] = (unsigned long long)&local;
}

// Copies what the host left in `from` (never written) into `to`.
extern "C" __global__ void selftest_copy(const unsigned int* from, unsigned int* to, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i];
}

// Faults. A barrier the odd threads skip:
extern "C" __global__ void selftest_divergent_barrier(unsigned int* out) {
    if (threadIdx.x % 2 == 0) __syncthreads();
    out[threadIdx.x] = 1;
}

// A shuffle after half the warp returned:
extern "C" __global__ void selftest_shuffle_after_return(unsigned int* out) {
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, threadIdx.x, 1);
}

// Lanes exchanging values at two different shuffles:
extern "C" __global__ void selftest_divergent_shuffle(unsigned int* out) {
    unsigned int v = threadIdx.x;
    if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
    else v = __shfl_xor_sync(0xffffffffu, v, 2);
    out[threadIdx.x] = v;
}

// A surface write past the surface's edge:
extern "C" __global__ void selftest_surface_overrun(unsigned long long surface, int width) {
    surf2Dwrite(make_uchar4(0, 0, 0, 0), (cudaSurfaceObject_t)surface, width * 4, 0);
}

// Each block writes its index into shared[blockIdx.x] only, then every thread copies
// shared[threadIdx.x] out: what no thread of the block wrote is the poison (0xffffffff), in
// every block, not what an earlier block left.
extern "C" __global__ void selftest_shared_unwritten(unsigned int* out) {
    __shared__ unsigned int shared[64];
    if (threadIdx.x == 0) shared[blockIdx.x] = blockIdx.x + 100u;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = shared[threadIdx.x];
}

// The order threads run in (FLUIDLAB_EMULATED_ORDER): each thread takes the next number. Thread
// by thread (no barrier):
extern "C" __global__ void selftest_order(unsigned int* counter, unsigned int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1u);
}

// And as contexts (a barrier after the number: each block's threads take theirs in the order
// they are resumed).
extern "C" __global__ void selftest_order_barrier(unsigned int* counter, unsigned int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1u);
    __syncthreads();
}

// selftest_copy with __restrict__ parameters: the same buffer in both is refused at the launch.
extern "C" __global__ void selftest_copy_restrict(const unsigned int* __restrict__ from, unsigned int* __restrict__ to,
                                                  unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i] + 1u;
}

// Only the read parameter __restrict__: the same buffer in both is refused too (one restricted
// parameter is enough for nvcc to read it through the non-coherent cache).
extern "C" __global__ void selftest_copy_from_restrict(const unsigned int* __restrict__ from, unsigned int* to,
                                                       unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i] + 1u;
}

// Two read-only __restrict__ parameters: one buffer in both runs (nothing written through them).
extern "C" __global__ void selftest_sum_restrict(const unsigned int* __restrict__ a, const unsigned int* __restrict__ b,
                                                 unsigned int* to, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = a[i] + b[i];
}
